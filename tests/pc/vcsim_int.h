/* vcsim_int.h - what the two files of the simulator share: the world
 * (its clock, network and random source, vcsim.c) and the model executor
 * that each simulated peer's real worker starts for a VC and that runs
 * model VTs (vcsim_exec.c).
 */
#ifndef VCSIM_INT_H
#define VCSIM_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "peer_private.h"
#include "vcsim.h"

typedef struct vs_world vs_world;
typedef struct vs_mexec vs_mexec;

/* One simulated peer process. */
typedef struct vs_node {
    vs_world *w;
    int idx;
    char ep[PC_ENDPOINT_MAX];
    bool up;               /* running (false: crashed, or not started) */
    uint32_t gen;          /* bumped at each start: a message to an older one is lost */
    uint64_t paused_until; /* > now: stopped, its messages wait */
    bool foreign;          /* a peer of another mesh */
    bool host_gone;        /* crashed with its host: connections to it time out */
    uint32_t cores;
    pc_peer *p;      /* the real roles: membership, deployer, worker, holder */
    vs_mexec *execs; /* its model executors (live or stopped) */
    uint64_t next_tick;
} vs_node;

/* ---- vcsim.c: the world, for the model executors ---- */

uint64_t vs_now(const vs_world *w);
const vs_opts *vs_world_opts(const vs_world *w);
uint64_t vs_rand(vs_world *w);
/* Sends a message from node n, as pc_env.send does (the reference in
 * bulk, if any, taken over). */
int vs_net_send(vs_node *n, const char *to, pc_hdr h, const void *body, size_t len, pc_buf *bulk);
/* Records a violation of an invariant (the first one is kept). */
void vs_violation(vs_world *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A model VT's read numbered seq (its output number) returned value: the
 * answer to a read is the same in every copy of the VT (a resumed copy
 * takes it from the log), or the world has a violation. */
void vs_read_seen(vs_world *w, uint64_t vt, uint64_t seq, uint64_t value);
/* Prints a trace line when tracing. */
void vs_trace(vs_world *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The run's report, for counting. */
vs_report *vs_world_report(vs_world *w);

/* ---- the model program (vcsim_exec.c) ---- */

/* The fault-free result of the ring's VT `id` (ids 2 .. vts + 1). */
uint64_t vs_ref_result(const vs_opts *o, uint64_t id);

/* Hands a record of executor x to its node's worker, a moment later (the
 * worker owns payload). */
void vs_exec_emit(vs_node *n, vs_mexec *x, const pc_hdr *h, uint8_t *payload);

/* ---- vcsim_exec.c: the model executors of one node ---- */

/* What the node's env gives its worker: start, send a record, stop. */
vs_mexec *vs_mexec_start(vs_node *n);
int vs_mexec_send(vs_mexec *x, pc_hdr h, const struct iovec *iov, int n);
void vs_mexec_stop(vs_mexec *x);
/* Whether x still runs (its records are still taken). */
bool vs_mexec_live(const vs_mexec *x);
/* Frees every executor of the node (it crashed or the run ends). */
void vs_mexec_free_all(vs_node *n);
/* Runs the node's VTs up to now (work, outputs, checkpoints); returns
 * when it wants to run again. */
uint64_t vs_mexec_tick(vs_node *n, uint64_t now);
/* Traces the state of every VT of the node (a run that did not end). */
void vs_mexec_dump(const vs_node *n);
/* The VT id and epoch a model image names (pc_env.image_id). */
int vs_image_id(const uint8_t *img, size_t len, uint64_t *vt, uint32_t *epoch);

#endif
