/* setjmp.c - setjmp and longjmp between checkpointable functions: an
 * error return through several levels of callees that loop (and so poll)
 * between the setjmp and the longjmp, nested handlers, a handler chain
 * linked through a heap structure as Lua keeps it (a local struct holding
 * the jmp_buf, its address stored in the state), volatile locals, a
 * longjmp with the value 0 (setjmp returns 1), a jmp_buf in a static, a
 * longjmp to a setjmp of the same function, setjmp in a switch and in an
 * assignment, sigsetjmp/siglongjmp, and a longjmp from a qsort comparison
 * function (the native copy, through the C library's frames). The handler
 * chain uses macros as Lua's LUAI_TRY and LUAI_THROW. */
/* levpp-test: resume 0 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Lua's shape: a chain of handlers in the state ---- */
struct longjmp_link {
    struct longjmp_link *previous;
    jmp_buf b;
    volatile int status;
};

/* as Lua writes them (LUAI_TRY, LUAI_THROW) */
#define TRY(c, a)                                                                                  \
    if (setjmp((c)->b) == 0) {                                                                     \
        a                                                                                          \
    }
#define THROW(c) longjmp((c)->b, 1)

typedef struct state {
    struct longjmp_link *errorJmp;
    long work;
    int inner;
    char msg[64];
} state;

static void throw_error(state *L, int code, const char *msg)
{
    snprintf(L->msg, sizeof L->msg, "%s", msg);
    if (L->errorJmp) {
        L->errorJmp->status = code;
        THROW(L->errorJmp);
    }
    abort();
}

/* Work that loops (polls) and fails when asked, deep down. */
static long dig(state *L, int depth, int fail_at)
{
    long s = 0;
    for (int i = 0; i < 300; i++)
        s += (i * depth) % 7;
    L->work += s;
    if (depth == fail_at)
        throw_error(L, 10 + depth, "dug too deep");
    if (depth > 0)
        s += dig(L, depth - 1, fail_at);
    return s;
}

typedef void (*Pfunc)(state *L, void *ud);

static int run_protected(state *L, Pfunc f, void *ud)
{
    struct longjmp_link lj;
    lj.status = 0;
    lj.previous = L->errorJmp;
    L->errorJmp = &lj;
    TRY(&lj, f(L, ud););
    L->errorJmp = lj.previous;
    return lj.status;
}

static void f_dig(state *L, void *ud)
{
    int fail_at = *(int *)ud;
    dig(L, 6, fail_at);
}

/* A protected call inside a protected call: the inner error is caught
 * inside, then the outer one fails from a loop after it. */
static void f_nested(state *L, void *ud)
{
    int fail_at = *(int *)ud;
    int st = run_protected(L, f_dig, &fail_at);
    L->inner = st;
    for (int i = 0; i < 500; i++)
        L->work += i & 3;
    throw_error(L, 77, "outer");
}

/* ---- a static jmp_buf, volatile locals, value 0 ---- */
static jmp_buf s_env;

static void jump_zero(int n)
{
    long acc = 0;
    for (int i = 0; i < n; i++)
        acc += i;
    if (acc >= 0)
        longjmp(s_env, 0);
}

static int volatile_locals(int n)
{
    volatile int counter = 0;
    volatile long sum = 0;
    int r = setjmp(s_env);
    if (r != 0) {
        return counter * 10 + r + (int)(sum % 7);
    }
    for (int i = 0; i < n; i++) {
        counter++;
        sum += i;
    }
    jump_zero(n);
    return -1;
}

/* ---- a longjmp to the same function, a switch, a retry loop ---- */
static int retries(int limit)
{
    jmp_buf here;
    volatile int tries = 0;
    switch (setjmp(here)) {
    case 0:
        break;
    case 2:
        tries += 10;
        break;
    default:
        tries++;
        break;
    }
    long spin = 0;
    for (int i = 0; i < 200; i++)
        spin += i;
    if (tries < limit)
        longjmp(here, tries % 3 == 1 ? 2 : 1);
    return tries + (int)(spin % 2);
}

/* ---- sigsetjmp / siglongjmp ---- */
static sigjmp_buf s_sig;

static void sig_fail(int k)
{
    for (int i = 0; i < k; i++)
        if (i == k - 1)
            siglongjmp(s_sig, k);
}

static int sig_guard(int k)
{
    int v;
    if (!(v = sigsetjmp(s_sig, 1))) {
        sig_fail(k);
        return 0;
    }
    return v;
}

/* ---- a longjmp from a comparison function, through qsort ---- */
static jmp_buf s_cmp_env;
static int s_bad;

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    if (x == s_bad || y == s_bad)
        longjmp(s_cmp_env, x == s_bad ? x : y);
    return (x > y) - (x < y);
}

static int sort_guard(int *v, int n, int bad)
{
    int r;
    s_bad = bad;
    if ((r = setjmp(s_cmp_env)) != 0)
        return -r;
    for (int i = 0; i < n; i++)
        v[i] = (i * 37) % n;
    qsort(v, (size_t)n, sizeof *v, cmp_int);
    return v[0] + v[n - 1];
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 6;
    if (rounds < 0)
        return 99;
    state *L = calloc(1, sizeof *L);
    int v[50];
    for (int r = 0; rounds == 0 || r < rounds; r++) {
        /* everything is computed before the round's one line is printed:
         * a checkpoint between two printf calls would keep the first in
         * the C library's buffer, which no image holds */
        int fail_at = r % 8;
        int dig = run_protected(L, f_dig, &fail_at);
        char dig_msg[64];
        snprintf(dig_msg, sizeof dig_msg, "%s", dig ? L->msg : "-");
        long work = L->work;
        fail_at = (r + 3) % 5;
        int nested = run_protected(L, f_nested, &fail_at);
        int vol = volatile_locals(100 + r);
        int ret = retries(3 + r % 4);
        int sig = sig_guard(2 + r % 5);
        int sorted = sort_guard(v, 50, -1);
        int unsorted = sort_guard(v, 50, 10 + r);
        printf("round %d: dig %d (%s) work %ld nested %d %d (%s) chain %s volatile %d retries %d "
               "sig %d sort %d %d\n",
               r, dig, dig_msg, work, L->inner, nested, L->msg, L->errorJmp ? "left" : "empty", vol,
               ret, sig, sorted, unsorted);
        fflush(stdout);
    }
    free(L);
    return 0;
}
