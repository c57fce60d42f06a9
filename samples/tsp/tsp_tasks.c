/* tsp_tasks.c - the task of lev-tsp: a VT that runs units of the island
 * genetic algorithm (tsp_job.h) while any is left. It claims each unit
 * from the schedule (global variable tsp.sched, tsp_tasks.h), reads the
 * island's state and its migrant from global variables, runs the epoch
 * (ga.c, made mobile by levpp with this file) and commits the new state
 * and its migrant with versioned puts, which do not wait. It also sends
 * the migrant to the other VTs (tsp_tasks.h): the one that runs the unit
 * that needs it then need not read it.
 * Which VT runs which unit, and when, does not change the result.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga.h"
#include "lev_task.h"
#include "tsp_job.h"
#include "tsp_tasks.h"

enum { PICK_UNIT, PICK_BACKUP, PICK_WAIT, PICK_DONE };

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
    tsp_result res;
} tsp_vt;

static tsp_slot *s_slots(tsp_sched *s) { return (tsp_slot *)(s + 1); }

static size_t s_sched_bytes(int32_t islands)
{
    return sizeof(tsp_sched) + (size_t)islands * sizeof(tsp_slot);
}

/* Sets the VT's error (the first one stays). */
static void s_fail(tsp_vt *v, int err, const char *what, int32_t island, int32_t epoch)
{
    if (v->res.err)
        return;
    v->res.err = err;
    snprintf(v->res.why, sizeof v->res.why, "unit (%d, %d): %s", (int)island, (int)epoch, what);
}

/* Checks that the schedule s[len] fits this job; NULL or why not. */
static const char *s_sched_bad(const tsp_sched *s, size_t len, const tsp_job *j)
{
    if (!s || len < sizeof *s || s->magic != TSP_SCHED_MAGIC)
        return "the schedule (tsp.sched) is missing or damaged";
    if (s->islands != j->islands || s->epochs != j->epochs || len != s_sched_bytes(j->islands))
        return "the schedule (tsp.sched) does not match the job";
    if (s->nwait < 0 || s->nwait > TSP_WAITERS_MAX || s->nvts < 0 || s->nvts > TSP_WAITERS_MAX)
        return "the schedule's lists of VTs are damaged";
    return NULL;
}

/* Whether VT v has island i's state after `epochs` epochs: the one it
 * holds, or one it kept. */
static int s_has_state(const tsp_vt *v, int32_t i, int32_t epochs)
{
    if (i == v->held && epochs == v->held_epoch)
        return 1;
    for (int j = 0; j < TSP_STATES_KEPT; j++)
        if (v->kept[j].island == i && v->kept[j].epochs == epochs)
            return 1;
    return 0;
}

/* Chooses the next unit for VT v in the locked schedule s and claims it:
 * PICK_UNIT or PICK_BACKUP with *island set, PICK_WAIT (registered as a
 * waiter when there is room) or PICK_DONE. The next unit of the island
 * the VT holds comes first when it is ready, then a ready unit whose
 * island's state the VT kept (no need to read it) unless its epoch is
 * more than one above the lowest ready one, then the ready unit of the
 * lowest epoch. `stuck`: no wake came during the last wait, so a claimed
 * unit may be backed up before the end. */
static int s_pick(tsp_sched *s, const tsp_vt *v, int stuck, int32_t *island)
{
    tsp_slot *sl = s_slots(s);
    uint64_t me = v->self;
    int32_t k = s->islands, pick = -1, open = 0, mine = -1, kept = -1;
    for (int32_t i = 0; i < k; i++) {
        if (sl[i].done >= s->epochs)
            continue;
        if (sl[i].owner)
            continue;
        open++;
        int32_t prev = (i + k - 1) % k;
        if (sl[i].done > 0 && k > 1 && sl[prev].done < sl[i].done)
            continue; /* not ready: its migrant does not exist yet */
        if (i == v->held)
            mine = i;
        else if (s_has_state(v, i, sl[i].done) && (kept < 0 || sl[i].done < sl[kept].done))
            kept = i;
        if (pick < 0 || sl[i].done < sl[pick].done)
            pick = i;
    }
    if (mine >= 0)
        pick = mine;
    else if (kept >= 0 && sl[kept].done <= sl[pick].done + 1)
        pick = kept;
    if (pick >= 0) {
        sl[pick].owner = me;
        sl[pick].backup = 0;
        sl[pick].claimed = ++s->claims;
        *island = pick;
        return PICK_UNIT;
    }
    if (open == 0 || stuck) {
        for (int32_t i = 0; i < k; i++)
            if (sl[i].done < s->epochs && sl[i].owner && sl[i].owner != me && !sl[i].backup &&
                (pick < 0 || sl[i].claimed < sl[pick].claimed))
                pick = i;
        if (pick >= 0) {
            sl[pick].backup = me;
            s->backups++;
            *island = pick;
            return PICK_BACKUP;
        }
    }
    if (open == 0)
        return PICK_DONE; /* every unit left runs, backed up: nothing to add */
    int known = 0;
    for (int32_t i = 0; i < s->nwait; i++)
        known |= s->waiters[i] == me;
    if (!known && s->nwait < TSP_WAITERS_MAX)
        s->waiters[s->nwait++] = me;
    return PICK_WAIT;
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

/* What a VT did with its last unit, for the schedule. */
typedef struct tsp_done {
    int32_t island, epoch; /* island -1: nothing to commit */
    int64_t best;          /* its island's best length after it */
} tsp_done;

/* One step of the schedule, under its lock: marks unit d done if this VT
 * is the first to commit it, then picks the VT's next unit (s_pick), whose
 * epoch goes to *epoch. After the unlock it reports progress and wakes the
 * VTs that waited for units. Returns the PICK_ kind, or -1 with the VT's
 * error set. */
static int s_sched(tsp_vt *v, const tsp_done *d, int stuck, int32_t *island, int32_t *epoch,
                   uint64_t *mig_from)
{
    void *val = NULL;
    size_t len = 0;
    int rc = lev_global_lock(TSP_SCHED_VAR, &val, &len);
    if (rc) {
        s_fail(v, rc, "cannot lock the schedule", d->island, d->epoch);
        free(val);
        return -1;
    }
    tsp_sched *s = val;
    const char *bad = s_sched_bad(s, len, v->job);
    if (bad) {
        s_fail(v, -1, bad, d->island, d->epoch);
        lev_global_unlock(TSP_SCHED_VAR, NULL, 0);
        free(val);
        return -1;
    }
    int me = -1; /* this VT's place in s->vts */
    for (int32_t i = 0; i < s->nvts; i++)
        if (s->vts[i] == v->self)
            me = i;
    if (me < 0 && s->nvts < TSP_WAITERS_MAX) {
        me = s->nvts;
        s->vts[s->nvts++] = v->self;
    }
    int first = 0;
    uint64_t mig_to[TSP_WAITERS_MAX];
    int32_t nmig = 0;
    if (d->island >= 0) {
        tsp_slot *sl = &s_slots(s)[d->island];
        first = sl->done == d->epoch;
        if (first) {
            sl->done = d->epoch + 1;
            sl->owner = sl->backup = 0;
            /* its migrant, to the others: whichever runs the unit that
             * needs it has it */
            tsp_slot *c = &s_slots(s)[(d->island + 1) % s->islands];
            if (s->islands > 1 && d->epoch + 1 < s->epochs && me >= 0) {
                c->sent[d->epoch % TSP_MIG_SENT] =
                    (tsp_sent){.from = v->self, .epoch = d->epoch, .sent = s->nvts};
                for (int32_t i = 0; i < s->nvts; i++)
                    if (s->vts[i] != v->self)
                        mig_to[nmig++] = s->vts[i];
            }
            s->units_done++;
            if (s->best < 0 || d->best < s->best) {
                s->best = d->best;
                s->best_island = d->island;
                s->best_epoch = d->epoch;
            }
        }
    }
    uint64_t wake[TSP_WAITERS_MAX];
    int32_t nwake = first ? s->nwait : 0;
    memcpy(wake, s->waiters, (size_t)nwake * sizeof wake[0]);
    if (first)
        s->nwait = 0;
    tsp_progress p = {s->units_done, (int64_t)s->islands * s->epochs, s->best, d->island, d->epoch,
                      d->best};
    int kind = s_pick(s, v, stuck, island);
    *mig_from = 0;
    if (kind == PICK_UNIT || kind == PICK_BACKUP) {
        const tsp_slot *u = &s_slots(s)[*island];
        *epoch = u->done;
        const tsp_sent *m = &u->sent[(u->done + TSP_MIG_SENT - 1) % TSP_MIG_SENT];
        if (u->done > 0 && m->from && m->from != v->self && m->epoch == u->done - 1 && me >= 0 &&
            me < m->sent)
            *mig_from = m->from; /* (its own it keeps) */
    }
    rc = lev_global_unlock(TSP_SCHED_VAR, s, len);
    free(val);
    if (rc) {
        s_fail(v, rc, "cannot update the schedule", d->island, d->epoch);
        return -1;
    }
    if (first) {
        v->res.units++;
        lev_report(&p, sizeof p);
    }
    for (int32_t i = 0; i < nmig; i++)
        s_mig_send(v, mig_to[i], d->island, d->epoch, v->best);
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
 * -1 when the other copy of the unit had committed it already). 0 or -1. */
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
    *d = (tsp_done){island, epoch, best};
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
        tsp_done d = {-1, -1, -1};
        for (;;) {
            int32_t island = -1, epoch = -1;
            uint64_t mig_from = 0;
            int kind = s_sched(&v, &d, stuck, &island, &epoch, &mig_from);
            d.island = -1;
            stuck = 0;
            if (kind < 0 || kind == PICK_DONE)
                break;
            if (kind == PICK_WAIT) {
                stuck = s_wait(&v);
                continue;
            }
            if (kind == PICK_BACKUP)
                v.res.backups++;
            if (s_unit(&v, island, epoch, mig_from, &d) < 0)
                break;
        }
    }
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
