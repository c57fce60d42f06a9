/* deployer_private.h - what the deployer's two files share: deployer.c
 * (a VC's requests, enrolment, the workers' and holders' messages,
 * status) and placement.c (where each VT runs, who holds its images,
 * recovery after a loss). Both run on the peer's network thread only.
 */
#ifndef PC_DEPLOYER_PRIVATE_H
#define PC_DEPLOYER_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include "lev_client.h"
#include "modmgr.h"
#include "msgmgr.h"
#include "peer_private.h"
#include "resolver.h"

#define DEP_REPLICAS_MAX 4 /* holders a VC may ask for per VT */
/* A VT's holder list: its replicas, and the suspected holders they
 * replace until a replacement has acknowledged an image. */
#define DEP_HOLDERS_MAX 8
#define DEP_SETTLE_MS 1000 /* a new VC waits this long at most for its workers */

enum { W_ENROLLING, W_LOADING, W_ACTIVE, W_GONE, W_REFUSED };
enum { VT_PENDING, VT_RUNNING, VT_DONE, VT_FAILED };

typedef struct dep_worker {
    char ep[PC_ENDPOINT_MAX];
    int state;
    uint32_t cores, rate;
    uint32_t nvts;  /* VTs of this VC placed there */
    uint32_t ended; /* VTs of this VC that ended there */
    uint64_t since_ms;
} dep_worker;

typedef struct dep_holder {
    char ep[PC_ENDPOINT_MAX];
    uint32_t epoch; /* of its newest acknowledged image (0: none yet) */
    uint64_t seq;
    uint64_t next_in; /* input position its image stands at */
} dep_holder;

typedef struct dep_vt {
    uint64_t id;
    char *task;
    uint8_t *arg;
    size_t arglen;
    uint32_t epoch;
    int state;
    int host;                  /* index into the VC's workers, -1: none */
    bool recovering;           /* placed from an image or restarted after a loss */
    uint64_t wait_since;       /* waiting for a dead holder's image since (0: not) */
    bool confirmed;            /* the host's executor has this epoch (it asked for inputs) */
    uint64_t migrating_ms;     /* a move to a less loaded worker asked for then (0: none) */
    uint64_t placed_ms;        /* when this epoch was placed */
    uint8_t placed_why;        /* why it went there (pc_place_why) */
    uint8_t move_why;          /* why rebalancing moves it (pc_place_why; 0: no move) */
    char src[PC_ENDPOINT_MAX]; /* the holder sending its image to the host ("": none) */
    uint64_t src_next_in;      /* input position of that image */
    pc_buf *image;             /* an image handed over by a leaving worker (NULL: none) */
    uint64_t image_next_in;    /* input position of that image */
    dep_holder holders[DEP_HOLDERS_MAX];
    int nholders;
    uint64_t ckpt_ms;     /* when the newest image was acknowledged */
    uint64_t checkpoints; /* images acknowledged, each counted once */
    uint32_t ckpt_epoch;  /* the newest of them counted: its epoch and seq */
    uint64_t ckpt_seq;
    int crashes;
    int resumes;  /* incarnations resumed from an image */
    int restarts; /* incarnations after the first started from the beginning */
    uint64_t started_ms;
} dep_vt;

typedef struct dep_vc {
    struct dep_vc *next;
    uint64_t id;
    char client[PC_ENDPOINT_MAX];
    int quota; /* 0: every peer that offers cores */
    int ckpt_ms, replicas;
    uint8_t hash[PC_HASH_LEN];
    uint64_t digest;
    char arch[PC_ARCH_MAX]; /* what the module was built for */
    pc_buf *module;
    dep_worker *w;
    int nw;
    size_t capw;
    dep_vt *vts;
    int nvts;
    size_t capvts;
    uint64_t next_vt;
    uint64_t client_seen_ms;
    uint64_t opened_ms;
    pc_resolver *where;
    pc_msgmgr *mm; /* message manager and global variable manager */
    uint64_t mm_tick_ms;
    uint64_t lost_workers; /* enrolled workers that died or left */
} dep_vc;

struct pc_deployer {
    pc_peer *p;
    dep_vc *vcs;
    uint64_t next_tick;
};

static inline pc_hdr dep_hdr(uint16_t type, const dep_vc *vc, const dep_vt *vt, uint64_t seq)
{
    return pc_hdr_make(type, vc->id, vt ? vt->id : 0, vt ? vt->epoch : 0, seq);
}

/* ---- deployer.c ---- */

/* Index of the worker at ep in the VC, or -1. */
int pc_dep_worker(const dep_vc *vc, const char *ep);
/* Workers of the VC in a state. */
int pc_dep_count(const dep_vc *vc, int state);
/* Enrols more workers until the quota is met (or every offering peer). */
void pc_dep_enrol(pc_deployer *d, dep_vc *vc, uint64_t now);

/* ---- placement.c ---- */

/* Places a pending VT: from the image a leaving worker handed over, from
 * its newest held image, or from its start. False when no worker is
 * active (it stays pending; the tick tries again). */
bool pc_dep_place(pc_deployer *d, dep_vc *vc, dep_vt *vt);
/* Places the pending VTs, in order, while workers are active. */
void pc_dep_place_pending(pc_deployer *d, dep_vc *vc);
/* Takes a running VT off its host with a new epoch, fences the old host's
 * copy and places it again. */
void pc_dep_requeue(pc_deployer *d, dep_vc *vc, dep_vt *vt);
/* Takes a VT off its host with a new epoch, without fencing (its host
 * handed it over) and without placing it. */
void pc_dep_unplace(pc_deployer *d, dep_vc *vc, dep_vt *vt);
/* Marks worker wi gone, counting it lost if it was enrolled; true if so. */
bool pc_dep_worker_gone(pc_deployer *d, dep_vc *vc, int wi);
/* A worker is dead, left, or does not serve the VC any more: its VTs
 * resume elsewhere from their newest images, it is fenced out of the VC
 * and another is enrolled. */
void pc_dep_worker_lost(pc_deployer *d, dep_vc *vc, int wi, const char *why);
/* The host's executor has the VT's current epoch: the holder that sent
 * the image is done, and the host learns the current holder list. */
void pc_dep_confirm(pc_deployer *d, dep_vc *vc, dep_vt *vt);
/* Brings a VT's holder list up to date (replacements for suspected or
 * lost holders, the replaced ones dropped once that is safe) and tells
 * its host when the list changed or `force`. */
void pc_dep_holders_refresh(pc_deployer *d, dep_vc *vc, dep_vt *vt, bool force);
/* The input position below which no image that could be resumed needs
 * the VT's log, or UINT64_MAX when none is known. */
uint64_t pc_dep_trim_floor(dep_vt *vt);
/* Forgets the outstanding image transfer, dropping the image at its
 * holder when that holder is no longer in the VT's list. */
void pc_dep_src_clear(pc_deployer *d, dep_vc *vc, dep_vt *vt);
/* Recovery on a change of a member: a dead or departed worker's VTs
 * resume elsewhere, and so do VTs whose image source died before it sent
 * the image; every holder list is brought up to date. */
void pc_dep_on_member(pc_deployer *d, dep_vc *vc, const pc_member *m);
/* Places again a VT whose host has not confirmed it for too long (a lost
 * RUN, RESUME or H_SEND, or an executor that never started it). */
void pc_dep_watchdog(pc_deployer *d, dep_vc *vc, uint64_t now);
/* Moves one VT at a time (capture and stop, then resume) from a worker
 * that runs more VTs than it has cores to one where the delegator would
 * put it instead: a core free there (VTs recovered from a lost worker
 * spread again once it, or another, is back). */
void pc_dep_rebalance(pc_deployer *d, dep_vc *vc, uint64_t now);

#endif
