/* tsp_cli.h - the command line shared by the sample's programs
 * (tsp_cli.c): lev-tsp (distributed) and lev-tsp-seq (the sequential
 * reference). Options, the instance they name, the job they make, and the
 * end of a run (tour checked, TOUR and SVG files written, last line
 * printed). Plain C; no Leverage.
 *
 *   PROG INSTANCE [--seed S] [--budget N] [--islands K] [--pop P]
 *        [--epoch-gens G] [--tour-out FILE] [--svg FILE] [--optimum L]
 *        [--quiet] [--help]
 *   lev-tsp only: [--vts V] [--workers W] [--checkpoint-ms MS]
 *                 [--progress-file FILE] [--trace-file FILE]
 *
 * Exit statuses: 0 done, 1 internal failure, 2 bad usage or bad input.
 */
#ifndef TSP_CLI_H
#define TSP_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "tsp_job.h"
#include "tsplib.h"

/* tsp_cli_parse flag: the program is lev-tsp (accepts --vts, --workers,
 * --checkpoint-ms and --progress-file). */
#define TSP_CLI_DISTRIBUTED 1u

/* What the command line asked for; 0 or NULL fields take their defaults. */
typedef struct tsp_opts {
    const char *prog;          /* program name for messages */
    const char *instance;      /* TSPLIB path, or "random:N" */
    uint64_t seed;             /* --seed, default 1 */
    int64_t budget;            /* --budget: total generations; 0 = tsp_budget_default */
    int32_t islands;           /* --islands, default 8 */
    int32_t pop;               /* --pop; 0 = ga_params_default */
    int32_t epoch_gens;        /* --epoch-gens; 0 = ga_params_default */
    const char *tour_out;      /* --tour-out; NULL = NAME.tour */
    const char *svg;           /* --svg; NULL = NAME.svg */
    int64_t optimum;           /* --optimum; 0 = the instance's known one */
    int quiet;                 /* --quiet: no progress lines */
    int32_t vts;               /* lev-tsp --vts: 0 = one per island */
    int32_t checkpoint_ms;     /* lev-tsp --checkpoint-ms: -1 = the VC's default, 0 = none */
    int32_t workers;           /* lev-tsp --workers: the VC's quota of workers; 0 = all */
    const char *progress_file; /* lev-tsp --progress-file */
    const char *trace_file;    /* lev-tsp --trace-file */
} tsp_opts;

/* Parses argv into *o (prog names the program in messages and usage;
 * flags: TSP_CLI_DISTRIBUTED or 0). Returns -1 to go on, or the status to
 * exit with now: 0 after --help (usage on standard output), 2 after a
 * bad option or value (a message naming it and a hint on standard
 * error). */
int tsp_cli_parse(int argc, char **argv, const char *prog, unsigned flags, tsp_opts *o);

/* Loads the instance o names into *inst (a TSPLIB file, or random:N
 * seeded by o->seed), with o->optimum overriding its optimum. 0, or 2
 * with the reason (file, line, field) printed on standard error; *inst
 * is then empty. Caller frees it with tsp_free. */
int tsp_cli_load(const tsp_opts *o, tsp_instance *inst);

/* Makes the job of the run o asks for on inst: a malloc'd tsp_job header
 * followed by the coordinates (tsp_coords), *len bytes, in *job (caller
 * frees it). 0, or 2 with the reason printed on standard error. */
int tsp_cli_job(const tsp_opts *o, const tsp_instance *inst, void **job, size_t *len);

/* The gap of length to inst's optimum as "1.23%", or "n/a" when the
 * optimum is unknown, in buf[len]; returns buf. */
const char *tsp_cli_gap(const tsp_instance *inst, int64_t length, char *buf, size_t len);

/* Ends a run whose best tour is tour[n] of the given length: checks that
 * it is a permutation whose recomputed length is `length`, writes the
 * TOUR and SVG files, prints `picture FILE` (unless quiet) and, as the
 * last line, `best LENGTH gap PCT% tour FILE`. 0, or 1 with the reason
 * printed on standard error. */
int tsp_cli_finish(const tsp_opts *o, const tsp_instance *inst, const int32_t *tour,
                   int64_t length);

#endif
