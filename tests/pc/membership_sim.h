/* membership_sim.h - many peers of the membership protocol (membership.h)
 * in one process, on a simulated clock and network (membership_sim.c):
 * an event queue of message deliveries and timer deadlines, a latency
 * with jitter, optional loss, peers that start, die, restart, are cut off
 * or slow, and several meshes side by side on one network. The
 * membership test (test_membership.c) and its benchmark
 * (eval/membership/) share it. Deterministic for a given seed.
 */
#ifndef MEMBERSHIP_SIM_H
#define MEMBERSHIP_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "membership.h"

#define MSIM_UNKNOWN 4 /* an observer has not heard of a peer (beside pc_member_state) */

typedef struct msim_opts {
    int n;                   /* peers */
    uint64_t seed;           /* of the network and of every peer */
    int lat_min_us;          /* latency of a message: uniform in [min, max]; 0: 200 */
    int lat_max_us;          /* 0: 2000 */
    double loss;             /* probability that a message is lost */
    int start_spread_ms;     /* peer i starts at i * spread / n (0: all at 0) */
    int late_ms;             /* > 0: the last peer starts then instead */
    int join_retry_ms;       /* a peer that sees no one joins again after; 0: 500 */
    int meshes;              /* > 1: peer i is of mesh i % meshes, and joins only its peers */
    int slow_peer;           /* the peer that is slow, when slow_max_ms > 0: */
    int slow_min_ms;         /* it handles each message it receives late by */
    int slow_max_ms;         /* a uniform [min, max] ms (a busy machine) */
    pc_members_opts members; /* every peer's options */
} msim_opts;

typedef struct msim msim;

/* Drops a message from peer `from` to peer `to` when it returns true. */
typedef bool (*msim_filter)(void *ud, int from, int to, uint16_t type, uint64_t now_ms);

/* Told every change of a peer's view: observer obs sees peer t go from
 * old to mb->state (old == mb->state == ALIVE: a new member or new data). */
typedef void (*msim_watch)(void *ud, int obs, int t, pc_member_state old, const pc_member *mb,
                           uint64_t now_ms);

/* Creates the simulation (no peer started yet: msim_run starts them at
 * their time). 0, LEV_EINVAL or LEV_ENOMEM. Caller owns *out. */
int msim_new(msim **out, const msim_opts *o);

/* Frees it and its peers; accepts NULL. */
void msim_destroy(msim **s_p);

void msim_set_filter(msim *s, msim_filter f, void *ud);
void msim_set_watch(msim *s, msim_watch w, void *ud);

/* Runs events until simulated time until_ms, or until cond holds
 * (checked after every event); returns whether cond held. cond NULL: runs
 * to until_ms and returns false. */
bool msim_run(msim *s, uint64_t until_ms, bool (*cond)(msim *s, void *ud), void *ud);

/* Simulated time, in milliseconds. */
uint64_t msim_now(const msim *s);

/* Peer i stops at once: it no longer sends, receives or ticks. */
void msim_kill(msim *s, int i);

/* Peer i leaves gracefully (pc_members_leave) and stops a second later. */
void msim_leave(msim *s, int i);

/* Peer i (stopped first if it runs) starts again at once on the same
 * endpoint, a new start of the peer (a new instance), as a member of mesh
 * `mesh`: it joins its usual seeds, or the first two peers of `mesh` when
 * that is another mesh than its own. */
void msim_restart(msim *s, int i, int mesh);

/* The membership of peer i (NULL before it starts), its endpoint. */
pc_members *msim_peer(msim *s, int i);
const char *msim_endpoint(const msim *s, int i);
int msim_index(const msim *s, const char *endpoint); /* -1: not a peer */
bool msim_live(const msim *s, int i);                /* started and not stopped */
int msim_nlive(const msim *s);
int msim_mesh(const msim *s, int i);          /* the mesh peer i is of */
uint64_t msim_instance(const msim *s, int i); /* of its latest start */

/* The state in which observer obs sees t (MSIM_UNKNOWN: not heard of). */
int msim_state(const msim *s, int obs, int t);

/* Live peers of t's mesh other than t that see t in one of the states of
 * mask (1 << state; 1 << MSIM_UNKNOWN for those that have not heard of it). */
int msim_count(const msim *s, int t, unsigned mask);

/* Every live peer sees every other live peer of its mesh ALIVE. */
bool msim_converged(const msim *s);

/* Times a peer took a record of the current life of a peer of another
 * mesh (none when meshes stay apart). */
uint64_t msim_merges(const msim *s);

/* Messages and bytes sent by the live peers, summed; messages the
 * receivers refused (pc_members_recv failed: none in a correct run). */
void msim_traffic(const msim *s, uint64_t *msgs, uint64_t *bytes);
uint64_t msim_refused(const msim *s);

/* What msim_scenario measured: times in ms of simulated time (-1: its
 * limit passed first), traffic per live peer per protocol period. */
typedef struct msim_result {
    double converge_ms; /* from the last start until every peer sees every other ALIVE */
    double suspect_ms;  /* from the kill until every live peer holds the victim SUSPECT or DEAD */
    double dead_ms;     /* from the kill until every live peer holds it DEAD */
    double msgs, bytes; /* sent in the steady state */
    double sync_bytes;  /* of which push-pull (whole views) */
    uint64_t refused;   /* messages a peer refused (none in a correct run) */
} msim_result;

/* The scenario the test and the benchmark share: o->n peers start and
 * join (msim_new); the time until they converge; then settle_ms of quiet,
 * and traffic measured over the next window_ms; then peer n / 3 is killed:
 * the time until it is suspected and dead everywhere. 0, or LEV_EINVAL,
 * LEV_ENOMEM. */
int msim_scenario(const msim_opts *o, int settle_ms, int window_ms, msim_result *r);

/* What msim_two_meshes found. */
typedef struct msim_meshes_result {
    bool converged;   /* both meshes converged apart after the restart */
    uint64_t merges;  /* records of a peer of the other mesh taken: none */
    int held_live;    /* peers of mesh 0 holding the endpoint live at the end: none */
    uint64_t foreign; /* messages of the other mesh ignored */
    uint64_t refused; /* messages a peer refused (none in a correct run) */
} msim_meshes_result;

/* Two meshes on one network (o->meshes is 2): once they converged, peer
 * `victim` of mesh 0 is killed, and restart_ms later starts again on its
 * endpoint as a member of mesh 1, while mesh 0 still probes and gossips
 * to it; then 20 s run. 0, or LEV_EINVAL, LEV_ENOMEM. */
int msim_two_meshes(const msim_opts *o, int victim, int restart_ms, msim_meshes_result *r);

/* What msim_restarted found. */
typedef struct msim_restart_result {
    double alive_ms;  /* from the restart until every live peer holds the new life ALIVE */
    int hits;         /* times a peer held the new life SUSPECT or DEAD: none */
    bool alive_after; /* every live peer holds the new life ALIVE at the end */
    uint64_t refused; /* messages a peer refused (none in a correct run) */
} msim_restart_result;

/* A mesh of o->n peers converges; peer `victim` is killed and restarted
 * on its endpoint (a new instance) restart_ms later, or, with restart_ms
 * < 0, once every live peer holds it DEAD; once its new life is ALIVE
 * everywhere (within 10 s, else alive_ms is -1), every live peer is told
 * by gossip that its earlier life is DEAD and SUSPECT at incarnation 50,
 * and 10 s run. 0, or LEV_EINVAL, LEV_ENOMEM. */
int msim_restarted(const msim_opts *o, int victim, int restart_ms, msim_restart_result *r);

/* What msim_slow measured over its window. */
typedef struct msim_slow_result {
    uint64_t raised;      /* suspicions the slow peer raised: all false */
    uint64_t false_views; /* times a peer came to hold a healthy peer SUSPECT */
    uint64_t slow_views;  /* times a peer came to hold the slow peer SUSPECT */
    uint64_t deaths;      /* times a peer came to hold a peer DEAD */
    uint64_t probes;      /* the slow peer's probes */
    int health;           /* the slow peer's local health score at the end */
    uint64_t refused;     /* messages a peer refused (none in a correct run) */
} msim_slow_result;

/* The slow-peer scenario the test and the benchmark share: o->n peers
 * (o->slow_peer slow as o says) start, run settle_ms, then what happens
 * over the next window_ms is counted. 0, or LEV_EINVAL, LEV_ENOMEM. */
int msim_slow(const msim_opts *o, int settle_ms, int window_ms, msim_slow_result *r);

/* ===================================================================
 * A hand-run net: a few peers, every message delivered at once and in
 * order, time advanced by the caller a millisecond at a time; for tests
 * that drive the protocol by hand and read the fields below directly.
 * =================================================================== */

#define MSIM_HPEERS 4    /* peers of a hand-run net, at most */
#define MSIM_HQUEUE 8192 /* messages in flight, at most (more are lost) */

typedef struct msim_hmsg {
    char from[PC_ENDPOINT_MAX], to[PC_ENDPOINT_MAX];
    uint16_t type;
    size_t len;
    uint8_t *data;
} msim_hmsg;

typedef struct msim_hnet msim_hnet;

typedef struct msim_hpeer {
    msim_hnet *net;
    int idx;
    pc_members *m;
    uint64_t next; /* when it wants its next tick */
} msim_hpeer;

struct msim_hnet {
    msim_hpeer p[MSIM_HPEERS];
    int n;
    const pc_members_opts *opts; /* of the peers msim_hnet_start creates; NULL: defaults */
    msim_hmsg *q;                /* the messages in flight */
    size_t nq;
    size_t sync_len;   /* longest SYNC payload sent */
    uint64_t refused;  /* messages a peer refused */
    uint64_t overflow; /* messages lost because MSIM_HQUEUE were in flight */
    msim_hmsg *log;    /* copies of every message while nlog < caplog (the caller
                          allocates it; msim_hnet_destroy frees it) */
    size_t nlog, caplog;
};

/* Peer i's endpoint, tcp://10.1.0.I:7946 (a static buffer per peer). */
const char *msim_hnet_ep(int i);

/* The record the peers of a hand-run net announce, at endpoint. */
pc_peer_rec msim_hnet_rec(const char *endpoint);

/* A net of n peers started at time 0 with opts (NULL: defaults), or NULL
 * when out of memory or a peer could not start. Caller owns it. */
msim_hnet *msim_hnet_new(int n, const pc_members_opts *opts);

/* (Re)creates peer i with net->opts, at now. 0, or pc_members_new's error. */
int msim_hnet_start(msim_hnet *net, int i, uint64_t now);

/* Drops the messages in flight. */
void msim_hnet_drop(msim_hnet *net);

/* Delivers what is in flight (and what that sends), up to 10,000
 * messages; messages to endpoints outside the net are lost. False when
 * messages were still in flight after that. */
bool msim_hnet_flush(msim_hnet *net, uint64_t now);

/* Runs the net from `from` to `to` ms, a millisecond at a time (ticks,
 * then a flush); false as msim_hnet_flush. */
bool msim_hnet_run(msim_hnet *net, uint64_t from, uint64_t to);

/* Frees the net, its peers, messages and log; accepts NULL. */
void msim_hnet_destroy(msim_hnet **net_p);

#endif
