/* membership.c - the participation manager's membership protocol
 * (membership.h): the view, the SWIM probe cycle with Lifeguard's local
 * health, suspicion and refutation by instance and incarnation,
 * dissemination piggybacked on every message, the mesh id, join and
 * push-pull. Payloads are read and written by membership_codec.c.
 */
#include "membership.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lev_errors.h"
#include "membership_codec.h"
#include "vec.h"

#define S_LAMBDA 4       /* an update is sent S_LAMBDA * ceil(log10(n + 1)) times */
#define S_GOSSIP_NODES 3 /* GOSSIP messages a period while updates are pending */
#define S_LEAVE_FANOUT 6 /* members told at once of a leave */
#define S_FANOUT_MAX 16  /* the most indirect probers or gossip targets at once */
#define S_RELAY_MAX 64   /* indirect probes run for others at once */
#define S_CATCHUP 5      /* periods between push-pulls while a view grows */
#define S_QUIET 3        /* periods without a change that make a view settled */
#define S_SEEDS 16       /* seeds remembered: a join answer is taken from them only */
#define S_HEALTH_MAX 8   /* default highest local health score */
#define S_CONFIRM_MAX 16 /* confirmations of a suspicion counted */

/* A member as this peer knows it, with its pending update. */
typedef struct s_node {
    pc_member m;
    uint32_t accuser;                /* SUSPECT: who raised the suspicion (a hash) */
    uint32_t confirm[S_CONFIRM_MAX]; /* SUSPECT: others who raised it too */
    uint32_t nconfirm;
    uint32_t transmits; /* times its queued update was sent */
    uint64_t qseq;      /* when it was queued (higher: newer) */
    bool queued;        /* in the gossip queue */
} s_node;

/* An indirect probe this peer runs for another (PING_REQ). */
typedef struct s_relay {
    uint32_t seq;       /* of the PING this peer sent the target */
    uint32_t their_seq; /* of the requester's probe */
    uint64_t nack_at;   /* unanswered then: a nack tells the requester (0: sent) */
    uint64_t expires;
    char requester[PC_ENDPOINT_MAX];
} s_relay;

struct pc_members {
    pc_members_opts o;
    pc_members_io io;
    uint64_t rng;
    s_node *nodes; /* the view; nodes[0] is this peer */
    size_t n, cap;
    uint32_t *slots; /* hash index: node index + 1, 0 empty */
    size_t nslots;
    uint32_t *order; /* the probe round: node indexes, shuffled */
    size_t norder, order_cap, probe_pos;
    uint32_t *queue; /* nodes with a pending update */
    size_t nqueue, queue_cap;
    uint64_t qseq;
    /* the mesh */
    uint64_t mesh;
    bool settled; /* the mesh id is configured, adopted or given to a newcomer */
    char seeds[S_SEEDS][PC_ENDPOINT_MAX];
    unsigned nseeds;
    /* the probe of this period, its timeout and length scaled by health */
    bool probing, acked, indirect_sent;
    uint32_t probe_seq, seq, nacks_expected, nacks;
    char probe_target[PC_ENDPOINT_MAX];
    uint64_t probe_instance; /* of the target: a later life is not this probe's */
    uint64_t probe_start, probe_timeout, probe_len, next_probe, next_gossip;
    int health;         /* Lifeguard's local health score, 0..o.health_max */
    uint32_t self_hash; /* this peer as an accuser */
    unsigned periods_to_sync, periods_since_sync;
    size_t sync_base; /* members in the view after the last push-pull */
    s_relay relays[S_RELAY_MAX];
    size_t nrelays;
    size_t nsuspect, ndown; /* nodes SUSPECT, and DEAD or LEFT */
    uint32_t digest;        /* sum of hashes of the live members' endpoints, instances */
    uint64_t digest_at;     /* when the set of live members last changed */
    pc_members_stats st;
    pc_wbuf out; /* the message being written */
};

/* ===================================================================
 * Randomness: splitmix64, seeded by the caller
 * =================================================================== */

static uint64_t s_mix(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t s_rand(pc_members *m) { return s_mix(&m->rng); }

/* A uniform number in [0, n); n > 0. */
static uint32_t s_below(pc_members *m, uint32_t n)
{
    return (uint32_t)(((s_rand(m) >> 32) * (uint64_t)n) >> 32);
}

/* ===================================================================
 * Local health (Lifeguard's local health multiplier)
 * =================================================================== */

/* Moves the score by delta within 0..health_max. It rises when this peer's
 * probes fail (by the nacks that did not come: other peers could not tell
 * that the target is down, so this peer may be the slow one) and when it
 * must refute a suspicion of itself; it falls with each probe answered. */
static void s_health(pc_members *m, int delta)
{
    int h = m->health + delta;
    m->health = h < 0 ? 0 : h > m->o.health_max ? m->o.health_max : h;
}

/* A duration of the probe cycle, scaled by the score: a busy peer waits
 * longer for answers, and probes less often, rather than blame others. */
static uint64_t s_scaled(const pc_members *m, int ms)
{
    return (uint64_t)ms * (uint64_t)(m->health + 1);
}

/* ===================================================================
 * The view: an array of nodes (this peer first) and a hash index
 * =================================================================== */

static uint32_t s_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static s_node *s_find(const pc_members *m, const char *endpoint)
{
    size_t mask = m->nslots - 1;
    for (size_t i = s_hash(endpoint) & mask;; i = (i + 1) & mask) {
        uint32_t v = m->slots[i];
        if (!v)
            return NULL;
        if (!strcmp(m->nodes[v - 1].m.rec.endpoint, endpoint))
            return &m->nodes[v - 1];
    }
}

/* Enters node idx into the hash index (which has room). */
static void s_index(pc_members *m, size_t idx)
{
    size_t mask = m->nslots - 1;
    size_t i = s_hash(m->nodes[idx].m.rec.endpoint) & mask;
    while (m->slots[i])
        i = (i + 1) & mask;
    m->slots[i] = (uint32_t)idx + 1;
}

/* Rebuilds the hash index with at least twice as many slots as nodes can
 * be. 0 or LEV_ENOMEM (the old index is kept). */
static int s_reindex(pc_members *m, size_t want)
{
    size_t nslots = m->nslots ? m->nslots : 16;
    while (nslots < 2 * want)
        nslots *= 2;
    if (nslots != m->nslots) {
        uint32_t *slots = calloc(nslots, sizeof *slots);
        if (!slots)
            return LEV_ENOMEM;
        free(m->slots);
        m->slots = slots;
        m->nslots = nslots;
    } else {
        memset(m->slots, 0, nslots * sizeof *m->slots);
    }
    for (size_t i = 0; i < m->n; i++)
        s_index(m, i);
    return 0;
}

static bool s_down(pc_member_state s) { return s == PC_MEMBER_DEAD || s == PC_MEMBER_LEFT; }

/* Adds nd to (+1) or takes it from (-1) the digest of live members. */
static void s_count_live(pc_members *m, const s_node *nd, int sign, uint64_t now)
{
    uint64_t inst = nd->m.instance; /* a peer that holds an earlier life differs */
    uint32_t h =
        (s_hash(nd->m.rec.endpoint) ^ (uint32_t)inst ^ (uint32_t)(inst >> 32)) * 0x9E3779B1u;
    m->digest += sign > 0 ? h : (uint32_t)-h;
    m->digest_at = now;
}

/* Adds a node for rec in state st (not DEAD nor LEFT); NULL when out of
 * memory or when the view holds PC_MEM_VIEW_CAP members already. */
static s_node *s_add(pc_members *m, const pc_peer_rec *rec, pc_member_state st, uint32_t inc,
                     uint64_t instance, uint64_t now)
{
    if (m->n >= PC_MEM_VIEW_CAP || RT_VEC_RESERVE(m->nodes, m->cap, m->n, 1) ||
        RT_VEC_RESERVE(m->order, m->order_cap, m->norder, 1) ||
        (2 * (m->n + 1) > m->nslots && s_reindex(m, m->n + 1)))
        return NULL;
    size_t idx = m->n++;
    s_node *nd = &m->nodes[idx];
    memset(nd, 0, sizeof *nd);
    nd->m.rec = *rec;
    nd->m.state = st;
    nd->m.incarnation = inc;
    nd->m.instance = instance;
    nd->m.since_ms = now;
    s_index(m, idx);
    m->nsuspect += st == PC_MEMBER_SUSPECT;
    s_count_live(m, nd, +1, now);
    /* A newcomer joins the probe round at a random place still ahead. */
    m->order[m->norder++] = (uint32_t)idx;
    size_t ahead = m->norder - m->probe_pos;
    size_t j = m->probe_pos + s_below(m, (uint32_t)ahead);
    m->order[m->norder - 1] = m->order[j];
    m->order[j] = (uint32_t)idx;
    return nd;
}

/* Puts every node but this peer into the probe order, shuffled. */
static void s_reshuffle(pc_members *m)
{
    m->norder = 0;
    for (size_t i = 1; i < m->n; i++)
        m->order[m->norder++] = (uint32_t)i;
    for (size_t i = m->norder; i > 1; i--) {
        size_t j = s_below(m, (uint32_t)i);
        uint32_t t = m->order[i - 1];
        m->order[i - 1] = m->order[j];
        m->order[j] = t;
    }
    m->probe_pos = 0;
}

/* Forgets the nodes DEAD or LEFT for dead_keep_ms; returns the earliest
 * time another one is due, or UINT64_MAX. */
static uint64_t s_forget(pc_members *m, uint64_t now)
{
    uint64_t next = UINT64_MAX;
    size_t keep = 1;
    for (size_t i = 1; i < m->n; i++) {
        s_node *nd = &m->nodes[i];
        bool down = s_down(nd->m.state);
        uint64_t due = nd->m.since_ms + (uint64_t)m->o.dead_keep_ms;
        if (down && now >= due) {
            m->ndown--;
            continue;
        }
        if (down && due < next)
            next = due;
        m->nodes[keep++] = *nd;
    }
    if (keep == m->n)
        return next;
    m->n = keep;
    /* Indexes moved: rebuild what holds them (same size: cannot fail). */
    s_reindex(m, m->n);
    s_reshuffle(m);
    m->nqueue = 0;
    for (size_t i = 0; i < m->n; i++)
        if (m->nodes[i].queued)
            m->queue[m->nqueue++] = (uint32_t)i;
    return next;
}

/* ===================================================================
 * Dissemination: one pending update per node, its newest
 * =================================================================== */

/* Queues nd's current state for gossip (replacing what was queued). */
static void s_queue(pc_members *m, s_node *nd)
{
    nd->transmits = 0;
    nd->qseq = ++m->qseq;
    if (nd->queued)
        return;
    if (RT_VEC_RESERVE(m->queue, m->queue_cap, m->nqueue, 1))
        return; /* out of memory: the update spreads through push-pull */
    nd->queued = true;
    m->queue[m->nqueue++] = (uint32_t)(nd - m->nodes);
}

/* Times an update is sent: lambda * ceil(log10(n + 1)), as memberlist. */
static uint32_t s_retransmit_limit(const pc_members *m)
{
    uint32_t digits = 0;
    for (size_t n = m->n + 1; n > 1; n = (n + 9) / 10)
        digits++;
    return S_LAMBDA * (digits ? digits : 1);
}

/* Whether queued node a goes before b: fewer sends first, then newer. */
static bool s_before(const s_node *a, const s_node *b)
{
    return a->transmits != b->transmits ? a->transmits < b->transmits : a->qseq > b->qseq;
}

/* Writes the updates that go with a message to `to` (NULL: a whole
 * view follows instead): about `to` itself first when this peer holds it
 * suspect or dead (so it can refute), then up to gossip_max queued ones,
 * least sent and newest first. Retires updates sent often enough. */
static void s_put_gossip(pc_members *m, pc_wbuf *w, const char *to)
{
    uint32_t pick[PC_MEM_GOSSIP_CAP] = {0};
    size_t npick = 0, cap = (size_t)m->o.gossip_max;
    uint32_t limit = s_retransmit_limit(m);
    s_node *dest = to ? s_find(m, to) : NULL;
    bool tell = dest && (dest->m.state == PC_MEMBER_SUSPECT || dest->m.state == PC_MEMBER_DEAD);
    if (tell)
        cap--;
    size_t keep = 0;
    for (size_t i = 0; i < m->nqueue; i++) {
        s_node *nd = &m->nodes[m->queue[i]];
        if (nd->transmits >= limit) {
            nd->queued = false;
            continue;
        }
        m->queue[keep++] = m->queue[i];
        if (nd == dest && tell)
            continue;
        /* Insertion into the sorted picks, dropping the worst past cap. */
        size_t at = npick;
        while (at > 0 && s_before(nd, &m->nodes[pick[at - 1]]))
            at--;
        if (at >= cap)
            continue;
        if (npick < cap)
            npick++;
        memmove(&pick[at + 1], &pick[at], (npick - 1 - at) * sizeof *pick);
        pick[at] = m->queue[i];
    }
    m->nqueue = keep;
    pc_mem_put_var(w, npick + tell);
    if (tell)
        pc_mem_put_update_by(w, &dest->m, false, dest->accuser);
    for (size_t i = 0; i < npick; i++) {
        s_node *nd = &m->nodes[pick[i]];
        pc_mem_put_update_by(w, &nd->m, nd->m.state == PC_MEMBER_ALIVE, nd->accuser);
        nd->transmits++;
    }
}

/* ===================================================================
 * Sending
 * =================================================================== */

/* Starts a message in m->out with the head. */
static pc_wbuf *s_begin(pc_members *m)
{
    m->out.len = 0;
    m->out.err = 0;
    pc_mem_put_head(&m->out, m->mesh, m->settled ? 0 : PC_MEM_PROVISIONAL);
    return &m->out;
}

/* Ends the message in m->out with its gossip (or, for a SYNC, the whole
 * view) and sends it; a message the writer could not build is not sent. */
static void s_finish(pc_members *m, const char *to, uint16_t type)
{
    pc_wbuf *w = &m->out;
    if (type == PC_M_SYNC) {
        pc_mem_put_var(w, m->n);
        for (size_t i = 0; i < m->n; i++) {
            const pc_member *mb = &m->nodes[i].m;
            pc_mem_put_update_by(w, mb, mb->state <= PC_MEMBER_SUSPECT, m->nodes[i].accuser);
        }
    } else if (type == PC_M_JOIN) {
        pc_mem_put_var(w, 1);
        pc_mem_put_update(w, &m->nodes[0].m, true);
    } else {
        s_put_gossip(m, w, to);
    }
    if (w->err)
        return;
    m->st.sent++;
    m->st.bytes_sent += w->len;
    m->io.send(m->io.ud, to, type, w->data, w->len);
}

/* Whether the set of live members has not changed for S_QUIET periods. */
static bool s_settled(const pc_members *m, uint64_t now)
{
    return now >= m->digest_at + (uint64_t)S_QUIET * (uint64_t)m->o.period_ms;
}

static void s_put_digest(pc_members *m, pc_wbuf *w, uint64_t now, uint8_t flags)
{
    pc_put_u32(w, m->digest);
    pc_put_u8(w, (uint8_t)(flags | (s_settled(m, now) ? PC_MEM_SETTLED : 0)));
}

/* A PING (with this peer's digest) or a PING_REQ of target. */
static void s_send_probe(pc_members *m, const char *to, uint16_t type, uint32_t seq,
                         const char *target, uint64_t now)
{
    pc_wbuf *w = s_begin(m);
    pc_mem_put_var(w, seq);
    pc_mem_put_str(w, target);
    if (type == PC_M_PING)
        s_put_digest(m, w, now, 0);
    s_finish(m, to, type);
}

/* An ACK of probe seq, or a nack (flags PC_MEM_NACK). */
static void s_send_ack(pc_members *m, const char *to, uint32_t seq, uint64_t now, uint8_t flags)
{
    pc_wbuf *w = s_begin(m);
    pc_mem_put_var(w, seq);
    s_put_digest(m, w, now, flags);
    s_finish(m, to, PC_M_ACK);
}

static void s_send_sync(pc_members *m, const char *to, uint8_t flags)
{
    pc_put_u8(s_begin(m), flags);
    s_finish(m, to, PC_M_SYNC);
}

static void s_send_gossip(pc_members *m, const char *to)
{
    s_begin(m);
    s_finish(m, to, PC_M_GOSSIP);
}

/* Adds node i to out[*got] if it is in `states`, not `except`, not there. */
static void s_pick_one(const pc_members *m, uint32_t *out, size_t *got, uint32_t i, unsigned states,
                       const s_node *except)
{
    const s_node *nd = &m->nodes[i];
    for (size_t j = 0; j < *got; j++)
        if (out[j] == i)
            return;
    if (nd != except && (states >> nd->m.state & 1u))
        out[(*got)++] = i;
}

/* Picks up to k distinct random members in `states` (a mask of 1 <<
 * state), never this peer nor `except`; returns how many were found. */
static size_t s_pick(pc_members *m, uint32_t *out, size_t k, unsigned states, const s_node *except)
{
    size_t got = 0;
    if (m->n < 2)
        return 0;
    uint32_t others = (uint32_t)(m->n - 1);
    /* Random draws find them at once in a large view; a walk from a
     * random place finishes a small or sparse one. */
    for (size_t tries = 0; got < k && tries < 4 * k + 8; tries++)
        s_pick_one(m, out, &got, 1 + s_below(m, others), states, except);
    uint32_t start = s_below(m, others);
    for (uint32_t s = 0; got < k && s < others; s++)
        s_pick_one(m, out, &got, 1 + (start + s) % others, states, except);
    return got;
}

#define S_LIVE ((1u << PC_MEMBER_ALIVE) | (1u << PC_MEMBER_SUSPECT))

/* Sends GOSSIP to up to k live members. */
static void s_gossip_to(pc_members *m, size_t k)
{
    uint32_t to[S_FANOUT_MAX];
    size_t got = s_pick(m, to, k < S_FANOUT_MAX ? k : S_FANOUT_MAX, S_LIVE, NULL);
    for (size_t i = 0; i < got && m->nqueue; i++)
        s_send_gossip(m, m->nodes[to[i]].m.rec.endpoint);
}

/* ===================================================================
 * State changes and the incarnation rules
 * =================================================================== */

/* Moves nd to state st at incarnation inc, queues it for gossip and tells
 * the host of a new state (and of a new member or new data, ALIVE from
 * ALIVE). */
static void s_set(pc_members *m, s_node *nd, pc_member_state st, uint32_t inc, uint64_t now,
                  bool gossip)
{
    pc_member_state old = nd->m.state;
    m->nsuspect += (st == PC_MEMBER_SUSPECT) - (old == PC_MEMBER_SUSPECT);
    m->ndown += s_down(st) - s_down(old);
    if (s_down(st) != s_down(old))
        s_count_live(m, nd, s_down(st) ? -1 : +1, now);
    nd->m.state = st;
    nd->m.incarnation = inc;
    if (old != st)
        nd->m.since_ms = now;
    if (st == PC_MEMBER_SUSPECT && old != PC_MEMBER_SUSPECT)
        nd->accuser = nd->nconfirm = 0; /* a new suspicion: its accuser is set after */
    if (gossip)
        s_queue(m, nd);
    if (m->io.changed && nd != m->nodes && (old != st || st == PC_MEMBER_ALIVE))
        m->io.changed(m->io.ud, &nd->m, old);
}

/* Counts another peer's suspicion of nd, which nd holds SUSPECT already:
 * an independent confirmation, unless that peer raised it or confirmed. */
static void s_confirm(s_node *nd, uint32_t accuser)
{
    if (!accuser || accuser == nd->accuser || nd->nconfirm == S_CONFIRM_MAX)
        return;
    for (uint32_t i = 0; i < nd->nconfirm; i++)
        if (nd->confirm[i] == accuser)
            return;
    nd->confirm[nd->nconfirm++] = accuser;
}

/* This peer refutes a suspicion (or a death, or news of a newer self):
 * a sign that it may be the slow one. */
static void s_refute(pc_members *m, uint32_t accused)
{
    s_node *me = &m->nodes[0];
    me->m.incarnation = accused + 1;
    m->st.refutations++;
    s_health(m, +1);
    s_queue(m, me);
}

/* Takes update u about nd, of a later life of nd's endpoint than the one
 * held: the earlier life is gone (the host is told it died, if it did not
 * know), and the record is the later one's. */
static void s_new_life(pc_members *m, uint64_t now, s_node *nd, const pc_mem_update *u,
                       pc_member_state st)
{
    if (!s_down(nd->m.state))
        s_set(m, nd, PC_MEMBER_DEAD, nd->m.incarnation, now, false);
    nd->m.instance = u->instance;
    if (u->has_rec)
        nd->m.rec = u->rec;
    s_set(m, nd, st, u->incarnation, now, true);
}

/* Applies one update heard from the network (from_sync: in a push-pull,
 * where a death is taken as a suspicion and news of a member already
 * spreading elsewhere is not gossiped again; sender_down: from a peer held
 * DEAD or LEFT here).
 *
 * Two rules keep a peer that was cut off from spreading its view: its
 * word on others counts only once it is back (a peer that could not hear
 * the others judged them dead meanwhile), and a death of a member held
 * ALIVE here is taken as a suspicion, which that member refutes if it
 * lives (a member held SUSPECT here, whose suspicion this peer heard or
 * raised, is taken for dead at once). */
static void s_apply(pc_members *m, uint64_t now, const pc_mem_update *u, bool from_sync,
                    const char *from, bool sender_down)
{
    s_node *me = &m->nodes[0];
    if (!strcmp(u->rec.endpoint, me->m.rec.endpoint)) {
        if (me->m.state == PC_MEMBER_LEFT || u->instance < me->m.instance)
            return; /* news of an earlier life of this endpoint */
        if (u->instance > me->m.instance) {
            /* A life the others hold later than this one (a clock set
             * back): this peer takes an instance past it. */
            s_count_live(m, me, -1, now);
            me->m.instance = u->instance + 1;
            me->m.incarnation = 0;
            s_count_live(m, me, +1, now);
            m->st.refutations++;
            s_queue(m, me);
        } else if (u->state == PC_MEMBER_ALIVE ? u->incarnation > me->m.incarnation
                                               : u->incarnation >= me->m.incarnation) {
            s_refute(m, u->incarnation);
        }
        return;
    }
    pc_member_state st = u->state;
    if (sender_down && (st == PC_MEMBER_SUSPECT || st == PC_MEMBER_DEAD) &&
        strcmp(u->rec.endpoint, from))
        return;
    if (from_sync && st == PC_MEMBER_DEAD)
        st = PC_MEMBER_SUSPECT;
    s_node *nd = s_find(m, u->rec.endpoint);
    if (!nd) {
        if (!u->has_rec || s_down(st))
            return; /* news of the death of a stranger */
        nd = s_add(m, &u->rec, PC_MEMBER_ALIVE, u->incarnation, u->instance, now);
        if (!nd)
            return;
        s_set(m, nd, st, u->incarnation, now, !from_sync);
        return;
    }
    if (u->instance != nd->m.instance) {
        if (u->instance > nd->m.instance && (u->has_rec || s_down(st)))
            s_new_life(m, now, nd, u, st);
        return; /* an earlier life, or a later one's suspicion without its record */
    }
    pc_member_state cur = nd->m.state;
    uint32_t ci = nd->m.incarnation;
    if (st == PC_MEMBER_DEAD && cur == PC_MEMBER_ALIVE)
        st = PC_MEMBER_SUSPECT;
    bool take;
    switch (st) {
    case PC_MEMBER_ALIVE:
        take = u->incarnation > ci;
        break;
    case PC_MEMBER_SUSPECT:
        take = (cur == PC_MEMBER_ALIVE && u->incarnation >= ci) ||
               (cur == PC_MEMBER_SUSPECT && u->incarnation > ci);
        break;
    case PC_MEMBER_DEAD:
        take = !s_down(cur) && u->incarnation >= ci;
        break;
    default:
        take = cur != PC_MEMBER_LEFT && u->incarnation >= ci;
        break;
    }
    if (!take) {
        /* Heard again: it is spreading, and counts as one of our sends
         * (rumour mongering's feedback), so queues drain sooner. */
        if (!from_sync && nd->queued && u->state == cur && u->incarnation == ci)
            nd->transmits++;
        if (st == PC_MEMBER_SUSPECT && cur == PC_MEMBER_SUSPECT && u->incarnation == ci)
            s_confirm(nd, u->accuser);
        return;
    }
    if (u->has_rec && u->incarnation > ci)
        nd->m.rec = u->rec;
    s_set(m, nd, st, u->incarnation, now, true);
    if (st == PC_MEMBER_SUSPECT && !nd->accuser)
        nd->accuser = u->accuser;
}

/* Marks nd SUSPECT on this peer's own evidence (a failed probe), or
 * confirms the suspicion it holds already. */
static void s_suspect(pc_members *m, s_node *nd, uint64_t now)
{
    if (nd->m.state == PC_MEMBER_SUSPECT) {
        s_confirm(nd, m->self_hash);
        return;
    }
    m->st.suspicions++;
    s_set(m, nd, PC_MEMBER_SUSPECT, nd->m.incarnation, now, true);
    nd->accuser = m->self_hash;
}

/* How long nd stays SUSPECT (Lifeguard): suspect_max_ms without
 * confirmation, falling as log(c + 1) / log(k + 1) of the way to
 * suspect_ms as c of the k confirmations wanted arrive. */
static uint64_t s_suspect_timeout(const pc_members *m, const s_node *nd)
{
    double lo = m->o.suspect_ms, hi = m->o.suspect_max_ms, k = m->o.confirmations;
    double c = nd->nconfirm < k ? nd->nconfirm : k;
    double t = hi - (hi - lo) * log(c + 1) / log(k + 1);
    return (uint64_t)(t > lo ? t : lo);
}

/* Declares suspects past their timeout DEAD; returns when the next is due. */
static uint64_t s_expire(pc_members *m, uint64_t now)
{
    uint64_t next = UINT64_MAX;
    for (size_t i = 1; i < m->n && m->nsuspect; i++) {
        s_node *nd = &m->nodes[i];
        if (nd->m.state != PC_MEMBER_SUSPECT)
            continue;
        uint64_t due = nd->m.since_ms + s_suspect_timeout(m, nd);
        if (now >= due)
            s_set(m, nd, PC_MEMBER_DEAD, nd->m.incarnation, now, true);
        else if (due < next)
            next = due;
    }
    return next;
}

void pc_members_refused(pc_members *m, const char *endpoint, uint64_t instance, uint64_t now_ms)
{
    s_node *nd = s_find(m, endpoint);
    if (!nd || nd == m->nodes || nd->m.instance != instance)
        return;
    if (nd->m.state == PC_MEMBER_SUSPECT) {
        m->st.refused++;
        s_set(m, nd, PC_MEMBER_DEAD, nd->m.incarnation, now_ms, true);
    } else if (nd->m.state == PC_MEMBER_ALIVE) {
        m->st.refused++;
        s_suspect(m, nd, now_ms);
    }
}

/* ===================================================================
 * The probe cycle
 * =================================================================== */

/* The next member of the round to probe (ALIVE or SUSPECT), or NULL. */
static s_node *s_next_target(pc_members *m)
{
    for (int pass = 0; pass < 2; pass++) {
        while (m->probe_pos < m->norder) {
            uint32_t i = m->order[m->probe_pos++];
            if (i < m->n && !s_down(m->nodes[i].m.state))
                return &m->nodes[i];
        }
        s_reshuffle(m);
    }
    return NULL;
}

static void s_probe_start(pc_members *m, uint64_t now)
{
    s_node *t = s_next_target(m);
    if (!t)
        return;
    m->probing = true;
    m->acked = false;
    m->indirect_sent = false;
    m->nacks_expected = m->nacks = 0;
    m->probe_seq = ++m->seq;
    m->probe_start = now;
    m->probe_timeout = s_scaled(m, m->o.probe_timeout_ms);
    m->probe_len = s_scaled(m, m->o.period_ms);
    memcpy(m->probe_target, t->m.rec.endpoint, sizeof m->probe_target);
    m->probe_instance = t->m.instance;
    m->st.probes++;
    s_send_probe(m, m->probe_target, PC_M_PING, m->probe_seq, m->probe_target, now);
}

/* No direct ack in time: asks `indirect` live others to probe for us. */
static void s_probe_indirect(pc_members *m, uint64_t now)
{
    uint32_t via[S_FANOUT_MAX];
    s_node *t = s_find(m, m->probe_target);
    m->indirect_sent = true;
    size_t got = s_pick(m, via, (size_t)m->o.indirect, 1u << PC_MEMBER_ALIVE, t);
    m->nacks_expected = (uint32_t)got;
    for (size_t i = 0; i < got; i++) {
        m->st.indirect_probes++;
        s_send_probe(m, m->nodes[via[i]].m.rec.endpoint, PC_M_PING_REQ, m->probe_seq,
                     m->probe_target, now);
    }
}

/* The probe's period ended: without an ack, the target becomes SUSPECT.
 * Local health gains from an answer; it loses by the nacks that did not
 * come, or by one without helpers to send nacks (as memberlist). */
static void s_probe_end(pc_members *m, uint64_t now)
{
    m->probing = false;
    if (m->acked) {
        s_health(m, -1);
        return;
    }
    uint32_t nacks = m->nacks < m->nacks_expected ? m->nacks : m->nacks_expected;
    s_health(m, m->nacks_expected ? (int)(m->nacks_expected - nacks) : 1);
    s_node *t = s_find(m, m->probe_target);
    if (t && !s_down(t->m.state) && t->m.instance == m->probe_instance)
        s_suspect(m, t, now);
}

/* Push-pull with the member `to`, or a random live one. */
static void s_sync_with(pc_members *m, const char *to)
{
    uint32_t i;
    /* sync_periods on average, jittered so that peers whose push-pulls
     * fell together (a mesh that formed at once) drift apart. */
    unsigned sp = (unsigned)m->o.sync_periods;
    m->periods_to_sync = sp - sp / 4 + s_below(m, sp / 2 + 1);
    if (!m->periods_to_sync)
        m->periods_to_sync = 1;
    m->periods_since_sync = 0;
    m->sync_base = m->n;
    /* every other push-pull, one with a member taken for dead (not yet
     * forgotten), if any: one cut off by a partition that healed then
     * hears it is taken for dead and refutes, and this side hears it
     * again (no one probes a dead member, and without this two sides
     * with nothing to say to each other would forget each other) */
    if (!to && m->ndown && s_below(m, 2) == 0 && s_pick(m, &i, 1, 1u << PC_MEMBER_DEAD, NULL))
        to = m->nodes[i].m.rec.endpoint;
    if (!to && s_pick(m, &i, 1, 1u << PC_MEMBER_ALIVE, NULL))
        to = m->nodes[i].m.rec.endpoint;
    if (to) {
        m->st.syncs++;
        s_send_sync(m, to, PC_MEM_SYNC_ANSWER);
    }
}

/* ===================================================================
 * Public interface
 * =================================================================== */

static bool s_opt(int *v, int dflt, int max)
{
    if (*v == 0)
        *v = dflt;
    return *v > 0 && *v <= max;
}

int pc_members_new(pc_members **out, const pc_peer_rec *self, const pc_members_opts *o,
                   const pc_members_io *io, uint64_t seed, uint64_t now_ms)
{
    *out = NULL;
    pc_members_opts opt = o ? *o : (pc_members_opts){0};
    if (!self || !io || !io->send || !pc_mem_endpoint_ok(self->endpoint) ||
        !memchr(self->arch, '\0', sizeof self->arch))
        return LEV_EINVAL;
    if (!s_opt(&opt.period_ms, 200, 3600000) || !s_opt(&opt.probe_timeout_ms, 80, 3600000) ||
        !s_opt(&opt.indirect, 3, S_FANOUT_MAX) ||
        !s_opt(&opt.suspect_ms, PC_MEMBERS_SUSPECT_MS, 86400000) ||
        !s_opt(&opt.dead_keep_ms, 30000, 86400000) || !s_opt(&opt.sync_periods, 25, 1000000) ||
        !s_opt(&opt.gossip_max, 8, PC_MEM_GOSSIP_CAP) || opt.probe_timeout_ms >= opt.period_ms ||
        (opt.health_max != -1 && !s_opt(&opt.health_max, S_HEALTH_MAX, 64)) ||
        !s_opt(&opt.suspect_max_ms, opt.suspect_ms, 86400000) ||
        opt.suspect_max_ms < opt.suspect_ms || !s_opt(&opt.confirmations, 3, S_CONFIRM_MAX))
        return LEV_EINVAL;
    if (opt.health_max < 0)
        opt.health_max = 0; /* off: the score stays 0 */
    pc_members *m = calloc(1, sizeof *m);
    if (!m)
        return LEV_ENOMEM;
    m->o = opt;
    m->io = *io;
    m->rng = seed;
    pc_wbuf_init(&m->out);
    /* A mesh id given is settled; a drawn one is this peer's mesh's until
     * it joins a seed, whose id it then adopts (never 0: 0 is "none"). */
    uint64_t ids = seed ^ 0x6D657368u; /* a stream of its own: the probe order stays seed's */
    m->settled = opt.mesh_id != 0;
    m->mesh = opt.mesh_id;
    while (!m->mesh)
        m->mesh = s_mix(&ids);
    /* A later start on this endpoint has a later now_ms (the same clock),
     * so a higher instance; random low bits part two starts in one ms. */
    uint64_t instance = opt.instance ? opt.instance : (now_ms + 1) << 20 | (s_mix(&ids) & 0xFFFFF);
    if (!s_add(m, self, PC_MEMBER_ALIVE, 0, instance, now_ms)) {
        pc_members_destroy(&m);
        return LEV_ENOMEM;
    }
    m->norder = 0; /* this peer is never probed */
    m->self_hash = s_hash(self->endpoint) ? s_hash(self->endpoint) : 1;
    s_queue(m, &m->nodes[0]);
    m->seq = (uint32_t)s_rand(m);
    /* Random phases, so that peers started together do not beat as one. */
    m->next_probe = now_ms + s_below(m, (uint32_t)opt.period_ms);
    m->next_gossip = now_ms + s_below(m, (uint32_t)opt.period_ms);
    m->periods_to_sync = 1 + s_below(m, (uint32_t)opt.sync_periods);
    *out = m;
    return 0;
}

void pc_members_destroy(pc_members **m_p)
{
    pc_members *m = m_p ? *m_p : NULL;
    if (!m)
        return;
    free(m->nodes);
    free(m->slots);
    free(m->order);
    free(m->queue);
    pc_wbuf_free(&m->out);
    free(m);
    *m_p = NULL;
}

void pc_members_join(pc_members *m, const char *seed, uint64_t now_ms)
{
    (void)now_ms;
    if (!m || !pc_mem_endpoint_ok(seed) || !strcmp(seed, m->nodes[0].m.rec.endpoint) ||
        m->nodes[0].m.state == PC_MEMBER_LEFT)
        return;
    unsigned i = 0;
    while (i < m->nseeds && strcmp(m->seeds[i], seed))
        i++;
    if (i == m->nseeds) { /* remembered; the oldest forgotten when full */
        if (m->nseeds == S_SEEDS)
            memmove(m->seeds[0], m->seeds[1], --m->nseeds * sizeof m->seeds[0]);
        memcpy(m->seeds[m->nseeds++], seed, strlen(seed) + 1);
    }
    s_begin(m);
    s_finish(m, seed, PC_M_JOIN);
}

/* Sends the nacks of indirect probes unanswered by now, and forgets the
 * expired ones; returns when the next nack is due, or UINT64_MAX. */
static uint64_t s_relays_due(pc_members *m, uint64_t now)
{
    uint64_t next = UINT64_MAX;
    for (size_t i = 0; i < m->nrelays;) {
        s_relay *r = &m->relays[i];
        if (now >= r->expires) {
            *r = m->relays[--m->nrelays];
            continue;
        }
        if (r->nack_at && now >= r->nack_at) {
            r->nack_at = 0;
            s_send_ack(m, r->requester, r->their_seq, now, PC_MEM_NACK);
        }
        if (r->nack_at && r->nack_at < next)
            next = r->nack_at;
        i++;
    }
    return next;
}

uint64_t pc_members_tick(pc_members *m, uint64_t now_ms)
{
    uint64_t period = (uint64_t)m->o.period_ms;
    bool left = m->nodes[0].m.state == PC_MEMBER_LEFT;
    if (m->probing && !m->acked && !m->indirect_sent && now_ms >= m->probe_start + m->probe_timeout)
        s_probe_indirect(m, now_ms);
    if (m->probing && now_ms >= m->probe_start + m->probe_len)
        s_probe_end(m, now_ms);
    if (now_ms >= m->next_probe) {
        /* A probe a period, fewer while this peer's health is poor. */
        uint64_t probe_period = s_scaled(m, m->o.period_ms);
        m->next_probe += probe_period;
        if (m->next_probe <= now_ms)
            m->next_probe = now_ms + probe_period;
        if (!left)
            s_probe_start(m, now_ms);
        /* Anti-entropy every sync_periods, and every S_CATCHUP periods
         * while the view grows by a quarter between push-pulls (a mesh
         * forming, where whole views spread faster than gossip). */
        m->periods_since_sync++;
        bool growing = m->n > m->sync_base + m->sync_base / 4 && m->periods_since_sync >= S_CATCHUP;
        if (!left && (--m->periods_to_sync == 0 || growing))
            s_sync_with(m, NULL);
    }
    if (now_ms >= m->next_gossip) {
        m->next_gossip += period;
        if (m->next_gossip <= now_ms)
            m->next_gossip = now_ms + period;
        if (m->nqueue)
            s_gossip_to(m, S_GOSSIP_NODES);
    }
    uint64_t next = m->next_probe < m->next_gossip ? m->next_probe : m->next_gossip;
    if (m->probing) {
        uint64_t t =
            m->probe_start + (m->acked || m->indirect_sent ? m->probe_len : m->probe_timeout);
        next = t < next ? t : next;
    }
    uint64_t t = m->nsuspect ? s_expire(m, now_ms) : UINT64_MAX;
    next = t < next ? t : next;
    t = m->ndown ? s_forget(m, now_ms) : UINT64_MAX;
    next = t < next ? t : next;
    t = s_relays_due(m, now_ms);
    next = t < next ? t : next;
    return next > now_ms ? next : now_ms + 1;
}

/* Runs an indirect probe of `target` for `from` (a PING_REQ). */
static void s_relay_probe(pc_members *m, uint64_t now, const char *from, uint32_t seq,
                          const char *target)
{
    size_t slot = m->nrelays;
    if (slot == S_RELAY_MAX) { /* full: the oldest gives way */
        slot = 0;
        for (size_t i = 1; i < m->nrelays; i++)
            if (m->relays[i].expires < m->relays[slot].expires)
                slot = i;
    } else {
        m->nrelays++;
    }
    s_relay *r = &m->relays[slot];
    r->seq = ++m->seq;
    r->their_seq = seq;
    r->nack_at = now + (uint64_t)m->o.probe_timeout_ms;
    r->expires = now + (uint64_t)m->o.period_ms;
    memcpy(r->requester, from, strlen(from) + 1);
    s_send_probe(m, target, PC_M_PING, r->seq, target, now);
}

/* An ACK: of this peer's probe, or of one it runs for another peer; or a
 * nack of a helper of this peer's probe. */
static void s_acked(pc_members *m, uint32_t seq, uint8_t flags, uint64_t now)
{
    if (m->probing && seq == m->probe_seq) {
        if (flags & PC_MEM_NACK)
            m->nacks++;
        else
            m->acked = true;
        return;
    }
    if (flags & PC_MEM_NACK)
        return; /* a nack of an ended probe */
    for (size_t i = 0; i < m->nrelays; i++) {
        if (m->relays[i].seq != seq)
            continue;
        s_relay r = m->relays[i];
        m->relays[i] = m->relays[--m->nrelays];
        s_send_ack(m, r.requester, r.their_seq, now, 0);
        return;
    }
    /* A late ack: the probe is over. */
}

/* Whether msg, checked, comes from this peer's mesh. A settled peer also
 * takes what a newcomer sends (a join, or a message from a live member
 * that has not settled its id yet). A peer whose id is not settled
 * (drawn, not configured) trusts the seeds it asked and the live members
 * it learned of from them: it settles its id from the first settled one
 * such a peer sends, or, when it asked no seed (the first peer of a
 * mesh), from the first join it serves; until then a drawn id lower than
 * its own, heard from them or from a joiner, replaces it, so that peers
 * that start together and join each other agree on one id. */
static bool s_same_mesh(pc_members *m, uint16_t type, const pc_mem_msg *msg, const char *from)
{
    bool provisional = msg->hflags & PC_MEM_PROVISIONAL;
    const s_node *sender = s_find(m, from);
    bool known = sender && !s_down(sender->m.state);
    if (m->settled) /* a joiner, or a member yet to settle: it will take this id */
        return msg->mesh == m->mesh || (provisional && (type == PC_M_JOIN || known));
    bool trusted = known;
    for (unsigned i = 0; i < m->nseeds && !trusted; i++)
        trusted = !strcmp(m->seeds[i], from);
    if (!trusted && type != PC_M_JOIN)
        return msg->mesh == m->mesh;
    if (provisional) {
        if (msg->mesh < m->mesh)
            m->mesh = msg->mesh;
        m->settled = !trusted && !m->nseeds;
        return true;
    }
    if (!trusted && m->nseeds)
        return msg->mesh == m->mesh; /* a settled joiner: its id against the seeds' */
    m->mesh = msg->mesh;
    m->settled = true;
    return true;
}

int pc_members_recv(pc_members *m, uint64_t now_ms, const char *from, uint16_t type,
                    const void *payload, size_t len, const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    *why = NULL;
    m->st.received++;
    pc_mem_msg msg;
    if (!pc_mem_endpoint_ok(from))
        *why = "sender is not a valid endpoint";
    else if (!strcmp(from, m->nodes[0].m.rec.endpoint))
        *why = "message from this peer's own endpoint";
    else
        *why = pc_mem_parse(type, payload, len, from, m->nodes[0].m.rec.endpoint, &msg);
    if (*why) {
        m->st.dropped++;
        return LEV_EINVAL;
    }
    if (!s_same_mesh(m, type, &msg, from)) {
        m->st.foreign++;
        *why = "from another mesh";
        return 0;
    }
    bool left = m->nodes[0].m.state == PC_MEMBER_LEFT;
    if (left && (type == PC_M_JOIN || type == PC_M_PING_REQ))
        return 0; /* no longer a seed nor a helper */
    if (type == PC_M_JOIN) {
        /* The answer goes before the host hears of the newcomer, so that
         * the newcomer has this mesh's id before anything the host sends
         * it on the same connection. */
        m->st.syncs++;
        s_send_sync(m, from, 0);
    }
    pc_rbuf r;
    pc_rbuf_init(&r, payload, len);
    r.off = msg.updates_off;
    const s_node *sender = s_find(m, from);
    bool sender_down = sender && s_down(sender->m.state);
    for (uint32_t i = 0; i < msg.nupdates; i++) {
        pc_mem_update u;
        pc_mem_get_update(&r, &u); /* checked by pc_mem_parse: cannot fail */
        s_apply(m, now_ms, &u, type == PC_M_SYNC, from, sender_down);
    }
    /* The sender has settled on another set of live members: one of us
     * missed news that gossip no longer carries. Push-pull mends it. */
    if ((type == PC_M_PING || type == PC_M_ACK) && (msg.flags & PC_MEM_SETTLED) &&
        msg.digest != m->digest && !left && m->periods_since_sync >= S_CATCHUP)
        s_sync_with(m, from);
    switch (type) {
    case PC_M_PING:
        s_send_ack(m, from, msg.seq, now_ms, 0);
        break;
    case PC_M_ACK:
        s_acked(m, msg.seq, msg.flags, now_ms);
        break;
    case PC_M_PING_REQ:
        s_relay_probe(m, now_ms, from, msg.seq, msg.target);
        break;
    case PC_M_SYNC:
        m->sync_base = m->n;
        if (msg.flags & PC_MEM_SYNC_ANSWER) {
            m->st.syncs++;
            s_send_sync(m, from, 0);
        }
        break;
    default: /* PC_M_GOSSIP, its updates were all; PC_M_JOIN, answered above */
        break;
    }
    return 0;
}

void pc_members_update_self(pc_members *m, const pc_peer_rec *self, uint64_t now_ms)
{
    (void)now_ms;
    s_node *me = &m->nodes[0];
    if (!self || me->m.state == PC_MEMBER_LEFT || !memchr(self->arch, '\0', sizeof self->arch))
        return;
    char endpoint[PC_ENDPOINT_MAX];
    memcpy(endpoint, me->m.rec.endpoint, sizeof endpoint);
    me->m.rec = *self;
    memcpy(me->m.rec.endpoint, endpoint, sizeof endpoint); /* its name never changes */
    me->m.incarnation++;
    s_queue(m, me);
}

void pc_members_leave(pc_members *m, uint64_t now_ms)
{
    s_node *me = &m->nodes[0];
    if (me->m.state == PC_MEMBER_LEFT)
        return;
    s_set(m, me, PC_MEMBER_LEFT, me->m.incarnation, now_ms, true);
    m->probing = false;
    s_gossip_to(m, S_LEAVE_FANOUT);
}

const pc_member *pc_members_find(const pc_members *m, const char *endpoint)
{
    if (!m || !endpoint)
        return NULL;
    const s_node *nd = s_find(m, endpoint);
    return nd ? &nd->m : NULL;
}

size_t pc_members_view(const pc_members *m, pc_member *out, size_t cap)
{
    for (size_t i = 0; i < m->n && i < cap; i++)
        out[i] = m->nodes[i].m;
    return m->n;
}

size_t pc_members_count_live(const pc_members *m) { return m->n - m->ndown; }

void pc_members_stats_get(const pc_members *m, pc_members_stats *st) { *st = m->st; }

uint64_t pc_members_mesh_id(const pc_members *m) { return m->mesh; }

bool pc_members_mesh_settled(const pc_members *m) { return m->settled; }

int pc_members_health(const pc_members *m) { return m->health; }

const char *pc_member_state_name(pc_member_state s)
{
    switch (s) {
    case PC_MEMBER_ALIVE:
        return "alive";
    case PC_MEMBER_SUSPECT:
        return "suspect";
    case PC_MEMBER_DEAD:
        return "dead";
    case PC_MEMBER_LEFT:
        return "left";
    }
    return "?";
}
