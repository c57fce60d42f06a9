/* membership_sim.c - the simulated mesh of membership_sim.h: the peers, a
 * heap of events (starts, timer deadlines, deliveries) in microseconds of
 * simulated time, a network with latency, jitter, loss and a slow peer,
 * the tally of how every peer sees every other of its mesh, the
 * scenarios the test and the benchmark share, and the hand-run net.
 */
#include "membership_sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lev_errors.h"
#include "membership_codec.h"
#include "simq.h"

enum { EV_START, EV_TICK, EV_DELIVER, EV_STOP };

/* A message in flight. */
typedef struct s_msg {
    int from, to;
    uint16_t type;
    size_t len;
    uint8_t data[];
} s_msg;

typedef struct s_ev {
    uint64_t t, seq; /* when, and the order of scheduling among equals */
    int kind, peer;
    uint64_t gen; /* EV_TICK: the peer's timer generation it belongs to */
    s_msg *msg;
} s_ev;

typedef struct s_peer {
    msim *sim;
    int idx;
    pc_members *m;
    bool started, stopped;
    int mesh, rank; /* its mesh, and its place among the peers of it */
    uint64_t gen, next_join_ms, instance;
    char endpoint[32];
} s_peer;

struct msim {
    msim_opts o;
    uint64_t rng, now_us, seq;
    s_peer *peers;
    simq q;        /* of s_ev */
    uint8_t *seen; /* n x n: the state in which obs sees t */
    int *cnt;      /* n x 5: live observers (not t) of t's mesh that see t in each state */
    int *nlive_m;  /* live peers of each mesh */
    int nlive, nstarted;
    int nconv; /* live peers that every other live peer sees ALIVE */
    msim_filter filter;
    void *filter_ud;
    msim_watch watch;
    void *watch_ud;
    uint64_t sent, bytes, sync_bytes, refused, merges;
};

static uint64_t s_mix(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t s_below(msim *s, uint64_t n) { return n ? s_mix(&s->rng) % n : 0; }

/* ===================================================================
 * Events, ordered by (t, seq)
 * =================================================================== */

static bool s_earlier(const void *a, const void *b)
{
    const s_ev *x = a, *y = b;
    return x->t != y->t ? x->t < y->t : x->seq < y->seq;
}

/* Always 0: the queue aborts when out of memory. */
static int s_push(msim *s, uint64_t t, int kind, int peer, uint64_t gen, s_msg *msg)
{
    s_ev ev = {.t = t, .seq = s->seq++, .kind = kind, .peer = peer, .gen = gen, .msg = msg};
    simq_push(&s->q, &ev);
    return 0;
}

static s_ev s_pop(msim *s)
{
    s_ev ev;
    simq_pop(&s->q, &ev);
    return ev;
}

/* ===================================================================
 * The tally of views
 * =================================================================== */

static int *s_cnt(const msim *s, int t) { return &s->cnt[(size_t)t * (MSIM_UNKNOWN + 1)]; }

static bool s_full(const msim *s, int t)
{
    return s->peers[t].started && !s->peers[t].stopped &&
           s_cnt(s, t)[PC_MEMBER_ALIVE] == s->nlive_m[s->peers[t].mesh] - 1;
}

static void s_recount(msim *s)
{
    s->nconv = 0;
    for (int t = 0; t < s->o.n; t++)
        s->nconv += s_full(s, t);
}

/* Observer o starts (+1) or stops (-1) counting. */
static void s_observer(msim *s, int o, int sign)
{
    for (int t = 0; t < s->o.n; t++)
        if (t != o && s->peers[t].mesh == s->peers[o].mesh)
            s_cnt(s, t)[s->seen[(size_t)o * s->o.n + t]] += sign;
    s->nlive += sign;
    s->nlive_m[s->peers[o].mesh] += sign;
    s_recount(s);
}

static void s_changed(void *ud, const pc_member *mb, pc_member_state old)
{
    s_peer *p = ud;
    msim *s = p->sim;
    int t = msim_index(s, mb->rec.endpoint);
    if (t < 0 || t == p->idx)
        return;
    uint8_t *seen = &s->seen[(size_t)p->idx * s->o.n + t];
    bool was = s_full(s, t);
    if (s->peers[t].mesh == p->mesh) {
        s_cnt(s, t)[*seen]--;
        s_cnt(s, t)[mb->state]++;
    } else if (mb->instance == s->peers[t].instance && msim_live(s, t)) {
        s->merges++;
    }
    *seen = (uint8_t)mb->state;
    s->nconv += s_full(s, t) - was;
    if (s->watch)
        s->watch(s->watch_ud, p->idx, t, old, mb, msim_now(s));
}

/* ===================================================================
 * Network
 * =================================================================== */

static void s_send(void *ud, const char *to, uint16_t type, const void *payload, size_t len)
{
    s_peer *p = ud;
    msim *s = p->sim;
    int dst = msim_index(s, to);
    s->sent++;
    s->bytes += len;
    if (type == PC_M_SYNC || type == PC_M_JOIN)
        s->sync_bytes += len;
    if (dst < 0 || (s->o.loss > 0 && (double)s_below(s, 1000000) < s->o.loss * 1e6) ||
        (s->filter && s->filter(s->filter_ud, p->idx, dst, type, msim_now(s))))
        return;
    s_msg *msg = malloc(sizeof *msg + len);
    if (!msg)
        return;
    msg->from = p->idx;
    msg->to = dst;
    msg->type = type;
    msg->len = len;
    memcpy(msg->data, payload, len);
    uint64_t lat =
        (uint64_t)s->o.lat_min_us + s_below(s, (uint64_t)(s->o.lat_max_us - s->o.lat_min_us + 1));
    if (dst == s->o.slow_peer && s->o.slow_max_ms > 0)
        lat += 1000 * ((uint64_t)s->o.slow_min_ms +
                       s_below(s, (uint64_t)(s->o.slow_max_ms - s->o.slow_min_ms + 1)));
    if (s_push(s, s->now_us + lat, EV_DELIVER, dst, 0, msg))
        free(msg);
}

/* The peer of rank r in mesh g. */
static int s_peer_of(const msim *s, int g, int r) { return r * s->o.meshes + g; }

/* A peer asks its seeds in: the peers of ranks rank / 2 and rank / 3 in
 * its mesh (i / 2 and i / 3 in a single mesh), the first peer none. */
static void s_join(msim *s, s_peer *p)
{
    int seeds[2] = {s_peer_of(s, p->mesh, p->rank / 2), s_peer_of(s, p->mesh, p->rank / 3)};
    for (int k = 0; k < 2; k++)
        if (seeds[k] != p->idx && seeds[k] < s->o.n && (k == 0 || seeds[k] != seeds[0]))
            pc_members_join(p->m, s->peers[seeds[k]].endpoint, msim_now(s));
    p->next_join_ms = msim_now(s) + (uint64_t)s->o.join_retry_ms;
}

static void s_start(msim *s, s_peer *p)
{
    pc_peer_rec rec = {.cores = 4, .rate = 1000, .arch = "x86_64", .version = PC_WIRE_VERSION};
    memcpy(rec.endpoint, p->endpoint, sizeof p->endpoint);
    pc_members_io io = {.send = s_send, .changed = s_changed, .ud = p};
    uint64_t seed = s->o.seed ^ (0x5851F42D4C957F2Dull * (uint64_t)(p->idx + 1)) ^ p->gen;
    if (pc_members_new(&p->m, &rec, &s->o.members, &io, s_mix(&seed), msim_now(s)))
        return;
    p->instance = pc_members_find(p->m, p->endpoint)->instance;
    s->nstarted += !p->started;
    p->started = true;
    p->stopped = false;
    s_observer(s, p->idx, +1);
    s_join(s, p);
    s_push(s, s->now_us, EV_TICK, p->idx, ++p->gen, NULL);
}

static void s_stop(msim *s, s_peer *p)
{
    if (!p->started || p->stopped)
        return;
    p->stopped = true;
    s_observer(s, p->idx, -1);
}

static void s_event(msim *s, const s_ev *ev)
{
    s_peer *p = &s->peers[ev->peer];
    uint64_t now = msim_now(s);
    switch (ev->kind) {
    case EV_START:
        s_start(s, p);
        break;
    case EV_STOP:
        s_stop(s, p);
        break;
    case EV_TICK: {
        if (!p->started || p->stopped || ev->gen != p->gen)
            break;
        uint64_t next = pc_members_tick(p->m, now);
        if (now >= p->next_join_ms && pc_members_count_live(p->m) <= 1)
            s_join(s, p);
        s_push(s, next * 1000, EV_TICK, p->idx, ++p->gen, NULL);
        break;
    }
    default: {
        s_msg *msg = ev->msg;
        const char *why = NULL;
        if (p->started && !p->stopped &&
            pc_members_recv(p->m, now, s->peers[msg->from].endpoint, msg->type, msg->data, msg->len,
                            &why)) {
            s->refused++;
            if (getenv("MSIM_DEBUG"))
                fprintf(stderr, "msim: %d refused %#x from %d: %s\n", msg->to, msg->type, msg->from,
                        why);
        }
        free(msg);
        break;
    }
    }
}

/* ===================================================================
 * Interface
 * =================================================================== */

int msim_new(msim **out, const msim_opts *o)
{
    *out = NULL;
    if (!o || o->n < 1 || o->n > 65536 || o->loss < 0 || o->loss >= 1 || o->meshes < 0 ||
        o->meshes > o->n || o->slow_min_ms < 0 || o->slow_max_ms < o->slow_min_ms)
        return LEV_EINVAL;
    msim *s = calloc(1, sizeof *s);
    if (!s)
        return LEV_ENOMEM;
    s->o = *o;
    if (!s->o.lat_min_us)
        s->o.lat_min_us = 200;
    if (!s->o.lat_max_us)
        s->o.lat_max_us = 2000;
    if (!s->o.join_retry_ms)
        s->o.join_retry_ms = 500;
    if (s->o.lat_max_us < s->o.lat_min_us)
        s->o.lat_max_us = s->o.lat_min_us;
    if (!s->o.meshes)
        s->o.meshes = 1;
    s->rng = o->seed;
    simq_init(&s->q, sizeof(s_ev), s_earlier);
    size_t n = (size_t)o->n;
    s->peers = calloc(n, sizeof *s->peers);
    s->seen = malloc(n * n);
    s->cnt = calloc(n * (MSIM_UNKNOWN + 1), sizeof *s->cnt);
    s->nlive_m = calloc((size_t)s->o.meshes, sizeof *s->nlive_m);
    if (!s->peers || !s->seen || !s->cnt || !s->nlive_m) {
        msim_destroy(&s);
        return LEV_ENOMEM;
    }
    memset(s->seen, MSIM_UNKNOWN, n * n);
    for (int i = 0; i < o->n; i++) {
        s_peer *p = &s->peers[i];
        p->sim = s;
        p->idx = i;
        p->mesh = i % s->o.meshes;
        p->rank = i / s->o.meshes;
        snprintf(p->endpoint, sizeof p->endpoint, "tcp://10.0.%d.%d:7946", i / 256, i % 256);
        uint64_t at = (uint64_t)o->start_spread_ms * 1000 * (uint64_t)i / n;
        if (o->late_ms > 0 && i == o->n - 1)
            at = (uint64_t)o->late_ms * 1000;
        if (s_push(s, at, EV_START, i, 0, NULL)) {
            msim_destroy(&s);
            return LEV_ENOMEM;
        }
    }
    *out = s;
    return 0;
}

void msim_destroy(msim **s_p)
{
    msim *s = s_p ? *s_p : NULL;
    if (!s)
        return;
    for (size_t i = 0; i < s->q.n; i++)
        free(((s_ev *)simq_item(&s->q, i))->msg);
    for (int i = 0; s->peers && i < s->o.n; i++)
        pc_members_destroy(&s->peers[i].m);
    simq_free(&s->q);
    free(s->peers);
    free(s->seen);
    free(s->cnt);
    free(s->nlive_m);
    free(s);
    *s_p = NULL;
}

void msim_set_filter(msim *s, msim_filter f, void *ud)
{
    s->filter = f;
    s->filter_ud = ud;
}

void msim_set_watch(msim *s, msim_watch w, void *ud)
{
    s->watch = w;
    s->watch_ud = ud;
}

bool msim_run(msim *s, uint64_t until_ms, bool (*cond)(msim *s, void *ud), void *ud)
{
    uint64_t until = until_ms * 1000;
    if (cond && cond(s, ud))
        return true;
    while (s->q.n && ((const s_ev *)simq_item(&s->q, 0))->t <= until) {
        s_ev ev = s_pop(s);
        s->now_us = ev.t;
        s_event(s, &ev);
        if (cond && cond(s, ud))
            return true;
    }
    if (s->now_us < until)
        s->now_us = until;
    return false;
}

uint64_t msim_now(const msim *s) { return s->now_us / 1000; }

void msim_kill(msim *s, int i) { s_stop(s, &s->peers[i]); }

void msim_leave(msim *s, int i)
{
    s_peer *p = &s->peers[i];
    if (!p->started || p->stopped)
        return;
    pc_members_leave(p->m, msim_now(s));
    s_push(s, s->now_us + 1000000, EV_STOP, i, 0, NULL);
}

void msim_restart(msim *s, int i, int mesh)
{
    s_peer *p = &s->peers[i];
    size_t n = (size_t)s->o.n;
    s_stop(s, p);
    pc_members_destroy(&p->m);
    memset(&s->seen[(size_t)i * n], MSIM_UNKNOWN, n);
    if (mesh != p->mesh) {
        p->mesh = mesh;
        p->rank = 2; /* seeds: ranks 1 and 0 */
    }
    /* The tally of t: what the live peers of its (new) mesh hold. */
    int *c = s_cnt(s, i);
    memset(c, 0, (MSIM_UNKNOWN + 1) * sizeof *c);
    for (size_t o = 0; o < n; o++)
        if ((int)o != i && msim_live(s, (int)o) && s->peers[o].mesh == mesh)
            c[s->seen[o * n + (size_t)i]]++;
    s_start(s, p);
}

pc_members *msim_peer(msim *s, int i) { return s->peers[i].m; }

const char *msim_endpoint(const msim *s, int i) { return s->peers[i].endpoint; }

int msim_index(const msim *s, const char *endpoint)
{
    unsigned a, b;
    int end = 0;
    if (sscanf(endpoint, "tcp://10.0.%u.%u:7946%n", &a, &b, &end) != 2 || !end || endpoint[end] ||
        a > 255 || b > 255)
        return -1;
    int i = (int)(a * 256 + b);
    return i < s->o.n && !strcmp(s->peers[i].endpoint, endpoint) ? i : -1;
}

bool msim_live(const msim *s, int i) { return s->peers[i].started && !s->peers[i].stopped; }

int msim_nlive(const msim *s) { return s->nlive; }

int msim_mesh(const msim *s, int i) { return s->peers[i].mesh; }

uint64_t msim_instance(const msim *s, int i) { return s->peers[i].instance; }

uint64_t msim_merges(const msim *s) { return s->merges; }

int msim_state(const msim *s, int obs, int t) { return s->seen[(size_t)obs * s->o.n + t]; }

int msim_count(const msim *s, int t, unsigned mask)
{
    int sum = 0;
    for (int st = 0; st <= MSIM_UNKNOWN; st++)
        if (mask >> st & 1u)
            sum += s_cnt(s, t)[st];
    return sum;
}

bool msim_converged(const msim *s) { return s->nstarted == s->o.n && s->nconv == s->nlive; }

void msim_traffic(const msim *s, uint64_t *msgs, uint64_t *bytes)
{
    *msgs = s->sent;
    *bytes = s->bytes;
}

uint64_t msim_refused(const msim *s) { return s->refused; }

/* ===================================================================
 * The scenario
 * =================================================================== */

static bool s_converged(msim *s, void *ud)
{
    (void)ud;
    return msim_converged(s);
}

/* Peer t held in one of the states of mask by every live peer. */
static bool s_everywhere(msim *s, int t, unsigned mask)
{
    return msim_count(s, t, mask) == s->nlive_m[s->peers[t].mesh];
}

static bool s_suspected(msim *s, void *ud)
{
    return s_everywhere(s, *(int *)ud, 1u << PC_MEMBER_SUSPECT | 1u << PC_MEMBER_DEAD);
}

static bool s_dead(msim *s, void *ud) { return s_everywhere(s, *(int *)ud, 1u << PC_MEMBER_DEAD); }

int msim_scenario(const msim_opts *o, int settle_ms, int window_ms, msim_result *r)
{
    msim *s;
    int rc = msim_new(&s, o);
    memset(r, 0, sizeof *r);
    if (rc)
        return rc;
    int period = o->members.period_ms ? o->members.period_ms : 200;
    uint64_t last_start = (uint64_t)o->start_spread_ms * (uint64_t)(o->n - 1) / (uint64_t)o->n;
    r->converge_ms = msim_run(s, last_start + 60000, s_converged, NULL)
                         ? (double)(msim_now(s) - last_start)
                         : -1;
    msim_run(s, msim_now(s) + (uint64_t)settle_ms, NULL, NULL);
    uint64_t m0 = s->sent, b0 = s->bytes, y0 = s->sync_bytes, t0 = msim_now(s);
    msim_run(s, t0 + (uint64_t)window_ms, NULL, NULL);
    double periods = (double)window_ms / period * s->nlive;
    r->msgs = (double)(s->sent - m0) / periods;
    r->bytes = (double)(s->bytes - b0) / periods;
    r->sync_bytes = (double)(s->sync_bytes - y0) / periods;
    int victim = o->n / 3;
    msim_kill(s, victim);
    uint64_t killed = msim_now(s);
    r->suspect_ms = msim_run(s, killed + 20000, s_suspected, &victim)
                        ? (double)(s->now_us - killed * 1000) / 1000
                        : -1;
    r->dead_ms = msim_run(s, killed + 30000, s_dead, &victim)
                     ? (double)(s->now_us - killed * 1000) / 1000
                     : -1;
    r->refused = s->refused;
    msim_destroy(&s);
    return 0;
}

/* ===================================================================
 * Two meshes, and restarts on the same endpoint
 * =================================================================== */

int msim_two_meshes(const msim_opts *o, int victim, int restart_ms, msim_meshes_result *r)
{
    msim *s;
    memset(r, 0, sizeof *r);
    if (!o || o->meshes != 2 || victim < 2 || victim >= o->n || victim % 2 || restart_ms < 0)
        return LEV_EINVAL;
    int rc = msim_new(&s, o);
    if (rc)
        return rc;
    r->converged = msim_run(s, 10000, s_converged, NULL);
    msim_kill(s, victim);
    msim_run(s, msim_now(s) + (uint64_t)restart_ms, NULL, NULL);
    msim_restart(s, victim, 1);
    r->converged = r->converged && msim_run(s, msim_now(s) + 10000, s_converged, NULL);
    msim_run(s, msim_now(s) + 20000, NULL, NULL);
    r->converged = r->converged && msim_converged(s);
    for (int i = 0; i < o->n; i++) {
        pc_members_stats st;
        pc_members_stats_get(s->peers[i].m, &st);
        r->foreign += st.foreign;
        r->held_live += s->peers[i].mesh == 0 && msim_state(s, i, victim) <= PC_MEMBER_SUSPECT;
    }
    r->merges = s->merges;
    r->refused = s->refused;
    msim_destroy(&s);
    return 0;
}

typedef struct s_life {
    int v, hits;
    uint64_t instance;
} s_life;

static void s_life_watch(void *ud, int obs, int t, pc_member_state old, const pc_member *mb,
                         uint64_t now_ms)
{
    s_life *lf = ud;
    (void)obs, (void)old, (void)now_ms;
    lf->hits += t == lf->v && mb->instance == lf->instance && mb->state != PC_MEMBER_ALIVE;
}

/* Every live peer holds the new life of lf->v ALIVE. */
static bool s_new_life(msim *s, void *ud)
{
    const s_life *lf = ud;
    for (int i = 0; i < s->o.n; i++) {
        if (i == lf->v || !msim_live(s, i))
            continue;
        const pc_member *mb = pc_members_find(s->peers[i].m, s->peers[lf->v].endpoint);
        if (!mb || mb->state != PC_MEMBER_ALIVE || mb->instance != lf->instance)
            return false;
    }
    return true;
}

static bool s_dead_everywhere(msim *s, void *ud)
{
    return s_everywhere(s, *(int *)ud, 1u << PC_MEMBER_DEAD);
}

/* Tells every live peer but v, by gossip, that v's life `instance` is
 * DEAD and SUSPECT at incarnation 50. */
static void s_tell_gone(msim *s, int v, uint64_t instance)
{
    pc_member gone = {.incarnation = 50, .instance = instance, .state = PC_MEMBER_DEAD};
    memcpy(gone.rec.endpoint, s->peers[v].endpoint, sizeof s->peers[v].endpoint);
    pc_wbuf w;
    pc_wbuf_init(&w);
    for (int i = 0; i < s->o.n; i++) {
        if (i == v || !msim_live(s, i))
            continue;
        w.len = 0;
        pc_mem_put_head(&w, pc_members_mesh_id(s->peers[i].m), 0);
        pc_mem_put_var(&w, 2);
        gone.state = PC_MEMBER_DEAD;
        pc_mem_put_update(&w, &gone, false);
        gone.state = PC_MEMBER_SUSPECT;
        pc_mem_put_update(&w, &gone, false);
        if (!w.err && pc_members_recv(s->peers[i].m, msim_now(s), s->peers[i ? 0 : 1].endpoint,
                                      PC_M_GOSSIP, w.data, w.len, NULL))
            s->refused++;
    }
    pc_wbuf_free(&w);
}

int msim_restarted(const msim_opts *o, int victim, int restart_ms, msim_restart_result *r)
{
    msim *s;
    memset(r, 0, sizeof *r);
    if (!o || victim < 2 || victim >= o->n)
        return LEV_EINVAL;
    int rc = msim_new(&s, o);
    if (rc)
        return rc;
    msim_run(s, 10000, s_converged, NULL);
    uint64_t old = s->peers[victim].instance;
    msim_kill(s, victim);
    if (restart_ms < 0)
        msim_run(s, msim_now(s) + 10000, s_dead_everywhere, &victim);
    else
        msim_run(s, msim_now(s) + (uint64_t)restart_ms, NULL, NULL);
    msim_restart(s, victim, s->peers[victim].mesh);
    uint64_t t0 = s->now_us;
    s_life lf = {.v = victim, .instance = s->peers[victim].instance};
    msim_set_watch(s, s_life_watch, &lf);
    r->alive_ms = lf.instance > old && msim_run(s, msim_now(s) + 10000, s_new_life, &lf)
                      ? (double)(s->now_us - t0) / 1000
                      : -1;
    s_tell_gone(s, victim, old);
    msim_run(s, msim_now(s) + 10000, NULL, NULL);
    r->hits = lf.hits;
    r->alive_after = s_new_life(s, &lf);
    r->refused = s->refused;
    msim_destroy(&s);
    return 0;
}

/* ===================================================================
 * The slow peer
 * =================================================================== */

typedef struct s_slow_tally {
    int slow;
    msim_slow_result *r;
} s_slow_tally;

static void s_slow_watch(void *ud, int obs, int t, pc_member_state old, const pc_member *mb,
                         uint64_t now_ms)
{
    s_slow_tally *w = ud;
    (void)obs;
    (void)now_ms;
    bool suspected = mb->state == PC_MEMBER_SUSPECT && old != PC_MEMBER_SUSPECT;
    w->r->slow_views += suspected && t == w->slow;
    w->r->false_views += suspected && t != w->slow;
    w->r->deaths += mb->state == PC_MEMBER_DEAD && old != PC_MEMBER_DEAD;
}

int msim_slow(const msim_opts *o, int settle_ms, int window_ms, msim_slow_result *r)
{
    msim *s;
    memset(r, 0, sizeof *r);
    if (!o || o->slow_peer < 0 || o->slow_peer >= o->n)
        return LEV_EINVAL;
    int rc = msim_new(&s, o);
    if (rc)
        return rc;
    msim_run(s, (uint64_t)o->start_spread_ms + (uint64_t)settle_ms, NULL, NULL);
    pc_members_stats st0, st1;
    pc_members_stats_get(s->peers[o->slow_peer].m, &st0);
    s_slow_tally w = {o->slow_peer, r};
    msim_set_watch(s, s_slow_watch, &w);
    msim_run(s, msim_now(s) + (uint64_t)window_ms, NULL, NULL);
    pc_members_stats_get(s->peers[o->slow_peer].m, &st1);
    r->raised = st1.suspicions - st0.suspicions;
    r->probes = st1.probes - st0.probes;
    r->health = pc_members_health(s->peers[o->slow_peer].m);
    r->refused = s->refused;
    msim_destroy(&s);
    return 0;
}

/* ===================================================================
 * The hand-run net
 * =================================================================== */

const char *msim_hnet_ep(int i)
{
    static char eps[MSIM_HPEERS][32];
    snprintf(eps[i], sizeof eps[i], "tcp://10.1.0.%d:7946", i);
    return eps[i];
}

/* A copy of a message; data NULL when out of memory. */
static msim_hmsg s_hcopy(const char *from, const char *to, uint16_t type, const void *p, size_t len)
{
    msim_hmsg msg = {.type = type, .len = len, .data = malloc(len ? len : 1)};
    snprintf(msg.from, sizeof msg.from, "%s", from);
    snprintf(msg.to, sizeof msg.to, "%s", to);
    if (len && msg.data)
        memcpy(msg.data, p, len);
    return msg;
}

static void s_hsend(void *ud, const char *to, uint16_t type, const void *payload, size_t len)
{
    msim_hpeer *p = ud;
    msim_hnet *net = p->net;
    msim_hmsg msg = s_hcopy(msim_hnet_ep(p->idx), to, type, payload, len);
    if (net->nq == MSIM_HQUEUE || !msg.data) {
        net->overflow++;
        free(msg.data);
        return;
    }
    net->q[net->nq++] = msg;
    if (type == PC_M_SYNC && len > net->sync_len)
        net->sync_len = len;
    if (net->log && net->nlog < net->caplog) {
        net->log[net->nlog] = s_hcopy(msim_hnet_ep(p->idx), to, type, payload, len);
        net->nlog += net->log[net->nlog].data != NULL;
    }
}

pc_peer_rec msim_hnet_rec(const char *endpoint)
{
    pc_peer_rec rec = {.cores = 2, .rate = 500, .arch = "x86_64", .version = PC_WIRE_VERSION};
    snprintf(rec.endpoint, sizeof rec.endpoint, "%s", endpoint);
    return rec;
}

int msim_hnet_start(msim_hnet *net, int i, uint64_t now)
{
    msim_hpeer *p = &net->p[i];
    pc_members_destroy(&p->m);
    p->net = net;
    p->idx = i;
    p->next = now;
    pc_peer_rec rec = msim_hnet_rec(msim_hnet_ep(i));
    pc_members_io io = {.send = s_hsend, .ud = p};
    return pc_members_new(&p->m, &rec, net->opts, &io, 1000 + (uint64_t)i, now);
}

msim_hnet *msim_hnet_new(int n, const pc_members_opts *opts)
{
    if (n < 1 || n > MSIM_HPEERS)
        return NULL;
    msim_hnet *net = calloc(1, sizeof *net);
    if (!net || !(net->q = calloc(MSIM_HQUEUE, sizeof *net->q))) {
        free(net);
        return NULL;
    }
    net->n = n;
    net->opts = opts;
    for (int i = 0; i < n; i++)
        if (msim_hnet_start(net, i, 0)) {
            msim_hnet_destroy(&net);
            return NULL;
        }
    return net;
}

void msim_hnet_drop(msim_hnet *net)
{
    for (size_t i = 0; i < net->nq; i++)
        free(net->q[i].data);
    net->nq = 0;
}

void msim_hnet_destroy(msim_hnet **net_p)
{
    msim_hnet *net = net_p ? *net_p : NULL;
    if (!net)
        return;
    msim_hnet_drop(net);
    for (size_t i = 0; i < net->nlog; i++)
        free(net->log[i].data);
    for (int i = 0; i < net->n; i++)
        pc_members_destroy(&net->p[i].m);
    free(net->log);
    free(net->q);
    free(net);
    *net_p = NULL;
}

bool msim_hnet_flush(msim_hnet *net, uint64_t now)
{
    for (int round = 0; net->nq && round < 10000; round++) {
        msim_hmsg msg = net->q[0];
        memmove(net->q, net->q + 1, (net->nq - 1) * sizeof *net->q);
        net->nq--;
        for (int i = 0; i < net->n; i++) {
            const char *why = NULL;
            if (net->p[i].m && !strcmp(msim_hnet_ep(i), msg.to) &&
                pc_members_recv(net->p[i].m, now, msg.from, msg.type, msg.data, msg.len, &why))
                net->refused++;
        }
        free(msg.data);
    }
    return net->nq == 0;
}

bool msim_hnet_run(msim_hnet *net, uint64_t from, uint64_t to)
{
    for (uint64_t now = from; now <= to; now++) {
        for (int i = 0; i < net->n; i++)
            if (net->p[i].m && now >= net->p[i].next)
                net->p[i].next = pc_members_tick(net->p[i].m, now);
        if (!msim_hnet_flush(net, now))
            return false;
    }
    return true;
}
