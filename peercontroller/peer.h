/* peer.h - a peer controller: what levpeer runs and what libleverage
 * embeds when a client names no peer (peer.c). It binds its endpoint,
 * measures its rate, joins the mesh and serves it from its own network
 * thread (never registered with the collector): participation manager,
 * deployers of its local clients' virtual computers, worker of remote
 * ones (an executor per VC), checkpoint holder, status.
 */
#ifndef PC_PEER_H
#define PC_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "membership.h"

#define PC_JOIN_MAX 16

/* What one virtual computer may use (README.md, "Limits"): a deployer
 * applies its own to the VCs it deploys, and a worker or holder the
 * lower of the VC's and its own. 0 takes the default. */
typedef struct pc_limits {
    int vts;             /* VTs a VC may start; 0: 65536 */
    size_t vt_memory;    /* bytes of one VT's state, its checkpoint image; 0: 1 GiB */
    size_t value;        /* bytes of a global variable's value; 0: 1 MiB */
    size_t module_cache; /* bytes of task modules cached, on disk and in memory; 0: 1 GiB */
    int module_age_s;    /* a module unused this long leaves the cache; 0: 30 days */
} pc_limits;

#define PC_LIMIT_VTS 65536
#define PC_LIMIT_VT_MEMORY ((size_t)1 << 30)
#define PC_LIMIT_MODULE_CACHE ((size_t)1 << 30)
#define PC_LIMIT_MODULE_AGE_S (30 * 86400)

typedef struct pc_peer_opts {
    const char *listen;            /* tcp://HOST:PORT (port 0: any); NULL: tcp://127.0.0.1:0 */
    const char *advertise;         /* endpoint others reach it at; NULL: the bound one */
    const char *join[PC_JOIN_MAX]; /* seeds */
    int njoin;
    int cores;                         /* offered; <0: none (client only); 0: online cores */
    int rate;                          /* work units/s per core; 0: measure at start */
    pc_members_opts members;           /* failure suspicion settings */
    const char *data_dir;              /* module cache and held images on disk; NULL: memory only */
    size_t max_msg;                    /* ZMQ_MAXMSGSIZE; 0: 1 GiB */
    int crash_limit;                   /* executor crashes before a VT fails; 0: 3 */
    int client_timeout_ms;             /* a silent client's VCs are closed after; 0: 10000 */
    bool embedded;                     /* inside a client: executors are threads, not processes */
    const char *executor_program;      /* program run as `PROG --executor --fd N`; NULL: this one */
    size_t global_ref_min;             /* global values this large go by reference to a worker
                                        * that has a copy of them (W_IN_REF); 0: 1024 */
    bool direct;                       /* the VCs it deploys send their VTs' messages between
                                        * executors directly (docs/DIRECT_MESSAGES.md) */
    bool reads_deployer;               /* the VCs it deploys answer every global read at the
                                        * deployer (docs/GLOBAL_READS.md: not near the reader) */
    const char *key;                   /* the mesh's key pair (auth.h: NAME.key): CurveZMQ on every
                                        * connection; NULL: none */
    const char *authorized_keys;       /* with key: the public keys admitted besides the mesh's
                                        * (a file, or a directory of .pub files) */
    const struct pc_keypair *key_pair; /* instead of key: the pair itself (an embedded
                                        * peer's, made for the process) */
    pc_limits limits;                  /* per VC */
} pc_peer_opts;

typedef struct pc_peer pc_peer;

/* Starts a peer: binds, measures the rate if needed, starts its thread and
 * joins the seeds. 0, or LEV_EINVAL (bad option, named by lev_errdetail),
 * LEV_EPEER (cannot bind), LEV_ENOMEM. Caller owns *out. */
int pc_peer_new(pc_peer **out, const pc_peer_opts *o);

/* The endpoint the peer is known by (valid while it lives). */
const char *pc_peer_endpoint(const pc_peer *p);

/* Leaves the mesh gracefully (its VTs migrate to other peers first, within
 * timeout_ms) and stops. Returns 0 once every VT it ran is elsewhere, or
 * LEV_ETIMEDOUT if some could not be moved in time. */
int pc_peer_leave(pc_peer *p, int timeout_ms);

/* Stops the peer at once (no migration) and frees it; accepts NULL. */
void pc_peer_destroy(pc_peer **p_p);

#endif
