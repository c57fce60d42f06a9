/* spectral.c - the spectral-norm kernel of the Computer Language
 * Benchmarks Game, written from its description: the square root of the
 * largest eigenvalue of A'A, by power iteration, with
 * A(i, j) = 1 / ((i + j)(i + j + 1) / 2 + i + 1).
 * usage: spectral [N [ITERS]]   (default 1000 10)
 * Prints the norm on standard output and the time of the iterations
 * (nanoseconds) on standard error as `ns N`. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static double a_elem(int i, int j) { return 1.0 / ((double)(i + j) * (i + j + 1) / 2 + i + 1); }

/* out = A v */
static void mul_a(int n, const double *v, double *out)
{
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int j = 0; j < n; j++)
            s += a_elem(i, j) * v[j];
        out[i] = s;
    }
}

/* out = A' v */
static void mul_at(int n, const double *v, double *out)
{
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int j = 0; j < n; j++)
            s += a_elem(j, i) * v[j];
        out[i] = s;
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    int iters = argc > 2 ? atoi(argv[2]) : 10;
    double *u = malloc(sizeof(double) * (size_t)n), *v = malloc(sizeof(double) * (size_t)n);
    double *t = malloc(sizeof(double) * (size_t)n);
    if (!u || !v || !t)
        return 1;
    for (int i = 0; i < n; i++)
        u[i] = 1.0;
    long long t0 = now_ns();
    for (int k = 0; k < iters; k++) {
        mul_a(n, u, t);
        mul_at(n, t, v);
        mul_a(n, v, t);
        mul_at(n, t, u);
    }
    long long t1 = now_ns();
    double vbv = 0, vv = 0;
    for (int i = 0; i < n; i++) {
        vbv += u[i] * v[i];
        vv += v[i] * v[i];
    }
    printf("%.9f\n", vv > 0 ? sqrt(vbv / vv) : 0.0);
    fprintf(stderr, "ns %lld\n", t1 - t0);
    free(u);
    free(v);
    free(t);
    return 0;
}
