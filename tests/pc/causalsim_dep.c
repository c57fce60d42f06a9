/* causalsim_dep.c - the deployer of the causal-logging model: its log of
 * determinants is the peer controller's (peercontroller/detlog.c); around
 * it, what the real deployer's other parts will do: it takes each report
 * once, tells the workers how far each VT's positions are stable, keeps
 * the newest image of each VT it may resume from (one whose reports it
 * has all and whose determinants it has learnt) and tells senders what
 * that image consumed, suspects a worker that falls silent, fences the
 * incarnations it hosted, runs a barrier over the live workers, and
 * resumes each lost VT from its stable image at the positions the log
 * fixes. It also checks the invariants: no input at two positions, every
 * repeated report equal to the first, every token counted once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "causalsim_int.h"

static int s_total_tokens(const cs_sim *s) { return s->o.vts * s->o.tokens; }

void cs_dep_open(cs_sim *s)
{
    cs_dep *d = &s->d;
    d->done = calloc((size_t)s_total_tokens(s), 1);
    d->log = pc_detlog_new();
    if (!d->done || !d->log)
        abort();
    for (int i = 0; i < s->o.workers; i++) {
        d->alive[i] = true;
        d->gen[i] = 1;
    }
    for (int v = 1; v <= s->o.vts; v++) {
        cs_dvt *x = &d->v[v];
        x->loc = -1;
        x->inc = 1;
        x->lost = true; /* placed at the first tick, as a lost VT would be */
        x->out = calloc(CS_SEQ, sizeof *x->out);
        x->rep = calloc(CS_SEQ, 1);
        x->posof = calloc(CS_V + 1, sizeof *x->posof);
        if (!x->out || !x->rep || !x->posof)
            abort();
    }
    d->barrier = true; /* an empty one: completes at the first tick */
}

void cs_dep_free(cs_sim *s)
{
    cs_dep *d = &s->d;
    for (int v = 0; v <= CS_V; v++) {
        cs_dvt *x = &d->v[v];
        free(x->rep);
        free(x->out);
        free(x->posof);
        cs_image_free(x->stable);
        for (size_t i = 0; i < x->npend; i++)
            cs_image_free(x->pend[i]);
        free(x->pend);
    }
    free(d->done);
    pc_detlog_destroy(&d->log);
}

/* ------------------------------------------------------------------ */
/* Placing and resuming                                               */
/* ------------------------------------------------------------------ */

static void s_broadcast_place(cs_sim *s, int type, uint32_t bid)
{
    cs_dep *d = &s->d;
    for (int w = 0; w < s->o.workers; w++) {
        if (!d->alive[w])
            continue;
        cs_pkt *p = cs_pkt_new(type);
        p->bid = bid;
        for (int v = 1; v <= s->o.vts; v++) {
            p->incs[v] = d->v[v].inc;
            p->locs[v] = (int8_t)d->v[v].loc;
        }
        cs_send(s, CS_EP_D, w, p);
    }
}

static void s_send_stop(cs_sim *s, int v)
{
    cs_dvt *x = &s->d.v[v];
    if (x->loc < 0)
        return;
    cs_pkt *p = cs_pkt_new(CS_P_DIRECT);
    p->m = (cs_msg){.from = 0, .to = (uint8_t)v, .to_inc = x->inc, .seq = 1};
    cs_send(s, CS_EP_D, x->loc, p);
}

static int s_least_loaded(cs_sim *s)
{
    int best = -1, load[CS_W] = {0};
    for (int v = 1; v <= s->o.vts; v++)
        if (s->d.v[v].loc >= 0 && !s->d.v[v].done)
            load[s->d.v[v].loc]++;
    for (int w = 0; w < s->o.workers; w++)
        if (s->d.alive[w] && (best < 0 || load[w] < load[best]))
            best = w;
    return best;
}

/* Resumes lost VT `v` from its stable image (or its start) at the
 * positions known, on the least loaded live worker. */
static void s_resume(cs_sim *s, int v)
{
    cs_dep *d = &s->d;
    cs_dvt *x = &d->v[v];
    int w = s_least_loaded(s);
    if (w < 0) {
        x->pending = true;
        return;
    }
    x->pending = false;
    cs_image fresh = {.vt = (uint8_t)v, .inc = x->inc};
    const cs_image *im = x->stable ? x->stable : &fresh;
    pc_cx_det *fixed;
    size_t nfixed;
    int rc = pc_detlog_fix(s->d.log, (uint64_t)v, im->p, &fixed, &nfixed);
    if (rc) {
        cs_fail(s, "VT %d: the positions after input %u cannot be fixed (%d)", v, im->p, rc);
        return;
    }
    x->loc = w;
    cs_pkt *p = cs_pkt_new(CS_P_RESUME);
    p->img = cs_image_copy(im);
    p->img->inc = x->inc;
    p->inc = x->inc;
    if (nfixed) {
        p->dets = malloc(nfixed * sizeof *p->dets);
        if (!p->dets)
            abort();
        for (size_t i = 0; i < nfixed; i++)
            p->dets[i] = cs_det_of(&fixed[i]);
        p->ndets = p->capdets = nfixed;
    }
    free(fixed);
    if (x->inc > 1)
        s->r->resumes++;
    cs_trace(s, "deployer resumes VT %d.%u on worker %d from input %u, %zu positions fixed", v,
             x->inc, w, im->p, p->ndets);
    cs_send(s, CS_EP_D, w, p);
    s_broadcast_place(s, CS_P_PLACE, 0);
    if (x->stop_sent)
        s_send_stop(s, v);
}

static void s_barrier_done(cs_sim *s)
{
    cs_dep *d = &s->d;
    d->barrier = false;
    if (d->bid)
        s->r->barriers++;
    for (int v = 1; v <= s->o.vts; v++)
        if (d->v[v].lost) {
            d->v[v].lost = false;
            s_resume(s, v);
        }
}

static void s_start_barrier(cs_sim *s)
{
    cs_dep *d = &s->d;
    d->barrier = true;
    uint64_t live = 0;
    for (int w = 0; w < s->o.workers; w++)
        if (d->alive[w])
            live |= 1ull << w;
    d->bid = pc_detlog_barrier_start(d->log, live);
    cs_trace(s, "deployer starts barrier %u", d->bid);
    if (!live || s->o.broken == CS_BREAK_BARRIER) {
        s_barrier_done(s);
        return;
    }
    s_broadcast_place(s, CS_P_FLUSH, d->bid);
}

/* Worker `w`'s life `gen` is over: its VTs are fenced and recovered. */
static void s_declare_dead(cs_sim *s, int w)
{
    cs_dep *d = &s->d;
    d->alive[w] = false;
    cs_trace(s, "deployer takes worker %d (life %u) for dead", w, d->gen[w]);
    for (int v = 1; v <= s->o.vts; v++) {
        cs_dvt *x = &d->v[v];
        if (x->loc != w || x->done)
            continue;
        uint32_t e = pc_detlog_fence(s->d.log, (uint64_t)v);
        if (!e || e >= CS_INC) {
            cs_fail(s, "VT %d resumed too often", v);
            return;
        }
        x->inc = (uint16_t)e;
        x->loc = -1;
        x->lost = true;
        /* Images of the fenced incarnation not yet stable never will be. */
        for (size_t i = 0; i < x->npend; i++)
            cs_image_free(x->pend[i]);
        x->npend = 0;
    }
    s_start_barrier(s);
}

/* ------------------------------------------------------------------ */
/* Determinants, reports, images                                      */
/* ------------------------------------------------------------------ */

static void s_on_det(cs_sim *s, cs_det dt)
{
    cs_dvt *x = &s->d.v[dt.vt];
    pc_cx_det d = cs_det_cx(&dt);
    bool kept = !pc_detlog_abandoned(s->d.log, &d) && dt.pos > (x->stable ? x->stable->p : 0);
    if (pc_detlog_add(s->d.log, &d)) {
        cs_fail(s, "position %u of VT %d given a second message, %d.%u", dt.pos, dt.vt, dt.from,
                dt.seq);
        return;
    }
    if (!kept)
        return;
    uint32_t had = x->posof[dt.from][dt.seq];
    if (had && had != dt.pos) {
        cs_fail(s, "message %d.%u given positions %u and %u of VT %d", dt.from, dt.seq, had, dt.pos,
                dt.vt);
        return;
    }
    if (!had)
        s->r->dets++;
    x->posof[dt.from][dt.seq] = dt.pos;
}

static void s_make_stable(cs_sim *s, cs_dvt *x, cs_image *im)
{
    if (x->stable && x->stable->p >= im->p) {
        cs_image_free(im);
        return;
    }
    cs_image_free(x->stable);
    x->stable = im;
    pc_detlog_stable(s->d.log, im->vt, im->p);
    for (int w = 0; w < s->o.workers; w++) {
        if (!s->d.alive[w])
            continue;
        cs_pkt *p = cs_pkt_new(CS_P_GC);
        p->vt = im->vt;
        memcpy(p->gc, im->cons, sizeof p->gc);
        cs_send(s, CS_EP_D, w, p);
    }
}

static void s_check_pending(cs_sim *s, cs_dvt *x)
{
    size_t j = 0;
    for (size_t i = 0; i < x->npend; i++) {
        if (x->pend[i]->r <= x->reports)
            s_make_stable(s, x, x->pend[i]);
        else
            x->pend[j++] = x->pend[i];
    }
    x->npend = j;
}

void cs_dep_on_image(cs_sim *s, cs_pkt *p)
{
    cs_dvt *x = &s->d.v[p->img->vt];
    cs_image *im = p->img;
    p->img = NULL;
    cs_pkt_free(p);
    if (im->inc < x->inc || x->done) {
        cs_image_free(im);
        return;
    }
    /* The image's state may depend on every determinant its worker held:
     * on one of an abandoned branch, it is an orphan; the others are
     * learnt before it may be resumed from. */
    for (size_t i = 0; i < im->ndets; i++) {
        pc_cx_det d = cs_det_cx(&im->dets[i]);
        if (pc_detlog_abandoned(s->d.log, &d)) {
            cs_trace(s, "deployer drops an image of VT %d: it depends on an abandoned branch",
                     im->vt);
            cs_image_free(im);
            return;
        }
    }
    for (size_t i = 0; i < im->ndets && !s->failed; i++)
        s_on_det(s, im->dets[i]);
    x->pend = cs_grow(x->pend, &x->cappend, x->npend, sizeof *x->pend);
    x->pend[x->npend++] = im;
    s_check_pending(s, x);
}

static void s_on_out(cs_sim *s, cs_pkt *p)
{
    cs_dep *d = &s->d;
    cs_dvt *x = &d->v[p->vt];
    if (p->inc < x->inc || p->n >= CS_SEQ || p->r >= CS_SEQ)
        return;
    cs_dout *o = &x->out[p->n];
    if (o->have) {
        if (o->kind != p->okind || o->val != p->val || o->val2 != p->val2)
            cs_fail(s, "output %u of VT %d came again different", p->n, p->vt);
        return;
    }
    *o = (cs_dout){.have = true, .kind = p->okind, .val = p->val, .val2 = p->val2};
    x->rep[p->r] = 1;
    while (x->reports + 1 < CS_SEQ && x->rep[x->reports + 1])
        x->reports++;
    s_check_pending(s, x);
    if (p->okind == CS_OUT_DONE) {
        if (p->val >= (uint64_t)s_total_tokens(s) || d->done[p->val]) {
            cs_fail(s, "token %llu reported twice", (unsigned long long)p->val);
            return;
        }
        d->done[p->val] = 1;
        if (++d->ndone == s_total_tokens(s)) {
            cs_trace(s, "deployer: every token is in; STOP to every VT");
            for (int v = 1; v <= s->o.vts; v++) {
                d->v[v].stop_sent = true;
                s_send_stop(s, v);
            }
        }
    } else if (p->okind == CS_OUT_FINAL) {
        x->done = true;
        d->final_tokens += p->val2;
        if (++d->finals == s->o.vts)
            s->done = true;
    }
}

void cs_dep_on_pkt(cs_sim *s, cs_pkt *p)
{
    cs_dep *d = &s->d;
    int w = p->src;
    if (p->src_gen < d->gen[w]) {
        cs_pkt_free(p);
        return; /* from a life already over */
    }
    if (p->src_gen > d->gen[w]) {
        if (p->type != CS_P_HB) {
            cs_pkt_free(p);
            return;
        }
        if (d->alive[w])
            s_declare_dead(s, w); /* it died and came back before it was missed */
        d->gen[w] = p->src_gen;
        d->alive[w] = true;
        d->last_hb[w] = s->now;
        cs_trace(s, "deployer: worker %d joins (life %u)", w, p->src_gen);
        s_broadcast_place(s, CS_P_PLACE, 0);
        for (int v = 1; v <= s->o.vts; v++)
            if (d->v[v].pending)
                s_resume(s, v);
        cs_pkt_free(p);
        return;
    }
    if (!d->alive[w]) {
        if (p->type == CS_P_HB) {
            cs_pkt *f = cs_pkt_new(CS_P_FENCED);
            cs_send(s, CS_EP_D, w, f);
        }
        cs_pkt_free(p);
        return;
    }
    switch (p->type) {
    case CS_P_HB:
        d->last_hb[w] = s->now;
        break;
    case CS_P_DETS:
        for (size_t i = 0; i < p->ndets && !s->failed; i++)
            s_on_det(s, p->dets[i]);
        break;
    case CS_P_OUT:
        s_on_out(s, p);
        break;
    case CS_P_FLUSHED:
        if (d->barrier && pc_detlog_barrier_answer(d->log, p->bid, w))
            s_barrier_done(s);
        break;
    default:
        break;
    }
    cs_pkt_free(p);
}

void cs_dep_tick(cs_sim *s)
{
    cs_dep *d = &s->d;
    if (d->barrier && d->bid == 0) {
        s_barrier_done(s); /* the opening: every VT placed from its start */
        return;
    }
    for (int w = 0; w < s->o.workers; w++)
        if (d->alive[w] && s->now > d->last_hb[w] + CS_DETECT)
            s_declare_dead(s, w);
    bool changed = false;
    for (int v = 1; v <= s->o.vts; v++) {
        uint32_t wm = (uint32_t)pc_detlog_wm(d->log, (uint64_t)v);
        changed |= wm != d->v[v].wm;
        d->v[v].wm = wm;
    }
    if (!changed)
        return;
    for (int w = 0; w < s->o.workers; w++) {
        if (!d->alive[w])
            continue;
        cs_pkt *p = cs_pkt_new(CS_P_WM);
        for (int v = 1; v <= s->o.vts; v++)
            p->wm[v] = d->v[v].wm;
        cs_send(s, CS_EP_D, w, p);
    }
}

void cs_dep_check_end(cs_sim *s)
{
    uint64_t want = (uint64_t)s_total_tokens(s) * (uint64_t)(s->o.hops + 1);
    if (s->d.final_tokens != want)
        cs_fail(s, "the VTs consumed %llu token messages where %llu were sent",
                (unsigned long long)s->d.final_tokens, (unsigned long long)want);
}

void cs_dep_explain_hang(cs_sim *s)
{
    char buf[200];
    int n = 0;
    for (int v = 1; v <= s->o.vts && n < (int)sizeof buf - 40; v++) {
        cs_dvt *x = &s->d.v[v];
        if (!x->done)
            n += snprintf(buf + n, sizeof buf - (size_t)n, " VT %d.%u on %d%s;", v, x->inc, x->loc,
                          x->pending ? " (pending)" : "");
    }
    for (int w = 0; w < s->o.workers; w++)
        if (s->w[w].up)
            cs_worker_explain(s, w);
    cs_fail(s, "hang: %d of %d tokens, %d of %d VTs ended:%s", s->d.ndone, s_total_tokens(s),
            s->d.finals, s->o.vts, buf);
}
