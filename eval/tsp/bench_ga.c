/* bench_ga.c - the cost of one island's work of the TSP sample: the world
 * of an instance, then one island initialised and run EPOCHS epochs of
 * GENS generations (each taking the island's own best as its migrant),
 * as a unit of lev-tsp does. Built natively and through levpp --main-task
 * with ga.c (eval/tsp/run.sh) to measure what the rewriting costs.
 *
 *   bench_ga INSTANCE [GENS [EPOCHS [SEED]]]     (default 200 2 1)
 *
 * Prints the best length on standard output and the CPU time of the
 * epochs (init included, world excluded) on standard error as `ns N`.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ga.h"
#include "tsplib.h"

/* CPU time of the calling thread (the VT's worker once transformed), in
 * nanoseconds: on a machine shared with other work, wall time measures
 * the neighbours as much as the code. */
static long long s_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_ga INSTANCE [GENS [EPOCHS [SEED]]]\n");
        return 2;
    }
    tsp_instance inst;
    char err[512];
    if (tsp_load(argv[1], &inst, err, sizeof err) != 0) {
        fprintf(stderr, "bench_ga: %s\n", err);
        return 2;
    }
    ga_params p;
    ga_params_default(&p, inst.n);
    p.gens = argc > 2 ? atoi(argv[2]) : 200;
    int epochs = argc > 3 ? atoi(argv[3]) : 2;
    uint64_t seed = argc > 4 ? strtoull(argv[4], NULL, 10) : 1;
    ga_world *w = ga_world_new(inst.n, inst.metric, tsp_coords(&inst), &p);
    void *st = w ? malloc(ga_island_bytes(w)) : NULL;
    int32_t *mig = malloc((size_t)inst.n * sizeof *mig);
    if (!w || !st || !mig) {
        fprintf(stderr, "bench_ga: out of memory or bad parameters\n");
        return 1;
    }
    long long t0 = s_now_ns();
    ga_island_init(w, st, seed, 0);
    for (int e = 0; e < epochs; e++) {
        ga_island_best(w, st, mig);
        ga_island_epoch(w, st, e ? mig : NULL);
    }
    long long t1 = s_now_ns();
    printf("%" PRId64 "\n", ga_island_best(w, st, NULL));
    fprintf(stderr, "ns %lld\n", t1 - t0);
    free(mig);
    free(st);
    ga_world_destroy(&w);
    tsp_free(&inst);
    return 0;
}
