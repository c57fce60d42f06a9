/* indirect.c - calls through function pointers that reach checkpointable
 * functions: a table of operations at file scope, a pointer kept in a
 * struct, `(*p)(x)`, a callback handed to a checkpointable driver,
 * recursion through a pointer, a pointer to a native function of the same
 * type, a function chosen by _Generic, and a comparison function that
 * qsort calls natively. Work long
 * enough inside the callees that safe points are reached there.
 * Usage: indirect [ROUNDS [N]]; prints one line per round (ROUNDS 0: until killed).
 * Exit status: 0 if every result matches its closed form, else 1. */
/* levpp-test: resume 0 1500 */
#include <stdio.h>
#include <stdlib.h>

typedef long (*op_fn)(long);

/* checkpointable: loops */
static long tri(long n)
{
    long s = 0;
    for (long i = 1; i <= n; i++)
        s += i;
    return s;
}

static long squares(long n)
{
    long s = 0;
    for (long i = 1; i <= n; i++)
        s += i * i;
    return s;
}

/* native: no loop, no call of a checkpointable function */
static long twice(long n) { return 2 * n; }

static const op_fn s_ops[] = {tri, squares, twice};

struct job {
    const char *name;
    op_fn fn;
    long arg;
};

/* checkpointable: calls through a pointer in a loop */
static long apply_all(op_fn f, const long *xs, int n)
{
    long acc = 0;
    for (int i = 0; i < n; i++)
        acc += f(xs[i]);
    return acc;
}

/* recursion through a pointer: s_self points back here */
static long chain(long n);
static op_fn s_self = chain;

static long chain(long n)
{
    if (n == 0)
        return 0;
    long r = (*s_self)(n - 1);
    for (int i = 0; i < 1; i++)
        r += n & 3;
    return r;
}

static int by_len(const void *a, const void *b)
{
    const struct job *x = a, *y = b;
    long d = 0;
    for (int i = 0; i < 1; i++) /* checkpointable, yet qsort runs it natively */
        d = x->arg - y->arg;
    return d < 0 ? -1 : d > 0;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 8;
    long n = argc > 2 ? atol(argv[2]) : 600;
    int bad = 0;
    struct job jobs[3] = {{"squares", squares, n / 2}, {"tri", tri, n}, {"twice", twice, 7}};
    qsort(jobs, 3, sizeof jobs[0], by_len);
    long xs[4] = {n, n / 2, n / 3, 1};
    for (int r = 0; rounds == 0 || r < rounds; r++) {
        long t = 0;
        for (int k = 0; k < 3; k++)
            t += s_ops[k](n + r);
        long m = n + r;
        long want = m * (m + 1) / 2 + m * (m + 1) * (2 * m + 1) / 6 + 2 * m;
        long j = 0;
        for (int k = 0; k < 3; k++)
            j += jobs[k].fn(jobs[k].arg);
        long jwant = 14 + (n / 2) * (n / 2 + 1) * (n + 1) / 6 + n * (n + 1) / 2;
        long a = apply_all(tri, xs, 4);
        long awant = 0;
        for (int k = 0; k < 4; k++)
            awant += xs[k] * (xs[k] + 1) / 2;
        long c = chain(n + r);
        long cwant = 0;
        for (long i = 1; i <= n + r; i++)
            cwant += i & 3;
        long g = _Generic(m, long: tri, default: squares)(m % 50); /* tri */
        bad |= t != want || j != jwant || a != awant || c != cwant ||
               g != (m % 50) * (m % 50 + 1) / 2;
        printf("round %d: ops %ld jobs %s/%s/%s %ld apply %ld chain %ld generic %ld\n", r, t,
               jobs[0].name, jobs[1].name, jobs[2].name, j, a, c, g);
        fflush(stdout);
    }
    return bad;
}
