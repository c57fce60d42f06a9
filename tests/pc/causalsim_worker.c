/* causalsim_worker.c - a worker of the causal-logging model: its VTs'
 * programs, its images, and the peer controller's own engine
 * (peercontroller/causal.c), which decides the protocol: it orders the
 * inputs, sends each order to the deployer, sends messages worker to
 * worker with the determinants not yet stable, keeps the sender logs,
 * drops what fenced incarnations send and installs VTs to resume. This
 * file only converts between the model's packets and the engine's calls.
 */
#include <stdlib.h>
#include <string.h>

#include "causalsim_int.h"

/* ------------------------------------------------------------------ */
/* The engine's actions                                               */
/* ------------------------------------------------------------------ */

static uint64_t s_pay(const pc_buf *b)
{
    uint64_t v = 0;
    if (pc_buf_len(b) == sizeof v)
        memcpy(&v, pc_buf_data(b), sizeof v);
    return v;
}

static pc_buf *s_buf(uint64_t pay)
{
    pc_buf *b = pc_buf_new(&pay, sizeof pay);
    if (!b)
        abort();
    return b;
}

static void s_io_send(void *ud, int peer, const pc_cx_msg *m, const pc_cx_det *d, size_t n)
{
    cs_worker *k = ud;
    cs_sim *s = k->sim;
    int w = (int)(k - s->w);
    cs_pkt *p = cs_pkt_new(CS_P_DIRECT);
    p->m = (cs_msg){.from = (uint8_t)m->from,
                    .to = (uint8_t)m->to,
                    .from_inc = (uint16_t)m->from_epoch,
                    .to_inc = (uint16_t)m->to_epoch,
                    .seq = (uint32_t)m->seq,
                    .pay = s_pay(m->data)};
    if (n && s->o.broken != CS_BREAK_PIGGYBACK) {
        p->dets = malloc(n * sizeof *p->dets);
        if (!p->dets)
            abort();
        for (size_t i = 0; i < n; i++)
            p->dets[i] = cs_det_of(&d[i]);
        p->ndets = p->capdets = n;
        s->r->piggyback += n;
    }
    s->r->direct++;
    cs_trace(s, "worker %d sends %d.%u to VT %d.%u on worker %d (%zu determinants): token %llu/%u",
             w, p->m.from, p->m.seq, p->m.to, p->m.to_inc, peer, p->ndets,
             (unsigned long long)(p->m.pay >> 8), (unsigned)(p->m.pay & 0xff));
    cs_send(s, w, peer, p);
}

static void s_io_dets(void *ud, const pc_cx_det *d, size_t n)
{
    cs_worker *k = ud;
    cs_pkt *p = cs_pkt_new(CS_P_DETS);
    p->dets = malloc(n * sizeof *p->dets);
    if (!p->dets)
        abort();
    for (size_t i = 0; i < n; i++)
        p->dets[i] = cs_det_of(&d[i]);
    p->ndets = p->capdets = n;
    cs_send(k->sim, (int)(k - k->sim->w), CS_EP_D, p);
}

static void s_kick(cs_sim *s, int w, int vt);

static void s_io_deliver(void *ud, uint64_t pos, const pc_cx_msg *m)
{
    cs_worker *k = ud;
    cs_vt *x = &k->vt[m->to];
    (void)pos;
    x->inbox = cs_grow(x->inbox, &x->capinbox, x->ninbox, sizeof *x->inbox);
    x->inbox[x->ninbox++] =
        (cs_in){.from = (uint8_t)m->from, .seq = (uint32_t)m->seq, .pay = s_pay(m->data)};
    s_kick(k->sim, (int)(k - k->sim->w), (int)m->to);
}

/* ------------------------------------------------------------------ */
/* Lives                                                              */
/* ------------------------------------------------------------------ */

static void s_vt_clear(cs_vt *x)
{
    free(x->inbox);
    memset(x, 0, sizeof *x);
}

/* What the engine of a life that ends counted goes to the report. */
static void s_count(cs_sim *s, cs_worker *k)
{
    if (!k->cx)
        return;
    pc_cx_stats st = pc_cx_stats_of(k->cx);
    s->r->fenced += st.fenced;
    s->r->replayed += st.filled;
}

void cs_worker_free(cs_sim *s, int w)
{
    cs_worker *k = &s->w[w];
    for (int v = 0; v <= CS_V; v++)
        s_vt_clear(&k->vt[v]);
    s_count(s, k);
    pc_cx_destroy(&k->cx);
}

void cs_worker_reset(cs_sim *s, int w)
{
    cs_worker *k = &s->w[w];
    cs_worker_free(s, w);
    uint32_t gen = k->gen;
    bool up = k->up;
    memset(k, 0, sizeof *k);
    k->sim = s;
    k->gen = gen + 1;
    k->up = up;
    pc_cx_io io = {.ud = k, .send = s_io_send, .dets = s_io_dets, .deliver = s_io_deliver};
    k->cx = pc_cx_new(w, &io);
    if (!k->cx)
        abort();
}

/* ------------------------------------------------------------------ */
/* The VTs' steps                                                     */
/* ------------------------------------------------------------------ */

static bool s_can_step(const cs_vt *x)
{
    return x->here && !x->ended && (!x->started || x->ninbox);
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

void cs_out_msg(cs_sim *s, cs_worker *k, int vt, int to, uint64_t pay)
{
    k->vt[vt].n++;
    if (pc_cx_send(k->cx, (uint64_t)vt, (uint64_t)to, s_buf(pay)))
        cs_fail(s, "VT %d could not send to VT %d", vt, to);
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

static void s_capture(cs_sim *s, int w, int vt)
{
    cs_worker *k = &s->w[w];
    cs_vt *x = &k->vt[vt];
    pc_cx_image ci;
    if (pc_cx_image_of(k->cx, (uint64_t)vt, &ci)) {
        cs_fail(s, "no image of VT %d", vt);
        return;
    }
    cs_image *im = calloc(1, sizeof *im);
    if (!im)
        abort();
    *im = (cs_image){.vt = (uint8_t)vt,
                     .started = x->started,
                     .inc = x->inc,
                     .p = x->p,
                     .n = x->n,
                     .r = x->r,
                     .tokens = x->tokens,
                     .h = x->h};
    if (ci.consumed != x->p)
        cs_fail(s, "the engine has VT %d at input %llu, its program at %u", vt,
                (unsigned long long)ci.consumed, x->p);
    for (size_t i = 0; i < ci.ncons; i++)
        im->cons[ci.cons[i].vt] = (uint32_t)ci.cons[i].seq;
    for (size_t i = 0; i < ci.nchan; i++)
        im->chan[ci.chan[i].vt] = (uint32_t)ci.chan[i].seq;
    if (s->o.broken != CS_BREAK_SENDER_LOG && ci.nlog) {
        im->sl = malloc(ci.nlog * sizeof *im->sl);
        if (!im->sl)
            abort();
        for (size_t i = 0; i < ci.nlog; i++)
            im->sl[i] = (cs_msg){.from = (uint8_t)ci.log[i].from,
                                 .to = (uint8_t)ci.log[i].to,
                                 .seq = (uint32_t)ci.log[i].seq,
                                 .pay = s_pay(ci.log[i].data)};
        im->nsl = ci.nlog;
    }
    if (s->o.broken != CS_BREAK_IMAGE_DETS && ci.ndets) {
        im->dets = malloc(ci.ndets * sizeof *im->dets);
        if (!im->dets)
            abort();
        for (size_t i = 0; i < ci.ndets; i++)
            im->dets[i] = cs_det_of(&ci.dets[i]);
        im->ndets = ci.ndets;
    }
    pc_cx_image_clear(&ci);
    s->r->images++;
    if (im->nsl > s->r->max_log)
        s->r->max_log = im->nsl;
    cs_pkt *p = cs_pkt_new(CS_P_IMG);
    p->img = im;
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
        cs_in in = x->inbox[0];
        memmove(x->inbox, x->inbox + 1, --x->ninbox * sizeof *x->inbox);
        pc_cx_consumed(k->cx, (uint64_t)vt, ++x->p);
        cs_prog_input(s, k, vt, in.from, in.pay);
        if (++x->since >= (uint32_t)s->o.ckpt) {
            x->since = 0;
            s_capture(s, w, vt);
        }
    }
    size_t held = pc_cx_stats_of(k->cx).unstable;
    if (held > s->r->max_held)
        s->r->max_held = held;
    s_kick(s, w, vt);
}

/* ------------------------------------------------------------------ */
/* Packets                                                            */
/* ------------------------------------------------------------------ */

static void s_on_direct(cs_sim *s, int w, cs_pkt *p)
{
    cs_worker *k = &s->w[w];
    cs_msg m = p->m;
    cs_trace(s, "worker %d gets %d.%u for VT %d.%u", w, m.from, m.seq, m.to, m.to_inc);
    if (s->o.broken == CS_BREAK_FENCE && m.from && m.from_inc < k->kinc[m.from])
        m.from_inc = k->kinc[m.from]; /* taken as if it were not fenced */
    pc_cx_det *d = p->ndets ? malloc(p->ndets * sizeof *d) : NULL;
    if (p->ndets && !d)
        abort();
    for (size_t i = 0; i < p->ndets; i++)
        d[i] = cs_det_cx(&p->dets[i]);
    pc_cx_msg cm = {.from = m.from,
                    .to = m.to,
                    .seq = m.seq,
                    .from_epoch = m.from_inc,
                    .to_epoch = m.to_inc,
                    .data = s_buf(m.pay)};
    if (pc_cx_on_msg(k->cx, p->src < CS_W ? p->src : -1, &cm, d, p->ndets))
        cs_fail(s, "worker %d could not take a message", w);
    free(d);
}

/* Placements and fences from the deployer: to the engine, and a VT here
 * whose incarnation was fenced stops. */
static void s_on_place(cs_sim *s, int w, const cs_pkt *p)
{
    cs_worker *k = &s->w[w];
    for (int v = 1; v <= s->o.vts; v++) {
        if (p->incs[v] > k->kinc[v])
            k->kinc[v] = p->incs[v];
        cs_vt *x = &k->vt[v];
        if (x->here && x->inc < p->incs[v])
            s_vt_clear(x);
        if (pc_cx_place(k->cx, (uint64_t)v, p->incs[v], p->locs[v]))
            cs_fail(s, "worker %d could not learn a placement", w);
    }
}

static void s_install(cs_sim *s, int w, cs_pkt *p)
{
    cs_worker *k = &s->w[w];
    cs_image *im = p->img;
    int v = im->vt;
    if (p->inc < k->kinc[v])
        return;
    pc_cx_image ci = {.vt = (uint64_t)v, .epoch = p->inc, .consumed = im->p};
    pc_cx_mark cons[CS_V + 1], chan[CS_V + 1];
    for (int i = 0; i <= CS_V; i++) {
        cons[i] = (pc_cx_mark){.vt = (uint64_t)i, .seq = im->cons[i]};
        chan[i] = (pc_cx_mark){.vt = (uint64_t)i, .seq = im->chan[i]};
    }
    ci.cons = cons;
    ci.chan = chan;
    ci.ncons = ci.nchan = CS_V + 1;
    ci.log = im->nsl ? calloc(im->nsl, sizeof *ci.log) : NULL;
    pc_cx_det *fixed = p->ndets ? malloc(p->ndets * sizeof *fixed) : NULL;
    if ((im->nsl && !ci.log) || (p->ndets && !fixed))
        abort();
    for (size_t i = 0; i < im->nsl; i++)
        ci.log[i] = (pc_cx_msg){.from = im->sl[i].from,
                                .to = im->sl[i].to,
                                .seq = im->sl[i].seq,
                                .data = s_buf(im->sl[i].pay)};
    ci.nlog = im->nsl;
    for (size_t i = 0; i < p->ndets; i++)
        fixed[i] = cs_det_cx(&p->dets[i]);
    cs_vt *x = &k->vt[v];
    s_vt_clear(x);
    *x = (cs_vt){.here = true,
                 .inc = p->inc,
                 .started = im->started,
                 .h = im->h,
                 .p = im->p,
                 .n = im->n,
                 .r = im->r,
                 .tokens = im->tokens};
    if (p->inc > k->kinc[v])
        k->kinc[v] = p->inc;
    cs_trace(s, "worker %d resumes VT %d.%u at input %u, %zu positions fixed", w, v, p->inc, im->p,
             p->ndets);
    int rc = pc_cx_install(k->cx, &ci, fixed, p->ndets);
    if (rc)
        cs_fail(s, "worker %d could not install VT %d (%d)", w, v, rc);
    for (size_t i = 0; i < ci.nlog; i++)
        pc_buf_drop(&ci.log[i].data); /* any the engine did not take */
    free(ci.log);
    free(fixed);
    s_kick(s, w, v);
}

void cs_worker_on_pkt(cs_sim *s, int w, cs_pkt *p)
{
    cs_worker *k = &s->w[w];
    switch (p->type) {
    case CS_P_DIRECT:
        s_on_direct(s, w, p);
        break;
    case CS_P_FENCED:
        cs_trace(s, "worker %d was taken for dead: starts again empty", w);
        cs_worker_reset(s, w);
        break;
    case CS_P_FLUSH: {
        s_on_place(s, w, p);
        cs_pkt *a = cs_pkt_new(CS_P_FLUSHED);
        a->bid = p->bid;
        cs_send(s, w, CS_EP_D, a);
        break;
    }
    case CS_P_PLACE:
        s_on_place(s, w, p);
        break;
    case CS_P_RESUME:
        s_install(s, w, p);
        break;
    case CS_P_WM:
        for (int v = 1; v <= s->o.vts; v++)
            pc_cx_stable(k->cx, (uint64_t)v, p->wm[v]);
        break;
    case CS_P_GC: {
        pc_cx_mark marks[CS_V + 1];
        for (int i = 0; i <= CS_V; i++)
            marks[i] = (pc_cx_mark){.vt = (uint64_t)i, .seq = p->gc[i]};
        pc_cx_trim(k->cx, p->vt, marks, CS_V + 1);
        break;
    }
    default:
        break;
    }
    cs_pkt_free(p);
}

void cs_worker_heartbeat(cs_sim *s, int w) { cs_send(s, w, CS_EP_D, cs_pkt_new(CS_P_HB)); }

void cs_worker_explain(cs_sim *s, int w)
{
    cs_worker *k = &s->w[w];
    for (int v = 1; v <= s->o.vts; v++) {
        const cs_vt *x = &k->vt[v];
        if (x->here)
            cs_trace(s, "worker %d VT %d.%u: consumed %u, %zu delivered waiting, stepping %d", w, v,
                     x->inc, x->p, x->ninbox, x->stepping);
    }
    pc_cx_stats st = pc_cx_stats_of(k->cx);
    cs_trace(s, "worker %d: %zu determinants unstable, %zu messages early", w, st.unstable,
             st.early);
}
