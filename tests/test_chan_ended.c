/* test_chan_ended.c - the ends of other virtual threads in a VT's channels
 * (runtime/vtchan.h, RT_IN_ENDED): a receive from a VT that ended takes
 * its messages first, then returns the end's error, at once and again on
 * every later receive from it; LEV_ANY passes the end over; an end and a
 * receive's own timeout are taken in stream order; the set of ended VTs
 * travels in the portable state, which still loads in its versions 1 and 2.
 *
 * Task code is one hand-written body (a script of receives in its
 * argument) as levpp generates it, with lev_recv_try and LEV_SP_BLOCK.
 * The test plays the deployer: it appends each entry of the VT's stream,
 * answers timeout requests and acknowledges. Every wait has a time limit.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <setjmp.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "clock.h"
#include "executor.h"
#include "lev_client.h"
#include "lev_task.h"
#include "rt.h"
#include "vt.h"
#include "vtchan.h"

#define LIMIT_MS 20000 /* generous bound for anything that must happen */
#define ME 10u         /* the VT under test */
#define X 11u          /* a peer that ends */
#define Y 12u          /* another */
#define SMAX 64        /* entries of its stream */
#define LOGMAX 16

/* ===================================================================
 * The task: receives, each logged
 * =================================================================== */

typedef struct rcv {
    int32_t from, timeout_ms;
} rcv;

typedef struct log_ent {
    int rc;
    uint64_t from;
    int32_t v;
} log_ent;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    rt_vt *vt;
    rt_in s[SMAX];
    int32_t val[SMAX];
    size_t n;
    uint64_t have, consumed;
    int ntimeouts;
    log_ent log[LOGMAX];
    int nlog;
} H = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static lev_module *g_mod;

struct recvs__frame {
    lev_task_frame t;
    int64_t i;
    uint64_t from;
    void *buf;
    int64_t len;
};

static void s_log(int rc, uint64_t from, const void *buf, size_t len)
{
    int32_t v = -1;
    if (!rc && len == sizeof v)
        memcpy(&v, buf, sizeof v);
    pthread_mutex_lock(&H.mu);
    if (H.nlog < LOGMAX)
        H.log[H.nlog++] = (log_ent){rc, from, v};
    pthread_cond_broadcast(&H.cv);
    pthread_mutex_unlock(&H.mu);
}

static int recvs__run(lev_ctx *vt, void *frame)
{
    struct recvs__frame *fr = frame;
    const rcv *r = fr->t.arg;
    if (fr->t.h.pc == 1)
        goto resume_1;
    for (; fr->i < (int64_t)(fr->t.len / sizeof *r); fr->i++) {
        fr->from = (uint64_t)r[fr->i].from;
        fr->buf = NULL;
    resume_1:;
        size_t n = 0;
        int rc = lev_recv_try(vt, &fr->from, &fr->buf, &n, r[fr->i].timeout_ms);
        if (rc == LEV_BLOCKED) {
            fr->t.h.pc = 1;
            if (lev_safepoint(vt, LEV_SP_BLOCK))
                return LEV_RUN_UNWIND;
            goto resume_1;
        }
        s_log(rc, fr->from, fr->buf, n);
        lev_free(fr->buf);
        fr->buf = NULL;
    }
    return LEV_RUN_DONE;
}

#define F(type, field, kind)                                                                       \
    {                                                                                              \
#field, (uint32_t)offsetof(type, field), kind, 1, 0                                        \
    }
#define NF(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))

static const lev_field_desc f_recvs[] = {
    F(struct recvs__frame, t.arg, LEV_K_PTR), F(struct recvs__frame, t.len, LEV_K_B8),
    F(struct recvs__frame, i, LEV_K_B8),      F(struct recvs__frame, from, LEV_K_B8),
    F(struct recvs__frame, buf, LEV_K_PTR),   F(struct recvs__frame, len, LEV_K_B8)};
static const lev_type_desc s_types[] = {{"struct recvs__frame",
                                         (uint32_t)sizeof(struct recvs__frame), NF(f_recvs),
                                         f_recvs, _Alignof(struct recvs__frame)}};
static const lev_fn_desc s_fns[] = {{"recvs", NULL, recvs__run, LEV_T_USER, LEV_FN_TASK}};
static const lev_module_desc s_desc = {
    LEV_ABI_VERSION, "test_chan_ended", NF(s_types), s_types, NF(s_fns), s_fns, 0, NULL};

/* ===================================================================
 * The deployer's side
 * =================================================================== */

/* Under H.mu: appends an entry to the stream and delivers it if the VT
 * is there. */
static void h_append_locked(uint8_t kind, uint64_t from, uint64_t ref, int32_t err, int32_t v)
{
    assert_true(H.n < SMAX);
    size_t i = H.n++;
    H.val[i] = v;
    H.s[i] = (rt_in){.d = i + 1,
                     .from = from,
                     .ref = ref,
                     .err = err,
                     .kind = kind,
                     .data = kind == RT_IN_MSG ? &H.val[i] : NULL,
                     .len = kind == RT_IN_MSG ? sizeof H.val[i] : 0};
    if (H.vt)
        assert_int_equal(rt_ch_deliver(H.vt, &H.s[i]), 0);
    pthread_cond_broadcast(&H.cv);
}

static void h_msg(uint64_t from, int32_t v)
{
    pthread_mutex_lock(&H.mu);
    h_append_locked(RT_IN_MSG, from, 0, 0, v);
    pthread_mutex_unlock(&H.mu);
}

static void h_ended(uint64_t vt, int32_t err)
{
    pthread_mutex_lock(&H.mu);
    h_append_locked(RT_IN_ENDED, vt, 0, err, 0);
    pthread_mutex_unlock(&H.mu);
}

static void h_out(rt_vt *vt, const rt_out *o, void *ud)
{
    (void)ud;
    pthread_mutex_lock(&H.mu);
    if (o->kind == RT_OUT_CONSUMED) {
        H.consumed = o->ref;
    } else if (o->seq > H.have) {
        assert_int_equal(o->seq, H.have + 1);
        H.have = o->seq;
        assert_int_equal(o->kind, RT_OUT_TIMEOUT);
        H.ntimeouts++;
        h_append_locked(RT_IN_TIMEOUT, 0, o->ref, 0, 0);
    }
    if (o->kind != RT_OUT_CONSUMED)
        rt_ch_ack(vt, H.have);
    pthread_cond_broadcast(&H.cv);
    pthread_mutex_unlock(&H.mu);
}

static const rt_ch_host s_host = {.out = h_out};

/* Waits until pred() holds under H.mu, at most LIMIT_MS; whether it did. */
static bool h_until(bool (*pred)(const void *), const void *arg)
{
    uint64_t end = rt_now_ns() + (uint64_t)LIMIT_MS * 1000000u;
    pthread_mutex_lock(&H.mu);
    bool ok;
    while (!(ok = pred(arg)) && rt_now_ns() < end) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 5000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&H.cv, &H.mu, &ts);
    }
    pthread_mutex_unlock(&H.mu);
    return ok;
}

static bool p_nlog(const void *arg) { return H.nlog >= *(const int *)arg; }

static bool p_parked(const void *arg)
{
    return H.nlog >= *(const int *)arg && H.vt->state == RT_VT_BLOCKED;
}

/* Waits until the VT has logged n receives and is parked in the next. */
static void s_parked_after(int n) { assert_true(h_until(p_parked, &n)); }

/* A VT running the receives r[n], its stream the test's, not spawned. */
static rt_vt *s_new(const rcv *r, size_t n)
{
    rt_vt *vt = NULL;
    assert_int_equal(rt_vt_new(g_mod, 0, r, n * sizeof *r, &vt), 0);
    assert_int_equal(rt_vt_set_identity(vt, ME, 1), 0);
    return vt;
}

/* Runs vt to its end, delivering what the stream holds first. */
static void s_run(rt_exec *ex, rt_vt *vt)
{
    pthread_mutex_lock(&H.mu);
    H.vt = vt;
    for (uint64_t d = rt_ch_next_in(vt); d <= H.n; d++)
        assert_int_equal(rt_ch_deliver(vt, &H.s[d - 1]), 0);
    pthread_mutex_unlock(&H.mu);
    assert_int_equal(rt_exec_spawn(ex, vt), 0);
}

static void s_done(rt_exec *ex, rt_vt *vt)
{
    assert_int_equal(rt_exec_wait(ex, vt, LIMIT_MS), 0);
    if (vt->state != RT_VT_DONE)
        fail_msg("the VT ended in state %d: %s (%s)", vt->state, lev_strerror(vt->err),
                 vt->errdetail ? vt->errdetail : "");
}

static rt_exec *s_exec(void)
{
    rt_exec_opts o = {.workers = 1, .chan = &s_host};
    rt_exec *ex = NULL;
    assert_int_equal(rt_exec_new(&ex, &o), 0);
    return ex;
}

static int s_setup(void **state)
{
    (void)state;
    pthread_mutex_lock(&H.mu);
    H.vt = NULL;
    H.n = 0;
    H.have = H.consumed = 0;
    H.ntimeouts = H.nlog = 0;
    pthread_mutex_unlock(&H.mu);
    return 0;
}

static void s_want(int i, int rc, uint64_t from, int32_t v)
{
    if (H.log[i].rc != rc || H.log[i].from != from || H.log[i].v != v)
        fail_msg("receive %d returned %d from %llu (value %d), not %d from %llu (%d)", i,
                 H.log[i].rc, (unsigned long long)H.log[i].from, H.log[i].v, rc,
                 (unsigned long long)from, v);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ===================================================================
 * Tests
 * =================================================================== */

/* A VT parked in a receive from X is woken by X's end and returns its
 * error, after the messages X sent; every later receive from X returns
 * it at once; LEV_ANY passes the end over (and times out). */
static void test_recv_from_failed(void **state)
{
    (void)state;
    rt_exec *ex = s_exec();
    const rcv r[] = {{X, -1}, {X, -1}, {X, -1}, {X, 0}, {LEV_ANY, 0}};
    rt_vt *vt = s_new(r, N(r));
    s_run(ex, vt);
    s_parked_after(0);
    h_msg(X, 1);
    s_parked_after(1);
    h_ended(X, LEV_EFAILED);
    s_done(ex, vt);
    assert_int_equal(H.nlog, 5);
    s_want(0, 0, X, 1);
    s_want(1, LEV_EFAILED, X, -1);
    s_want(2, LEV_EFAILED, X, -1);
    s_want(3, LEV_EFAILED, X, -1); /* timeout 0: the end is there already */
    s_want(4, LEV_ETIMEDOUT, LEV_ANY, -1);
    assert_int_equal(H.ntimeouts, 2); /* one per receive with a limit */
    assert_int_equal(H.consumed, H.n);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&vt);
}

/* Everything X sent comes before its end, though other receives passed
 * over the end; an end of a normal finish is LEV_ENOVT; LEV_ANY takes the
 * next message past an end. */
static void test_stream_order(void **state)
{
    (void)state;
    h_msg(X, 1);
    h_msg(X, 2);
    h_ended(X, LEV_ENOVT);
    h_msg(Y, 3);
    h_ended(Y, LEV_EFAILED);
    h_msg(LEV_CLIENT, 4);
    rt_exec *ex = s_exec();
    const rcv r[] = {{Y, -1}, {Y, -1}, {LEV_ANY, -1}, {X, -1},
                     {X, -1}, {Y, -1}, {LEV_ANY, -1}, {X, 0}};
    rt_vt *vt = s_new(r, N(r));
    s_run(ex, vt);
    s_done(ex, vt);
    assert_int_equal(H.nlog, 8);
    s_want(0, 0, Y, 3);
    s_want(1, LEV_EFAILED, Y, -1);
    s_want(2, 0, X, 1);
    s_want(3, 0, X, 2);
    s_want(4, LEV_ENOVT, X, -1);
    s_want(5, LEV_EFAILED, Y, -1);
    s_want(6, 0, LEV_CLIENT, 4);
    s_want(7, LEV_ENOVT, X, -1);
    assert_int_equal(H.consumed, 6); /* all but the last receive's stale timeout answer */
    assert_int_equal(H.n, 7);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&vt);
}

/* A receive's own timeout before the end in the stream wins; an end
 * before it wins, and the receive still asked for its timeout once (the
 * answer is passed over later). */
static void test_end_and_timeout(void **state)
{
    (void)state;
    rt_exec *ex = s_exec();
    const rcv r[] = {{X, 20}, {X, 10000}, {Y, -1}};
    rt_vt *vt = s_new(r, N(r));
    s_run(ex, vt);
    int one = 1;
    assert_true(h_until(p_nlog, &one)); /* timed out through the stream */
    h_ended(X, LEV_EFAILED);
    s_parked_after(2);
    h_msg(Y, 5);
    s_done(ex, vt);
    s_want(0, LEV_ETIMEDOUT, X, -1);
    s_want(1, LEV_EFAILED, X, -1);
    s_want(2, 0, Y, 5);
    assert_int_equal(H.ntimeouts, 2);
    assert_int_equal(H.have, 2);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&vt);
}

/* rt_ch_deliver's checks of an end; a second end of one VT changes
 * nothing. */
static void test_deliver_codes(void **state)
{
    (void)state;
    const rcv r[] = {{X, -1}};
    rt_vt *vt = s_new(r, N(r));
    rt_in in = {.d = 1, .from = X, .kind = RT_IN_ENDED, .err = 0};
    assert_int_equal(rt_ch_deliver(vt, &in), LEV_EINVAL);
    assert_non_null(strstr(lev_errdetail(), "err"));
    in.err = LEV_EFAILED;
    in.from = LEV_CLIENT;
    assert_int_equal(rt_ch_deliver(vt, &in), LEV_EINVAL);
    in.from = LEV_ANY;
    assert_int_equal(rt_ch_deliver(vt, &in), LEV_EINVAL);
    in.from = X;
    assert_int_equal(rt_ch_deliver(vt, &in), 0);
    assert_int_equal(rt_ch_deliver(vt, &in), 1); /* duplicate */
    in.d = 2;
    in.err = LEV_ENOVT;
    assert_int_equal(rt_ch_deliver(vt, &in), 0);
    assert_int_equal(rt_ch_next_in(vt), 3);
    assert_true(rt_ch_capture_ok(vt));
    rt_exec *ex = s_exec();
    pthread_mutex_lock(&H.mu);
    H.n = 2; /* what it has: no entry is delivered again */
    pthread_mutex_unlock(&H.mu);
    s_run(ex, vt);
    s_done(ex, vt);
    s_want(0, LEV_EFAILED, X, -1); /* the first end */
    rt_exec_destroy(&ex);
    rt_vt_destroy(&vt);
}

/* The set of ended VTs in the portable state: a round trip gives the same
 * bytes and the same answers; truncations and damaged entries are
 * refused naming the field; version-1 and -2 states still load. */
static void test_save_load(void **state)
{
    (void)state;
    const rcv r[] = {{X, -1}, {X, -1}, {Y, -1}, {X, -1}};
    rt_vt *a = s_new(r, N(r));
    pthread_mutex_lock(&H.mu);
    H.vt = a;
    pthread_mutex_unlock(&H.mu);
    h_msg(X, 7);
    uint8_t *v1 = NULL, *buf = NULL, *buf2 = NULL;
    size_t v1len = 0, len = 0, len2 = 0;
    assert_int_equal(rt_ch_save(a, &v1, &v1len), 0); /* no end yet */
    h_ended(X, LEV_EFAILED);
    h_ended(Y, LEV_ENOVT);
    assert_int_equal(rt_ch_save(a, &buf, &len), 0);
    assert_int_equal(len, v1len + 2 * 20);
    rt_vt *b = s_new(r, N(r));
    assert_int_equal(rt_ch_load(b, buf, len), 0);
    assert_int_equal(rt_ch_save(b, &buf2, &len2), 0);
    assert_int_equal(len2, len);
    assert_memory_equal(buf2, buf, len);
    free(buf2);
    rt_vt *c = s_new(r, N(r));
    for (size_t cut = 0; cut < len; cut++)
        assert_int_equal(rt_ch_load(c, buf, cut), LEV_EIMAGE);
    const size_t last = len - 4 - 20; /* Y's entry: id, position, err; then an empty set */
    buf[last + 19] = 0;               /* err 0x00fffffd: not negative */
    assert_int_equal(rt_ch_load(c, buf, len), LEV_EIMAGE);
    assert_non_null(strstr(lev_errdetail(), "ended err"));
    buf[last + 19] = 0xff;
    buf[last + 8] = 9; /* position 9: beyond the next input */
    assert_int_equal(rt_ch_load(c, buf, len), LEV_EIMAGE);
    assert_non_null(strstr(lev_errdetail(), "ended position"));
    buf[last + 8] = 3;
    buf[last] = (uint8_t)X; /* X twice */
    assert_int_equal(rt_ch_load(c, buf, len), LEV_EIMAGE);
    assert_non_null(strstr(lev_errdetail(), "ended id"));
    buf[last] = (uint8_t)Y;
    assert_int_equal(rt_ch_load(c, buf, len), 0);
    assert_memory_equal(v1, buf, 4); /* the same magic */
    /* version 1: the state without the count of ended VTs (nor that of
     * reads answered ahead, version 3's); version 2: without the latter */
    for (uint8_t ver = 1; ver <= 2; ver++) {
        v1[4] = ver;
        assert_int_equal(rt_ch_load(c, v1, v1len), LEV_EIMAGE); /* the counts: extra bytes */
        assert_non_null(strstr(lev_errdetail(), "extra"));
        assert_int_equal(rt_ch_load(c, v1, v1len - 4 * (3u - ver)), 0);
        assert_int_equal(rt_ch_save(c, &buf2, &len2), 0);
        v1[4] = 3;
        assert_int_equal(len2, v1len);
        assert_memory_equal(buf2, v1, v1len); /* saved again as version 3, empty sets */
        free(buf2);
    }
    v1[4] = 4;
    assert_int_equal(rt_ch_load(c, v1, v1len), LEV_EVERSION);
    free(v1);
    free(buf);
    /* the loaded copy answers as the original would have */
    rt_exec *ex = s_exec();
    pthread_mutex_lock(&H.mu);
    H.vt = NULL;
    pthread_mutex_unlock(&H.mu);
    s_run(ex, b);
    s_done(ex, b);
    assert_int_equal(H.nlog, 4);
    s_want(0, 0, X, 7);
    s_want(1, LEV_EFAILED, X, -1);
    s_want(2, LEV_ENOVT, Y, -1);
    s_want(3, LEV_EFAILED, X, -1);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&a);
    rt_vt_destroy(&b);
    rt_vt_destroy(&c);
}

int main(void)
{
    rt_init();
    if (lev_module_register(&s_desc, &g_mod)) {
        fprintf(stderr, "test_chan_ended: cannot register the test module: %s\n", lev_errdetail());
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_recv_from_failed, s_setup),
        cmocka_unit_test_setup(test_stream_order, s_setup),
        cmocka_unit_test_setup(test_end_and_timeout, s_setup),
        cmocka_unit_test_setup(test_deliver_codes, s_setup),
        cmocka_unit_test_setup(test_save_load, s_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
