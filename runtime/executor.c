/* executor.c - the executor: OS worker threads that run virtual threads, the
 * run queues between them, the timer that preempts long time slices, and
 * the actions a worker takes when a VT unwinds at a safe point.
 *
 * Queues. Each worker has a local FIFO (its own lock); VTs it requeues at
 * a safe point go to its tail, so a switch on one worker takes one
 * uncontended lock. VTs that are spawned or woken go to the global FIFO;
 * a worker takes a fair share of it when its local queue runs dry, every
 * 61st switch, and after every preemption. An idle worker steals half of
 * another worker's local queue before it sleeps.
 *
 * Timer. One thread that is not registered with the GC. Under a worker's
 * lock it reads which VT the worker runs and how many runs it started; a
 * run that lasts a whole slice gets RT_WANT_PREEMPT and a poll, a VT whose
 * checkpoint is due gets a poll (its safe point then asks for the
 * capture). A worker changes its current VT only under that lock, so the
 * timer never touches a VT that has left the worker. Parked VTs whose
 * checkpoint falls due it hands, under ex->mu, to the workers for a visit.
 *
 * Visits. A parked VT that must be captured (a checkpoint, a capture
 * request, a stop) goes to the global queue without being woken: its
 * state stays RT_VT_BLOCKED and its table entry loses S_PARKED, so a
 * wake meanwhile is kept as a pending wake (S_PERMIT). The worker that
 * takes it captures it without running it, then parks it again, unless
 * a wake arrived (it runs) or a cancel or a stop ended it (s_rest).
 *
 * Locks: ex->mu (global queue, table of spawned VTs, idle count) may be
 * taken before a worker's mu, never after it; no two worker locks are held
 * at once; no callback runs under a lock.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define GC_THREADS
#define GC_NO_THREAD_REDIRECTS
#include <gc/gc.h>

#include "arena.h"
#include "clock.h"
#include "executor.h"
#include "image.h"
#include "rt.h"
#include "ttsp.h"
#include "vt.h"

#define S_DEFAULT_SLICE_MS 10
#define S_DEFAULT_SHUTDOWN_MS 5000
#define S_MAX_WORKERS 1024
#define S_GLOBAL_EVERY 61u /* switches between looks at the global queue */

/* Flags of a spawned VT (table entry). */
enum {
    S_PARKED = 1u, /* parked by a blocking safe point, in no queue */
    S_PERMIT = 2u, /* a wake arrived while not parked */
    S_CANCEL = 4u, /* cancel requested and not yet acted on */
    S_WARNED = 8u  /* a capture failure was printed */
};

/* ===================================================================
 * Table of spawned VTs (open addressing, backward-shift deletion)
 * =================================================================== */

typedef struct s_slot {
    rt_vt *vt;
    uint32_t flags;
    uint64_t ck_ns; /* S_PARKED: when its checkpoint falls due (0: never) */
    uint64_t dl_ns; /* S_PARKED: when its receive's deadline passes (0: none) */
} s_slot;

typedef struct s_table {
    s_slot *v;
    uint32_t cap; /* power of two, or 0 */
    uint32_t n;
} s_table;

static uint32_t s_hash(const rt_vt *vt)
{
    uint64_t x = (uint64_t)(uintptr_t)vt;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (uint32_t)x;
}

static s_slot *s_table_find(const s_table *t, const rt_vt *vt)
{
    if (!t->cap)
        return NULL;
    uint32_t mask = t->cap - 1;
    for (uint32_t i = s_hash(vt) & mask; t->v[i].vt; i = (i + 1) & mask)
        if (t->v[i].vt == vt)
            return &t->v[i];
    return NULL;
}

static void s_table_put(s_table *t, const s_slot *from)
{
    uint32_t mask = t->cap - 1;
    uint32_t i = s_hash(from->vt) & mask;
    while (t->v[i].vt)
        i = (i + 1) & mask;
    t->v[i] = *from;
    t->n++;
}

/* Adds vt (not present); LEV_ENOMEM. */
static int s_table_add(s_table *t, rt_vt *vt)
{
    if ((t->n + 1) * 2 > t->cap) {
        uint32_t ncap = t->cap ? t->cap * 2 : 64;
        s_slot *nv = calloc(ncap, sizeof *nv);
        if (!nv)
            return LEV_ENOMEM;
        s_table old = *t;
        t->v = nv;
        t->cap = ncap;
        t->n = 0;
        for (uint32_t i = 0; i < old.cap; i++)
            if (old.v[i].vt)
                s_table_put(t, &old.v[i]);
        free(old.v);
    }
    s_table_put(t, &(s_slot){.vt = vt});
    return 0;
}

static void s_table_del(s_table *t, s_slot *s)
{
    uint32_t mask = t->cap - 1;
    uint32_t i = (uint32_t)(s - t->v);
    uint32_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!t->v[j].vt)
            break;
        uint32_t k = s_hash(t->v[j].vt) & mask;
        /* Leave v[j] if its home k lies cyclically in (i, j]. */
        if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
            continue;
        t->v[i] = t->v[j];
        i = j;
    }
    t->v[i].vt = NULL;
    t->v[i].flags = 0;
    t->v[i].ck_ns = 0;
    t->v[i].dl_ns = 0;
    t->n--;
}

/* ===================================================================
 * Executor state
 * =================================================================== */

typedef struct s_worker {
    _Alignas(64) rt_exec *ex;
    pthread_t th;
    int idx;
    bool started;
    pthread_mutex_t mu; /* guards cur, cur_ck_ns, runs and the local queue */
    rt_vt *cur;         /* VT this worker runs or handles now */
    uint64_t cur_ck_ns; /* cur's next_ck_ns as the timer sees it */
    uint64_t runs;      /* runs started */
    rt_vt *head, *tail; /* local FIFO through vt->next */
    uint32_t n;
    uint32_t tick; /* worker-private switch counter */
    /* timer-private */
    uint64_t t_runs;
    uint32_t t_ticks;
    /* statistics, written by the worker only */
    uint64_t st_switches, st_parks, st_steals, st_captures, st_capture_errors, st_tortures;
} s_worker;

struct rt_exec {
    rt_exec_opts o;
    uint64_t slice_ns; /* 0: no preemption */
    uint64_t ck_ns;    /* 0: no periodic checkpoints */
    uint64_t tick_ns;  /* timer period */
    bool probe;        /* LEV_TTSP_REPORT: poll every running VT at each tick */
    int nworkers;
    s_worker *w;

    pthread_mutex_t mu;
    pthread_cond_t work_cv; /* idle workers */
    pthread_cond_t done_cv; /* rt_exec_wait */
    rt_vt *ghead, *gtail;   /* global FIFO */
    uint32_t gcount;        /* written under mu, read racily (atomic) */
    int nidle;              /* idem */
    bool idler;             /* a worker waits in o.idle.wait (under mu) */
    uint32_t ncancel;       /* VTs with S_CANCEL; idem */
    uint64_t park_due;      /* no parked VT's checkpoint is due before; idem */
    uint64_t wake_due;      /* no parked VT's deadline passes before; idem */
    rt_ch_host chan;        /* o.chan points here when the host gave one */
    s_table live;           /* spawned VTs that have not ended */
    bool closing;           /* no more spawns */
    bool stopping;          /* workers exit once idle */

    pthread_t timer;
    bool timer_started;
    pthread_mutex_t tmu;
    pthread_cond_t tcv;
    bool tstop;
    uint64_t st_preempts; /* timer only */
    uint64_t st_ticks;    /* timer only */
};

/* This thread waits in the host's idle wait (o.idle). */
static __thread bool t_idling;

#define S_LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define S_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define S_INC(p) S_STORE((p), S_LOAD(p) + 1)

static int s_cond_init(pthread_cond_t *cv)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(cv, &a);
    pthread_condattr_destroy(&a);
    return rc;
}

static struct timespec s_deadline(uint64_t ns_from_now)
{
    uint64_t t = rt_now_ns() + ns_from_now;
    return (struct timespec){.tv_sec = (time_t)(t / 1000000000u),
                             .tv_nsec = (long)(t % 1000000000u)};
}

/* ===================================================================
 * Queues
 * =================================================================== */

static void s_push(rt_vt **head, rt_vt **tail, rt_vt *vt)
{
    vt->next = NULL;
    if (*tail)
        (*tail)->next = vt;
    else
        *head = vt;
    *tail = vt;
}

static rt_vt *s_pop(rt_vt **head, rt_vt **tail)
{
    rt_vt *vt = *head;
    if (vt) {
        *head = vt->next;
        if (!*head)
            *tail = NULL;
        vt->next = NULL;
    }
    return vt;
}

/* Under ex->mu: appends to the global queue and wakes an idle worker;
 * the VT's state is the caller's. */
static void s_enqueue_locked(rt_exec *ex, rt_vt *vt)
{
    s_push(&ex->ghead, &ex->gtail, vt);
    S_STORE(&ex->gcount, ex->gcount + 1);
    if (ex->nidle)
        pthread_cond_signal(&ex->work_cv);
    /* the worker in the host's wait, when it is the only one idle and
     * this comes from elsewhere (it takes what it delivers itself) */
    if (ex->idler && ex->nidle == 1 && !t_idling)
        ex->o.idle.wake(ex->o.idle.ud);
}

/* Under ex->mu: queues vt to run. */
static void s_gpush_locked(rt_exec *ex, rt_vt *vt)
{
    vt->state = RT_VT_RUNNABLE;
    s_enqueue_locked(ex, vt);
}

/* Takes a fair share of the global queue: a list of *n VTs, or NULL. */
static rt_vt *s_gtake(rt_exec *ex, rt_vt **tail, uint32_t *n)
{
    pthread_mutex_lock(&ex->mu);
    uint32_t want = ex->gcount / (uint32_t)ex->nworkers + 1;
    if (want > ex->gcount)
        want = ex->gcount;
    rt_vt *head = NULL, *t = NULL;
    for (uint32_t i = 0; i < want; i++)
        s_push(&head, &t, s_pop(&ex->ghead, &ex->gtail));
    S_STORE(&ex->gcount, ex->gcount - want);
    pthread_mutex_unlock(&ex->mu);
    *tail = t;
    *n = want;
    return head;
}

/* Under w->mu: makes vt the worker's current VT. */
static void s_set_cur_locked(s_worker *w, rt_vt *vt)
{
    w->cur = vt;
    w->cur_ck_ns = vt ? vt->next_ck_ns : 0;
    if (vt)
        w->runs++;
}

static void s_clear_cur(s_worker *w)
{
    pthread_mutex_lock(&w->mu);
    w->cur = NULL;
    w->cur_ck_ns = 0;
    pthread_mutex_unlock(&w->mu);
}

/* Wakes one idle worker (it will look for work to steal). */
static void s_wake_idle(rt_exec *ex)
{
    pthread_mutex_lock(&ex->mu);
    pthread_cond_signal(&ex->work_cv);
    bool idler = ex->idler;
    pthread_mutex_unlock(&ex->mu);
    if (idler)
        ex->o.idle.wake(ex->o.idle.ud);
}

/* Steals half of another worker's local queue; returns a list or NULL. */
static rt_vt *s_steal(s_worker *w, rt_vt **tail, uint32_t *n)
{
    rt_exec *ex = w->ex;
    for (int k = 1; k < ex->nworkers; k++) {
        s_worker *v = &ex->w[(w->idx + k) % ex->nworkers];
        if (!S_LOAD(&v->n))
            continue;
        pthread_mutex_lock(&v->mu);
        uint32_t take = (v->n + 1) / 2;
        rt_vt *head = NULL, *t = NULL;
        for (uint32_t i = 0; i < take; i++)
            s_push(&head, &t, s_pop(&v->head, &v->tail));
        S_STORE(&v->n, v->n - take);
        pthread_mutex_unlock(&v->mu);
        if (head) {
            *tail = t;
            *n = take;
            return head;
        }
    }
    return NULL;
}

/* ===================================================================
 * Ending, capturing, torture
 * =================================================================== */

/* Whether a cancel of vt is pending (table lookup; only when some is). */
static bool s_cancel_pending(rt_exec *ex, rt_vt *vt)
{
    if (!S_LOAD(&ex->ncancel))
        return false;
    pthread_mutex_lock(&ex->mu);
    s_slot *s = s_table_find(&ex->live, vt);
    bool c = s && (s->flags & S_CANCEL);
    pthread_mutex_unlock(&ex->mu);
    return c;
}

/* The VT has ended (DONE, FAILED, STOPPED, or is failed here with err):
 * tell the host, release it to its waiters. The worker does not touch it
 * afterwards. */
static void s_end(s_worker *w, rt_vt *vt, int err, const char *detail)
{
    rt_exec *ex = w->ex;
    if (err) {
        lev_vt_fail(&vt->ctx, err, detail);
        vt->state = RT_VT_FAILED;
    }
    s_clear_cur(w);
    if (ex->o.on_done)
        ex->o.on_done(vt, ex->o.ud);
    pthread_mutex_lock(&ex->mu);
    s_slot *s = s_table_find(&ex->live, vt);
    if (s) {
        if (s->flags & S_CANCEL)
            S_STORE(&ex->ncancel, ex->ncancel - 1);
        s_table_del(&ex->live, s);
    }
    __atomic_store_n(&vt->exec, NULL, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&ex->done_cv);
    pthread_mutex_unlock(&ex->mu);
}

static void s_capture_failed(s_worker *w, rt_vt *vt, int err, const char *detail)
{
    rt_exec *ex = w->ex;
    S_INC(&w->st_capture_errors);
    if (ex->o.on_capture_error) {
        ex->o.on_capture_error(vt, err, detail, ex->o.ud);
        return;
    }
    pthread_mutex_lock(&ex->mu);
    s_slot *s = s_table_find(&ex->live, vt);
    bool first = s && !(s->flags & S_WARNED);
    if (s)
        s->flags |= S_WARNED;
    pthread_mutex_unlock(&ex->mu);
    if (first)
        fprintf(stderr,
                "leverage: %s of virtual thread %llu failed: %s (%s); it goes on, "
                "later failures are not shown\n",
                vt->capture_why == RT_WANT_STOP ? "capture to stop" : "checkpoint",
                (unsigned long long)vt->id, lev_strerror(err), detail && *detail ? detail : "-");
}

/* Captures a suspended VT and hands the image to the host, for `why`
 * (RT_WANT_CAPTURE or RT_WANT_STOP, in vt->capture_why while the host's
 * callback runs). 0, or the capture's error, reported already. */
static int s_capture(s_worker *w, rt_vt *vt, uint32_t why)
{
    rt_exec *ex = w->ex;
    uint8_t *img = NULL;
    size_t len = 0;
    vt->capture_why = why;
    rt_err_clear();
    int rc = rt_capture_into(vt, ex->o.on_image ? &ex->o.image_alloc : NULL, &img, &len);
    if (rc) {
        s_capture_failed(w, vt, rc, lev_errdetail());
    } else {
        S_INC(&w->st_captures);
        if (ex->o.on_image)
            ex->o.on_image(vt, img, len, ex->o.ud);
        else
            free(img);
    }
    /* The next one is due an interval after the VT is given back, host's
     * work included: were it counted from the capture's start, a capture
     * (and host) slower than the interval would leave a checkpoint due at
     * every safe point, and the VT would do little else. */
    uint64_t next = ex->ck_ns ? rt_now_ns() + ex->ck_ns : 0;
    vt->next_ck_ns = next;
    pthread_mutex_lock(&w->mu);
    if (w->cur == vt)
        w->cur_ck_ns = next;
    pthread_mutex_unlock(&w->mu);
    return rc;
}

/* Acts on the capture requests among `want` of a suspended VT the worker
 * holds. A stop captures it and, if that works, ends it STOPPED without
 * running it again: true, the worker no longer holds it. A stop whose
 * capture fails is reported and the VT goes on (one capture serves a
 * checkpoint asked at the same time); false. */
static bool s_serve(s_worker *w, rt_vt *vt, uint32_t want)
{
    const uint32_t asks = RT_WANT_CAPTURE | RT_WANT_STOP;
    if ((want & asks) && w->ex->o.chan && !rt_ch_capture_ok(vt)) {
        vt->deferred |= want & asks; /* taken once it may be captured */
        want &= ~asks;
    }
    if (want & RT_WANT_STOP) {
        if (s_capture(w, vt, RT_WANT_STOP))
            return false;
        vt->state = RT_VT_STOPPED;
        s_end(w, vt, 0, NULL);
        return true;
    }
    if (want & RT_WANT_CAPTURE)
        s_capture(w, vt, RT_WANT_CAPTURE);
    return false;
}

/* One torture cycle: the VT is captured, poisoned and restored at new
 * addresses (rt_image_torture). */
static int s_torture(s_worker *w, rt_vt *vt)
{
    rt_err_clear();
    int rc = rt_image_torture(vt, NULL);
    if (rc)
        return rc;
    S_INC(&w->st_tortures);
    return 0;
}

/* ===================================================================
 * Workers
 * =================================================================== */

static bool s_rest(s_worker *w, rt_vt *vt, bool fresh);

/* Acts on requests that reached a VT while it was queued, and visits a
 * parked one; true if the worker is to run it, false if it no longer
 * holds it (ended here, or parked again after a visit). */
static bool s_ready(s_worker *w, rt_vt *vt)
{
    rt_exec *ex = w->ex;
    if (LEV_LIKELY(!__atomic_load_n(&vt->want, __ATOMIC_RELAXED) && !S_LOAD(&ex->ncancel) &&
                   vt->state != RT_VT_BLOCKED))
        return true;
    if (vt->state == RT_VT_BLOCKED)
        return s_rest(w, vt, false); /* a visit: parked, not woken */
    uint32_t want = __atomic_exchange_n(&vt->want, 0, __ATOMIC_ACQ_REL);
    if ((want & RT_WANT_CANCEL) || s_cancel_pending(ex, vt)) {
        s_end(w, vt, LEV_ECANCELED, "canceled");
        return false;
    }
    return !s_serve(w, vt, want); /* stale preempt/yield requests are dropped */
}

/* Picks the next VT to run (blocking while there is none) and makes it
 * current; NULL when the executor stops. */
static rt_vt *s_next(s_worker *w)
{
    rt_exec *ex = w->ex;
    for (;;) {
        rt_vt *vt = NULL, *tail = NULL;
        uint32_t n = 0;
        pthread_mutex_lock(&w->mu);
        vt = s_pop(&w->head, &w->tail);
        if (vt) {
            S_STORE(&w->n, w->n - 1);
            s_set_cur_locked(w, vt);
        }
        pthread_mutex_unlock(&w->mu);
        if (!vt && S_LOAD(&ex->gcount))
            vt = s_gtake(ex, &tail, &n);
        if (!vt && (vt = s_steal(w, &tail, &n)) != NULL)
            S_STORE(&w->st_steals, w->st_steals + n);
        if (vt && n) {
            /* vt heads a list taken elsewhere: run it, queue the rest. */
            pthread_mutex_lock(&w->mu);
            rt_vt *rest = vt->next;
            vt->next = NULL;
            if (rest) {
                if (w->tail)
                    w->tail->next = rest;
                else
                    w->head = rest;
                w->tail = tail;
                S_STORE(&w->n, w->n + n - 1);
            }
            s_set_cur_locked(w, vt);
            pthread_mutex_unlock(&w->mu);
        }
        if (vt) {
            if (S_LOAD(&w->n) && S_LOAD(&ex->nidle))
                s_wake_idle(ex); /* there is work to steal */
            if (s_ready(w, vt))
                return vt;
            continue;
        }
        pthread_mutex_lock(&ex->mu);
        if (!ex->ghead) {
            if (ex->stopping) {
                pthread_mutex_unlock(&ex->mu);
                return NULL;
            }
            S_STORE(&ex->nidle, ex->nidle + 1);
            if (ex->o.idle.wait && !ex->idler) {
                /* this worker is the one that waits in the host's wait */
                ex->idler = true;
                pthread_mutex_unlock(&ex->mu);
                t_idling = true;
                ex->o.idle.wait(ex->o.idle.ud);
                t_idling = false;
                pthread_mutex_lock(&ex->mu);
                ex->idler = false;
            } else {
                pthread_cond_wait(&ex->work_cv, &ex->mu);
            }
            S_STORE(&ex->nidle, ex->nidle - 1);
        }
        pthread_mutex_unlock(&ex->mu);
    }
}

/* The fast path of a switch: vt goes to the tail of the local queue and
 * the head becomes current. Looks at the global queue now and then, and
 * after a preemption. */
static rt_vt *s_switch(s_worker *w, rt_vt *vt, bool preempted)
{
    rt_exec *ex = w->ex;
    rt_vt *ghead = NULL, *gtail = NULL;
    uint32_t gn = 0;
    S_STORE(&w->st_switches, w->st_switches + 1);
    if (S_LOAD(&ex->gcount) && (preempted || ++w->tick % S_GLOBAL_EVERY == 0))
        ghead = s_gtake(ex, &gtail, &gn);
    pthread_mutex_lock(&w->mu);
    if (ghead) {
        if (w->tail)
            w->tail->next = ghead;
        else
            w->head = ghead;
        w->tail = gtail;
    }
    s_push(&w->head, &w->tail, vt);
    rt_vt *next = s_pop(&w->head, &w->tail);
    uint32_t n = w->n + gn;
    S_STORE(&w->n, n);
    s_set_cur_locked(w, next);
    pthread_mutex_unlock(&w->mu);
    if (n && S_LOAD(&ex->nidle))
        s_wake_idle(ex);
    if (LEV_LIKELY(s_ready(w, next)))
        return next;
    return s_next(w);
}

/* vt is suspended at a blocking safe point: just unwound there (fresh)
 * or taken from a queue for a visit while parked. Acts on the capture
 * requests that reached it without running it, then parks it unless a
 * wake is pending. True: run vt now (a wake came); false: the worker no
 * longer holds it (parked, or ended by a cancel or a stop). */
static bool s_rest(s_worker *w, rt_vt *vt, bool fresh)
{
    rt_exec *ex = w->ex;
    const uint32_t asks = RT_WANT_CAPTURE | RT_WANT_STOP;
    for (;;) {
        uint64_t dl = ex->o.chan ? rt_ch_deadline(vt) : 0;
        pthread_mutex_lock(&ex->mu);
        s_slot *s = s_table_find(&ex->live, vt);
        if (!s) { /* cannot happen: a VT a worker holds is in the table */
            pthread_mutex_unlock(&ex->mu);
            vt->state = RT_VT_RUNNABLE;
            return true;
        }
        if (s->flags & S_CANCEL) {
            pthread_mutex_unlock(&ex->mu);
            s_end(w, vt, LEV_ECANCELED, "canceled");
            return false;
        }
        /* Requests set `want` under ex->mu: one that comes after this
         * read finds the VT parked and queues a visit. */
        uint32_t asked = __atomic_load_n(&vt->want, __ATOMIC_ACQUIRE) & asks;
        if (!asked && (s->flags & S_PERMIT)) {
            s->flags &= ~S_PERMIT;
            pthread_mutex_unlock(&ex->mu);
            vt->state = RT_VT_RUNNABLE;
            return true;
        }
        if (!asked) {
            s->flags |= S_PARKED;
            /* a checkpoint put off waits for the VT to run, not for a visit */
            s->ck_ns = (vt->deferred & RT_WANT_CAPTURE) ? 0 : vt->next_ck_ns;
            if (s->ck_ns && s->ck_ns < ex->park_due)
                S_STORE(&ex->park_due, s->ck_ns);
            s->dl_ns = dl;
            if (dl && dl < ex->wake_due)
                S_STORE(&ex->wake_due, dl);
            vt->state = RT_VT_BLOCKED;
            /* Leave the worker before a waker can hand vt to another one. */
            s_clear_cur(w);
            pthread_mutex_unlock(&ex->mu);
            if (fresh)
                S_INC(&w->st_parks);
            return false;
        }
        pthread_mutex_unlock(&ex->mu);
        __atomic_fetch_and(&vt->want, ~asked, __ATOMIC_ACQ_REL);
        if (s_serve(w, vt, asked))
            return false;
    }
}

/* vt unwound: act on why; returns the VT to run next. */
static rt_vt *s_unwound(s_worker *w, rt_vt *vt)
{
    rt_exec *ex = w->ex;
    uint32_t want = __atomic_exchange_n(&vt->want, 0, __ATOMIC_ACQ_REL);
    if ((want & RT_WANT_CANCEL) || s_cancel_pending(ex, vt)) {
        s_end(w, vt, LEV_ECANCELED, "canceled");
        return s_next(w);
    }
    if (want & RT_WANT_TORTURE) {
        int rc = s_torture(w, vt);
        if (rc) {
            s_end(w, vt, rc, lev_errdetail());
            return s_next(w);
        }
    }
    if (s_serve(w, vt, want))
        return s_next(w); /* stopped */
    if (want & RT_WANT_BLOCK)
        return s_rest(w, vt, true) ? vt : s_next(w);
    if (want & (RT_WANT_YIELD | RT_WANT_PREEMPT | RT_WANT_CAPTURE | RT_WANT_STOP))
        return s_switch(w, vt, (want & RT_WANT_PREEMPT) != 0);
    return vt; /* a torture cycle (or nothing): go on */
}

static void *s_worker_main(void *arg)
{
    s_worker *w = arg;
    rt_vt *vt = NULL;
    for (;;) {
        if (!vt && !(vt = s_next(w)))
            break;
        int r = rt_vt_step(vt);
        if (LEV_LIKELY(r == LEV_RUN_UNWIND)) {
            vt = s_unwound(w, vt);
        } else {
            s_end(w, vt, 0, NULL);
            vt = NULL;
        }
    }
    return NULL;
}

/* ===================================================================
 * Timer (not registered with the GC: touches no GC memory but the poll
 * and want words of a VT that a worker holds under its lock, and, under
 * ex->mu, the want word and queue link of a parked VT it queues for a
 * visit; VT records are uncollectable, so the collector misses nothing)
 * =================================================================== */

/* Whether any VT waits in a run queue (read racily: a VT queued just
 * after the read waits at most one more tick). */
static bool s_any_waiting(rt_exec *ex)
{
    if (S_LOAD(&ex->gcount))
        return true;
    for (int i = 0; i < ex->nworkers; i++)
        if (S_LOAD(&ex->w[i].n))
            return true;
    return false;
}

static void s_request_locked(rt_exec *ex, s_slot *s, uint32_t want);

/* Hands the parked VTs whose checkpoint falls due within a quarter
 * interval to the workers for a visit (a capture without a wake). The
 * table is scanned only when the earliest of them is due, and each scan
 * takes a quarter interval's worth: a few scans per interval. */
static void s_timer_parked(rt_exec *ex, uint64_t now)
{
    if (!ex->ck_ns || now < S_LOAD(&ex->park_due))
        return;
    uint64_t horizon = now + ex->ck_ns / 4, next = UINT64_MAX;
    pthread_mutex_lock(&ex->mu);
    for (uint32_t i = 0; i < ex->live.cap; i++) {
        s_slot *s = &ex->live.v[i];
        if (!s->vt || !(s->flags & S_PARKED) || !s->ck_ns)
            continue;
        if (s->ck_ns <= horizon)
            s_request_locked(ex, s, RT_WANT_CAPTURE);
        else if (s->ck_ns < next)
            next = s->ck_ns;
    }
    S_STORE(&ex->park_due, next);
    pthread_mutex_unlock(&ex->mu);
}

static void s_wake_locked(rt_exec *ex, s_slot *s);

/* Wakes the parked VTs whose receive's deadline has passed (they ask for
 * their timeout). The table is scanned only once the earliest is due. */
static void s_timer_deadlines(rt_exec *ex, uint64_t now)
{
    if (now < S_LOAD(&ex->wake_due))
        return;
    uint64_t next = UINT64_MAX;
    pthread_mutex_lock(&ex->mu);
    for (uint32_t i = 0; i < ex->live.cap; i++) {
        s_slot *s = &ex->live.v[i];
        if (!s->vt || !(s->flags & S_PARKED) || !s->dl_ns)
            continue;
        if (s->dl_ns <= now) {
            s->dl_ns = 0;
            s_wake_locked(ex, s);
        } else if (s->dl_ns < next) {
            next = s->dl_ns;
        }
    }
    S_STORE(&ex->wake_due, next);
    pthread_mutex_unlock(&ex->mu);
}

static void s_timer_tick(rt_exec *ex)
{
    uint64_t now = rt_now_ns();
    S_INC(&ex->st_ticks);
    s_timer_parked(ex, now);
    s_timer_deadlines(ex, now);
    uint32_t slice_ticks = ex->slice_ns ? (uint32_t)(ex->slice_ns / ex->tick_ns) : 0;
    /* a slice is cut only for a VT that waits: a VT alone keeps running */
    if (slice_ticks && !s_any_waiting(ex))
        slice_ticks = 0;
    for (int i = 0; i < ex->nworkers; i++) {
        s_worker *w = &ex->w[i];
        pthread_mutex_lock(&w->mu);
        rt_vt *vt = w->cur;
        if (!vt) {
            w->t_ticks = 0;
        } else {
            bool poke = false;
            if (w->runs != w->t_runs) {
                w->t_runs = w->runs;
                w->t_ticks = 0;
            } else if (slice_ticks && ++w->t_ticks >= slice_ticks) {
                if (!(__atomic_fetch_or(&vt->want, RT_WANT_PREEMPT, __ATOMIC_SEQ_CST) &
                      RT_WANT_PREEMPT))
                    S_INC(&ex->st_preempts);
                poke = true;
            }
            if ((w->cur_ck_ns && now >= w->cur_ck_ns) || ex->probe)
                poke = true;
            if (poke) {
                rt_ttsp_request(&vt->ttsp);
                vt->ctx.poll = 1;
            }
        }
        pthread_mutex_unlock(&w->mu);
    }
}

static void *s_timer_main(void *arg)
{
    rt_exec *ex = arg;
    pthread_mutex_lock(&ex->tmu);
    while (!ex->tstop) {
        struct timespec dl = s_deadline(ex->tick_ns);
        while (!ex->tstop && pthread_cond_timedwait(&ex->tcv, &ex->tmu, &dl) != ETIMEDOUT)
            ;
        if (ex->tstop)
            break;
        pthread_mutex_unlock(&ex->tmu);
        s_timer_tick(ex);
        pthread_mutex_lock(&ex->tmu);
    }
    pthread_mutex_unlock(&ex->tmu);
    return NULL;
}

/* ===================================================================
 * Public interface
 * =================================================================== */

static void s_free(rt_exec *ex)
{
    for (int i = 0; i < ex->nworkers; i++)
        pthread_mutex_destroy(&ex->w[i].mu);
    free(ex->w);
    free(ex->live.v);
    pthread_mutex_destroy(&ex->mu);
    pthread_cond_destroy(&ex->work_cv);
    pthread_cond_destroy(&ex->done_cv);
    pthread_mutex_destroy(&ex->tmu);
    pthread_cond_destroy(&ex->tcv);
    free(ex);
}

/* Stops the threads; true if every worker has been joined. */
static bool s_stop_threads(rt_exec *ex, bool all_ended)
{
    pthread_mutex_lock(&ex->tmu);
    ex->tstop = true;
    pthread_cond_signal(&ex->tcv);
    pthread_mutex_unlock(&ex->tmu);
    if (ex->timer_started)
        pthread_join(ex->timer, NULL);
    ex->timer_started = false;
    pthread_mutex_lock(&ex->mu);
    ex->stopping = true;
    pthread_cond_broadcast(&ex->work_cv);
    bool idler = ex->idler;
    pthread_mutex_unlock(&ex->mu);
    if (idler)
        ex->o.idle.wake(ex->o.idle.ud);
    for (int i = 0; i < ex->nworkers; i++) {
        if (!ex->w[i].started)
            continue;
        if (all_ended)
            GC_pthread_join(ex->w[i].th, NULL);
        else
            GC_pthread_detach(ex->w[i].th);
        ex->w[i].started = false;
    }
    return all_ended;
}

int rt_exec_new(rt_exec **out, const rt_exec_opts *o)
{
    if (!out)
        return rt_err(LEV_EINVAL, "rt_exec_new: NULL out");
    *out = NULL;
    rt_init();
    rt_exec *ex = calloc(1, sizeof *ex);
    if (!ex)
        return LEV_ENOMEM;
    if (o)
        ex->o = *o;
    if (ex->o.chan) {
        if (!ex->o.chan->out) {
            free(ex);
            return rt_err(LEV_EINVAL, "rt_exec_new: a channel host without out()");
        }
        ex->chan = *ex->o.chan;
        if (!ex->chan.max_msg)
            ex->chan.max_msg = RT_CH_MAX_MSG;
        if (!ex->chan.max_value)
            ex->chan.max_value = RT_CH_MAX_VALUE;
        if (!ex->chan.window)
            ex->chan.window = 256;
        ex->o.chan = &ex->chan;
    }
    int nw = ex->o.workers;
    if (nw <= 0) {
        long nc = sysconf(_SC_NPROCESSORS_ONLN);
        nw = nc > 0 ? (int)nc : 1;
    }
    if (nw > S_MAX_WORKERS)
        nw = S_MAX_WORKERS;
    int slice = ex->o.slice_ms ? ex->o.slice_ms : S_DEFAULT_SLICE_MS;
    ex->slice_ns = slice > 0 ? (uint64_t)slice * 1000000u : 0;
    ex->ck_ns = ex->o.checkpoint_ms > 0 ? (uint64_t)ex->o.checkpoint_ms * 1000000u : 0;
    if (ex->o.shutdown_ms <= 0)
        ex->o.shutdown_ms = S_DEFAULT_SHUTDOWN_MS;
    /* Two ticks per slice: a run is cut after one to one and a half
     * slices. Checkpoints are noticed within a quarter interval. */
    ex->tick_ns = ex->slice_ns ? ex->slice_ns / 2 : 5000000u;
    if (ex->ck_ns && ex->ck_ns / 4 < ex->tick_ns)
        ex->tick_ns = ex->ck_ns / 4;
    ex->park_due = UINT64_MAX;
    ex->wake_due = UINT64_MAX;
    ex->probe = rt_ttsp_report() != 0;
    if (ex->probe && ex->tick_ns > 1000000u)
        ex->tick_ns = 1000000u; /* a sample of the time to safe point every ms */
    if (ex->tick_ns < 500000u)
        ex->tick_ns = 500000u;

    pthread_mutex_init(&ex->mu, NULL);
    pthread_mutex_init(&ex->tmu, NULL);
    if (s_cond_init(&ex->work_cv) || s_cond_init(&ex->done_cv) || s_cond_init(&ex->tcv)) {
        free(ex);
        return rt_err(LEV_ENOMEM, "rt_exec_new: cannot create condition variables");
    }
    ex->w = aligned_alloc(64, sizeof(s_worker) * (size_t)nw);
    if (!ex->w) {
        s_free(ex);
        return LEV_ENOMEM;
    }
    memset(ex->w, 0, sizeof(s_worker) * (size_t)nw);
    ex->nworkers = nw;
    for (int i = 0; i < nw; i++) {
        ex->w[i].ex = ex;
        ex->w[i].idx = i;
        pthread_mutex_init(&ex->w[i].mu, NULL);
    }
    for (int i = 0; i < nw; i++) {
        int rc = GC_pthread_create(&ex->w[i].th, NULL, s_worker_main, &ex->w[i]);
        if (rc) {
            s_stop_threads(ex, true);
            s_free(ex);
            return rt_err(LEV_ENOMEM, "rt_exec_new: cannot start worker: %s", strerror(rc));
        }
        ex->w[i].started = true;
    }
    int rc = pthread_create(&ex->timer, NULL, s_timer_main, ex);
    if (rc) {
        s_stop_threads(ex, true);
        s_free(ex);
        return rt_err(LEV_ENOMEM, "rt_exec_new: cannot start timer: %s", strerror(rc));
    }
    ex->timer_started = true;
    *out = ex;
    return 0;
}

/* Under ex->mu: marks a spawned VT canceled and gets it to a worker. */
static void s_cancel_locked(rt_exec *ex, s_slot *s)
{
    rt_vt *vt = s->vt;
    if (!(s->flags & S_CANCEL)) {
        s->flags |= S_CANCEL;
        S_STORE(&ex->ncancel, ex->ncancel + 1);
    }
    __atomic_fetch_or(&vt->want, RT_WANT_CANCEL, __ATOMIC_SEQ_CST);
    rt_ttsp_request(&vt->ttsp);
    vt->ctx.poll = 1;
    if (s->flags & S_PARKED) {
        s->flags &= ~S_PARKED;
        s_gpush_locked(ex, vt);
    }
}

void rt_exec_destroy(rt_exec **ex_p)
{
    if (!ex_p || !*ex_p)
        return;
    rt_exec *ex = *ex_p;
    *ex_p = NULL;
    pthread_mutex_lock(&ex->mu);
    ex->closing = true;
    for (uint32_t i = 0; i < ex->live.cap; i++)
        if (ex->live.v[i].vt)
            s_cancel_locked(ex, &ex->live.v[i]);
    struct timespec dl = s_deadline((uint64_t)ex->o.shutdown_ms * 1000000u);
    while (ex->live.n && pthread_cond_timedwait(&ex->done_cv, &ex->mu, &dl) != ETIMEDOUT)
        ;
    uint32_t left = ex->live.n;
    pthread_mutex_unlock(&ex->mu);
    if (left) {
        fprintf(stderr,
                "leverage: %u virtual thread(s) did not stop within %d ms (native code without "
                "safe points?); leaving their executor running\n",
                left, ex->o.shutdown_ms);
        s_stop_threads(ex, false);
        return; /* the stuck workers still use ex */
    }
    s_stop_threads(ex, true);
    s_free(ex);
}

int rt_exec_spawn(rt_exec *ex, rt_vt *vt)
{
    if (!ex || !vt)
        return rt_err(LEV_EINVAL, "rt_exec_spawn: NULL argument");
    if (rt_vt_ended(vt))
        return rt_err(LEV_EINVAL, "rt_exec_spawn: virtual thread %llu has ended",
                      (unsigned long long)vt->id);
    pthread_mutex_lock(&ex->mu);
    int rc = 0;
    if (ex->closing)
        rc = rt_err(LEV_ECANCELED, "rt_exec_spawn: the executor is shutting down");
    else if (__atomic_load_n(&vt->exec, __ATOMIC_ACQUIRE))
        rc = rt_err(LEV_EBUSY, "rt_exec_spawn: virtual thread %llu is already spawned",
                    (unsigned long long)vt->id);
    else if (s_table_add(&ex->live, vt))
        rc = LEV_ENOMEM;
    if (!rc) {
        __atomic_store_n(&vt->exec, ex, __ATOMIC_RELEASE);
        if (ex->ck_ns && !vt->next_ck_ns)
            vt->next_ck_ns = rt_now_ns() + ex->ck_ns;
        if (ex->o.chan && vt->chan) { /* a resend put off until it had a host */
            pthread_mutex_unlock(&ex->mu);
            rt_ch_spawned(vt, ex->o.chan);
            pthread_mutex_lock(&ex->mu);
        }
        s_gpush_locked(ex, vt);
    }
    pthread_mutex_unlock(&ex->mu);
    return rc;
}

int rt_exec_wait(rt_exec *ex, rt_vt *vt, int timeout_ms)
{
    if (!ex || !vt)
        return rt_err(LEV_EINVAL, "rt_exec_wait: NULL argument");
    struct timespec dl = s_deadline(timeout_ms > 0 ? (uint64_t)timeout_ms * 1000000u : 0);
    int rc = 0;
    pthread_mutex_lock(&ex->mu);
    while (s_table_find(&ex->live, vt)) {
        if (timeout_ms < 0) {
            pthread_cond_wait(&ex->done_cv, &ex->mu);
        } else if (pthread_cond_timedwait(&ex->done_cv, &ex->mu, &dl) == ETIMEDOUT) {
            if (s_table_find(&ex->live, vt))
                rc = LEV_ETIMEDOUT;
            break;
        }
    }
    pthread_mutex_unlock(&ex->mu);
    if (!rc && !rt_vt_ended(vt))
        rc = rt_err(LEV_EINVAL, "rt_exec_wait: virtual thread %llu was never spawned",
                    (unsigned long long)vt->id);
    return rc;
}

/* Runs op on the table entry of a spawned VT under its executor's lock. */
static int s_with_slot(rt_vt *vt, void (*op)(rt_exec *, s_slot *))
{
    if (!vt)
        return rt_err(LEV_EINVAL, "NULL virtual thread");
    rt_exec *ex = __atomic_load_n(&vt->exec, __ATOMIC_ACQUIRE);
    if (!ex)
        return rt_err(LEV_ENOVT, "virtual thread %llu is not running", (unsigned long long)vt->id);
    pthread_mutex_lock(&ex->mu);
    s_slot *s = s_table_find(&ex->live, vt);
    if (s)
        op(ex, s);
    pthread_mutex_unlock(&ex->mu);
    return s ? 0 : rt_err(LEV_ENOVT, "virtual thread %llu has ended", (unsigned long long)vt->id);
}

static void s_wake_locked(rt_exec *ex, s_slot *s)
{
    if (s->flags & S_PARKED) {
        s->flags &= ~S_PARKED;
        s_gpush_locked(ex, s->vt);
    } else {
        s->flags |= S_PERMIT;
    }
}

/* Under ex->mu: asks for a capture (want: RT_WANT_CAPTURE or
 * RT_WANT_STOP) of a spawned VT: a running one at its next safe point, a
 * queued one when a worker takes it, a parked one in a visit (it stays
 * RT_VT_BLOCKED and is not woken). */
static void s_request_locked(rt_exec *ex, s_slot *s, uint32_t want)
{
    rt_vt *vt = s->vt;
    __atomic_fetch_or(&vt->want, want, __ATOMIC_SEQ_CST);
    if (s->flags & S_PARKED) {
        s->flags &= ~S_PARKED;
        s_enqueue_locked(ex, vt);
        return;
    }
    rt_ttsp_request(&vt->ttsp);
    vt->ctx.poll = 1;
}

static void s_request_capture_locked(rt_exec *ex, s_slot *s)
{
    s_request_locked(ex, s, RT_WANT_CAPTURE);
}

static void s_capture_stop_locked(rt_exec *ex, s_slot *s) { s_request_locked(ex, s, RT_WANT_STOP); }

int rt_exec_wake(rt_vt *vt) { return s_with_slot(vt, s_wake_locked); }

int rt_exec_cancel(rt_vt *vt) { return s_with_slot(vt, s_cancel_locked); }

int rt_exec_request_capture(rt_vt *vt) { return s_with_slot(vt, s_request_capture_locked); }

int rt_exec_capture_stop(rt_vt *vt) { return s_with_slot(vt, s_capture_stop_locked); }

void rt_exec_stats_get(rt_exec *ex, rt_exec_stats *st)
{
    memset(st, 0, sizeof *st);
    if (!ex)
        return;
    for (int i = 0; i < ex->nworkers; i++) {
        s_worker *w = &ex->w[i];
        pthread_mutex_lock(&w->mu);
        st->runs += w->runs;
        pthread_mutex_unlock(&w->mu);
        st->switches += S_LOAD(&w->st_switches);
        st->parks += S_LOAD(&w->st_parks);
        st->steals += S_LOAD(&w->st_steals);
        st->captures += S_LOAD(&w->st_captures);
        st->capture_errors += S_LOAD(&w->st_capture_errors);
        st->tortures += S_LOAD(&w->st_tortures);
    }
    st->preempts = S_LOAD(&ex->st_preempts);
    st->ticks = S_LOAD(&ex->st_ticks);
}

const rt_ch_host *rt_exec_chan(const rt_exec *ex) { return ex ? ex->o.chan : NULL; }

void rt_exec_capture_ready(rt_vt *vt)
{
    uint32_t d = vt->deferred;
    if (!d)
        return;
    vt->deferred = 0;
    __atomic_fetch_or(&vt->want, d, __ATOMIC_SEQ_CST);
    rt_ttsp_request(&vt->ttsp);
    vt->ctx.poll = 1;
}

int rt_exec_report(rt_vt *vt, const void *buf, size_t len)
{
    rt_exec *ex = vt ? __atomic_load_n(&vt->exec, __ATOMIC_ACQUIRE) : NULL;
    if (ex && ex->o.chan)
        return rt_ch_report(vt, ex->o.chan, buf, len);
    if (!ex || !ex->o.on_report)
        return 0;
    void *copy = malloc(len ? len : 1);
    if (!copy)
        return rt_err(LEV_ENOMEM, "lev_report: cannot copy %zu bytes", len);
    if (len)
        memcpy(copy, buf, len);
    ex->o.on_report(vt, copy, len, ex->o.ud);
    free(copy);
    return 0;
}
