/* tsp_cli.c - the command line of the sample's programs (tsp_cli.h):
 * options with their checks and usage, the instance, the job, and the
 * end of a run with its files and last line.
 */
#include "tsp_cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga.h"

/* Prints the usage of prog to f. */
static void s_usage(FILE *f, const char *prog, unsigned flags)
{
    fprintf(f,
            "usage: %s INSTANCE [options]\n"
            "  INSTANCE          a TSPLIB file (EUC_2D, CEIL_2D, ATT, GEO) or random:N\n"
            "  --seed S          random seed (default 1)\n"
            "  --budget N        total generations over all islands (default: by size)\n"
            "  --islands K       islands of the genetic algorithm (default 8)\n"
            "  --pop P           chromosomes per island (default: by size)\n"
            "  --epoch-gens G    generations per unit of work (default: by size)\n"
            "  --tour-out FILE   the best tour in TSPLIB's TOUR format (default NAME.tour)\n"
            "  --svg FILE        a picture of the best tour (default NAME.svg)\n"
            "  --optimum L       the optimal length, for the gap (default: TSPLIB's)\n"
            "  --quiet           no progress lines\n",
            prog);
    if (flags & TSP_CLI_DISTRIBUTED)
        fprintf(f, "  --vts V           virtual threads (default: one per core the workers offer,\n"
                   "                    at most one per island)\n"
                   "  --workers W       quota of workers of the virtual computer (default: all)\n"
                   "  --checkpoint-ms MS  checkpoint period of the VTs (default 2000; 0: none)\n"
                   "  --progress-file FILE  keep `UNITS_DONE UNITS_TOTAL BEST SECONDS` in FILE\n"
                   "  --trace-file FILE  a line per unit committed, as it is reported:\n"
                   "                    `SECONDS VT ISLAND EPOCH UNITS_DONE`\n");
    fprintf(f, "  --help            this text\n"
               "The last line printed is `best LENGTH gap PCT%% tour FILE`.\n");
    if (flags & TSP_CLI_DISTRIBUTED)
        fprintf(f,
                "Runs on the levpeer named by LEV_PEER, else on a peer embedded in the process.\n");
}

/* Reports a bad command line; returns the exit status 2. */
static int s_bad(const char *prog, const char *what, const char *arg)
{
    fprintf(stderr, "%s: %s%s%s%s\nTry '%s --help' for more information.\n", prog, what,
            arg ? " '" : "", arg ? arg : "", arg ? "'" : "", prog);
    return 2;
}

/* Parses a whole number in [lo, hi]; 0 or -1. */
static int s_num(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* The options that take a value, their range and where they go. */
enum {
    O_SEED,
    O_BUDGET,
    O_ISLANDS,
    O_POP,
    O_GENS,
    O_TOUR,
    O_SVG,
    O_OPT,
    O_VTS,
    O_CKPT,
    O_WORKERS,
    O_PROGRESS,
    O_TRACE
};
static const struct {
    const char *name;
    int distributed; /* lev-tsp only */
    int64_t lo, hi;  /* numeric range; lo > hi: a file name */
} s_opts[] = {
    [O_SEED] = {"seed", 0, 0, INT64_MAX},
    [O_BUDGET] = {"budget", 0, 1, INT64_MAX / 2},
    [O_ISLANDS] = {"islands", 0, 1, TSP_ISLANDS_MAX},
    [O_POP] = {"pop", 0, 2, 4096},
    [O_GENS] = {"epoch-gens", 0, 1, 1000000},
    [O_TOUR] = {"tour-out", 0, 1, 0},
    [O_SVG] = {"svg", 0, 1, 0},
    [O_OPT] = {"optimum", 0, 1, INT64_MAX / 2},
    [O_VTS] = {"vts", 1, 0, 4096},
    [O_CKPT] = {"checkpoint-ms", 1, 0, 86400000},
    [O_WORKERS] = {"workers", 1, 0, 4096},
    [O_PROGRESS] = {"progress-file", 1, 1, 0},
    [O_TRACE] = {"trace-file", 1, 1, 0},
};

/* Stores the value v of option k into o. */
static void s_set(tsp_opts *o, int k, const char *v, int64_t num)
{
    switch (k) {
    case O_SEED:
        o->seed = (uint64_t)num;
        break;
    case O_BUDGET:
        o->budget = num;
        break;
    case O_ISLANDS:
        o->islands = (int32_t)num;
        break;
    case O_POP:
        o->pop = (int32_t)num;
        break;
    case O_GENS:
        o->epoch_gens = (int32_t)num;
        break;
    case O_TOUR:
        o->tour_out = v;
        break;
    case O_SVG:
        o->svg = v;
        break;
    case O_OPT:
        o->optimum = num;
        break;
    case O_VTS:
        o->vts = (int32_t)num;
        break;
    case O_WORKERS:
        o->workers = (int32_t)num;
        break;
    case O_PROGRESS:
        o->progress_file = v;
        break;
    case O_TRACE:
        o->trace_file = v;
        break;
    default:
        o->checkpoint_ms = (int32_t)num;
    }
}

int tsp_cli_parse(int argc, char **argv, const char *prog, unsigned flags, tsp_opts *o)
{
    memset(o, 0, sizeof *o);
    o->prog = prog;
    o->seed = 1;
    o->islands = 8;
    o->checkpoint_ms = -1;
    int dashdash = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (dashdash || a[0] != '-' || !a[1]) {
            if (o->instance)
                return s_bad(prog, "more than one INSTANCE:", a);
            o->instance = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            dashdash = 1;
            continue;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            s_usage(stdout, prog, flags);
            return 0;
        }
        if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            o->quiet = 1;
            continue;
        }
        if (a[1] != '-')
            return s_bad(prog, "unknown option", a);
        const char *name = a + 2, *eq = strchr(name, '=');
        size_t nl = eq ? (size_t)(eq - name) : strlen(name);
        int k = -1;
        for (int j = 0; j < (int)(sizeof s_opts / sizeof s_opts[0]); j++)
            if (strlen(s_opts[j].name) == nl && strncmp(s_opts[j].name, name, nl) == 0)
                k = j;
        if (k < 0 || (s_opts[k].distributed && !(flags & TSP_CLI_DISTRIBUTED)))
            return s_bad(prog, "unknown option", a);
        const char *v = eq ? eq + 1 : NULL;
        if (!v) {
            if (i + 1 >= argc)
                return s_bad(prog, "this option needs a value:", a);
            v = argv[++i];
        }
        int64_t num = 0;
        if (s_opts[k].lo > s_opts[k].hi) {
            if (!*v)
                return s_bad(prog, "this option needs a file name:", a);
        } else if (s_num(v, s_opts[k].lo, s_opts[k].hi, &num) != 0) {
            char what[160];
            snprintf(what, sizeof what,
                     "--%s: '%s' is not a whole number from %" PRId64 " to %" PRId64,
                     s_opts[k].name, v, s_opts[k].lo, s_opts[k].hi);
            return s_bad(prog, what, NULL);
        }
        s_set(o, k, v, num);
    }
    if (!o->instance)
        return s_bad(prog, "no INSTANCE given (a TSPLIB file or random:N)", NULL);
    return -1;
}

int tsp_cli_load(const tsp_opts *o, tsp_instance *inst)
{
    char err[512];
    if (strncmp(o->instance, "random:", 7) == 0) {
        int64_t n;
        if (s_num(o->instance + 7, 5, TSP_CITIES_MAX, &n) != 0) {
            fprintf(stderr, "%s: %s: N is not a whole number from 5 to %d\n", o->prog, o->instance,
                    TSP_CITIES_MAX);
            return 2;
        }
        if (tsp_random((int32_t)n, o->seed, inst) != 0) {
            fprintf(stderr, "%s: %s: out of memory\n", o->prog, o->instance);
            return 2;
        }
    } else if (tsp_load(o->instance, inst, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", o->prog, err);
        return 2;
    }
    if (o->optimum > 0)
        inst->optimum = o->optimum;
    return 0;
}

int tsp_cli_job(const tsp_opts *o, const tsp_instance *inst, void **job, size_t *len)
{
    tsp_job j;
    memset(&j, 0, sizeof j);
    j.magic = TSP_JOB_MAGIC;
    j.n = inst->n;
    j.metric = inst->metric;
    j.islands = o->islands > 0 ? o->islands : 8;
    ga_params_default(&j.ga, inst->n);
    if (o->pop > 0)
        j.ga.pop = o->pop;
    if (o->epoch_gens > 0)
        j.ga.gens = o->epoch_gens;
    if (j.ga.tournament > j.ga.pop)
        j.ga.tournament = j.ga.pop;
    if (j.ga.elite >= j.ga.pop)
        j.ga.elite = j.ga.pop - 1;
    int64_t budget = o->budget > 0 ? o->budget : tsp_budget_default(inst->n);
    j.epochs = tsp_job_epochs(budget, j.islands, j.ga.gens);
    j.seed = o->seed;
    const char *why = NULL;
    if (ga_params_check(&j.ga, inst->n, &why) != 0) {
        fprintf(stderr, "%s: %s\n", o->prog, why);
        return 2;
    }
    size_t coords = 2 * (size_t)inst->n * sizeof(double);
    char *buf = malloc(sizeof j + coords);
    if (!buf) {
        fprintf(stderr, "%s: out of memory\n", o->prog);
        return 2;
    }
    memcpy(buf, &j, sizeof j);
    memcpy(buf + sizeof j, tsp_coords(inst), coords);
    if (tsp_job_check(buf, sizeof j + coords, NULL, &why) != 0) {
        fprintf(stderr, "%s: %s\n", o->prog, why);
        free(buf);
        return 2;
    }
    *job = buf;
    *len = sizeof j + coords;
    return 0;
}

const char *tsp_cli_gap(const tsp_instance *inst, int64_t length, char *buf, size_t len)
{
    if (inst->optimum > 0)
        snprintf(buf, len, "%.2f%%",
                 100.0 * (double)(length - inst->optimum) / (double)inst->optimum);
    else
        snprintf(buf, len, "n/a");
    return buf;
}

/* The default file name NAME.ext (slashes in NAME made '_') in buf. */
static const char *s_default_file(const tsp_instance *inst, const char *ext, char *buf, size_t len)
{
    snprintf(buf, len, "%s.%s", inst->name, ext);
    for (char *p = buf; *p; p++)
        if (*p == '/')
            *p = '_';
    return buf;
}

int tsp_cli_finish(const tsp_opts *o, const tsp_instance *inst, const int32_t *tour, int64_t length)
{
    char err[512], tbuf[128], sbuf[128], gap[32];
    if (tsp_tour_check(inst, tour, err, sizeof err) != 0) {
        fprintf(stderr, "%s: the best tour is not valid: %s\n", o->prog, err);
        return 1;
    }
    int64_t real = tsp_tour_length(inst, tour);
    if (real != length) {
        fprintf(stderr, "%s: the best tour's length is %" PRId64 ", not the %" PRId64 " reported\n",
                o->prog, real, length);
        return 1;
    }
    const char *tpath = o->tour_out ? o->tour_out : s_default_file(inst, "tour", tbuf, sizeof tbuf);
    const char *spath = o->svg ? o->svg : s_default_file(inst, "svg", sbuf, sizeof sbuf);
    if (tsp_tour_write(inst, tour, length, tpath, err, sizeof err) != 0 ||
        tsp_svg_write(inst, tour, length, spath, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", o->prog, err);
        return 1;
    }
    if (!o->quiet)
        printf("picture %s\n", spath);
    printf("best %" PRId64 " gap %s tour %s\n", length, tsp_cli_gap(inst, length, gap, sizeof gap),
           tpath);
    fflush(stdout);
    return 0;
}
