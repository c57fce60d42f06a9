/* lev_tsp.c - lev-tsp, the client of the TSP sample: reads an instance,
 * opens a virtual computer (the levpeer of LEV_PEER, or a peer embedded in
 * this process), sets the schedule of the run's units, starts the VTs of
 * tsp_tasks.c, shows live progress (generations, best length and gap,
 * peers, VTs, checkpoints, VTs resumed), and writes the best tour as a
 * TSPLIB TOUR file and an SVG picture. The result is the same as
 * lev-tsp-seq's for the same options, on any mesh.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "leverage.h"
#include "tsp_cli.h"
#include "tsp_job.h"
#include "tsp_sched.h"
#include "tsp_tasks.h"
#include "tsplib.h"

#define PROG "lev-tsp"
#define TSP_END_WAIT_MS 100 /* a VT's end awaited once every unit is committed */

/* What the report callback learns, read by the main thread. */
typedef struct tsp_watch {
    pthread_mutex_t mu;
    tsp_progress last; /* the newest progress report */
    int64_t reports;
    FILE *trace; /* --trace-file, or NULL */
    double t0;   /* when the run started (s_now) */
} tsp_watch;

static double s_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void s_on_report(lev_vt_id vt, const void *buf, size_t len, void *ctx)
{
    tsp_watch *w = ctx;
    tsp_progress p;
    if (len != sizeof p)
        return;
    memcpy(&p, buf, sizeof p);
    pthread_mutex_lock(&w->mu);
    if (p.units_done > w->last.units_done)
        w->last = p;
    w->reports++;
    if (w->trace) /* each report is a unit its VT committed first */
        fprintf(w->trace, "%.3f %" PRIu64 " %d %d %" PRId64 "\n", s_now() - w->t0, (uint64_t)vt,
                (int)p.island, (int)p.epoch, p.units_done);
    pthread_mutex_unlock(&w->mu);
}

/* A run given up: the VC closed (no report comes after it), then the
 * trace file. Returns the exit status, 1. */
static int s_abandon(lev_vc **vc, FILE *trace)
{
    lev_vc_close(vc);
    if (trace)
        fclose(trace);
    return 1;
}

/* Writes `UNITS_DONE UNITS_TOTAL BEST ELAPSED_S` to path, atomically (a
 * temporary file renamed), for scripts that watch the run. */
static void s_progress_file(const char *path, const tsp_progress *p, int64_t total, double elapsed)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return;
    FILE *f = fopen(tmp, "w");
    if (!f)
        return;
    fprintf(f, "%" PRId64 " %" PRId64 " %" PRId64 " %.3f\n", p->units_done, total,
            p->units_done ? p->best : -1, elapsed);
    if (fclose(f) == 0)
        rename(tmp, path);
}

/* Prints one progress line: on a terminal it replaces the previous one. */
static void s_progress(const tsp_opts *o, const tsp_instance *inst, const tsp_job *job,
                       tsp_watch *w, lev_vc *vc, double t0, int final)
{
    static lev_vc_stats prev;
    lev_vc_stats st;
    memset(&st, 0, sizeof st);
    if (lev_vc_stats_get(vc, &st) != 0)
        st = prev;
    pthread_mutex_lock(&w->mu);
    tsp_progress p = w->last;
    pthread_mutex_unlock(&w->mu);
    if (o->progress_file)
        s_progress_file(o->progress_file, &p, (int64_t)job->islands * job->epochs, s_now() - t0);
    int tty = isatty(STDOUT_FILENO);
    if (st.resumes > prev.resumes || st.lost_peers > prev.lost_peers)
        printf("%s%" PRIu64 " peer(s) lost so far; %" PRIu64
               " VT(s) resumed elsewhere from their checkpoints\n",
               tty ? "\r\033[K" : "", st.lost_peers, st.resumes);
    prev = st;
    if (o->quiet)
        return;
    int64_t gens = p.units_done * job->ga.gens,
            total = (int64_t)job->islands * job->epochs * job->ga.gens;
    char gap[32] = "-";
    if (p.units_done)
        tsp_cli_gap(inst, p.best, gap, sizeof gap);
    char best[32] = "-";
    if (p.units_done)
        snprintf(best, sizeof best, "%" PRId64, p.best);
    printf("%sgeneration %" PRId64 "/%" PRId64
           "  best %s (gap %s)  peers %u  VTs %u  checkpoints %" PRIu64 "  resumed %" PRIu64
           "  %.1f s%s",
           tty ? "\r\033[K" : "", gens, total, best, gap, st.peers, st.vts, st.checkpoints,
           st.resumes, s_now() - t0, tty && !final ? "" : "\n");
    fflush(stdout);
}

/* The schedule of a new run: every island at epoch 0, nothing claimed. */
static tsp_sched *s_sched_new(const tsp_job *job, size_t *len)
{
    *len = tsp_sched_bytes(job->islands);
    tsp_sched *s = malloc(*len);
    if (s)
        tsp_sched_init(s, job->islands, job->epochs);
    return s;
}

/* How many VTs to start: --vts, else the cores the VC's workers offer, at
 * most one per island. Workers enrol one by one after the VC opens, so it
 * waits (at most 3 s) for the quota of workers (--workers) to be full, or
 * without a quota for the count of cores to stay the same for 300 ms. */
static int s_vts(const tsp_opts *o, const tsp_job *job, lev_vc *vc)
{
    if (o->vts > 0)
        return o->vts;
    lev_vc_stats st;
    uint32_t cores = 0;
    double t0 = s_now(), since = t0;
    while (s_now() - t0 < 3.0) {
        memset(&st, 0, sizeof st);
        if (lev_vc_stats_get(vc, &st) != 0)
            break;
        if (st.cores != cores) {
            cores = st.cores;
            since = s_now();
        }
        if (cores && o->workers > 0 ? st.peers >= (uint32_t)o->workers
                                    : cores && s_now() - since >= 0.3)
            break;
        usleep(50000);
    }
    int v = cores ? (int)cores : 1;
    return v < job->islands ? v : job->islands;
}

/* Finds the best of the islands' final tours (the lowest island on a
 * tie); 0, or -1 with the error printed. */
static int s_best(lev_vc *vc, const tsp_instance *inst, const tsp_job *job, int32_t *tour,
                  int64_t *len)
{
    *len = -1;
    for (int32_t i = 0; i < job->islands; i++) {
        char name[48];
        snprintf(name, sizeof name, "tsp.mig.%d.%d", (int)i, (int)(job->epochs - 1));
        void *val = NULL;
        size_t n = 0;
        int rc = lev_global_get(vc, name, &val, &n);
        if (rc || n != (size_t)inst->n * sizeof *tour) {
            fprintf(stderr, PROG ": island %d's final tour is %s: %s\n", (int)i,
                    rc ? "unreadable" : "missing", rc ? lev_errdetail() : "the run did not finish");
            free(val);
            return -1;
        }
        char err[160];
        int64_t l =
            tsp_tour_check(inst, val, err, sizeof err) == 0 ? tsp_tour_length(inst, val) : -1;
        if (l < 0) {
            fprintf(stderr, PROG ": island %d's final tour is not a tour: %s\n", (int)i, err);
            free(val);
            return -1;
        }
        if (*len < 0 || l < *len) {
            *len = l;
            memcpy(tour, val, n);
        }
        free(val);
    }
    return 0;
}

int main(int argc, char **argv)
{
    tsp_opts o;
    int rc = tsp_cli_parse(argc, argv, PROG, TSP_CLI_DISTRIBUTED, &o);
    if (rc >= 0)
        return rc;
    tsp_instance inst;
    if ((rc = tsp_cli_load(&o, &inst)))
        return rc;
    size_t joblen = 0;
    void *jobp = NULL;
    if ((rc = tsp_cli_job(&o, &inst, &jobp, &joblen))) {
        tsp_free(&inst);
        return rc;
    }
    tsp_job *job = jobp;
    /* An island's state is one global variable: at most 1 MiB (lev_task.h). */
    size_t island = 64 + (size_t)job->ga.pop * ((size_t)inst.n * 4 + 8);
    if (island > ((size_t)1 << 20) - 1024) {
        fprintf(stderr,
                PROG ": --pop: an island of %d chromosomes of %d cities takes %zu bytes, above the "
                     "1 MiB limit of a global variable; use --pop %d or less\n",
                (int)job->ga.pop, (int)inst.n, island,
                (int)((((size_t)1 << 20) - 4096) / ((size_t)inst.n * 4 + 8)));
        free(job);
        tsp_free(&inst);
        return 2;
    }
    FILE *trace = NULL;
    if (o.trace_file && !(trace = fopen(o.trace_file, "w"))) {
        fprintf(stderr, PROG ": --trace-file: cannot write '%s': %s\n", o.trace_file,
                strerror(errno));
        free(job);
        tsp_free(&inst);
        return 2;
    }

    double t0 = s_now();
    lev_vc_options vo;
    memset(&vo, 0, sizeof vo);
    /* --checkpoint-ms: unset (-1) the VC's default, 0 none, else the interval. */
    vo.checkpoint_ms = o.checkpoint_ms < 0 ? 0 : o.checkpoint_ms == 0 ? -1 : o.checkpoint_ms;
    vo.workers = o.workers;
    lev_vc *vc = NULL;
    if ((rc = lev_vc_open(&vc, &vo))) {
        fprintf(stderr, PROG ": cannot open a virtual computer: %s: %s\n", lev_strerror(rc),
                lev_errdetail());
        return s_abandon(&vc, trace);
    }
    tsp_watch w = {.mu = PTHREAD_MUTEX_INITIALIZER, .trace = trace, .t0 = t0};
    lev_vc_on_report(vc, s_on_report, &w);
    size_t slen = 0;
    tsp_sched *sched = s_sched_new(job, &slen);
    if (!sched || (rc = lev_global_set(vc, TSP_SCHED_VAR, sched, slen))) {
        fprintf(stderr, PROG ": cannot set the schedule: %s: %s\n", lev_strerror(rc),
                lev_errdetail());
        return s_abandon(&vc, trace);
    }
    free(sched);
    int nvt = s_vts(&o, job, vc);
    lev_vt_id *ids = calloc((size_t)nvt, sizeof *ids);
    if (!ids)
        return s_abandon(&vc, trace);
    if (!o.quiet)
        printf("%s: %d cities, %d islands x %d epochs x %d generations, %d VTs, seed %" PRIu64 "\n",
               inst.name, (int)inst.n, (int)job->islands, (int)job->epochs, (int)job->ga.gens, nvt,
               job->seed);
    for (int i = 0; i < nvt; i++)
        if ((rc = lev_vt_start(vc, TSP_TASK, job, joblen, &ids[i]))) {
            fprintf(stderr, PROG ": cannot start a VT: %s: %s\n", lev_strerror(rc),
                    lev_errdetail());
            return s_abandon(&vc, trace);
        }

    int failed = 0, units = 0, backups = 0, mig_reads = 0, isl_reads = 0, ahead = 0;
    int not_waited = 0;
    int64_t total_units = (int64_t)job->islands * job->epochs;
    double shown = 0;
    for (int i = 0; i < nvt;) {
        /* Once every unit is committed, a VT still running is finishing a
         * backup that changes nothing, or its worker is stopped: the run
         * is over, and it is not waited for (closing the VC cancels it). */
        pthread_mutex_lock(&w.mu);
        bool all_done = w.last.units_done >= total_units;
        pthread_mutex_unlock(&w.mu);
        void *res = NULL;
        size_t len = 0;
        rc = lev_vt_join(vc, ids[i], &res, &len, all_done ? TSP_END_WAIT_MS : 250);
        if (rc == LEV_ETIMEDOUT && all_done) {
            not_waited++;
            i++;
            continue;
        }
        if (rc != LEV_ETIMEDOUT) {
            tsp_result r;
            if (rc == 0 && len == sizeof r) {
                memcpy(&r, res, sizeof r);
                r.why[sizeof r.why - 1] = '\0';
                if (r.err) {
                    fprintf(stderr, PROG ": VT %" PRIu64 ": %s\n", ids[i], r.why);
                    failed++;
                } else {
                    units += r.units;
                    backups += r.backups;
                    mig_reads += r.mig_reads;
                    isl_reads += r.isl_reads;
                    ahead += r.ahead;
                }
            } else {
                fprintf(stderr, PROG ": VT %" PRIu64 " ended with %s: %s\n", ids[i],
                        lev_strerror(rc ? rc : LEV_EFAILED), rc ? lev_errdetail() : "no result");
                failed++;
            }
            free(res);
            i++;
        }
        if (rc == LEV_EPEER)
            break;
        if (s_now() - shown >= 0.5) {
            s_progress(&o, &inst, job, &w, vc, t0, 0);
            shown = s_now();
        }
    }
    s_progress(&o, &inst, job, &w, vc, t0, 1);
    if (not_waited)
        printf("%d VT(s) still running once every unit was committed (a backup that changes "
               "nothing, or a stopped worker): not waited for\n",
               not_waited);
    pthread_mutex_lock(&w.mu);
    if (w.last.units_done > units) /* (those VTs' counts are not in the sums below) */
        units = (int)w.last.units_done;
    pthread_mutex_unlock(&w.mu);
    /* what the VTs ran: a unit run twice (a backup, to end sooner) is
     * work the mesh did beyond the sequential run; a migrant read is a
     * round trip a unit waited for, a unit claimed ahead one it did not */
    printf("units %d committed by %d VTs, %d run twice as backups, %d migrants read from "
           "globals (the others came in messages), %d island states read, %d units claimed "
           "ahead (one lock for two)\n",
           units, nvt, backups, mig_reads, isl_reads, ahead);

    int32_t *tour = malloc((size_t)inst.n * sizeof *tour);
    int64_t len = -1;
    rc = !tour || s_best(vc, &inst, job, tour, &len) ? 1 : 0;
    if (rc == 0 && failed)
        fprintf(stderr, PROG ": %d VT(s) failed; the others finished every unit\n", failed);
    lev_vc_close(&vc); /* (no report comes after it) */
    if (trace && fclose(trace) != 0 && rc == 0) {
        fprintf(stderr, PROG ": --trace-file: cannot write '%s': %s\n", o.trace_file,
                strerror(errno));
        rc = 1;
    }
    if (rc == 0)
        rc = tsp_cli_finish(&o, &inst, tour, len);
    free(tour);
    free(ids);
    free(job);
    tsp_free(&inst);
    return rc;
}
