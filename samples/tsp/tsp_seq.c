/* tsp_seq.c - lev-tsp-seq, the sequential reference of the TSP sample:
 * the units of the job lev-tsp would run, run in one process in epoch
 * order (for each epoch, each island), with the same migrants, so the
 * same options give the same best tour. Plain C; no Leverage.
 *
 *   lev-tsp-seq INSTANCE [--seed S] [--budget N] [--islands K] ...
 *   (lev-tsp-seq --help)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ga.h"
#include "tsp_cli.h"

static double s_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Runs the job on w: K islands, E epochs; leaves the best tour of the
 * run in best[n] and returns its length (-1 when memory runs out). */
static int64_t s_run(const tsp_opts *o, const tsp_instance *inst, const tsp_job *j, ga_world *w,
                     int32_t *best)
{
    int32_t n = j->n, k = j->islands;
    size_t sb = ga_island_bytes(w);
    char *states = malloc(sb * (size_t)k);
    int32_t *mig = malloc(2 * (size_t)k * (size_t)n * sizeof *mig); /* two epochs' bests */
    int64_t len = -1;
    if (!states || !mig)
        goto out;
    double t0 = s_now();
    for (int32_t i = 0; i < k; i++)
        ga_island_init(w, states + sb * (size_t)i, j->seed, i);
    for (int32_t e = 0; e < j->epochs; e++) {
        int32_t *prev = mig + (size_t)((e + 1) % 2) * (size_t)k * (size_t)n;
        int32_t *cur = mig + (size_t)(e % 2) * (size_t)k * (size_t)n;
        int64_t eb = INT64_MAX;
        for (int32_t i = 0; i < k; i++) {
            const int32_t *m = e > 0 ? prev + (size_t)((i + k - 1) % k) * (size_t)n : NULL;
            ga_island_epoch(w, states + sb * (size_t)i, m);
            int64_t l = ga_island_best(w, states + sb * (size_t)i, cur + (size_t)i * (size_t)n);
            if (l < eb) {
                eb = l;
                memcpy(best, cur + (size_t)i * (size_t)n, (size_t)n * sizeof *best);
            }
        }
        len = eb;
        if (!o->quiet) {
            char gap[32];
            int64_t gens = (int64_t)(e + 1) * k * j->ga.gens;
            printf("epoch %d/%d  generations %" PRId64 "  best %" PRId64 "  gap %s  %.1f s\n",
                   (int)e + 1, (int)j->epochs, gens, eb, tsp_cli_gap(inst, eb, gap, sizeof gap),
                   s_now() - t0);
            fflush(stdout);
        }
    }
out:
    free(states);
    free(mig);
    return len;
}

int main(int argc, char **argv)
{
    tsp_opts o;
    int rc = tsp_cli_parse(argc, argv, "lev-tsp-seq", 0, &o);
    if (rc >= 0)
        return rc;
    tsp_instance inst;
    if ((rc = tsp_cli_load(&o, &inst)) != 0)
        return rc;
    void *blob = NULL;
    size_t blen = 0;
    if ((rc = tsp_cli_job(&o, &inst, &blob, &blen)) != 0) {
        tsp_free(&inst);
        return rc;
    }
    tsp_job j;
    memcpy(&j, blob, sizeof j);
    if (!o.quiet)
        printf("%s: %d cities, %d islands x %d epochs x %d generations (pop %d), seed %" PRIu64
               "\n",
               inst.name, (int)inst.n, (int)j.islands, (int)j.epochs, (int)j.ga.gens, (int)j.ga.pop,
               j.seed);
    ga_world *w = ga_world_new(inst.n, inst.metric, tsp_coords(&inst), &j.ga);
    int32_t *best = malloc((size_t)inst.n * sizeof *best);
    rc = 1;
    if (!w || !best)
        fprintf(stderr, "lev-tsp-seq: out of memory\n");
    else {
        int64_t len = s_run(&o, &inst, &j, w, best);
        if (len < 0)
            fprintf(stderr, "lev-tsp-seq: out of memory\n");
        else
            rc = tsp_cli_finish(&o, &inst, best, len);
    }
    free(best);
    ga_world_destroy(&w);
    free(blob);
    tsp_free(&inst);
    return rc;
}
