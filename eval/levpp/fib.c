/* fib.c - naive recursive Fibonacci where every call is checkpointable:
 * each call that recurses passes a safe point (lev_checkpoint(), a stub
 * that does nothing when built natively without leverage.h).
 * usage: fib [N]   (default 32)
 * Prints fib(N) on standard output and the time of the computation
 * (nanoseconds) on standard error as `ns N`. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__has_include)
#if __has_include("leverage.h")
#include "leverage.h"
#define HAVE_LEVERAGE 1
#endif
#endif
#ifndef HAVE_LEVERAGE
static int lev_checkpoint(void) { return 0; }
#endif

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long fib(int n)
{
    if (n < 2)
        return n;
    lev_checkpoint();
    long a = fib(n - 1);
    long b = fib(n - 2);
    return a + b;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 32;
    long long t0 = now_ns();
    long r = fib(n);
    long long t1 = now_ns();
    printf("%ld\n", r);
    fprintf(stderr, "ns %lld\n", t1 - t0);
    return 0;
}
