/* exechost_causal.c - the executor's part of causal logging
 * (exechost_private.h; docs/DIRECT_MESSAGES.md): the VC's engine
 * (causal.c), which orders the inputs of the VTs here by their channels
 * and gives each its position; the determinants it makes, sent up to the
 * deployer in batches (X_DET) until the deployer says they are stable
 * (X_STABLE); the recovery barrier (X_FLUSH: the fences learnt, every
 * determinant held sent, then X_FLUSHED) and the positions the deployer
 * fixed for a resumed VT (X_FIX); and the engine's part of a VT's
 * image, made with its channel state and installed again when the VT
 * resumes.
 *
 * The deployer still relays every input and gives it a position of its
 * own, so the engine's position must be that one: an input is taken only
 * at the position the VT expects, a gap asks for the inputs again, and
 * the deployer checks the determinants against its log.
 *
 * The engine is not thread-safe: h->cx_mu guards it. The main thread
 * feeds it; a VT's thread takes its part of an image under the same
 * lock, together with the channel state, so the two stand at one
 * position. Lock order: h->cx_mu, then a VT's channel; h->cx_mu, then
 * h->mu (never h->cx_mu under h->mu).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envelope.h"
#include "exechost_private.h"
#include "lev_errors.h"
#include "rt.h"
#include "vec.h"

#define XC_BATCH 32  /* determinants that go up together (and all at the tick) */
#define XC_PENDING 2 /* in_rc: the input in hand has not reached its position */

/* The engine's callbacks: a new determinant waits for the next batch. */
static void s_dets(void *ud, const pc_cx_det *d, size_t n)
{
    xh_host *h = ud;
    if (RT_VEC_RESERVE(h->dets, h->capdets, h->ndets, n)) {
        fprintf(stderr,
                "levpeer executor: no memory for %zu determinants; the deployer "
                "learns them from the next image\n",
                n);
        return;
    }
    memcpy(h->dets + h->ndets, d, n * sizeof *d);
    h->ndets += n;
}

/* The input in hand (h->in_hand) reaches its position: into the VT's
 * stream there. */
static void s_deliver(void *ud, uint64_t pos, const pc_cx_msg *m)
{
    xh_host *h = ud;
    if (h->direct) {
        pc_xh_direct_deliver(h, pos, m);
        return;
    }
    const rt_in *in = h->in_hand;
    h->in_pos = pos;
    if (!in || m->from != h->in_cfrom || m->seq != h->in_cseq || pos != in->d) {
        h->in_rc = rt_err(LEV_EINVAL,
                          "the executor ordered message %llu from %llu at input %llu, the "
                          "deployer at input %llu",
                          (unsigned long long)m->seq, (unsigned long long)m->from,
                          (unsigned long long)pos, (unsigned long long)(in ? in->d : 0));
        return;
    }
    h->in_rc = rt_ch_deliver(h->in_vt, in);
}

static void s_send(void *ud, int peer, const pc_cx_msg *m, const pc_cx_det *d, size_t n)
{
    xh_host *h = ud;
    if (h->direct)
        pc_xh_direct_send_cb(h, peer, m, d, n);
}

static void s_credit(void *ud, int peer, uint64_t from, uint64_t to, uint64_t seq)
{
    xh_host *h = ud;
    if (h->direct)
        pc_xh_direct_credit_cb(h, peer, from, to, seq);
}

int pc_xh_cx_init(xh_host *h)
{
    pc_cx_io io = {
        .ud = h, .dets = s_dets, .deliver = s_deliver, .send = s_send, .credit = s_credit};
    pthread_mutex_init(&h->cx_mu, NULL);
    h->cx = pc_cx_new(0, &io);
    return h->cx ? 0 : LEV_ENOMEM;
}

void pc_xh_cx_free(xh_host *h)
{
    pc_cx_destroy(&h->cx);
    free(h->dets);
    h->dets = NULL;
    pthread_mutex_destroy(&h->cx_mu);
}

int pc_xh_cx_install(xh_host *h, rt_vt *vt, uint64_t id, uint32_t epoch, const uint8_t *part,
                     size_t len)
{
    pc_cx_image im = {.vt = id, .epoch = epoch};
    const char *why = NULL;
    if (part) {
        int rc = pc_cx_image_decode(part, len, RT_CH_MAX_MSG, &im, &why);
        if (rc == LEV_ENOMEM)
            return rt_err(rc, "no memory for the image's causal state");
        if (rc)
            return rt_err(LEV_EIMAGE, "the image's causal state: %s", why);
        uint64_t at = rt_ch_next_in(vt) - 1;
        if (im.vt != id || im.epoch > epoch || im.consumed != at) {
            rc = rt_err(LEV_EIMAGE,
                        "the image's causal state is of virtual thread %llu incarnation %u at "
                        "input %llu, its channel state at input %llu",
                        (unsigned long long)im.vt, (unsigned)im.epoch,
                        (unsigned long long)im.consumed, (unsigned long long)at);
            pc_cx_image_clear(&im);
            return rc;
        }
        im.epoch = epoch;
    }
    pthread_mutex_lock(&h->cx_mu);
    pc_xh_direct_host_locked(h, id, vt);
    pc_cx_det *fixed = NULL; /* direct messages: they came before (X_FIX) */
    size_t nfixed = 0;
    pc_xh_direct_fix_take_locked(h, id, epoch, &fixed, &nfixed);
    int rc = pc_cx_install(h->cx, &im, fixed, nfixed);
    free(fixed);
    if (rc)
        pc_xh_direct_unhost_locked(h, id);
    pc_xh_direct_settle_locked(h);
    pthread_mutex_unlock(&h->cx_mu);
    pc_cx_image_clear(&im);
    return rc ? rt_err(rc, "the causal state of virtual thread %llu cannot be installed",
                       (unsigned long long)id)
              : 0;
}

void pc_xh_cx_remove(xh_host *h, uint64_t id)
{
    pthread_mutex_lock(&h->cx_mu);
    pc_xh_direct_unhost_locked(h, id);
    pc_cx_remove(h->cx, id);
    pthread_mutex_unlock(&h->cx_mu);
}

int pc_xh_cx_in(xh_host *h, rt_vt *vt, const rt_in *in, uint64_t cfrom, uint64_t cseq,
                uint32_t epoch)
{
    if (h->direct)
        return pc_xh_direct_in(h, vt, in, cfrom, cseq, epoch);
    uint64_t want = rt_ch_next_in(vt);
    if (in->d < want)
        return 1; /* it has it */
    if (in->d > want)
        return LEV_ERANGE; /* a gap: the host asks again from `want` */
    pthread_mutex_lock(&h->cx_mu);
    h->in_hand = in;
    h->in_vt = vt;
    h->in_cfrom = cfrom;
    h->in_cseq = cseq;
    h->in_pos = 0;
    h->in_rc = XC_PENDING;
    /* The deployer relays only what the sender's current incarnation
     * sent, and replays its log as it is: no fence applies here. */
    pc_cx_msg m = {
        .from = cfrom, .to = vt->id, .seq = cseq, .from_epoch = UINT32_MAX, .to_epoch = epoch};
    if (in->kind == RT_IN_ENDED) { /* after the ended VT's last message (wire.h, W_IN) */
        m.after_from = in->from;
        m.after_seq = in->ref;
    }
    int rc = pc_cx_on_msg(h->cx, -1, &m, NULL, 0);
    if (!rc && h->in_pos)
        pc_cx_consumed(h->cx, vt->id, h->in_pos); /* the VT's stream has it now */
    if (!rc && h->in_rc == XC_PENDING)
        rc = rt_err(LEV_EINVAL, "message %llu from %llu was not ordered at input %llu",
                    (unsigned long long)cseq, (unsigned long long)cfrom, (unsigned long long)in->d);
    else if (!rc)
        rc = h->in_rc;
    h->in_hand = NULL;
    pthread_mutex_unlock(&h->cx_mu);
    return rc;
}

void pc_xh_cx_stable(xh_host *h, uint64_t id, uint64_t pos)
{
    pthread_mutex_lock(&h->cx_mu);
    pc_cx_stable(h->cx, id, pos);
    pthread_mutex_unlock(&h->cx_mu);
}

/* Under h->cx_mu: queues the determinants made since the last X_DET. */
static void s_flush_locked(xh_host *h)
{
    if (!h->ndets)
        return;
    xh_out *o = pc_xh_out_new(PC_X_DET, 0, 0, 0);
    if (o) {
        pc_cx_dets_encode(&o->head, h->dets, h->ndets);
        h->ndets = 0;
    }
    pc_xh_queue(h, o);
}

void pc_xh_cx_flush(xh_host *h, bool all)
{
    pthread_mutex_lock(&h->cx_mu);
    if (all || h->ndets >= XC_BATCH)
        s_flush_locked(h);
    pthread_mutex_unlock(&h->cx_mu);
}

void pc_xh_cx_barrier(xh_host *h, uint64_t id, const uint8_t *p, size_t len)
{
    const char *why = NULL;
    pthread_mutex_lock(&h->cx_mu);
    int rc = pc_cx_fences_apply(h->cx, p, len, &why);
    pc_xh_direct_settle_locked(h);
    if (rc == LEV_EINVAL) {
        pthread_mutex_unlock(&h->cx_mu);
        fprintf(stderr, "levpeer executor: malformed FLUSH %llu: %s\n", (unsigned long long)id,
                why);
        return;
    }
    if (rc) /* it answers all the same: the fences come again with the next barrier */
        fprintf(stderr, "levpeer executor: no memory for the fences of barrier %llu\n",
                (unsigned long long)id);
    /* every determinant held goes before the answer, on the one channel */
    s_flush_locked(h);
    pc_xh_queue(h, pc_xh_out_new(PC_X_FLUSHED, 0, 0, id));
    pthread_mutex_unlock(&h->cx_mu);
}

void pc_xh_cx_place(xh_host *h, uint64_t self, const uint8_t *p, size_t len)
{
    const char *why = NULL;
    pthread_mutex_lock(&h->cx_mu);
    int rc = pc_cx_place_news(h->cx, self, p, len, &why); /* PC_XNO_NONE is UINT64_MAX */
    pc_xh_direct_settle_locked(h);
    pthread_mutex_unlock(&h->cx_mu);
    if (rc)
        fprintf(stderr, "levpeer executor: placements refused: %s\n", why ? why : lev_strerror(rc));
}

void pc_xh_cx_trim(xh_host *h, uint64_t id, const uint8_t *p, size_t len)
{
    const char *why = NULL;
    pthread_mutex_lock(&h->cx_mu);
    int rc = pc_cx_trim_apply(h->cx, id, p, len, &why);
    pc_xh_direct_settle_locked(h);
    pthread_mutex_unlock(&h->cx_mu);
    if (rc)
        fprintf(stderr, "levpeer executor: trim of the logs to VT %llu refused: %s\n",
                (unsigned long long)id, why ? why : lev_strerror(rc));
}

void pc_xh_cx_fix(xh_host *h, uint64_t id, uint32_t epoch, const uint8_t *p, size_t len)
{
    pc_cx_det *d = NULL;
    size_t n = 0;
    const char *why = NULL;
    int rc = pc_cx_dets_decode(p, len, &d, &n, &why);
    if (!rc) {
        pthread_mutex_lock(&h->cx_mu);
        rc = pc_cx_fix(h->cx, id, epoch, d, n);
        pc_xh_direct_settle_locked(h);
        if (rc == LEV_ENOVT && h->direct) { /* before its install, which takes them */
            rc = pc_xh_direct_fix_keep_locked(h, id, epoch, d, n);
            d = NULL;
        }
        pthread_mutex_unlock(&h->cx_mu);
        why = rc == LEV_EINVAL ? "they contradict the inputs it has" : NULL;
    }
    free(d);
    if (rc && rc != LEV_ENOVT)
        fprintf(stderr,
                "levpeer executor: the positions fixed for virtual thread %llu incarnation %u "
                "refused: %s\n",
                (unsigned long long)id, (unsigned)epoch, why ? why : lev_strerror(rc));
}

int pc_xh_state_tail(xh_host *h, rt_vt *vt, uint8_t **tail, size_t *tlen, uint64_t *next_in)
{
    *tail = NULL;
    uint8_t *chan = NULL;
    size_t clen = 0;
    pc_cx_image im;
    pc_wbuf w;
    pc_wbuf_init(&w);
    pthread_mutex_lock(&h->cx_mu);
    *next_in = rt_ch_next_in(vt); /* before the save: never above what it holds */
    int rc = pc_cx_image_of(h->cx, vt->id, &im);
    if (!rc)
        rc = rt_ch_save(vt, &chan, &clen);
    pthread_mutex_unlock(&h->cx_mu);
    if (!rc)
        pc_cx_image_encode(&w, &im);
    pc_cx_image_clear(&im);
    if (!rc && w.err)
        rc = w.err;
    if (!rc && !(*tail = pc_env_tail(chan, clen, w.data, w.len, tlen)))
        rc = LEV_ENOMEM;
    free(chan);
    pc_wbuf_free(&w);
    return rc;
}
