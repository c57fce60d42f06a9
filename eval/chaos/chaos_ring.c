/* chaos_ring.c - the token ring jobs of the soak (eval/chaos/run.sh): one
 * ring after another on a levpeer, until a time is up, each checked
 * exactly. A job opens a virtual computer, starts VTS VTs of chaos_ring
 * (chaos_ring_tasks.c), sends each its place in the ring, joins them and
 * checks what each returned against what chaos_ring.h computes (tokens
 * taken, the last value, the checksum of the values, no duplicate, no
 * gap, no damaged token, no failed call) and that each progress report
 * came exactly once. Prints a line per job and a summary; exits 1 if any
 * job failed.
 *
 *   chaos_ring [--seconds S] [--max-jobs N] [--peer EP]... [--vts N]
 *              [--rounds R] [--words W] [--report-every K] [--workers Q]
 *              [--checkpoint-ms MS] [--job-timeout S] [--stop-file FILE]
 *
 * --seconds S      start no job after S seconds (default 60)
 * --max-jobs N     at most N jobs (default 1000)
 * --peer EP        the levpeer of a job (repeated: the jobs take them in
 *                  turn); default LEV_PEER
 * --vts N          VTs in a ring (2..16, default 6)
 * --rounds R       times the token goes round (default 400)
 * --words W        payload words of a token (0..1024, default 16)
 * --report-every K a VT reports every K rounds (default 20)
 * --workers Q      the VC's worker quota (default 0: every peer)
 * --checkpoint-ms MS  checkpoint interval (default 0: the VC's 2000)
 * --job-timeout S  a job not over after S s fails as lost (default 300)
 * --stop-file FILE start no job once FILE exists
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "chaos_ring.h"
#include "leverage.h"

#define MAXPEERS 8
#define MAXREP 4096 /* reports counted per VT */

static double s_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The reports of one job, counted per place and report. */
typedef struct reps {
    pthread_mutex_t mu;
    const cr_cfg *cfg;
    long every;
    int count[CR_MAXVT][MAXREP];
    long total, strays; /* every report; those of no known VT or round */
} reps;

/* The index of the report of round r (r a multiple of every, or the
 * last), or -1. */
static long s_rep_index(const cr_cfg *c, long r)
{
    if (r < 1 || r > c->rounds || (r % c->report_every && r != c->rounds))
        return -1;
    long i = (r - 1) / c->report_every;
    return i < MAXREP ? i : -1;
}

static long s_reps_expected(const cr_cfg *c)
{
    return c->rounds / c->report_every + (c->rounds % c->report_every != 0);
}

static void s_on_report(lev_vt_id vt, const void *buf, size_t len, void *ctx)
{
    reps *rp = ctx;
    cr_report r;
    pthread_mutex_lock(&rp->mu);
    rp->total++;
    long place = -1, i = -1;
    if (len == sizeof r) {
        memcpy(&r, buf, sizeof r);
        for (long p = 0; p < rp->cfg->n; p++)
            if (rp->cfg->ids[p] == vt)
                place = p;
        i = place == r.place ? s_rep_index(rp->cfg, r.round) : -1;
    }
    if (place >= 0 && i >= 0)
        rp->count[place][i]++;
    else
        rp->strays++;
    pthread_mutex_unlock(&rp->mu);
}

/* Reports missing and duplicated so far. */
static void s_reps_tally(reps *rp, long *missing, long *dups)
{
    long want = s_reps_expected(rp->cfg);
    *missing = *dups = 0;
    pthread_mutex_lock(&rp->mu);
    for (long p = 0; p < rp->cfg->n; p++)
        for (long i = 0; i < want && i < MAXREP; i++) {
            if (rp->count[p][i] == 0)
                (*missing)++;
            else if (rp->count[p][i] > 1)
                *dups += rp->count[p][i] - 1;
        }
    pthread_mutex_unlock(&rp->mu);
}

typedef struct totals {
    long jobs, ok, tokens, tokens_want, dups, lost, reports, reports_want, rep_dups, rep_lost;
} totals;

/* One ring on the peer at ep; prints its line; true if it is exact. */
static bool s_job(long job, const char *ep, const cr_cfg *proto, int workers, int ckpt,
                  double timeout, totals *t)
{
    double t0 = s_now();
    cr_cfg cfg = *proto;
    static reps rp; /* (large: not on the stack) */
    memset(&rp.count, 0, sizeof rp.count);
    rp.total = rp.strays = 0;
    rp.cfg = &cfg;
    pthread_mutex_init(&rp.mu, NULL);
    char why[256] = "";
    lev_vc *vc = NULL;
    lev_vc_options o = {.workers = workers, .checkpoint_ms = ckpt, .peer = ep};
    int rc = lev_vc_open(&vc, &o);
    if (rc)
        snprintf(why, sizeof why, "lev_vc_open: %s: %s", lev_strerror(rc), lev_errdetail());
    if (!rc)
        lev_vc_on_report(vc, s_on_report, &rp);
    long started = 0;
    for (long i = 0; !rc && i < cfg.n; i++, started++)
        if ((rc = lev_vt_start(vc, "chaos_ring", NULL, 0, &cfg.ids[i])))
            snprintf(why, sizeof why, "lev_vt_start: %s: %s", lev_strerror(rc), lev_errdetail());
    for (long i = 0; !rc && i < cfg.n; i++) {
        cr_cfg c = cfg;
        c.me = i;
        if ((rc = lev_vt_send(vc, cfg.ids[i], &c, sizeof c)))
            snprintf(why, sizeof why, "lev_vt_send: %s: %s", lev_strerror(rc), lev_errdetail());
    }
    long tokens = 0, dups = 0, gaps = 0, badv = 0, wrong = 0, unjoined = 0;
    for (long i = 0; i < started; i++) {
        if (rc) { /* the job is lost already: its VTs are not waited for */
            unjoined++;
            continue;
        }
        int left = (int)((t0 + timeout - s_now()) * 1000);
        void *res = NULL;
        size_t len = 0;
        int jr = lev_vt_join(vc, cfg.ids[i], &res, &len, left > 0 ? left : 0);
        cr_result r;
        if (jr || len != sizeof r) {
            if (!*why)
                snprintf(why, sizeof why, "VT at place %ld: %s: %s", i,
                         jr ? lev_strerror(jr) : "a result of another size",
                         jr ? lev_errdetail() : "");
            unjoined++;
            if (jr == LEV_ETIMEDOUT || jr == LEV_EPEER)
                rc = jr; /* the others are not waited for */
            free(res);
            continue;
        }
        memcpy(&r, res, sizeof r);
        free(res);
        tokens += r.received;
        dups += r.dups;
        gaps += r.gaps;
        badv += r.bad;
        bool exact = r.received == cfg.rounds && r.last == cr_value(cfg.n, cfg.rounds - 1, i) &&
                     r.sum == cr_sum(cfg.n, cfg.rounds, i) && !r.dups && !r.gaps && !r.bad &&
                     !r.err;
        if (!exact) {
            wrong++;
            if (!*why)
                snprintf(why, sizeof why,
                         "VT at place %ld: %ld tokens, last %ld, sum %s, %ld duplicated, %ld "
                         "skipped, %ld damaged, error %d in round %d",
                         i, r.received, r.last,
                         r.sum == cr_sum(cfg.n, cfg.rounds, i) ? "right" : "WRONG", r.dups, r.gaps,
                         r.bad, r.err, r.err_round);
        }
    }
    /* every report of a VT comes before its end; a lost VC gets none more */
    long rmiss = 0, rdup = 0, rwant = s_reps_expected(&cfg) * cfg.n;
    s_reps_tally(&rp, &rmiss, &rdup);
    lev_vc_stats st;
    memset(&st, 0, sizeof st);
    if (vc)
        lev_vc_stats_get(vc, &st);
    lev_vc_close(&vc);
    long want = cfg.rounds * cfg.n;
    bool ok = !rc && !unjoined && !wrong && !rmiss && !rdup && !rp.strays && tokens == want;
    if (!*why && !ok)
        snprintf(why, sizeof why, "%ld reports missing, %ld duplicated, %ld strays", rmiss, rdup,
                 rp.strays);
    t->jobs++;
    t->ok += ok;
    t->tokens += tokens;
    t->tokens_want += want;
    t->dups += dups;
    t->lost += want - tokens;
    t->reports += rp.total;
    t->reports_want += rwant;
    t->rep_dups += rdup;
    t->rep_lost += rmiss;
    printf("ring job %ld on %s: %s: %ld VTs x %ld rounds, tokens %ld/%ld, duplicated %ld, skipped "
           "%ld, damaged %ld; reports %ld/%ld, duplicated %ld, missing %ld; %" PRIu64
           " checkpoints, %" PRIu64 " resumes, %" PRIu64 " restarts, %" PRIu64
           " peers lost; %.1f s%s%s\n",
           job, ep, ok ? "ok" : "FAILED", cfg.n, cfg.rounds, tokens, want, dups, gaps, badv,
           rp.total, rwant, rdup, rmiss, st.checkpoints, st.resumes, st.restarts, st.lost_peers,
           s_now() - t0, ok ? "" : ": ", ok ? "" : why);
    fflush(stdout);
    pthread_mutex_destroy(&rp.mu);
    return ok;
}

static void s_usage(void)
{
    fprintf(stderr, "usage: chaos_ring [--seconds S] [--max-jobs N] [--peer EP]... [--vts N] "
                    "[--rounds R] [--words W] [--report-every K] [--workers Q] "
                    "[--checkpoint-ms MS] [--job-timeout S] [--stop-file FILE]\n");
    exit(2);
}

static long s_num(const char *s, long lo, long hi)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi)
        s_usage();
    return v;
}

int main(int argc, char **argv)
{
    double seconds = 60, timeout = 300;
    long max_jobs = 1000, workers = 0, ckpt = 0;
    const char *peers[MAXPEERS], *stop = NULL;
    int np = 0;
    cr_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.n = 6;
    cfg.rounds = 400;
    cfg.words = 16;
    cfg.report_every = 20;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            s_usage();
        i++;
        if (!strcmp(a, "--seconds"))
            seconds = (double)s_num(v, 0, 1000000);
        else if (!strcmp(a, "--max-jobs"))
            max_jobs = s_num(v, 1, 1000000);
        else if (!strcmp(a, "--peer") && np < MAXPEERS)
            peers[np++] = v;
        else if (!strcmp(a, "--vts"))
            cfg.n = s_num(v, 2, CR_MAXVT);
        else if (!strcmp(a, "--rounds"))
            cfg.rounds = s_num(v, 1, 1000000);
        else if (!strcmp(a, "--words"))
            cfg.words = s_num(v, 0, CR_MAXWORDS);
        else if (!strcmp(a, "--report-every"))
            cfg.report_every = s_num(v, 1, 1000000);
        else if (!strcmp(a, "--workers"))
            workers = s_num(v, 0, 1000);
        else if (!strcmp(a, "--checkpoint-ms"))
            ckpt = s_num(v, 0, 3600000);
        else if (!strcmp(a, "--job-timeout"))
            timeout = (double)s_num(v, 1, 86400);
        else if (!strcmp(a, "--stop-file"))
            stop = v;
        else
            s_usage();
    }
    if (s_reps_expected(&cfg) > MAXREP) {
        fprintf(stderr, "chaos_ring: at most %d reports per VT: raise --report-every\n", MAXREP);
        return 2;
    }
    if (!np) {
        const char *e = getenv("LEV_PEER");
        if (!e || !*e) {
            fprintf(stderr, "chaos_ring: no peer: give --peer EP or set LEV_PEER\n");
            return 2;
        }
        peers[np++] = e;
    }
    totals t;
    memset(&t, 0, sizeof t);
    double t0 = s_now();
    for (long j = 0; j < max_jobs && s_now() - t0 < seconds; j++) {
        if (stop && access(stop, F_OK) == 0)
            break;
        s_job(j + 1, peers[j % np], &cfg, (int)workers, (int)ckpt, timeout, &t);
    }
    printf("ring: %ld jobs, %ld exact, %ld failed; tokens %ld/%ld, duplicated %ld, lost %ld; "
           "reports %ld/%ld, duplicated %ld, lost %ld\n",
           t.jobs, t.ok, t.jobs - t.ok, t.tokens, t.tokens_want, t.dups, t.lost, t.reports,
           t.reports_want, t.rep_dups, t.rep_lost);
    return t.ok == t.jobs ? 0 : 1;
}
