/* causalsim.c - the world of the causal-logging model (causalsim.h): its
 * clock, random source, event queue and network (FIFO per link, as over
 * TCP; a crashed worker's packets in flight lose a suffix), the faults,
 * the image store, and the VTs' program: tokens passed from VT to VT for a
 * fixed number of hops, each token reported once when it runs out, then a
 * STOP from the deployer and a final report. The protocol itself, what a
 * worker and the deployer decide, is in causalsim_proto.c; the two talk
 * only through packets.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "causalsim_int.h"

/* ------------------------------------------------------------------ */
/* Random source, trace, failure                                      */
/* ------------------------------------------------------------------ */

uint64_t cs_rand(cs_sim *s)
{
    uint64_t x = s->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s->rng = x;
    return x * 0x2545F4914F6CDD1DULL;
}

uint64_t cs_between(cs_sim *s, uint64_t lo, uint64_t hi) { return lo + cs_rand(s) % (hi - lo + 1); }

uint64_t cs_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ULL;
    return h ^ (h >> 29);
}

void cs_trace(cs_sim *s, const char *fmt, ...)
{
    if (!s->o.trace)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%9.3f ms  ", (double)s->now / 1000.0);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void cs_fail(cs_sim *s, const char *fmt, ...)
{
    if (s->failed)
        return;
    s->failed = true;
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(s->r->why, sizeof s->r->why, "at %.3f ms: ", (double)s->now / 1000.0);
    vsnprintf(s->r->why + n, sizeof s->r->why - (size_t)n, fmt, ap);
    va_end(ap);
    cs_trace(s, "FAIL %s", s->r->why);
}

void *cs_grow(void *p, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return p;
    size_t c = *cap ? *cap * 2 : 16;
    while (c <= n)
        c *= 2;
    void *q = realloc(p, c * size);
    if (!q)
        abort();
    memset((char *)q + *cap * size, 0, (c - *cap) * size);
    *cap = c;
    return q;
}

/* ------------------------------------------------------------------ */
/* Events                                                             */
/* ------------------------------------------------------------------ */

static bool s_before(const void *a, const void *b)
{
    const cs_ev *x = a, *y = b;
    return x->at != y->at ? x->at < y->at : x->seq < y->seq;
}

void cs_push(cs_sim *s, cs_ev e)
{
    e.seq = ++s->seq;
    simq_push(&s->q, &e);
}

/* ------------------------------------------------------------------ */
/* Packets and the network                                            */
/* ------------------------------------------------------------------ */

cs_pkt *cs_pkt_new(int type)
{
    cs_pkt *p = calloc(1, sizeof *p);
    if (!p)
        abort();
    p->type = type;
    return p;
}

void cs_pkt_free(cs_pkt *p)
{
    if (!p)
        return;
    free(p->dets);
    cs_image_free(p->img);
    free(p);
}

void cs_send(cs_sim *s, int src, int dst, cs_pkt *p)
{
    p->src = src;
    p->dst = dst;
    p->src_gen = src < CS_W ? s->w[src].gen : 0;
    /* The deployer addresses the life it knows of a worker (a new life at
     * the same endpoint drops what was meant for the old one, as the
     * peer controller's instance numbers do); between workers, a message
     * goes to whatever life listens when it is sent. */
    p->sent_gen = dst >= CS_W ? 0 : src == CS_EP_D ? s->d.gen[dst] : s->w[dst].gen;
    uint64_t at = s->now + cs_between(s, 50, 1500);
    if (p->type == CS_P_HB) {
        /* Heartbeats go their own way (the membership's), and are not
         * held up behind the data on a congested link. */
        cs_push(s, (cs_ev){.at = at, .kind = CS_E_PKT, .p = p});
        return;
    }
    if (src < CS_W && dst == CS_EP_D && s->now < s->slow_until[src])
        at += cs_between(s, 20000, 100000); /* a congested link: late, still in order */
    if (at < s->link_last[src][dst])
        at = s->link_last[src][dst];
    s->link_last[src][dst] = at;
    cs_push(s, (cs_ev){.at = at, .kind = CS_E_PKT, .p = p});
}

/* A worker's packets in flight when it dies: on each link, from a random
 * one on, the rest are lost (what a dead host's kernel had not sent). */
static void s_lose_suffix(cs_sim *s, int w)
{
    for (int dst = 0; dst < CS_EPS; dst++) {
        if (cs_rand(s) % 2)
            continue; /* this link delivers all it had */
        uint64_t from_at = s->now + cs_between(s, 0, 1500);
        for (size_t i = 0; i < s->q.n; i++) {
            cs_ev *e = simq_item(&s->q, i);
            if (e->kind == CS_E_PKT && e->p->src == w && e->p->dst == dst &&
                e->p->src_gen + 1 == s->w[w].gen && e->at >= from_at)
                e->p->lost = true;
        }
    }
}

/* ------------------------------------------------------------------ */
/* Images                                                             */
/* ------------------------------------------------------------------ */

cs_image *cs_image_copy(const cs_image *a)
{
    cs_image *b = malloc(sizeof *b);
    if (!b)
        abort();
    *b = *a;
    b->sl = NULL;
    b->dets = NULL;
    if (a->nsl) {
        b->sl = malloc(a->nsl * sizeof *b->sl);
        if (!b->sl)
            abort();
        memcpy(b->sl, a->sl, a->nsl * sizeof *b->sl);
    }
    if (a->ndets) {
        b->dets = malloc(a->ndets * sizeof *b->dets);
        if (!b->dets)
            abort();
        memcpy(b->dets, a->dets, a->ndets * sizeof *b->dets);
    }
    return b;
}

void cs_image_free(cs_image *im)
{
    if (!im)
        return;
    free(im->sl);
    free(im->dets);
    free(im);
}

/* ------------------------------------------------------------------ */
/* The VTs' program                                                   */
/* ------------------------------------------------------------------ */

/* What VT `vt` does when it starts: sends its tokens. */
void cs_prog_start(cs_sim *s, cs_worker *w, int vt)
{
    cs_vt *x = &w->vt[vt];
    for (int t = 0; t < s->o.tokens; t++) {
        uint64_t id = (uint64_t)(vt - 1) * (uint64_t)s->o.tokens + (uint64_t)t;
        x->h = cs_mix(x->h, id);
        cs_out_msg(s, w, vt, cs_pick(s, x->h, vt), id << 8 | (uint64_t)s->o.hops);
    }
}

/* What VT `vt` does with its next input: a token goes on or is reported,
 * a STOP ends the VT with its final report. */
void cs_prog_input(cs_sim *s, cs_worker *w, int vt, int from, uint64_t pay)
{
    cs_vt *x = &w->vt[vt];
    if (from == 0) {
        cs_out_report(s, w, vt, CS_OUT_FINAL, x->h, x->tokens);
        x->ended = true;
        return;
    }
    x->tokens++;
    x->h = cs_mix(cs_mix(x->h, (uint64_t)from), pay);
    uint64_t hops = pay & 0xff;
    if (hops > 0)
        cs_out_msg(s, w, vt, cs_pick(s, x->h, vt), (pay & ~(uint64_t)0xff) | (hops - 1));
    else
        cs_out_report(s, w, vt, CS_OUT_DONE, pay >> 8, 0);
}

int cs_pick(const cs_sim *s, uint64_t h, int self)
{
    int to = 1 + (int)(h % (uint64_t)(s->o.vts - 1));
    return to >= self ? to + 1 : to;
}

/* ------------------------------------------------------------------ */
/* Faults                                                             */
/* ------------------------------------------------------------------ */

static void s_crash(cs_sim *s, int w, uint64_t back_after)
{
    cs_worker *k = &s->w[w];
    if (!k->up)
        return;
    if (!back_after && s->gone + 1 >= s->o.workers)
        back_after = cs_between(s, 20000, 150000); /* one worker never goes for good */
    cs_trace(s, "fault: worker %d crashes%s", w, back_after ? "" : " for good");
    cs_worker_reset(s, w);
    k->up = false;
    k->paused = false;
    s_lose_suffix(s, w);
    if (back_after)
        cs_push(s, (cs_ev){.at = s->now + back_after, .kind = CS_E_UP, .node = w});
    else
        s->gone++;
}

static void s_pause(cs_sim *s, int w, uint64_t len)
{
    cs_worker *k = &s->w[w];
    if (!k->up || k->paused)
        return;
    cs_trace(s, "fault: worker %d stops for %.1f ms", w, (double)len / 1000.0);
    k->paused = true;
    k->pause_until = s->now + len;
}

static int s_any_up(cs_sim *s)
{
    int n = 0;
    for (int i = 0; i < s->o.workers; i++)
        n += s->w[i].up;
    return n;
}

/* Back after this long, or 0 for good while some other worker stays. */
static uint64_t s_back_after(cs_sim *s)
{
    if (s->gone + 2 < s->o.workers && cs_rand(s) % 3 == 0)
        return 0;
    return cs_between(s, 20000, 150000);
}

static void s_fault(cs_sim *s, int kind)
{
    int a = (int)(cs_rand(s) % (uint64_t)s->o.workers);
    int b = (a + 1 + (int)(cs_rand(s) % (uint64_t)(s->o.workers - 1))) % s->o.workers;
    if (s_any_up(s) < 2 && kind != CS_F_PAUSE && kind != CS_F_STALL)
        kind = CS_F_PAUSE;
    switch (kind) {
    case CS_F_CRASH:
        s_crash(s, a, s->gone + 2 < s->o.workers ? 0 : cs_between(s, 20000, 150000));
        break;
    case CS_F_RESTART:
        s_crash(s, a, cs_between(s, 5000, 100000));
        break;
    case CS_F_PAUSE:
        s_pause(s, a, cs_between(s, 2000, 25000));
        break;
    case CS_F_STALL:
        s_pause(s, a, cs_between(s, 60000, 200000));
        break;
    case CS_F_STALL_CRASH: {
        uint64_t len = cs_between(s, 60000, 200000);
        s_pause(s, a, len);
        cs_push(s, (cs_ev){.at = s->now + cs_between(s, len / 2, len + 30000),
                           .kind = CS_E_CRASH,
                           .node = cs_rand(s) % 2 ? a : b,
                           .arg = s_back_after(s)});
        break;
    }
    case CS_F_TWO:
        s_crash(s, a, s_back_after(s));
        cs_push(s, (cs_ev){.at = s->now + cs_between(s, 0, 3000),
                           .kind = CS_E_CRASH,
                           .node = b,
                           .arg = s_back_after(s)});
        break;
    case CS_F_SLOW:
        /* What a worker learns reaches the deployer late; then another
         * worker dies, whose determinants the slow one may hold. */
        cs_trace(s, "fault: the link of worker %d to the deployer slows down", a);
        s->slow_until[a] = s->now + cs_between(s, 30000, 80000);
        cs_push(s, (cs_ev){.at = s->now + cs_between(s, 2000, 20000),
                           .kind = CS_E_CRASH,
                           .node = b,
                           .arg = s_back_after(s)});
        break;
    case CS_F_DURING:
        s_crash(s, a, s_back_after(s));
        cs_push(s, (cs_ev){.at = s->now + CS_DETECT + cs_between(s, 0, 20000),
                           .kind = CS_E_CRASH,
                           .node = b,
                           .arg = s_back_after(s)});
        break;
    default:
        break;
    }
}

/* ------------------------------------------------------------------ */
/* The run                                                            */
/* ------------------------------------------------------------------ */

static void s_dispatch(cs_sim *s, cs_ev e)
{
    int dst = e.kind == CS_E_PKT ? e.p->dst : e.node;
    cs_worker *k = dst >= 0 && dst < CS_W ? &s->w[dst] : NULL;
    /* A stopped worker's events wait for it, in order. */
    if (k && k->up && k->paused && e.kind != CS_E_CRASH && e.kind != CS_E_UP) {
        if (s->now < k->pause_until) {
            e.at = k->pause_until;
            cs_push(s, e);
            return;
        }
        k->paused = false;
        cs_trace(s, "worker %d goes on", (int)(k - s->w));
    }
    switch (e.kind) {
    case CS_E_PKT:
        if (e.p->lost) {
            cs_pkt_free(e.p);
            return;
        }
        if (dst == CS_EP_D)
            cs_dep_on_pkt(s, e.p);
        else if (dst == CS_EP_H)
            cs_dep_on_image(s, e.p);
        else if (!k->up || e.p->sent_gen != k->gen)
            cs_pkt_free(e.p); /* to a worker's earlier life: connection gone */
        else
            cs_worker_on_pkt(s, dst, e.p);
        return;
    case CS_E_STEP:
        if (k->up && e.gen == k->gen)
            cs_worker_step(s, e.node, e.vt);
        return;
    case CS_E_HB:
        cs_push(s, (cs_ev){.at = s->now + CS_HB, .kind = CS_E_HB, .node = e.node});
        if (k->up)
            cs_worker_heartbeat(s, e.node);
        return;
    case CS_E_TICK:
        cs_push(s, (cs_ev){.at = s->now + CS_TICK, .kind = CS_E_TICK, .node = CS_EP_D});
        cs_dep_tick(s);
        return;
    case CS_E_FAULT:
        s_fault(s, (int)e.arg);
        return;
    case CS_E_CRASH:
        s_crash(s, e.node, e.arg);
        return;
    case CS_E_UP:
        if (!k->up) {
            k->up = true;
            cs_trace(s, "worker %d is back (life %u)", e.node, k->gen);
        }
        return;
    default:
        return;
    }
}

static void s_check_options(cs_opts *o)
{
    if (o->workers < 2)
        o->workers = 2;
    if (o->workers > CS_W)
        o->workers = CS_W;
    if (o->vts < 2)
        o->vts = 2;
    if (o->vts > CS_V)
        o->vts = CS_V;
    if (o->tokens < 1)
        o->tokens = 1;
    if (o->hops < 0)
        o->hops = 0;
    if (o->hops > 200)
        o->hops = 200;
    if (o->ckpt < 1)
        o->ckpt = 5;
}

bool cs_run(const cs_opts *opts, cs_report *r)
{
    cs_sim *s = calloc(1, sizeof *s);
    if (!s)
        abort();
    memset(r, 0, sizeof *r);
    s->o = *opts;
    s_check_options(&s->o);
    s->r = r;
    simq_init(&s->q, sizeof(cs_ev), s_before);
    s->rng = cs_mix(opts->seed, 0x5EED) | 1;
    for (int i = 0; i < s->o.workers; i++) {
        s->w[i].up = true;
        cs_worker_reset(s, i); /* life 1 */
        cs_push(s, (cs_ev){.at = cs_between(s, 0, CS_HB), .kind = CS_E_HB, .node = i});
    }
    cs_dep_open(s);
    cs_push(s, (cs_ev){.at = CS_TICK, .kind = CS_E_TICK, .node = CS_EP_D});
    /* The faults: each kind drawn from those allowed, at a random time
     * while tokens travel. */
    int kinds[8] = {0}, nk = 0;
    for (int b = 0; b < 8; b++)
        if (s->o.kinds & (1u << b))
            kinds[nk++] = 1 << b;
    uint64_t span = (uint64_t)s->o.hops * 1500 + 20000;
    for (int f = 0; nk && f < s->o.faults; f++)
        cs_push(s, (cs_ev){.at = cs_between(s, 2000, span),
                           .kind = CS_E_FAULT,
                           .node = -1,
                           .arg = (uint64_t)kinds[cs_rand(s) % (uint64_t)nk]});
    uint64_t events = 0;
    while (!s->failed && !s->done && s->q.n) {
        cs_ev e;
        simq_pop(&s->q, &e);
        s->now = e.at;
        if (s->now > CS_LIMIT || ++events > 20000000) {
            cs_dep_explain_hang(s);
            if (e.kind == CS_E_PKT)
                cs_pkt_free(e.p);
            break;
        }
        s_dispatch(s, e);
    }
    if (s->done && !s->failed)
        cs_dep_check_end(s);
    r->sim_ms = s->now / 1000;
    bool ok = !s->failed && s->done;
    for (size_t i = 0; i < s->q.n; i++) {
        cs_ev *e = simq_item(&s->q, i);
        if (e->kind == CS_E_PKT)
            cs_pkt_free(e->p);
    }
    simq_free(&s->q);
    for (int i = 0; i < CS_W; i++)
        cs_worker_free(s, i);
    cs_dep_free(s);
    free(s);
    return ok;
}
