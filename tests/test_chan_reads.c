/* test_chan_reads.c - reads answered by the host ahead of their log
 * (runtime/vtchan.h, rt_ch_read_answer): a read takes the answer its
 * host gave at once, its logged RT_IN_READ is passed over when it comes,
 * and an image taken after the read (the set of reads answered ahead in
 * the portable state) or before it (the read asked again, answered by
 * the log) resumes with the value the first run read; the outbox keeps
 * the answer (revision and value) until it is acknowledged, and a resend
 * carries it; answers for a read that is not waiting, or whose logged
 * answer came first, are dropped.
 *
 * Task code is one hand-written body (a script of reads of "g" in its
 * argument) as levpp generates it, with lev_global_read_try and
 * LEV_SP_BLOCK. The test plays the host: it appends the VT's stream and
 * keeps what the VT sent. Every wait has a time limit.
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
#define ME 10u
#define SMAX 32
#define OMAX 32
#define LOGMAX 16

/* ===================================================================
 * The task: n reads of "g", each value logged
 * =================================================================== */

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    rt_vt *vt;
    rt_in s[SMAX]; /* the logged stream */
    int32_t val[SMAX];
    size_t n;
    rt_out o[OMAX]; /* outputs as sent (the read ones: seq, ref, the value in oval) */
    int32_t oval[OMAX];
    size_t no;
    uint64_t consumed; /* the last RT_OUT_CONSUMED */
    bool ack;          /* acknowledge each output at once */
    int32_t log[LOGMAX];
    int nlog;
} H = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static lev_module *g_mod;

struct reads__frame {
    lev_task_frame t;
    int64_t i;
    void *buf;
};

static int reads__run(lev_ctx *vt, void *frame)
{
    struct reads__frame *fr = frame;
    if (fr->t.h.pc == 1)
        goto resume_1;
    for (; fr->i < (int64_t)fr->t.len; fr->i++) {
        fr->buf = NULL;
    resume_1:;
        size_t n = 0;
        int rc = lev_global_read_try(vt, "g", &fr->buf, &n);
        if (rc == LEV_BLOCKED) {
            fr->t.h.pc = 1;
            if (lev_safepoint(vt, LEV_SP_BLOCK))
                return LEV_RUN_UNWIND;
            goto resume_1;
        }
        int32_t v = rc ? rc : -1;
        if (!rc && n == sizeof v)
            memcpy(&v, fr->buf, sizeof v);
        pthread_mutex_lock(&H.mu);
        if (H.nlog < LOGMAX)
            H.log[H.nlog++] = v;
        pthread_cond_broadcast(&H.cv);
        pthread_mutex_unlock(&H.mu);
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

static const lev_field_desc f_reads[] = {
    F(struct reads__frame, t.arg, LEV_K_PTR), F(struct reads__frame, t.len, LEV_K_B8),
    F(struct reads__frame, i, LEV_K_B8), F(struct reads__frame, buf, LEV_K_PTR)};
static const lev_type_desc s_types[] = {{"struct reads__frame",
                                         (uint32_t)sizeof(struct reads__frame), NF(f_reads),
                                         f_reads, _Alignof(struct reads__frame)}};
static const lev_fn_desc s_fns[] = {{"reads", NULL, reads__run, LEV_T_USER, LEV_FN_TASK}};
static const lev_module_desc s_desc = {
    LEV_ABI_VERSION, "test_chan_reads", NF(s_types), s_types, NF(s_fns), s_fns, 0, NULL};

/* ===================================================================
 * The host's side
 * =================================================================== */

/* Logs the answer of read `seq` (value v) and delivers it if the VT is
 * there and asked. */
static void h_logged(uint64_t seq, int32_t v)
{
    pthread_mutex_lock(&H.mu);
    assert_true(H.n < SMAX);
    size_t i = H.n++;
    H.val[i] = v;
    H.s[i] = (rt_in){
        .d = i + 1, .ref = seq, .kind = RT_IN_READ, .data = &H.val[i], .len = sizeof H.val[i]};
    if (H.vt)
        assert_int_equal(rt_ch_deliver(H.vt, &H.s[i]), 0);
    pthread_cond_broadcast(&H.cv);
    pthread_mutex_unlock(&H.mu);
}

static void h_out(rt_vt *vt, const rt_out *o, void *ud)
{
    (void)ud;
    pthread_mutex_lock(&H.mu);
    if (o->kind == RT_OUT_CONSUMED)
        H.consumed = o->ref;
    if (o->kind != RT_OUT_CONSUMED) {
        assert_true(H.no < OMAX);
        rt_out *k = &H.o[H.no];
        *k = *o;
        k->name = NULL;
        k->data = NULL;
        H.oval[H.no] = -1;
        if (o->len == sizeof(int32_t))
            memcpy(&H.oval[H.no], o->data, sizeof(int32_t));
        H.no++;
        if (H.ack)
            rt_ch_ack(vt, o->seq);
    }
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

static bool p_parked(const void *arg)
{
    return H.nlog >= *(const int *)arg && H.vt && H.vt->state == RT_VT_BLOCKED;
}

/* Waits until the VT has logged n reads and is parked in the next. */
static void s_parked_after(int n) { assert_true(h_until(p_parked, &n)); }

/* A VT making n reads, not spawned. */
static rt_vt *s_new(size_t n)
{
    rt_vt *vt = NULL;
    static const char arg[8];
    assert_int_equal(rt_vt_new(g_mod, 0, arg, n, &vt), 0);
    assert_int_equal(rt_vt_set_identity(vt, ME, 1), 0);
    return vt;
}

/* Runs vt, delivering what the stream holds first. */
static void s_run(rt_exec *ex, rt_vt *vt)
{
    pthread_mutex_lock(&H.mu);
    H.vt = vt;
    for (uint64_t d = rt_ch_next_in(vt); d <= H.n; d++)
        assert_int_equal(rt_ch_deliver(vt, &H.s[d - 1]), 0);
    pthread_mutex_unlock(&H.mu);
    rt_ch_resend(vt);
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
    H.n = H.no = 0;
    H.nlog = 0;
    H.consumed = 0;
    H.ack = false;
    pthread_mutex_unlock(&H.mu);
    return 0;
}

static int32_t s_v(int32_t v) { return v; }
#define ANSWER(vt, seq, rev, v)                                                                    \
    do {                                                                                           \
        int32_t x_ = s_v(v);                                                                       \
        assert_int_equal(rt_ch_read_answer((vt), (seq), (rev), &x_, sizeof x_), 0);                \
    } while (0)

/* ===================================================================
 * Tests
 * =================================================================== */

/* A read takes its host's answer at once; the logged copy is passed over
 * (it does not answer the next read); the next read waits for its own. */
static void test_answer_ahead(void **state)
{
    (void)state;
    rt_exec *ex = s_exec();
    rt_vt *vt = s_new(3);
    s_run(ex, vt);
    s_parked_after(0);
    ANSWER(vt, 1, 5, 50);
    s_parked_after(1);
    assert_int_equal(H.log[0], 50);
    h_logged(1, 50); /* the log's copy of read 1: passed over */
    ANSWER(vt, 2, 5, 51);
    s_parked_after(2);
    h_logged(2, 51);
    h_logged(3, 60); /* read 3 answered by the log only */
    s_done(ex, vt);
    assert_int_equal(H.nlog, 3);
    assert_int_equal(H.log[1], 51);
    assert_int_equal(H.log[2], 60);
    assert_int_equal(rt_ch_next_in(vt), 4);
    assert_int_equal(H.consumed, 3); /* nothing left in the stream */
    rt_exec_destroy(&ex);
    rt_vt_destroy(&vt);
}

/* The outbox keeps the answer until it is acknowledged: a resend carries
 * the revision and the value; a second answer of the same read, and an
 * answer of a read that is not in the outbox, are dropped; a read whose
 * logged answer is in the stream takes that one. */
static void test_outbox_and_drops(void **state)
{
    (void)state;
    rt_exec *ex = s_exec();
    rt_vt *vt = s_new(2);
    s_run(ex, vt);
    s_parked_after(0);
    ANSWER(vt, 1, 7, 70);
    int32_t x = 71;
    assert_int_equal(rt_ch_read_answer(vt, 1, 8, &x, sizeof x), 1); /* answered already */
    assert_int_equal(rt_ch_read_answer(vt, 9, 8, &x, sizeof x), 1); /* no such read */
    assert_int_equal(rt_ch_read_answer(vt, 1, 0, &x, sizeof x), LEV_EINVAL);
    s_parked_after(1);
    assert_int_equal(H.log[0], 70);
    size_t before = H.no;
    rt_ch_resend(vt);
    pthread_mutex_lock(&H.mu);
    assert_int_equal(H.no, before + 2); /* reads 1 and 2 */
    assert_int_equal(H.o[before].kind, RT_OUT_READ);
    assert_int_equal(H.o[before].seq, 1);
    assert_int_equal(H.o[before].ref, 7);
    assert_int_equal(H.oval[before], 70);
    assert_int_equal(H.o[before + 1].ref, 0); /* read 2 not answered */
    pthread_mutex_unlock(&H.mu);
    h_logged(1, 70);
    h_logged(2, 80);                                                /* the log first */
    assert_int_equal(rt_ch_read_answer(vt, 2, 9, &x, sizeof x), 1); /* its logged answer came */
    s_done(ex, vt);
    assert_int_equal(H.log[1], 80);
    rt_ch_ack(vt, 2);
    assert_int_equal(rt_ch_read_answer(vt, 2, 9, &x, sizeof x), 1); /* acknowledged */
    rt_exec_destroy(&ex);
    rt_vt_destroy(&vt);
}

/* Images: one taken after a read answered ahead holds the read in its
 * set (the logged copy is passed over on the copy too); one taken while
 * the read waited, with its answer in the outbox, returns that answer;
 * one taken before the answer reads what the log holds. Each consumes
 * its whole stream. The set round-trips and a damaged set is refused
 * naming the field. */
static void test_images(void **state)
{
    (void)state;
    rt_exec *ex = s_exec();
    rt_vt *a = s_new(2);
    s_run(ex, a);
    s_parked_after(0);
    uint8_t *before = NULL, *mid = NULL, *after = NULL;
    size_t lb = 0, lm = 0, la = 0;
    assert_int_equal(rt_ch_save(a, &before, &lb), 0); /* read 1 asked, not answered */
    ANSWER(a, 1, 3, 30);
    s_parked_after(1);
    assert_int_equal(rt_ch_save(a, &after, &la), 0); /* taken: in the set */
    pthread_mutex_lock(&H.mu);
    H.vt = NULL; /* the first run is lost here */
    pthread_mutex_unlock(&H.mu);
    rt_exec_destroy(&ex);
    rt_vt *m = s_new(2); /* answered while it waited, not yet taken */
    assert_int_equal(rt_ch_load(m, before, lb), 0);
    ANSWER(m, 1, 3, 30);
    assert_int_equal(rt_ch_save(m, &mid, &lm), 0);
    rt_vt_destroy(&m);
    assert_int_equal(after[la - 12], 1); /* the set: one read, number 1 */
    assert_int_equal(after[la - 8], 1);
    assert_int_equal(mid[lm - 4], 0); /* the set: empty */
    const struct {
        const uint8_t *img;
        size_t len;
        int reads; /* made by the resumed copy */
    } im[] = {{before, lb, 2}, {mid, lm, 2}, {after, la, 1}};
    for (size_t k = 0; k < 3; k++) {
        s_setup(NULL);
        ex = s_exec();
        rt_vt *b = s_new((size_t)im[k].reads); /* the channel state only: the task starts */
        assert_int_equal(rt_ch_load(b, im[k].img, im[k].len), 0);
        s_run(ex, b);
        s_parked_after(k == 1 ? 1 : 0); /* the image in between takes its answer at once */
        h_logged(1, 30);                /* what the host logged: the answer it gave */
        if (k == 0)
            s_parked_after(1);
        h_logged(2, 40);
        s_done(ex, b);
        assert_int_equal(H.nlog, im[k].reads);
        if (im[k].reads == 2)
            assert_int_equal(H.log[0], 30);
        assert_int_equal(H.log[im[k].reads - 1], 40);
        assert_int_equal(H.consumed, 2);
        rt_exec_destroy(&ex);
        rt_vt_destroy(&b);
    }
    /* the set: a round trip keeps it; damage is named */
    rt_vt *c = s_new(2);
    uint8_t *again = NULL;
    size_t lg = 0;
    assert_int_equal(rt_ch_load(c, after, la), 0);
    assert_int_equal(rt_ch_save(c, &again, &lg), 0);
    assert_int_equal(lg, la);
    assert_memory_equal(again, after, la);
    free(again);
    after[la - 8] = 0; /* read number 0 */
    assert_int_equal(rt_ch_load(c, after, la), LEV_EIMAGE);
    assert_non_null(strstr(lev_errdetail(), "ahead read number"));
    after[la - 8] = 99; /* beyond the output counter */
    assert_int_equal(rt_ch_load(c, after, la), LEV_EIMAGE);
    assert_non_null(strstr(lev_errdetail(), "ahead read number"));
    for (size_t cut = la - 12; cut < la; cut++)
        assert_int_equal(rt_ch_load(c, after, cut), LEV_EIMAGE);
    rt_vt_destroy(&c);
    rt_vt_destroy(&a);
    free(before);
    free(mid);
    free(after);
}

int main(void)
{
    rt_init();
    if (lev_module_register(&s_desc, &g_mod)) {
        fprintf(stderr, "test_chan_reads: cannot register the test module: %s\n", lev_errdetail());
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_answer_ahead, s_setup),
        cmocka_unit_test_setup(test_outbox_and_drops, s_setup),
        cmocka_unit_test_setup(test_images, s_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
