/* test_fault.c - faults of the fault model against meshes of levpeer
 * processes on loopback, with a client (this program, which carries the
 * task module of fault_tasks.c) whose VTs count primes, pass values
 * around a ring and add to a locked global counter: a holder stalled
 * while a worker is killed, two workers that hold each other's images
 * killed together, a receive from a VT that fails for good, a worker
 * stopped on a loaded machine and continued, a peer of another mesh on a
 * killed peer's endpoint, and the spread of resumed VTs over workers of
 * different sizes. Every result must be exact and every join must return.
 *
 * No wait is for a time: each is for a state of a peer, a report or a
 * result, bounded. The only sleeps are the faults' own lengths (a holder
 * stalled 0.6 s with a kill 0.1 s into it, a worker stopped 3 s).
 * LEV_TEST_NOFAULT=1 runs a scenario without its fault, to compare the
 * times printed ("fault: NAME: ..."); LEV_TEST_PRIMES sets the range whose
 * primes the VTs count (the length of their work).
 * Run one scenario with `test_pc_fault NAME`; LEV_TEST_LOG=debug makes
 * the peers' logs say more, LEV_TEST_KEEP=1 keeps them.
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fault_tasks.h"
#include "leverage.h"
#include "mesh.h"

#ifndef LEVPEER_PATH
#error "LEVPEER_PATH must name the levpeer program"
#endif

#define MAXP 8
#define MAXHOG 64
#define LIMIT 120000  /* ms: the bound of every wait that must succeed */
#define OUTCOME 60000 /* ms: the bound of a wait for what a defect may withhold */
#define SETTLED 20000 /* ms: how soon a receive must learn of its sender's end */
#define ROUNDS 40     /* rounds of each pc_fault_work VT */
#define REPORTS 4     /* reports of each: one every quarter */

static char s_dir[256];
static bool s_nofault;            /* LEV_TEST_NOFAULT: the same run without its fault */
static int64_t s_below = 8000000; /* LEV_TEST_PRIMES: the range whose primes the VTs count */

/* ===================================================================
 * What a scenario started: killed and reaped by its teardown, passed or not
 * =================================================================== */

typedef struct mesh {
    mesh_peer p[MAXP];
    int cores[MAXP]; /* what each offers (-1: none) */
    int n;
} mesh;

static mesh s_a, s_b; /* the mesh of the VC, and a second one (endpoint_reuse) */
static lev_vc *s_vc;
static pid_t s_hog[MAXHOG];
static int s_nhog;
static bool s_passed;

static void s_hog_stop(void)
{
    for (int i = 0; i < s_nhog; i++) {
        kill(s_hog[i], SIGKILL);
        waitpid(s_hog[i], NULL, 0);
    }
    s_nhog = 0;
}

/* Starts one process per core that spins until killed: a loaded machine. */
static void s_hog_start(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    for (long i = 0; i < cores && s_nhog < MAXHOG; i++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            volatile uint64_t x = 0;
            for (;;)
                x++;
        }
        s_hog[s_nhog++] = pid;
    }
}

static void s_logs(const mesh *m)
{
    for (int i = 0; i < m->n; i++)
        mesh_print_log_tail(&m->p[i], 25);
}

static int s_teardown(void **state)
{
    (void)state;
    s_hog_stop();
    if (!s_passed) {
        s_logs(&s_a);
        s_logs(&s_b);
    }
    lev_vc_close(&s_vc);
    mesh_stop_all(s_a.p, s_a.n);
    mesh_stop_all(s_b.p, s_b.n);
    memset(&s_a, 0, sizeof s_a);
    memset(&s_b, 0, sizeof s_b);
    s_passed = false;
    return 0;
}

/* ===================================================================
 * Meshes
 * =================================================================== */

/* How the VCs carry messages: LEV_TEST_MESSAGES=direct (between
 * executors) or relay (through the deployer, the default). */
static const char *s_messages(void)
{
    const char *e = getenv("LEV_TEST_MESSAGES");
    return e && !strcmp(e, "direct") ? "direct" : "relay";
}

/* Starts peer i of m offering `cores` (-1: none), listening on `listen`
 * (NULL: this test's loopback address, a free port), joining `join`
 * (NULL: none), with `extra` flags. Failure detection is slower than the
 * default (a probe may take 400 ms, not 80), as in test_msg.c: on a
 * machine loaded by other tests and the sanitizers a peer too slow to
 * answer in time would be suspected for nothing. */
static void s_peer(mesh *m, int i, int cores, const char *listen, const char *join,
                   const char *const *extra)
{
    char c[16];
    snprintf(c, sizeof c, "%d", cores);
    const char *lvl = getenv("LEV_TEST_LOG") ? getenv("LEV_TEST_LOG") : "info";
    const char *args[32] = {"--listen",
                            listen ? listen : mesh_listen(),
                            "--cores",
                            c,
                            "--rate",
                            "1000",
                            "--log-level",
                            lvl,
                            "--period-ms",
                            "500",
                            "--probe-timeout-ms",
                            "400",
                            "--messages",
                            s_messages()};
    int n = 14;
    if (join) {
        args[n++] = "--join";
        args[n++] = join;
    }
    for (int k = 0; extra && extra[k] && n < 30; k++)
        args[n++] = extra[k];
    args[n] = NULL;
    if (mesh_start(&m->p[i], LEVPEER_PATH, s_dir, LIMIT, args))
        fail_msg("levpeer %d did not start", i);
    m->cores[i] = cores;
    if (i >= m->n)
        m->n = i + 1;
}

static bool s_alive(const char *js, void *ctx)
{
    return js_count(js, "\"state\":\"alive\"") >= *(int *)ctx;
}

/* A deployer-only peer and one worker for each entry of cores (nw of
 * them), every one seen alive by the first. */
static void s_mesh(mesh *m, const int *cores, int nw, const char *const *extra)
{
    memset(m, 0, sizeof *m);
    s_peer(m, 0, -1, NULL, NULL, extra);
    for (int i = 0; i < nw; i++)
        s_peer(m, i + 1, cores[i], NULL, m->p[0].ep, extra);
    int want = nw + 1;
    assert_true(mesh_wait(m->p[0].ep, s_alive, &want, LIMIT));
}

static int s_index(const mesh *m, const char *ep)
{
    for (int i = 1; i < m->n; i++)
        if (m->p[i].pid && !strcmp(m->p[i].ep, ep))
            return i;
    return -1;
}

static char *s_status(const mesh *m)
{
    char *js = mesh_status(m->p[0].ep, LIMIT);
    assert_non_null(js);
    return js;
}

/* The length of a fault (a stop, the time between two signals): a
 * deliberate schedule, not a wait for an outcome. */
static void s_fault_length(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (clock_nanosleep(CLOCK_MONOTONIC, 0, &t, &t))
        ;
}

static int64_t s_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ===================================================================
 * The client
 * =================================================================== */

typedef struct run {
    mesh_reports rep;
    fault_cfg cfg; /* of the pc_fault_work VTs */
    int64_t t0;    /* when the VTs started */
} run;

/* Opens the VC (s_vc) on m's first peer. */
static void s_open(run *r, const mesh *m, int quota, int replicas)
{
    memset(r, 0, sizeof *r);
    mesh_reports_init(&r->rep);
    lev_vc_options o = {
        .workers = quota, .checkpoint_ms = 200, .replicas = replicas, .peer = m->p[0].ep};
    int rc = lev_vc_open(&s_vc, &o);
    if (rc)
        fail_msg("lev_vc_open: %s: %s", lev_strerror(rc), lev_errdetail());
    assert_int_equal(lev_vc_on_report(s_vc, mesh_on_report, &r->rep), 0);
}

static void s_send(lev_vt_id vt, const void *buf, size_t len)
{
    int rc = lev_vt_send(s_vc, vt, buf, len);
    if (rc)
        fail_msg("lev_vt_send to %llu: %s: %s", (unsigned long long)vt, lev_strerror(rc),
                 lev_errdetail());
}

/* Starts n VTs of pc_fault_work (ring and counter) and sends each its
 * configuration; the counter starts at 0. */
static void s_start_work(run *r, int n)
{
    int64_t zero = 0;
    assert_int_equal(lev_global_set(s_vc, "counter", &zero, sizeof zero), 0);
    fault_cfg *c = &r->cfg;
    memset(c, 0, sizeof *c);
    c->n = n;
    c->rounds = ROUNDS;
    c->below = s_below;
    c->ring = 1;
    c->lock = 1;
    r->t0 = s_now_ms();
    for (int i = 0; i < n; i++)
        assert_int_equal(lev_vt_start(s_vc, "pc_fault_work", NULL, 0, &c->ids[i]), 0);
    for (int i = 0; i < n; i++) {
        c->me = i;
        s_send(c->ids[i], c, sizeof *c);
    }
}

/* Opens every gate and joins every pc_fault_work VT: each result must be
 * exact (its primes, the ring's values), each VT's reports must have
 * come once each, and the counter must be n * rounds. Prints the time
 * from the VTs' start to the last join. */
static void s_finish(run *r, const char *name)
{
    fault_cfg c = r->cfg;
    for (int i = 0; i < c.n; i++) {
        int rc = lev_vt_send(s_vc, c.ids[i], "g", 1);
        if (rc && rc != LEV_ENOVT) /* LEV_ENOVT: it has ended, its join says how */
            fail_msg("lev_vt_send to %llu: %s: %s", (unsigned long long)c.ids[i], lev_strerror(rc),
                     lev_errdetail());
    }
    int wrong = 0;
    for (int i = 0; i < c.n; i++) {
        void *buf = NULL;
        size_t len = 0;
        int rc = lev_vt_join(s_vc, c.ids[i], &buf, &len, LIMIT);
        if (rc == LEV_ETIMEDOUT || rc == LEV_EPEER) {
            char *js = s_status(&s_a); /* where every VT stands, for a closer look */
            fprintf(stderr, "the deployer's status: %s\n", js ? js : "(none)");
            free(js);
            fail_msg("VT %llu: %s: %s", (unsigned long long)c.ids[i], lev_strerror(rc),
                     lev_errdetail());
        }
        fault_res res;
        memset(&res, 0, sizeof res);
        if (!rc && len == sizeof res)
            memcpy(&res, buf, sizeof res);
        free(buf);
        c.me = i;
        int64_t primes = 0, ring = 0;
        for (int64_t k = 0; k < c.rounds; k++) {
            int64_t lo, hi;
            fault_slice(&c, k, &lo, &hi);
            primes += fault_primes(lo, hi);
            ring += fault_token(k, (i + c.n - 1) % c.n);
        }
        /* every VT that is wrong is named before the test fails */
        if (rc) {
            printf("fault: VT %llu: %s: %s\n", (unsigned long long)c.ids[i], lev_strerror(rc),
                   lev_errdetail());
            wrong++;
        } else if (len != sizeof res || res.err || res.bad || res.primes != primes ||
                   res.ring != ring) {
            printf("fault: VT %llu: %zu bytes, err %d, bad %d, primes %lld (want %lld), ring "
                   "%lld (want %lld)\n",
                   (unsigned long long)c.ids[i], len, res.err, res.bad, (long long)res.primes,
                   (long long)primes, (long long)res.ring, (long long)ring);
            wrong++;
        }
    }
    if (wrong)
        fail_msg("%d of %lld VTs did not end with their exact result", wrong, (long long)c.n);
    int64_t t = s_now_ms() - r->t0;
    pthread_mutex_lock(&r->rep.mu);
    assert_int_equal(r->rep.bad, 0);
    for (int i = 0; i < c.n; i++)
        if (r->rep.n[c.ids[i]] != REPORTS || r->rep.last[c.ids[i]] != c.rounds)
            fail_msg("VT %llu: %d reports, the last %lld (want %d, the last %lld)",
                     (unsigned long long)c.ids[i], r->rep.n[c.ids[i]],
                     (long long)r->rep.last[c.ids[i]], REPORTS, (long long)c.rounds);
    pthread_mutex_unlock(&r->rep.mu);
    void *v = NULL;
    size_t n = 0;
    assert_int_equal(lev_global_get(s_vc, "counter", &v, &n), 0);
    assert_int_equal(n, sizeof(int64_t));
    int64_t count;
    memcpy(&count, v, sizeof count);
    free(v);
    if (count != c.n * c.rounds)
        fail_msg("the counter is %lld, not %lld", (long long)count, (long long)(c.n * c.rounds));
    printf("fault: %s: %lld ms from the VTs' start to the last join (%s)\n", name, (long long)t,
           s_nofault ? "no fault" : "with the fault");
}

static lev_vc_stats s_stats(void)
{
    lev_vc_stats st;
    int rc = lev_vc_stats_get(s_vc, &st);
    if (rc)
        fail_msg("lev_vc_stats_get: %s: %s", lev_strerror(rc), lev_errdetail());
    return st;
}

/* ===================================================================
 * Conditions on the deployer's status
 * =================================================================== */

typedef struct vts {
    const uint64_t *ids;
    int n;
} vts;

/* Every VT of the list that has not ended runs with an image of its
 * current epoch held. */
static bool s_held(const char *js, void *ctx)
{
    vts *w = ctx;
    for (int i = 0; i < w->n; i++) {
        char st[32];
        if (!js_vt_str(js, w->ids[i], "state", st, sizeof st))
            return false;
        if (!strcmp(st, "done"))
            continue;
        if (strcmp(st, "running") ||
            js_vt_int(js, w->ids[i], "image_epoch") != js_vt_int(js, w->ids[i], "epoch"))
            return false;
    }
    return true;
}

/* Where the VTs were before a fault. */
typedef struct layout {
    vts v;
    char host[FAULT_MAXVT][128];
    long long epoch[FAULT_MAXVT], resumes[FAULT_MAXVT], restarts[FAULT_MAXVT], ckpts[FAULT_MAXVT];
    const char *gone[2]; /* the endpoints the VTs must leave */
    int ngone;
} layout;

static void s_layout(const mesh *m, layout *l, const uint64_t *ids, int n)
{
    memset(l, 0, sizeof *l);
    l->v = (vts){ids, n};
    char *js = s_status(m);
    for (int i = 0; i < n; i++) {
        if (!js_vt_str(js, ids[i], "host", l->host[i], sizeof l->host[i]))
            fail_msg("VT %llu is not in the status", (unsigned long long)ids[i]);
        l->epoch[i] = js_vt_int(js, ids[i], "epoch");
        l->resumes[i] = js_vt_int(js, ids[i], "resumes");
        l->restarts[i] = js_vt_int(js, ids[i], "restarts");
        l->ckpts[i] = js_vt_int(js, ids[i], "checkpoints");
    }
    free(js);
}

static bool s_was_on(const layout *l, int i)
{
    for (int k = 0; k < l->ngone; k++)
        if (!strcmp(l->host[i], l->gone[k]))
            return true;
    return false;
}

/* Every VT that ran on a lost endpoint has ended or runs elsewhere in a
 * newer epoch; the others run or have ended. */
static bool s_recovered(const char *js, void *ctx)
{
    layout *l = ctx;
    for (int i = 0; i < l->v.n; i++) {
        char st[32], host[128];
        if (!js_vt_str(js, l->v.ids[i], "state", st, sizeof st) ||
            !js_vt_str(js, l->v.ids[i], "host", host, sizeof host))
            return false;
        if (strcmp(st, "running"))
            continue;
        if (!s_was_on(l, i))
            continue;
        for (int k = 0; k < l->ngone; k++)
            if (!strcmp(host, l->gone[k]))
                return false;
        if (!*host || js_vt_int(js, l->v.ids[i], "epoch") <= l->epoch[i])
            return false;
    }
    return true;
}

/* How many VTs of the list had to start over (each is named). */
static int s_restarted(const mesh *m, const vts *v)
{
    char *js = s_status(m);
    int n = 0;
    for (int i = 0; i < v->n; i++) {
        long long rs = js_vt_int(js, v->ids[i], "restarts");
        if (rs != 0) {
            printf("fault: VT %llu started over from its beginning %lld times\n",
                   (unsigned long long)v->ids[i], rs);
            n++;
        }
    }
    free(js);
    return n;
}

/* ===================================================================
 * Scenarios
 * =================================================================== */

/* A peer that holds images stalls (SIGSTOP, 0.6 s) and, 0.1 s into the
 * stall, a worker whose VT it holds the image of is killed: every VT
 * resumes from an image (none starts over), every result is exact. */
static void t_stall_crash(void **state)
{
    (void)state;
    const int cores[] = {1, 1, 1, 1};
    s_mesh(&s_a, cores, 4, NULL);
    run r;
    s_open(&r, &s_a, 4, 0);
    s_start_work(&r, 8);
    vts all = {r.cfg.ids, 8};
    assert_true(mesh_wait(s_a.p[0].ep, s_held, &all, LIMIT));
    /* a VT on a worker whose image another worker holds */
    char *js = s_status(&s_a);
    int worker = -1, holder = -1;
    for (int i = 0; i < 8 && holder < 0; i++) {
        char host[128], held[128];
        if (js_vt_str(js, r.cfg.ids[i], "host", host, sizeof host) &&
            js_vt_holder(js, r.cfg.ids[i], "held", held, sizeof held) && s_index(&s_a, host) > 0 &&
            s_index(&s_a, held) > 0 && strcmp(host, held)) {
            worker = s_index(&s_a, host);
            holder = s_index(&s_a, held);
        }
    }
    free(js);
    if (holder < 0)
        fail_msg("no VT has its image held by another worker than its own");
    layout l;
    s_layout(&s_a, &l, r.cfg.ids, 8);
    l.gone[l.ngone++] = s_a.p[worker].ep;
    if (!s_nofault) {
        mesh_signal(&s_a.p[holder], SIGSTOP);
        s_fault_length(100); /* the kill comes 0.1 s into the stall */
        mesh_signal(&s_a.p[worker], SIGKILL);
        s_fault_length(500); /* the stall lasts 0.6 s in all */
        mesh_signal(&s_a.p[holder], SIGCONT);
        assert_true(mesh_reap(&s_a.p[worker], LIMIT));
        assert_true(mesh_wait(s_a.p[0].ep, s_recovered, &l, OUTCOME));
    }
    int restarted = s_restarted(&s_a, &all);
    lev_vc_stats st = s_stats();
    printf("fault: stall_crash: %llu resumes, %llu restarts, %llu workers lost\n",
           (unsigned long long)st.resumes, (unsigned long long)st.restarts,
           (unsigned long long)st.lost_peers);
    if (!s_nofault) /* the killed worker's VTs at least */
        assert_true(st.resumes >= 1 && st.lost_peers >= 1);
    s_finish(&r, "stall_crash");
    if (restarted || st.restarts)
        fail_msg("%d VTs started over (%llu restarts)", restarted, (unsigned long long)st.restarts);
    assert_int_equal(lev_vc_close(&s_vc), 0);
    s_passed = true;
}

/* Every VT runs with an image held; then two workers A and B, B
 * holding the image of a VT of A and, where the holders allow it, A one
 * of a VT of B (mutual). */
typedef struct want_pair {
    vts v;
    const mesh *m;
    int a, b;
    bool mutual;
} want_pair;

static bool s_pair(const char *js, void *ctx)
{
    want_pair *w = ctx;
    if (!s_held(js, &w->v))
        return false;
    char host[FAULT_MAXVT][128];
    for (int i = 0; i < w->v.n; i++)
        if (!js_vt_str(js, w->v.ids[i], "host", host[i], sizeof host[i]))
            return false;
    w->a = w->b = -1;
    for (int i = 0; i < w->v.n && !w->mutual; i++) {
        int a = s_index(w->m, host[i]);
        for (int b = 1; a > 0 && b < w->m->n && !w->mutual; b++) {
            if (b == a || !w->m->p[b].pid || !js_vt_listed(js, w->v.ids[i], "held", w->m->p[b].ep))
                continue;
            if (w->a < 0)
                w->a = a, w->b = b;
            for (int k = 0; k < w->v.n && !w->mutual; k++)
                if (!strcmp(host[k], w->m->p[b].ep) &&
                    js_vt_listed(js, w->v.ids[k], "held", host[i])) {
                    w->a = a, w->b = b;
                    w->mutual = true;
                }
        }
    }
    return w->a > 0;
}

/* Two workers that hold each other's images (or, where the holders were
 * not so placed, one the other's) are killed together (the VC's default
 * replicas): every result is exact, every join returns. */
static void t_two_crashes(void **state)
{
    (void)state;
    const int cores[] = {1, 1, 1, 1};
    s_mesh(&s_a, cores, 4, NULL);
    run r;
    s_open(&r, &s_a, 4, 0);
    s_start_work(&r, 8);
    want_pair w = {.v = {r.cfg.ids, 8}, .m = &s_a};
    if (!mesh_wait(s_a.p[0].ep, s_pair, &w, LIMIT))
        fail_msg("no VT had its image held by another worker than its own");
    printf("fault: two_crashes: the two workers hold %s\n",
           w.mutual ? "each other's images" : "one the other's images (not both ways)");
    layout l;
    s_layout(&s_a, &l, r.cfg.ids, 8);
    l.gone[l.ngone++] = s_a.p[w.a].ep;
    l.gone[l.ngone++] = s_a.p[w.b].ep;
    if (!s_nofault) {
        mesh_signal(&s_a.p[w.a], SIGKILL);
        mesh_signal(&s_a.p[w.b], SIGKILL);
        assert_true(mesh_reap(&s_a.p[w.a], LIMIT));
        assert_true(mesh_reap(&s_a.p[w.b], LIMIT));
        assert_true(mesh_wait(s_a.p[0].ep, s_recovered, &l, OUTCOME));
    }
    s_finish(&r, "two_crashes");
    lev_vc_stats st = s_stats();
    printf("fault: two_crashes: %llu resumes, %llu restarts, %llu workers lost\n",
           (unsigned long long)st.resumes, (unsigned long long)st.restarts,
           (unsigned long long)st.lost_peers);
    if (!s_nofault) {
        assert_true(st.resumes + st.restarts >= 2 && st.lost_peers >= 2);
        /* a killed process's port refuses: the first peer that suspected
         * each of the two confirmed its death by that, not by a timeout */
        long long refused = 0;
        for (int i = 0; i < 4; i++) {
            if (i == w.a || i == w.b)
                continue;
            char *js = mesh_status(s_a.p[i].ep, LIMIT);
            assert_non_null(js);
            const char *at = strstr(js, "\"refused\":");
            assert_non_null(at);
            refused += atoll(at + strlen("\"refused\":"));
            free(js);
        }
        printf("fault: two_crashes: %lld deaths confirmed by a refused connection\n", refused);
        assert_true(refused >= 2);
    }
    assert_int_equal(lev_vc_close(&s_vc), 0);
    s_passed = true;
}

typedef struct want_ckpts {
    uint64_t vt;
    long long at_least;
} want_ckpts;

/* The VT has had at least w->at_least images acknowledged. */
static bool s_ckpts(const char *js, void *ctx)
{
    const want_ckpts *w = ctx;
    return js_vt_int(js, w->vt, "checkpoints") >= w->at_least;
}

/* A VT waits in a receive from X; X crashes its executor until the
 * crash limit fails it for good, and other VTs lose their executors with
 * it: the waiter's receive returns LEV_EFAILED within SETTLED ms of X's
 * failure (and again at once), every join returns, every other result is
 * exact. With direct messages, X's message lives in X's sender log and
 * its images only, so X crashes once an image of it taken after the
 * send is held: a waiter lost with X's executor and resumed from an
 * image older than the message gets it from that image, which the
 * deployer asks X's holders for when X fails (H_LOG). (When no image of
 * X held it, the waiter fails with an error that names the lost message
 * instead of waiting for good: docs/DIRECT_MESSAGES.md.) */
static void t_recv_failed(void **state)
{
    (void)state;
    const int cores[] = {1, 1, 1};
    s_mesh(&s_a, cores, 3, NULL);
    run r;
    s_open(&r, &s_a, 3, 0);
    s_start_work(&r, 4);
    lev_vt_id waiter, x, want_x = r.cfg.ids[3] + 2;
    assert_int_equal(lev_vt_start(s_vc, "pc_fault_wait", &want_x, sizeof want_x, &waiter), 0);
    assert_int_equal(lev_vt_start(s_vc, "pc_fault_crash", &waiter, sizeof waiter, &x), 0);
    assert_true(x == want_x);
    assert_true(
        mesh_wait_reports(&r.rep, waiter, 1, LIMIT)); /* it has X's message, and waits for more */
    assert_int_equal(r.rep.last[waiter], 0);
    if (!strcmp(s_messages(), "direct")) {
        /* two images of X acknowledged after the report: the second was
         * taken after the first came, in X's receive, after its send */
        char *js = s_status(&s_a);
        assert_non_null(js);
        want_ckpts w = {x, js_vt_int(js, x, "checkpoints") + 2};
        free(js);
        assert_true(mesh_wait(s_a.p[0].ep, s_ckpts, &w, LIMIT));
    }
    s_send(x, s_nofault ? "e" : "c", 1); /* c: crash; e: end normally */
    void *buf = NULL;
    size_t len = 0;
    int rc = lev_vt_join(s_vc, x, &buf, &len, LIMIT);
    free(buf);
    int64_t ended = s_now_ms();
    if (s_nofault) {
        assert_int_equal(rc, 0);
    } else {
        if (rc != LEV_EFAILED)
            fail_msg("X: %s (%s), not LEV_EFAILED", lev_strerror(rc), lev_errdetail());
        assert_non_null(strstr(lev_errdetail(), "crashed its executor"));
    }
    buf = NULL;
    rc = lev_vt_join(s_vc, waiter, &buf, &len, SETTLED);
    if (rc)
        fail_msg("the waiter: %s: %s (its receive from the VT that %s did not return)",
                 lev_strerror(rc), lev_errdetail(), s_nofault ? "ended" : "failed");
    int64_t told = s_now_ms() - ended;
    assert_int_equal(len, sizeof(fault_wait_res));
    fault_wait_res wr;
    memcpy(&wr, buf, sizeof wr);
    free(buf);
    int want = s_nofault ? LEV_ENOVT : LEV_EFAILED;
    for (int i = 0; i < 3; i++)
        assert_true(wr.from[i] == x);
    printf("fault: recv_failed: the waiter's join returned %lld ms after X's, its receives "
           "%d, %d, %d\n",
           (long long)told, wr.first, wr.second, wr.third);
    s_finish(&r, "recv_failed");
    if (wr.first || !wr.text_ok || wr.second != want || wr.third != want)
        fail_msg("the waiter's receives: %d (text %s), %d, %d; want 0, %d, %d", wr.first,
                 wr.text_ok ? "ok" : "wrong", wr.second, wr.third, want, want);
    assert_int_equal(lev_vc_close(&s_vc), 0);
    s_passed = true;
}

/* The contract where the two paths differ: X sends W a message, W takes
 * it and reports, and X then crashes its executor until it fails for
 * good, on a single worker (so W is lost with X every time) whose VC
 * takes no checkpoint in the run (so neither has an image, and W starts
 * again from its beginning each time). Through the deployer (relay), W
 * gets X's message again from the deployer's log and ends exactly: its
 * receives return the message, then LEV_EFAILED twice. Between
 * executors (direct), the message died with X's last executor and no
 * image of X held it: W fails with LEV_EFAILED and an error that names
 * the lost message, within SETTLED ms of X's failure, instead of
 * waiting for it for good. */
static void t_recv_lost(void **state)
{
    (void)state;
    const int cores[] = {1};
    s_mesh(&s_a, cores, 1, NULL);
    run r;
    memset(&r, 0, sizeof r);
    mesh_reports_init(&r.rep);
    lev_vc_options o = {.workers = 1, .checkpoint_ms = 600000, .peer = s_a.p[0].ep};
    int rc = lev_vc_open(&s_vc, &o);
    if (rc)
        fail_msg("lev_vc_open: %s: %s", lev_strerror(rc), lev_errdetail());
    assert_int_equal(lev_vc_on_report(s_vc, mesh_on_report, &r.rep), 0);
    lev_vt_id waiter, x, want_x = 3; /* the ids are dense from 2 */
    assert_int_equal(lev_vt_start(s_vc, "pc_fault_wait", &want_x, sizeof want_x, &waiter), 0);
    assert_int_equal(lev_vt_start(s_vc, "pc_fault_crash", &waiter, sizeof waiter, &x), 0);
    assert_true(x == want_x);
    assert_true(mesh_wait_reports(&r.rep, waiter, 1, LIMIT));
    assert_int_equal(r.rep.last[waiter], 0);
    s_send(x, "c", 1);
    void *buf = NULL;
    size_t len = 0;
    rc = lev_vt_join(s_vc, x, &buf, &len, LIMIT);
    free(buf);
    int64_t ended = s_now_ms();
    if (rc != LEV_EFAILED)
        fail_msg("X: %s (%s), not LEV_EFAILED", lev_strerror(rc), lev_errdetail());
    buf = NULL;
    rc = lev_vt_join(s_vc, waiter, &buf, &len, SETTLED);
    long long told = (long long)(s_now_ms() - ended);
    if (!strcmp(s_messages(), "direct")) {
        fault_wait_res wr;
        memset(&wr, 0, sizeof wr);
        if (!rc && len == sizeof wr)
            memcpy(&wr, buf, sizeof wr);
        free(buf);
        if (rc != LEV_EFAILED || !strstr(lev_errdetail(), "message 1 of VT 3, which it had taken, "
                                                          "is lost"))
            fail_msg("the waiter: %s (%s; receives %d, %d, %d), not LEV_EFAILED naming X's lost "
                     "message",
                     lev_strerror(rc), rc ? lev_errdetail() : "", wr.first, wr.second, wr.third);
        printf("fault: recv_lost: the waiter failed %lld ms after X: %s\n", told, lev_errdetail());
    } else {
        if (rc)
            fail_msg("the waiter: %s: %s", lev_strerror(rc), lev_errdetail());
        assert_int_equal(len, sizeof(fault_wait_res));
        fault_wait_res wr;
        memcpy(&wr, buf, sizeof wr);
        free(buf);
        printf("fault: recv_lost: the waiter ended %lld ms after X; its receives %d, %d, %d\n",
               told, wr.first, wr.second, wr.third);
        if (wr.first || !wr.text_ok || wr.second != LEV_EFAILED || wr.third != LEV_EFAILED)
            fail_msg("the waiter's receives: %d (text %s), %d, %d; want 0, %d, %d", wr.first,
                     wr.text_ok ? "ok" : "wrong", wr.second, wr.third, LEV_EFAILED, LEV_EFAILED);
    }
    assert_int_equal(lev_vc_close(&s_vc), 0);
    s_passed = true;
}

/* Every VT of the list runs with an image of its current epoch held,
 * each newer than the layout's. */
static bool s_checkpointed_since(const char *js, void *ctx)
{
    layout *l = ctx;
    if (!s_held(js, &l->v))
        return false;
    for (int i = 0; i < l->v.n; i++) {
        char st[32];
        js_vt_str(js, l->v.ids[i], "state", st, sizeof st);
        if (strcmp(st, "done") && js_vt_int(js, l->v.ids[i], "checkpoints") <= l->ckpts[i])
            return false;
    }
    return true;
}

/* On a machine loaded by a CPU hog, a worker is stopped for 3 s and
 * continued, well within the suspicion timeout (--suspect-ms 10000): a
 * suspicion of it can only be false, and recovery acts only on a
 * confirmed death, so none of its VTs is rolled back (epoch, resumes and
 * restarts unchanged once every VT has been checkpointed again); every
 * result is exact. */
static void t_false_suspicion(void **state)
{
    (void)state;
    const int cores[] = {1, 1, 1, 1};
    /* The hog slows this process and the peers too: the client and its
     * deployer wait longer for each other than elsewhere, so that only
     * the stopped worker's suspicion is in question. */
    const char *extra[] = {"--suspect-ms", "10000", "--client-timeout-ms", "30000", NULL};
    s_hog_start();
    s_mesh(&s_a, cores, 4, extra);
    run r;
    setenv("LEV_PEER_TIMEOUT_MS", "30000", 1);
    s_open(&r, &s_a, 4, 0);
    setenv("LEV_PEER_TIMEOUT_MS", "3000", 1);
    s_start_work(&r, 8);
    vts all = {r.cfg.ids, 8};
    assert_true(mesh_wait(s_a.p[0].ep, s_held, &all, LIMIT));
    char host[128];
    char *js = s_status(&s_a);
    assert_true(js_vt_str(js, r.cfg.ids[0], "host", host, sizeof host));
    free(js);
    int victim = s_index(&s_a, host);
    assert_true(victim > 0);
    layout l;
    s_layout(&s_a, &l, r.cfg.ids, 8);
    if (!s_nofault) {
        mesh_signal(&s_a.p[victim], SIGSTOP);
        s_fault_length(3000); /* the stop lasts 3 s */
    }
    mesh_signal(&s_a.p[victim], SIGCONT);
    assert_true(mesh_wait(s_a.p[0].ep, s_checkpointed_since, &l, OUTCOME));
    js = s_status(&s_a);
    int rolled = 0;
    for (int i = 0; i < 8; i++) {
        uint64_t v = r.cfg.ids[i];
        char now[128] = "";
        js_vt_str(js, v, "host", now, sizeof now);
        long long e = js_vt_int(js, v, "epoch"), res = js_vt_int(js, v, "resumes"),
                  rs = js_vt_int(js, v, "restarts");
        if (e != l.epoch[i] || res != l.resumes[i] || rs != l.restarts[i]) {
            printf("fault: VT %llu (%s the stopped worker) was rolled back: epoch %lld -> %lld, "
                   "resumes %lld -> %lld, restarts %lld -> %lld, now on %s\n",
                   (unsigned long long)v, strcmp(l.host[i], host) ? "not on" : "on", l.epoch[i], e,
                   l.resumes[i], res, l.restarts[i], rs, now);
            rolled++;
        }
    }
    free(js);
    s_finish(&r, "false_suspicion");
    if (rolled)
        fail_msg("%d VTs were rolled back for a suspicion that was false", rolled);
    s_hog_stop();
    assert_int_equal(lev_vc_close(&s_vc), 0);
    s_passed = true;
}

/* A peer of a second, separate mesh takes over the endpoint of a killed
 * worker before its failure is detected: the first mesh's VTs never run
 * on the second mesh's peers, and every result is exact. */
static void t_endpoint_reuse(void **state)
{
    (void)state;
    const int cores[] = {1, 1, 1};
    s_mesh(&s_a, cores, 3, NULL);
    memset(&s_b, 0, sizeof s_b);
    s_peer(&s_b, 0, 1, NULL, NULL, NULL); /* the second mesh's seed, ready beforehand */
    run r;
    s_open(&r, &s_a, 3, 0);
    s_start_work(&r, 6);
    vts all = {r.cfg.ids, 6};
    assert_true(mesh_wait(s_a.p[0].ep, s_held, &all, LIMIT));
    layout l;
    s_layout(&s_a, &l, r.cfg.ids, 6);
    int victim = s_index(&s_a, l.host[0]);
    assert_true(victim > 0);
    l.gone[l.ngone++] = s_a.p[victim].ep;
    if (!s_nofault) {
        mesh_signal(&s_a.p[victim], SIGKILL);
        assert_true(mesh_reap(&s_a.p[victim], LIMIT));
        /* at once, on exactly its host and port: the newcomer of mesh B */
        s_peer(&s_b, 1, 1, s_a.p[victim].ep, s_b.p[0].ep, NULL);
        assert_string_equal(s_b.p[1].ep, s_a.p[victim].ep);
        char *js = s_status(&s_a);
        char st[32];
        js_peer_state(js, l.gone[0], st, sizeof st);
        free(js);
        printf("fault: endpoint_reuse: the other mesh's peer is up on the endpoint; the "
               "deployer holds the killed worker %s\n",
               *st ? st : "forgotten");
        if (!mesh_wait(s_a.p[0].ep, s_recovered, &l, OUTCOME))
            fail_msg("VT %llu did not leave %s (now the endpoint of another mesh's peer)",
                     (unsigned long long)r.cfg.ids[0], l.gone[0]);
    }
    for (int i = 0; i < s_b.n; i++) {
        char *b = mesh_status(s_b.p[i].ep, LIMIT);
        assert_non_null(b);
        bool foreign = js_has_executor(b);
        free(b);
        if (foreign)
            fail_msg("peer %s of the other mesh runs an executor of this mesh's VC", s_b.p[i].ep);
    }
    if (!s_nofault)
        assert_true(s_stats().lost_peers >= 1);
    s_finish(&r, "endpoint_reuse");
    for (int i = 0; i < s_b.n; i++) {
        char *b = mesh_status(s_b.p[i].ep, LIMIT);
        assert_non_null(b);
        bool foreign = js_has_executor(b);
        free(b);
        if (foreign)
            fail_msg("peer %s of the other mesh ran an executor of this mesh's VC", s_b.p[i].ep);
    }
    assert_int_equal(lev_vc_close(&s_vc), 0);
    s_passed = true;
}

/* The VTs each worker of m runs (state running) into count[]. */
static void s_count_by_worker(const mesh *m, const char *js, const vts *v, int *count)
{
    memset(count, 0, sizeof(int) * MAXP);
    for (int i = 0; i < v->n; i++) {
        char st[32], host[128];
        if (js_vt_str(js, v->ids[i], "state", st, sizeof st) && !strcmp(st, "running") &&
            js_vt_str(js, v->ids[i], "host", host, sizeof host) && s_index(m, host) > 0)
            count[s_index(m, host)]++;
    }
}

/* Four workers of 1, 1, 2 and 4 cores and four VTs; the worker that runs
 * the most is killed: the resumed VTs are spread over the live workers
 * by their free cores (no worker runs more VTs than it has cores while
 * another has a core free), every result is exact. */
static void t_spread(void **state)
{
    (void)state;
    const int cores[] = {1, 1, 2, 4};
    s_mesh(&s_a, cores, 4, NULL);
    run r;
    s_open(&r, &s_a, 4, 0);
    s_start_work(&r, 4);
    vts all = {r.cfg.ids, 4};
    assert_true(mesh_wait(s_a.p[0].ep, s_held, &all, LIMIT));
    layout l;
    s_layout(&s_a, &l, r.cfg.ids, 4);
    int count[MAXP];
    char *js = s_status(&s_a);
    s_count_by_worker(&s_a, js, &all, count);
    free(js);
    int victim = 1;
    for (int i = 2; i < s_a.n; i++)
        if (count[i] > count[victim] ||
            (count[i] == count[victim] && s_a.cores[i] > s_a.cores[victim]))
            victim = i;
    printf("fault: spread: before: %d %d %d %d VTs on 1, 1, 2, 4 cores; killing the %d-core "
           "worker\n",
           count[1], count[2], count[3], count[4], s_a.cores[victim]);
    l.gone[l.ngone++] = s_a.p[victim].ep;
    char where[256] = "";
    bool stacked = false;
    if (!s_nofault) {
        mesh_signal(&s_a.p[victim], SIGKILL);
        assert_true(mesh_reap(&s_a.p[victim], LIMIT));
        assert_true(mesh_wait(s_a.p[0].ep, s_recovered, &l, OUTCOME));
        js = s_status(&s_a);
        s_count_by_worker(&s_a, js, &all, count);
        free(js);
        int over = 0, free_core = 0;
        for (int i = 1; i < s_a.n; i++) {
            if (!s_a.p[i].pid)
                continue;
            size_t at = strlen(where);
            snprintf(where + at, sizeof where - at, " %d VTs on %d cores;", count[i], s_a.cores[i]);
            over += count[i] > s_a.cores[i];
            free_core += count[i] < s_a.cores[i];
        }
        printf("fault: spread: after:%s\n", where);
        stacked = over && free_core;
    }
    if (!s_nofault)
        assert_true(s_stats().resumes + s_stats().restarts >= 1);
    s_finish(&r, "spread");
    if (stacked)
        fail_msg("resumed VTs stacked while a core was free:%s", where);
    assert_int_equal(lev_vc_close(&s_vc), 0);
    s_passed = true;
}

int main(int argc, char **argv)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(s_dir, sizeof s_dir, "%s/lev-fault-XXXXXX", tmp ? tmp : "/tmp");
    if (!mkdtemp(s_dir))
        return 1;
    s_nofault = getenv("LEV_TEST_NOFAULT") && atoi(getenv("LEV_TEST_NOFAULT")) > 0;
    if (getenv("LEV_TEST_PRIMES") && atoll(getenv("LEV_TEST_PRIMES")) > 0)
        s_below = atoll(getenv("LEV_TEST_PRIMES"));
    setenv("LEV_PEER_TIMEOUT_MS", "3000", 0);
    /* Executors at normal priority: at SCHED_IDLE (their default, the
     * machine's owner first) the other tests running beside these on a
     * busy machine would starve them for as long as they run. */
    setenv("LEV_EXEC_NICE", "0", 0);
    const struct CMUnitTest all[] = {
        cmocka_unit_test_teardown(t_stall_crash, s_teardown),
        cmocka_unit_test_teardown(t_two_crashes, s_teardown),
        cmocka_unit_test_teardown(t_recv_failed, s_teardown),
        cmocka_unit_test_teardown(t_false_suspicion, s_teardown),
        cmocka_unit_test_teardown(t_endpoint_reuse, s_teardown),
        cmocka_unit_test_teardown(t_spread, s_teardown),
        cmocka_unit_test_teardown(t_recv_lost, s_teardown),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    int rc = cmocka_run_group_tests(all, NULL, NULL);
    if (getenv("LEV_TEST_KEEP")) { /* the peers' logs, for a closer look */
        fprintf(stderr, "the peers' logs are in %s\n", s_dir);
        return rc;
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    if (system(cmd))
        rc = 1;
    return rc;
}
