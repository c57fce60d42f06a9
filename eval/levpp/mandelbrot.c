/* mandelbrot.c - the Mandelbrot set kernel of the Computer Language
 * Benchmarks Game, written from its description: N x N points of
 * [-1.5, 0.5] x [-1, 1], each iterated z = z^2 + c up to 50 times or
 * until |z| > 2. The bitmap is folded into a checksum instead of
 * written out.
 * usage: mandelbrot [N [RUN]]   (default 1000 1; RUN 0: no points)
 * Prints the number of points in the set and a checksum on standard
 * output and the time (nanoseconds) on standard error as `ns N`. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void mandel(int n, long *inside, unsigned long *check)
{
    long in = 0;
    unsigned long h = 0;
    for (int y = 0; y < n; y++) {
        double ci = 2.0 * y / n - 1.0;
        for (int x = 0; x < n; x++) {
            double cr = 2.0 * x / n - 1.5, zr = 0, zi = 0, tr = 0, ti = 0;
            int i = 0;
            do {
                zi = 2 * zr * zi + ci;
                zr = tr - ti + cr;
                tr = zr * zr;
                ti = zi * zi;
            } while (++i < 50 && tr + ti <= 4.0);
            int bit = tr + ti <= 4.0;
            in += bit;
            h = h * 31 + (unsigned long)(bit ? 1 : i);
        }
    }
    *inside = in;
    *check = h;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    int run = argc > 2 ? atoi(argv[2]) : 1;
    long inside = 0;
    unsigned long check = 0;
    long long t0 = now_ns();
    if (run)
        mandel(n, &inside, &check);
    long long t1 = now_ns();
    printf("%ld %lu\n", inside, check);
    fprintf(stderr, "ns %lld\n", t1 - t0);
    return 0;
}
