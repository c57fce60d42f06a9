/* test_msg.c - messages, global variables and partial results across a
 * mesh of levpeer processes on loopback, with workers killed while VTs
 * exchange: a token ring and an all-to-all exchange with checksums whose
 * results must be exact, a shared counter that must end at exactly
 * 32,000, a VT moved while blocked in a receive that still gets its
 * message, a receive that timed out and times out again after its VT is
 * restarted, the errors a sender gets, and VTs that wait for a VT that
 * fails for good (a receive from it, its lock) or ends, and a large
 * global read and updated while a worker is killed, whose value goes to
 * workers that have it as its hash. No wait is for a time: each is
 * for a report, a global value or a state of a peer, bounded. Run one
 * scenario with `test_pc_msg NAME`.
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "auth.h"
#include "leverage.h"
#include "mesh.h"
#include "msg_tasks.h"

#ifndef LEVPEER_PATH
#error "LEVPEER_PATH must name the levpeer program"
#endif

#define MAXP 8
#define LIMIT 120000 /* ms: the bound of every wait, far above what any takes */

static char s_dir[256];
static unsigned s_seed;
static const char *s_crash_limit = "3"; /* levpeer's --crash-limit for the next mesh */

/* ===================================================================
 * The mesh and the client
 * =================================================================== */

typedef struct mesh {
    mesh_peer p[MAXP];
    int n;
} mesh;

static bool s_alive(const char *js, void *ctx)
{
    return js_count(js, "\"state\":\"alive\"") >= *(int *)ctx;
}

/* How the VCs carry messages: LEV_TEST_MESSAGES=direct (between
 * executors) or relay (through the deployer, the default). */
static const char *s_messages(void)
{
    const char *e = getenv("LEV_TEST_MESSAGES");
    return e && !strcmp(e, "direct") ? "direct" : "relay";
}

/* LEV_TEST_KEYS=1: the mesh has keys (every connection CurveZMQ, the
 * executors' links too); the test is its client with the mesh's pair.
 * The path of that pair, made once, or NULL. */
static const char *s_keys(void)
{
    static char path[sizeof s_dir + 16];
    const char *e = getenv("LEV_TEST_KEYS");
    if (!e || strcmp(e, "1"))
        return NULL;
    if (!path[0]) {
        char base[sizeof s_dir + 8], err[256];
        pc_keypair k;
        snprintf(base, sizeof base, "%s/mesh", s_dir);
        assert_int_equal(pc_key_generate(&k), 0);
        if (pc_key_write(base, &k, err, sizeof err))
            fail_msg("%s", err);
        snprintf(path, sizeof path, "%s.key", base);
        setenv("LEV_MESH_KEY", path, 1);
    }
    return path;
}

/* A deployer-only peer and `workers` peers of one core each, all seen
 * alive by the first. */
static void s_mesh(mesh *m, int workers)
{
    memset(m, 0, sizeof *m);
    const char *key = s_keys();
    for (int i = 0; i <= workers; i++) {
        /* LEV_TEST_LOG=debug: the peers' logs (in the test's directory) say more */
        const char *lvl = getenv("LEV_TEST_LOG") ? getenv("LEV_TEST_LOG") : "info";
        /* Failure detection slower than the default (a probe may take 400
         * ms, not 80): these tests run long on a machine loaded by other
         * tests and the sanitizers, where a peer too slow to answer in time
         * is suspected and its VTs move for nothing. */
        const char *args[] = {"--listen",
                              mesh_listen(),
                              "--cores",
                              i ? "1" : "-1",
                              "--rate",
                              "1000",
                              "--log-level",
                              lvl,
                              "--period-ms",
                              "500",
                              "--probe-timeout-ms",
                              "400",
                              "--crash-limit",
                              s_crash_limit,
                              "--messages",
                              s_messages(),
                              "--join",
                              m->p[0].ep,
                              NULL,
                              NULL,
                              NULL};
        int n = i ? 18 : 16; /* the first has no one to join */
        if (key) {
            args[n++] = "--key";
            args[n++] = key;
        }
        args[n] = NULL;
        if (mesh_start(&m->p[i], LEVPEER_PATH, s_dir, LIMIT, args))
            fail_msg("levpeer %d did not start", i);
        m->n = i + 1;
    }
    int want = workers + 1;
    assert_true(mesh_wait(m->p[0].ep, s_alive, &want, LIMIT));
}

/* Opens a VC on the mesh whose reports go to rep. */
static lev_vc *s_open(const mesh *m, int workers, int ckpt_ms, mesh_reports *rep)
{
    mesh_reports_init(rep);
    lev_vc *vc = NULL;
    lev_vc_options o = {.workers = workers, .checkpoint_ms = ckpt_ms, .peer = m->p[0].ep};
    int rc = lev_vc_open(&vc, &o);
    if (rc)
        fail_msg("lev_vc_open: %s: %s", lev_strerror(rc), lev_errdetail());
    assert_int_equal(lev_vc_on_report(vc, mesh_on_report, rep), 0);
    return vc;
}

static void s_send(lev_vc *vc, lev_vt_id vt, const void *buf, size_t len)
{
    int rc = lev_vt_send(vc, vt, buf, len);
    if (rc)
        fail_msg("lev_vt_send to %llu: %s: %s", (unsigned long long)vt, lev_strerror(rc),
                 lev_errdetail());
}

static void *s_join(lev_vc *vc, lev_vt_id vt, size_t want_len)
{
    void *res = NULL;
    size_t len = 0;
    int rc = lev_vt_join(vc, vt, &res, &len, LIMIT);
    if (rc)
        fail_msg("VT %llu: %s: %s", (unsigned long long)vt, lev_strerror(rc), lev_errdetail());
    if (len != want_len)
        fail_msg("VT %llu returned %zu bytes, not %zu", (unsigned long long)vt, len, want_len);
    return res;
}

/* ===================================================================
 * Faults
 * =================================================================== */

typedef struct want_moved {
    uint64_t vt;
    char gone[128];
    long long epoch;
} want_moved;

/* The VT runs in a newer epoch on another host, or it had ended before
 * its host was killed (the kill races with the VT's last steps). */
static bool s_moved(const char *js, void *ctx)
{
    want_moved *w = ctx;
    char host[128], st[32];
    if (js_vt_str(js, w->vt, "state", st, sizeof st) && !strcmp(st, "done") &&
        js_vt_int(js, w->vt, "epoch") == w->epoch)
        return true;
    return js_vt_str(js, w->vt, "host", host, sizeof host) && *host && strcmp(host, w->gone) &&
           js_vt_int(js, w->vt, "epoch") > w->epoch;
}

typedef struct want_held {
    uint64_t first, last;
} want_held;

/* Every VT of [first, last] that has not ended runs with an image of its
 * current epoch held: a single fault can then lose no VT's every copy
 * (one replica). */
static bool s_held(const char *js, void *ctx)
{
    want_held *w = ctx;
    for (uint64_t v = w->first; v <= w->last; v++) {
        char st[32];
        if (!js_vt_str(js, v, "state", st, sizeof st))
            return false;
        if (!strcmp(st, "done"))
            continue;
        if (strcmp(st, "running") || js_vt_int(js, v, "image_epoch") != js_vt_int(js, v, "epoch"))
            return false;
    }
    return true;
}

/* Kills (-9) the worker that hosts VT vt, reaps it, and waits until the
 * VT runs in a newer epoch elsewhere. Returns the killed peer's index. */
static int s_kill_host(mesh *m, uint64_t vt)
{
    want_moved mv = {.vt = vt};
    char *js = mesh_status(m->p[0].ep, LIMIT);
    assert_non_null(js);
    assert_true(js_vt_str(js, vt, "host", mv.gone, sizeof mv.gone));
    mv.epoch = js_vt_int(js, vt, "epoch");
    free(js);
    int victim = -1;
    for (int i = 1; i < m->n; i++)
        if (m->p[i].pid && !strcmp(m->p[i].ep, mv.gone))
            victim = i;
    if (victim < 0)
        fail_msg("VT %llu is hosted by '%s', not a worker of the mesh", (unsigned long long)vt,
                 mv.gone);
    mesh_signal(&m->p[victim], SIGKILL);
    assert_true(mesh_reap(&m->p[victim], LIMIT));
    assert_true(mesh_wait(m->p[0].ep, s_moved, &mv, LIMIT));
    return victim;
}

/* The executors ordered the VTs' inputs as the deployer did: it checked
 * their determinants (some came: every executor that took 32 inputs has
 * sent a batch) and none contradicted its log. `messages`: the VTs sent
 * each other messages, so their senders' logs were trimmed. */
static void s_dets_agree(const mesh *m, bool messages)
{
    char *js = mesh_status(m->p[0].ep, LIMIT);
    assert_non_null(js);
    long long checked = js_obj_sum(js, "determinants", "checked");
    long long bad = js_obj_sum(js, "determinants", "contradicting");
    /* the kills ran recovery barriers, and no position fixed for a
     * resumed VT, nor two determinants, contradicted each other */
    long long barriers = js_obj_sum(js, "recovery", "barriers");
    long long fix_errors = js_obj_sum(js, "recovery", "fix_errors");
    long long conflicts = js_obj_sum(js, "recovery", "conflicts");
    /* holders passed on what each image consumed, and the senders' logs
     * were trimmed (when VTs sent each other messages) */
    long long trims = js_obj_sum(js, "recovery", "trims");
    /* each active worker's executor has a number of its own */
    uint64_t seen = 0;
    int numbered = 0;
    for (const char *p = strstr(js, "\"executor\":"); p; p = strstr(p + 1, "\"executor\":")) {
        long x = strtol(p + strlen("\"executor\":"), NULL, 10);
        if (x < 0 || x > 63 || (seen & 1ull << x))
            fail_msg("an active worker's executor is numbered %ld, or twice", x);
        seen |= 1ull << x;
        numbered++;
    }
    free(js);
    assert_true(numbered > 0);
    if (checked <= 0 || bad != 0)
        fail_msg("determinants: %lld checked, %lld contradicting the deployer's log", checked, bad);
    if (barriers <= 0 || fix_errors != 0 || conflicts != 0 || (messages && trims <= 0))
        fail_msg("recovery: %lld barriers, %lld fix errors, %lld conflicting determinants, "
                 "%lld trims",
                 barriers, fix_errors, conflicts, trims);
}

/* ===================================================================
 * Scenarios
 * =================================================================== */

/* Starts n VTs of `task` and sends each its msg_cfg. */
static void s_start_cfg(lev_vc *vc, const char *task, int n, long rounds, msg_cfg *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->n = n;
    cfg->rounds = rounds;
    for (int i = 0; i < n; i++)
        assert_int_equal(lev_vt_start(vc, task, NULL, 0, &cfg->ids[i]), 0);
    for (int i = 0; i < n; i++) {
        cfg->me = i;
        s_send(vc, cfg->ids[i], cfg, sizeof *cfg);
    }
}

/* Half way (place 0 reported), a random worker is killed; once its VTs
 * run elsewhere and every VT has an image of its current epoch held (one
 * replica survives one fault at a time), the gate opens and another
 * random worker is killed while the VTs exchange. */
static void s_faults(mesh *m, lev_vc *vc, mesh_reports *rep, const msg_cfg *cfg)
{
    assert_true(mesh_wait_reports(rep, cfg->ids[0], 1, LIMIT));
    want_held h = {cfg->ids[0], cfg->ids[cfg->n - 1]};
    assert_true(mesh_wait(m->p[0].ep, s_held, &h, LIMIT));
    s_kill_host(m, cfg->ids[rand_r(&s_seed) % (unsigned)cfg->n]);
    assert_true(mesh_wait(m->p[0].ep, s_held, &h, LIMIT));
    long open = 1;
    s_send(vc, cfg->ids[0], &open, sizeof open);
    uint64_t vt = cfg->ids[rand_r(&s_seed) % (unsigned)cfg->n];
    char *js = mesh_status(m->p[0].ep, LIMIT);
    assert_non_null(js);
    char host[128], st[32];
    bool running = js_vt_str(js, vt, "state", st, sizeof st) && !strcmp(st, "running") &&
                   js_vt_str(js, vt, "host", host, sizeof host) && *host;
    free(js);
    if (running) /* it may have ended already on a fast machine */
        s_kill_host(m, vt);
}

/* A token ring of 6 VTs on 3 workers (a fourth replaces the first lost):
 * the token's count is exact. */
static void t_ring(void **state)
{
    (void)state;
    mesh m;
    s_mesh(&m, 4);
    mesh_reports rep;
    lev_vc *vc = s_open(&m, 3, 200, &rep);
    msg_cfg cfg;
    s_start_cfg(vc, "pc_ring", 6, 40, &cfg);
    s_faults(&m, vc, &rep, &cfg);
    for (int i = 0; i < cfg.n; i++) {
        long *tok = s_join(vc, cfg.ids[i], sizeof(long));
        long want = i == 0 ? cfg.rounds * cfg.n : (cfg.rounds - 1) * cfg.n + i;
        if (*tok != want)
            fail_msg("VT at place %d ended with token %ld, not %ld", i, *tok, want);
        free(tok);
    }
    assert_int_equal(rep.n[cfg.ids[0]], 1); /* the report, once */
    s_dets_agree(&m, true);
    assert_int_equal(lev_vc_close(&vc), 0);
    mesh_stop_all(m.p, m.n);
}

/* Every VT sends every other one a message each round and checks what it
 * gets (per-sender order, length, every word): the sums are exact. */
static void t_a2a(void **state)
{
    (void)state;
    mesh m;
    s_mesh(&m, 4);
    mesh_reports rep;
    lev_vc *vc = s_open(&m, 3, 200, &rep);
    msg_cfg cfg;
    s_start_cfg(vc, "pc_a2a", 5, 24, &cfg);
    s_faults(&m, vc, &rep, &cfg);
    for (int i = 0; i < cfg.n; i++) {
        uint64_t *sum = s_join(vc, cfg.ids[i], sizeof(uint64_t));
        msg_cfg c = cfg;
        c.me = i;
        if (*sum >> 52 == 0xBAD)
            fail_msg("VT at place %d: bad %s in round %u from place %u after %u messages "
                     "(detail %llu)",
                     i, msg_a2a_bad_name((unsigned)(*sum >> 48 & 0xf)),
                     (unsigned)(*sum >> 40 & 0xff), (unsigned)(*sum >> 32 & 0xff),
                     (unsigned)(*sum >> 24 & 0xff), (unsigned long long)(*sum & 0xffffff));
        if (*sum != msg_a2a_expect(&c))
            fail_msg("VT at place %d: checksum %016llx, not %016llx", i, (unsigned long long)*sum,
                     (unsigned long long)msg_a2a_expect(&c));
        free(sum);
    }
    s_dets_agree(&m, true);
    assert_int_equal(lev_vc_close(&vc), 0);
    mesh_stop_all(m.p, m.n);
}

/* Polls the counter (each poll a round trip to the deployer, bounded in
 * count and time) until it reaches w->at_least. */
static void s_wait_count(lev_vc *vc, long at_least)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < 1000000; i++) {
        void *v = NULL;
        size_t n = 0;
        assert_int_equal(lev_global_get(vc, "counter", &v, &n), 0);
        long c = 0;
        if (n == sizeof c)
            memcpy(&c, v, sizeof c);
        free(v);
        if (c >= at_least)
            return;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000 > LIMIT)
            break;
    }
    fail_msg("the counter did not reach %ld", at_least);
}

/* 8 VTs add one to a global counter 4,000 times each, under its lock,
 * while two workers are killed: the counter ends at exactly 32,000
 * (LEV_TEST_COUNT=N: N times each). */
static void t_counter(void **state)
{
    (void)state;
    mesh m;
    s_mesh(&m, 4);
    mesh_reports rep;
    lev_vc *vc = s_open(&m, 3, 200, &rep);
    long zero = 0, times = 4000;
    const char *env = getenv("LEV_TEST_COUNT");
    if (env && atol(env) > 0)
        times = atol(env);
    assert_int_equal(lev_global_set(vc, "counter", &zero, sizeof zero), 0);
    lev_vt_id id[8];
    for (int i = 0; i < 8; i++)
        assert_int_equal(lev_vt_start(vc, "pc_count", &times, sizeof times, &id[i]), 0);
    s_wait_count(vc, 2 * times);
    s_kill_host(&m, id[rand_r(&s_seed) % 8]);
    s_wait_count(vc, 5 * times);
    want_held h = {id[0], id[7]};
    assert_true(mesh_wait(m.p[0].ep, s_held, &h, LIMIT));
    char *js = mesh_status(m.p[0].ep, LIMIT);
    assert_non_null(js);
    uint64_t vt = id[rand_r(&s_seed) % 8];
    char st[32];
    bool running = js_vt_str(js, vt, "state", st, sizeof st) && !strcmp(st, "running");
    free(js);
    if (running)
        s_kill_host(&m, vt);
    for (int i = 0; i < 8; i++) {
        long *r = s_join(vc, id[i], sizeof(long));
        assert_int_equal(*r, times);
        free(r);
    }
    void *v = NULL;
    size_t n = 0;
    assert_int_equal(lev_global_get(vc, "counter", &v, &n), 0);
    assert_int_equal(n, sizeof(long));
    long c;
    memcpy(&c, v, sizeof c);
    free(v);
    if (c != 8 * times)
        fail_msg("the counter is %ld, not %ld", c, 8 * times);
    s_dets_agree(&m, false);
    assert_int_equal(lev_vc_close(&vc), 0);
    mesh_stop_all(m.p, m.n);
}

/* The count in the global "big", which must be whole. */
static long s_big_count(lev_vc *vc)
{
    void *v = NULL;
    size_t n = 0;
    assert_int_equal(lev_global_get(vc, "big", &v, &n), 0);
    assert_int_equal(n, MSG_BIG_WORDS * sizeof(uint64_t));
    const uint64_t *w = v;
    for (long i = 1; i < MSG_BIG_WORDS; i++)
        if (w[i] != msg_big_word(w[0], i))
            fail_msg("word %ld of \"big\" is damaged", i);
    long c = (long)w[0];
    free(v);
    return c;
}

static void s_wait_big(lev_vc *vc, long at_least)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < 1000000; i++) {
        if (s_big_count(vc) >= at_least)
            return;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000 > LIMIT)
            break;
    }
    fail_msg("\"big\" did not reach %ld", at_least);
}

/* 4 VTs read a 16 KiB global and add to its count under its lock, 300
 * times each, while a worker is killed: the value stays whole and the
 * count ends at exactly 1,200; reads and grants of a value a worker has
 * went as its hash (the deployer's "global_copies"), and the workers
 * served them from their copies (theirs). */
static void t_copies(void **state)
{
    (void)state;
    mesh m;
    s_mesh(&m, 4);
    mesh_reports rep;
    lev_vc *vc = s_open(&m, 3, 200, &rep);
    long times = 300;
    uint64_t *v0 = malloc(MSG_BIG_WORDS * sizeof(uint64_t));
    assert_non_null(v0);
    v0[0] = 0;
    for (long i = 1; i < MSG_BIG_WORDS; i++)
        v0[i] = msg_big_word(0, i);
    assert_int_equal(lev_global_set(vc, "big", v0, MSG_BIG_WORDS * sizeof(uint64_t)), 0);
    free(v0);
    lev_vt_id id[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(lev_vt_start(vc, "pc_bigcount", &times, sizeof times, &id[i]), 0);
    s_wait_big(vc, times);
    s_kill_host(&m, id[rand_r(&s_seed) % 4]);
    for (int i = 0; i < 4; i++) {
        long *r = s_join(vc, id[i], sizeof(long));
        assert_int_equal(*r, times);
        free(r);
    }
    assert_int_equal(s_big_count(vc), 4 * times);
    long long by_ref = 0, hits = 0;
    for (int i = 0; i < m.n; i++) {
        if (!m.p[i].pid)
            continue;
        char *js = mesh_status(m.p[i].ep, LIMIT);
        assert_non_null(js);
        if (i == 0)
            by_ref = js_obj_sum(js, "global_copies", "by_reference");
        long long h = js_obj_sum(js, "global_copies", "hits");
        hits += h == INT64_MIN ? 0 : h;
        free(js);
    }
    fprintf(stderr, "copies: %lld by reference, %lld hits\n", by_ref, hits);
    if (by_ref <= 0 || hits <= 0)
        fail_msg("values by reference: %lld sent, %lld served from copies", by_ref, hits);
    assert_int_equal(lev_vc_close(&vc), 0);
    mesh_stop_all(m.p, m.n);
}

static long s_get_long(lev_vc *vc, const char *name);

/* The name of pc_reads's check `what`. */
static const char *s_read_check(long what)
{
    static const char *const names[] = {"?",
                                        "a call failed",
                                        "older than its own write",
                                        "older than its previous read",
                                        "older than a put it was told of",
                                        "not the client's value"};
    return what >= 0 && what <= MSG_READ_CFGV ? names[what] : "?";
}

/* 4 VTs in a ring read global variables while they write them, and a
 * worker is killed: every read returns at least the reader's own last
 * write and its previous read, and never a value older than a put a
 * message it took was sent after (docs/GLOBAL_READS.md); the counter
 * they lock ends exact. Workers answered reads from their versioned
 * copies (the deployer logged them), and the peers' own counts say so:
 * with direct messages too, where a put's writer sends its round to the
 * next VT only once every worker with a copy has the put. */
static void t_reads(void **state)
{
    (void)state;
    mesh m;
    s_mesh(&m, 3);
    mesh_reports rep;
    lev_vc *vc = s_open(&m, 3, 200, &rep);
    long zero = 0, cfgv = MSG_READ_CFG;
    assert_int_equal(lev_global_set(vc, "rd.ctr", &zero, sizeof zero), 0);
    assert_int_equal(lev_global_set(vc, "rd.cfg", &cfgv, sizeof cfgv), 0);
    msg_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.n = 4;
    cfg.rounds = 150;
    for (int i = 0; i < cfg.n; i++)
        assert_int_equal(lev_vt_start(vc, "pc_reads", NULL, 0, &cfg.ids[i]), 0);
    for (int i = 0; i < cfg.n; i++) {
        cfg.me = i;
        s_send(vc, cfg.ids[i], &cfg, sizeof cfg);
    }
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < 1000000 && s_get_long(vc, "rd.ctr") < cfg.n * cfg.rounds / 3; i++) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000 > LIMIT)
            fail_msg("\"rd.ctr\" did not reach a third of its count");
    }
    s_kill_host(&m, cfg.ids[rand_r(&s_seed) % cfg.n]);
    for (int i = 0; i < cfg.n; i++) {
        msg_read_res *r = s_join(vc, cfg.ids[i], sizeof *r);
        if (r->done != cfg.rounds)
            fail_msg("VT at place %d: round %ld: %s (got %ld, at least %ld)", i, r->bad_at,
                     s_read_check(r->what), r->got, r->want);
        free(r);
    }
    assert_int_equal(s_get_long(vc, "rd.ctr"), cfg.n * cfg.rounds);
    char *js = mesh_status(m.p[0].ep, LIMIT);
    assert_non_null(js);
    long long near = js_obj_sum(js, "global_reads", "answered_at_workers");
    long long pushes = js_obj_sum(js, "global_reads", "pushes");
    free(js);
    long long here = 0;
    for (int i = 1; i < m.n; i++) {
        if (!m.p[i].pid)
            continue;
        js = mesh_status(m.p[i].ep, LIMIT);
        assert_non_null(js);
        long long h = js_obj_sum(js, "global_reads", "answered");
        here += h == INT64_MIN ? 0 : h;
        free(js);
    }
    fprintf(stderr,
            "reads: %lld answered at the workers (the deployer's log), %lld by the live "
            "workers' count, %lld changes pushed\n",
            near, here, pushes);
    if (near <= 0 || here <= 0 || pushes <= 0) {
        fail_msg("reads near the reader: %lld logged, %lld counted by workers, %lld pushes", near,
                 here, pushes);
    }
    s_dets_agree(&m, true);
    assert_int_equal(lev_vc_close(&vc), 0);
    mesh_stop_all(m.p, m.n);
}

/* A VT blocked in a receive is checkpointed where it waits, its worker
 * is killed, and it gets the message where it resumed. */
static void t_blocked(void **state)
{
    (void)state;
    mesh m;
    s_mesh(&m, 3);
    mesh_reports rep;
    lev_vc *vc = s_open(&m, 2, 200, &rep);
    lev_vt_id id;
    assert_int_equal(lev_vt_start(vc, "pc_echo", NULL, 0, &id), 0);
    want_held h = {id, id};
    assert_true(mesh_wait(m.p[0].ep, s_held, &h, LIMIT));
    s_kill_host(&m, id);
    s_send(vc, id, "where it is now", 16);
    char *r = s_join(vc, id, 16);
    assert_string_equal(r, "where it is now");
    free(r);
    assert_int_equal(lev_vc_close(&vc), 0);
    mesh_stop_all(m.p, m.n);
}

/* A receive times out; a message comes after it; the VT (no images:
 * checkpoints off), waiting at a gate, is lost and restarts from its
 * beginning: the receive times out again, and the message goes to the
 * next one, as before. */
static void t_timeout(void **state)
{
    (void)state;
    mesh m;
    s_mesh(&m, 3);
    mesh_reports rep;
    lev_vc *vc = s_open(&m, 2, -1, &rep);
    lev_vt_id id;
    assert_int_equal(lev_vt_start(vc, "pc_timeout", NULL, 0, &id), 0);
    assert_true(mesh_wait_reports(&rep, id, 1, LIMIT));
    assert_int_equal(rep.last[id], LEV_ETIMEDOUT);
    s_send(vc, id, "after the timeout", 18);
    s_kill_host(&m, id); /* it waits for the gate, so it is there to lose */
    s_send(vc, id, "gate", 5);
    msg_timeout_res *r = s_join(vc, id, sizeof *r);
    assert_int_equal(r->first, LEV_ETIMEDOUT);
    assert_int_equal(r->second, 0);
    assert_int_equal(r->from, LEV_CLIENT);
    assert_string_equal(r->text, "after the timeout");
    free(r);
    assert_int_equal(rep.n[id], 1); /* its report, once, though it ran twice */
    assert_int_equal(lev_vc_close(&vc), 0);
    mesh_stop_all(m.p, m.n);
}

/* 20,000 messages one way between VTs on two workers: the sender's
 * window fills and waits for the receiver's consumption (flow control),
 * and every message arrives in order. */
static void t_stream(void **state)
{
    (void)state;
    mesh m;
    s_mesh(&m, 2);
    mesh_reports rep;
    lev_vc *vc = s_open(&m, 2, 2000, &rep);
    msg_cfg cfg;
    s_start_cfg(vc, "pc_stream", 2, 20000, &cfg);
    long *r0 = s_join(vc, cfg.ids[0], sizeof(long));
    long *r1 = s_join(vc, cfg.ids[1], sizeof(long));
    assert_int_equal(*r1, cfg.rounds);
    assert_int_equal(*r0, 1);
    free(r0);
    free(r1);
    assert_int_equal(lev_vc_close(&vc), 0);
    mesh_stop_all(m.p, m.n);
}

typedef struct want_host {
    uint64_t vt;
    char host[128]; /* where it runs, once it does */
} want_host;

/* True once VT w->vt runs somewhere (w->host). */
static bool s_hosted(const char *js, void *ctx)
{
    want_host *w = ctx;
    return js_vt_str(js, w->vt, "host", w->host, sizeof w->host) && *w->host;
}

/* True once the executors' part of a peer's status (from ctx on) shows
 * a send that waited for its receiver (flow control between executors). */
static bool s_send_waited(const char *js, void *ctx)
{
    const char *at = strstr(js, (const char *)ctx);
    const char *w = at ? strstr(at, "\"send_waits\":") : NULL;
    return w && strtoll(w + strlen("\"send_waits\":"), NULL, 10) > 0;
}

/* 3,000 messages one way to a VT that takes none before the client opens
 * its gate. With direct messages the sender waits once its channel holds
 * a window (1,024) of messages not taken, as its executor's status shows,
 * and goes on when the receiver takes them; every message arrives once,
 * in order. */
static void t_flood(void **state)
{
    (void)state;
    mesh m;
    s_mesh(&m, 2);
    mesh_reports rep;
    lev_vc *vc = s_open(&m, 2, 2000, &rep);
    msg_cfg cfg;
    s_start_cfg(vc, "pc_flood", 2, 3000, &cfg);
    if (!strcmp(s_messages(), "direct")) {
        want_host at = {.vt = cfg.ids[0]}; /* where the sender runs */
        assert_true(mesh_wait(m.p[0].ep, s_hosted, &at, LIMIT));
        assert_true(mesh_wait(at.host, s_send_waited, "\"executors\"", LIMIT));
    }
    s_send(vc, cfg.ids[1], "gate", 5);
    long *r0 = s_join(vc, cfg.ids[0], sizeof(long));
    long *r1 = s_join(vc, cfg.ids[1], sizeof(long));
    assert_int_equal(*r0, cfg.rounds);
    assert_int_equal(*r1, cfg.rounds);
    free(r0);
    free(r1);
    assert_int_equal(lev_vc_close(&vc), 0);
    mesh_stop_all(m.p, m.n);
}

/* What senders are told: a VT not in the VC or ended (LEV_ENOVT, to the
 * client at once and to a VT through its receive), a message (from the
 * client or a VT) or a value above its limit (LEV_ERANGE, naming the
 * limit). */
static void t_errors(void **state)
{
    (void)state;
    mesh m;
    s_mesh(&m, 1);
    mesh_reports rep;
    lev_vc *vc = s_open(&m, 1, -1, &rep);
    assert_int_equal(lev_vt_send(vc, 99, "x", 1), LEV_ENOVT);
    lev_vt_id id;
    assert_int_equal(lev_vt_start(vc, "pc_bounce", NULL, 0, &id), 0);
    int32_t *res = s_join(vc, id, 3 * sizeof(int32_t));
    assert_int_equal(res[0], 0);         /* the send is buffered */
    assert_int_equal(res[1], LEV_ENOVT); /* the receive tells */
    assert_int_equal(res[2], LEV_ENOVT); /* and the next send knows */
    free(res);
    assert_int_equal(lev_vt_send(vc, id, "x", 1), LEV_ENOVT); /* it has ended */
    /* a message above the limit: from the client, and from a VT */
    size_t huge = ((size_t)16 << 20) + 1;
    char *msg = calloc(1, huge);
    assert_non_null(msg);
    assert_int_equal(lev_vt_start(vc, "pc_echo", NULL, 0, &id), 0);
    assert_int_equal(lev_vt_send(vc, id, msg, huge), LEV_ERANGE);
    assert_non_null(strstr(lev_errdetail(), "limit"));
    free(msg);
    s_send(vc, id, "x", 2);
    free(s_join(vc, id, 2));
    assert_int_equal(lev_vt_start(vc, "pc_oversize", NULL, 0, &id), 0);
    int32_t *ov = s_join(vc, id, 2 * sizeof(int32_t));
    assert_int_equal(ov[0], LEV_ERANGE);
    assert_int_equal(ov[1], 1);
    free(ov);
    size_t big = (1u << 20) + 1;
    char *v = calloc(1, big);
    assert_non_null(v);
    assert_int_equal(lev_global_set(vc, "big", v, big), LEV_ERANGE);
    assert_non_null(strstr(lev_errdetail(), "limit"));
    free(v);
    void *got = NULL;
    size_t n = 1;
    assert_int_equal(lev_global_get(vc, "never", &got, &n), 0);
    assert_null(got);
    assert_int_equal(n, 0);
    assert_int_equal(lev_vc_close(&vc), 0);
    mesh_stop_all(m.p, m.n);
}

/* What a global variable's entry in the status must have. */
typedef struct want_glob {
    const char *name, *has; /* e.g. "put.w" and "\"owner\":2" */
} want_glob;

static bool s_glob_has(const char *js, void *ctx)
{
    const want_glob *w = ctx;
    char key[96];
    snprintf(key, sizeof key, "{\"name\":\"%s\"", w->name);
    const char *g = strstr(js, key);
    const char *end = g ? strchr(g, '}') : NULL;
    const char *f = g ? strstr(g, w->has) : NULL;
    return f && f < end;
}

/* The long in global `name` (-1 when it is not a long). */
static long s_get_long(lev_vc *vc, const char *name)
{
    void *v = NULL;
    size_t n = 0;
    assert_int_equal(lev_global_get(vc, name, &v, &n), 0);
    long c = -1;
    if (n == sizeof c)
        memcpy(&c, v, sizeof c);
    free(v);
    return c;
}

/* Versioned puts (lev_global_put). 6 VTs put 400 rising versions into a
 * variable each and into one they share, checking under the lock every
 * 25th time that their own puts came first; the worker of the first is
 * killed while it waits halfway. Each variable ends at its highest version, and every
 * put was taken exactly once: those applied and those whose version was
 * not above add up to the puts made. Then a put that waits behind
 * another VT's lock is applied after that VT's unlock, though the VT
 * that made it has ended; and the refused puts give their codes. */
static void t_puts(void **state)
{
    (void)state;
    enum { VTS = 6 };
    mesh m;
    s_mesh(&m, 4);
    mesh_reports rep;
    lev_vc *vc = s_open(&m, 3, 200, &rep);
    long times = 400;
    lev_vt_id id[VTS];
    for (long i = 0; i < VTS; i++) {
        msg_put_arg a = {times, i, VTS, i ? 0 : times / 2};
        assert_int_equal(lev_vt_start(vc, "pc_put", &a, sizeof a, &id[i]), 0);
    }
    /* the first VT waits halfway (bounded in count and time); its
     * worker is killed there, and it goes on elsewhere */
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < 1000000 && s_get_long(vc, "put.s0") < times / 2; i++) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000 > LIMIT)
            fail_msg("\"put.s0\" did not reach %ld", times / 2);
    }
    s_kill_host(&m, id[0]);
    s_send(vc, id[0], "go", 2);
    char *js;
    for (int i = 0; i < VTS; i++) {
        msg_put_res *r = s_join(vc, id[i], sizeof *r);
        if (r->done != times)
            fail_msg("VT %llu: its check of round %ld failed (its lock read %ld)",
                     (unsigned long long)id[i], r->bad_at, r->got);
        free(r);
        char name[32];
        snprintf(name, sizeof name, "put.s%d", i);
        assert_int_equal(s_get_long(vc, name), times);
    }
    assert_int_equal(s_get_long(vc, "put.max"), times * VTS + VTS - 1);
    js = mesh_status(m.p[0].ep, LIMIT);
    assert_non_null(js);
    long long applied = js_obj_sum(js, "puts", "applied");
    long long stale = js_obj_sum(js, "puts", "stale");
    free(js);
    if (applied + stale != VTS * (2 * times + 1) || applied < VTS * times || stale < VTS)
        fail_msg("puts: %lld applied and %lld stale, not %ld made", applied, stale,
                 VTS * (2 * times + 1));
    s_dets_agree(&m, false);

    /* a put behind a lock, from a VT that ends before the unlock */
    lev_vt_id holder, once;
    assert_int_equal(lev_vt_start(vc, "pc_put_holder", NULL, 0, &holder), 0);
    char owner[48];
    snprintf(owner, sizeof owner, "\"owner\":%llu", (unsigned long long)holder);
    want_glob held = {"put.w", owner};
    assert_true(mesh_wait(m.p[0].ep, s_glob_has, &held, LIMIT));
    assert_int_equal(lev_vt_start(vc, "pc_put_once", NULL, 0, &once), 0);
    int32_t *codes = s_join(vc, once, 5 * sizeof(int32_t));
    const int32_t want[5] = {0, LEV_EINVAL, LEV_EINVAL, LEV_EINVAL, LEV_EBUSY};
    for (int i = 0; i < 5; i++)
        if (codes[i] != want[i])
            fail_msg("put %d of pc_put_once returned %d, not %d", i, codes[i], want[i]);
    free(codes);
    want_glob queued = {"put.w", "\"waiters\":1,"};
    assert_true(mesh_wait(m.p[0].ep, s_glob_has, &queued, LIMIT));
    assert_int_equal(s_get_long(vc, "put.w"), -1); /* not set while the lock is held */
    s_send(vc, holder, "go", 2);
    int32_t *hr = s_join(vc, holder, sizeof(int32_t));
    assert_int_equal(*hr, 0);
    free(hr);
    assert_int_equal(s_get_long(vc, "put.w"), 77);
    assert_int_equal(lev_vc_close(&vc), 0);
    mesh_stop_all(m.p, m.n);
}

/* A VT fails for good (it crashes its executor, and the crash limit is
 * 1) while holding a lock that another VT waits for and while a third
 * waits in a receive from it: the receive returns the end's error after
 * the message the failed VT sent, and again at once; the lock goes to its
 * waiter with its value unchanged; a receive from a VT that ended
 * normally returns LEV_ENOVT after its message. Every join returns. */
static void t_ended(void **state)
{
    (void)state;
    s_crash_limit = "1";
    mesh m;
    s_mesh(&m, 2);
    s_crash_limit = "3";
    mesh_reports rep;
    lev_vc *vc = s_open(&m, 2, 200, &rep);
    long five = 5;
    assert_int_equal(lev_global_set(vc, "end_lock", &five, sizeof five), 0);
    msg_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.n = 3;
    const char *task[3] = {"pc_end_fail", "pc_end_recv", "pc_end_lock"};
    for (int i = 0; i < 3; i++)
        assert_int_equal(lev_vt_start(vc, task[i], NULL, 0, &cfg.ids[i]), 0);
    for (int i = 0; i < 2; i++) {
        cfg.me = i;
        s_send(vc, cfg.ids[i], &cfg, sizeof cfg);
    }
    char owner[64]; /* place 0 holds the lock (its reports would wait for the unlock) */
    snprintf(owner, sizeof owner, "\"owner\":%llu,", (unsigned long long)cfg.ids[0]);
    want_glob owned = {"end_lock", owner};
    assert_true(mesh_wait(m.p[0].ep, s_glob_has, &owned, LIMIT));
    assert_true(mesh_wait_reports(&rep, cfg.ids[1], 1, LIMIT)); /* place 1 has its hello */
    assert_int_equal(rep.last[cfg.ids[1]], 0);
    cfg.me = 2;
    s_send(vc, cfg.ids[2], &cfg, sizeof cfg);
    want_glob waited = {"end_lock", "\"waiters\":1,"};
    assert_true(mesh_wait(m.p[0].ep, s_glob_has, &waited, LIMIT));
    s_send(vc, cfg.ids[0], "gate", 5);
    void *res = NULL;
    size_t len = 0;
    assert_int_equal(lev_vt_join(vc, cfg.ids[0], &res, &len, LIMIT), LEV_EFAILED);
    assert_non_null(strstr(lev_errdetail(), "crashed its executor"));
    free(res);
    long *got = s_join(vc, cfg.ids[2], sizeof(long));
    assert_int_equal(*got, five); /* the lock, with the value the failed VT left */
    free(got);
    msg_end_res *r = s_join(vc, cfg.ids[1], sizeof *r);
    assert_int_equal(r->hello, 0);
    /* LEV_EFAILED where the deployer says how the VT ended; LEV_ENOVT (an
     * end) where it does not */
    if (r->failed != LEV_EFAILED && r->failed != LEV_ENOVT)
        fail_msg("the receive from the failed VT returned %d", r->failed);
    assert_int_equal(r->failed_again, r->failed);
    assert_int_equal(r->bye, 0);
    assert_int_equal(r->ended, LEV_ENOVT);
    for (int i = 0; i < 5; i++)
        assert_int_equal(r->from[i], cfg.ids[i < 3 ? 0 : 2]);
    free(r);
    assert_int_equal(lev_vc_close(&vc), 0);
    mesh_stop_all(m.p, m.n);
}

int main(int argc, char **argv)
{
    if (mesh_workdir(s_dir, sizeof s_dir, "msg"))
        return 1;
    const char *seed = getenv("LEV_TEST_SEED");
    s_seed = seed ? (unsigned)atol(seed) : (unsigned)time(NULL) ^ (unsigned)getpid();
    printf("seed %u (LEV_TEST_SEED repeats a run's choice of workers to kill)\n", s_seed);
    setenv("LEV_PEER_TIMEOUT_MS", "3000", 0);
    /* Executors at normal priority: at SCHED_IDLE (their default, the
     * machine's owner first) the other tests running beside these on a
     * busy machine would starve them for as long as they run. */
    setenv("LEV_EXEC_NICE", "0", 0);
    const struct CMUnitTest all[] = {
        cmocka_unit_test(t_ring),   cmocka_unit_test(t_a2a),     cmocka_unit_test(t_counter),
        cmocka_unit_test(t_copies), cmocka_unit_test(t_blocked), cmocka_unit_test(t_timeout),
        cmocka_unit_test(t_errors), cmocka_unit_test(t_stream),  cmocka_unit_test(t_ended),
        cmocka_unit_test(t_flood),  cmocka_unit_test(t_puts),    cmocka_unit_test(t_reads),
    };
    return mesh_run_tests(all, sizeof all / sizeof *all, argc, argv, s_dir);
}
