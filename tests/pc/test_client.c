/* test_client.c - the client API (lev_client.h) against fake peers
 * (fake_peer.h): argument checks; opening, starting, joining, reports and
 * closing; join timeouts and unknown ids; messages to VTs and global
 * variables, with the peer's refusals; the VC's counts; a peer where nothing listens, one
 * that stops answering mid-join, one that answers only garbage, and one
 * that mixes malformed and misdirected messages into its answers. The
 * runner carries the task module of client_tasks.c (leverage_add_tasks),
 * which lev_vc_open ships. Built a second time with CLIENT_NO_MODULE and
 * no module: lev_vc_open must refuse to open. With CLIENT_EMBEDDED (the
 * peer controller is in the tree) it first runs a task on the peer that
 * the client embeds when no peer is named.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fake_peer.h"
#include "leverage.h"

/* The silence after which the client declares its peer lost, in ms: small
 * for the tests that wait for it, roomy for the others on a busy machine. */
#define T_TIMEOUT_SHORT "500"
#if defined(LEV_TSAN) && LEV_TSAN /* everything runs several times slower */
#define T_TIMEOUT_LONG "30000"
#else
#define T_TIMEOUT_LONG "5000"
#endif

/* Asserts that the detail of the last error contains `part`. */
static void s_detail_has(const char *part)
{
    if (!strstr(lev_errdetail(), part))
        fail_msg("detail '%s' lacks '%s'", lev_errdetail(), part);
}

static int s_setup(void **state)
{
    (void)state;
    setenv("LEV_PEER_TIMEOUT_MS", T_TIMEOUT_LONG, 1);
    unsetenv("LEV_PEER");
    return 0;
}

#ifdef CLIENT_NO_MODULE

/* A program without a task module cannot open a VC, and says why. */
static void t_no_module(void **state)
{
    (void)state;
    fake_peer *fp = fp_new(FP_NORMAL);
    lev_vc *vc = (lev_vc *)1;
    lev_vc_options o = {.peer = fp_endpoint(fp)};
    assert_int_equal(lev_vc_open(&vc, &o), LEV_EMODULE);
    assert_null(vc);
    s_detail_has("leverage_add_tasks");
    assert_int_equal(fp_seen_get(fp).opens, 0);
    fp_destroy(&fp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(t_no_module, s_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else

/* Opens a VC on the fake peer, asserting success. */
static lev_vc *s_open(fake_peer *fp)
{
    lev_vc *vc = NULL;
    lev_vc_options o = {.peer = fp_endpoint(fp)};
    int rc = lev_vc_open(&vc, &o);
    if (rc)
        fail_msg("lev_vc_open: %s: %s", lev_strerror(rc), lev_errdetail());
    assert_non_null(vc);
    return vc;
}

/* Starts task with a string argument (NUL included), asserting success. */
static lev_vt_id s_start(lev_vc *vc, const char *task, const char *arg)
{
    lev_vt_id id = 0;
    int rc = lev_vt_start(vc, task, arg, arg ? strlen(arg) + 1 : 0, &id);
    if (rc)
        fail_msg("lev_vt_start(%s): %s: %s", task, lev_strerror(rc), lev_errdetail());
    assert_true(id > LEV_CLIENT);
    return id;
}

/* ===================================================================
 * Arguments
 * =================================================================== */

/* Bad arguments are refused with LEV_EINVAL and a detail, before anything
 * reaches the peer. */
static void t_args(void **state)
{
    (void)state;
    lev_vc_options neg = {.workers = -1};
    lev_vc *vc = NULL;
    assert_int_equal(lev_vc_open(NULL, NULL), LEV_EINVAL);
    s_detail_has("vc is NULL");
    assert_int_equal(lev_vc_open(&vc, &neg), LEV_EINVAL);
    s_detail_has("workers");
    neg = (lev_vc_options){.replicas = -2};
    assert_int_equal(lev_vc_open(&vc, &neg), LEV_EINVAL);
    s_detail_has("replicas");
    assert_null(vc);

    const char *bad[] = {"nonsense", "tcp://", "tcp://127.0.0.1", "tcp://127.0.0.1:port",
                         "bogus://127.0.0.1:5"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        lev_vc_options o = {.peer = bad[i]};
        if (lev_vc_open(&vc, &o) != LEV_EINVAL)
            fail_msg("endpoint '%s' was not refused as malformed", bad[i]);
        s_detail_has(bad[i]);
        assert_null(vc);
    }
    setenv("LEV_PEER", "nonsense", 1);
    assert_int_equal(lev_vc_open(&vc, NULL), LEV_EINVAL);
    s_detail_has("nonsense");
    unsetenv("LEV_PEER");
    setenv("LEV_PEER_TIMEOUT_MS", "soon", 1);
    lev_vc_options o = {.peer = "tcp://127.0.0.1:1"};
    assert_int_equal(lev_vc_open(&vc, &o), LEV_EINVAL);
    s_detail_has("LEV_PEER_TIMEOUT_MS");
    setenv("LEV_PEER_TIMEOUT_MS", T_TIMEOUT_LONG, 1);

    lev_vt_id id = 7;
    assert_int_equal(lev_vt_start(NULL, "echo", NULL, 0, &id), LEV_EINVAL);
    assert_int_equal(id, 0);
    assert_int_equal(lev_vt_join(NULL, 2, NULL, NULL, 0), LEV_EINVAL);
    assert_int_equal(lev_vc_on_report(NULL, NULL, NULL), LEV_EINVAL);
    assert_int_equal(lev_vc_close(NULL), 0);
    assert_int_equal(lev_vc_close(&vc), 0);

    fake_peer *fp = fp_new(FP_NORMAL);
    vc = s_open(fp);
    char name[300];
    memset(name, 'a', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    name[256] = '\0'; /* 256 bytes: one too many */
    assert_int_equal(lev_vt_start(vc, NULL, NULL, 0, &id), LEV_EINVAL);
    s_detail_has("task is NULL");
    assert_int_equal(lev_vt_start(vc, "echo", NULL, 0, NULL), LEV_EINVAL);
    s_detail_has("id is NULL");
    assert_int_equal(lev_vt_start(vc, "echo", NULL, 5, &id), LEV_EINVAL);
    s_detail_has("arg is NULL");
    assert_int_equal(lev_vt_start(vc, name, NULL, 0, &id), LEV_EINVAL);
    s_detail_has("task name");
    assert_int_equal(lev_vt_start(vc, "", NULL, 0, &id), LEV_EINVAL);
    name[255] = '\0'; /* 255 bytes: allowed, and unknown to the peer */
    assert_int_equal(lev_vt_start(vc, name, NULL, 0, &id), LEV_EMODULE);
    s_detail_has("no task named");
    assert_int_equal(fp_seen_get(fp).starts, 1);
    assert_int_equal(lev_vc_close(&vc), 0);
    fp_destroy(&fp);
}

/* ===================================================================
 * Opening, starting, joining, closing
 * =================================================================== */

/* OPEN carries the options (defaults resolved) and the module with its
 * digest and hash; CLOSE is confirmed; the peer comes from opt or LEV_PEER. */
static void t_open_close(void **state)
{
    (void)state;
    fake_peer *fp = fp_new(FP_NORMAL);
    lev_vc *vc = s_open(fp);
    fp_seen s = fp_seen_get(fp);
    assert_int_equal(s.opens, 1);
    assert_true(s.module_ok);
    assert_int_equal(s.workers, 0);
    assert_int_equal(s.checkpoint_ms, 2000);
    assert_int_equal(s.replicas, 0); /* the deployer's default */
    assert_int_equal(lev_vc_close(&vc), 0);
    assert_null(vc);
    assert_int_equal(fp_seen_get(fp).closes, 1);

    setenv("LEV_PEER", fp_endpoint(fp), 1);
    lev_vc_options o = {.workers = 3, .checkpoint_ms = -1, .replicas = 2};
    assert_int_equal(lev_vc_open(&vc, &o), 0);
    unsetenv("LEV_PEER");
    s = fp_seen_get(fp);
    assert_int_equal(s.opens, 2);
    assert_int_equal(s.workers, 3);
    assert_int_equal(s.checkpoint_ms, -1);
    assert_int_equal(s.replicas, 2);
    assert_true(fp_wait_pings(fp, 2, 5000)); /* the VC's thread pings */
    assert_int_equal(lev_vc_close(&vc), 0);
    fp_destroy(&fp);
}

/* The peer's refusal of OPEN comes back as its error and detail. */
static void t_open_refused(void **state)
{
    (void)state;
    fake_peer *fp = fp_new(FP_NORMAL);
    fp_refuse_open(fp, LEV_EMODULE, "module refused: wrong architecture");
    lev_vc *vc = NULL;
    lev_vc_options o = {.peer = fp_endpoint(fp)};
    assert_int_equal(lev_vc_open(&vc, &o), LEV_EMODULE);
    assert_null(vc);
    s_detail_has("wrong architecture");
    fp_destroy(&fp);
}

/* A started VT joins with its result as a malloc'd copy, once. */
static void t_start_join(void **state)
{
    (void)state;
    fake_peer *fp = fp_new(FP_NORMAL);
    lev_vc *vc = s_open(fp);
    lev_vt_id a = s_start(vc, "echo", "hello");
    lev_vt_id b = s_start(vc, "echo", "world");
    assert_int_not_equal(a, b);
    assert_string_equal(fp_seen_get(fp).task, "echo");
    void *res = NULL;
    size_t len = 0;
    /* b's result arrived before this join and was kept. */
    assert_int_equal(lev_vt_join(vc, b, &res, &len, -1), 0);
    assert_int_equal(len, 6);
    assert_string_equal(res, "world");
    free(res);
    assert_int_equal(lev_vt_join(vc, a, NULL, NULL, 1000), 0); /* discarded */
    assert_int_equal(lev_vt_join(vc, a, &res, &len, 0), LEV_ENOVT);
    s_detail_has("joined already");
    assert_int_equal(lev_vt_join(vc, 999, &res, &len, 0), LEV_ENOVT);
    assert_int_equal(lev_vt_join(vc, LEV_ANY, &res, &len, 0), LEV_ENOVT);
    assert_null(res);
    assert_int_equal(len, 0);

    lev_vt_id e;
    assert_int_equal(lev_vt_start(vc, "echo", NULL, 0, &e), 0);
    res = (void *)1;
    len = 5;
    assert_int_equal(lev_vt_join(vc, e, &res, &len, -1), 0);
    assert_null(res);
    assert_int_equal(len, 0);
    assert_int_equal(lev_vc_close(&vc), 0);
    fp_destroy(&fp);
}

/* A VT's own failure is its join's error, with the peer's detail; an
 * unknown task is refused at start. */
static void t_failures(void **state)
{
    (void)state;
    fake_peer *fp = fp_new(FP_NORMAL);
    lev_vc *vc = s_open(fp);
    lev_vt_id id = s_start(vc, "fail", NULL);
    void *res = (void *)1;
    size_t len = 3;
    assert_int_equal(lev_vt_join(vc, id, &res, &len, -1), LEV_EFAILED);
    s_detail_has("on purpose");
    assert_null(res);
    assert_int_equal(len, 0);
    assert_int_equal(lev_vt_join(vc, id, &res, &len, 0), LEV_ENOVT);
    assert_int_equal(lev_vt_start(vc, "missing", NULL, 0, &id), LEV_EMODULE);
    s_detail_has("no task named missing");
    assert_int_equal(id, 0);
    assert_int_equal(lev_vc_close(&vc), 0);
    fp_destroy(&fp);
}

/* A join that times out leaves the VT joinable. */
static void t_join_timeout(void **state)
{
    (void)state;
    fake_peer *fp = fp_new(FP_NORMAL);
    lev_vc *vc = s_open(fp);
    lev_vt_id id = s_start(vc, "hold", "later");
    void *res = NULL;
    size_t len = 0;
    uint64_t t0 = fp_now_ms();
    assert_int_equal(lev_vt_join(vc, id, &res, &len, 100), LEV_ETIMEDOUT);
    assert_true(fp_now_ms() - t0 >= 95);
    s_detail_has("did not end within 100 ms");
    assert_int_equal(lev_vt_join(vc, id, &res, &len, 0), LEV_ETIMEDOUT);
    fp_release(fp);
    assert_int_equal(lev_vt_join(vc, id, &res, &len, 10000), 0);
    assert_string_equal(res, "later");
    free(res);
    assert_int_equal(lev_vc_close(&vc), 0);
    fp_destroy(&fp);
}

/* ===================================================================
 * Messages and global variables
 * =================================================================== */

/* A buffer of n bytes of a pattern that differs at every position, which
 * the caller frees. */
static uint8_t *s_pattern(size_t n)
{
    uint8_t *p = malloc(n);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(i * 31u + (i >> 8) * 7u + 1u);
    return p;
}

/* Bad arguments of lev_vt_send, lev_global_set and lev_global_get are
 * refused with LEV_EINVAL naming the argument, before reaching the peer. */
static void t_msg_args(void **state)
{
    (void)state;
    fake_peer *fp = fp_new(FP_NORMAL);
    lev_vc *vc = s_open(fp);
    char name[300];
    memset(name, 'g', sizeof name - 1);
    name[256] = '\0'; /* 256 bytes: one too many */
    void *value = (void *)1;
    size_t len = 9;

    assert_int_equal(lev_vt_send(NULL, 2, "x", 1), LEV_EINVAL);
    s_detail_has("vc is NULL");
    assert_int_equal(lev_vt_send(vc, LEV_ANY, "x", 1), LEV_EINVAL);
    s_detail_has("LEV_ANY");
    assert_int_equal(lev_vt_send(vc, LEV_CLIENT, "x", 1), LEV_EINVAL);
    s_detail_has("LEV_CLIENT");
    assert_int_equal(lev_vt_send(vc, 2, NULL, 5), LEV_EINVAL);
    s_detail_has("buf is NULL");

    assert_int_equal(lev_global_set(NULL, "g", "x", 1), LEV_EINVAL);
    s_detail_has("vc is NULL");
    assert_int_equal(lev_global_set(vc, NULL, "x", 1), LEV_EINVAL);
    s_detail_has("name is NULL");
    assert_int_equal(lev_global_set(vc, "g", NULL, 1), LEV_EINVAL);
    s_detail_has("value is NULL");
    assert_int_equal(lev_global_set(vc, "", "x", 1), LEV_EINVAL);
    s_detail_has("name of 0 bytes");
    assert_int_equal(lev_global_set(vc, name, "x", 1), LEV_EINVAL);
    s_detail_has("name of 256 bytes");

    assert_int_equal(lev_global_get(NULL, "g", &value, &len), LEV_EINVAL);
    s_detail_has("vc is NULL");
    assert_null(value);
    assert_int_equal(len, 0);
    assert_int_equal(lev_global_get(vc, NULL, &value, &len), LEV_EINVAL);
    s_detail_has("name is NULL");
    assert_int_equal(lev_global_get(vc, "g", NULL, &len), LEV_EINVAL);
    s_detail_has("value is NULL");
    assert_int_equal(lev_global_get(vc, "g", &value, NULL), LEV_EINVAL);
    s_detail_has("len is NULL");
    assert_int_equal(lev_global_get(vc, name, &value, &len), LEV_EINVAL);
    s_detail_has("name of 256 bytes");
    assert_int_equal(lev_global_get(vc, "", &value, &len), LEV_EINVAL);

    fp_seen seen = fp_seen_get(fp);
    assert_int_equal(seen.sends + seen.gsets + seen.ggets, 0);
    name[255] = '\0'; /* 255 bytes: allowed */
    assert_int_equal(lev_global_set(vc, name, "x", 1), 0);
    assert_int_equal(lev_global_get(vc, name, &value, &len), 0);
    assert_int_equal(len, 1);
    assert_memory_equal(value, "x", 1);
    free(value);
    assert_int_equal(lev_vc_close(&vc), 0);
    fp_destroy(&fp);
}

/* Messages reach a running VT in the order sent, a 1 MiB one intact; one
 * to a VT that ended or never was, or above the peer's limit, comes back
 * as the peer's error with its detail. */
static void t_messages(void **state)
{
    (void)state;
    fake_peer *fp = fp_new(FP_NORMAL);
    lev_vc *vc = s_open(fp);
    lev_vt_id ended = s_start(vc, "echo", "gone");
    assert_int_equal(lev_vt_join(vc, ended, NULL, NULL, -1), 0);
    lev_vt_id id = s_start(vc, "hold", NULL);
    for (int i = 0; i < 3; i++) {
        char msg[3] = {'m', (char)('0' + i), 0};
        assert_int_equal(lev_vt_send(vc, id, msg, 3), 0);
    }
    assert_int_equal(lev_vt_send(vc, id, NULL, 0), 0);
    fp_seen seen = fp_seen_get(fp);
    assert_int_equal(seen.nsent, 4);
    for (int i = 0; i < 3; i++) {
        char msg[3] = {'m', (char)('0' + i), 0};
        assert_string_equal(seen.sent[i], msg);
        assert_int_equal(seen.sent_vt[i], id);
    }
    assert_int_equal(seen.last_len, 0);

    assert_int_equal(lev_vt_send(vc, ended, "late", 4), LEV_ENOVT);
    s_detail_has("is not running");
    assert_int_equal(lev_vt_send(vc, 999, "nobody", 6), LEV_ENOVT);
    s_detail_has("VT 999");

    size_t big = 1u << 20;
    uint8_t *buf = s_pattern(big);
    fp_set_limits(fp, 1000, 0);
    assert_int_equal(lev_vt_send(vc, id, buf, 1001), LEV_ERANGE);
    s_detail_has("message limit of 1000 bytes");
    assert_int_equal(lev_vt_send(vc, id, buf, 1000), 0);
    fp_set_limits(fp, 0, 0);
    assert_int_equal(lev_vt_send(vc, id, buf, big), 0);
    seen = fp_seen_get(fp);
    assert_int_equal(seen.nsent, 6);
    assert_int_equal(seen.last_len, big);
    assert_true(seen.last_hash == fp_hash(buf, big));
    assert_int_equal(seen.sends, 9);
    free(buf);

    fp_release(fp);
    assert_int_equal(lev_vt_join(vc, id, NULL, NULL, 10000), 0);
    assert_int_equal(lev_vt_send(vc, id, "after", 5), LEV_ENOVT);
    assert_int_equal(lev_vc_close(&vc), 0);
    fp_destroy(&fp);
}

/* Globals: a variable never set reads NULL and 0; a set is read back,
 * replaced, emptied; a 1 MiB value comes back intact; a value above the
 * peer's limit comes back as LEV_ERANGE with its detail. */
static void t_globals(void **state)
{
    (void)state;
    fake_peer *fp = fp_new(FP_NORMAL);
    lev_vc *vc = s_open(fp);
    void *value = (void *)1;
    size_t len = 7;
    assert_int_equal(lev_global_get(vc, "alpha", &value, &len), 0);
    assert_null(value);
    assert_int_equal(len, 0);
    assert_int_equal(lev_global_set(vc, "alpha", "one", 4), 0);
    assert_int_equal(lev_global_set(vc, "beta", "two", 4), 0);
    assert_int_equal(lev_global_get(vc, "alpha", &value, &len), 0);
    assert_int_equal(len, 4);
    assert_string_equal(value, "one");
    free(value);
    assert_int_equal(lev_global_set(vc, "alpha", "three", 6), 0);
    assert_int_equal(lev_global_get(vc, "alpha", &value, &len), 0);
    assert_string_equal(value, "three");
    free(value);
    assert_int_equal(lev_global_set(vc, "beta", NULL, 0), 0);
    value = (void *)1;
    assert_int_equal(lev_global_get(vc, "beta", &value, &len), 0);
    assert_null(value);
    assert_int_equal(len, 0);

    size_t big = 1u << 20;
    uint8_t *buf = s_pattern(big);
    fp_set_limits(fp, 0, 4096);
    assert_int_equal(lev_global_set(vc, "big", buf, 4097), LEV_ERANGE);
    s_detail_has("value limit of 4096 bytes");
    assert_int_equal(lev_global_get(vc, "big", &value, &len), 0);
    assert_null(value); /* the refused value was not set */
    fp_set_limits(fp, 0, 0);
    assert_int_equal(lev_global_set(vc, "big", buf, big), 0);
    assert_int_equal(lev_global_get(vc, "big", &value, &len), 0);
    assert_int_equal(len, big);
    assert_memory_equal(value, buf, big);
    free(value);
    free(buf);
    fp_seen seen = fp_seen_get(fp);
    assert_int_equal(seen.gsets, 6);
    assert_int_equal(seen.ggets, 6);
    assert_int_equal(lev_vc_close(&vc), 0);
    fp_destroy(&fp);
}

/* ===================================================================
 * The VC's counts
 * =================================================================== */

/* Counts with every field distinct, the 64-bit ones above 32 bits. */
static const lev_vc_stats s_counts = {.peers = 3,
                                      .cores = 12,
                                      .vts = 7,
                                      .vts_ended = 70000,
                                      .checkpoints = 0x100000001ull,
                                      .resumes = 5,
                                      .restarts = 6,
                                      .lost_peers = 0x200000002ull,
                                      .messages = 0x300000003ull};

/* Asserts that st holds s_counts, field by field. */
static void s_counts_equal(const lev_vc_stats *st)
{
    assert_int_equal(st->peers, s_counts.peers);
    assert_int_equal(st->cores, s_counts.cores);
    assert_int_equal(st->vts, s_counts.vts);
    assert_int_equal(st->vts_ended, s_counts.vts_ended);
    assert_true(st->checkpoints == s_counts.checkpoints);
    assert_true(st->resumes == s_counts.resumes);
    assert_true(st->restarts == s_counts.restarts);
    assert_true(st->lost_peers == s_counts.lost_peers);
    assert_true(st->messages == s_counts.messages);
}

/* lev_vc_stats_get decodes the deployer's counts into the struct; NULL
 * arguments are refused; a reply cut short is dropped, so the call fails
 * with LEV_EPEER after the peer timeout (with *st zeroed) and the VC
 * stays usable. */
static void t_stats(void **state)
{
    (void)state;
    lev_vc_stats st;
    assert_int_equal(lev_vc_stats_get(NULL, &st), LEV_EINVAL);
    s_detail_has("vc is NULL");
    fake_peer *fp = fp_new(FP_NORMAL);
    fp_set_stats(fp, &s_counts, false);
    lev_vc *vc = s_open(fp);
    assert_int_equal(lev_vc_stats_get(vc, NULL), LEV_EINVAL);
    s_detail_has("st is NULL");
    assert_int_equal(fp_seen_get(fp).stats, 0);
    assert_int_equal(lev_vc_stats_get(vc, &st), 0);
    s_counts_equal(&st);
    assert_int_equal(fp_seen_get(fp).stats, 1);
    assert_int_equal(lev_vc_close(&vc), 0);

    setenv("LEV_PEER_TIMEOUT_MS", T_TIMEOUT_SHORT, 1);
    vc = s_open(fp);
    fp_set_stats(fp, &s_counts, true);
    memset(&st, 0xff, sizeof st);
    uint64_t t0 = fp_now_ms();
    assert_int_equal(lev_vc_stats_get(vc, &st), LEV_EPEER);
    assert_true(fp_now_ms() - t0 < 5000);
    s_detail_has("did not answer C_STATS");
    lev_vc_stats zero = {0};
    assert_memory_equal(&st, &zero, sizeof st);
    fp_set_stats(fp, &s_counts, false);
    assert_int_equal(lev_vc_stats_get(vc, &st), 0);
    s_counts_equal(&st);
    assert_int_equal(lev_vc_close(&vc), 0);
    fp_destroy(&fp);
}

/* ===================================================================
 * Reports
 * =================================================================== */

typedef struct reports {
    pthread_mutex_t mu;
    int n;
    char text[8][8];
    lev_vt_id vt[8];
    bool on_main; /* a callback ran on the thread that started the VT */
    pthread_t main;
    lev_vc *vc;
    int in_cb[7]; /* start, join with a wait, close, send, global set and get,
                   * stats from inside the callback */
} reports;

static void s_on_report(lev_vt_id vt, const void *buf, size_t len, void *ctx)
{
    reports *r = ctx;
    pthread_mutex_lock(&r->mu);
    if (r->n < 8) {
        snprintf(r->text[r->n], sizeof r->text[0], "%.*s", (int)len, (const char *)buf);
        r->vt[r->n++] = vt;
    }
    r->on_main |= pthread_equal(pthread_self(), r->main);
    pthread_mutex_unlock(&r->mu);
}

/* A callback that tries what a callback must not do. */
static void s_on_report_waits(lev_vt_id vt, const void *buf, size_t len, void *ctx)
{
    reports *r = ctx;
    lev_vt_id id;
    (void)buf;
    (void)len;
    r->in_cb[0] = lev_vt_start(r->vc, "echo", NULL, 0, &id);
    r->in_cb[1] = lev_vt_join(r->vc, vt, NULL, NULL, 1000);
    r->in_cb[2] = lev_vc_close(&r->vc);
    r->in_cb[3] = lev_vt_send(r->vc, vt, "x", 1);
    r->in_cb[4] = lev_global_set(r->vc, "g", "x", 1);
    void *value = NULL;
    size_t vlen = 0;
    r->in_cb[5] = lev_global_get(r->vc, "g", &value, &vlen);
    lev_vc_stats st;
    r->in_cb[6] = lev_vc_stats_get(r->vc, &st);
    lev_vc_on_report(r->vc, NULL, NULL); /* from the callback: no wait */
}

/* Reports reach the callback on the library's thread, in order, before
 * the result; a NULL callback stops them; a callback cannot wait on its VC. */
static void t_reports(void **state)
{
    (void)state;
    fake_peer *fp = fp_new(FP_NORMAL);
    reports r = {.mu = PTHREAD_MUTEX_INITIALIZER, .main = pthread_self()};
    lev_vc *vc = s_open(fp);
    assert_int_equal(lev_vc_on_report(vc, s_on_report, &r), 0);
    lev_vt_id id = s_start(vc, "reports", NULL);
    void *res = NULL;
    size_t len = 0;
    assert_int_equal(lev_vt_join(vc, id, &res, &len, -1), 0);
    assert_memory_equal(res, "done", 4);
    free(res);
    assert_int_equal(r.n, 3);
    for (int i = 0; i < 3; i++) {
        char want[3] = {'r', (char)('0' + i), 0};
        assert_string_equal(r.text[i], want);
        assert_int_equal(r.vt[i], id);
    }
    assert_false(r.on_main);

    assert_int_equal(lev_vc_on_report(vc, NULL, NULL), 0);
    id = s_start(vc, "echo", "quiet");
    assert_int_equal(lev_vt_join(vc, id, NULL, NULL, -1), 0);
    assert_int_equal(r.n, 3);

    r.vc = vc;
    assert_int_equal(lev_vc_on_report(vc, s_on_report_waits, &r), 0);
    id = s_start(vc, "echo", "busy");
    assert_int_equal(lev_vt_join(vc, id, NULL, NULL, -1), 0);
    for (int i = 0; i < 7; i++)
        assert_int_equal(r.in_cb[i], LEV_EBUSY);
    fp_seen seen = fp_seen_get(fp);
    assert_int_equal(seen.sends + seen.gsets + seen.ggets + seen.stats, 0);
    assert_ptr_equal(r.vc, vc);
    assert_int_equal(lev_vc_close(&vc), 0);
    fp_destroy(&fp);
}

/* ===================================================================
 * Threads
 * =================================================================== */

typedef struct worker {
    lev_vc *vc;
    int index, failures;
} worker;

static void *s_worker(void *arg)
{
    worker *w = arg;
    for (int i = 0; i < 25; i++) {
        char msg[32], *res = NULL;
        size_t len = 0;
        lev_vt_id id;
        snprintf(msg, sizeof msg, "w%d-%d", w->index, i);
        if (lev_vt_start(w->vc, "echo", msg, strlen(msg) + 1, &id) ||
            lev_vt_join(w->vc, id, (void **)&res, &len, 10000) || !res || strcmp(res, msg))
            w->failures++;
        free(res);
    }
    return NULL;
}

/* Several threads start and join VTs on one VC at once. */
static void t_threads(void **state)
{
    (void)state;
    fake_peer *fp = fp_new(FP_NORMAL);
    lev_vc *vc = s_open(fp);
    pthread_t th[4];
    worker w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){.vc = vc, .index = i};
        assert_int_equal(pthread_create(&th[i], NULL, s_worker, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(w[i].failures, 0);
    }
    assert_int_equal(fp_seen_get(fp).starts, 100);
    assert_int_equal(lev_vc_close(&vc), 0);
    fp_destroy(&fp);
}

/* ===================================================================
 * Lost, silent and broken peers
 * =================================================================== */

/* Opening against a port where nothing listens fails with LEV_EPEER once
 * the peer timeout has passed, not later. */
static void t_unreachable(void **state)
{
    (void)state;
    char ep[PC_ENDPOINT_MAX];
    fp_dead_endpoint(ep);
    setenv("LEV_PEER_TIMEOUT_MS", T_TIMEOUT_SHORT, 1);
    lev_vc *vc = NULL;
    lev_vc_options o = {.peer = ep};
    uint64_t t0 = fp_now_ms();
    assert_int_equal(lev_vc_open(&vc, &o), LEV_EPEER);
    uint64_t took = fp_now_ms() - t0;
    assert_null(vc);
    s_detail_has("unreachable (no answer for");
    s_detail_has(ep);
    assert_true(took >= 450);
    assert_true(took < 3000);
}

/* A peer that stops answering mid-join: the join fails with LEV_EPEER,
 * and so does every later call; a result that had arrived still joins. */
static void t_peer_lost(void **state)
{
    (void)state;
    fake_peer *fp = fp_new(FP_NORMAL);
    setenv("LEV_PEER_TIMEOUT_MS", T_TIMEOUT_SHORT, 1);
    lev_vc *vc = s_open(fp);
    lev_vt_id done = s_start(vc, "echo", "kept");
    lev_vt_id held = s_start(vc, "hold", NULL);
    fp_mute(fp, true);
    uint64_t t0 = fp_now_ms();
    assert_int_equal(lev_vt_join(vc, held, NULL, NULL, -1), LEV_EPEER);
    assert_true(fp_now_ms() - t0 < 5000);
    s_detail_has("unreachable");
    lev_vt_id id;
    assert_int_equal(lev_vt_start(vc, "echo", NULL, 0, &id), LEV_EPEER);
    assert_int_equal(lev_vt_join(vc, held, NULL, NULL, 0), LEV_EPEER);
    void *res = NULL;
    size_t len = 0;
    assert_int_equal(lev_vt_join(vc, done, &res, &len, 0), 0);
    assert_string_equal(res, "kept");
    free(res);
    assert_int_equal(lev_vc_close(&vc), 0); /* unconfirmed, freed all the same */
    assert_null(vc);
    fp_destroy(&fp);
}

/* A peer that stops answering while a global set waits (a set has no
 * deadline of its own): the set fails with LEV_EPEER once the peer is
 * lost, and so do later sends, sets and gets. */
static void t_globals_peer_lost(void **state)
{
    (void)state;
    fake_peer *fp = fp_new(FP_NORMAL);
    setenv("LEV_PEER_TIMEOUT_MS", T_TIMEOUT_SHORT, 1);
    lev_vc *vc = s_open(fp);
    lev_vt_id id = s_start(vc, "hold", NULL);
    fp_mute(fp, true);
    uint64_t t0 = fp_now_ms();
    assert_int_equal(lev_global_set(vc, "g", "x", 1), LEV_EPEER);
    assert_true(fp_now_ms() - t0 < 5000);
    s_detail_has("unreachable");
    void *value = (void *)1;
    size_t len = 3;
    assert_int_equal(lev_global_get(vc, "g", &value, &len), LEV_EPEER);
    assert_null(value);
    assert_int_equal(len, 0);
    assert_int_equal(lev_vt_send(vc, id, "x", 1), LEV_EPEER);
    s_detail_has("unreachable");
    assert_int_equal(lev_vc_close(&vc), 0);
    fp_destroy(&fp);
}

/* A peer that answers only malformed messages is no peer: they do not
 * count as signs of life, and lev_vc_open fails with LEV_EPEER. */
static void t_garbage_peer(void **state)
{
    (void)state;
    fake_peer *fp = fp_new(FP_GARBAGE);
    setenv("LEV_PEER_TIMEOUT_MS", T_TIMEOUT_SHORT, 1);
    lev_vc *vc = NULL;
    lev_vc_options o = {.peer = fp_endpoint(fp)};
    uint64_t t0 = fp_now_ms();
    assert_int_equal(lev_vc_open(&vc, &o), LEV_EPEER);
    assert_true(fp_now_ms() - t0 < 5000);
    assert_null(vc);
    assert_true(fp_seen_get(fp).opens == 0); /* it saw OPEN but answers garbage */
    fp_destroy(&fp);
}

/* Malformed and misdirected messages between the real answers are
 * dropped: everything works as with a clean peer. */
static void t_noisy_peer(void **state)
{
    (void)state;
    fake_peer *fp = fp_new(FP_NOISY);
    reports r = {.mu = PTHREAD_MUTEX_INITIALIZER, .main = pthread_self()};
    setenv("LEV_DEBUG", "1", 1);
    lev_vc *vc = s_open(fp);
    assert_int_equal(lev_vc_on_report(vc, s_on_report, &r), 0);
    lev_vt_id id = s_start(vc, "echo", "clean");
    void *res = NULL;
    size_t len = 0;
    assert_int_equal(lev_vt_join(vc, id, &res, &len, -1), 0);
    assert_int_equal(len, 6);
    assert_string_equal(res, "clean");
    free(res);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.text[0], "clean");
    id = s_start(vc, "fail", NULL);
    assert_int_equal(lev_vt_join(vc, id, NULL, NULL, -1), LEV_EFAILED);
    /* Malformed GVALUEs come before the true one. */
    assert_int_equal(lev_global_set(vc, "noisy", "kept", 5), 0);
    assert_int_equal(lev_global_get(vc, "noisy", &res, &len), 0);
    assert_int_equal(len, 5);
    assert_string_equal(res, "kept");
    free(res);
    assert_int_equal(lev_global_get(vc, "unset", &res, &len), 0);
    assert_null(res);
    id = s_start(vc, "hold", NULL);
    assert_int_equal(lev_vt_send(vc, id, "m", 2), 0);
    /* A short STATS_REPLY, one of another VC and one with a byte too many
     * come before the true one. */
    fp_set_stats(fp, &s_counts, false);
    lev_vc_stats st;
    assert_int_equal(lev_vc_stats_get(vc, &st), 0);
    s_counts_equal(&st);
    assert_int_equal(lev_vc_close(&vc), 0);
    unsetenv("LEV_DEBUG");
    fp_destroy(&fp);
}

#ifdef CLIENT_EMBEDDED
/* ===================================================================
 * The embedded peer
 * =================================================================== */

/* With no peer named, the client starts a peer inside the process (on
 * LEV_LISTEN), which runs the carried module's tasks on executor threads;
 * a second VC uses the same peer. */
static void t_embedded(void **state)
{
    (void)state;
    char ep[PC_ENDPOINT_MAX];
    fp_dead_endpoint(ep);
    setenv("LEV_LISTEN", ep, 1);
    reports r = {.mu = PTHREAD_MUTEX_INITIALIZER, .main = pthread_self()};
    lev_vc *vc = NULL, *again = NULL;
    int rc = lev_vc_open(&vc, NULL);
    if (rc)
        fail_msg("lev_vc_open (embedded): %s: %s", lev_strerror(rc), lev_errdetail());
    assert_int_equal(lev_vc_on_report(vc, s_on_report, &r), 0);
    lev_vt_id id = s_start(vc, "cl_echo", "inside");
    void *res = NULL;
    size_t len = 0;
    rc = lev_vt_join(vc, id, &res, &len, 60000);
    if (rc)
        fail_msg("lev_vt_join (embedded): %s: %s", lev_strerror(rc), lev_errdetail());
    assert_int_equal(len, 7);
    assert_string_equal(res, "inside");
    free(res);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.text[0], "inside");
    /* The embedded deployer's counts: its worker, the VT ended. */
    lev_vc_stats st;
    rc = lev_vc_stats_get(vc, &st);
    if (rc)
        fail_msg("lev_vc_stats_get (embedded): %s: %s", lev_strerror(rc), lev_errdetail());
    assert_int_equal(st.peers, 1);
    assert_true(st.cores >= 1);
    assert_int_equal(st.vts, 0);
    assert_int_equal(st.vts_ended, 1);
    assert_true(st.lost_peers == 0 && st.resumes == 0 && st.restarts == 0);

    setenv("LEV_LISTEN", "nonsense", 1); /* a second peer would fail to start */
    assert_int_equal(lev_vc_open(&again, NULL), 0);
    id = s_start(again, "cl_echo", "again");
    assert_int_equal(lev_vt_join(again, id, NULL, NULL, 60000), 0);
    assert_int_equal(lev_vc_close(&again), 0);
    assert_int_equal(lev_vc_close(&vc), 0);
    unsetenv("LEV_LISTEN");
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
#ifdef CLIENT_EMBEDDED
        cmocka_unit_test_setup(t_embedded, s_setup),
#endif
        cmocka_unit_test_setup(t_args, s_setup),
        cmocka_unit_test_setup(t_open_close, s_setup),
        cmocka_unit_test_setup(t_open_refused, s_setup),
        cmocka_unit_test_setup(t_start_join, s_setup),
        cmocka_unit_test_setup(t_failures, s_setup),
        cmocka_unit_test_setup(t_join_timeout, s_setup),
        cmocka_unit_test_setup(t_msg_args, s_setup),
        cmocka_unit_test_setup(t_messages, s_setup),
        cmocka_unit_test_setup(t_globals, s_setup),
        cmocka_unit_test_setup(t_stats, s_setup),
        cmocka_unit_test_setup(t_reports, s_setup),
        cmocka_unit_test_setup(t_threads, s_setup),
        cmocka_unit_test_setup(t_unreachable, s_setup),
        cmocka_unit_test_setup(t_peer_lost, s_setup),
        cmocka_unit_test_setup(t_globals_peer_lost, s_setup),
        cmocka_unit_test_setup(t_garbage_peer, s_setup),
        cmocka_unit_test_setup(t_noisy_peer, s_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
