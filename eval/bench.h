/* bench.h - small helpers shared by the benchmarks: a monotonic clock,
 * best and median of repeated measurements, resident set size, and the
 * one-line result format that eval/run.sh collects.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int s_bench_dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Best (smallest) and median of n samples; sorts v in place. */
static inline void bench_stats(double *v, int n, double *best, double *median)
{
    qsort(v, (size_t)n, sizeof *v, s_bench_dcmp);
    *best = v[0];
    *median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The median of n samples; sorts v in place. */
static inline double bench_median(double *v, int n)
{
    double best, median;
    bench_stats(v, n, &best, &median);
    return median;
}

/* Resident set size of this process in bytes (0 if unknown). */
static inline size_t bench_rss(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, res = 0;
    if (!f)
        return 0;
    if (fscanf(f, "%lu %lu", &size, &res) != 2)
        res = 0;
    fclose(f);
    return (size_t)res * (size_t)sysconf(_SC_PAGESIZE);
}

/* Aborts the benchmark with a message when a runtime call fails. */
#define BENCH_CHECK(rc, what)                                                                      \
    do {                                                                                           \
        int rc_ = (rc);                                                                            \
        if (rc_) {                                                                                 \
            fprintf(stderr, "%s: %s failed: %d %s: %s\n", __FILE__, what, rc_, lev_strerror(rc_),  \
                    lev_errdetail());                                                              \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#endif
