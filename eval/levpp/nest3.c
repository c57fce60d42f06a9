/* nest3.c - three counted loops deep, every trip count read from the
 * command line: R rounds over an A x B grid updated in place.
 * usage: nest3 [R [A [B]]]   (default 100 1000 1000)
 * Prints a checksum on standard output and the time of the rounds
 * (nanoseconds) on standard error as `ns N`. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void rounds(long r, long a, long b, unsigned *g)
{
    for (long k = 0; k < r; k++)
        for (long i = 0; i < a; i++)
            for (long j = 0; j < b; j++)
                g[i * b + j] = g[i * b + j] * 1664525u + (unsigned)(i ^ j ^ k);
}

int main(int argc, char **argv)
{
    long r = argc > 1 ? atol(argv[1]) : 100;
    long a = argc > 2 ? atol(argv[2]) : 1000;
    long b = argc > 3 ? atol(argv[3]) : 1000;
    unsigned *g = calloc((size_t)(a * b > 0 ? a * b : 1), sizeof(unsigned));
    if (!g)
        return 1;
    long long t0 = now_ns();
    rounds(r, a, b, g);
    long long t1 = now_ns();
    unsigned long h = 0;
    for (long i = 0; i < a * b; i++)
        h = h * 31 + g[i];
    printf("%lu\n", h);
    fprintf(stderr, "ns %lld\n", t1 - t0);
    free(g);
    return 0;
}
