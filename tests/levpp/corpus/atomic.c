/* atomic.c - LEV_ATOMIC kernels called from checkpointable code: a sort
 * and a prefix sum whose loops levpp leaves unpolled, one that calls a
 * helper with a loop (called natively from there, while the checkpointable
 * caller calls the helper's resumable body), a recursive one, and one
 * that allocates what the checkpointable code keeps across safe points.
 */
/* levpp-test: resume 0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include("leverage.h")
#include "leverage.h"
#define HAVE_LEVERAGE 1
#endif
#endif
#ifndef HAVE_LEVERAGE
static int lev_checkpoint(void) { return 0; }
#define LEV_ATOMIC
#endif

/* Checkpointable for its loop's polls when called from main. */
static long weigh(const int *v, int n)
{
    long w = 0;
    for (int i = 0; i < n; i++)
        w += (long)v[i] * (i + 1);
    return w;
}

static LEV_ATOMIC void sort(int *v, int n)
{
    for (int i = 1; i < n; i++) {
        int x = v[i], j = i - 1;
        while (j >= 0 && v[j] > x) {
            v[j + 1] = v[j];
            j--;
        }
        v[j + 1] = x;
    }
}

static LEV_ATOMIC long prefix_weigh(int *v, int n)
{
    for (int i = 1; i < n; i++)
        v[i] += v[i - 1];
    return weigh(v, n);
}

static LEV_ATOMIC long fib(int k) { return k < 2 ? k : fib(k - 1) + fib(k - 2); }

static LEV_ATOMIC int *fill(int n, unsigned seed)
{
    int *v = malloc((size_t)n * sizeof *v);
    for (int i = 0; v && i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        v[i] = (int)(seed >> 16) % 1000;
    }
    return v;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 6;
    for (int r = 0; rounds == 0 || r < rounds; r++) {
        int n = 50 + r % 40;
        int *v = fill(n, (unsigned)r + 1);
        if (!v)
            return 1;
        lev_checkpoint();
        sort(v, n);
        long before = weigh(v, n);
        lev_checkpoint();
        long after = prefix_weigh(v, n);
        printf("round %d: n %d min %d max %d weigh %ld prefix %ld fib %ld\n", r, n, v[0],
               v[n - 1] - v[n - 2], before, after, fib(10 + r % 8));
        fflush(stdout);
        free(v);
    }
    return 0;
}
