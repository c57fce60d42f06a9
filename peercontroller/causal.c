/* causal.c - causal logging of one VC's messages at one executor
 * (causal.h): the hosted VTs' input positions and channels, the
 * determinants held until the deployer has them stable, the sender logs,
 * placements and fences, messages early for an incarnation.
 */
#include "causal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "lev_errors.h"
#include "vec.h"

/* An input position not yet consumed: positions base + 1 ... */
typedef struct cx_in {
    uint64_t from, seq;
    pc_buf *data;
    bool have; /* false: fixed by the deployer, its message still to come */
} cx_in;

/* A hosted VT. */
typedef struct cx_vt {
    uint64_t vt;
    uint32_t epoch;
    uint64_t base;      /* consumed up to here; in[i] is position base + 1 + i */
    uint64_t delivered; /* handed to the VT up to here */
    cx_in *in;
    size_t nin, capin;
    pc_cx_mark *cons, *got, *chan; /* per channel: consumed, positioned, sent */
    size_t ncons, capcons, ngot, capgot, nchan, capchan;
    pc_cx_msg *ooo; /* ahead of their channel's order */
    size_t nooo, capooo;
    pc_cx_msg *log; /* the sender log */
    size_t nlog, caplog;
    pc_cx_mark *cred;        /* sender: per channel, taken by its receiver (flow control) */
    pc_cx_mark *took, *told; /* receiver: per channel, taken; and told to its sender */
    size_t ncred, capcred, ntook, captook, ntold, captold;
    uint64_t wait_to; /* the receiver whose window this VT waits for (0: none) */
} cx_vt;

typedef struct cx_place {
    uint32_t epoch;
    int peer;
    uint64_t stable; /* positions stable up to here */
} cx_place;

/* A determinant held, and the executors known to have it; serials grow
 * in the order determinants are learnt (dl keeps that order). */
typedef struct cx_kdet {
    pc_cx_det d;
    uint64_t has;
    uint64_t serial;
} cx_kdet;

struct pc_cx {
    int self;
    pc_cx_io io;
    cx_vt **vts;
    size_t nvts, capvts;
    cx_place *place; /* by VT id */
    size_t nplace;
    cx_kdet *dl;
    size_t ndl, capdl;
    uint32_t *dlh;                 /* (vt, pos) -> index in dl + 1, open addressing; 0: empty */
    size_t capdlh;                 /* a power of two, at least twice ndl (0: none yet) */
    uint64_t serial;               /* the last serial given */
    uint64_t carried[PC_CX_PEERS]; /* every determinant up to this serial was carried
                                    * to that executor, or known to it */
    pc_cx_msg *early;
    size_t nearly, capearly;
    pc_cx_det *fw, *pb; /* scratch: to the deployer, to carry */
    size_t nfw, capfw, npb, cappb;
    uint64_t fenced, filled;
    uint32_t window; /* flow control: a channel's messages not known taken */
    uint64_t waits, credits;
};

/* ===================================================================
 * Small pieces
 * =================================================================== */

static uint64_t s_bit(int peer) { return peer >= 0 && peer < PC_CX_PEERS ? 1ull << peer : 0; }

/* The mark of channel `vt` in a set of marks, added at 0 when `add`. */
static uint64_t *s_mark(pc_cx_mark **a, size_t *n, size_t *cap, uint64_t vt, bool add)
{
    for (size_t i = 0; i < *n; i++)
        if ((*a)[i].vt == vt)
            return &(*a)[i].seq;
    if (!add || rt_vec_reserve(a, cap, *n, 1, sizeof **a))
        return NULL;
    (*a)[*n] = (pc_cx_mark){.vt = vt, .seq = 0};
    return &(*a)[(*n)++].seq;
}

static uint64_t s_mark_get(const pc_cx_mark *a, size_t n, uint64_t vt)
{
    for (size_t i = 0; i < n; i++)
        if (a[i].vt == vt)
            return a[i].seq;
    return 0;
}

static cx_place *s_place(pc_cx *cx, uint64_t vt, bool add)
{
    if (vt < cx->nplace)
        return &cx->place[vt];
    if (!add)
        return NULL;
    size_t n = cx->nplace ? cx->nplace : 16;
    while (n <= vt)
        n *= 2;
    cx_place *p = realloc(cx->place, n * sizeof *p);
    if (!p)
        return NULL;
    for (size_t i = cx->nplace; i < n; i++)
        p[i] = (cx_place){.epoch = 0, .peer = -1, .stable = 0};
    cx->place = p;
    cx->nplace = n;
    return &cx->place[vt];
}

static uint32_t s_epoch(const pc_cx *cx, uint64_t vt)
{
    return vt < cx->nplace ? cx->place[vt].epoch : 0;
}

static cx_vt *s_vt(pc_cx *cx, uint64_t vt)
{
    for (size_t i = 0; i < cx->nvts; i++)
        if (cx->vts[i]->vt == vt)
            return cx->vts[i];
    return NULL;
}

static void s_msg_drop(pc_cx_msg *m) { pc_buf_drop(&m->data); }

static void s_vt_free(cx_vt *x)
{
    for (size_t i = 0; i < x->nin; i++)
        pc_buf_drop(&x->in[i].data);
    for (size_t i = 0; i < x->nooo; i++)
        s_msg_drop(&x->ooo[i]);
    for (size_t i = 0; i < x->nlog; i++)
        s_msg_drop(&x->log[i]);
    free(x->in);
    free(x->cons);
    free(x->got);
    free(x->chan);
    free(x->ooo);
    free(x->log);
    free(x->cred);
    free(x->took);
    free(x->told);
    free(x);
}

/* ===================================================================
 * Determinants
 * =================================================================== */

/* Learns d, from executor `src` (-1: made here, or from the deployer):
 * queued for the deployer when new. */
static size_t s_dlh_slot(const pc_cx *cx, uint64_t vt, uint64_t pos)
{
    uint64_t k = vt * 0x9E3779B97F4A7C15ull ^ (pos + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(k ^ k >> 29) & (cx->capdlh - 1);
}

/* The index in dl of the determinant of (vt, pos), or -1. */
static ssize_t s_dl_find(const pc_cx *cx, uint64_t vt, uint64_t pos)
{
    if (!cx->capdlh)
        return -1;
    for (size_t s = s_dlh_slot(cx, vt, pos);; s = (s + 1) & (cx->capdlh - 1)) {
        uint32_t e = cx->dlh[s];
        if (!e)
            return -1;
        const pc_cx_det *d = &cx->dl[e - 1].d;
        if (d->vt == vt && d->pos == pos)
            return (ssize_t)e - 1;
    }
}

static void s_dlh_put(pc_cx *cx, size_t i)
{
    size_t s = s_dlh_slot(cx, cx->dl[i].d.vt, cx->dl[i].d.pos);
    while (cx->dlh[s])
        s = (s + 1) & (cx->capdlh - 1);
    cx->dlh[s] = (uint32_t)i + 1;
}

/* Builds the index of dl again, in a table with room for `room` entries
 * at least. 0 or LEV_ENOMEM (the old index stays). */
static int s_dlh_build(pc_cx *cx, size_t room)
{
    size_t cap = cx->capdlh ? cx->capdlh : 64;
    while (cap < 2 * room)
        cap *= 2;
    if (cap != cx->capdlh) {
        uint32_t *t = malloc(cap * sizeof *t);
        if (!t)
            return LEV_ENOMEM;
        free(cx->dlh);
        cx->dlh = t;
        cx->capdlh = cap;
    }
    memset(cx->dlh, 0, cx->capdlh * sizeof *cx->dlh);
    for (size_t i = 0; i < cx->ndl; i++)
        s_dlh_put(cx, i);
    return 0;
}

static int s_learn(pc_cx *cx, int src, const pc_cx_det *d)
{
    const cx_place *pl = s_place(cx, d->vt, false);
    if (pl && (d->epoch < pl->epoch || d->pos <= pl->stable))
        return 0; /* fenced, or stable already */
    uint64_t has = s_bit(cx->self) | s_bit(src);
    ssize_t at = s_dl_find(cx, d->vt, d->pos);
    if (at >= 0) {
        cx->dl[at].has |= has; /* two orders for one position: the deployer finds out */
        return 0;
    }
    if (RT_VEC_RESERVE(cx->dl, cx->capdl, cx->ndl, 1) ||
        RT_VEC_RESERVE(cx->fw, cx->capfw, cx->nfw, 1) ||
        (2 * (cx->ndl + 1) > cx->capdlh && s_dlh_build(cx, cx->ndl + 1)))
        return LEV_ENOMEM;
    cx->dl[cx->ndl] = (cx_kdet){.d = *d, .has = has, .serial = ++cx->serial};
    s_dlh_put(cx, cx->ndl++);
    cx->fw[cx->nfw++] = *d;
    return 0;
}

static void s_forward(pc_cx *cx)
{
    if (cx->nfw && cx->io.dets)
        cx->io.dets(cx->io.ud, cx->fw, cx->nfw);
    cx->nfw = 0;
}

/* Keeps the determinants that are neither stable nor of a fenced
 * incarnation. */
static void s_dl_prune(pc_cx *cx)
{
    size_t j = 0;
    for (size_t i = 0; i < cx->ndl; i++) {
        const pc_cx_det *d = &cx->dl[i].d;
        const cx_place *pl = s_place(cx, d->vt, false);
        if (!pl || (d->pos > pl->stable && d->epoch >= pl->epoch))
            cx->dl[j++] = cx->dl[i];
    }
    if (j == cx->ndl)
        return;
    cx->ndl = j;
    (void)s_dlh_build(cx, j); /* the same size: it cannot fail */
}

/* ===================================================================
 * Sending
 * =================================================================== */

/* m, from hosted VT x, to its receiver's executor if it is known, with
 * the determinants that executor is not known to have: each goes to an
 * executor once, as a link is FIFO; one that dies gets a VT again only
 * after a barrier, by which time the deployer has them all. */
static void s_send_one(pc_cx *cx, const cx_vt *x, const pc_cx_msg *m)
{
    const cx_place *pl = s_place(cx, m->to, false);
    if (m->held || !pl || pl->peer < 0 || !cx->io.send)
        return; /* sent once released, or again once the receiver is placed */
    uint64_t bit = s_bit(pl->peer);
    cx->npb = 0;
    /* only those learnt since the last look for that executor can lack
     * its bit (dl is in serial order) */
    uint64_t *upto = &cx->carried[pl->peer];
    size_t lo = 0, hi = cx->ndl;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cx->dl[mid].serial <= *upto)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < cx->ndl; i++) {
        if (!(cx->dl[i].has & bit)) {
            if (RT_VEC_RESERVE(cx->pb, cx->cappb, cx->npb, 1))
                break; /* carried next time */
            cx->pb[cx->npb++] = cx->dl[i].d;
            cx->dl[i].has |= bit;
        }
        *upto = cx->dl[i].serial;
    }
    pc_cx_msg out = *m;
    out.from_epoch = x->epoch; /* a logged message goes again from the incarnation that has it */
    out.to_epoch = pl->epoch;
    cx->io.send(cx->io.ud, pl->peer, &out, cx->pb, cx->npb);
}

static void s_credit_again(pc_cx *cx, uint64_t from);

static void s_resend_to(pc_cx *cx, uint64_t to)
{
    for (size_t v = 0; v < cx->nvts; v++) {
        const cx_vt *x = cx->vts[v];
        for (size_t i = 0; i < x->nlog; i++)
            if (x->log[i].to == to)
                s_send_one(cx, x, &x->log[i]);
    }
}

static int s_send(pc_cx *cx, uint64_t vt, uint64_t to, pc_buf *data, bool held);

int pc_cx_send(pc_cx *cx, uint64_t vt, uint64_t to, pc_buf *data)
{
    return s_send(cx, vt, to, data, false);
}

int pc_cx_send_held(pc_cx *cx, uint64_t vt, uint64_t to, pc_buf *data)
{
    return s_send(cx, vt, to, data, true);
}

int pc_cx_release(pc_cx *cx, uint64_t vt)
{
    cx_vt *x = s_vt(cx, vt);
    if (!x)
        return LEV_ENOVT;
    for (size_t i = 0; i < x->nlog; i++)
        if (x->log[i].held) {
            x->log[i].held = false;
            s_send_one(cx, x, &x->log[i]);
        }
    return 0;
}

static int s_send(pc_cx *cx, uint64_t vt, uint64_t to, pc_buf *data, bool held)
{
    cx_vt *x = s_vt(cx, vt);
    if (!x) {
        pc_buf_drop(&data);
        return LEV_ENOVT;
    }
    uint64_t *last = s_mark(&x->chan, &x->nchan, &x->capchan, to, true);
    if (!last || RT_VEC_RESERVE(x->log, x->caplog, x->nlog, 1)) {
        pc_buf_drop(&data);
        return LEV_ENOMEM;
    }
    pc_cx_msg m = {.from = vt,
                   .to = to,
                   .seq = ++*last,
                   .from_epoch = x->epoch,
                   .to_epoch = s_epoch(cx, to),
                   .data = data,
                   .held = held};
    x->log[x->nlog++] = m;
    s_send_one(cx, x, &m);
    return 0;
}

/* ===================================================================
 * Receiving
 * =================================================================== */

/* Hands x its inputs in position order as far as they are here. */
static void s_pump(pc_cx *cx, cx_vt *x)
{
    while (x->delivered < x->base + x->nin) {
        cx_in *in = &x->in[x->delivered - x->base];
        if (!in->have)
            return;
        x->delivered++;
        if (cx->io.deliver) {
            pc_cx_msg m = {.from = in->from, .to = x->vt, .seq = in->seq, .data = in->data};
            cx->io.deliver(cx->io.ud, x->delivered, &m);
        }
    }
}

/* Whether m must wait for another channel of x to come further. */
static bool s_blocked(const cx_vt *x, const pc_cx_msg *m)
{
    return m->after_seq && s_mark_get(x->got, x->ngot, m->after_from) < m->after_seq;
}

/* m for hosted VT x: it fills a position fixed for it, or is a duplicate,
 * or takes the next position if it is next in its channel, or waits for
 * those before it. Takes m's reference. */
static int s_take(pc_cx *cx, cx_vt *x, pc_cx_msg *m)
{
    for (size_t i = 0; i < x->nin; i++) {
        cx_in *in = &x->in[i];
        if (in->from != m->from || in->seq != m->seq)
            continue;
        if (!in->have) {
            in->have = true;
            in->data = pc_buf_take(&m->data);
            cx->filled++;
        }
        s_msg_drop(m);
        return 0;
    }
    uint64_t *got = s_mark(&x->got, &x->ngot, &x->capgot, m->from, true);
    if (!got) {
        s_msg_drop(m);
        return LEV_ENOMEM;
    }
    if (m->seq <= *got) {
        s_msg_drop(m); /* consumed already */
        return 0;
    }
    if (m->seq > *got + 1 || s_blocked(x, m)) {
        for (size_t i = 0; i < x->nooo; i++)
            if (x->ooo[i].from == m->from && x->ooo[i].seq == m->seq) {
                s_msg_drop(m);
                return 0;
            }
        if (RT_VEC_RESERVE(x->ooo, x->capooo, x->nooo, 1)) {
            s_msg_drop(m);
            return LEV_ENOMEM;
        }
        x->ooo[x->nooo++] = *m;
        return 0;
    }
    if (RT_VEC_RESERVE(x->in, x->capin, x->nin, 1)) {
        s_msg_drop(m);
        return LEV_ENOMEM;
    }
    *got = m->seq;
    x->in[x->nin++] = (cx_in){.from = m->from, .seq = m->seq, .data = m->data, .have = true};
    pc_cx_det d = {
        .vt = x->vt, .pos = x->base + x->nin, .from = m->from, .seq = m->seq, .epoch = x->epoch};
    return s_learn(cx, -1, &d);
}

/* m for hosted VT x, then those that waited for it: the next ones in
 * its channel, and those that waited for its channel to come this far. */
static int s_take_all(pc_cx *cx, cx_vt *x, pc_cx_msg *m)
{
    int rc = s_take(cx, x, m);
    for (bool more = true; more && !rc;) {
        more = false;
        for (size_t i = 0; i < x->nooo; i++) {
            const pc_cx_msg *o = &x->ooo[i];
            if (o->seq != s_mark_get(x->got, x->ngot, o->from) + 1 || s_blocked(x, o))
                continue;
            pc_cx_msg t = *o;
            x->ooo[i] = x->ooo[--x->nooo];
            rc = s_take(cx, x, &t);
            more = true;
            break;
        }
    }
    return rc;
}

/* A message whose determinants are learnt already. Takes m's reference. */
static int s_arrive(pc_cx *cx, pc_cx_msg *m)
{
    cx_vt *x = s_vt(cx, m->to);
    if (!x || m->to_epoch > x->epoch) {
        const cx_place *pl = s_place(cx, m->to, false);
        uint32_t ke = pl ? pl->epoch : 0;
        int kp = pl ? pl->peer : -1;
        /* Early (for an incarnation to be installed here, or of a VT whose
         * placement is not known yet), or stale: its sender sends it again
         * once it learns the new placement. */
        if (!x && (m->to_epoch > ke || (m->to_epoch == ke && (kp < 0 || kp == cx->self)))) {
            if (RT_VEC_RESERVE(cx->early, cx->capearly, cx->nearly, 1)) {
                s_msg_drop(m);
                return LEV_ENOMEM;
            }
            cx->early[cx->nearly++] = *m;
            return 0;
        }
        s_msg_drop(m);
        return 0;
    }
    int rc = s_take_all(cx, x, m);
    s_pump(cx, x);
    return rc;
}

int pc_cx_on_msg(pc_cx *cx, int src, const pc_cx_msg *m, const pc_cx_det *d, size_t n)
{
    pc_cx_msg own = *m;
    if (m->from != 0 && m->from_epoch < s_epoch(cx, m->from)) {
        s_msg_drop(&own); /* from a fenced incarnation, and all it carries */
        cx->fenced++;
        return 0;
    }
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        rc = s_learn(cx, src, &d[i]);
    if (!rc)
        rc = s_arrive(cx, &own);
    else
        s_msg_drop(&own);
    s_forward(cx);
    return rc;
}

uint64_t pc_cx_next_wanted(pc_cx *cx, uint64_t vt, uint64_t from)
{
    const cx_vt *x = s_vt(cx, vt);
    if (!x)
        return 0;
    /* a position fixed for a message of the channel that has not come */
    for (size_t i = 0; i < x->nin; i++)
        if (!x->in[i].have && x->in[i].from == from)
            return x->in[i].seq;
    uint64_t want = s_mark_get(x->got, x->ngot, from) + 1;
    for (bool found = true; found;) {
        found = false;
        for (size_t i = 0; i < x->nooo && !found; i++)
            if (x->ooo[i].from == from && x->ooo[i].seq == want)
                want++, found = true;
    }
    return want;
}

size_t pc_cx_held(pc_cx *cx, uint64_t vt, pc_cx_msg *first)
{
    const cx_vt *x = s_vt(cx, vt);
    size_t n = 0;
    for (size_t i = 0; x && i < x->nlog; i++)
        if (x->log[i].held && !n++ && first)
            *first = x->log[i];
    return n;
}

bool pc_cx_stalled(pc_cx *cx, uint64_t vt, pc_cx_det *at)
{
    const cx_vt *x = s_vt(cx, vt);
    if (!x || x->delivered >= x->base + x->nin)
        return false;
    const cx_in *in = &x->in[x->delivered - x->base];
    if (in->have)
        return false;
    *at = (pc_cx_det){
        .vt = vt, .pos = x->delivered + 1, .from = in->from, .seq = in->seq, .epoch = x->epoch};
    return true;
}

uint64_t pc_cx_sent_last(pc_cx *cx, uint64_t vt, uint64_t to)
{
    const cx_vt *x = s_vt(cx, vt);
    return x ? s_mark_get(x->chan, x->nchan, to) : 0;
}

int pc_cx_where(const pc_cx *cx, uint64_t vt, uint32_t *epoch)
{
    const cx_place *pl = vt < cx->nplace ? &cx->place[vt] : NULL;
    if (epoch)
        *epoch = pl ? pl->epoch : 0;
    return pl ? pl->peer : -1;
}

void pc_cx_resend_peer(pc_cx *cx, int peer)
{
    if (peer < 0 || peer == cx->self)
        return;
    for (size_t vt = 0; vt < cx->nplace; vt++)
        if (cx->place[vt].peer == peer) {
            s_resend_to(cx, vt);
            s_credit_again(cx, vt);
        }
}

/* ===================================================================
 * Placement, install, images
 * =================================================================== */

static void s_remove_at(pc_cx *cx, size_t i)
{
    s_vt_free(cx->vts[i]);
    cx->vts[i] = cx->vts[--cx->nvts];
}

void pc_cx_remove(pc_cx *cx, uint64_t vt)
{
    for (size_t i = 0; i < cx->nvts; i++)
        if (cx->vts[i]->vt == vt) {
            s_remove_at(cx, i);
            return;
        }
}

int pc_cx_place(pc_cx *cx, uint64_t vt, uint32_t epoch, int peer)
{
    cx_place *pl = s_place(cx, vt, true);
    if (!pl)
        return LEV_ENOMEM;
    if (epoch < pl->epoch || (epoch == pl->epoch && peer == pl->peer))
        return 0;
    pl->epoch = epoch;
    pl->peer = peer;
    for (size_t i = 0; i < cx->nvts; i++)
        if (cx->vts[i]->vt == vt && cx->vts[i]->epoch < epoch) {
            s_remove_at(cx, i); /* an incarnation here that was fenced */
            break;
        }
    size_t j = 0;
    for (size_t i = 0; i < cx->nearly; i++) {
        pc_cx_msg *e = &cx->early[i];
        if (e->to == vt &&
            (e->to_epoch < epoch || (e->to_epoch == epoch && peer >= 0 && peer != cx->self)))
            s_msg_drop(e);
        else
            cx->early[j++] = *e;
    }
    cx->nearly = j;
    s_dl_prune(cx);
    if (peer >= 0) {
        s_resend_to(cx, vt);
        s_credit_again(cx, vt);
    }
    return 0;
}

/* The positions the deployer fixed for hosted VT x, in order: one it
 * has already must hold the same message; the next ones are added,
 * their messages still to come, each next in its channel. 0, LEV_EINVAL
 * (out of order, or another message than the one at that position),
 * LEV_ENOMEM. */
static int s_fix(cx_vt *x, const pc_cx_det *fixed, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const pc_cx_det *f = &fixed[i];
        if (f->vt != x->vt)
            return LEV_EINVAL;
        if (f->pos <= x->base)
            continue; /* consumed: the state stands beyond it */
        if (f->pos <= x->base + x->nin) {
            const cx_in *in = &x->in[f->pos - x->base - 1];
            if (in->from != f->from || in->seq != f->seq)
                return LEV_EINVAL;
            continue;
        }
        uint64_t *g = s_mark(&x->got, &x->ngot, &x->capgot, f->from, true);
        if (!g || RT_VEC_RESERVE(x->in, x->capin, x->nin, 1))
            return LEV_ENOMEM;
        if (f->pos != x->base + x->nin + 1 || f->seq != *g + 1)
            return LEV_EINVAL;
        *g = f->seq;
        x->in[x->nin++] = (cx_in){.from = f->from, .seq = f->seq};
    }
    return 0;
}

int pc_cx_fix(pc_cx *cx, uint64_t vt, uint32_t epoch, const pc_cx_det *fixed, size_t n)
{
    cx_vt *x = s_vt(cx, vt);
    if (!x || x->epoch < epoch)
        return LEV_ENOVT;
    if (x->epoch > epoch)
        return 0; /* for an incarnation before this one */
    int rc = s_fix(x, fixed, n);
    if (rc)
        return rc;
    /* messages that waited ahead of their channel may fill them now */
    pc_cx_msg *ooo = x->ooo;
    size_t nooo = x->nooo;
    x->ooo = NULL;
    x->nooo = x->capooo = 0;
    for (size_t i = 0; i < nooo; i++) {
        if (!rc)
            rc = s_take_all(cx, x, &ooo[i]);
        else
            s_msg_drop(&ooo[i]);
    }
    free(ooo);
    s_forward(cx);
    s_pump(cx, x);
    return rc;
}

int pc_cx_set_self(pc_cx *cx, int self)
{
    if (self < 0 || self >= PC_CX_PEERS)
        return LEV_EINVAL;
    if (self != cx->self && (cx->nvts || cx->ndl))
        return LEV_EBUSY;
    cx->self = self;
    return 0;
}

uint32_t pc_cx_hosts(const pc_cx *cx, uint64_t vt)
{
    for (size_t i = 0; i < cx->nvts; i++)
        if (cx->vts[i]->vt == vt)
            return cx->vts[i]->epoch;
    return 0;
}

int pc_cx_install(pc_cx *cx, pc_cx_image *im, const pc_cx_det *fixed, size_t n)
{
    cx_place *pl = s_place(cx, im->vt, true);
    if (!pl)
        return LEV_ENOMEM;
    if (im->epoch < pl->epoch)
        return LEV_EINVAL;
    cx_vt *x = calloc(1, sizeof *x);
    if (!x || RT_VEC_RESERVE(cx->vts, cx->capvts, cx->nvts, 1))
        goto nomem;
    x->vt = im->vt;
    x->epoch = im->epoch;
    x->base = x->delivered = im->consumed;
    for (size_t i = 0; i < im->ncons; i++) {
        uint64_t *c = s_mark(&x->cons, &x->ncons, &x->capcons, im->cons[i].vt, true);
        uint64_t *g = s_mark(&x->got, &x->ngot, &x->capgot, im->cons[i].vt, true);
        if (!c || !g)
            goto nomem;
        *c = *g = im->cons[i].seq;
    }
    for (size_t i = 0; i < im->nchan; i++) {
        uint64_t *c = s_mark(&x->chan, &x->nchan, &x->capchan, im->chan[i].vt, true);
        if (!c)
            goto nomem;
        *c = im->chan[i].seq;
        uint64_t *t = s_mark(&x->cred, &x->ncred, &x->capcred, im->chan[i].vt, true);
        if (!t)
            goto nomem;
        *t = im->chan[i].seq; /* taken as taken: no credit from before is awaited */
    }
    int frc = s_fix(x, fixed, n);
    if (frc == LEV_ENOMEM)
        goto nomem;
    if (frc) {
        s_vt_free(x);
        return frc;
    }
    if (RT_VEC_RESERVE(x->log, x->caplog, 0, im->nlog))
        goto nomem;
    for (size_t i = 0; i < im->nlog; i++) {
        x->log[i] = im->log[i];
        im->log[i].data = NULL; /* the reference moves here */
    }
    x->nlog = im->nlog;
    pc_cx_remove(cx, im->vt);
    cx->vts[cx->nvts++] = x;
    pl->epoch = im->epoch;
    pl->peer = cx->self;
    s_dl_prune(cx);
    /* What it sent before its image may be needed by a receiver lost with
     * it, and what the VTs here sent it before it was here: receivers drop
     * what they have. */
    for (size_t i = 0; i < x->nlog; i++)
        s_send_one(cx, x, &x->log[i]);
    s_resend_to(cx, x->vt);
    size_t ne = cx->nearly, j = 0;
    int rc = 0;
    for (size_t i = 0; i < ne; i++) {
        if (cx->early[i].to != x->vt) {
            cx->early[j++] = cx->early[i];
            continue;
        }
        pc_cx_msg e = cx->early[i];
        if (!rc)
            rc = s_take_all(cx, x, &e);
        else
            s_msg_drop(&e);
    }
    cx->nearly = j;
    s_forward(cx);
    s_pump(cx, x);
    return rc;
nomem:
    if (x)
        s_vt_free(x);
    return LEV_ENOMEM;
}

void pc_cx_consumed(pc_cx *cx, uint64_t vt, uint64_t pos)
{
    cx_vt *x = s_vt(cx, vt);
    if (!x || pos <= x->base || pos > x->delivered)
        return;
    size_t k = (size_t)(pos - x->base);
    for (size_t i = 0; i < k; i++) {
        uint64_t *c = s_mark(&x->cons, &x->ncons, &x->capcons, x->in[i].from, true);
        if (c)
            *c = x->in[i].seq;
        pc_buf_drop(&x->in[i].data);
    }
    if (x->nin > k)
        memmove(x->in, x->in + k, (x->nin - k) * sizeof *x->in);
    x->nin -= k;
    x->base = pos;
}

int pc_cx_image_of(pc_cx *cx, uint64_t vt, pc_cx_image *im)
{
    memset(im, 0, sizeof *im);
    cx_vt *x = s_vt(cx, vt);
    if (!x)
        return LEV_ENOVT;
    im->vt = vt;
    im->epoch = x->epoch;
    im->consumed = x->base;
    im->cons = malloc((x->ncons + 1) * sizeof *im->cons);
    im->chan = malloc((x->nchan + 1) * sizeof *im->chan);
    im->log = malloc((x->nlog + 1) * sizeof *im->log);
    im->dets = malloc((cx->ndl + 1) * sizeof *im->dets);
    if (!im->cons || !im->chan || !im->log || !im->dets) {
        pc_cx_image_clear(im);
        return LEV_ENOMEM;
    }
    if (x->ncons)
        memcpy(im->cons, x->cons, x->ncons * sizeof *im->cons);
    if (x->nchan)
        memcpy(im->chan, x->chan, x->nchan * sizeof *im->chan);
    im->ncons = x->ncons;
    im->nchan = x->nchan;
    for (size_t i = 0; i < x->nlog; i++) {
        im->log[i] = x->log[i];
        im->log[i].data = pc_buf_ref(x->log[i].data);
    }
    im->nlog = x->nlog;
    for (size_t i = 0; i < cx->ndl; i++)
        im->dets[i] = cx->dl[i].d;
    im->ndets = cx->ndl;
    return 0;
}

void pc_cx_image_clear(pc_cx_image *im)
{
    if (!im)
        return;
    for (size_t i = 0; im->log && i < im->nlog; i++)
        s_msg_drop(&im->log[i]);
    free(im->cons);
    free(im->chan);
    free(im->log);
    free(im->dets);
    memset(im, 0, sizeof *im);
}

void pc_cx_stable(pc_cx *cx, uint64_t vt, uint64_t pos)
{
    cx_place *pl = s_place(cx, vt, true);
    if (!pl || pos <= pl->stable)
        return;
    pl->stable = pos;
    s_dl_prune(cx);
}

void pc_cx_trim(pc_cx *cx, uint64_t vt, const pc_cx_mark *cons, size_t n)
{
    for (size_t v = 0; v < cx->nvts; v++) {
        cx_vt *x = cx->vts[v];
        uint64_t upto = s_mark_get(cons, n, x->vt);
        size_t j = 0;
        for (size_t i = 0; i < x->nlog; i++) {
            if (x->log[i].to == vt && x->log[i].seq <= upto)
                s_msg_drop(&x->log[i]);
            else
                x->log[j++] = x->log[i];
        }
        x->nlog = j;
    }
}

pc_cx_stats pc_cx_stats_of(const pc_cx *cx)
{
    return (pc_cx_stats){.unstable = cx->ndl,
                         .early = cx->nearly,
                         .fenced = cx->fenced,
                         .filled = cx->filled,
                         .waits = cx->waits,
                         .credits = cx->credits};
}

/* ===================================================================
 * Flow control
 * =================================================================== */

void pc_cx_set_window(pc_cx *cx, uint32_t window) { cx->window = window ? window : PC_CX_WINDOW; }

bool pc_cx_may_send(pc_cx *cx, uint64_t vt, uint64_t to)
{
    cx_vt *x = s_vt(cx, vt);
    if (!x)
        return true; /* pc_cx_send says why it cannot */
    uint64_t sent = s_mark_get(x->chan, x->nchan, to);
    uint64_t taken = s_mark_get(x->cred, x->ncred, to);
    if (sent < taken + cx->window)
        return true;
    if (x->wait_to != to)
        cx->waits++;
    x->wait_to = to;
    return false;
}

/* Tells the executor of `from` how far hosted VT x took its channel. */
static void s_credit_send(pc_cx *cx, cx_vt *x, uint64_t from, uint64_t seq)
{
    const cx_place *pl = s_place(cx, from, false);
    uint64_t *told = s_mark(&x->told, &x->ntold, &x->captold, from, true);
    if (!pl || pl->peer < 0 || !told || !cx->io.credit)
        return; /* told when the sender is placed, or by a later take */
    *told = seq;
    cx->credits++;
    cx->io.credit(cx->io.ud, pl->peer, from, x->vt, seq); /* to this executor too */
}

/* `from` was placed anew, or its executor's link is new: the hosted
 * VTs tell it how far they took its channels. */
static void s_credit_again(pc_cx *cx, uint64_t from)
{
    for (size_t v = 0; v < cx->nvts; v++) {
        cx_vt *x = cx->vts[v];
        uint64_t took = s_mark_get(x->took, x->ntook, from);
        if (took)
            s_credit_send(cx, x, from, took);
    }
}

void pc_cx_taken(pc_cx *cx, uint64_t vt, uint64_t from, uint64_t seq)
{
    cx_vt *x = s_vt(cx, vt);
    uint64_t *took = x && from ? s_mark(&x->took, &x->ntook, &x->captook, from, true) : NULL;
    if (!took || seq <= *took)
        return;
    *took = seq;
    uint64_t told = s_mark_get(x->told, x->ntold, from);
    uint32_t step = cx->window / 4 ? cx->window / 4 : 1;
    if (seq >= told + step)
        s_credit_send(cx, x, from, seq);
}

bool pc_cx_credit(pc_cx *cx, uint64_t from, uint64_t to, uint64_t seq)
{
    cx_vt *x = s_vt(cx, from);
    uint64_t *t = x ? s_mark(&x->cred, &x->ncred, &x->capcred, to, true) : NULL;
    if (!t || seq <= *t)
        return false;
    *t = seq;
    if (x->wait_to != to || s_mark_get(x->chan, x->nchan, to) >= seq + cx->window)
        return false;
    x->wait_to = 0;
    return true;
}

/* ===================================================================
 * Life
 * =================================================================== */

pc_cx *pc_cx_new(int self, const pc_cx_io *io)
{
    if (self < 0 || self >= PC_CX_PEERS)
        return NULL;
    pc_cx *cx = calloc(1, sizeof *cx);
    if (!cx)
        return NULL;
    cx->self = self;
    cx->window = PC_CX_WINDOW;
    if (io)
        cx->io = *io;
    return cx;
}

void pc_cx_destroy(pc_cx **cx_p)
{
    pc_cx *cx = cx_p ? *cx_p : NULL;
    if (!cx)
        return;
    while (cx->nvts)
        s_remove_at(cx, 0);
    for (size_t i = 0; i < cx->nearly; i++)
        s_msg_drop(&cx->early[i]);
    free(cx->vts);
    free(cx->place);
    free(cx->dl);
    free(cx->dlh);
    free(cx->early);
    free(cx->fw);
    free(cx->pb);
    free(cx);
    *cx_p = NULL;
}
