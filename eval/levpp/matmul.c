/* matmul.c - n x n matrix multiply, the plain triple loop (i, j, k).
 * usage: matmul [N [REPS]]   (default 640 1)
 * Prints a checksum on standard output and the time of the multiplies
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

static void matmul(int n, const double *a, const double *b, double *c)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++)
                s += a[i * n + k] * b[k * n + j];
            c[i * n + j] = s;
        }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 640;
    int reps = argc > 2 ? atoi(argv[2]) : 1;
    double *a = malloc(sizeof(double) * (size_t)n * (size_t)n);
    double *b = malloc(sizeof(double) * (size_t)n * (size_t)n);
    double *c = malloc(sizeof(double) * (size_t)n * (size_t)n);
    if (!a || !b || !c)
        return 1;
    for (int i = 0; i < n * n; i++) {
        a[i] = (double)(i % 17) * 0.25 - 1.0;
        b[i] = (double)(i % 13) * 0.5 - 3.0;
    }
    long long t0 = now_ns();
    for (int r = 0; r < reps; r++)
        matmul(n, a, b, c);
    long long t1 = now_ns();
    double sum = 0.0;
    for (int i = 0; i < n * n; i++)
        sum += c[i] * (double)(i % 7 + 1);
    printf("%.6e\n", sum);
    fprintf(stderr, "ns %lld\n", t1 - t0);
    free(a);
    free(b);
    free(c);
    return 0;
}
