/* spmv.c - sparse matrix times vector, compressed sparse rows: N rows of
 * 1 to 16 non-zeros each (so the inner loop is short and its trip count
 * known only at run time), R products, the result fed back as the next
 * vector.
 * usage: spmv [N [R]]   (default 200000 50)
 * Prints a checksum on standard output and the time of the products
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

static void spmv(int n, const int *rowp, const int *col, const double *val, const double *x,
                 double *y)
{
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int k = rowp[i]; k < rowp[i + 1]; k++)
            s += val[k] * x[col[k]];
        y[i] = s;
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 200000;
    int rounds = argc > 2 ? atoi(argv[2]) : 50;
    if (n < 1)
        return 1;
    int *rowp = malloc(sizeof(int) * ((size_t)n + 1));
    int *col = malloc(sizeof(int) * (size_t)n * 16);
    double *val = malloc(sizeof(double) * (size_t)n * 16);
    double *x = malloc(sizeof(double) * (size_t)n), *y = malloc(sizeof(double) * (size_t)n);
    if (!rowp || !col || !val || !x || !y)
        return 1;
    int nz = 0;
    unsigned seed = 12345;
    for (int i = 0; i < n; i++) {
        rowp[i] = nz;
        seed = seed * 1103515245u + 12345u;
        int cnt = 1 + (int)((seed >> 16) % 16);
        for (int k = 0; k < cnt; k++) {
            seed = seed * 1103515245u + 12345u;
            col[nz] = (int)((seed >> 8) % (unsigned)n);
            val[nz] = (k % 2 ? 1.5 : 0.5) / (double)cnt;
            nz++;
        }
        x[i] = 1.0;
    }
    rowp[n] = nz;
    long long t0 = now_ns();
    for (int r = 0; r < rounds; r++) {
        spmv(n, rowp, col, val, x, y);
        double *t = x;
        x = y;
        y = t;
    }
    long long t1 = now_ns();
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += x[i] * (double)(i % 5 + 1);
    printf("%.6e\n", sum);
    fprintf(stderr, "ns %lld\n", t1 - t0);
    free(rowp);
    free(col);
    free(val);
    free(x);
    free(y);
    return 0;
}
