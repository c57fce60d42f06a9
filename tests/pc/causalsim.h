/* causalsim.h - the protocol model of direct messages between executors
 * with causal logging, run in a deterministic simulation (causalsim.c).
 *
 * What it proves before the real code is written: VTs that send to each
 * other directly (worker to worker, no deployer on the path), where
 *   - the receiver's worker orders a VT's inputs and the order of each
 *     input (a determinant: receiver, position, sender, sender's number)
 *     goes to the deployer asynchronously,
 *   - every message carries the determinants its sender's worker knows and
 *     the deployer has not yet made stable (causal logging), so whatever
 *     state survives a crash can be replayed,
 *   - the sender keeps what it sent (the sender log, carried in its VT's
 *     images) until the receiver's stable image has consumed it,
 *   - recovery fences the lost incarnations, runs a barrier that collects
 *     the determinants every live worker holds, and resumes each lost VT
 *     from its newest stable image with the positions the barrier fixed,
 * gives every VT the same outputs as some fault-free run: each output
 * taken once, every repeated output and message equal to the first, no
 * determinant contradicted, every token counted once, and no hang, under
 * crashes, restarts, stalls that are taken for crashes, and combinations.
 *
 * Simulated time only; a seed replays a run exactly.
 */
#ifndef CAUSALSIM_H
#define CAUSALSIM_H

#include <stdbool.h>
#include <stdint.h>

enum {
    CS_F_CRASH = 1 << 0,       /* a worker dies for good */
    CS_F_RESTART = 1 << 1,     /* a worker dies and comes back empty */
    CS_F_STALL = 1 << 2,       /* a worker stops, long enough to be suspected */
    CS_F_PAUSE = 1 << 3,       /* a worker stops briefly */
    CS_F_STALL_CRASH = 1 << 4, /* a stall taken for a crash, then a crash */
    CS_F_TWO = 1 << 5,         /* two workers die at nearly the same time */
    CS_F_DURING = 1 << 6,      /* a second crash while the first is recovered */
    CS_F_SLOW = 1 << 7         /* a worker's link to the deployer slows down; another dies */
};

/* Parts of the protocol a run can leave out, to show the invariants catch
 * what each part prevents. */
enum {
    CS_BREAK_PIGGYBACK = 1, /* messages carry no determinants */
    CS_BREAK_BARRIER,       /* recovery does not wait for the live workers */
    CS_BREAK_FENCE,         /* messages of a fenced incarnation are taken */
    CS_BREAK_SENDER_LOG,    /* images carry no sender log */
    CS_BREAK_IMAGE_DETS     /* images carry no determinants */
};

typedef struct cs_opts {
    uint64_t seed;
    int workers;    /* 2..6 */
    int vts;        /* 2..8 */
    int tokens;     /* tokens each VT starts */
    int hops;       /* messages per token, less one */
    int ckpt;       /* a VT's image every this many inputs */
    unsigned kinds; /* CS_F_* drawn from */
    int faults;     /* how many */
    int trace;      /* 1: every event on stderr */
    int broken;     /* CS_BREAK_*, or 0: the whole protocol */
} cs_opts;

typedef struct cs_report {
    char why[256];      /* the broken invariant, or "" */
    uint64_t sim_ms;    /* simulated time to the end */
    uint64_t direct;    /* messages sent worker to worker */
    uint64_t dets;      /* determinants that reached the deployer */
    uint64_t piggyback; /* determinants carried on messages */
    uint64_t barriers;  /* recovery barriers completed */
    uint64_t resumes;   /* VTs resumed from an image after a loss */
    uint64_t replayed;  /* inputs replayed at positions a barrier fixed */
    uint64_t fenced;    /* messages dropped from fenced incarnations */
    uint64_t images;    /* images made */
    uint64_t max_log;   /* the largest sender log carried in an image */
    uint64_t max_held;  /* the most determinants a worker held not yet stable */
} cs_report;

/* Runs one simulation; true when every invariant held to the end. */
bool cs_run(const cs_opts *o, cs_report *r);

#endif
