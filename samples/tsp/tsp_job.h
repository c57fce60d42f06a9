/* tsp_job.h - one run of the sample as a fixed amount of work (tsp_job.c),
 * shared by the client lev-tsp, its tasks and the sequential reference
 * lev-tsp-seq.
 *
 * A run is K islands times E epochs of G generations: K x E units of work.
 * Unit (i, e) evolves island i through its epoch e, taking as migrant the
 * best tour island i-1 (mod K) had at the end of its epoch e-1. A unit may
 * run once that migrant exists, wherever and whenever: the result of the
 * run is a function of the job alone, not of the machines, their number
 * or their speeds.
 *
 * The job travels as the argument of each VT: the header below followed
 * by n (x, y) pairs of doubles (GEO: radians).
 */
#ifndef TSP_JOB_H
#define TSP_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "ga.h"

#define TSP_JOB_MAGIC 0x5053544Cu /* "LTSP" */
#define TSP_ISLANDS_MAX 1024
#define TSP_CITIES_MAX 100000

typedef struct tsp_job {
    uint32_t magic;
    int32_t n;       /* cities */
    int32_t metric;  /* tsp_metric */
    int32_t islands; /* K */
    int32_t epochs;  /* E */
    ga_params ga;    /* ga.gens: G */
    uint64_t seed;
} tsp_job;

/* Default total budget, in generations summed over all islands, for an
 * instance of n cities: what reaches the sample's quality targets within
 * a minute on a 2-core machine. */
int64_t tsp_budget_default(int32_t n);

/* Number of epochs that spend at least `budget` generations on `islands`
 * islands of `gens` generations per epoch (at least 1). */
int32_t tsp_job_epochs(int64_t budget, int32_t islands, int32_t gens);

/* Returns 0 if job (len bytes, with its coordinates) is well formed, else
 * -1 and a static sentence naming the field at fault in *why. On success
 * *xy points to its coordinates inside job. */
int tsp_job_check(const void *job, size_t len, const double **xy, const char **why);

#endif
