/* test_mesh.c - the distributed system end to end: meshes of levpeer
 * processes on loopback, a client (this program, which carries the task
 * module of pc_tasks.c) opening a virtual computer on one of them, and the
 * faults of the fault model: a worker killed, a holder killed, a worker
 * stopped past the failure timeout and continued, a graceful SIGTERM, an
 * executor crashed by its task, a worker that cannot load the module, a
 * worker joining mid-run, the client's peer lost. Every result must equal
 * the fault-free value (computed here natively), every report must reach
 * the client exactly once, the VC's counts (lev_vc_stats_get) must show a
 * killed worker and its VTs' resumes, and no wait is for a time: each is for a state
 * of a peer, bounded. Combinations too: a holder stalled then its VT's host
 * killed, two workers killed together, a worker stalled within the
 * suspicion timeout (not fenced). And rebalancing: a VT moves to a faster
 * worker that joins. Run one scenario with `test_pc_mesh NAME`.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <zmq.h>

#include "auth.h"
#include "leverage.h"
#include "log.h"
#include "mesh.h"
#include "pc_tasks.h"
#include "wire.h"

#ifndef LEVPEER_PATH
#error "LEVPEER_PATH must name the levpeer program"
#endif

#define MAXP 40
#define MAXVT 16
#define STEPS 64L
#define LIMIT 120000 /* ms: the bound of every wait, far above what any takes */

static char s_dir[256];
/* Rounds per step of the VTs' work (LEV_TEST_WORK overrides). How long
 * they run does not matter: each waits at a gate until its client opens
 * it, so a fault always finds it alive. */
static long s_work = 1000000;

/* ===================================================================
 * Reports: each VT's step numbers, in the order they arrived
 * =================================================================== */

typedef struct reports {
    pthread_mutex_t mu;
    long seen[MAXVT + 2][16];
    int n[MAXVT + 2];
    int bad;
} reports;

static void s_on_report(lev_vt_id vt, const void *buf, size_t len, void *ctx)
{
    reports *r = ctx;
    pthread_mutex_lock(&r->mu);
    long step = 0;
    if (len == sizeof step && vt < MAXVT + 2 && r->n[vt] < 16)
        memcpy(&step, buf, sizeof step), r->seen[vt][r->n[vt]++] = step;
    else
        r->bad++;
    pthread_mutex_unlock(&r->mu);
}

/* Every VT of ids 2..n+1 reported steps STEPS/8, 2*STEPS/8... once each, in order. */
static void s_check_reports(reports *r, int nvt)
{
    pthread_mutex_lock(&r->mu);
    assert_int_equal(r->bad, 0);
    for (int v = 2; v < nvt + 2; v++) {
        if (r->n[v] != 8)
            fail_msg("VT %d: %d reports reached the client, not 8", v, r->n[v]);
        for (int k = 0; k < 8; k++)
            assert_int_equal(r->seen[v][k], (k + 1) * (STEPS / 8));
    }
    pthread_mutex_unlock(&r->mu);
}

/* ===================================================================
 * Meshes
 * =================================================================== */

typedef struct mesh {
    mesh_peer p[MAXP];
    int n;
} mesh;

/* Starts peer i: `extra` flags after the common ones; peers after the
 * first join the first. */
static void s_peer(mesh *m, int i, const char *cores, const char *const *extra)
{
    const char *args[32] = {"--listen", mesh_listen(), "--cores", cores, "--rate", "1000"};
    int n = 6;
    if (i > 0) {
        args[n++] = "--join";
        args[n++] = m->p[0].ep;
    }
    for (int k = 0; extra && extra[k] && n < 30; k++)
        args[n++] = extra[k];
    args[n] = NULL;
    if (mesh_start(&m->p[i], LEVPEER_PATH, s_dir, LIMIT, args))
        fail_msg("levpeer %d did not start", i);
    if (i >= m->n)
        m->n = i + 1;
}

typedef struct want_alive {
    int n;
} want_alive;

static bool s_alive(const char *js, void *ctx)
{
    return js_count(js, "\"state\":\"alive\"") >= ((want_alive *)ctx)->n;
}

/* A mesh of a deployer-only peer and `workers` peers of one core each,
 * every one seen alive by the first; `extra` flags for every peer. */
static void s_mesh_with(mesh *m, int workers, const char *const *extra)
{
    memset(m, 0, sizeof *m);
    s_peer(m, 0, "-1", extra);
    for (int i = 1; i <= workers; i++)
        s_peer(m, i, "1", extra);
    want_alive w = {workers + 1};
    assert_true(mesh_wait(m->p[0].ep, s_alive, &w, LIMIT));
}

static void s_mesh(mesh *m, int workers) { s_mesh_with(m, workers, NULL); }

static int s_index(const mesh *m, const char *ep)
{
    for (int i = 0; i < m->n; i++)
        if (!strcmp(m->p[i].ep, ep))
            return i;
    return -1;
}

/* ===================================================================
 * The client side
 * =================================================================== */

typedef struct run {
    lev_vc *vc;
    reports rep;
    lev_vt_id id[MAXVT];
    int nvt;
    char gate[sizeof s_dir + 32]; /* the file whose creation lets the VTs end */
} run;

static void s_open_r(run *r, const mesh *m, int workers, int ckpt_ms, int replicas)
{
    static int runs;
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->rep.mu, NULL);
    snprintf(r->gate, sizeof r->gate, "%s/gate-%d", s_dir, runs++);
    lev_vc_options o = {
        .workers = workers, .checkpoint_ms = ckpt_ms, .replicas = replicas, .peer = m->p[0].ep};
    int rc = lev_vc_open(&r->vc, &o);
    if (rc)
        fail_msg("lev_vc_open: %s: %s", lev_strerror(rc), lev_errdetail());
    assert_int_equal(lev_vc_on_report(r->vc, s_on_report, &r->rep), 0);
}

static void s_open(run *r, const mesh *m, int workers, int ckpt_ms)
{
    s_open_r(r, m, workers, ckpt_ms, 0);
}

/* Starts n VTs of pc_gated: they compute, report, then wait at the gate. */
static void s_start(run *r, int n)
{
    pc_gate_arg arg = {.steps = STEPS, .step_work = s_work};
    assert_true(strlen(r->gate) < sizeof arg.gate);
    memcpy(arg.gate, r->gate, strlen(r->gate) + 1);
    for (int i = 0; i < n; i++) {
        assert_int_equal(lev_vt_start(r->vc, "pc_gated", &arg, sizeof arg, &r->id[r->nvt]), 0);
        assert_int_equal(r->id[r->nvt], (lev_vt_id)(r->nvt + 2));
        r->nvt++;
    }
}

/* Opens the gate and joins every VT: each result must be the fault-free
 * checksum. */
static void s_join_all(run *r)
{
    FILE *g = fopen(r->gate, "w");
    assert_non_null(g);
    fclose(g);
    uint64_t want = pc_steps(PC_SPIN_SEED, STEPS, s_work, NULL, 0);
    for (int i = 0; i < r->nvt; i++) {
        void *res = NULL;
        size_t len = 0;
        int rc = lev_vt_join(r->vc, r->id[i], &res, &len, LIMIT);
        if (rc)
            fail_msg("VT %llu: %s: %s", (unsigned long long)r->id[i], lev_strerror(rc),
                     lev_errdetail());
        assert_int_equal(len, sizeof want);
        uint64_t got;
        memcpy(&got, res, sizeof got);
        assert_true(got == want);
        free(res);
        /* joined once: a second join knows no such VT */
        assert_int_equal(lev_vt_join(r->vc, r->id[i], NULL, NULL, 0), LEV_ENOVT);
    }
    s_check_reports(&r->rep, r->nvt);
}

typedef struct want_ckpt {
    int nvt;
} want_ckpt;

/* Every VT runs and has an image held. */
static bool s_all_held(const char *js, void *ctx)
{
    want_ckpt *w = ctx;
    for (int v = 2; v < w->nvt + 2; v++) {
        char st[32];
        if (!js_vt_str(js, (uint64_t)v, "state", st, sizeof st) || strcmp(st, "running") ||
            js_vt_int(js, (uint64_t)v, "checkpoint_age_ms") < 0)
            return false;
    }
    return true;
}

typedef struct want_moved {
    uint64_t vt;
    char gone[128]; /* the host it must have left */
    uint32_t epoch; /* at least */
} want_moved;

static bool s_moved(const char *js, void *ctx)
{
    want_moved *w = ctx;
    char host[128];
    return js_vt_str(js, w->vt, "host", host, sizeof host) && *host && strcmp(host, w->gone) &&
           js_vt_int(js, w->vt, "epoch") >= w->epoch;
}

/* The host of VT vt, as the deployer at m->p[0] sees it. */
static void s_host(const mesh *m, uint64_t vt, char *out, size_t cap)
{
    char *js = mesh_status(m->p[0].ep, LIMIT);
    assert_non_null(js);
    assert_true(js_vt_str(js, vt, "host", out, cap));
    free(js);
}

/* Once each of the nvt VTs runs with an image held, sends sig to the host
 * of VT 2 and returns its index; mv is what its move must look like. */
static int s_signal_host(mesh *m, int nvt, want_moved *mv, int sig)
{
    want_ckpt c = {nvt};
    assert_true(mesh_wait(m->p[0].ep, s_all_held, &c, LIMIT));
    *mv = (want_moved){.vt = 2, .epoch = 2};
    s_host(m, 2, mv->gone, sizeof mv->gone);
    int victim = s_index(m, mv->gone);
    assert_true(victim > 0);
    mesh_signal(&m->p[victim], sig);
    return victim;
}

typedef struct want_quota {
    int n;
    const char *without;
} want_quota;

static bool s_quota(const char *js, void *ctx)
{
    want_quota *w = ctx;
    bool has = false;
    return js_workers(js, w->without, &has) == w->n && !has;
}

/* ===================================================================
 * Scenarios
 * =================================================================== */

/* The VC's counts (lev_vc_stats_get), asserting the call succeeds. */
static lev_vc_stats s_stats(lev_vc *vc)
{
    lev_vc_stats st;
    int rc = lev_vc_stats_get(vc, &st);
    if (rc)
        fail_msg("lev_vc_stats_get: %s: %s", lev_strerror(rc), lev_errdetail());
    return st;
}

/* The count `key` of status js's "image_shipping" (peer i's). */
static long long s_shipping(const char *js, int i, const char *key)
{
    long long n = js_obj_sum(js, "image_shipping", key);
    if (n == INT64_MIN)
        fail_msg("peer %d: no image_shipping.%s in its status", i, key);
    return n;
}

/* Peer i's status document (the caller frees it). */
static char *s_status_of(const mesh *m, int i)
{
    char *js = mesh_status(m->p[i].ep, LIMIT);
    assert_non_null(js);
    return js;
}

/* The images to resume that the live peers lent their executors in their
 * resume slots (status "image_shipping": resumes_in_slot). */
static long long s_resumes_in_slot(const mesh *m)
{
    long long all = 0;
    for (int i = 0; i < m->n; i++) {
        if (!m->p[i].pid)
            continue;
        char *js = s_status_of(m, i);
        all += s_shipping(js, i, "resumes_in_slot");
        free(js);
    }
    return all;
}

/* kill -9 of a worker mid-run: its VTs resume elsewhere from their
 * newest images (lent to their new executors in the workers' resume
 * slots), the quota is refilled, every result is right; the VC's counts
 * show the lost worker, the images and the resumes. */
static void t_kill_worker(void **state)
{
    (void)state;
    mesh m;
    s_mesh(&m, 4);
    run r;
    s_open(&r, &m, 3, 200);
    s_start(&r, 6);
    want_moved mv;
    int victim = s_signal_host(&m, 6, &mv, SIGKILL);
    assert_true(mesh_reap(&m.p[victim], LIMIT));
    assert_true(mesh_wait(m.p[0].ep, s_moved, &mv, LIMIT));
    want_quota q = {3, mv.gone};
    assert_true(mesh_wait(m.p[0].ep, s_quota, &q, LIMIT));
    lev_vc_stats st = s_stats(r.vc);
    assert_int_equal(st.peers, 3);
    assert_int_equal(st.cores, 3);
    assert_int_equal(st.vts, 6);
    assert_int_equal(st.vts_ended, 0);
    assert_true(st.checkpoints >= 6); /* every VT had an image held before the kill */
    assert_true(st.resumes >= 1);     /* VT 2 at least, from its held image */
    assert_true(st.lost_peers >= 1);
    long long in_slot = s_resumes_in_slot(&m);
    if (in_slot < 1 || in_slot > (long long)st.resumes)
        fail_msg("%lld resumes lent in a resume slot, of %llu", in_slot,
                 (unsigned long long)st.resumes);
    s_join_all(&r);
    st = s_stats(r.vc);
    assert_int_equal(st.vts, 0);
    assert_int_equal(st.vts_ended, 6);
    assert_true(st.resumes >= 1 && st.lost_peers >= 1);
    assert_int_equal(lev_vc_close(&r.vc), 0);
    mesh_stop_all(m.p, m.n);
}

typedef struct want_holder {
    uint64_t vt;
    char not [128];
} want_holder;

/* Another peer than the one killed has acknowledged an image of the VT. */
static bool s_new_holder(const char *js, void *ctx)
{
    want_holder *w = ctx;
    char h[128];
    return js_vt_holder(js, w->vt, "held", h, sizeof h) && strcmp(h, w->not );
}

/* Every live peer's executors lent each periodic image to their daemon in
 * shared memory (status "image_shipping": lent == images); how many
 * images the peers made in all. */
static long long s_all_lent(const mesh *m)
{
    long long all = 0;
    for (int i = 0; i < m->n; i++) {
        if (!m->p[i].pid)
            continue;
        char *js = s_status_of(m, i); /* both counts from one document */
        long long images = s_shipping(js, i, "images"), lent = s_shipping(js, i, "lent");
        free(js);
        if (lent != images)
            fail_msg("peer %d: %lld of %lld images lent in shared memory", i, lent, images);
        all += images;
    }
    return all;
}

/* kill -9 of a peer that holds an image (every image was lent to its
 * daemon in shared memory): the VT gets another holder; then
 * its worker is killed too, and it resumes from the new holder's image. */
static void t_kill_holder(void **state)
{
    (void)state;
    mesh m;
    s_mesh(&m, 4);
    run r;
    s_open(&r, &m, 3, 200);
    s_start(&r, 3);
    want_ckpt c = {3};
    assert_true(mesh_wait(m.p[0].ep, s_all_held, &c, LIMIT));
    assert_true(s_all_lent(&m) > 0);
    want_holder wh = {.vt = 2};
    char *js = mesh_status(m.p[0].ep, LIMIT);
    assert_non_null(js);
    assert_true(js_vt_holder(js, 2, "held", wh.not, sizeof wh.not ));
    free(js);
    int holder = s_index(&m, wh.not );
    assert_true(holder > 0); /* the client's own peer holds only as a last resort */
    mesh_signal(&m.p[holder], SIGKILL);
    assert_true(mesh_reap(&m.p[holder], LIMIT));
    assert_true(mesh_wait(m.p[0].ep, s_new_holder, &wh, LIMIT));
    want_moved mv;
    int victim = s_signal_host(&m, 3, &mv, SIGKILL);
    assert_true(victim != holder);
    assert_true(mesh_reap(&m.p[victim], LIMIT));
    assert_true(mesh_wait(m.p[0].ep, s_moved, &mv, LIMIT));
    s_join_all(&r);
    assert_int_equal(lev_vc_close(&r.vc), 0);
    mesh_stop_all(m.p, m.n);
}

typedef struct want_no_vts {
    int dummy;
} want_no_vts;

/* The peer runs no VT of any VC any more. */
static bool s_idle(const char *js, void *ctx)
{
    (void)ctx;
    return strstr(js, "\"executors\":[]") != NULL ||
           js_count(js, "\"vts\":0,") == js_count(js, "\"pid\":");
}

/* SIGSTOP of a worker past the failure timeout: its VTs resume elsewhere;
 * SIGCONT: it learns it is fenced and stops its copies; the client gets
 * each result and each report exactly once. */
static void t_stop_cont(void **state)
{
    (void)state;
    mesh m;
    s_mesh(&m, 3);
    run r;
    s_open(&r, &m, 2, 200);
    s_start(&r, 4);
    want_moved mv;
    int victim = s_signal_host(&m, 4, &mv, SIGSTOP);
    assert_true(mesh_wait(m.p[0].ep, s_moved, &mv, LIMIT));
    mesh_signal(&m.p[victim], SIGCONT);
    want_no_vts idle = {0};
    assert_true(mesh_wait(m.p[victim].ep, s_idle, &idle, LIMIT));
    s_join_all(&r);
    assert_int_equal(lev_vc_close(&r.vc), 0);
    mesh_stop_all(m.p, m.n);
}

/* The first peer sees peer ep in that state. */
typedef struct want_state {
    const char *ep;
    const char *state; /* NULL: dead, left or forgotten */
} want_state;

static bool s_peer_is(const char *js, void *ctx)
{
    want_state *w = ctx;
    char st[32];
    js_peer_state(js, w->ep, st, sizeof st);
    if (w->state)
        return !strcmp(st, w->state);
    return !*st || !strcmp(st, "dead") || !strcmp(st, "left");
}

/* The host of VT vt and the first peer that acknowledged an image of it. */
static void s_host_and_holder(const mesh *m, uint64_t vt, char *host, char *held, size_t cap)
{
    char *js = mesh_status(m->p[0].ep, LIMIT);
    assert_non_null(js);
    assert_true(js_vt_str(js, vt, "host", host, cap));
    assert_true(js_vt_holder(js, vt, "held", held, cap));
    free(js);
    assert_true(strcmp(host, held) != 0); /* a VT's host never holds its image */
}

/* A holder stalls (SIGSTOP) and, once the deployer suspects it, the host
 * of its VT is killed and the holder goes on (a stall shorter than the
 * suspicion timeout, --suspect-ms 3000): the suspected holder kept its
 * place and its image, so the VT resumes from that image, never from its
 * start. One replica, so that no other copy hides it. */
static void t_stall_holder_kill(void **state)
{
    (void)state;
    const char *extra[] = {"--suspect-ms", "3000", NULL};
    mesh m;
    s_mesh_with(&m, 4, extra);
    run r;
    s_open_r(&r, &m, 3, 200, 1);
    s_start(&r, 3);
    want_ckpt c = {3};
    assert_true(mesh_wait(m.p[0].ep, s_all_held, &c, LIMIT));
    want_moved mv = {.vt = 2, .epoch = 2};
    char held[128];
    s_host_and_holder(&m, 2, mv.gone, held, sizeof held);
    int holder = s_index(&m, held), host = s_index(&m, mv.gone);
    assert_true(holder > 0 && host > 0);
    mesh_signal(&m.p[holder], SIGSTOP);
    want_state ws = {held, "suspect"};
    assert_true(mesh_wait(m.p[0].ep, s_peer_is, &ws, LIMIT));
    mesh_signal(&m.p[host], SIGKILL);
    mesh_signal(&m.p[holder], SIGCONT);
    assert_true(mesh_reap(&m.p[host], LIMIT));
    assert_true(mesh_wait(m.p[0].ep, s_moved, &mv, LIMIT));
    s_join_all(&r);
    lev_vc_stats st = s_stats(r.vc);
    assert_int_equal(st.restarts, 0);
    assert_true(st.resumes >= 1 && st.lost_peers >= 1);
    assert_int_equal(lev_vc_close(&r.vc), 0);
    mesh_stop_all(m.p, m.n);
}

/* Two workers killed together, the host of a VT and a holder of its image:
 * with two replicas the other holder has it, and no VT restarts. */
static void t_kill_two(void **state)
{
    (void)state;
    mesh m;
    s_mesh(&m, 5);
    run r;
    s_open_r(&r, &m, 4, 200, 2);
    s_start(&r, 4);
    want_ckpt c = {4};
    assert_true(mesh_wait(m.p[0].ep, s_all_held, &c, LIMIT));
    want_moved mv = {.vt = 2, .epoch = 2};
    char held[128];
    s_host_and_holder(&m, 2, mv.gone, held, sizeof held);
    int holder = s_index(&m, held), host = s_index(&m, mv.gone);
    assert_true(holder > 0 && host > 0);
    mesh_signal(&m.p[host], SIGKILL);
    mesh_signal(&m.p[holder], SIGKILL);
    assert_true(mesh_reap(&m.p[host], LIMIT));
    assert_true(mesh_reap(&m.p[holder], LIMIT));
    assert_true(mesh_wait(m.p[0].ep, s_moved, &mv, LIMIT));
    s_join_all(&r);
    lev_vc_stats st = s_stats(r.vc);
    assert_int_equal(st.restarts, 0);
    assert_true(st.resumes >= 1 && st.lost_peers >= 2);
    assert_int_equal(lev_vc_close(&r.vc), 0);
    mesh_stop_all(m.p, m.n);
}

/* A worker stopped for 3 s under load, within the suspicion timeout
 * (--suspect-ms 8000): suspected, then refuted; it is not fenced, its VTs
 * keep their host and epoch, and the VC counts no lost worker. */
static void t_stall_no_fence(void **state)
{
    (void)state;
    const char *extra[] = {"--suspect-ms", "8000", NULL};
    mesh m;
    s_mesh_with(&m, 3, extra);
    run r;
    s_open(&r, &m, 3, 200);
    s_start(&r, 6);
    want_ckpt c = {6};
    assert_true(mesh_wait(m.p[0].ep, s_all_held, &c, LIMIT));
    char host[128];
    s_host(&m, 2, host, sizeof host);
    int victim = s_index(&m, host);
    assert_true(victim > 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    mesh_signal(&m.p[victim], SIGSTOP);
    want_state ws = {host, "suspect"};
    assert_true(mesh_wait(m.p[0].ep, s_peer_is, &ws, LIMIT));
    /* the fault is a stall of 3 s: the rest of it, then the worker goes on */
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long spent = (t1.tv_sec - t0.tv_sec) * 1000L + (t1.tv_nsec - t0.tv_nsec) / 1000000L;
    if (spent < 3000) {
        struct timespec rest = {(3000 - spent) / 1000, ((3000 - spent) % 1000) * 1000000L};
        nanosleep(&rest, NULL);
    }
    mesh_signal(&m.p[victim], SIGCONT);
    ws.state = "alive";
    assert_true(mesh_wait(m.p[0].ep, s_peer_is, &ws, LIMIT));
    char *js = mesh_status(m.p[0].ep, LIMIT);
    assert_non_null(js);
    char now_host[128];
    assert_true(js_vt_str(js, 2, "host", now_host, sizeof now_host));
    assert_string_equal(now_host, host);
    assert_int_equal(js_vt_int(js, 2, "epoch"), 1);
    free(js);
    lev_vc_stats st = s_stats(r.vc);
    assert_int_equal(st.lost_peers, 0);
    assert_int_equal(st.resumes, 0);
    assert_int_equal(st.restarts, 0);
    s_join_all(&r);
    assert_int_equal(lev_vc_close(&r.vc), 0);
    mesh_stop_all(m.p, m.n);
}

/* SIGTERM of a worker: it migrates its VTs (live images) and exits 0. */
static void t_sigterm(void **state)
{
    (void)state;
    mesh m;
    s_mesh(&m, 3);
    run r;
    s_open(&r, &m, 3, 200);
    s_start(&r, 4);
    want_moved mv;
    int victim = s_signal_host(&m, 4, &mv, SIGTERM);
    assert_true(mesh_reap(&m.p[victim], LIMIT));
    assert_true(WIFEXITED(m.p[victim].status));
    assert_int_equal(WEXITSTATUS(m.p[victim].status), 0);
    assert_true(mesh_wait(m.p[0].ep, s_moved, &mv, LIMIT));
    s_join_all(&r);
    assert_int_equal(lev_vc_close(&r.vc), 0);
    mesh_stop_all(m.p, m.n);
}

typedef struct want_on {
    const char *ep;
} want_on;

static bool s_worker_in(const char *js, void *ctx)
{
    bool has = false;
    js_workers(js, ((want_on *)ctx)->ep, &has);
    return has;
}

/* Two or more of the first n VTs run on the peer ep. */
typedef struct want_hosted {
    const char *ep;
    int n;
} want_hosted;

static bool s_hosted(const char *js, void *ctx)
{
    const want_hosted *h = ctx;
    int on = 0;
    for (int v = 2; v < h->n + 2; v++) {
        char host[128];
        if (js_vt_str(js, (uint64_t)v, "host", host, sizeof host) && !strcmp(host, h->ep))
            on++;
    }
    return on >= 2;
}

/* A worker that joins mid-run is enrolled and receives VTs: new ones, or
 * ones moved from the loaded worker (whichever comes first). */
static void t_join_midrun(void **state)
{
    (void)state;
    mesh m;
    s_mesh(&m, 1);
    run r;
    s_open(&r, &m, 0, 200);
    s_start(&r, 3);
    s_peer(&m, 2, "1", NULL);
    want_on w = {m.p[2].ep};
    assert_true(mesh_wait(m.p[0].ep, s_worker_in, &w, LIMIT));
    s_start(&r, 3);
    want_hosted h = {m.p[2].ep, r.nvt};
    assert_true(mesh_wait(m.p[0].ep, s_hosted, &h, LIMIT));
    s_join_all(&r);
    assert_int_equal(lev_vc_close(&r.vc), 0);
    mesh_stop_all(m.p, m.n);
}

typedef struct want_placed {
    uint64_t vt;
    const char *host, *why;
} want_placed;

/* VT vt runs on host, placed there for reason why. */
static bool s_placed(const char *js, void *ctx)
{
    want_placed *w = ctx;
    char host[128], why[64];
    return js_vt_str(js, w->vt, "host", host, sizeof host) && !strcmp(host, w->host) &&
           js_vt_str(js, w->vt, "placed", why, sizeof why) && !strcmp(why, w->why);
}

/* A VT alone on a slow worker moves to a worker over 1.5x as fast when
 * that one joins; the status says why each placement was made. */
static void t_faster_joins(void **state)
{
    (void)state;
    mesh m;
    memset(&m, 0, sizeof m);
    s_peer(&m, 0, "-1", NULL);
    s_peer(&m, 1, "1", (const char *const[]){"--rate", "300", NULL});
    want_alive a = {2};
    assert_true(mesh_wait(m.p[0].ep, s_alive, &a, LIMIT));
    run r;
    s_open(&r, &m, 0, 200);
    s_start(&r, 1);
    want_placed slow = {2, m.p[1].ep, "the only worker"};
    assert_true(mesh_wait(m.p[0].ep, s_placed, &slow, LIMIT));
    s_peer(&m, 2, "1", NULL); /* rate 1000 */
    want_placed fast = {2, m.p[2].ep, "moved to a faster free core"};
    assert_true(mesh_wait(m.p[0].ep, s_placed, &fast, LIMIT));
    s_join_all(&r);
    assert_int_equal(lev_vc_close(&r.vc), 0);
    mesh_stop_all(m.p, m.n);
}

/* A task that crashes its executor fails after three crashes, with an
 * error the client sees; the other VTs are unharmed. */
static void t_crash_limit(void **state)
{
    (void)state;
    mesh m;
    s_mesh(&m, 2);
    run r;
    s_open(&r, &m, 2, 200);
    s_start(&r, 2);
    lev_vt_id bad;
    assert_int_equal(lev_vt_start(r.vc, "pc_crash", NULL, 0, &bad), 0);
    void *res = NULL;
    size_t len = 0;
    int rc = lev_vt_join(r.vc, bad, &res, &len, LIMIT);
    assert_int_equal(rc, LEV_EFAILED);
    assert_non_null(strstr(lev_errdetail(), "crashed its executor 3 times"));
    s_join_all(&r);
    assert_int_equal(lev_vc_close(&r.vc), 0);
    mesh_stop_all(m.p, m.n);
}

typedef struct want_text {
    const char *text;
} want_text;

static bool s_has_text(const char *js, void *ctx)
{
    return strstr(js, ((want_text *)ctx)->text) != NULL;
}

/* A worker whose executor cannot load the module is refused; the VTs run
 * on the others. */
static void t_bad_worker(void **state)
{
    (void)state;
    mesh m;
    s_mesh(&m, 1);
    const char *bogus[] = {"--executor-program", "/bin/false", NULL};
    s_peer(&m, 2, "1", bogus);
    want_alive w = {3};
    assert_true(mesh_wait(m.p[0].ep, s_alive, &w, LIMIT));
    run r;
    s_open(&r, &m, 0, 200);
    s_start(&r, 3);
    s_join_all(&r);
    char key[200];
    snprintf(key, sizeof key, "\"%s\":\"refused\"", m.p[2].ep);
    want_text t = {key};
    assert_true(mesh_wait(m.p[0].ep, s_has_text, &t, LIMIT));
    assert_int_equal(lev_vc_close(&r.vc), 0);
    mesh_stop_all(m.p, m.n);
}

/* The client's levpeer dies: pending joins end with LEV_EPEER. */
static void t_deployer_lost(void **state)
{
    (void)state;
    mesh m;
    s_mesh(&m, 1);
    run r;
    s_open(&r, &m, 1, 200);
    s_start(&r, 1);
    mesh_signal(&m.p[0], SIGKILL);
    assert_true(mesh_reap(&m.p[0], LIMIT));
    int rc = lev_vt_join(r.vc, r.id[0], NULL, NULL, LIMIT);
    assert_int_equal(rc, LEV_EPEER);
    assert_int_equal(lev_vt_start(r.vc, "pc_sum", NULL, 0, &r.id[1]), LEV_EPEER);
    /* the VC is freed all the same */
    assert_int_equal(lev_vc_close(&r.vc), 0);
    assert_null(r.vc);
    mesh_stop_all(m.p, m.n);
}

/* ===================================================================
 * Gossip and bad input
 * =================================================================== */

/* 32 peers converge to a full view; a killed one is removed everywhere. */
static void t_gossip32(void **state)
{
    (void)state;
    mesh m;
    memset(&m, 0, sizeof m);
    for (int i = 0; i < 32; i++)
        s_peer(&m, i, "-1", NULL);
    want_alive all = {32};
    for (int i = 0; i < 32; i++)
        assert_true(mesh_wait(m.p[i].ep, s_alive, &all, LIMIT));
    mesh_signal(&m.p[31], SIGKILL);
    assert_true(mesh_reap(&m.p[31], LIMIT));
    want_state gone = {m.p[31].ep, NULL};
    for (int i = 0; i < 31; i++)
        assert_true(mesh_wait(m.p[i].ep, s_peer_is, &gone, LIMIT));
    mesh_stop_all(m.p, m.n);
}

/* Sends frames on one DEALER, then asks for the status on the same one:
 * once the reply is in, the peer has handled every frame before it. */
static void s_send_then_status(void *zctx, const char *ep, const void *const *f, const size_t *len,
                               int n)
{
    void *s = zmq_socket(zctx, ZMQ_DEALER);
    int zero = 0;
    zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(s, ZMQ_ROUTING_ID, "test:bad", 8);
    assert_int_equal(zmq_connect(s, ep), 0);
    for (int i = 0; i < n; i++)
        zmq_send(s, f[i], len[i], i + 1 < n ? ZMQ_SNDMORE : 0);
    uint8_t hb[PC_HDR_LEN];
    pc_hdr h = pc_hdr_make(PC_S_STATUS, 0, 0, 0, 1);
    pc_hdr_encode(&h, hb);
    zmq_send(s, hb, sizeof hb, 0);
    zmq_pollitem_t it = {.socket = s, .events = ZMQ_POLLIN};
    bool status = false;
    for (int i = 0; i < 64 && !status; i++) {
        assert_true(zmq_poll(&it, 1, LIMIT) > 0);
        zmq_msg_t fr;
        zmq_msg_init(&fr);
        assert_true(zmq_msg_recv(&fr, s, 0) >= 0);
        pc_hdr got;
        if (pc_hdr_decode(zmq_msg_data(&fr), zmq_msg_size(&fr), &got, NULL) == 0)
            status = got.type == PC_S_STATUS_REPLY;
        zmq_msg_close(&fr);
        int more = 1;
        for (int k = 0; k < 8 && more; k++) {
            size_t sz = sizeof more;
            zmq_getsockopt(s, ZMQ_RCVMORE, &more, &sz);
            if (more) {
                zmq_msg_init(&fr);
                zmq_msg_recv(&fr, s, 0);
                zmq_msg_close(&fr);
            }
        }
    }
    assert_true(status);
    zmq_close(s);
}

/* One bad message: a header (type, vc, len as given) and an optional body. */
static void s_bad(void *zctx, const char *ep, uint32_t magic, uint16_t version, uint16_t type,
                  uint64_t vc, uint32_t len, const void *body, size_t blen)
{
    pc_hdr h = pc_hdr_make(type, vc, 3, 1, 0);
    h.magic = magic;
    h.version = version;
    h.len = len;
    uint8_t hb[PC_HDR_LEN];
    pc_hdr_encode(&h, hb);
    const void *f[2] = {hb, body};
    size_t l[2] = {sizeof hb, blen};
    s_send_then_status(zctx, ep, f, l, body ? 2 : 1);
}

/* Malformed, truncated, oversized, unknown-version and misaddressed
 * messages are dropped with a logged reason; the peer keeps serving. */
static void t_bad_input(void **state)
{
    (void)state;
    mesh m;
    memset(&m, 0, sizeof m);
    const char *extra[] = {"--max-msg", "65536", "--log-level", "debug", NULL};
    s_peer(&m, 0, "1", extra);
    const char *ep = m.p[0].ep;
    void *z = zmq_ctx_new();
    const void *f1[1] = {"hello"};
    size_t l1[1] = {5};
    s_send_then_status(z, ep, f1, l1, 1);
    s_bad(z, ep, 0x12345678u, PC_WIRE_VERSION, PC_C_PING, 0, 0, NULL, 0);
    s_bad(z, ep, PC_WIRE_MAGIC, 9, PC_C_PING, 0, 0, NULL, 0);
    s_bad(z, ep, PC_WIRE_MAGIC, PC_WIRE_VERSION, 0x7777, 0, 0, NULL, 0);
    s_bad(z, ep, PC_WIRE_MAGIC, PC_WIRE_VERSION, PC_C_START, 5, 99, "xx", 2);
    uint8_t trunc[6] = {1, 0, 0, 0, 2, 0};
    s_bad(z, ep, PC_WIRE_MAGIC, PC_WIRE_VERSION, PC_C_OPEN, 0, 6, trunc, 6);
    /* a payload cut short is refused before anything reads it; a whole
     * one for a VC that is not there is answered so */
    s_bad(z, ep, PC_WIRE_MAGIC, PC_WIRE_VERSION, PC_C_START, 424242, 0, NULL, 0);
    s_bad(z, ep, PC_WIRE_MAGIC, PC_WIRE_VERSION, PC_W_DONE, 424242, 0, NULL, 0);
    /* a stall report cut short; a whole one, and a holder's sender log,
     * for a VC that is not there; a request for a sender log not held */
    s_bad(z, ep, PC_WIRE_MAGIC, PC_WIRE_VERSION, PC_W_STALL, 424242, 0, NULL, 0);
    uint8_t nodets[4] = {0};
    s_bad(z, ep, PC_WIRE_MAGIC, PC_WIRE_VERSION, PC_W_STALL, 424243, sizeof nodets, nodets,
          sizeof nodets);
    s_bad(z, ep, PC_WIRE_MAGIC, PC_WIRE_VERSION, PC_H_LOGGED, 424244, sizeof nodets, nodets,
          sizeof nodets);
    s_bad(z, ep, PC_WIRE_MAGIC, PC_WIRE_VERSION, PC_H_LOG, 424245, 0, NULL, 0);
    pc_wbuf st;
    pc_wbuf_init(&st);
    pc_put_str(&st, "pc_sum");
    pc_put_blob(&st, NULL, 0);
    s_bad(z, ep, PC_WIRE_MAGIC, PC_WIRE_VERSION, PC_C_START, 424242, (uint32_t)st.len, st.data,
          st.len);
    pc_wbuf_free(&st);
    s_bad(z, ep, PC_WIRE_MAGIC, PC_WIRE_VERSION, PC_M_PING, 0, 3, "abc", 3);
    s_bad(z, ep, PC_WIRE_MAGIC, PC_WIRE_VERSION, PC_X_RUN, 0, 0, NULL, 0);
    /* a global's value by its hash, cut short; an image slot from afar */
    uint8_t ref[20] = {2};
    s_bad(z, ep, PC_WIRE_MAGIC, PC_WIRE_VERSION, PC_W_IN_REF, 424242, sizeof ref, ref, sizeof ref);
    uint8_t slot[29] = {0};
    s_bad(z, ep, PC_WIRE_MAGIC, PC_WIRE_VERSION, PC_X_IMAGE_SLOT, 0, sizeof slot, slot,
          sizeof slot);
    /* an image to hold that is not an image */
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_str(&b, ep);
    pc_put_u64(&b, 0);
    static uint8_t junk[1000];
    pc_hdr h = pc_hdr_make(PC_H_HOLD, 9, 3, 1, 1);
    h.len = (uint32_t)(b.len + sizeof junk);
    uint8_t hb[PC_HDR_LEN];
    pc_hdr_encode(&h, hb);
    const void *f3[3] = {hb, b.data, junk};
    size_t l3[3] = {sizeof hb, b.len, sizeof junk};
    s_send_then_status(z, ep, f3, l3, 3);
    /* a patch of an image this holder does not hold: it asks for whole ones */
    pc_put_u64(&b, 7);    /* base image number */
    pc_put_u64(&b, 4096); /* image length */
    pc_hdr ph = pc_hdr_make(PC_H_PATCH, 9, 3, 1, 8);
    ph.len = (uint32_t)(b.len + 4);
    uint8_t phb[PC_HDR_LEN];
    pc_hdr_encode(&ph, phb);
    static uint8_t empty_patch[4];
    const void *f5[3] = {phb, b.data, empty_patch};
    size_t l5[3] = {sizeof phb, b.len, sizeof empty_patch};
    s_send_then_status(z, ep, f5, l5, 3);
    pc_wbuf_free(&b);
    /* larger than --max-msg: the connection is dropped, the peer goes on */
    static uint8_t huge[200000];
    const void *f4[2] = {hb, huge};
    size_t l4[2] = {sizeof hb, sizeof huge};
    mesh_send_raw(ep, f4, l4, 2);
    char *js = mesh_status(ep, LIMIT);
    assert_non_null(js);
    free(js);
    zmq_ctx_term(z);

    assert_true(mesh_log_has(&m.p[0], "header frame is not 40 bytes"));
    assert_true(mesh_log_has(&m.p[0], "bad magic"));
    assert_true(mesh_log_has(&m.p[0], "unknown protocol version"));
    assert_true(mesh_log_has(&m.p[0], "unknown message type"));
    assert_true(mesh_log_has(&m.p[0], "header length does not match"));
    assert_true(mesh_log_has(&m.p[0], "refused C_START"));
    assert_true(mesh_log_has(&m.p[0], "refused W_DONE"));
    assert_true(mesh_log_has(&m.p[0], "refused W_STALL"));
    assert_true(mesh_log_has(&m.p[0], "no VC 0000000000067933"));
    assert_true(mesh_log_has(&m.p[0], "no VC 0000000000067934"));
    assert_true(mesh_log_has(&m.p[0], "no VC 0000000000067932"));
    assert_true(mesh_log_has(&m.p[0], "dropped M_PING"));
    assert_true(mesh_log_has(&m.p[0], "dropped X_RUN"));
    assert_true(mesh_log_has(&m.p[0], "refused W_IN_REF"));
    assert_true(mesh_log_has(&m.p[0], "dropped X_IMAGE_SLOT"));
    assert_true(mesh_log_has(&m.p[0], "not an image envelope"));
    assert_true(mesh_log_has(&m.p[0], "against image 7, not held"));
    mesh_stop_all(m.p, m.n);
}

static int s_log_count(const mesh_peer *p, const char *text);

/* A key pair written to s_dir/NAME.key and NAME.pub; its public key. */
static void s_keygen(const char *name, pc_keypair *k)
{
    char base[sizeof s_dir + 64], err[256];
    snprintf(base, sizeof base, "%s/%s", s_dir, name);
    assert_int_equal(pc_key_generate(k), 0);
    if (pc_key_write(base, k, err, sizeof err))
        fail_msg("%s", err);
}

static bool s_has_peer(const char *js, void *ctx) { return strstr(js, (const char *)ctx) != NULL; }

/* A mesh with keys (--key, --authorized-keys): its peers find each other
 * and run a VC for a client whose key it admits; a client with no keys,
 * or with a key it does not admit, is refused (lev_vc_open fails saying
 * so), its address logged once however often it tried; a peer of
 * another mesh's key never joins; levctl and the status need the keys
 * too. A key file that is not one stops levpeer with status 2. */
static void t_keys(void **state)
{
    (void)state;
    pc_keypair mesh_k, alice, mallory, other;
    s_keygen("mesh", &mesh_k);
    s_keygen("alice", &alice);
    s_keygen("mallory", &mallory);
    s_keygen("other", &other);
    char keys[sizeof s_dir + 16], path[sizeof s_dir + 64], meshkey[sizeof s_dir + 32];
    snprintf(keys, sizeof keys, "%s/admitted", s_dir);
    assert_int_equal(mkdir(keys, 0700), 0);
    snprintf(path, sizeof path, "%s/admitted/alice.pub", s_dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "public-key = %s\n", alice.pub);
    fclose(f);
    snprintf(meshkey, sizeof meshkey, "%s/mesh.key", s_dir);
    mesh m;
    memset(&m, 0, sizeof m);
    const char *extra[] = {"--key", meshkey, "--authorized-keys", keys, NULL};
    setenv("LEV_MESH_KEY", meshkey, 1); /* the test's own status queries */
    s_peer(&m, 0, "-1", extra);
    s_peer(&m, 1, "1", extra);
    want_alive two = {2};
    assert_true(mesh_wait(m.p[0].ep, s_alive, &two, LIMIT));
    /* alice's client runs a VT */
    char alicekey[sizeof s_dir + 32];
    snprintf(alicekey, sizeof alicekey, "%s/alice.key", s_dir);
    setenv("LEV_CLIENT_KEY", alicekey, 1);
    lev_vc_options o = {.workers = 1, .peer = m.p[0].ep};
    lev_vc *vc = NULL;
    int rc = lev_vc_open(&vc, &o);
    if (rc)
        fail_msg("alice: lev_vc_open: %s: %s", lev_strerror(rc), lev_errdetail());
    long n = 1000, *sum = NULL;
    size_t len = 0;
    lev_vt_id id;
    assert_int_equal(lev_vt_start(vc, "pc_sum", &n, sizeof n, &id), 0);
    assert_int_equal(lev_vt_join(vc, id, (void **)&sum, &len, LIMIT), 0);
    assert_int_equal(*sum, 499500);
    free(sum);
    assert_int_equal(lev_vc_close(&vc), 0);
    /* mallory's key is not admitted; no key at all is not either */
    setenv("LEV_PEER_TIMEOUT_MS", "1500", 1);
    char malkey[sizeof s_dir + 32];
    snprintf(malkey, sizeof malkey, "%s/mallory.key", s_dir);
    setenv("LEV_CLIENT_KEY", malkey, 1);
    for (int i = 0; i < 2; i++) {
        rc = lev_vc_open(&vc, &o);
        assert_int_equal(rc, LEV_EPEER);
        if (!strstr(lev_errdetail(), "the peer may have refused this client's key"))
            fail_msg("mallory: %s", lev_errdetail());
    }
    unsetenv("LEV_CLIENT_KEY");
    unsetenv("LEV_MESH_KEY");
    assert_int_equal(lev_vc_open(&vc, &o), LEV_EPEER);
    assert_null(mesh_status(m.p[0].ep, 1000)); /* nor the status */
    unsetenv("LEV_PEER_TIMEOUT_MS");
    setenv("LEV_MESH_KEY", meshkey, 1);
    /* a peer of another mesh's key */
    char otherkey[sizeof s_dir + 32];
    snprintf(otherkey, sizeof otherkey, "%s/other.key", s_dir);
    const char *stranger[] = {"--key", otherkey, NULL};
    s_peer(&m, 2, "1", stranger);
    /* it is refused (logged), and after a VC ran to its end it still is
     * not in the mesh */
    assert_true(mesh_log_has(&m.p[0], "its key is not authorised"));
    lev_vc_options o2 = {.workers = 1, .peer = m.p[0].ep};
    assert_int_equal(lev_vc_open(&vc, &o2), 0);
    assert_int_equal(lev_vt_start(vc, "pc_sum", &n, sizeof n, &id), 0);
    assert_int_equal(lev_vt_join(vc, id, (void **)&sum, &len, LIMIT), 0);
    free(sum);
    assert_int_equal(lev_vc_close(&vc), 0);
    char *js = mesh_status(m.p[0].ep, LIMIT);
    assert_non_null(js);
    assert_false(s_has_peer(js, m.p[2].ep));
    free(js);
    /* mallory's two clients, refused more than once each (zmq retries),
     * logged once for their address */
    if (s_log_count(&m.p[0], "refused a connection from") > 2)
        fail_msg("refusals logged %d times", s_log_count(&m.p[0], "refused a connection from"));
    /* a public key where the pair is needed: status 2, the file named */
    char pubonly[sizeof s_dir + 32];
    snprintf(pubonly, sizeof pubonly, "%s/mesh.pub", s_dir);
    const char *bad[] = {"--key", pubonly, NULL};
    mesh_peer b;
    memset(&b, 0, sizeof b);
    const char *args[] = {"--listen", mesh_listen(), "--key", pubonly, NULL};
    (void)bad;
    assert_int_not_equal(mesh_start(&b, LEVPEER_PATH, s_dir, 5000, args), 0);
    assert_true(mesh_reap(&b, LIMIT));
    assert_true(WIFEXITED(b.status) && WEXITSTATUS(b.status) == 2);
    assert_true(mesh_log_has(&b, "mesh.pub: a public key only"));
    unsetenv("LEV_MESH_KEY");
    mesh_stop_all(m.p, m.n);
}

/* Lines of p's log holding text. */
static int s_log_count(const mesh_peer *p, const char *text)
{
    FILE *f = fopen(p->log, "r");
    char line[4096];
    int n = 0;
    while (f && fgets(line, sizeof line, f))
        n += strstr(line, text) != NULL;
    if (f)
        fclose(f);
    return n;
}

/* A flood of bad messages from one source (frames of a bad magic, and
 * well-formed requests refused): the log holds at most PC_LOG_SRC_LINES
 * lines of each kind from it and, once the peer stops, the counts of the
 * rest; no line holds a control byte; the peer keeps serving. (Escaping
 * itself: test_log.c.) */
static void t_log_flood(void **state)
{
    (void)state;
    mesh m;
    memset(&m, 0, sizeof m);
    s_peer(&m, 0, "1", NULL);
    const char *ep = m.p[0].ep;
    void *z = zmq_ctx_new();
    void *s = zmq_socket(z, ZMQ_DEALER);
    int zero = 0;
    zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(s, ZMQ_ROUTING_ID, "test:flood", 10);
    assert_int_equal(zmq_connect(s, ep), 0);
    const int n = 3000;
    uint8_t bad[PC_HDR_LEN], stall[PC_HDR_LEN];
    pc_hdr h = pc_hdr_make(PC_C_PING, 0, 0, 0, 0);
    h.magic = 0x12345678u;
    pc_hdr_encode(&h, bad);
    pc_hdr hs = pc_hdr_make(PC_W_STALL, 77, 3, 1, 0); /* a stall of no VT: refused whole */
    pc_hdr_encode(&hs, stall);
    for (int i = 0; i < n; i++) {
        zmq_send(s, bad, sizeof bad, 0);
        zmq_send(s, stall, sizeof stall, 0);
    }
    zmq_close(s);
    const void *f[1] = {"x"};
    size_t l[1] = {1};
    s_send_then_status(z, ep, f, l, 1); /* after the flood: it still answers */
    zmq_ctx_term(z);
    mesh_signal(&m.p[0], SIGTERM);
    assert_true(mesh_reap(&m.p[0], LIMIT));
    int magic = s_log_count(&m.p[0], "bad magic"), refused = s_log_count(&m.p[0], "W_STALL");
    fprintf(stderr, "log: %d lines of a bad magic, %d of a refused stall, %d counts told\n", magic,
            refused, s_log_count(&m.p[0], "more lines like"));
    if (magic < 1 || magic > PC_LOG_SRC_LINES + 1 || refused < 1 || refused > PC_LOG_SRC_LINES + 1)
        fail_msg("%d and %d lines of %d bad messages each", magic, refused, n);
    assert_true(mesh_log_has(&m.p[0], "more lines like"));
    FILE *lf = fopen(m.p[0].log, "r");
    char line[4096];
    while (lf && fgets(line, sizeof line, lf))
        for (const char *p = line; *p; p++)
            if ((unsigned char)*p < 0x20 && *p != '\n')
                fail_msg("a control byte 0x%02x in the log: %s", (unsigned char)*p, line);
    if (lf)
        fclose(lf);
    mesh_stop_all(m.p, m.n);
}

static bool s_measured_again(const char *js, void *ctx)
{
    (void)ctx;
    long long n = js_int(js, "rate_measurements");
    return n != INT64_MIN && n >= 2;
}

/* A peer that measures its rate measures it again once it is idle (a
 * few seconds after start) and still offers a rate; one given --rate
 * never measures. */
static void t_rate_again(void **state)
{
    (void)state;
    mesh m;
    memset(&m, 0, sizeof m);
    s_peer(&m, 0, "1", NULL); /* --rate 1000 */
    const char *args[] = {"--listen", mesh_listen(), "--cores", "1", "--join", m.p[0].ep, NULL};
    assert_int_equal(mesh_start(&m.p[1], LEVPEER_PATH, s_dir, LIMIT, args), 0);
    m.n = 2;
    assert_true(mesh_wait(m.p[1].ep, s_measured_again, NULL, LIMIT));
    char *js = mesh_status(m.p[1].ep, LIMIT);
    assert_non_null(js);
    assert_true(js_int(js, "rate") > 1000); /* its own, the first of "peers" */
    free(js);
    js = mesh_status(m.p[0].ep, LIMIT);
    assert_non_null(js);
    assert_non_null(strstr(js, "\"rate_measurements\":0,"));
    free(js);
    mesh_stop_all(m.p, m.n);
}

/* Settings from a config file, a later flag overriding one of them. */
static void t_config(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/levpeer.conf", s_dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("# a peer of the test mesh\nlisten = tcp://127.0.0.1:0\ncores = 3\n"
          "rate 4242   # per core\nsuspect-ms = 1500\n",
          f);
    fclose(f);
    mesh m;
    memset(&m, 0, sizeof m);
    const char *args[] = {"--config", path, "--cores", "2", NULL};
    assert_int_equal(mesh_start(&m.p[0], LEVPEER_PATH, s_dir, LIMIT, args), 0);
    m.n = 1;
    char *js = mesh_status(m.p[0].ep, LIMIT);
    assert_non_null(js);
    assert_non_null(strstr(js, "\"cores\":2,\"rate\":4242,"));
    free(js);
    mesh_stop_all(m.p, m.n);
}

int main(int argc, char **argv)
{
    const char *w = getenv("LEV_TEST_WORK");
    if (w && atol(w) > 0)
        s_work = atol(w);
    if (mesh_workdir(s_dir, sizeof s_dir, "mesh"))
        return 1;
    setenv("LEV_PEER_TIMEOUT_MS", "3000", 0);
    /* Executors at normal priority: at SCHED_IDLE (their default, the
     * machine's owner first) the other tests running beside these on a
     * busy machine would starve them for as long as they run. */
    setenv("LEV_EXEC_NICE", "0", 0);
    const struct CMUnitTest all[] = {
        cmocka_unit_test(t_kill_worker),  cmocka_unit_test(t_kill_holder),
        cmocka_unit_test(t_stop_cont),    cmocka_unit_test(t_sigterm),
        cmocka_unit_test(t_join_midrun),  cmocka_unit_test(t_crash_limit),
        cmocka_unit_test(t_bad_worker),   cmocka_unit_test(t_deployer_lost),
        cmocka_unit_test(t_gossip32),     cmocka_unit_test(t_bad_input),
        cmocka_unit_test(t_log_flood),    cmocka_unit_test(t_keys),
        cmocka_unit_test(t_config),       cmocka_unit_test(t_stall_holder_kill),
        cmocka_unit_test(t_kill_two),     cmocka_unit_test(t_stall_no_fence),
        cmocka_unit_test(t_faster_joins), cmocka_unit_test(t_rate_again),
    };
    return mesh_run_tests(all, sizeof all / sizeof *all, argc, argv, s_dir);
}
