/* vcsim.c - the simulator's world (vcsim.h): its clock, its random
 * source, its network (an event queue of deliveries, FIFO between two
 * peers as over TCP, with loss, duplication, reordering and partitions as
 * faults), its peers (the real membership, deployer, worker and holder
 * behind a simulated pc_env, whose executors are model ones:
 * vcsim_exec.c), the client that opens the VC and checks what comes back,
 * the faults, and the invariants.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "causal.h"
#include "lev_errors.h"
#include "log.h"
#include "simq.h"
#include "vcsim_int.h"
#include "vec.h"

#define VS_NODES_MAX 18 /* the mesh, a peer of another mesh, and the client */
#define VS_CLIENT_EP "client:vcsim"
#define VS_OPEN_AT_MS 2500 /* the client opens its VC once the mesh has formed */
#define VS_REJOIN_MS 500
#define VS_PING_MS 1000
#define VS_FENCES_MAX 64 /* fences of one barrier the world follows */

static const char *const s_kind_names[VS_F_KINDS] = {"crash", "restart", "pause",     "takeover",
                                                     "loss",  "dup",     "partition", "reorder"};

const char *vs_fault_name(int kind)
{
    return kind >= 0 && kind < VS_F_KINDS ? s_kind_names[kind] : "?";
}

typedef struct vs_ev {
    uint64_t at, seq;
    int to;       /* node index, or -1: the client */
    uint32_t gen; /* of the node when it was sent */
    char from[PC_ENDPOINT_MAX];
    pc_hdr h;
    uint8_t *body;
    size_t len;
    pc_buf *bulk;
    vs_mexec *x;       /* a record of this executor to its worker (NULL: a message) */
    bool probe;        /* the answer to a connection to `from` (a port probe, not a message) */
    uint64_t instance; /* of the member probed */
} vs_ev;

typedef struct vs_fault {
    uint64_t at, until;
    int kind, node;
    bool started, ended;
    bool host_gone; /* a crash of the whole host: its port does not refuse */
} vs_fault;

typedef struct vs_client {
    vs_node node; /* its endpoint, as a sender */
    int phase;    /* 0: waits for the mesh, 1: opening, 2: running, 3: reading, 4: done */
    bool pmax;    /* reading "pmax" (vs_opts.puts), after the counter */
    uint64_t vc, seq, next_ping;
    int nvts, started, results;
    uint64_t *ids;
    bool *ended;
    uint32_t *reports;
} vs_client;

struct vs_world {
    vs_opts o;
    vs_report *r;
    uint64_t now, rng[4], ev_seq;
    simq q; /* of vs_ev * */
    vs_node nodes[VS_NODES_MAX];
    int nnodes, foreign_seed;
    uint64_t pair_last[VS_NODES_MAX + 1][VS_NODES_MAX + 1];
    vs_fault *faults;
    int nfaults;
    vs_client c;
    /* per VT (index id - 2): the channel entry the deployer sent at each
     * input position (index position - 1), to check determinants by */
    struct {
        pc_cx_mark *at;
        size_t n, cap;
    } * inputs;
    size_t ninputs;
    /* per VT (index id): the answer + 1 of each read, by output number
     * (0: not answered yet) */
    struct {
        uint64_t *v;
        size_t n;
    } * reads;
    size_t nreads;
    /* the newest recovery barrier (the run has one VC): its number, its
     * fences, the nodes sent its W_FLUSH and those that answered */
    struct {
        uint32_t id;
        uint64_t sent, answered;
        pc_cx_mark fence[VS_FENCES_MAX]; /* (vt, epoch) */
        int nfence;
    } bar;
};

/* ===================================================================
 * Clock, random source, reports
 * =================================================================== */

uint64_t vs_now(const vs_world *w) { return w->now; }
const vs_opts *vs_world_opts(const vs_world *w) { return &w->o; }
vs_report *vs_world_report(vs_world *w) { return w->r; }

static uint64_t s_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t vs_rand(vs_world *w)
{
    uint64_t *s = w->rng;
    uint64_t out = s_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = s_rotl(s[3], 45);
    return out;
}

static uint64_t s_between(vs_world *w, uint64_t lo, uint64_t hi)
{
    return hi > lo ? lo + vs_rand(w) % (hi - lo + 1) : lo;
}

void vs_violation(vs_world *w, const char *fmt, ...)
{
    if (!w->r->ok)
        return;
    w->r->ok = false;
    int n = snprintf(w->r->why, sizeof w->r->why, "at %llu ms: ", (unsigned long long)w->now);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->r->why + n, sizeof w->r->why - (size_t)n, fmt, ap);
    va_end(ap);
    if (w->o.trace)
        fprintf(stderr, "[%8llu] VIOLATION %s\n", (unsigned long long)w->now, w->r->why);
}

void vs_read_seen(vs_world *w, uint64_t vt, uint64_t seq, uint64_t value)
{
    w->r->reads++;
    if (vt >= w->nreads) {
        void *more = realloc(w->reads, (vt + 1) * sizeof *w->reads);
        if (!more)
            abort();
        w->reads = more;
        memset(w->reads + w->nreads, 0, (vt + 1 - w->nreads) * sizeof *w->reads);
        w->nreads = vt + 1;
    }
    if (seq >= w->reads[vt].n) {
        size_t n = seq + 64;
        uint64_t *more = realloc(w->reads[vt].v, n * sizeof *more);
        if (!more)
            abort();
        memset(more + w->reads[vt].n, 0, (n - w->reads[vt].n) * sizeof *more);
        w->reads[vt].v = more;
        w->reads[vt].n = n;
    }
    uint64_t *at = &w->reads[vt].v[seq];
    if (!*at) {
        *at = value + 1;
        return;
    }
    w->r->reads_again++;
    if (*at != value + 1)
        vs_violation(w, "VT %llu's read (output %llu) returned %llu; an earlier copy got %llu",
                     (unsigned long long)vt, (unsigned long long)seq, (unsigned long long)value,
                     (unsigned long long)(*at - 1));
}

void vs_trace(vs_world *w, const char *fmt, ...)
{
    if (!w->o.trace)
        return;
    fprintf(stderr, "[%8llu] ", (unsigned long long)w->now);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* ===================================================================
 * The event queue: a binary heap by (time, sequence)
 * =================================================================== */

static bool s_before(const void *pa, const void *pb)
{
    const vs_ev *a = *(vs_ev *const *)pa, *b = *(vs_ev *const *)pb;
    return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static void s_push(vs_world *w, vs_ev *e)
{
    e->seq = ++w->ev_seq;
    simq_push(&w->q, &e);
}

static vs_ev *s_pop(vs_world *w)
{
    vs_ev *e;
    simq_pop(&w->q, &e);
    return e;
}

static vs_ev *s_first(vs_world *w) { return *(vs_ev **)simq_item(&w->q, 0); }

static void s_ev_free(vs_ev *e)
{
    free(e->body);
    pc_buf_drop(&e->bulk);
    free(e);
}

/* ===================================================================
 * The network
 * =================================================================== */

static int s_node_of(vs_world *w, const char *ep)
{
    for (int i = 0; i < w->nnodes; i++)
        if (!strcmp(w->nodes[i].ep, ep))
            return i;
    return !strcmp(ep, VS_CLIENT_EP) ? -1 : -2;
}

/* Whether a fault of `kind` is acting on node i now. */
static bool s_faulty(vs_world *w, int kind, int i)
{
    for (int k = 0; k < w->nfaults; k++) {
        vs_fault *f = &w->faults[k];
        if (f->kind == kind && f->node == i && f->started && !f->ended)
            return true;
    }
    return false;
}

/* The channel entry W_IN (or W_IN_REF) gives position h->seq of VT
 * h->vt: one entry per position, whatever is sent again. */
static void s_watch_in(vs_world *w, const pc_hdr *h, const void *body, size_t len)
{
    pc_rbuf r;
    pc_rbuf_init(&r, body, len);
    pc_get_raw(&r, &(const void *){NULL}, 1 + 1 + 8 + 8 + 4);
    pc_cx_mark e = {.vt = pc_get_u64(&r), .seq = pc_get_u64(&r)};
    if (r.bad || h->vt < 2 || h->vt - 2 > 4096 || !h->seq || h->seq > 1u << 24) {
        vs_violation(w, "the deployer sent a malformed input to VT %llu",
                     (unsigned long long)h->vt);
        return;
    }
    size_t v = (size_t)(h->vt - 2), pos = (size_t)h->seq - 1;
    if (v >= w->ninputs) {
        void *more = realloc(w->inputs, (v + 1) * sizeof *w->inputs);
        if (!more)
            abort();
        w->inputs = more;
        memset(w->inputs + w->ninputs, 0, (v + 1 - w->ninputs) * sizeof *w->inputs);
        w->ninputs = v + 1;
    }
    if (pos >= w->inputs[v].n) {
        if (RT_VEC_RESERVE(w->inputs[v].at, w->inputs[v].cap, w->inputs[v].n,
                           pos + 1 - w->inputs[v].n))
            abort();
        memset(w->inputs[v].at + w->inputs[v].n, 0,
               (pos + 1 - w->inputs[v].n) * sizeof *w->inputs[v].at);
        w->inputs[v].n = pos + 1;
    }
    pc_cx_mark *at = &w->inputs[v].at[pos];
    if (at->seq && (at->vt != e.vt || at->seq != e.seq))
        vs_violation(w,
                     "the deployer sent VT %llu message %llu of channel %llu at input %llu, "
                     "after message %llu of channel %llu there",
                     (unsigned long long)h->vt, (unsigned long long)e.seq, (unsigned long long)e.vt,
                     (unsigned long long)h->seq, (unsigned long long)at->seq,
                     (unsigned long long)at->vt);
    *at = e;
}

/* The determinants a worker sends up (W_DET), and the positions the
 * deployer fixes for a resumed incarnation (W_FIX): each names the
 * position the deployer gave the input (the executors order as the
 * deployer did, and the barrier collects what the deployer relayed). */
static void s_watch_dets(vs_world *w, uint16_t type, const void *body, size_t len, uint64_t *count)
{
    pc_cx_det *d = NULL;
    size_t n = 0;
    const char *why = NULL;
    if (pc_cx_dets_decode(body, len, &d, &n, &why)) {
        vs_violation(w, "a worker sent malformed determinants: %s", why ? why : "no memory");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        size_t v = (size_t)(d[i].vt - 2), pos = (size_t)d[i].pos - 1;
        const pc_cx_mark *at =
            d[i].vt >= 2 && v < w->ninputs && pos < w->inputs[v].n ? &w->inputs[v].at[pos] : NULL;
        if (!at || !at->seq || at->vt != d[i].from || at->seq != d[i].seq)
            vs_violation(w,
                         "%s puts message %llu of channel %llu at input %llu of VT %llu, "
                         "where the deployer sent another",
                         pc_type_name(type), (unsigned long long)d[i].seq,
                         (unsigned long long)d[i].from, (unsigned long long)d[i].pos,
                         (unsigned long long)d[i].vt);
        (*count)++;
    }
    free(d);
}

/* The recovery barrier: a fenced VT is placed again only once every
 * worker sent the newest barrier's W_FLUSH has answered it (each answer
 * is after its executor's last determinants, so the deployer has them
 * all when it fixes the VT's positions). */
static void s_watch_barrier(vs_world *w, const vs_node *n, int dst, const pc_hdr *h,
                            const void *body, size_t len)
{
    if (h->type == PC_W_FLUSH && dst >= 0) {
        if (h->seq != w->bar.id) {
            w->bar.id = (uint32_t)h->seq;
            w->bar.sent = w->bar.answered = 0;
            w->bar.nfence = 0;
            pc_rbuf r;
            pc_rbuf_init(&r, body, len);
            uint32_t k = pc_get_count(&r, 12);
            for (uint32_t i = 0; i < k && !r.bad && w->bar.nfence < VS_FENCES_MAX; i++) {
                uint64_t vt = pc_get_u64(&r);
                w->bar.fence[w->bar.nfence++] = (pc_cx_mark){.vt = vt, .seq = pc_get_u32(&r)};
            }
            w->r->barriers++;
        }
        w->bar.sent |= 1ull << dst;
    } else if (h->type == PC_W_FLUSHED && n->idx >= 0 && h->seq == w->bar.id) {
        w->bar.answered |= 1ull << n->idx;
    } else if (h->type == PC_W_RUN || h->type == PC_W_RESUME || h->type == PC_H_SEND) {
        for (int i = 0; i < w->bar.nfence; i++)
            if (w->bar.fence[i].vt == h->vt && w->bar.fence[i].seq == h->epoch &&
                (w->bar.sent & ~w->bar.answered))
                vs_violation(w,
                             "VT %llu incarnation %u placed before every worker answered "
                             "barrier %u",
                             (unsigned long long)h->vt, (unsigned)h->epoch, (unsigned)w->bar.id);
    }
}

int vs_net_send(vs_node *n, const char *to, pc_hdr h, const void *body, size_t len, pc_buf *bulk)
{
    vs_world *w = n->w;
    if (h.type == PC_W_IN || h.type == PC_W_IN_REF)
        s_watch_in(w, &h, body, len);
    if (h.type == PC_W_DET)
        s_watch_dets(w, h.type, body, len, &w->r->dets);
    /* the positions fixed for a resumed incarnation, checked alike */
    if (h.type == PC_W_FIX)
        s_watch_dets(w, h.type, body, len, &w->r->fixed);
    w->r->flushed += h.type == PC_W_FLUSHED;
    w->r->places += h.type == PC_W_PLACE;
    w->r->trims += h.type == PC_W_TRIM;
    w->r->by_ref += h.type == PC_W_IN_REF;
    w->r->ref_misses += h.type == PC_W_IN_MISS;
    int dst = s_node_of(w, to);
    s_watch_barrier(w, n, dst, &h, body, len);
    if (dst == -2 || (dst >= 0 && !w->nodes[dst].up) || (n->idx >= 0 && !n->up)) {
        pc_buf_drop(&bulk);
        return 0; /* nobody there: lost, as a send to a dead TCP endpoint is */
    }
    int from = n->idx;
    bool cut = (from >= 0 && s_faulty(w, 6, from)) || (dst >= 0 && s_faulty(w, 6, dst));
    if (cut || (from >= 0 && s_faulty(w, 4, from))) {
        pc_buf_drop(&bulk);
        return 0;
    }
    int copies = from >= 0 && s_faulty(w, 5, from) && vs_rand(w) % 2 ? 2 : 1;
    for (int c = 0; c < copies; c++) {
        vs_ev *e = calloc(1, sizeof *e);
        if (!e || (len && !(e->body = malloc(len))))
            abort();
        e->to = dst;
        e->gen = dst >= 0 ? w->nodes[dst].gen : 0;
        pc_ep_copy(e->from, n->ep);
        e->h = h;
        if (len)
            memcpy(e->body, body, len);
        e->len = len;
        e->bulk = c + 1 < copies ? pc_buf_ref(bulk) : pc_buf_take(&bulk);
        e->h.len = (uint32_t)(len + pc_buf_len(e->bulk));
        /* 1 to 4 ms, in order between two peers (one TCP connection);
         * during a reorder burst, 1 to 300 ms each, in any order */
        int a = from >= 0 ? from : VS_NODES_MAX, b = dst >= 0 ? dst : VS_NODES_MAX;
        uint64_t at;
        if (from >= 0 && s_faulty(w, 7, from)) {
            at = w->now + s_between(w, 1, 300);
        } else {
            at = w->now + s_between(w, 1, 4);
            if (at < w->pair_last[a][b])
                at = w->pair_last[a][b];
        }
        if (at > w->pair_last[a][b])
            w->pair_last[a][b] = at;
        e->at = at;
        s_push(w, e);
    }
    return 0;
}

/* ===================================================================
 * Peers
 * =================================================================== */

static uint64_t s_env_now(void *ud) { return ((vs_node *)ud)->w->now; }

static int s_env_send(void *ud, const char *to, pc_hdr h, const void *body, size_t len,
                      pc_buf *bulk)
{
    return vs_net_send(ud, to, h, body, len, bulk);
}

static int s_env_image_id(void *ud, const uint8_t *img, size_t len, uint64_t *vt, uint32_t *epoch)
{
    (void)ud;
    return vs_image_id(img, len, vt, epoch);
}

static int s_env_exec_start(void *ud, void **x, int *pid)
{
    vs_node *n = ud;
    if (n->foreign)
        vs_violation(n->w, "%s, a peer of another mesh, started an executor for a VC of this mesh",
                     n->ep);
    *x = vs_mexec_start(n);
    *pid = 0;
    return 0;
}

static int s_env_exec_send(void *ud, void *x, pc_hdr h, const struct iovec *iov, int n)
{
    (void)ud;
    return vs_mexec_send(x, h, iov, n);
}

static void s_env_exec_stop(void *ud, void *x)
{
    (void)ud;
    vs_mexec_stop(x);
}

/* A new event for node n (of its present start), not a message yet. */
static vs_ev *s_ev_for(vs_node *n)
{
    vs_ev *e = calloc(1, sizeof *e);
    if (!e)
        abort();
    e->to = n->idx;
    e->gen = n->gen;
    return e;
}

void vs_exec_emit(vs_node *n, vs_mexec *x, const pc_hdr *h, uint8_t *payload)
{
    vs_world *w = n->w;
    vs_ev *e = s_ev_for(n);
    e->x = x;
    e->h = *h;
    e->body = payload;
    e->len = h->len;
    e->at = w->now + 1; /* over a local channel: in order, a moment later */
    s_push(w, e);
}

static void s_members_send(void *ud, const char *to, uint16_t type, const void *payload, size_t len)
{
    vs_net_send(ud, to, pc_hdr_make(type, 0, 0, 0, 0), payload, len, NULL);
}

/* A connection from node n to the port of member `ep` (as peer.c's port
 * probe): answered a moment later, and only then (s_probe_answer) is it
 * known whether anything listens there. */
static void s_probe_port(vs_node *n, const char *ep, uint64_t instance)
{
    vs_world *w = n->w;
    vs_ev *e = s_ev_for(n);
    pc_ep_copy(e->from, ep);
    e->probe = true;
    e->instance = instance;
    e->at = w->now + 2; /* a round trip on the local network */
    s_push(w, e);
}

/* The answer to node n's port probe e: refused when the peer probed has
 * crashed (its process gone, its host up) and nothing took its endpoint;
 * no answer (a timeout, no evidence) when its whole host is gone or a
 * partition stands between them; accepted otherwise (a paused peer's
 * port stays open). */
static void s_probe_answer(vs_world *w, vs_node *n, const vs_ev *e)
{
    int t = s_node_of(w, e->from);
    if (t < 0 || w->nodes[t].up || w->nodes[t].host_gone)
        return;
    if (s_faulty(w, 6, t) || s_faulty(w, 6, n->idx))
        return;
    w->r->refused++;
    vs_trace(w, "%s: connection to %s refused", n->ep, e->from);
    pc_members_refused(n->p->mem, e->from, e->instance, w->now);
}

static void s_members_changed(void *ud, const pc_member *m, pc_member_state old)
{
    vs_node *n = ud;
    if (!strcmp(m->rec.endpoint, n->ep))
        return;
    if (m->state != old)
        vs_trace(n->w, "%s sees %s %s -> %s", n->ep, m->rec.endpoint, pc_member_state_name(old),
                 pc_member_state_name(m->state));
    if (m->state == PC_MEMBER_SUSPECT && old != PC_MEMBER_SUSPECT)
        s_probe_port(n, m->rec.endpoint, m->instance);
    pc_deployer_on_member(n->p->dep, m, old);
    pc_worker_on_member(n->p->wk, m, old);
    pc_holder_on_member(n->p->hold, m, old);
}

static void s_node_stop(vs_node *n)
{
    if (!n->up)
        return;
    n->up = false;
    pc_peer *p = n->p;
    n->w->r->patched += pc_holder_patched(p->hold);
    pc_deployer_destroy(&p->dep);
    pc_worker_destroy(&p->wk); /* stops its executors */
    pc_holder_destroy(&p->hold);
    pc_members_destroy(&p->mem);
    vs_mexec_free_all(n);
    free(p);
    n->p = NULL;
}

static void s_node_start(vs_world *w, vs_node *n, bool foreign)
{
    n->gen++;
    n->up = true;
    n->paused_until = 0;
    n->host_gone = false;
    n->foreign = foreign;
    n->next_tick = w->now;
    pc_peer *p = calloc(1, sizeof *p);
    if (!p)
        abort();
    n->p = p;
    p->o.crash_limit = 3;
    p->o.client_timeout_ms = 10000;
    p->o.max_msg = (size_t)1 << 30;
    p->o.global_ref_min = 1; /* the model's small values go by reference too */
    p->o.cores = (int)n->cores;
    p->env = (pc_env){.now = s_env_now,
                      .send = s_env_send,
                      .image_id = s_env_image_id,
                      .exec_start = s_env_exec_start,
                      .exec_send = s_env_exec_send,
                      .exec_stop = s_env_exec_stop,
                      .ud = n};
    pc_ep_copy(p->self.endpoint, n->ep);
    p->self.cores = n->cores;
    p->self.rate = 1000;
    snprintf(p->self.arch, sizeof p->self.arch, "x86_64");
    p->self.version = PC_WIRE_VERSION;
    p->vc_counter = ((uint64_t)(n->idx + 1) << 48) | ((uint64_t)n->gen << 32);
    pc_members_io io = {.send = s_members_send, .changed = s_members_changed, .ud = n};
    p->o.members.suspect_ms = w->o.suspect_ms;
    if (pc_members_new(&p->mem, &p->self, &p->o.members, &io, vs_rand(w), w->now) ||
        pc_deployer_new(&p->dep, p) || pc_worker_new(&p->wk, p) || pc_holder_new(&p->hold, p))
        abort();
    vs_trace(w, "%s starts%s", n->ep, foreign ? " (another mesh)" : "");
}

static const char *s_seed(vs_world *w, const vs_node *n)
{
    if (n->foreign)
        return n->idx == w->foreign_seed ? NULL : w->nodes[w->foreign_seed].ep;
    return n->idx == 0 ? NULL : w->nodes[0].ep;
}

static void s_node_tick(vs_world *w, vs_node *n)
{
    uint64_t now = w->now;
    pc_peer *p = n->p;
    const char *seed = s_seed(w, n);
    if (seed && pc_members_count_live(p->mem) <= 1 && now % VS_REJOIN_MS < 50)
        pc_members_join(p->mem, seed, now);
    uint64_t next = pc_members_tick(p->mem, now);
    uint64_t t = pc_deployer_tick(p->dep, now);
    next = t < next ? t : next;
    t = pc_holder_tick(p->hold, now);
    next = t < next ? t : next;
    if (!n->up)
        return;
    t = pc_worker_tick(p->wk, now);
    next = t < next ? t : next;
    t = vs_mexec_tick(n, now);
    next = t < next ? t : next;
    uint32_t load = pc_worker_load(p->wk);
    if (load != p->self.load && now - p->load_sent_ms >= 1000) {
        p->self.load = load;
        p->load_sent_ms = now;
        pc_members_update_self(p->mem, &p->self, now);
    }
    if (seed && pc_members_count_live(p->mem) <= 1 && next > now + 50)
        next = now + 50;
    n->next_tick = next > now ? next : now + 1;
}

static void s_msg_init(pc_msg *m, vs_ev *e)
{
    m->h = e->h;
    pc_ep_copy(m->from, e->from);
    m->body = e->len ? pc_buf_new(e->body, e->len) : NULL;
    if (e->len && !m->body)
        abort();
    m->bulk = pc_buf_take(&e->bulk);
}

static void s_client_on_msg(vs_world *w, pc_msg *m);

static void s_deliver(vs_world *w, vs_ev *e)
{
    w->r->messages++;
    pc_msg m;
    s_msg_init(&m, e);
    uint16_t t = m.h.type;
    const char *bad = NULL;
    if (pc_msg_check(&m.h, pc_buf_data(m.body), pc_buf_len(m.body), pc_buf_len(m.bulk), &bad)) {
        /* every message the roles send must match the table of fields */
        vs_violation(w, "%s sent %s that does not match its fields: %s", m.from, pc_type_name(t),
                     bad);
        pc_msg_close(&m);
        return;
    }
    if (e->to < 0) {
        s_client_on_msg(w, &m);
        pc_msg_close(&m);
        return;
    }
    vs_node *n = &w->nodes[e->to];
    switch (pc_msg_role(t)) {
    case PC_ROLE_MEMBERS: {
        const char *why = NULL;
        pc_members_recv(n->p->mem, w->now, m.from, t, pc_buf_data(m.body), pc_buf_len(m.body),
                        &why);
        break;
    }
    case PC_ROLE_DEPLOYER:
        pc_deployer_on_msg(n->p->dep, &m);
        break;
    case PC_ROLE_WORKER:
        pc_worker_on_msg(n->p->wk, &m);
        break;
    case PC_ROLE_HOLDER:
        pc_holder_on_msg(n->p->hold, &m);
        break;
    default:
        break;
    }
    pc_msg_close(&m);
}

/* ===================================================================
 * The client
 * =================================================================== */

static void s_client_send(vs_world *w, uint16_t type, uint64_t vt, const pc_wbuf *b, pc_buf *bulk)
{
    vs_net_send(&w->c.node, w->nodes[0].ep, pc_hdr_make(type, w->c.vc, vt, 0, ++w->c.seq),
                b ? b->data : NULL, b ? b->len : 0, bulk);
}

static void s_client_open(vs_world *w)
{
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_i32(&b, 0);
    pc_put_i32(&b, w->o.ckpt_ms);
    pc_put_i32(&b, w->o.replicas);
    pc_put_u64(&b, 0);
    /* a module whose architecture the deployer and the workers read
     * (the ELF header of this program: this machine's), under its hash */
    uint8_t head[64] = {0};
    FILE *f = fopen("/proc/self/exe", "rb");
    size_t got = f ? fread(head, 1, sizeof head, f) : 0;
    if (f)
        fclose(f);
    if (got != sizeof head)
        vs_violation(w, "cannot read this program's ELF header for the model module");
    uint8_t hash[PC_HASH_LEN];
    crypto_generichash(hash, sizeof hash, head, sizeof head, NULL, 0);
    pc_put_raw(&b, hash, sizeof hash);
    pc_buf *mod = pc_buf_new(head, sizeof head);
    if (!mod)
        abort();
    s_client_send(w, PC_C_OPEN, 0, &b, mod);
    pc_wbuf_free(&b);
    w->c.phase = 1;
    vs_trace(w, "client opens its VC");
}

static int s_client_vt(vs_world *w, uint64_t id)
{
    for (int i = 0; i < w->c.started; i++)
        if (w->c.ids[i] == id)
            return i;
    return -1;
}

static void s_client_on_msg(vs_world *w, pc_msg *m)
{
    vs_client *c = &w->c;
    pc_rbuf r;
    pc_rbuf_init(&r, pc_buf_data(m->body), pc_buf_len(m->body));
    int rounds = w->o.rounds ? w->o.rounds : 12;
    switch (m->h.type) {
    case PC_C_OPENED:
        if (c->phase != 1)
            return;
        c->vc = m->h.vc;
        c->phase = 2;
        for (int i = 0; i < c->nvts; i++) {
            pc_wbuf b;
            pc_wbuf_init(&b);
            pc_put_str(&b, "ring");
            pc_put_blob(&b, NULL, 0);
            s_client_send(w, PC_C_START, 0, &b, NULL);
            pc_wbuf_free(&b);
        }
        return;
    case PC_C_STARTED:
        if (c->started < c->nvts)
            c->ids[c->started++] = m->h.vt;
        if (m->h.vt != (uint64_t)c->started + 1)
            vs_violation(w, "VT ids not dense from 2: got %llu", (unsigned long long)m->h.vt);
        return;
    case PC_C_REPORT: {
        const void *rep = NULL;
        size_t len = 0;
        pc_get_blob(&r, &rep, &len);
        int i = s_client_vt(w, m->h.vt);
        uint64_t v = 0;
        for (size_t k = 0; k < len && k < 8; k++)
            v |= (uint64_t)((const uint8_t *)rep)[k] << (8 * k);
        if (i < 0 || !pc_rbuf_done(&r) || len != 8 || v >> 32 != m->h.vt) {
            vs_violation(w, "a malformed report of VT %llu", (unsigned long long)m->h.vt);
            return;
        }
        if ((uint32_t)v != c->reports[i])
            vs_violation(w, "VT %llu reported round %u, expected %u (a report lost or twice)",
                         (unsigned long long)m->h.vt, (uint32_t)v, c->reports[i]);
        c->reports[i]++;
        return;
    }
    case PC_C_RESULT: {
        int32_t err = pc_get_i32(&r);
        char detail[512];
        pc_get_str(&r, detail, sizeof detail);
        const void *res = NULL;
        size_t len = 0;
        pc_get_blob(&r, &res, &len);
        int i = s_client_vt(w, m->h.vt);
        if (i < 0 || !pc_rbuf_done(&r)) {
            vs_violation(w, "a malformed result of VT %llu", (unsigned long long)m->h.vt);
            return;
        }
        if (c->ended[i]) {
            vs_violation(w, "VT %llu ended twice", (unsigned long long)m->h.vt);
            return;
        }
        c->ended[i] = true;
        c->results++;
        w->r->done++;
        vs_trace(w, "client: VT %llu ended: %d %s", (unsigned long long)m->h.vt, err, detail);
        if (err) {
            w->r->failed++;
            if (!w->r->lost_expected)
                vs_violation(w,
                             "VT %llu failed (%s: %s) though the faults were within what "
                             "the VC tolerates",
                             (unsigned long long)m->h.vt, lev_strerror(err), detail);
            else if (!*detail)
                vs_violation(w, "VT %llu failed with no detail", (unsigned long long)m->h.vt);
        } else {
            uint64_t v = 0;
            for (size_t k = 0; k < len && k < 8; k++)
                v |= (uint64_t)((const uint8_t *)res)[k] << (8 * k);
            if (len != 8 || v != vs_ref_result(&w->o, m->h.vt))
                vs_violation(w, "VT %llu result %016llx, fault-free %016llx",
                             (unsigned long long)m->h.vt, (unsigned long long)v,
                             (unsigned long long)vs_ref_result(&w->o, m->h.vt));
            else if (c->reports[i] != (uint32_t)rounds)
                vs_violation(w, "VT %llu ended after %u reports of %d", (unsigned long long)m->h.vt,
                             c->reports[i], rounds);
        }
        if (c->results == c->nvts) {
            c->phase = 3;
            pc_wbuf b;
            pc_wbuf_init(&b);
            pc_put_str(&b, "ctr");
            s_client_send(w, PC_C_GGET, 0, &b, NULL);
            pc_wbuf_free(&b);
        }
        return;
    }
    case PC_C_GVALUE: {
        uint8_t set = pc_get_u8(&r);
        const void *val = NULL;
        size_t len = 0;
        pc_get_blob(&r, &val, &len);
        uint64_t v = 0;
        for (size_t k = 0; k < len && k < 8; k++)
            v |= (uint64_t)((const uint8_t *)val)[k] << (8 * k);
        if (c->pmax) { /* the highest put: the last round of the highest VT id */
            uint64_t top = 0;
            for (int i = 0; i < c->nvts; i++)
                if (c->ids[i] > top)
                    top = c->ids[i];
            uint64_t want = (uint64_t)rounds << 16 | top;
            if (!w->r->failed && (!set || v != want))
                vs_violation(w, "\"pmax\" is %llx, expected %llx (a put lost)",
                             (unsigned long long)v, (unsigned long long)want);
        } else {
            uint64_t want = (uint64_t)c->nvts * (uint64_t)rounds;
            if (!w->r->failed && (!set || v != want))
                vs_violation(w,
                             "the global counter is %llu, expected %llu (an update lost or twice)",
                             (unsigned long long)v, (unsigned long long)want);
            if (w->o.puts) {
                c->pmax = true;
                pc_wbuf b;
                pc_wbuf_init(&b);
                pc_put_str(&b, "pmax");
                s_client_send(w, PC_C_GGET, 0, &b, NULL);
                pc_wbuf_free(&b);
                return;
            }
        }
        c->phase = 4;
        s_client_send(w, PC_C_CLOSE, 0, NULL, NULL);
        return;
    }
    case PC_C_ERROR: {
        int32_t err = pc_get_i32(&r);
        char detail[256];
        pc_get_str(&r, detail, sizeof detail);
        vs_violation(w, "the client got an error: %s: %s", lev_strerror(err), detail);
        return;
    }
    default:
        return;
    }
}

static void s_client_tick(vs_world *w)
{
    vs_client *c = &w->c;
    if (c->phase == 0 && w->now >= VS_OPEN_AT_MS)
        s_client_open(w);
    if (c->phase >= 1 && c->phase < 4 && w->now >= c->next_ping) {
        c->next_ping = w->now + VS_PING_MS;
        s_client_send(w, PC_C_PING, 0, NULL, NULL);
    }
}

/* ===================================================================
 * Faults
 * =================================================================== */

/* Whether one of the first n faults is of node i. */
static bool s_used(const vs_world *w, int n, int i)
{
    for (int k = 0; k < n; k++)
        if (w->faults[k].node == i)
            return true;
    return false;
}

/* Draws the run's faults: each of a kind of o->kinds, on a peer other
 * than the client's, while the VTs run. */
static void s_plan_faults(vs_world *w)
{
    const vs_opts *o = &w->o;
    int kinds[VS_F_KINDS] = {0}, nk = 0;
    for (int k = 0; k < VS_F_KINDS; k++)
        if (o->kinds & (1u << k))
            kinds[nk++] = k;
    if (!nk || o->faults <= 0)
        return;
    w->faults = calloc((size_t)o->faults, sizeof *w->faults);
    if (!w->faults)
        abort();
    int rounds = o->rounds ? o->rounds : 12, cms = o->compute_ms ? o->compute_ms : 300;
    uint64_t run = (uint64_t)rounds * (uint64_t)cms;
    int ckpt = o->ckpt_ms ? o->ckpt_ms : 2000;
    int max_pause = o->max_pause_ms ? o->max_pause_ms : 5000;
    uint64_t first = s_between(w, VS_OPEN_AT_MS + 100, VS_OPEN_AT_MS + 100 + run * 8 / 10);
    int crashes = 0;
    for (int i = 0; i < o->faults; i++) {
        vs_fault *f = &w->faults[w->nfaults++];
        f->kind = kinds[vs_rand(w) % (uint64_t)nk];
        /* a distinct peer for each fault, never the client's */
        int tries = 0;
        do
            f->node = 1 + (int)(vs_rand(w) % (uint64_t)(o->peers - 1));
        while (++tries < 64 && i < o->peers - 1 && s_used(w, i, f->node));
        f->at = i == 0 || !o->within_ckpt ? (i == 0 ? first : s_between(w, first, first + run))
                                          : first + s_between(w, 0, (uint64_t)ckpt);
        uint64_t d = 0;
        switch (f->kind) {
        case 2:
            d = o->pause_ms > 0 ? (uint64_t)o->pause_ms : s_between(w, 50, (uint64_t)max_pause);
            break;
        case 1:
            d = s_between(w, 100, 3000);
            break;
        case 4:
        case 5:
        case 7:
            d = s_between(w, 100, 2000);
            break;
        case 6:
            d = s_between(w, 200, 4000);
            break;
        default:
            break;
        }
        f->until = f->at + d;
        if (f->kind == 0) {
            /* drawn from the seed apart from vs_rand: schedules stay */
            uint64_t h = o->seed * 0x9E3779B97F4A7C15ull + (uint64_t)i;
            h ^= h >> 29;
            h *= 0xBF58476D1CE4E5B9ull;
            h ^= h >> 32;
            f->host_gone =
                o->crashes == VS_CRASH_HOST || (o->crashes == VS_CRASH_EITHER && (h & 1));
            w->r->host_crashes += f->host_gone;
        }
        crashes += f->kind == 0 || f->kind == 1 || f->kind == 3;
        w->r->faults[f->kind]++;
    }
    /* what the VC is meant to survive: two faults of peers other than the
     * client's with the default replicas on >= 4 peers; with one replica,
     * two crashes may destroy every copy of a VT */
    int workers = o->peers - 1 + (o->client_works ? 1 : 0);
    if ((o->replicas == 1 && crashes >= 2) || o->faults > 2 || workers - crashes < 1 ||
        o->peers < 4)
        w->r->lost_expected = 1;
}

static void s_fault_step(vs_world *w)
{
    for (int k = 0; k < w->nfaults; k++) {
        vs_fault *f = &w->faults[k];
        vs_node *n = &w->nodes[f->node];
        if (!f->started && w->now >= f->at) {
            f->started = true;
            vs_trace(w, "FAULT %s of %s", vs_fault_name(f->kind), n->ep);
            if (f->kind == 0 || f->kind == 1 || f->kind == 3) {
                s_node_stop(n);
                n->host_gone = f->kind == 0 && f->host_gone;
            }
            if (f->kind == 3 && w->foreign_seed >= 0)
                s_node_start(w, n, true); /* a peer of another mesh on its endpoint */
            if (f->kind == 2 && n->up)
                n->paused_until = f->until;
        }
        if (f->started && !f->ended && w->now >= f->until) {
            f->ended = true;
            if (f->kind == 1)
                s_node_start(w, n, false);
            if (f->kind != 0 && f->kind != 3)
                vs_trace(w, "FAULT %s of %s ends", vs_fault_name(f->kind), n->ep);
        }
    }
}

/* ===================================================================
 * The run
 * =================================================================== */

static uint64_t s_next_time(vs_world *w)
{
    uint64_t next = w->now + 1000;
    if (w->q.n && s_first(w)->at < next)
        next = s_first(w)->at;
    for (int i = 0; i < w->nnodes; i++) {
        vs_node *n = &w->nodes[i];
        if (!n->up)
            continue;
        uint64_t t = n->paused_until > w->now ? n->paused_until : n->next_tick;
        next = t < next ? t : next;
    }
    for (int k = 0; k < w->nfaults; k++) {
        vs_fault *f = &w->faults[k];
        uint64_t t = !f->started ? f->at : !f->ended ? f->until : UINT64_MAX;
        next = t < next ? t : next;
    }
    if (w->c.phase == 0)
        next = VS_OPEN_AT_MS < next ? VS_OPEN_AT_MS : next;
    else if (w->c.phase < 4)
        next = w->c.next_ping < next ? w->c.next_ping : next;
    return next > w->now ? next : w->now;
}

static void s_step(vs_world *w)
{
    w->now = s_next_time(w);
    s_fault_step(w);
    while (w->q.n && s_first(w)->at <= w->now) {
        vs_ev *e = s_pop(w);
        vs_node *n = e->to >= 0 ? &w->nodes[e->to] : NULL;
        if (n && (!n->up || n->gen != e->gen)) {
            s_ev_free(e); /* its receiver died: lost with the connection */
            continue;
        }
        if (n && n->paused_until > w->now) {
            e->at = n->paused_until; /* waits in the socket until it goes on */
            s_push(w, e);
            continue;
        }
        if (e->probe) {
            s_probe_answer(w, n, e);
        } else if (e->x) {
            /* a record of an executor still running goes to its worker */
            if (vs_mexec_live(e->x)) {
                pc_worker_exec_record(n->p->wk, e->x, &e->h, e->body);
                e->body = NULL;
            }
        } else {
            s_deliver(w, e);
        }
        s_ev_free(e);
    }
    for (int i = 0; i < w->nnodes; i++) {
        vs_node *n = &w->nodes[i];
        if (n->up && n->paused_until <= w->now && n->next_tick <= w->now)
            s_node_tick(w, n);
        /* as a peer's loop does before it waits: a step's burst gets its acks */
        if (n->up && n->paused_until <= w->now)
            pc_deployer_flush(n->p->dep);
    }
    s_client_tick(w);
}

static void s_world_free(vs_world *w)
{
    for (int i = 0; i < w->nnodes; i++)
        s_node_stop(&w->nodes[i]);
    while (w->q.n)
        s_ev_free(s_pop(w));
    simq_free(&w->q);
    free(w->faults);
    free(w->c.ids);
    free(w->c.ended);
    free(w->c.reports);
    for (size_t i = 0; i < w->ninputs; i++)
        free(w->inputs[i].at);
    free(w->inputs);
    for (size_t i = 0; i < w->nreads; i++)
        free(w->reads[i].v);
    free(w->reads);
}

bool vs_run(const vs_opts *o, vs_report *r)
{
    memset(r, 0, sizeof *r);
    r->ok = true;
    vs_world *w = calloc(1, sizeof *w);
    if (!w)
        abort();
    w->o = *o;
    w->r = r;
    simq_init(&w->q, sizeof(vs_ev *), s_before);
    if (w->o.peers < 2 || w->o.peers > VS_NODES_MAX - 2) {
        vs_violation(w, "peers must be 2 .. %d", VS_NODES_MAX - 2);
        simq_free(&w->q);
        free(w);
        return false;
    }
    if (!w->o.horizon_ms)
        w->o.horizon_ms = 600000;
    pc_log_set_level(w->o.trace >= 2 ? PC_LOG_DEBUG : (pc_log_level)(PC_LOG_ERROR + 1));
    uint64_t x = o->seed;
    for (int i = 0; i < 4; i++) {
        x += 0x9E3779B97F4A7C15ull;
        uint64_t z = x;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        w->rng[i] = z ^ (z >> 31);
    }
    w->nnodes = w->o.peers;
    w->foreign_seed = -1;
    if (w->o.kinds & VS_F_TAKEOVER)
        w->foreign_seed = w->nnodes++;
    for (int i = 0; i < w->nnodes; i++) {
        vs_node *n = &w->nodes[i];
        n->w = w;
        n->idx = i;
        snprintf(n->ep, sizeof n->ep, "tcp://127.0.1.%d:7000", i + 1);
        n->cores = i == 0 && !w->o.client_works ? 0 : (uint32_t)(w->o.cores ? w->o.cores : 1);
        s_node_start(w, n, i == w->foreign_seed);
    }
    w->c.node.w = w;
    w->c.node.idx = -1;
    w->c.node.up = true;
    pc_ep_copy(w->c.node.ep, VS_CLIENT_EP);
    w->c.nvts = w->o.vts ? w->o.vts : 6;
    w->c.ids = calloc((size_t)w->c.nvts, sizeof *w->c.ids);
    w->c.ended = calloc((size_t)w->c.nvts, sizeof *w->c.ended);
    w->c.reports = calloc((size_t)w->c.nvts, sizeof *w->c.reports);
    if (!w->c.ids || !w->c.ended || !w->c.reports)
        abort();
    s_plan_faults(w);
    while (w->c.phase < 4 && w->now < w->o.horizon_ms && r->ok)
        s_step(w);
    if (r->ok && w->c.phase < 4) {
        char pend[256] = "";
        size_t off = 0;
        for (int i = 0; i < w->c.started && off < sizeof pend - 24; i++)
            if (!w->c.ended[i])
                off += (size_t)snprintf(pend + off, sizeof pend - off, " %llu",
                                        (unsigned long long)w->c.ids[i]);
        for (int i = 0; i < w->nnodes; i++)
            if (w->nodes[i].up)
                vs_mexec_dump(&w->nodes[i]);
        vs_violation(w, "the VC did not end (client phase %d, %d of %d VTs ended; waiting for:%s)",
                     w->c.phase, w->c.results, w->c.nvts, pend);
    }
    r->sim_ms = w->now;
    s_world_free(w);
    free(w);
    return r->ok;
}
