/* membership.h - the membership protocol of the participation manager
 * (membership.c): SWIM-style gossip membership with direct and indirect
 * probes, suspicion and refutation by incarnation numbers, and
 * dissemination piggybacked on the probes, plus a periodic push-pull of
 * the whole view with one random member (anti-entropy) and a join
 * through seeds.
 *
 * It is a pure state machine: no sockets, no threads, no clock of its
 * own. The caller feeds it received messages and the time, and it sends
 * through a callback; so the same code runs in levpeer (participation.c,
 * on the peer's network thread) and in the simulation of thousands of
 * peers in one process (tests and eval/). Not thread-safe: one caller.
 *
 * Peers are named by their endpoint ("tcp://127.0.0.1:4000"). Each peer
 * keeps a record of every peer it has heard of, with a state:
 *   ALIVE    answering;
 *   SUSPECT  a probe and the indirect probes through `indirect` others
 *            went unanswered: suspected, which the peer itself refutes by
 *            gossiping ALIVE with a higher incarnation;
 *   DEAD     suspect for suspect_ms without refutation, or said dead by
 *            another peer while suspect here, or its port refused a
 *            connection (pc_members_refused); forgotten after dead_keep_ms;
 *   LEFT     said goodbye (pc_members_leave).
 * A record's data (cores, rate, load...) spread with its incarnation: a
 * peer bumps its own incarnation when its data change.
 *
 * A mesh has a 64-bit id, which every message carries: a peer ignores
 * (counts in `foreign`) what comes from another mesh. A record's identity
 * is its endpoint and its instance, a number each start of a peer draws
 * higher than any earlier start's on that endpoint: news of an earlier
 * life of an endpoint never touches the later one.
 */
#ifndef PC_MEMBERSHIP_H
#define PC_MEMBERSHIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

/* What a peer announces about itself. */
typedef struct pc_peer_rec {
    char endpoint[PC_ENDPOINT_MAX]; /* its listen endpoint: its name */
    uint32_t cores;                 /* cores offered to the mesh (0: none) */
    uint32_t rate;                  /* measured work units per second per core */
    uint32_t load;                  /* VTs running there now */
    char arch[16];                  /* "x86_64", "aarch64"... */
    uint8_t big_endian;             /* byte order */
    uint32_t version;               /* PC_WIRE_VERSION it speaks */
} pc_peer_rec;

typedef enum pc_member_state {
    PC_MEMBER_ALIVE = 0,
    PC_MEMBER_SUSPECT,
    PC_MEMBER_DEAD,
    PC_MEMBER_LEFT
} pc_member_state;

/* One entry of a peer's view. */
typedef struct pc_member {
    pc_peer_rec rec;
    pc_member_state state;
    uint32_t incarnation;
    uint64_t instance; /* which start of the peer at that endpoint (higher: later) */
    uint64_t since_ms; /* when it entered its state, on the caller's clock */
} pc_member;

/* The default suspicion timeout: longer than a pause of 3 s, which then
 * costs no rollback; a crashed process is confirmed dead sooner by its
 * refused port (pc_members_refused), a host that is gone only by this
 * timeout (eval/vcsim/README.md measures the trade-off). */
#define PC_MEMBERS_SUSPECT_MS 3500

typedef struct pc_members_opts {
    int period_ms;        /* protocol period: one probe per period; 0: 200 */
    int probe_timeout_ms; /* wait for a direct ack before indirect probes; 0: 80 */
    int indirect;         /* members asked to probe indirectly; 0: 3 */
    int suspect_ms;       /* SUSPECT to DEAD without refutation; 0: PC_MEMBERS_SUSPECT_MS */
    int dead_keep_ms;     /* DEAD or LEFT records forgotten after; 0: 30000 */
    int sync_periods;     /* push-pull with a random member every N periods; 0: 25 */
    int gossip_max;       /* updates piggybacked on one message; 0: 8 */
    /* The mesh's id; 0: a peer that joins adopts its seed's, one that
     * joins no one keeps the one it draws. */
    uint64_t mesh_id;
    /* This start of the peer; must exceed every earlier start's on the
     * same endpoint (levpeer: from the wall clock); 0: from now_ms. */
    uint64_t instance;
    /* Lifeguard's local health: the highest score (probe timeout and
     * period scale by score + 1); 0: 8; -1: off. */
    int health_max;
    /* Lifeguard's suspicion timeout: a suspicion starts at suspect_max_ms
     * and falls to suspect_ms as `confirmations` other peers suspect the
     * same member; 0: suspect_ms (a fixed timeout). */
    int suspect_max_ms;
    int confirmations; /* confirmations that bring it to suspect_ms; 0: 3; at most 16 */
} pc_members_opts;

/* What the state machine needs from its host. */
typedef struct pc_members_io {
    /* Sends a membership message (type PC_M_*) to the peer at `to`. The
     * payload is borrowed for the call. Delivery may fail silently. */
    void (*send)(void *ud, const char *to, uint16_t type, const void *payload, size_t len);
    /* A member changed state (a new member arrives as ALIVE from ALIVE;
     * a forgotten one leaves with new_state == old_state == DEAD or LEFT
     * is not reported). Called from inside tick and recv. */
    void (*changed)(void *ud, const pc_member *m, pc_member_state old_state);
    void *ud;
} pc_members_io;

/* Counters since pc_members_new. */
typedef struct pc_members_stats {
    uint64_t sent, received; /* messages */
    uint64_t bytes_sent;
    uint64_t probes, indirect_probes, suspicions, refutations, syncs;
    uint64_t dropped; /* malformed or unexpected messages ignored */
    uint64_t foreign; /* messages from another mesh, ignored */
    uint64_t refused; /* members judged by a refused connection (pc_members_refused) */
} pc_members_stats;

typedef struct pc_members pc_members;

/* Creates the membership of the peer described by self; o may be NULL;
 * seed seeds the random choice of probe targets. 0, LEV_EINVAL (no
 * endpoint, bad options) or LEV_ENOMEM. Caller owns *out. */
int pc_members_new(pc_members **out, const pc_peer_rec *self, const pc_members_opts *o,
                   const pc_members_io *io, uint64_t seed, uint64_t now_ms);

/* Frees it; accepts NULL and sets *m_p to NULL. */
void pc_members_destroy(pc_members **m_p);

/* Asks a seed to let this peer in (JOIN; the seed answers with its whole
 * view). Joining again later is harmless: call it until a member is known. */
void pc_members_join(pc_members *m, const char *seed, uint64_t now_ms);

/* Runs the timers due at now_ms (probes, their timeouts, suspicion
 * expiry, push-pull). Returns the time at which it wants to be called
 * next (never later than one period ahead). */
uint64_t pc_members_tick(pc_members *m, uint64_t now_ms);

/* Handles one received membership message from the peer at `from`.
 * 0, or LEV_EINVAL when it is malformed (counted in dropped, *why says
 * what was wrong); the state is unchanged by a malformed message. A
 * message of another mesh returns 0 with *why set, counted in foreign,
 * and changes nothing either. */
int pc_members_recv(pc_members *m, uint64_t now_ms, const char *from, uint16_t type,
                    const void *payload, size_t len, const char **why);

/* Evidence from outside the protocol: a connection to `endpoint` was
 * refused, so no process listens there, and the life `instance` of that
 * endpoint is over (a crashed or killed peer; a stopped or paused one
 * still has its port open, and an unreachable host does not refuse). A
 * member of that instance held SUSPECT becomes DEAD at once, one held
 * ALIVE becomes SUSPECT; anything else is left alone (a later life of
 * the endpoint is never touched). The host probes the port of a member
 * when it turns SUSPECT (changed), so that a crash is confirmed without
 * waiting out the suspicion timeout, which can then be long enough for a
 * paused peer to come back. */
void pc_members_refused(pc_members *m, const char *endpoint, uint64_t instance, uint64_t now_ms);

/* Changes this peer's own data (cores, rate, load) and gossips them with
 * a new incarnation. */
void pc_members_update_self(pc_members *m, const pc_peer_rec *self, uint64_t now_ms);

/* Gossips this peer's departure (LEFT) to a few members at once; the host
 * keeps ticking a little while for it to spread, then destroys. */
void pc_members_leave(pc_members *m, uint64_t now_ms);

/* The member named `endpoint` (this peer included), or NULL. The pointer
 * lives until the next call that changes the view. */
const pc_member *pc_members_find(const pc_members *m, const char *endpoint);

/* Copies up to cap entries of the view (this peer first) into out and
 * returns how many there are. */
size_t pc_members_view(const pc_members *m, pc_member *out, size_t cap);

/* Number of members this peer sees ALIVE or SUSPECT, itself included. */
size_t pc_members_count_live(const pc_members *m);

void pc_members_stats_get(const pc_members *m, pc_members_stats *st);

/* The id of this peer's mesh (drawn, configured or adopted; it may change
 * once, when a peer that joins adopts its seed's). */
uint64_t pc_members_mesh_id(const pc_members *m);

/* Whether that id is settled (configured, adopted from a seed, or given to
 * the first joiner); until then it is this peer's own draw, which a joining
 * peer replaces with its seed's as soon as the seed answers. */
bool pc_members_mesh_settled(const pc_members *m);

/* This peer's local health score: 0 healthy, up to health_max. */
int pc_members_health(const pc_members *m);

/* "alive", "suspect", "dead", "left". */
const char *pc_member_state_name(pc_member_state s);

#endif
