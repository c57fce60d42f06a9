/* causalsim_worker.c - what a worker decides in the causal-logging model:
 * it orders the inputs of the VTs it hosts as they arrive and sends each
 * order (a determinant) to the deployer; it sends its VTs' messages to the
 * receivers' workers directly, each carrying the determinants it knows
 * that are not stable yet; it keeps its VTs' sender logs (in their images
 * too) until the receivers' stable images have consumed what they hold;
 * it drops what comes from a fenced incarnation, answers a barrier once
 * every determinant it knows is on its way, and installs a VT to resume
 * at the positions the barrier fixed.
 */
#include <stdlib.h>
#include <string.h>

#include "causalsim_int.h"

/* ------------------------------------------------------------------ */
/* Hosted VTs                                                         */
/* ------------------------------------------------------------------ */

static void s_vt_clear(cs_vt *x)
{
    free(x->in);
    free(x->ooo);
    free(x->sl);
    memset(x, 0, sizeof *x);
}

void cs_worker_reset(cs_sim *s, int w)
{
    cs_worker *k = &s->w[w];
    for (int v = 0; v <= CS_V; v++)
        s_vt_clear(&k->vt[v]);
    free(k->dl);
    for (size_t i = 0; i < k->nearly; i++)
        cs_pkt_free(k->early[i]);
    free(k->early);
    uint32_t gen = k->gen;
    bool up = k->up;
    memset(k, 0, sizeof *k);
    k->gen = gen + 1;
    k->up = up;
    for (int v = 0; v <= CS_V; v++)
        k->loc[v] = -1;
}

static bool s_can_step(const cs_vt *x)
{
    if (!x->here || x->ended)
        return false;
    if (!x->started)
        return true;
    return x->p + 1 < x->next_pos && x->in[x->p + 1].have;
}

static void s_kick(cs_sim *s, int w, int vt)
{
    cs_vt *x = &s->w[w].vt[vt];
    if (x->stepping || !s_can_step(x))
        return;
    x->stepping = true;
    cs_push(s, (cs_ev){.at = s->now + cs_between(s, 100, 1000),
                       .kind = CS_E_STEP,
                       .node = w,
                       .vt = vt,
                       .gen = s->w[w].gen});
}

/* ------------------------------------------------------------------ */
/* Determinants                                                       */
/* ------------------------------------------------------------------ */

static cs_kdet *s_dl_find(cs_worker *k, int vt, uint32_t pos)
{
    for (size_t i = 0; i < k->ndl; i++)
        if (k->dl[i].d.vt == vt && k->dl[i].d.pos == pos)
            return &k->dl[i];
    return NULL;
}

/* Learns a determinant, from worker `src` (-1: made here): appended to
 * *fw (to go to the deployer) when new. */
static void s_learn(cs_sim *s, cs_worker *k, int src, cs_det d, cs_det **fw, size_t *nfw,
                    size_t *capfw)
{
    if (d.inc < k->kinc[d.vt] || d.pos <= k->wm[d.vt])
        return; /* fenced, or stable already */
    uint8_t has = (uint8_t)(1u << (k - s->w));
    if (src >= 0)
        has |= (uint8_t)(1u << src);
    cs_kdet *had = s_dl_find(k, d.vt, d.pos);
    if (had) {
        if (had->d.from != d.from || had->d.seq != d.seq)
            cs_fail(s, "a worker was told two inputs for position %u of VT %d", d.pos, d.vt);
        had->has |= has;
        return;
    }
    k->dl = cs_grow(k->dl, &k->capdl, k->ndl, sizeof *k->dl);
    k->dl[k->ndl++] = (cs_kdet){.d = d, .has = has};
    *fw = cs_grow(*fw, capfw, *nfw, sizeof **fw);
    (*fw)[(*nfw)++] = d;
}

static void s_forward(cs_sim *s, int w, cs_det *fw, size_t nfw)
{
    if (!nfw) {
        free(fw);
        return;
    }
    cs_pkt *p = cs_pkt_new(CS_P_DETS);
    p->dets = fw;
    p->ndets = nfw;
    cs_send(s, w, CS_EP_D, p);
}

static void s_dl_prune(cs_worker *k)
{
    size_t j = 0;
    for (size_t i = 0; i < k->ndl; i++) {
        cs_det d = k->dl[i].d;
        if (d.pos > k->wm[d.vt] && d.inc >= k->kinc[d.vt])
            k->dl[j++] = k->dl[i];
    }
    k->ndl = j;
}

/* ------------------------------------------------------------------ */
/* Sending                                                            */
/* ------------------------------------------------------------------ */

static void s_send_direct(cs_sim *s, int w, const cs_msg *m)
{
    cs_worker *k = &s->w[w];
    int at = k->loc[m->to];
    if (at < 0)
        return; /* sent again once the receiver is placed */
    cs_pkt *p = cs_pkt_new(CS_P_DIRECT);
    p->m = *m;
    p->m.to_inc = k->kinc[m->to];
    /* A message in the log of an image is sent again by the incarnation
     * that resumed from it: it is part of that incarnation's past. */
    p->m.from_inc = k->vt[m->from].inc;
    /* The determinants the receiving worker is not known to have: each
     * goes to a worker once, as a link is FIFO. A worker that dies loses
     * them, but its next life gets a VT only after a barrier, and by then
     * every determinant known here before it is at the deployer. */
    uint8_t bit = (uint8_t)(1u << at);
    for (size_t i = 0; i < k->ndl && s->o.broken != CS_BREAK_PIGGYBACK; i++) {
        if (k->dl[i].has & bit)
            continue;
        p->dets = cs_grow(p->dets, &p->capdets, p->ndets, sizeof *p->dets);
        p->dets[p->ndets++] = k->dl[i].d;
        k->dl[i].has |= bit;
    }
    s->r->piggyback += p->ndets;
    s->r->direct++;
    cs_trace(s, "worker %d sends %d.%u to VT %d.%u on worker %d (%zu determinants) token %llu/%llu",
             w, m->from, m->seq, m->to, p->m.to_inc, at, p->ndets,
             (unsigned long long)(m->pay >> 8), (unsigned long long)(m->pay & 0xff));
    cs_send(s, w, at, p);
}

void cs_out_msg(cs_sim *s, cs_worker *k, int vt, int to, uint64_t pay)
{
    cs_vt *x = &k->vt[vt];
    x->n++;
    cs_msg m = {.from = (uint8_t)vt,
                .to = (uint8_t)to,
                .from_inc = x->inc,
                .to_inc = k->kinc[to],
                .seq = ++x->chan[to],
                .pay = pay};
    if (x->chan[to] >= CS_SEQ) {
        cs_fail(s, "VT %d sent more than %d messages to VT %d", vt, CS_SEQ - 1, to);
        return;
    }
    x->sl = cs_grow(x->sl, &x->capsl, x->nsl, sizeof *x->sl);
    x->sl[x->nsl++] = m;
    s_send_direct(s, (int)(k - s->w), &m);
}

void cs_out_report(cs_sim *s, cs_worker *k, int vt, int kind, uint64_t val, uint64_t val2)
{
    cs_vt *x = &k->vt[vt];
    cs_pkt *p = cs_pkt_new(CS_P_OUT);
    p->vt = (uint8_t)vt;
    p->inc = x->inc;
    p->n = ++x->n;
    p->r = ++x->r;
    p->okind = kind;
    p->val = val;
    p->val2 = val2;
    cs_send(s, (int)(k - s->w), CS_EP_D, p);
}

/* Sends again what the VTs here logged for `to` (its placement changed). */
static void s_resend_to(cs_sim *s, int w, int to)
{
    cs_worker *k = &s->w[w];
    for (int v = 1; v <= s->o.vts; v++) {
        cs_vt *x = &k->vt[v];
        if (!x->here)
            continue;
        for (size_t i = 0; i < x->nsl; i++)
            if (x->sl[i].to == to)
                s_send_direct(s, w, &x->sl[i]);
    }
}

/* ------------------------------------------------------------------ */
/* Images                                                             */
/* ------------------------------------------------------------------ */

static void s_capture(cs_sim *s, int w, int vt)
{
    cs_vt *x = &s->w[w].vt[vt];
    cs_image im = {.vt = (uint8_t)vt,
                   .started = x->started,
                   .inc = x->inc,
                   .p = x->p,
                   .n = x->n,
                   .r = x->r,
                   .tokens = x->tokens,
                   .h = x->h,
                   .sl = x->sl,
                   .nsl = s->o.broken == CS_BREAK_SENDER_LOG ? 0 : x->nsl};
    memcpy(im.cons, x->cons, sizeof im.cons);
    memcpy(im.chan, x->chan, sizeof im.chan);
    cs_pkt *p = cs_pkt_new(CS_P_IMG);
    p->img = cs_image_copy(&im);
    s->r->images++;
    if (x->nsl > s->r->max_log)
        s->r->max_log = x->nsl;
    cs_send(s, w, CS_EP_H, p);
}

void cs_worker_step(cs_sim *s, int w, int vt)
{
    cs_worker *k = &s->w[w];
    cs_vt *x = &k->vt[vt];
    x->stepping = false;
    if (!s_can_step(x))
        return;
    if (!x->started) {
        x->started = true;
        cs_prog_start(s, k, vt);
    } else {
        cs_in in = x->in[++x->p];
        if (in.seq != x->cons[in.from] + 1)
            cs_fail(s, "VT %d consumed message %u from %d after %u", vt, in.seq, in.from,
                    x->cons[in.from]);
        x->cons[in.from] = in.seq;
        cs_prog_input(s, k, vt, in.from, in.pay);
        if (++x->since >= (uint32_t)s->o.ckpt) {
            x->since = 0;
            s_capture(s, w, vt);
        }
    }
    s_kick(s, w, vt);
}

/* ------------------------------------------------------------------ */
/* Receiving                                                          */
/* ------------------------------------------------------------------ */

static void s_keep_early(cs_worker *k, cs_pkt *p)
{
    k->early = cs_grow(k->early, &k->capearly, k->nearly, sizeof *k->early);
    k->early[k->nearly++] = p;
}

/* A message for VT x, here: it fills a position fixed for it, or is a
 * duplicate, or takes the next position if it is next in its channel,
 * or waits for the ones before it. */
static void s_take(cs_sim *s, int w, cs_vt *x, const cs_msg *m, cs_det **fw, size_t *nfw,
                   size_t *capfw)
{
    for (uint32_t pos = x->p + 1; pos < x->next_pos; pos++) {
        cs_in *in = &x->in[pos];
        if (in->from != m->from || in->seq != m->seq)
            continue;
        if (!in->have) {
            in->have = true;
            in->pay = m->pay;
            s->r->replayed++;
        } else if (in->pay != m->pay) {
            cs_fail(s, "message %u from VT %d to VT %d came again different", m->seq, m->from,
                    m->to);
        }
        return;
    }
    if (m->seq <= x->got[m->from])
        return; /* consumed already */
    if (m->seq > x->got[m->from] + 1) {
        for (size_t i = 0; i < x->nooo; i++)
            if (x->ooo[i].from == m->from && x->ooo[i].seq == m->seq)
                return;
        x->ooo = cs_grow(x->ooo, &x->capooo, x->nooo, sizeof *x->ooo);
        x->ooo[x->nooo++] = *m;
        return;
    }
    uint32_t pos = x->next_pos++;
    x->got[m->from] = m->seq;
    x->in = cs_grow(x->in, &x->capin, pos, sizeof *x->in);
    x->in[pos] = (cs_in){.from = m->from, .have = true, .seq = m->seq, .pay = m->pay};
    s_learn(s, &s->w[w], -1,
            (cs_det){.vt = m->to, .from = m->from, .inc = x->inc, .pos = pos, .seq = m->seq}, fw,
            nfw, capfw);
}

static void s_on_direct(cs_sim *s, int w, cs_pkt *p)
{
    cs_worker *k = &s->w[w];
    cs_msg m = p->m;
    if (m.from != 0 && m.from_inc < k->kinc[m.from] && s->o.broken != CS_BREAK_FENCE) {
        s->r->fenced++;
        cs_pkt_free(p);
        return;
    }
    cs_vt *x = &k->vt[m.to];
    cs_trace(s, "worker %d gets %d.%u for VT %d.%u", w, m.from, m.seq, m.to, m.to_inc);
    /* What it carries is learnt whatever becomes of the message: its
     * sender counts on this worker knowing it from now on. */
    cs_det *fw = NULL;
    size_t nfw = 0, capfw = 0;
    for (size_t i = 0; i < p->ndets; i++)
        s_learn(s, k, p->src < CS_W ? p->src : -1, p->dets[i], &fw, &nfw, &capfw);
    p->ndets = 0;
    if (!x->here || m.to_inc > x->inc) {
        s_forward(s, w, fw, nfw);
        /* Early (its incarnation is to be installed here, or where it
         * runs is not known yet), or stale: the sender sends it again
         * once it learns the new placement. */
        if (!x->here && (m.to_inc > k->kinc[m.to] ||
                         (m.to_inc == k->kinc[m.to] && (k->loc[m.to] < 0 || k->loc[m.to] == w))))
            s_keep_early(k, p);
        else
            cs_pkt_free(p);
        return;
    }
    s_take(s, w, x, &m, &fw, &nfw, &capfw);
    /* Messages that came ahead of their channel's order, now in it. */
    for (bool more = true; more;) {
        more = false;
        for (size_t i = 0; i < x->nooo; i++)
            if (x->ooo[i].from == m.from && x->ooo[i].seq == x->got[m.from] + 1) {
                cs_msg o = x->ooo[i];
                x->ooo[i] = x->ooo[--x->nooo];
                s_take(s, w, x, &o, &fw, &nfw, &capfw);
                more = true;
                break;
            }
    }
    s_forward(s, w, fw, nfw);
    cs_pkt_free(p);
    s_kick(s, w, m.to);
}

/* New placements or fences: what is known of `v` changes. */
static void s_learn_place(cs_sim *s, int w, int v, uint16_t inc, int loc)
{
    cs_worker *k = &s->w[w];
    if (inc < k->kinc[v] || (inc == k->kinc[v] && loc == k->loc[v]))
        return;
    k->kinc[v] = inc;
    k->loc[v] = (int8_t)loc;
    cs_vt *x = &k->vt[v];
    if (x->here && x->inc < inc)
        s_vt_clear(x); /* an incarnation here that was fenced */
    size_t j = 0;
    for (size_t i = 0; i < k->nearly; i++) {
        cs_pkt *e = k->early[i];
        if (e->m.to == v && (e->m.to_inc < inc || (e->m.to_inc == inc && loc >= 0 && loc != w)))
            cs_pkt_free(e);
        else
            k->early[j++] = e;
    }
    k->nearly = j;
    s_dl_prune(k);
    if (loc >= 0)
        s_resend_to(s, w, v);
}

static void s_install(cs_sim *s, int w, cs_pkt *p)
{
    cs_worker *k = &s->w[w];
    cs_image *im = p->img;
    int v = im->vt;
    if (p->inc < k->kinc[v]) {
        cs_pkt_free(p);
        return;
    }
    cs_vt *x = &k->vt[v];
    s_vt_clear(x);
    x->here = true;
    x->inc = p->inc;
    x->started = im->started;
    x->h = im->h;
    x->p = im->p;
    x->n = im->n;
    x->r = im->r;
    x->tokens = im->tokens;
    memcpy(x->cons, im->cons, sizeof x->cons);
    memcpy(x->got, im->cons, sizeof x->got);
    memcpy(x->chan, im->chan, sizeof x->chan);
    x->next_pos = im->p + 1;
    for (size_t i = 0; i < p->ndets; i++) {
        cs_det d = p->dets[i];
        if (d.pos != x->next_pos) {
            cs_fail(s, "VT %d resumed with position %u where %u was due", v, d.pos, x->next_pos);
            break;
        }
        x->in = cs_grow(x->in, &x->capin, d.pos, sizeof *x->in);
        if (d.seq != x->got[d.from] + 1) {
            cs_fail(s, "VT %d resumed with message %u from %d fixed after %u", v, d.seq, d.from,
                    x->got[d.from]);
            break;
        }
        x->got[d.from] = d.seq;
        x->in[d.pos] = (cs_in){.from = d.from, .seq = d.seq};
        x->next_pos++;
    }
    x->in = cs_grow(x->in, &x->capin, x->next_pos, sizeof *x->in);
    x->sl = im->sl;
    x->nsl = x->capsl = im->nsl;
    im->sl = NULL;
    im->nsl = 0;
    k->kinc[v] = p->inc;
    k->loc[v] = (int8_t)w;
    cs_trace(s, "worker %d resumes VT %d.%u at input %u, positions fixed to %u", w, v, p->inc, x->p,
             x->next_pos - 1);
    cs_pkt_free(p);
    /* What it sent before its image may be needed by a receiver that was
     * lost with it; receivers drop what they have. */
    for (size_t i = 0; i < x->nsl; i++)
        s_send_direct(s, w, &x->sl[i]);
    /* And what the other VTs here sent it before they knew it was here. */
    for (int u = 1; u <= s->o.vts; u++) {
        cs_vt *y = &k->vt[u];
        for (size_t i = 0; u != v && y->here && i < y->nsl; i++)
            if (y->sl[i].to == v)
                s_send_direct(s, w, &y->sl[i]);
    }
    size_t n = k->nearly;
    cs_pkt **early = k->early;
    k->early = NULL;
    k->nearly = k->capearly = 0;
    for (size_t i = 0; i < n; i++) {
        if (early[i]->m.to == v)
            s_on_direct(s, w, early[i]);
        else
            s_keep_early(k, early[i]);
    }
    free(early);
    s_kick(s, w, v);
}

void cs_worker_on_pkt(cs_sim *s, int w, cs_pkt *p)
{
    cs_worker *k = &s->w[w];
    switch (p->type) {
    case CS_P_DIRECT:
        s_on_direct(s, w, p);
        return;
    case CS_P_FENCED:
        cs_trace(s, "worker %d was taken for dead: starts again empty", w);
        cs_worker_reset(s, w);
        break;
    case CS_P_FLUSH: {
        for (int v = 1; v <= s->o.vts; v++)
            s_learn_place(s, w, v, p->incs[v], p->locs[v]);
        cs_pkt *a = cs_pkt_new(CS_P_FLUSHED);
        a->bid = p->bid;
        cs_send(s, w, CS_EP_D, a);
        break;
    }
    case CS_P_PLACE:
        for (int v = 1; v <= s->o.vts; v++)
            s_learn_place(s, w, v, p->incs[v], p->locs[v]);
        break;
    case CS_P_RESUME:
        s_install(s, w, p);
        return;
    case CS_P_WM:
        for (int v = 1; v <= s->o.vts; v++)
            if (p->wm[v] > k->wm[v])
                k->wm[v] = p->wm[v];
        s_dl_prune(k);
        break;
    case CS_P_GC:
        for (int v = 1; v <= s->o.vts; v++) {
            cs_vt *x = &k->vt[v];
            size_t j = 0;
            for (size_t i = 0; i < x->nsl; i++)
                if (x->sl[i].to != p->vt || x->sl[i].seq > p->gc[x->sl[i].from])
                    x->sl[j++] = x->sl[i];
            x->nsl = j;
        }
        break;
    default:
        break;
    }
    cs_pkt_free(p);
}

void cs_worker_heartbeat(cs_sim *s, int w) { cs_send(s, w, CS_EP_D, cs_pkt_new(CS_P_HB)); }
