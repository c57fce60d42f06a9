/* exechost_direct.c - the executor's direct messages (exechost_private.h;
 * docs/DIRECT_MESSAGES.md), in a VC whose deployer chose them: the links
 * to the VC's other executors (xlink.c), bound once the deployer gives
 * this executor its number and named to it (X_LINK), connected as it
 * names the others' (X_LINKS); the VTs' messages, which their channels
 * hand to the engine (numbered per channel and kept in the sender log,
 * held while the VT holds a lock and until its unlock is acknowledged)
 * and which go where the engine sends them; the frames received, handed
 * to the engine, which gives each input its position; and the inputs the
 * engine delivers, into the VTs' streams.
 *
 * The deployer's own inputs (timeouts, grants, reads, bounces, ends, the
 * client's messages) come on its channel, 0, numbered by it; here they
 * are ordered with the rest, carried through the engine with their
 * fields in front of their data.
 *
 * Threads: the engine, the DEALERs and the tables here under h->cx_mu
 * (whichever thread sends); the ROUTER is read by the main thread only.
 * An engine call may send to a VT of this very executor or deliver: such
 * work is queued while the engine runs and done once it has returned
 * (pc_xh_direct_settle_locked), as the engine is not reentrant.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <zmq.h>

#include "exechost_private.h"
#include "lev_errors.h"
#include "rt.h"
#include "vec.h"

#define XD_IN_HEAD                                                                                 \
    22 /* a deployer's input in the engine: u8 kind, u8 novalue, u64 from, u64 ref,                \
        * i32 err, then its data */

static xd_hosted *s_hosted(xh_host *h, uint64_t id)
{
    for (size_t i = 0; i < h->nhosted; i++)
        if (h->hosted[i].id == id)
            return &h->hosted[i];
    return NULL;
}

void pc_xh_direct_host_locked(xh_host *h, uint64_t id, rt_vt *vt)
{
    if (!h->direct)
        return;
    xd_hosted *x = s_hosted(h, id);
    if (!x && !RT_VEC_RESERVE(h->hosted, h->caphosted, h->nhosted, 1))
        x = &h->hosted[h->nhosted++];
    if (x)
        *x = (xd_hosted){.id = id, .vt = vt};
    else
        fprintf(stderr, "levpeer executor: no memory to host virtual thread %llu's messages\n",
                (unsigned long long)id);
}

/* Under cx_mu. */
void pc_xh_direct_unhost_locked(xh_host *h, uint64_t id)
{
    for (size_t i = 0; i < h->nhosted; i++)
        if (h->hosted[i].id == id) {
            h->hosted[i] = h->hosted[--h->nhosted];
            return;
        }
}

/* ===================================================================
 * What the engine does
 * =================================================================== */

/* The engine sends m to executor `peer`: over its link, or, to this
 * executor, into the queue the engine takes once its call returns. */
void pc_xh_direct_send_cb(xh_host *h, int peer, const pc_cx_msg *m, const pc_cx_det *d, size_t n)
{
    if (peer == h->xl_self) {
        xd_loop e = {.m = *m, .n = n};
        e.m.data = m->data ? pc_buf_ref(m->data) : NULL;
        if ((n && !(e.d = malloc(n * sizeof *d))) ||
            RT_VEC_RESERVE(h->loop, h->caploop, h->nloop, 1)) {
            free(e.d);
            pc_buf_drop(&e.m.data);
            h->xd.dropped++; /* sent again when the receiver is placed anew */
            return;
        }
        if (n)
            memcpy(e.d, d, n * sizeof *d);
        h->loop[h->nloop++] = e;
        return;
    }
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_cx_encode(&w, m, d, n);
    if (w.err || !h->xl || pc_xlink_send(h->xl, peer, w.data, w.len))
        h->xd.dropped++; /* the engine sends it again when the link or the receiver is new */
    else
        h->xd.sent++;
    pc_wbuf_free(&w);
}

void pc_xh_direct_credit_cb(xh_host *h, int peer, uint64_t from, uint64_t to, uint64_t seq)
{
    if (peer == h->xl_self) {
        if (!RT_VEC_RESERVE(h->lcred, h->caplcred, h->nlcred, 1))
            h->lcred[h->nlcred++] = (xd_credit){from, to, seq};
        return; /* lost to exhaustion: the next take tells it again */
    }
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_cx_credit_encode(&w, from, to, seq);
    if (w.err || !h->xl || pc_xlink_send(h->xl, peer, w.data, w.len))
        h->xd.dropped++; /* told again when the link is new */
    else
        h->xd.sent++;
    pc_wbuf_free(&w);
}

/* Under cx_mu: flow control's news for the VT `from` hosted here; it
 * sends again if it waited for it. */
static void s_credit_in(xh_host *h, uint64_t from, uint64_t to, uint64_t seq)
{
    if (!pc_cx_credit(h->cx, from, to, seq))
        return;
    xd_hosted *x = s_hosted(h, from);
    if (x)
        rt_ch_wake_send(x->vt);
}

/* The engine delivers input `pos` of hosted VT m->to. */
void pc_xh_direct_deliver(xh_host *h, uint64_t pos, const pc_cx_msg *m)
{
    xd_hosted *x = s_hosted(h, m->to);
    if (!x)
        return;
    const uint8_t *p = m->data ? pc_buf_data(m->data) : NULL;
    size_t len = m->data ? pc_buf_len(m->data) : 0;
    rt_in in = {.d = pos, .kind = RT_IN_MSG, .from = m->from, .ref = m->seq, .data = p, .len = len};
    if (m->from == 0) { /* the deployer's: its fields, then its data */
        rt_rbuf r;
        rt_rbuf_init(&r, p, len);
        in.kind = rt_get_u8(&r);
        in.novalue = rt_get_u8(&r);
        in.from = rt_get_u64(&r);
        in.ref = rt_get_u64(&r);
        in.err = rt_get_i32(&r);
        in.data = len >= XD_IN_HEAD ? p + XD_IN_HEAD : NULL;
        in.len = len >= XD_IN_HEAD ? len - XD_IN_HEAD : 0;
        if (r.bad) {
            fprintf(stderr, "levpeer executor: input %llu of virtual thread %llu is cut short\n",
                    (unsigned long long)pos, (unsigned long long)m->to);
            return;
        }
        if (!in.len)
            in.data = NULL;
    }
    int rc = rt_ch_deliver(x->vt, &in);
    if (rc < 0)
        fprintf(stderr, "levpeer executor: input %llu of virtual thread %llu refused: %s (%s)\n",
                (unsigned long long)pos, (unsigned long long)m->to, lev_strerror(rc),
                lev_errdetail());
    else if (!RT_VEC_RESERVE(h->cons, h->capcons, h->ncons, 1))
        h->cons[h->ncons++] = (pc_cx_mark){.vt = m->to, .seq = pos};
}

/* Under cx_mu, after an engine call: what it sent to this executor goes
 * in, in order, and the positions delivered are the VTs' (their images
 * stand there). */
void pc_xh_direct_settle_locked(xh_host *h)
{
    for (size_t i = 0; i < h->nloop; i++) {
        xd_loop e = h->loop[i];
        h->xd.looped++;
        (void)pc_cx_on_msg(h->cx, h->xl_self, &e.m, e.d, e.n); /* takes e.m.data */
        free(e.d);
    }
    h->nloop = 0;
    for (size_t i = 0; i < h->ncons; i++)
        pc_cx_consumed(h->cx, h->cons[i].vt, h->cons[i].seq);
    h->ncons = 0;
    for (size_t i = 0; i < h->nlcred; i++)
        s_credit_in(h, h->lcred[i].from, h->lcred[i].to, h->lcred[i].seq);
    h->nlcred = 0;
}

void pc_xh_direct_taken(rt_vt *vt, uint64_t from, uint64_t seq, void *ud)
{
    xh_host *h = ud;
    pthread_mutex_lock(&h->cx_mu);
    pc_cx_taken(h->cx, vt->id, from, seq);
    pc_xh_direct_settle_locked(h);
    pthread_mutex_unlock(&h->cx_mu);
}

/* ===================================================================
 * Sending
 * =================================================================== */

int pc_xh_direct_send(rt_vt *vt, uint64_t to, const void *data, size_t len, void *ud)
{
    xh_host *h = ud;
    pc_buf *b = len ? pc_buf_new(data, len) : NULL;
    if (len && !b)
        return rt_err(LEV_ENOMEM, "lev_send: no memory for a message of %zu bytes", len);
    /* what a VT sends while it holds a lock is seen only after its unlock */
    bool locked = !rt_ch_capture_ok(vt);
    pthread_mutex_lock(&h->cx_mu);
    xd_hosted *x = s_hosted(h, vt->id);
    bool held = locked || (x && x->hold_seq);
    /* flow control: held messages wait for the unlock, not for room */
    if (!held && !pc_cx_may_send(h->cx, vt->id, to)) {
        pthread_mutex_unlock(&h->cx_mu);
        pc_buf_drop(&b);
        return LEV_BLOCKED;
    }
    int rc = held ? pc_cx_send_held(h->cx, vt->id, to, b) : pc_cx_send(h->cx, vt->id, to, b);
    pc_xh_direct_settle_locked(h);
    uint64_t seq = rc || pc_cx_where(h->cx, to, NULL) >= 0 ? 0 : pc_cx_sent_last(h->cx, vt->id, to);
    pthread_mutex_unlock(&h->cx_mu);
    if (rc)
        return rt_err(rc, "lev_send: the message to %llu cannot be logged", (unsigned long long)to);
    if (seq) { /* placed nowhere: the deployer bounces it if `to` is not there (msgmgr.h) */
        xh_out *o = pc_xh_out_new(PC_X_OUT, vt->id, vt->epoch, 0);
        if (o) { /* as an output (wire.h, W_OUT) with no number, its number on the channel */
            pc_put_u8(&o->head, RT_OUT_MSG);
            pc_put_u64(&o->head, to);
            pc_put_u64(&o->head, seq);
            pc_put_u8(&o->head, 0);
            pc_put_str(&o->head, "");
            pc_put_u32(&o->head, 0);
        }
        pc_xh_queue(h, o);
    }
    return 0;
}

void pc_xh_direct_hold(xh_host *h, uint64_t id, uint64_t seq)
{
    pthread_mutex_lock(&h->cx_mu);
    xd_hosted *x = s_hosted(h, id);
    if (x && seq > x->acked) {
        if (seq > x->hold_seq) /* never lowered: a later output may hold already */
            x->hold_seq = seq;
    } else if (x) {
        /* acknowledged already: a resumed VT sends its outbox again on
         * its own thread, and the deployer's acknowledgement of the
         * outputs it has may come first */
        pc_cx_release(h->cx, id);
        pc_xh_direct_settle_locked(h);
    }
    pthread_mutex_unlock(&h->cx_mu);
}

void pc_xh_direct_ack(xh_host *h, rt_vt *vt, uint64_t seq)
{
    pthread_mutex_lock(&h->cx_mu);
    rt_ch_ack(vt, seq); /* with the release, at one point for an image */
    xd_hosted *x = s_hosted(h, vt->id);
    if (x && seq > x->acked)
        x->acked = seq;
    if (x && x->hold_seq && seq >= x->hold_seq) {
        x->hold_seq = 0;
        pc_cx_release(h->cx, vt->id);
        pc_xh_direct_settle_locked(h);
    }
    pthread_mutex_unlock(&h->cx_mu);
}

/* ===================================================================
 * The deployer's inputs
 * =================================================================== */

int pc_xh_direct_in(xh_host *h, rt_vt *vt, const rt_in *in, uint64_t cfrom, uint64_t cseq,
                    uint32_t epoch)
{
    pc_buf *b;
    if (cfrom) { /* a VT's message the deployer relays, on that VT's channel */
        b = in->len ? pc_buf_new(in->data, in->len) : NULL;
    } else {
        uint8_t *p = malloc(XD_IN_HEAD + in->len);
        if (p) {
            p[0] = in->kind;
            p[1] = in->novalue;
            rt_le64_put(p + 2, in->from);
            rt_le64_put(p + 10, in->ref);
            rt_le32_put(p + 18, (uint32_t)in->err);
            if (in->len)
                memcpy(p + XD_IN_HEAD, in->data, in->len);
        }
        b = p ? pc_buf_wrap(p, XD_IN_HEAD + in->len, free, p) : NULL;
        if (!b)
            free(p);
    }
    if (!b && (in->len || !cfrom))
        return rt_err(LEV_ENOMEM, "no memory for input %llu", (unsigned long long)cseq);
    pc_cx_msg m = {.from = cfrom,
                   .to = vt->id,
                   .seq = cseq,
                   .from_epoch = UINT32_MAX,
                   .to_epoch = epoch,
                   .data = b};
    if (in->kind == RT_IN_ENDED) { /* after the ended VT's last message (wire.h, W_IN) */
        m.after_from = in->from;
        m.after_seq = in->ref;
    }
    pthread_mutex_lock(&h->cx_mu);
    int rc = pc_cx_on_msg(h->cx, -1, &m, NULL, 0);
    pc_xh_direct_settle_locked(h);
    uint64_t want = pc_cx_next_wanted(h->cx, vt->id, cfrom);
    pthread_mutex_unlock(&h->cx_mu);
    if (rc)
        return rt_err(rc, "no memory to order input %llu", (unsigned long long)cseq);
    return !cfrom && want && want < cseq ? LEV_ERANGE : 0;
}

uint64_t pc_xh_next_wanted(xh_host *h, rt_vt *vt)
{
    if (!h->direct)
        return rt_ch_next_in(vt);
    pthread_mutex_lock(&h->cx_mu);
    uint64_t want = pc_cx_next_wanted(h->cx, vt->id, 0);
    pthread_mutex_unlock(&h->cx_mu);
    return want ? want : 1;
}

/* ===================================================================
 * Positions fixed before an install
 * =================================================================== */

static xd_fix *s_fix(xh_host *h, uint64_t id)
{
    for (size_t i = 0; i < h->nfixes; i++)
        if (h->fixes[i].id == id)
            return &h->fixes[i];
    return NULL;
}

int pc_xh_direct_fix_keep_locked(xh_host *h, uint64_t id, uint32_t epoch, pc_cx_det *d, size_t n)
{
    xd_fix *f = s_fix(h, id);
    if (f && f->epoch > epoch) {
        free(d); /* an older incarnation's */
        return 0;
    }
    if (!f) {
        if (RT_VEC_RESERVE(h->fixes, h->capfixes, h->nfixes, 1)) {
            free(d);
            return LEV_ENOMEM;
        }
        f = &h->fixes[h->nfixes++];
        f->d = NULL;
    }
    free(f->d);
    *f = (xd_fix){.id = id, .epoch = epoch, .d = d, .n = n};
    return 0;
}

void pc_xh_direct_fix_take_locked(xh_host *h, uint64_t id, uint32_t epoch, pc_cx_det **d, size_t *n)
{
    *d = NULL;
    *n = 0;
    xd_fix *f = s_fix(h, id);
    if (!f)
        return;
    if (f->epoch == epoch) {
        *d = f->d;
        *n = f->n;
    } else {
        free(f->d);
    }
    *f = h->fixes[--h->nfixes];
}

bool pc_xh_direct_fix_ready(xh_host *h, uint64_t id, uint32_t epoch)
{
    if (!h->direct || epoch <= 1)
        return true;
    pthread_mutex_lock(&h->cx_mu);
    const xd_fix *f = s_fix(h, id);
    bool ready = f && f->epoch == epoch;
    pthread_mutex_unlock(&h->cx_mu);
    return ready;
}

/* ===================================================================
 * Links
 * =================================================================== */

void pc_xh_direct_placed(xh_host *h, uint64_t self, uint32_t inc)
{
    if (!h->direct || self >= PC_CX_PEERS || !inc)
        return;
    pthread_mutex_lock(&h->rd_mu); /* no one reads the ROUTER while it is replaced */
    pthread_mutex_lock(&h->cx_mu);
    if (h->xl && h->xl_self == (int)self && h->xl_inc == inc) {
        pthread_mutex_unlock(&h->cx_mu);
        pthread_mutex_unlock(&h->rd_mu);
        return;
    }
    __atomic_store_n(&h->xl_fd, -1, __ATOMIC_RELEASE);
    pc_xlink_destroy(&h->xl);
    h->xl_self = (int)self;
    h->xl_inc = inc;
    char ep[PC_ENDPOINT_MAX];
    int rc = LEV_ENOMEM;
    if (!h->zctx)
        h->zctx = zmq_ctx_new();
    if (h->zctx)
        rc = pc_xlink_new(&h->xl, h->zctx, (int)self, inc, h->link_host, RT_CH_MAX_MSG + 4096,
                          h->link_key.pub[0] ? &h->link_key : NULL, ep);
    for (int k = 0; !rc && k < PC_CX_PEERS; k++)
        if (k != (int)self && h->xl_eps[k][0] && !pc_xlink_peer(h->xl, k, h->xl_eps[k]))
            pc_cx_resend_peer(h->cx, k);
    pc_xh_direct_settle_locked(h);
    if (!rc)
        __atomic_store_n(&h->xl_fd, pc_xlink_fd(h->xl), __ATOMIC_RELEASE);
    pthread_mutex_unlock(&h->cx_mu);
    pthread_mutex_unlock(&h->rd_mu);
    if (rc) {
        fprintf(stderr, "levpeer executor: no link for direct messages: %s (%s)\n",
                lev_strerror(rc), lev_errdetail());
        return;
    }
    xh_out *o = pc_xh_out_new(PC_X_LINK, 0, inc, self);
    if (o)
        pc_put_str(&o->head, ep);
    pc_xh_queue(h, o);
}

void pc_xh_direct_links(xh_host *h, const uint8_t *p, size_t len)
{
    if (!h->direct)
        return;
    pc_rbuf r;
    pc_rbuf_init(&r, p, len);
    uint32_t n = pc_get_count(&r, 4);
    char eps[PC_CX_PEERS][PC_ENDPOINT_MAX];
    memset(eps, 0, sizeof eps);
    for (uint32_t k = 0; k < n && !r.bad; k++) {
        char ep[PC_ENDPOINT_MAX];
        pc_get_str(&r, ep, sizeof ep);
        if (k >= PC_CX_PEERS || (*ep && !pc_endpoint_valid(ep)))
            pc_rbuf_fail(&r, "an executor beyond 63, or not an endpoint");
        else
            memcpy(eps[k], ep, sizeof ep);
    }
    if (!pc_rbuf_done(&r)) {
        fprintf(stderr, "levpeer executor: malformed LINKS: %s\n", pc_rbuf_why(&r));
        return;
    }
    pthread_mutex_lock(&h->cx_mu);
    for (int k = 0; k < PC_CX_PEERS; k++) {
        if (k == h->xl_self || !strcmp(eps[k], h->xl_eps[k]))
            continue;
        memcpy(h->xl_eps[k], eps[k], sizeof eps[k]);
        if (h->xl && !pc_xlink_peer(h->xl, k, eps[k][0] ? eps[k] : NULL) && eps[k][0])
            pc_cx_resend_peer(h->cx, k);
    }
    pc_xh_direct_settle_locked(h);
    pthread_mutex_unlock(&h->cx_mu);
}

/* ===================================================================
 * Receiving
 * =================================================================== */

static void s_frame(void *ud, int src, uint32_t inc, const void *p, size_t n)
{
    xh_host *h = ud;
    (void)inc; /* a fenced incarnation's messages are the engine's to drop */
    pc_cx_msg m;
    const void *data = NULL;
    size_t len = 0;
    pc_cx_det *d = NULL;
    size_t nd = 0;
    const char *why = NULL;
    uint64_t cf, ct, cs;
    int rc = pc_cx_credit_decode(p, n, &cf, &ct, &cs, &why);
    if (rc == 1) {
        h->xd.credits_in++;
        pthread_mutex_lock(&h->cx_mu);
        s_credit_in(h, cf, ct, cs);
        pthread_mutex_unlock(&h->cx_mu);
        return;
    }
    if (!rc)
        rc = pc_cx_decode(p, n, RT_CH_MAX_MSG, &m, &data, &len, &d, &nd, &why);
    if (!rc && len && !(m.data = pc_buf_new(data, len)))
        rc = LEV_ENOMEM;
    if (rc) {
        if (!h->xd.refused++)
            fprintf(stderr, "levpeer executor: a frame from executor %d refused: %s\n", src,
                    why ? why : lev_strerror(rc));
        free(d);
        return;
    }
    h->xd.received++;
    pthread_mutex_lock(&h->cx_mu);
    (void)pc_cx_on_msg(h->cx, src, &m, d, nd); /* takes m.data */
    pc_xh_direct_settle_locked(h);
    pthread_mutex_unlock(&h->cx_mu);
    free(d);
}

int pc_xh_direct_init(xh_host *h)
{
    pthread_mutex_init(&h->rd_mu, NULL);
    h->xl_fd = -1;
    h->idle_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    return h->idle_efd < 0 ? LEV_ENOMEM : 0;
}

int pc_xh_direct_fd(xh_host *h) { return __atomic_load_n(&h->xl_fd, __ATOMIC_ACQUIRE); }

/* Under rd_mu: reads what the ROUTER holds; the frames read. */
static int s_read_locked(xh_host *h)
{
    int got = 0, n = 0;
    while (h->xl && (n = pc_xlink_read(h->xl, 64, s_frame, h)) > 0) {
        got += n;
        if (n < 64)
            break;
    }
    return got;
}

/* Reads the ROUTER if no one else does: the frames read. */
static int s_try_read(xh_host *h)
{
    if (!h->direct || pthread_mutex_trylock(&h->rd_mu))
        return 0; /* another thread reads it */
    int got = s_read_locked(h);
    pthread_mutex_unlock(&h->rd_mu);
    return got;
}

void pc_xh_direct_read(xh_host *h) { s_try_read(h); }

/* Under cx_mu: messages x holds while it holds no lock and no output
 * waits for an acknowledgement (an unlock acknowledged before it was
 * noted again) go out; the number still held, the first in *first. */
static size_t s_held_release(xh_host *h, const xd_hosted *x, pc_cx_msg *first)
{
    size_t held = pc_cx_held(h->cx, x->id, first);
    if (held && !x->hold_seq && !rt_ch_oldest_out(x->vt) && rt_ch_capture_ok(x->vt)) {
        pc_cx_release(h->cx, x->id);
        pc_xh_direct_settle_locked(h);
        held = 0;
    }
    return held;
}

/* Under cx_mu: names once, in the log, a VT that still holds the same
 * messages or still waits at the same fixed position as at the last
 * look; true, with that position in *stall, in the second case (the
 * deployer is told at every look: X_STALL). */
static bool s_tell_waits(xh_host *h, xd_hosted *x, pc_cx_det *stall)
{
    pc_cx_msg first;
    pc_cx_mark held_at = {0};
    size_t held = s_held_release(h, x, &first);
    if (held)
        held_at = (pc_cx_mark){.vt = first.to, .seq = first.seq};
    if (held && held_at.vt == x->held_at.vt && held_at.seq == x->held_at.seq && !x->held_told) {
        x->held_told = true;
        fprintf(stderr,
                "levpeer executor: virtual thread %llu holds %zu messages (the first, %llu to "
                "%llu) until its unlock (output %llu; acknowledged up to %llu)\n",
                (unsigned long long)x->id, held, (unsigned long long)first.seq,
                (unsigned long long)first.to, (unsigned long long)x->hold_seq,
                (unsigned long long)x->acked);
    } else if (held_at.vt != x->held_at.vt || held_at.seq != x->held_at.seq) {
        x->held_at = held_at;
        x->held_told = false;
    }
    pc_cx_det at = {0};
    if (!pc_cx_stalled(h->cx, x->id, &at))
        at.pos = 0;
    bool stalled = at.pos && at.pos == x->stall_pos;
    if (stalled && !x->stall_told) {
        x->stall_told = true;
        fprintf(stderr,
                "levpeer executor: virtual thread %llu waits at input %llu for message %llu of "
                "virtual thread %llu (its position was fixed)\n",
                (unsigned long long)x->id, (unsigned long long)at.pos, (unsigned long long)at.seq,
                (unsigned long long)at.from);
    } else if (at.pos != x->stall_pos) {
        x->stall_pos = at.pos;
        x->stall_told = false;
    }
    if (stalled)
        *stall = at;
    return stalled;
}

void pc_xh_direct_stats(xh_host *h)
{
    if (!h->direct)
        return;
    pthread_mutex_lock(&h->cx_mu);
    xh_out *stalls = NULL, **tail = &stalls; /* queued once cx_mu is let go */
    for (size_t i = 0; i < h->nhosted; i++) {
        pc_cx_det at;
        const rt_vt *vt = h->hosted[i].vt;
        if (!s_tell_waits(h, &h->hosted[i], &at) || !vt)
            continue;
        /* the deployer fails it if no one has that message any more */
        xh_out *o = pc_xh_out_new(PC_X_STALL, h->hosted[i].id, vt->epoch, 0);
        if (o) {
            pc_cx_dets_encode(&o->head, &at, 1);
            *tail = o;
            tail = &o->next;
        }
    }
    pc_cx_stats cs = pc_cx_stats_of(h->cx);
    xd_stats x = h->xd;
    uint64_t sum = x.sent + x.received + x.dropped + x.refused + x.credits_in + cs.waits;
    bool moved = sum != h->xd.told;
    h->xd.told = sum;
    pthread_mutex_unlock(&h->cx_mu);
    while (stalls) {
        xh_out *o = stalls;
        stalls = o->next;
        o->next = NULL;
        pc_xh_queue(h, o);
    }
    if (!moved)
        return;
    xh_out *o = pc_xh_out_new(PC_X_STATS, 0, 0, 0);
    if (o) {
        const uint64_t v[] = {x.sent,   x.received, x.dropped,   x.refused,
                              cs.waits, cs.credits, x.credits_in};
        for (size_t i = 0; i < sizeof v / sizeof *v; i++)
            pc_put_u64(&o->head, v[i]);
    }
    pc_xh_queue(h, o);
}

/* rt_exec_idle.wait: returns once it delivered something, once woken,
 * or after 100 ms (the runtime waits again if nothing came). */
static void s_idle_wait(void *ud)
{
    xh_host *h = ud;
    if (s_try_read(h)) {
        pc_xh_cx_flush(h, false);
        return;
    }
    int fd = pc_xh_direct_fd(h);
    struct pollfd p[2] = {{.fd = h->idle_efd, .events = POLLIN}, {.fd = fd, .events = POLLIN}};
    if (poll(p, fd >= 0 ? 2 : 1, 100) > 0 && p[0].revents) {
        uint64_t n;
        (void)!read(h->idle_efd, &n, sizeof n);
        return;
    }
    if (s_try_read(h))
        pc_xh_cx_flush(h, false);
}

static void s_idle_wake(void *ud)
{
    xh_host *h = ud;
    uint64_t one = 1;
    (void)!write(h->idle_efd, &one, sizeof one);
}

rt_exec_idle pc_xh_direct_idle(xh_host *h)
{
    rt_exec_idle i = {0};
    if (h->direct)
        i = (rt_exec_idle){.wait = s_idle_wait, .wake = s_idle_wake, .ud = h};
    return i;
}

void pc_xh_direct_free(xh_host *h)
{
    pc_xlink_destroy(&h->xl);
    if (h->idle_efd >= 0)
        close(h->idle_efd);
    h->idle_efd = -1;
    pthread_mutex_destroy(&h->rd_mu);
    if (h->zctx)
        zmq_ctx_term(h->zctx);
    h->zctx = NULL;
    for (size_t i = 0; i < h->nloop; i++) {
        xd_loop *e = &h->loop[i];
        pc_buf_drop(&e->m.data);
        free(e->d);
    }
    free(h->loop);
    free(h->hosted);
    free(h->cons);
    free(h->lcred);
    for (size_t i = 0; i < h->nfixes; i++)
        free(h->fixes[i].d);
    free(h->fixes);
}

void pc_xh_direct_done(xh_host *h, uint64_t id, xh_out *end)
{
    if (!h->direct)
        return;
    pc_cx_image im;
    pthread_mutex_lock(&h->cx_mu);
    pc_cx_release(h->cx, id); /* ended holding a lock: what it sent under it goes */
    pc_xh_direct_settle_locked(h);
    int rc = pc_cx_image_of(h->cx, id, &im);
    pthread_mutex_unlock(&h->cx_mu);
    if (rc)
        return;
    pc_wbuf w; /* after the result, which is the record's bulk */
    pc_wbuf_init(&w);
    pc_put_u32(&w, (uint32_t)im.nchan);
    for (size_t i = 0; i < im.nchan; i++) {
        pc_put_u64(&w, im.chan[i].vt);
        pc_put_u64(&w, im.chan[i].seq);
    }
    /* its sender log, which the deployer keeps for receivers that resume */
    pc_wbuf part;
    pc_wbuf_init(&part);
    pc_cx_image_encode(&part, &im);
    pc_put_blob(&w, part.data, part.len);
    if (part.err)
        w.err = part.err;
    pc_wbuf_free(&part);
    pc_cx_image_clear(&im);
    if (!w.err && !end->tail) {
        end->tail = w.data;
        end->tail_len = w.len;
        w.data = NULL;
    } else {
        fprintf(stderr,
                "levpeer executor: no memory to say where virtual thread %llu's "
                "messages end\n",
                (unsigned long long)id);
    }
    pc_wbuf_free(&w);
}
