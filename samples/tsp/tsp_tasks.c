/* tsp_tasks.c - the task of lev-tsp: a VT that runs units of the island
 * genetic algorithm (tsp_job.h) while any is left. It claims each unit
 * from the schedule (global variable tsp.sched, tsp_tasks.h), reads the
 * island's state and its migrant from global variables, runs the epoch
 * (ga.c, made mobile by levpp with this file) and commits the new state
 * and its migrant with versioned puts, which do not wait. It also sends
 * the migrant to the other VTs (tsp_tasks.h): the one that runs the unit
 * that needs it then need not read it. While many units are left it may
 * claim two at a lock and run the second without taking the lock again
 * (tsp_sched.h decides). Which VT runs which unit, and when, does not
 * change the result.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga.h"
#include "lev_task.h"
#include "tsp_job.h"
#include "tsp_sched.h"
#include "tsp_tasks.h"

/* A migrant a VT has: one it made, or one sent to it (tsp_mig_msg). */
typedef struct tsp_mig {
    int32_t island, epoch; /* epoch -1: none */
    int32_t *tour;
} tsp_mig;
#define TSP_MIGS_PER_ISLAND 4 /* a VT keeps up to this many per island on average */

/* An island's state a VT keeps after it moved to another island: if it
 * comes back before anyone else ran that island, it need not read it. */
typedef struct tsp_kept {
    int32_t island, epochs; /* epochs -1: none */
    void *state;            /* sbytes, or NULL until first used */
} tsp_kept;
#define TSP_STATES_KEPT 4

/* What a VT did with its last unit, for the schedule. */
typedef struct tsp_done {
    int32_t island, epoch; /* island -1: nothing to commit */
    int64_t best;          /* its island's best length after it */
    int32_t *tour;         /* a copy of its migrant (n int32), to send */
} tsp_done;

/* What one VT knows while it works. */
typedef struct tsp_vt {
    const tsp_job *job;
    ga_world *w;
    uint64_t self;
    size_t sbytes; /* bytes of an island's state */
    void *state;   /* the island of the current unit */
    int32_t *best; /* its best tour after the unit */
    int32_t held;  /* the island in state (after held_epoch epochs); -1 none */
    int32_t held_epoch;
    tsp_mig *migs; /* the migrants it has (islands x TSP_MIGS_PER_ISLAND) */
    int32_t nmigs;
    tsp_kept kept[TSP_STATES_KEPT];
    tsp_claim ahead;  /* a second unit claimed at the last lock (island -1: none) */
    tsp_done pend[2]; /* units run since the last lock, marked done at the next */
    int32_t npend;
    tsp_result res;
} tsp_vt;

/* Sets the VT's error (the first one stays). */
static void s_fail(tsp_vt *v, int err, const char *what, int32_t island, int32_t epoch)
{
    if (v->res.err)
        return;
    v->res.err = err;
    snprintf(v->res.why, sizeof v->res.why, "unit (%d, %d): %s", (int)island, (int)epoch, what);
}

/* What v has of islands' states, for the schedule: the held one first,
 * then the kept ones. */
static tsp_asker s_asker(const tsp_vt *v, int32_t me, tsp_have have[1 + TSP_STATES_KEPT])
{
    int32_t n = 0;
    if (v->held >= 0)
        have[n++] = (tsp_have){v->held, v->held_epoch};
    for (int j = 0; j < TSP_STATES_KEPT; j++)
        if (v->kept[j].island >= 0 && v->kept[j].state)
            have[n++] = (tsp_have){v->kept[j].island, v->kept[j].epochs};
    return (tsp_asker){.self = v->self, .me = me, .held = v->held, .have = have, .nhave = n};
}

/* Reads global variable `name` and checks it holds `want` bytes; returns
 * the heap copy, or NULL with the VT's error set. */
static void *s_read(tsp_vt *v, const char *name, size_t want, int32_t island, int32_t epoch)
{
    void *val = NULL;
    size_t len = 0;
    int rc = lev_global_read(name, &val, &len);
    if (rc || !val || len != want) {
        char what[96];
        snprintf(what, sizeof what, "%s is %s", name,
                 rc     ? "unreadable"
                 : !val ? "missing"
                        : "of the wrong size");
        s_fail(v, rc ? rc : -1, what, island, epoch);
        free(val);
        return NULL;
    }
    return val;
}

/* Returns 1 if tour[n] is a permutation of 0..n-1. */
static int s_is_tour(const int32_t *tour, int32_t n)
{
    unsigned char *seen = calloc((size_t)n, 1);
    int ok = seen != NULL;
    for (int32_t i = 0; ok && i < n; i++) {
        ok = tour[i] >= 0 && tour[i] < n && !seen[tour[i]];
        if (ok)
            seen[tour[i]] = 1;
    }
    free(seen);
    return ok;
}

/* The kept migrant of (island, epoch), or NULL. */
static tsp_mig *s_mig_find(tsp_vt *v, int32_t island, int32_t epoch)
{
    for (int32_t i = 0; i < v->nmigs; i++)
        if (v->migs[i].epoch == epoch && v->migs[i].island == island)
            return &v->migs[i];
    return NULL;
}

/* Keeps tour (n int32) as island's migrant of `epoch`, in place of the
 * one of the lowest epoch when full (the units of low epochs are done or
 * will read their migrant). */
static void s_mig_keep(tsp_vt *v, int32_t island, int32_t epoch, const int32_t *tour)
{
    if (s_mig_find(v, island, epoch))
        return;
    tsp_mig *m = &v->migs[0];
    for (int32_t i = 1; i < v->nmigs; i++)
        if (v->migs[i].epoch < m->epoch)
            m = &v->migs[i];
    if (m->epoch >= epoch)
        return;
    if (!m->tour && !(m->tour = malloc((size_t)v->job->n * sizeof *m->tour)))
        return; /* (the unit reads the global instead) */
    memcpy(m->tour, tour, (size_t)v->job->n * sizeof *m->tour);
    m->island = island;
    m->epoch = epoch;
}

/* A message received: a migrant (tsp_mig_msg) is kept; a wake is not.
 * Whether it was a migrant. */
static int s_mig_msg(tsp_vt *v, const void *buf, size_t len)
{
    tsp_mig_msg h;
    size_t tour = (size_t)v->job->n * sizeof(int32_t);
    if (len != sizeof h + tour)
        return 0;
    memcpy(&h, buf, sizeof h);
    if (h.island < 0 || h.island >= v->job->islands || h.epoch < 0 || h.epoch >= v->job->epochs)
        return 0;
    s_mig_keep(v, h.island, h.epoch, (const int32_t *)((const char *)buf + sizeof h));
    return 1;
}

/* A heap copy of island's migrant of `epoch` if this VT has it; NULL. */
static int32_t *s_mig_copy(tsp_vt *v, int32_t island, int32_t epoch)
{
    tsp_mig *m = s_mig_find(v, island, epoch);
    if (!m || !m->tour)
        return NULL;
    int32_t *t = malloc((size_t)v->job->n * sizeof *t);
    if (t)
        memcpy(t, m->tour, (size_t)v->job->n * sizeof *t);
    return t;
}

/* Receives from VT `from`, which sent it island's migrant of `epoch`,
 * until that migrant comes (keeping the others, skipping wakes); NULL
 * if `from` ended or failed first (the unit then reads the global). */
static int32_t *s_mig_recv(tsp_vt *v, uint64_t from, int32_t island, int32_t epoch)
{
    for (int i = 0; i < 4 * TSP_WAITERS_MAX; i++) {
        uint64_t f = from;
        void *buf = NULL;
        size_t len = 0;
        int rc = lev_recv(&f, &buf, &len, -1);
        if (!rc)
            s_mig_msg(v, buf, len);
        free(buf);
        if (rc)
            return NULL;
        int32_t *t = s_mig_copy(v, island, epoch);
        if (t)
            return t;
    }
    return NULL;
}

/* Sends tour, island's migrant of `epoch`, to VT `to` (tsp_mig_msg). A
 * failed send changes nothing but a wait: the receiver reads the global
 * once this VT has ended. */
static void s_mig_send(tsp_vt *v, uint64_t to, int32_t island, int32_t epoch, const int32_t *tour)
{
    size_t n = (size_t)v->job->n * sizeof *tour;
    tsp_mig_msg h = {island, epoch};
    char *buf = malloc(sizeof h + n);
    if (!buf)
        return;
    memcpy(buf, &h, sizeof h);
    memcpy(buf + sizeof h, tour, n);
    lev_send(to, buf, sizeof h + n);
    free(buf);
}

/* Before v->state takes another island: keeps the one it holds (in place
 * of the one of `island` or, else, of the fewest epochs) and takes
 * island's state after `epoch` epochs if it was kept. 1 if it was; 0. */
static int s_swap_state(tsp_vt *v, int32_t island, int32_t epoch)
{
    tsp_kept *slot = NULL, *hit = NULL;
    for (int j = 0; j < TSP_STATES_KEPT; j++) {
        tsp_kept *e = &v->kept[j];
        if (e->island == island && e->epochs == epoch)
            hit = e;
        else if (!slot || e->epochs < slot->epochs)
            slot = e;
    }
    if (hit) { /* the two trade places */
        void *cur = v->state;
        v->state = hit->state;
        hit->state = cur;
        hit->island = v->held;
        hit->epochs = v->held >= 0 ? v->held_epoch : -1;
        return 1;
    }
    if (v->held < 0 || !slot)
        return 0;
    if (!slot->state && !(slot->state = malloc(v->sbytes)))
        return 0; /* (it is read again if needed) */
    void *cur = v->state;
    v->state = slot->state;
    slot->state = cur;
    slot->island = v->held;
    slot->epochs = v->held_epoch;
    return 0;
}

/* Loads v->state with island's state before `epoch`. Returns 1, 0 when
 * the island is already past that epoch (a backup committed it), or -1. */
static int s_load_island(tsp_vt *v, int32_t island, int32_t epoch)
{
    if (island == v->held && epoch == v->held_epoch)
        return 1; /* this VT ran the island's last epoch: it has its state */
    int kept = s_swap_state(v, island, epoch);
    v->held = -1; /* v->state is being replaced */
    if (kept) {
        v->held = island;
        v->held_epoch = epoch;
        return 1;
    }
    if (epoch == 0) {
        ga_island_init(v->w, v->state, v->job->seed, island);
        return 1;
    }
    char name[48];
    snprintf(name, sizeof name, "tsp.isl.%d", (int)island);
    void *val = s_read(v, name, v->sbytes, island, epoch);
    if (!val)
        return -1;
    v->res.isl_reads++;
    const char *why = NULL;
    int r = 1;
    if (ga_island_check(v->w, val, v->sbytes, &why) != 0) {
        s_fail(v, -1, why, island, epoch);
        r = -1;
    } else if (ga_island_epochs(val) > epoch) {
        r = 0;
    } else if (ga_island_epochs(val) < epoch) {
        s_fail(v, -1, "the island's state is older than the schedule says", island, epoch);
        r = -1;
    } else {
        memcpy(v->state, val, v->sbytes);
        v->held = island;
        v->held_epoch = epoch;
    }
    free(val);
    return r;
}

/* Runs unit (island, epoch) on v->state: its migrant, then the epoch.
 * The migrant is one this VT has, or the one VT mig_from sent it (0:
 * none sent), or else read from its global variable. 0, or -1 with the
 * VT's error set. */
static int s_run_unit(tsp_vt *v, int32_t island, int32_t epoch, uint64_t mig_from)
{
    int32_t k = v->job->islands, n = v->job->n;
    int32_t *mig = NULL;
    if (epoch > 0) { /* (one island is its own neighbour) */
        int32_t src = (island + k - 1) % k;
        mig = s_mig_copy(v, src, epoch - 1);
        if (!mig && mig_from)
            mig = s_mig_recv(v, mig_from, src, epoch - 1);
        if (!mig) {
            char name[48];
            snprintf(name, sizeof name, "tsp.mig.%d.%d", (int)src, (int)(epoch - 1));
            mig = s_read(v, name, (size_t)n * sizeof *mig, island, epoch);
            if (!mig)
                return -1;
            v->res.mig_reads++;
        }
        if (!s_is_tour(mig, n)) {
            s_fail(v, -1, "the migrant is not a tour", island, epoch);
            free(mig);
            return -1;
        }
    }
    ga_island_epoch(v->w, v->state, mig);
    free(mig);
    return 0;
}

/* Commits value[len] to global variable `name` with a versioned put,
 * which does not wait: a migrant (written once: version 1) or an island's
 * state (version: its epochs), so the other copy of a backed-up unit, and
 * a slow copy after a later epoch, change nothing. The VT's next lock of
 * the schedule reaches the deployer after it. 0 or -1. */
static int s_commit_var(tsp_vt *v, const char *name, const void *value, size_t len,
                        uint64_t version, int32_t island, int32_t epoch)
{
    int rc = lev_global_put(name, value, len, version);
    if (rc) {
        s_fail(v, rc, "cannot commit a variable", island, epoch);
        return -1;
    }
    return 0;
}

/* One step of the schedule, under its lock: marks the units the VT ran
 * since its last lock done (those it is the first to commit), then picks
 * its next unit (tsp_sched_pick) and, when it may, a second one to run
 * after it without the lock (tsp_sched_pick_ahead, kept in v->ahead).
 * After the unlock it reports progress, sends the migrants of the units
 * it marked, and wakes the VTs that waited for units. Returns the
 * TSP_PICK_ kind with *c set for a unit, or -1 with the VT's error set. */
static int s_sched(tsp_vt *v, int stuck, tsp_claim *c)
{
    tsp_done none = {-1, -1, -1, NULL};
    const tsp_done *d = v->npend ? &v->pend[0] : &none; /* (for the errors' text) */
    void *val = NULL;
    size_t len = 0;
    int rc = lev_global_lock(TSP_SCHED_VAR, &val, &len);
    if (rc) {
        s_fail(v, rc, "cannot lock the schedule", d->island, d->epoch);
        free(val);
        return -1;
    }
    tsp_sched *s = val;
    const char *bad = tsp_sched_bad(s, len, v->job->islands, v->job->epochs);
    if (bad) {
        s_fail(v, -1, bad, d->island, d->epoch);
        lev_global_unlock(TSP_SCHED_VAR, NULL, 0);
        free(val);
        return -1;
    }
    tsp_have have[1 + TSP_STATES_KEPT];
    tsp_asker a = s_asker(v, tsp_sched_join(s, v->self), have);
    tsp_done first[2];
    tsp_progress p[2];
    int32_t nfirst = 0;
    for (int32_t i = 0; i < v->npend; i++) {
        const tsp_done *u = &v->pend[i];
        if (!tsp_sched_done(s, &a, u->island, u->epoch, u->best)) {
            free(u->tour);
            continue;
        }
        first[nfirst] = *u;
        p[nfirst++] = (tsp_progress){
            s->units_done, (int64_t)s->islands * s->epochs, s->best, u->island, u->epoch, u->best};
    }
    v->npend = 0;
    /* its migrants, to the others: whichever runs the unit that needs one
     * has it */
    uint64_t mig_to[TSP_WAITERS_MAX];
    int32_t nmig = 0;
    if (nfirst && s->islands > 1 && a.me >= 0)
        for (int32_t i = 0; i < s->nvts; i++)
            if (s->vts[i] != v->self)
                mig_to[nmig++] = s->vts[i];
    uint64_t wake[TSP_WAITERS_MAX];
    int32_t nwake = nfirst ? s->nwait : 0;
    memcpy(wake, s->waiters, (size_t)nwake * sizeof wake[0]);
    if (nfirst)
        s->nwait = 0;
    int kind = tsp_sched_pick(s, &a, stuck, c);
    v->ahead.island = -1;
    if (kind == TSP_PICK_UNIT && tsp_sched_pick_ahead(s, &a, c, &v->ahead))
        v->res.ahead++;
    rc = lev_global_unlock(TSP_SCHED_VAR, s, len);
    free(val);
    if (rc) {
        s_fail(v, rc, "cannot update the schedule", d->island, d->epoch);
        for (int32_t f = 0; f < nfirst; f++)
            free(first[f].tour);
        return -1;
    }
    for (int32_t f = 0; f < nfirst; f++) {
        v->res.units++;
        lev_report(&p[f], sizeof p[f]);
        /* (the last epoch's migrant no unit needs) */
        for (int32_t i = 0; first[f].epoch + 1 < v->job->epochs && i < nmig; i++)
            s_mig_send(v, mig_to[i], first[f].island, first[f].epoch, first[f].tour);
        free(first[f].tour);
    }
    for (int32_t i = 0; i < nwake; i++)
        if (wake[i] != v->self)
            lev_send(wake[i], "w", 1);
    return kind;
}

/* Waits for a wake message or TSP_WAIT_MS, keeping the migrants that
 * come meanwhile (each starts the wait again); returns 1 if no wake came. */
static int s_wait(tsp_vt *v)
{
    for (int i = 0; i < 4 * TSP_WAITERS_MAX; i++) {
        uint64_t from = LEV_ANY;
        void *buf = NULL;
        size_t len = 0;
        int rc = lev_recv(&from, &buf, &len, TSP_WAIT_MS);
        int mig = !rc && s_mig_msg(v, buf, len);
        free(buf);
        if (!mig)
            return rc == LEV_ETIMEDOUT;
    }
    return 0;
}

/* Runs one claimed unit from its island's state to the commit of the
 * state and the migrant; d says what to mark done in the schedule (island
 * -1 when the other copy of the unit had committed it already), with a
 * copy of the migrant to send. 0 or -1. */
static int s_unit(tsp_vt *v, int32_t island, int32_t epoch, uint64_t mig_from, tsp_done *d)
{
    d->island = -1;
    int r = s_load_island(v, island, epoch);
    if (r <= 0)
        return r;
    if (s_run_unit(v, island, epoch, mig_from))
        return -1;
    v->held = island;
    v->held_epoch = epoch + 1;
    int64_t best = ga_island_best(v->w, v->state, v->best);
    s_mig_keep(v, island, epoch, v->best); /* for when it runs the next island's unit */
    char name[48];
    snprintf(name, sizeof name, "tsp.isl.%d", (int)island);
    if (s_commit_var(v, name, v->state, v->sbytes, (uint64_t)ga_island_epochs(v->state), island,
                     epoch))
        return -1;
    snprintf(name, sizeof name, "tsp.mig.%d.%d", (int)island, (int)epoch);
    if (s_commit_var(v, name, v->best, (size_t)v->job->n * sizeof *v->best, 1, island, epoch))
        return -1;
    int32_t *tour = malloc((size_t)v->job->n * sizeof *tour);
    if (!tour) {
        s_fail(v, -1, "out of memory for the migrant", island, epoch);
        return -1;
    }
    memcpy(tour, v->best, (size_t)v->job->n * sizeof *tour);
    *d = (tsp_done){island, epoch, best, tour};
    return 0;
}

/* The task: arg is the job (tsp_job.h). Runs units until none is left,
 * then returns its tsp_result. */
LEV_TASK void tsp_worker(const void *arg, size_t len)
{
    tsp_vt v;
    memset(&v, 0, sizeof v);
    const double *xy = NULL;
    const char *why = NULL;
    if (tsp_job_check(arg, len, &xy, &why) != 0) {
        s_fail(&v, -1, why, -1, -1);
        lev_return(&v.res, sizeof v.res);
        return;
    }
    v.job = arg;
    v.self = lev_self();
    v.held = -1;
    v.w = ga_world_new(v.job->n, v.job->metric, xy, &v.job->ga);
    if (v.w) {
        v.sbytes = ga_island_bytes(v.w);
        v.state = malloc(v.sbytes);
        v.best = malloc((size_t)v.job->n * sizeof *v.best);
        for (int j = 0; j < TSP_STATES_KEPT; j++)
            v.kept[j] = (tsp_kept){-1, -1, NULL};
        v.nmigs = v.job->islands * TSP_MIGS_PER_ISLAND;
        v.migs = calloc((size_t)v.nmigs, sizeof *v.migs);
        for (int32_t i = 0; v.migs && i < v.nmigs; i++)
            v.migs[i].epoch = -1;
    }
    if (!v.w || !v.state || !v.best || !v.migs) {
        s_fail(&v, -1, "out of memory for the island", -1, -1);
    } else {
        int stuck = 0;
        v.ahead.island = -1;
        for (;;) {
            tsp_claim c = v.ahead;
            int kind = TSP_PICK_UNIT;
            if (c.island >= 0) { /* claimed with the last unit: no lock */
                v.ahead.island = -1;
            } else {
                kind = s_sched(&v, stuck, &c);
                stuck = 0;
            }
            if (kind < 0 || kind == TSP_PICK_DONE)
                break;
            if (kind == TSP_PICK_WAIT) {
                stuck = s_wait(&v);
                continue;
            }
            if (kind == TSP_PICK_BACKUP)
                v.res.backups++;
            tsp_done d;
            if (s_unit(&v, c.island, c.epoch, c.mig_from, &d) < 0)
                break;
            if (d.island >= 0)
                v.pend[v.npend++] = d;
        }
    }
    for (int32_t i = 0; i < v.npend; i++)
        free(v.pend[i].tour);
    for (int32_t i = 0; v.migs && i < v.nmigs; i++)
        free(v.migs[i].tour);
    for (int j = 0; j < TSP_STATES_KEPT; j++)
        free(v.kept[j].state);
    free(v.migs);
    free(v.state);
    free(v.best);
    ga_world_destroy(&v.w);
    lev_return(&v.res, sizeof v.res);
}
