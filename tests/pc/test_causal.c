/* test_causal.c - the causal-logging engines by hand: an executor's
 * (peercontroller/causal.h) and the deployer's log of determinants
 * (peercontroller/detlog.h), each case small enough to read; the
 * simulation (test_causalsim.c) runs them under faults.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "causal.h"
#include "detlog.h"
#include "lev_errors.h"

/* What an engine did, as its callbacks saw it. */
typedef struct rec {
    int sent_to[32];
    pc_cx_msg sent[32];
    size_t nsent, carried[32];
    pc_cx_det dets[64];
    size_t ndets;
    uint64_t delivered_pos[32], delivered_from[32], delivered_seq[32];
    size_t ndelivered;
    int credit_to[32];
    uint64_t credit_from[32], credit_vt[32], credit_seq[32];
    size_t ncredits;
} rec;

static void s_credit(void *ud, int peer, uint64_t from, uint64_t to, uint64_t seq)
{
    rec *r = ud;
    assert_true(r->ncredits < 32);
    r->credit_to[r->ncredits] = peer;
    r->credit_from[r->ncredits] = from;
    r->credit_vt[r->ncredits] = to;
    r->credit_seq[r->ncredits++] = seq;
}

static void s_send(void *ud, int peer, const pc_cx_msg *m, const pc_cx_det *d, size_t n)
{
    rec *r = ud;
    (void)d;
    assert_true(r->nsent < 32);
    r->sent_to[r->nsent] = peer;
    r->sent[r->nsent] = *m;
    r->sent[r->nsent].data = NULL;
    r->carried[r->nsent++] = n;
}

static void s_dets(void *ud, const pc_cx_det *d, size_t n)
{
    rec *r = ud;
    for (size_t i = 0; i < n; i++) {
        assert_true(r->ndets < 64);
        r->dets[r->ndets++] = d[i];
    }
}

static void s_deliver(void *ud, uint64_t pos, const pc_cx_msg *m)
{
    rec *r = ud;
    assert_true(r->ndelivered < 32);
    r->delivered_pos[r->ndelivered] = pos;
    r->delivered_from[r->ndelivered] = m->from;
    r->delivered_seq[r->ndelivered++] = m->seq;
}

static pc_cx *s_engine(int self, rec *r)
{
    memset(r, 0, sizeof *r);
    pc_cx_io io = {
        .ud = r, .send = s_send, .dets = s_dets, .deliver = s_deliver, .credit = s_credit};
    pc_cx *cx = pc_cx_new(self, &io);
    assert_non_null(cx);
    return cx;
}

static void s_host(pc_cx *cx, uint64_t vt, uint32_t epoch)
{
    pc_cx_image im = {.vt = vt, .epoch = epoch};
    assert_int_equal(pc_cx_install(cx, &im, NULL, 0), 0);
}

static pc_cx_msg s_msg(uint64_t from, uint64_t to, uint64_t seq)
{
    return (pc_cx_msg){.from = from,
                       .to = to,
                       .seq = seq,
                       .from_epoch = 1,
                       .to_epoch = 1,
                       .data = pc_buf_new("x", 1)};
}

/* A channel's messages take positions in their order, whatever order
 * they come in; a duplicate is dropped; every position is a determinant
 * for the deployer. */
static void t_channel_order(void **state)
{
    (void)state;
    rec r;
    pc_cx *cx = s_engine(1, &r);
    s_host(cx, 3, 1);
    pc_cx_msg m2 = s_msg(2, 3, 2), m1 = s_msg(2, 3, 1), dup = s_msg(2, 3, 1);
    assert_int_equal(pc_cx_on_msg(cx, 0, &m2, NULL, 0), 0);
    assert_int_equal(r.ndelivered, 0); /* waits for number 1 */
    assert_int_equal(pc_cx_on_msg(cx, 0, &m1, NULL, 0), 0);
    assert_int_equal(r.ndelivered, 2);
    assert_int_equal(r.delivered_seq[0], 1);
    assert_int_equal(r.delivered_pos[0], 1);
    assert_int_equal(r.delivered_seq[1], 2);
    assert_int_equal(pc_cx_on_msg(cx, 0, &dup, NULL, 0), 0);
    assert_int_equal(r.ndelivered, 2);
    assert_int_equal(r.ndets, 2);
    assert_int_equal(r.dets[1].pos, 2);
    assert_int_equal(r.dets[1].seq, 2);
    /* consumed: the image stands at 2 and the channel from 2 at 2 */
    pc_cx_consumed(cx, 3, 2);
    pc_cx_image im;
    assert_int_equal(pc_cx_image_of(cx, 3, &im), 0);
    assert_int_equal(im.consumed, 2);
    assert_int_equal(im.ncons, 1);
    assert_int_equal(im.cons[0].seq, 2);
    assert_int_equal(im.ndets, 2); /* not stable yet: carried in the image */
    pc_cx_image_clear(&im);
    pc_cx_stable(cx, 3, 2);
    assert_int_equal(pc_cx_stats_of(cx).unstable, 0);
    pc_cx_destroy(&cx);
    assert_null(cx);
}

/* Flow control, window 8: VT 2 (executor 0) may send 8 messages to VT
 * 3 (executor 1), then waits; VT 3's engine tells executor 0 how far it
 * took the channel every quarter window (2), again when the link is new;
 * the first news that makes room ends the wait, older news changes
 * nothing; a VT installed from an image does not wait for news from
 * before it. The credit's wire form, and what it refuses. */
static void t_flow(void **state)
{
    (void)state;
    rec ra, rb;
    pc_cx *a = s_engine(0, &ra), *b = s_engine(1, &rb);
    pc_cx_set_window(a, 8);
    pc_cx_set_window(b, 8);
    s_host(a, 2, 1);
    s_host(b, 3, 1);
    assert_int_equal(pc_cx_place(a, 3, 1, 1), 0);
    assert_int_equal(pc_cx_place(b, 2, 1, 0), 0);
    for (int i = 0; i < 8; i++) {
        assert_true(pc_cx_may_send(a, 2, 3));
        assert_int_equal(pc_cx_send(a, 2, 3, pc_buf_new("m", 1)), 0);
    }
    assert_false(pc_cx_may_send(a, 2, 3));
    assert_false(pc_cx_may_send(a, 2, 3));
    assert_int_equal(pc_cx_stats_of(a).waits, 1); /* one wait, asked twice */
    assert_true(pc_cx_may_send(a, 2, 4));         /* other channels go on */
    assert_int_equal(ra.nsent, 8);
    for (size_t i = 0; i < 8; i++) {
        pc_cx_msg m = ra.sent[i];
        m.data = pc_buf_new("m", 1);
        assert_int_equal(pc_cx_on_msg(b, 0, &m, NULL, 0), 0);
    }
    assert_int_equal(rb.ndelivered, 8);
    for (uint64_t seq = 1; seq <= 8; seq++)
        pc_cx_taken(b, 3, 2, seq);
    pc_cx_taken(b, 3, 2, 5); /* an older take changes nothing */
    assert_int_equal(rb.ncredits, 4);
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(rb.credit_to[i], 0);
        assert_int_equal(rb.credit_from[i], 2);
        assert_int_equal(rb.credit_vt[i], 3);
        assert_int_equal(rb.credit_seq[i], 2 * (i + 1));
    }
    assert_true(pc_cx_credit(a, 2, 3, 2)); /* room: the wait ends */
    assert_true(pc_cx_may_send(a, 2, 3));
    assert_false(pc_cx_credit(a, 2, 3, 1)); /* older news */
    assert_false(pc_cx_credit(a, 2, 3, 4)); /* no one waits */
    assert_false(pc_cx_credit(a, 9, 3, 4)); /* not hosted */
    pc_cx_resend_peer(b, 0);                /* a new link: told again */
    assert_int_equal(rb.ncredits, 5);
    assert_int_equal(rb.credit_seq[4], 8);
    assert_int_equal(pc_cx_stats_of(b).credits, 5);
    /* 8 more would fill the window again; an image taken now resumes
     * elsewhere without waiting for news from before it */
    for (int i = 0; i < 4; i++)
        assert_int_equal(pc_cx_send(a, 2, 3, pc_buf_new("m", 1)), 0);
    assert_false(pc_cx_may_send(a, 2, 3));
    pc_cx_image im;
    assert_int_equal(pc_cx_image_of(a, 2, &im), 0);
    im.epoch = 2;
    rec rc;
    pc_cx *c = s_engine(2, &rc);
    pc_cx_set_window(c, 8);
    assert_int_equal(pc_cx_install(c, &im, NULL, 0), 0);
    pc_cx_image_clear(&im);
    assert_true(pc_cx_may_send(c, 2, 3));
    pc_cx_destroy(&c);
    pc_cx_destroy(&a);
    pc_cx_destroy(&b);

    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_cx_credit_encode(&w, 2, 3, 77);
    uint64_t f, t, q;
    const char *why;
    assert_int_equal(pc_cx_credit_decode(w.data, w.len, &f, &t, &q, &why), 1);
    assert_int_equal(f, 2);
    assert_int_equal(t, 3);
    assert_int_equal(q, 77);
    assert_int_equal(pc_cx_credit_decode(w.data, w.len - 1, &f, &t, &q, &why), LEV_EINVAL);
    assert_non_null(strstr(why, "truncated"));
    pc_wbuf_free(&w);
    pc_wbuf_init(&w);
    pc_cx_credit_encode(&w, 3, 3, 1);
    assert_int_equal(pc_cx_credit_decode(w.data, w.len, &f, &t, &q, &why), LEV_EINVAL);
    assert_non_null(strstr(why, "itself"));
    pc_wbuf_free(&w);
    pc_wbuf_init(&w);
    pc_cx_msg m = s_msg(2, 3, 1);
    pc_cx_encode(&w, &m, NULL, 0);
    pc_buf_drop(&m.data);
    assert_int_equal(pc_cx_credit_decode(w.data, w.len, &f, &t, &q, &why), 0); /* a message */
    pc_wbuf_free(&w);
}

/* A send is numbered per channel, logged, and sent once the receiver is
 * placed, with the determinants its executor is not known to have, once. */
static void t_send_log_trim(void **state)
{
    (void)state;
    rec r;
    pc_cx *cx = s_engine(0, &r);
    s_host(cx, 2, 1);
    assert_int_equal(pc_cx_send(cx, 9, 3, pc_buf_new("a", 1)), LEV_ENOVT);
    pc_cx_msg in = s_msg(4, 2, 1); /* a determinant to carry */
    assert_int_equal(pc_cx_on_msg(cx, 2, &in, NULL, 0), 0);
    assert_int_equal(pc_cx_send(cx, 2, 3, pc_buf_new("a", 1)), 0);
    assert_int_equal(r.nsent, 0); /* VT 3 not placed yet */
    assert_int_equal(pc_cx_place(cx, 3, 1, 5), 0);
    assert_int_equal(r.nsent, 1);
    assert_int_equal(r.sent_to[0], 5);
    assert_int_equal(r.sent[0].seq, 1);
    assert_int_equal(r.carried[0], 1);
    assert_int_equal(pc_cx_send(cx, 2, 3, pc_buf_new("b", 1)), 0);
    assert_int_equal(r.sent[1].seq, 2);
    assert_int_equal(r.carried[1], 0); /* executor 5 has it */
    pc_cx_image im;
    assert_int_equal(pc_cx_image_of(cx, 2, &im), 0);
    assert_int_equal(im.nlog, 2);
    pc_cx_image_clear(&im);
    pc_cx_mark upto = {.vt = 2, .seq = 1};
    pc_cx_trim(cx, 3, &upto, 1);
    assert_int_equal(pc_cx_image_of(cx, 2, &im), 0);
    assert_int_equal(im.nlog, 1);
    assert_int_equal(im.log[0].seq, 2);
    pc_cx_image_clear(&im);
    pc_cx_destroy(&cx);
}

/* What a fenced incarnation sends is dropped; a message early for an
 * incarnation to be installed here waits for it. */
static void t_fence_and_early(void **state)
{
    (void)state;
    rec r;
    pc_cx *cx = s_engine(1, &r);
    s_host(cx, 3, 1);
    assert_int_equal(pc_cx_place(cx, 2, 2, -1), 0); /* VT 2's incarnation 1 is fenced */
    pc_cx_msg stale = s_msg(2, 3, 1);
    assert_int_equal(pc_cx_on_msg(cx, 0, &stale, NULL, 0), 0);
    assert_int_equal(pc_cx_stats_of(cx).fenced, 1);
    assert_int_equal(r.ndelivered, 0);
    pc_cx_msg early = s_msg(3, 4, 1);
    early.to_epoch = 2;
    assert_int_equal(pc_cx_on_msg(cx, 0, &early, NULL, 0), 0);
    assert_int_equal(pc_cx_stats_of(cx).early, 1);
    s_host(cx, 4, 2);
    assert_int_equal(pc_cx_stats_of(cx).early, 0);
    assert_int_equal(r.ndelivered, 1);
    assert_int_equal(r.delivered_from[0], 3);
    pc_cx_destroy(&cx);
}

/* An install is refused when its fixed positions are out of order or
 * its incarnation older than one known; one that fixes positions waits
 * for their messages, in order. */
static void t_install(void **state)
{
    (void)state;
    rec r;
    pc_cx *cx = s_engine(0, &r);
    pc_cx_det gap[] = {{.vt = 2, .pos = 12, .from = 3, .seq = 1, .epoch = 1}};
    pc_cx_image im = {.vt = 2, .epoch = 2, .consumed = 10};
    assert_int_equal(pc_cx_install(cx, &im, gap, 1), LEV_EINVAL);
    pc_cx_det skip[] = {{.vt = 2, .pos = 11, .from = 3, .seq = 2, .epoch = 1}};
    assert_int_equal(pc_cx_install(cx, &im, skip, 1), LEV_EINVAL);
    pc_cx_det fixed[] = {{.vt = 2, .pos = 11, .from = 3, .seq = 1, .epoch = 1},
                         {.vt = 2, .pos = 12, .from = 4, .seq = 1, .epoch = 1}};
    assert_int_equal(pc_cx_install(cx, &im, fixed, 2), 0);
    pc_cx_msg second = s_msg(4, 2, 1), first = s_msg(3, 2, 1);
    second.to_epoch = first.to_epoch = 2;
    assert_int_equal(pc_cx_on_msg(cx, 1, &second, NULL, 0), 0);
    assert_int_equal(r.ndelivered, 0);
    assert_int_equal(pc_cx_on_msg(cx, 1, &first, NULL, 0), 0);
    assert_int_equal(r.ndelivered, 2);
    assert_int_equal(r.delivered_pos[0], 11);
    assert_int_equal(r.delivered_from[1], 4);
    assert_int_equal(pc_cx_stats_of(cx).filled, 2);
    pc_cx_image old = {.vt = 2, .epoch = 1};
    assert_int_equal(pc_cx_install(cx, &old, NULL, 0), LEV_EINVAL);
    pc_cx_destroy(&cx);
}

/* Positions fixed after the install (W_FIX reaches the executor after
 * the image): those it has must agree, the others are filled as their
 * messages come, a message that waited ahead of its channel fills its
 * fixed position, and a fix for another incarnation or VT is ignored or
 * refused. */
static void t_fix(void **state)
{
    (void)state;
    rec r;
    pc_cx *cx = s_engine(0, &r);
    pc_cx_mark cons[] = {{.vt = 3, .seq = 4}};
    pc_cx_image im = {.vt = 2, .epoch = 2, .consumed = 10, .cons = cons, .ncons = 1};
    assert_int_equal(pc_cx_install(cx, &im, NULL, 0), 0);
    assert_int_equal(pc_cx_hosts(cx, 2), 2);
    assert_int_equal(pc_cx_hosts(cx, 9), 0);
    pc_cx_msg m4 = s_msg(4, 2, 1), ahead = s_msg(3, 2, 6), next = s_msg(3, 2, 5);
    m4.to_epoch = ahead.to_epoch = next.to_epoch = 2;
    assert_int_equal(pc_cx_on_msg(cx, 1, &m4, NULL, 0), 0);    /* position 11, free order */
    assert_int_equal(pc_cx_on_msg(cx, 1, &ahead, NULL, 0), 0); /* waits for 3/5 */
    assert_int_equal(r.ndelivered, 1);
    pc_cx_det wrong[] = {{.vt = 2, .pos = 11, .from = 3, .seq = 5, .epoch = 1}};
    assert_int_equal(pc_cx_fix(cx, 2, 2, wrong, 1), LEV_EINVAL);
    assert_int_equal(pc_cx_fix(cx, 2, 1, wrong, 1), 0);         /* an older incarnation's */
    assert_int_equal(pc_cx_fix(cx, 2, 3, wrong, 1), LEV_ENOVT); /* not installed yet */
    assert_int_equal(pc_cx_fix(cx, 9, 1, wrong, 1), LEV_ENOVT);
    pc_cx_det fixed[] = {{.vt = 2, .pos = 11, .from = 4, .seq = 1, .epoch = 1},
                         {.vt = 2, .pos = 12, .from = 5, .seq = 1, .epoch = 1},
                         {.vt = 2, .pos = 13, .from = 3, .seq = 5, .epoch = 1},
                         {.vt = 2, .pos = 14, .from = 3, .seq = 6, .epoch = 1}};
    assert_int_equal(pc_cx_fix(cx, 2, 2, fixed, 4), 0);
    assert_int_equal(pc_cx_stats_of(cx).filled, 1); /* 3/6, which waited */
    assert_int_equal(pc_cx_on_msg(cx, 1, &next, NULL, 0), 0);
    assert_int_equal(r.ndelivered, 1); /* 12 comes first */
    pc_cx_msg m5 = s_msg(5, 2, 1);
    m5.to_epoch = 2;
    assert_int_equal(pc_cx_on_msg(cx, 1, &m5, NULL, 0), 0);
    assert_int_equal(r.ndelivered, 4);
    assert_int_equal(r.delivered_pos[3], 14);
    assert_int_equal(r.delivered_from[1], 5);
    assert_int_equal(r.delivered_seq[3], 6);
    /* fixed again (a resync sends it again): what it has agrees */
    assert_int_equal(pc_cx_fix(cx, 2, 2, fixed, 4), 0);
    pc_cx_destroy(&cx);
}

/* What a VT sends while it holds a lock is logged but held: not sent,
 * held still in an image and in the engine that installs it, and sent
 * in order once released; a message after it on the channel waits for
 * it at the receiver anyway. */
static void t_held(void **state)
{
    (void)state;
    rec r;
    pc_cx *cx = s_engine(0, &r);
    s_host(cx, 2, 1);
    assert_int_equal(pc_cx_place(cx, 3, 1, 1), 0);
    assert_int_equal(pc_cx_send_held(cx, 2, 3, pc_buf_new("h", 1)), 0);
    assert_int_equal(r.nsent, 0);
    pc_cx_image im;
    assert_int_equal(pc_cx_image_of(cx, 2, &im), 0);
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_cx_image_encode(&w, &im);
    pc_cx_image_clear(&im);
    pc_cx_image got;
    const char *why;
    assert_int_equal(pc_cx_image_decode(w.data, w.len, 16, &got, &why), 0);
    assert_true(got.nlog == 1 && got.log[0].held);
    w.data[w.len - 5] = 2; /* the held flag of the logged message */
    assert_int_equal(pc_cx_image_decode(w.data, w.len, 16, &im, &why), LEV_EINVAL);
    assert_non_null(strstr(why, "held flag"));
    pc_wbuf_free(&w);
    rec r2;
    pc_cx *other = s_engine(2, &r2);
    assert_int_equal(pc_cx_place(other, 3, 1, 1), 0);
    got.epoch = 2;
    assert_int_equal(pc_cx_install(other, &got, NULL, 0), 0);
    pc_cx_image_clear(&got);
    assert_int_equal(r2.nsent, 0); /* held still */
    assert_int_equal(pc_cx_release(other, 2), 0);
    assert_int_equal(r2.nsent, 1);
    assert_int_equal(r2.sent[0].seq, 1);
    assert_int_equal(pc_cx_release(other, 9), LEV_ENOVT);
    assert_int_equal(pc_cx_release(cx, 2), 0);
    assert_int_equal(r.nsent, 1);
    pc_cx_destroy(&other);
    pc_cx_destroy(&cx);
}

/* The deployer's news of a VT's end waits for that VT's last message on
 * its channel, and the deployer's later inputs wait behind it. */
static void t_after(void **state)
{
    (void)state;
    rec r;
    pc_cx *cx = s_engine(0, &r);
    s_host(cx, 2, 1);
    pc_cx_msg end = s_msg(0, 2, 1), later = s_msg(0, 2, 2), m1 = s_msg(5, 2, 1),
              m2 = s_msg(5, 2, 2);
    end.from_epoch = later.from_epoch = 0;
    end.after_from = 5;
    end.after_seq = 2;
    assert_int_equal(pc_cx_on_msg(cx, -1, &end, NULL, 0), 0);
    assert_int_equal(pc_cx_on_msg(cx, -1, &later, NULL, 0), 0);
    assert_int_equal(pc_cx_on_msg(cx, 1, &m1, NULL, 0), 0);
    assert_int_equal(r.ndelivered, 1);
    assert_int_equal(pc_cx_on_msg(cx, 1, &m2, NULL, 0), 0);
    assert_int_equal(r.ndelivered, 4);
    assert_int_equal(r.delivered_from[1], 5);
    assert_int_equal(r.delivered_from[2], 0);
    assert_int_equal(r.delivered_seq[2], 1);
    assert_int_equal(r.delivered_seq[3], 2);
    pc_cx_destroy(&cx);
}

/* The executor's number and the deployer's news of placements and
 * fences (W_PLACE, W_FLUSH): a number is taken while nothing is hosted,
 * a placement routes sends, news of another incarnation of a hosted VT
 * is left to its CANCEL, a fence stops sends, and a malformed list
 * changes nothing. */
static void t_places(void **state)
{
    (void)state;
    rec r;
    pc_cx *cx = s_engine(0, &r);
    assert_int_equal(pc_cx_set_self(cx, 5), 0);
    assert_int_equal(pc_cx_set_self(cx, 64), LEV_EINVAL);
    s_host(cx, 2, 1);
    assert_int_equal(pc_cx_set_self(cx, 6), LEV_EBUSY);
    assert_int_equal(pc_cx_set_self(cx, 5), 0);
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_put_u32(&w, 2);
    pc_put_u64(&w, 3);
    pc_put_u32(&w, 2);
    pc_put_u32(&w, 1); /* VT 3, incarnation 2, on executor 1 */
    pc_put_u64(&w, 2);
    pc_put_u32(&w, 3);
    pc_put_u32(&w, 4); /* VT 2 elsewhere: its CANCEL will say */
    const char *why = NULL;
    assert_int_equal(pc_cx_places_apply(cx, w.data, w.len, &why), 0);
    assert_int_equal(pc_cx_hosts(cx, 2), 1);
    assert_int_equal(pc_cx_send(cx, 2, 3, pc_buf_new("a", 1)), 0);
    assert_int_equal(r.nsent, 1);
    assert_int_equal(r.sent_to[0], 1);
    assert_int_equal(r.sent[0].to_epoch, 2);
    uint8_t bad[20] = {1, 0, 0, 0}; /* one placement: VT 3, incarnation 1, executor 64 */
    bad[4] = 3;
    bad[12] = 1;
    bad[16] = 64;
    assert_int_equal(pc_cx_places_apply(cx, bad, sizeof bad, &why), LEV_EINVAL);
    assert_non_null(strstr(why, "executor number"));
    assert_int_equal(pc_cx_places_apply(cx, w.data, w.len - 1, &why), LEV_EINVAL);
    assert_int_equal(pc_cx_fences_apply(cx, w.data, 3, &why), LEV_EINVAL);
    pc_wbuf_free(&w);
    pc_wbuf_init(&w);
    pc_put_u32(&w, 1);
    pc_put_u64(&w, 3);
    pc_put_u32(&w, 3); /* VT 3 fenced */
    assert_int_equal(pc_cx_fences_apply(cx, w.data, w.len, &why), 0);
    pc_wbuf_free(&w);
    assert_int_equal(pc_cx_send(cx, 2, 3, pc_buf_new("b", 1)), 0);
    assert_int_equal(r.nsent, 1); /* kept until VT 3 is placed again */
    pc_cx_destroy(&cx);
}

/* The deployer's log: a contradiction is refused, the watermark follows
 * the positions known without a gap, a fence lets the old incarnation's
 * determinants in until the new one's positions are fixed, a gap cannot
 * be fixed, and an image that depends on an abandoned branch is not
 * usable. */
static void t_detlog(void **state)
{
    (void)state;
    pc_detlog *l = pc_detlog_new();
    assert_non_null(l);
    pc_cx_det d1 = {.vt = 2, .pos = 1, .from = 3, .seq = 1, .epoch = 1};
    pc_cx_det d2 = {.vt = 2, .pos = 2, .from = 3, .seq = 2, .epoch = 1};
    pc_cx_det d4 = {.vt = 2, .pos = 4, .from = 5, .seq = 1, .epoch = 1};
    assert_int_equal(pc_detlog_add(l, &d1), 0);
    assert_int_equal(pc_detlog_add(l, &d1), 0);
    pc_cx_det other = d1;
    other.seq = 7;
    assert_int_equal(pc_detlog_add(l, &other), LEV_EINVAL);
    assert_int_equal(pc_detlog_add(l, &d2), 0);
    assert_int_equal(pc_detlog_add(l, &d4), 0);
    assert_int_equal(pc_detlog_wm(l, 2), 2);
    assert_int_equal(pc_detlog_fence(l, 2), 2);
    pc_cx_det *out;
    size_t n;
    assert_int_equal(pc_detlog_fix(l, 2, 0, &out, &n), LEV_EINVAL); /* 3 unknown, 4 known */
    pc_cx_det d3 = {.vt = 2, .pos = 3, .from = 5, .seq = 9, .epoch = 1};
    assert_int_equal(pc_detlog_add(l, &d3), 0); /* the barrier still collects */
    assert_int_equal(pc_detlog_fix(l, 2, 1, &out, &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(out[0].pos, 2);
    assert_int_equal(out[2].from, 5);
    free(out);
    pc_cx_det late = {.vt = 2, .pos = 5, .from = 3, .seq = 3, .epoch = 1};
    assert_true(pc_detlog_abandoned(l, &late));
    assert_int_equal(pc_detlog_add(l, &late), 0); /* ignored */
    bool usable = true;
    assert_int_equal(pc_detlog_image(l, &late, 1, &usable), 0);
    assert_false(usable);
    pc_cx_det fine = {.vt = 6, .pos = 1, .from = 2, .seq = 1, .epoch = 1};
    assert_int_equal(pc_detlog_image(l, &fine, 1, &usable), 0);
    assert_true(usable);
    pc_detlog_stable(l, 2, 3);
    assert_int_equal(pc_detlog_wm(l, 2), 4);
    assert_int_equal(pc_detlog_count(l), 5);
    /* the deployer's numbering skips (a move without a fence): the
     * first incarnation fixed after a determinant's decides */
    assert_int_equal(pc_detlog_fence_to(l, 2, 7), 0);
    assert_int_equal(pc_detlog_fence_to(l, 2, 6), 0); /* older: ignored */
    assert_int_equal(pc_detlog_epoch(l, 2), 7);
    pc_cx_det e2 = {.vt = 2, .pos = 5, .from = 5, .seq = 2, .epoch = 2};
    assert_false(pc_detlog_abandoned(l, &e2)); /* incarnation 7 not fixed yet */
    assert_int_equal(pc_detlog_add(l, &e2), 0);
    assert_int_equal(pc_detlog_fix(l, 2, 4, &out, &n), 0);
    assert_int_equal(n, 1);
    free(out);
    pc_cx_det e2late = {.vt = 2, .pos = 6, .from = 5, .seq = 3, .epoch = 2};
    assert_true(pc_detlog_abandoned(l, &e2late));
    pc_detlog_destroy(&l);
    assert_null(l);
}

/* The barrier completes when every live executor has answered the one
 * running; a newer one replaces it, and old or repeated answers count
 * for nothing. */
static void t_barrier(void **state)
{
    (void)state;
    pc_detlog *l = pc_detlog_new();
    assert_non_null(l);
    assert_false(pc_detlog_barrier_open(l));
    uint32_t first = pc_detlog_barrier_start(l, 1u << 0 | 1u << 3);
    assert_true(pc_detlog_barrier_open(l));
    assert_false(pc_detlog_barrier_answer(l, first, 3));
    assert_false(pc_detlog_barrier_answer(l, first, 3));             /* twice */
    assert_false(pc_detlog_barrier_answer(l, first, 5));             /* not asked */
    uint32_t second = pc_detlog_barrier_start(l, 1u << 0 | 1u << 3); /* one more died */
    assert_true(second != first);
    assert_false(pc_detlog_barrier_answer(l, first, 0)); /* to the old one */
    assert_false(pc_detlog_barrier_answer(l, second, 0));
    assert_true(pc_detlog_barrier_answer(l, second, 3));
    assert_false(pc_detlog_barrier_open(l));
    pc_detlog_barrier_start(l, 0);
    assert_false(pc_detlog_barrier_open(l)); /* over no executor: done at once */
    pc_detlog_destroy(&l);
}

/* The wire form: what is encoded decodes the same; every truncation,
 * a trailing byte, a count the bytes cannot hold, zero numbers, a
 * message to its sender and data over the bound are refused with a
 * reason, and nothing leaks. */
static void t_wire(void **state)
{
    (void)state;
    pc_cx_det dets[] = {{.vt = 2, .pos = 7, .from = 3, .seq = 4, .epoch = 1},
                        {.vt = 5, .pos = 1, .from = 0, .seq = 1, .epoch = 2}};
    pc_cx_msg m = {.from = 2, .to = 3, .seq = 9, .from_epoch = 1, .to_epoch = 4};
    m.data = pc_buf_new("hello", 5);
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_cx_encode(&w, &m, dets, 2);
    assert_int_equal(w.err, 0);
    pc_cx_msg got;
    const void *data;
    size_t len, n;
    pc_cx_det *d;
    const char *why;
    assert_int_equal(pc_cx_decode(w.data, w.len, 16, &got, &data, &len, &d, &n, &why), 0);
    assert_int_equal(got.from, 2);
    assert_int_equal(got.to, 3);
    assert_int_equal(got.seq, 9);
    assert_int_equal(got.to_epoch, 4);
    assert_int_equal(len, 5);
    assert_memory_equal(data, "hello", 5);
    assert_int_equal(n, 2);
    assert_int_equal(d[1].epoch, 2);
    assert_int_equal(d[0].pos, 7);
    free(d);
    for (size_t cut = 0; cut < w.len; cut++) {
        assert_int_equal(pc_cx_decode(w.data, cut, 16, &got, &data, &len, &d, &n, &why),
                         LEV_EINVAL);
        assert_non_null(why);
        assert_null(d);
    }
    assert_int_equal(pc_cx_decode(w.data, w.len, 4, &got, &data, &len, &d, &n, &why), LEV_EINVAL);
    uint8_t *more = malloc(w.len + 1);
    assert_non_null(more);
    memcpy(more, w.data, w.len);
    more[w.len] = 0;
    assert_int_equal(pc_cx_decode(more, w.len + 1, 16, &got, &data, &len, &d, &n, &why),
                     LEV_EINVAL);
    memcpy(more, w.data, w.len);
    memset(more + 32, 0xff, 4); /* a count of determinants no bytes can hold */
    assert_int_equal(pc_cx_decode(more, w.len, 16, &got, &data, &len, &d, &n, &why), LEV_EINVAL);
    memcpy(more, w.data, w.len);
    memset(more + 16, 0, 8); /* number 0 */
    assert_int_equal(pc_cx_decode(more, w.len, 16, &got, &data, &len, &d, &n, &why), LEV_EINVAL);
    memcpy(more, w.data, w.len);
    memcpy(more + 8, more, 8); /* to its sender */
    assert_int_equal(pc_cx_decode(more, w.len, 16, &got, &data, &len, &d, &n, &why), LEV_EINVAL);
    memcpy(more, w.data, w.len);
    memset(more + 36 + 8, 0, 8); /* a determinant at position 0 */
    assert_int_equal(pc_cx_decode(more, w.len, 16, &got, &data, &len, &d, &n, &why), LEV_EINVAL);
    free(more);
    pc_wbuf_free(&w);
    pc_buf_drop(&m.data);
}

/* The engine's part of an image: what an engine gives encodes and
 * decodes the same, installs again, and every truncation, a trailing
 * byte, a channel given twice and a logged message not from the VT are
 * refused with a reason. */
/* A list of determinants as executors send them to the deployer: read
 * back whole, or refused with a reason (cut anywhere, a count the bytes
 * cannot hold, trailing bytes, a determinant with a zero number). */
static void t_dets_wire(void **state)
{
    (void)state;
    pc_cx_det d[2] = {{.vt = 3, .pos = 7, .from = 0, .seq = 2, .epoch = 1},
                      {.vt = 4, .pos = 1, .from = 3, .seq = 9, .epoch = 2}};
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_cx_dets_encode(&w, d, 2);
    assert_int_equal(w.err, 0);
    pc_cx_det *got = NULL;
    size_t n = 0;
    const char *why = NULL;
    assert_int_equal(pc_cx_dets_decode(w.data, w.len, &got, &n, &why), 0);
    assert_int_equal(n, 2);
    for (int i = 0; i < 2; i++)
        assert_true(got[i].vt == d[i].vt && got[i].pos == d[i].pos && got[i].from == d[i].from &&
                    got[i].seq == d[i].seq && got[i].epoch == d[i].epoch);
    free(got);
    for (size_t cut = 0; cut < w.len; cut++) {
        assert_int_equal(pc_cx_dets_decode(w.data, cut, &got, &n, &why), LEV_EINVAL);
        assert_non_null(why);
        assert_null(got);
    }
    uint8_t more[128];
    assert_true(w.len < sizeof more);
    memcpy(more, w.data, w.len);
    more[w.len] = 0;
    assert_int_equal(pc_cx_dets_decode(more, w.len + 1, &got, &n, &why), LEV_EINVAL);
    more[0] = 0xFF; /* a count of 255 + ... the bytes cannot hold */
    assert_int_equal(pc_cx_dets_decode(more, w.len, &got, &n, &why), LEV_EINVAL);
    pc_wbuf_free(&w);
    pc_cx_det zero = {.vt = 3, .pos = 0, .seq = 1, .epoch = 1};
    pc_wbuf_init(&w);
    pc_cx_dets_encode(&w, &zero, 1);
    assert_int_equal(pc_cx_dets_decode(w.data, w.len, &got, &n, &why), LEV_EINVAL);
    assert_non_null(strstr(why, "zero"));
    pc_wbuf_free(&w);
    pc_wbuf_init(&w);
    pc_cx_dets_encode(&w, NULL, 0);
    assert_int_equal(pc_cx_dets_decode(w.data, w.len, &got, &n, &why), 0);
    assert_int_equal(n, 0);
    assert_null(got);
    pc_wbuf_free(&w);
}

static void t_image_wire(void **state)
{
    (void)state;
    rec r;
    pc_cx *cx = s_engine(0, &r);
    s_host(cx, 2, 1);
    pc_cx_msg in = s_msg(4, 2, 1);
    assert_int_equal(pc_cx_on_msg(cx, 1, &in, NULL, 0), 0);
    pc_cx_consumed(cx, 2, 1);
    assert_int_equal(pc_cx_send(cx, 2, 3, pc_buf_new("abc", 3)), 0);
    pc_cx_image im;
    assert_int_equal(pc_cx_image_of(cx, 2, &im), 0);
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_cx_image_encode(&w, &im);
    assert_int_equal(w.err, 0);
    pc_cx_image got;
    const char *why;
    assert_int_equal(pc_cx_image_decode(w.data, w.len, 16, &got, &why), 0);
    assert_int_equal(got.vt, 2);
    assert_int_equal(got.consumed, 1);
    assert_int_equal(got.ncons, 1);
    assert_int_equal(got.cons[0].vt, 4);
    assert_int_equal(got.nchan, 1);
    assert_int_equal(got.nlog, 1);
    assert_int_equal(pc_buf_len(got.log[0].data), 3);
    assert_int_equal(got.ndets, im.ndets);
    got.epoch = 2;
    rec r2;
    pc_cx *other = s_engine(1, &r2);
    assert_int_equal(pc_cx_install(other, &got, NULL, 0), 0);
    pc_cx_image_clear(&got);
    pc_cx_destroy(&other);
    /* a holder's look: the same checks, the marks and determinants, no
     * copy of the logged data */
    assert_int_equal(pc_cx_image_peek(w.data, w.len, 16, &got, &why), 0);
    assert_int_equal(got.nlog, 1);
    assert_null(got.log[0].data);
    assert_int_equal(got.ncons, 1);
    assert_int_equal(got.ndets, im.ndets);
    pc_cx_image_clear(&got);
    for (size_t cut = 0; cut < w.len; cut++) {
        assert_int_equal(pc_cx_image_decode(w.data, cut, 16, &got, &why), LEV_EINVAL);
        assert_non_null(why);
        assert_null(got.log);
        assert_int_equal(pc_cx_image_peek(w.data, cut, 16, &got, &why), LEV_EINVAL);
    }
    /* a trim in its wire form, and one cut short */
    pc_wbuf t;
    pc_wbuf_init(&t);
    pc_put_u32(&t, 1);
    pc_put_u64(&t, 2);
    pc_put_u64(&t, 1);
    assert_int_equal(pc_cx_trim_apply(cx, 3, t.data, t.len, &why), 0);
    assert_int_equal(pc_cx_trim_apply(cx, 3, t.data, t.len - 1, &why), LEV_EINVAL);
    assert_non_null(why);
    assert_int_equal(pc_cx_trim_apply(cx, 2, t.data, t.len, &why), LEV_EINVAL); /* itself */
    pc_wbuf_free(&t);
    assert_int_equal(pc_cx_image_of(cx, 2, &got), 0);
    assert_int_equal(got.nlog, 0); /* VT 3's image consumed the one message to it */
    pc_cx_image_clear(&got);
    assert_int_equal(pc_cx_image_decode(w.data, w.len, 2, &got, &why), LEV_EINVAL);
    pc_cx_mark twice[] = {{.vt = 4, .seq = 1}, {.vt = 4, .seq = 2}};
    pc_cx_image bad = im;
    bad.cons = twice;
    bad.ncons = 2;
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_cx_image_encode(&b, &bad);
    assert_int_equal(pc_cx_image_decode(b.data, b.len, 16, &got, &why), LEV_EINVAL);
    pc_wbuf_free(&b);
    bad = im;
    pc_cx_msg foreign = im.log[0];
    foreign.from = 9;
    bad.log = &foreign;
    pc_wbuf_init(&b);
    pc_cx_image_encode(&b, &bad);
    assert_int_equal(pc_cx_image_decode(b.data, b.len, 16, &got, &why), LEV_EINVAL);
    pc_wbuf_free(&b);
    uint8_t *more = malloc(w.len + 1);
    assert_non_null(more);
    memcpy(more, w.data, w.len);
    more[w.len] = 0;
    assert_int_equal(pc_cx_image_decode(more, w.len + 1, 16, &got, &why), LEV_EINVAL);
    free(more);
    pc_wbuf_free(&w);
    pc_cx_image_clear(&im);
    pc_cx_destroy(&cx);
}

int main(void)
{
    const struct CMUnitTest all[] = {
        cmocka_unit_test(t_channel_order),
        cmocka_unit_test(t_send_log_trim),
        cmocka_unit_test(t_fence_and_early),
        cmocka_unit_test(t_install),
        cmocka_unit_test(t_fix),
        cmocka_unit_test(t_places),
        cmocka_unit_test(t_held),
        cmocka_unit_test(t_after),
        cmocka_unit_test(t_detlog),
        cmocka_unit_test(t_wire),
        cmocka_unit_test(t_image_wire),
        cmocka_unit_test(t_barrier),
        cmocka_unit_test(t_dets_wire),
        cmocka_unit_test(t_flow),
    };
    return cmocka_run_group_tests(all, NULL, NULL);
}
