/* fannkuch.c - the fannkuch-redux kernel of the Computer Language
 * Benchmarks Game, written from its description: for every permutation
 * of 1..N, taken in the order of the counting rotations, flip the prefix
 * whose length is the first element until the first element is 1; the
 * checksum adds the flip counts with alternating signs, and the maximum
 * is kept.
 * usage: fannkuch [N [RUN]]   (default 10 1; RUN 0: no permutations)
 * Prints the checksum and the maximum on standard output and the time
 * (nanoseconds) on standard error as `ns N`. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAXN 16

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void fannkuch(int n, long *checksum, int *maxflips)
{
    int perm[MAXN], work[MAXN], count[MAXN];
    for (int i = 0; i < n; i++)
        perm[i] = i;
    for (int i = 0; i < n; i++)
        count[i] = i + 1;
    long sum = 0;
    int best = 0, sign = 1;
    for (;;) {
        /* count the flips of this permutation */
        if (perm[0] != 0) {
            for (int i = 0; i < n; i++)
                work[i] = perm[i];
            int flips = 0, first = work[0];
            while (first != 0) {
                for (int lo = 0, hi = first; lo < hi; lo++, hi--) {
                    int x = work[lo];
                    work[lo] = work[hi];
                    work[hi] = x;
                }
                flips++;
                first = work[0];
            }
            if (flips > best)
                best = flips;
            sum += sign * flips;
        }
        sign = -sign;
        /* next permutation: rotate the first r + 1 elements */
        int r = 1;
        for (;;) {
            if (r >= n) {
                *checksum = sum;
                *maxflips = best;
                return;
            }
            int p0 = perm[0];
            for (int i = 0; i < r; i++)
                perm[i] = perm[i + 1];
            perm[r] = p0;
            if (--count[r] > 0)
                break;
            count[r] = r + 1;
            r++;
        }
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10;
    int run = argc > 2 ? atoi(argv[2]) : 1;
    if (n < 1 || n > MAXN)
        return 1;
    long checksum = 0;
    int maxflips = 0;
    long long t0 = now_ns();
    if (run)
        fannkuch(n, &checksum, &maxflips);
    long long t1 = now_ns();
    printf("%ld\nPfannkuchen(%d) = %d\n", checksum, n, maxflips);
    fprintf(stderr, "ns %lld\n", t1 - t0);
    return 0;
}
