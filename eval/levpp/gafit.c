/* gafit.c - the fitness loop of a genetic algorithm for the travelling
 * salesman: a population of tours (permutations of the cities), each
 * generation mutates every tour (one swap) and evaluates it (the length
 * of the closed tour, from a distance matrix).
 * usage: gafit [CITIES [POP [GENS]]]   (default 500 100 400)
 * Prints the best tour length on standard output and the time of the
 * generations (nanoseconds) on standard error as `ns N`. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static unsigned long s_seed = 12345;

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static unsigned rnd(unsigned below)
{
    s_seed = s_seed * 6364136223846793005UL + 1442695040888963407UL;
    return (unsigned)(s_seed >> 33) % below;
}

/* The length of the closed tour. */
static double tour_length(const int *tour, int n, const double *dist)
{
    double len = dist[tour[n - 1] * n + tour[0]];
    for (int i = 1; i < n; i++)
        len += dist[tour[i - 1] * n + tour[i]];
    return len;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 500;
    int pop = argc > 2 ? atoi(argv[2]) : 100;
    int gens = argc > 3 ? atoi(argv[3]) : 400;
    double *x = malloc(sizeof(double) * (size_t)n);
    double *y = malloc(sizeof(double) * (size_t)n);
    double *dist = malloc(sizeof(double) * (size_t)n * (size_t)n);
    int *tours = malloc(sizeof(int) * (size_t)n * (size_t)pop);
    double *fit = malloc(sizeof(double) * (size_t)pop);
    if (!x || !y || !dist || !tours || !fit)
        return 1;
    for (int i = 0; i < n; i++) {
        x[i] = rnd(10000) / 10.0;
        y[i] = rnd(10000) / 10.0;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            dist[i * n + j] = sqrt((x[i] - x[j]) * (x[i] - x[j]) + (y[i] - y[j]) * (y[i] - y[j]));
    for (int p = 0; p < pop; p++) {
        int *t = tours + (size_t)p * n;
        for (int i = 0; i < n; i++)
            t[i] = i;
        for (int i = n - 1; i > 0; i--) {
            int j = (int)rnd((unsigned)i + 1);
            int tmp = t[i];
            t[i] = t[j];
            t[j] = tmp;
        }
    }
    double best = 0.0;
    long long t0 = now_ns();
    for (int g = 0; g < gens; g++) {
        for (int p = 0; p < pop; p++) {
            int *t = tours + (size_t)p * n;
            int a = (int)rnd((unsigned)n), b = (int)rnd((unsigned)n);
            int tmp = t[a];
            t[a] = t[b];
            t[b] = tmp;
            double len = tour_length(t, n, dist);
            if (g > 0 && len > fit[p]) {
                t[b] = t[a]; /* undo a mutation that made the tour longer */
                t[a] = tmp;
            } else {
                fit[p] = len;
            }
        }
        best = fit[0];
        for (int p = 1; p < pop; p++)
            if (fit[p] < best)
                best = fit[p];
    }
    long long t1 = now_ns();
    printf("%.3f\n", best);
    fprintf(stderr, "ns %lld\n", t1 - t0);
    free(x);
    free(y);
    free(dist);
    free(tours);
    free(fit);
    return 0;
}
