/* vcsim_int.h - what the two files of the simulator share: the world
 * (its clock, network and random source, vcsim.c) and the model worker
 * that runs model VTs on each simulated peer (vcsim_worker.c).
 */
#ifndef VCSIM_INT_H
#define VCSIM_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zmq.h>

#include "peer_private.h"
#include "vcsim.h"

typedef struct vs_world vs_world;
typedef struct vs_mworker vs_mworker;

/* One simulated peer process. */
typedef struct vs_node {
    vs_world *w;
    int idx;
    char ep[PC_ENDPOINT_MAX];
    bool up;               /* running (false: crashed, or not started) */
    uint32_t gen;          /* bumped at each start: a message to an older one is lost */
    uint64_t paused_until; /* > now: stopped, its messages wait */
    bool foreign;          /* a peer of another mesh */
    uint32_t cores;
    pc_peer *p; /* the real roles: membership, deployer, holder */
    vs_mworker *mw;
    uint64_t next_tick;
} vs_node;

/* ---- vcsim.c: the world, for the model worker ---- */

uint64_t vs_now(const vs_world *w);
const vs_opts *vs_world_opts(const vs_world *w);
uint64_t vs_rand(vs_world *w);
/* Sends a message from node n, as pc_env.send does (bulk moved in). */
int vs_net_send(vs_node *n, const char *to, pc_hdr h, const void *body, size_t len,
                zmq_msg_t *bulk);
/* Records a violation of an invariant (the first one is kept). */
void vs_violation(vs_world *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints a trace line when tracing. */
void vs_trace(vs_world *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The run's report, for counting. */
vs_report *vs_world_report(vs_world *w);

/* ---- the model program (vcsim_worker.c) ---- */

/* The fault-free result of the ring's VT `id` (ids 2 .. vts + 1). */
uint64_t vs_ref_result(const vs_opts *o, uint64_t id);

/* ---- vcsim_worker.c: the model worker of one node ---- */

vs_mworker *vs_mw_new(vs_node *n);
void vs_mw_free(vs_mworker **mw_p);
void vs_mw_on_msg(vs_mworker *mw, pc_msg *m);
void vs_mw_on_member(vs_mworker *mw, const pc_member *m);
/* Runs the VTs up to now (work, outputs, checkpoints); returns when it
 * wants to run again. */
uint64_t vs_mw_tick(vs_mworker *mw, uint64_t now);
/* Traces the state of every VT there (a run that did not end). */
void vs_mw_dump(const vs_mworker *mw);
/* VTs running there now. */
uint32_t vs_mw_load(const vs_mworker *mw);
/* The VT id and epoch a model image names (pc_env.image_id). */
int vs_image_id(const uint8_t *img, size_t len, uint64_t *vt, uint32_t *epoch);

#endif
