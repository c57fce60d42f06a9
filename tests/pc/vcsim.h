/* vcsim.h - a deterministic simulator of whole virtual computers
 * (vcsim.c, vcsim_exec.c): N peers in one process, each running the real
 * participation manager (membership.c), deployer (deployer.c and
 * placement.c with msgmgr.c and the delegator), worker (worker.c) and
 * checkpoint holder (holder.c) through a simulated pc_env, whose
 * executors are model ones: their VTs are model tasks that compute,
 * checkpoint, send, receive, lock a global variable, put into another,
 * report and end; and
 * a client on peer 0 that opens a VC, starts the VTs and checks
 * everything that comes back.
 *
 * Time is simulated and every random choice comes from one seeded
 * generator, so a seed replays exactly. Faults are injected alone and in
 * combination at any moment: crashes (for good, or restarted on the same
 * endpoint), pauses of any length, an endpoint taken over by a peer of
 * another mesh, message loss and duplication, partitions that heal. The
 * invariants are checked as the run goes and at its end (vs_report).
 * The recovery test (test_vcsim.c) and its long run (eval/vcsim/) share
 * it.
 */
#ifndef VCSIM_H
#define VCSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Kinds of fault, as bits of vs_opts.kinds. */
enum {
    VS_F_CRASH = 1u << 0,     /* a peer dies for good */
    VS_F_RESTART = 1u << 1,   /* a peer dies and comes back on its endpoint, empty */
    VS_F_PAUSE = 1u << 2,     /* a peer stops for 50 ms .. max_pause_ms, then goes on */
    VS_F_TAKEOVER = 1u << 3,  /* a peer dies and a peer of another mesh takes its endpoint */
    VS_F_LOSS = 1u << 4,      /* a burst: messages from one peer lost for a while */
    VS_F_DUP = 1u << 5,       /* a burst: messages from one peer delivered twice */
    VS_F_PARTITION = 1u << 6, /* a peer cut off from the others for a while, then healed */
    VS_F_REORDER = 1u << 7    /* a burst: messages from one peer delayed 1 to 300 ms each,
                               * out of order (a connection re-established, a queue drained) */
};
#define VS_F_KINDS 8

/* What a crash is: the peer's process dies and its port refuses
 * connections at once (a kill, a fault, the OOM killer), or its whole
 * host goes (power, kernel, cable), and connections to it time out;
 * EITHER draws one for each crash from the seed. */
enum { VS_CRASH_EITHER = 0, VS_CRASH_PROCESS, VS_CRASH_HOST };

/* What a run is: its mesh, its program, its faults. */
typedef struct vs_opts {
    uint64_t seed;
    int peers;           /* peers of the mesh, peer 0 the client's (never faulted); >= 2 */
    bool client_works;   /* peer 0 offers cores too (default: it does not) */
    int cores;           /* cores of every other peer; 0: 1 */
    int vts;             /* model VTs of the VC, in a ring; 0: 6 */
    int rounds;          /* rounds of each VT (compute, send, receive, lock, report); 0: 12 */
    int compute_ms;      /* work of one round, in ms of one core; 0: 300 */
    int replicas;        /* the VC's replicas; 0: the deployer's default */
    int ckpt_ms;         /* the VC's checkpoint interval; 0: the deployer's default (2000) */
    unsigned kinds;      /* VS_F_* allowed; 0: none */
    int faults;          /* faults injected, each of a kind drawn from `kinds` */
    bool within_ckpt;    /* the faults come within one checkpoint interval of each other */
    int max_pause_ms;    /* 0: 5000 */
    int pause_ms;        /* > 0: every pause lasts exactly this long */
    int suspect_ms;      /* the peers' suspicion timeout; 0: the membership's default */
    int crashes;         /* what a crash (VS_F_CRASH) is: VS_CRASH_EITHER (0), _PROCESS, _HOST */
    uint64_t horizon_ms; /* the run's limit of simulated time (liveness); 0: 600000 */
    int trace;           /* 1: print the run's events; 2: and the peers' logs */
    bool puts;           /* each round also puts into "pmax" (lev_global_put), with
                          * version and value round << 16 | VT id */
    bool reads;          /* each round, after its unlock, also reads the counter
                          * (lev_global_read): never below the VT's own last write nor
                          * its previous read, and the same in every copy of the VT */
} vs_opts;

#define VS_WHY_MAX 1024

/* What a run did and what it found. */
typedef struct vs_report {
    bool ok;                     /* every invariant held */
    char why[VS_WHY_MAX];        /* the first violation, with the time it was seen */
    uint64_t sim_ms;             /* simulated time the run took */
    int done, failed;            /* VTs that ended, and of them, failed */
    int lost_expected;           /* VTs the faults could destroy (beyond what the VC tolerates) */
    uint64_t faults[VS_F_KINDS]; /* injected, by kind */
    uint64_t messages;           /* delivered between peers */
    uint64_t images;             /* checkpoint images sent to holders */
    uint64_t image_bytes;
    uint64_t resumes;      /* VT copies started from an image */
    uint64_t restarts;     /* VT copies started from the beginning after the first */
    uint64_t rollbacks;    /* copies fenced while their peer was alive */
    uint64_t host_crashes; /* crashes of a whole host (VS_F_CRASH, connections time out) */
    uint64_t refused;      /* port probes refused (a crashed peer confirmed dead) */
    uint64_t patched;      /* images holders made from patches (H_PATCH) */
    uint64_t by_ref;       /* inputs sent naming a global's value by its hash (W_IN_REF) */
    uint64_t ref_misses;   /* of those, the ones the worker had no copy for (W_IN_MISS) */
    uint64_t dets;         /* determinants executors sent up, each checked (W_DET) */
    uint64_t fixed;        /* positions the deployer fixed for resumed VTs, checked alike (W_FIX) */
    uint64_t flushed;      /* answers to recovery barriers (W_FLUSHED) */
    uint64_t places;       /* news of where VTs run sent to workers (W_PLACE) */
    uint64_t barriers;     /* recovery barriers started (W_FLUSH numbers) */
    uint64_t trims;        /* sender logs trimmed to a stable image (W_TRIM) */
    uint64_t reads;        /* reads of the counter answered (vs_opts.reads) */
    uint64_t reads_again;  /* of those, answers to a read a VT's earlier copy made, checked */
    uint64_t reads_near;   /* of those, answered by the VT's worker ahead of the log */
} vs_report;

/* Runs one VC to its end (or to the horizon) and checks it: each VT's
 * result equals the fault-free result; each report, message and global
 * update takes effect exactly once; no VT is lost while a copy of its
 * state or a restart can still produce its result; the client receives
 * every VT's end (a VT that cannot go on fails with a detail, never
 * hangs). Returns r->ok. */
bool vs_run(const vs_opts *o, vs_report *r);

/* The name of a fault kind (bit index). */
const char *vs_fault_name(int kind);

#endif
