/* setjmp_shapes.c - more shapes of setjmp and longjmp: setjmp in main
 * (the entry) and in a loop condition, setjmp as a statement of its own,
 * a jmp_buf in a heap object, a longjmp from a variadic function (which
 * stays native) and from deep in a recursion of small functions, a
 * longjmp to an outer handler across inner handlers that are still set,
 * a handler per level of a recursion, and longjmp called through a
 * pointer. */
/* levpp-test: resume 0 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct guard {
    jmp_buf env;
    int code;
} guard;

static jmp_buf s_main_env;
static int s_main_jumps;

static void main_fail(void)
{
    if (++s_main_jumps < 4)
        longjmp(s_main_env, s_main_jumps);
}

/* variadic: no frame, its longjmp is the native copy's */
static void fail_fmt(guard *g, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int extra = va_arg(ap, int);
    va_end(ap);
    g->code = code * 100 + extra + (fmt[0] == '%');
    longjmp(g->env, code);
}

/* small recursive functions: lazy, no frame unless they unwind */
static int descend(guard *g, int n, int at)
{
    if (n == at)
        fail_fmt(g, 7, "%d", n);
    if (n == 0)
        return 0;
    return 1 + descend(g, n - 1, at);
}

static long churn(guard *g, int n, int at)
{
    long s = 0;
    for (int i = 0; i < 400; i++)
        s += i % (n + 1);
    return s + descend(g, n, at);
}

static int heap_guard(int n, int at)
{
    guard *g = malloc(sizeof *g);
    g->code = 0;
    volatile long got = -1;
    if (!setjmp(g->env))
        got = churn(g, n, at);
    int code = g->code;
    free(g);
    return code ? code : (int)got;
}

/* A handler at every level; the innermost jumps to the handler of level
 * `to`, leaving the ones between still set. */
static int level(jmp_buf *outer, int depth, int to)
{
    jmp_buf mine;
    volatile int here = depth;
    int v = setjmp(mine);
    if (v)
        return here * 1000 + v;
    if (depth == 0) {
        long s = 0;
        for (int i = 0; i < 300; i++)
            s += i;
        longjmp(outer[to], (int)(s % 97) + 1);
    }
    memcpy(outer[depth], mine, sizeof mine);
    return level(outer, depth - 1, to) + 1;
}

static int levels(int depth, int to)
{
    jmp_buf *bufs = calloc((size_t)depth + 1, sizeof *bufs);
    int r = level(bufs, depth, to);
    free(bufs);
    return r;
}

/* longjmp taken as a value and called through the pointer (held only
 * between safe points: a pointer to a function outside the program does
 * not travel) */
static int via_pointer(int n)
{
    jmp_buf env;
    volatile int steps = 0;
    int v = setjmp(env);
    for (int i = 0; i < n; i++)
        steps++;
    if (v < 3) {
        void (*jump)(jmp_buf, int) = longjmp;
        jump(env, v + 1);
    }
    return steps * 10 + v;
}

/* setjmp as a statement, its result unused */
static jmp_buf s_stmt_env;
static int stmt_setjmp(int n)
{
    volatile int passes = 0;
    setjmp(s_stmt_env);
    passes++;
    long s = 0;
    for (int i = 0; i < n; i++)
        s += i;
    if (passes < 3)
        longjmp(s_stmt_env, 5);
    return passes + (int)(s & 1);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 6;
    if (rounds < 0)
        return 99;
    volatile int seen = 0;
    while (setjmp(s_main_env) < 3) {
        seen++;
        main_fail();
    }
    printf("main: seen %d jumps %d\n", seen, s_main_jumps);
    fflush(stdout);
    for (int r = 0; rounds == 0 || r < rounds; r++) {
        /* computed first, then printed in one call (see setjmp.c) */
        int h1 = heap_guard(12, r % 12), h2 = heap_guard(3, -1);
        int l1 = levels(6, 6 - r % 6), l2 = levels(3, 1);
        int st = stmt_setjmp(100 + r), vp = via_pointer(r + 2);
        printf("round %d: heap %d %d levels %d %d stmt %d pointer %d\n", r, h1, h2, l1, l2, st, vp);
        fflush(stdout);
    }
    return 0;
}
