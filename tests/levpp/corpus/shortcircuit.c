/* shortcircuit.c - calls of checkpointable functions in the right operand
 * of && and ||: they run only when the left operand does not decide, and
 * the left operand (with its side effects) runs first, once. Counters show
 * every call; the results are 0 or 1 as in C.
 * usage: shortcircuit [ROUNDS [WORK]]   (default 6 200; ROUNDS 0: until killed)
 * Exit status: the number of calls of check() modulo 100.
 */
/* levpp-test: resume 0 2000 */
#include <stdio.h>
#include <stdlib.h>

static int g_checks, g_walks;
static long g_work = 200;

/* Checkpointable (it loops); returns n's parity test after some work. */
static int check(int n)
{
    long s = 0;
    for (long i = 0; i < g_work; i++)
        s += i % 7;
    g_checks++;
    return (n + (int)(s % 2)) % 3 == 0;
}

/* Returns its argument, counting; a pointer variant for pointer operands. */
static int walk(int n)
{
    int k = 0;
    while (k < 2)
        k++;
    g_walks++;
    return n;
}

static const char *name_of(int n)
{
    for (int k = 0; k < 1; k++)
        if (n % 4 == 0)
            return NULL;
    return n % 2 ? "odd" : "even";
}

static int both(int a, int b) { return a * 10 + b; }

static int sum3(int a, int b, int c)
{
    int s = 0;
    for (int i = 0; i < 1; i++)
        s = a + b + c;
    return s;
}

/* return with && and || of calls */
static int classify(int n)
{
    if (n < 0)
        return 0;
    return (check(n) && walk(n) > 3) || (n > 10 && check(n + 1));
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 6;
    if (argc > 2)
        g_work = atol(argv[2]);
    long total = 0;
    for (int r = 0; rounds == 0 || r < rounds; r++) {
        int i = r % 5, hits = 0, side = 0;
        /* the call must not run when the left is false */
        int before = g_checks;
        if (i > 2 && check(r))
            hits++;
        printf("round %d: and %d calls %d\n", r, hits, g_checks - before);
        before = g_checks;
        if (i < 3 || check(r))
            hits++;
        printf("round %d: or %d calls %d\n", r, hits, g_checks - before);
        /* side effects of the left operand: once, before the call */
        int v = side++ < 1 && walk(side) == 1;
        int u = side++ > 100 || walk(side) + check(side);
        printf("round %d: side %d v %d u %d\n", r, side, v, u);
        /* nested: f && g || h, values 0/1 */
        int w = (check(r) && walk(r)) || check(r + 1);
        int x = (walk(i) || check(r)) && (walk(0) || check(r + 2));
        printf("round %d: w %d x %d classify %d\n", r, w, x, classify(r));
        /* as arguments of other calls, checkpointable or not */
        int y = both(i && check(r), walk(i) || check(i));
        int z = sum3(walk(1), i == 0 || walk(i) > 1, check(r) && walk(2));
        printf("round %d: y %d z %d\n", r, y, z);
        /* a pointer operand, a statement with an unused value */
        const char *nm = name_of(r);
        int named = nm && walk(nm[0]);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-value"
        i > 1 && check(r);
        i > 1 || walk(r);
#pragma GCC diagnostic pop
        printf("round %d: named %d\n", r, named);
        /* in a loop condition */
        int steps = 0;
        while (steps < 3 && walk(steps) < 2)
            steps++;
        printf("round %d: steps %d walks %d checks %d\n", r, steps, g_walks, g_checks);
        total += hits + v + u + w + x + y + z + named + steps;
        fflush(stdout);
    }
    printf("total %ld, checks %d, walks %d\n", total, g_checks, g_walks);
    return g_checks % 100;
}
