/* deployer_private.h - what the deployer's two files share: deployer.c
 * (a VC's requests, enrolment, the workers' and holders' messages,
 * status) and placement.c (where each VT runs, who holds its images,
 * recovery after a loss). Both run on the peer's network thread only.
 */
#ifndef PC_DEPLOYER_PRIVATE_H
#define PC_DEPLOYER_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include "causal.h"
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
    uint32_t flush_wait;       /* the recovery barrier it has still to answer (0: none) */
    int xno;                   /* its executor's number in the VC while active (-1: none) */
    uint32_t xinc;             /* the incarnation of that number */
    char xep[PC_ENDPOINT_MAX]; /* where its executor receives direct messages ("": not known) */
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
    bool awaits_barrier; /* fenced: placed again once the recovery barrier is done */
    pc_cx_det *fix;      /* the positions fixed for incarnation fix_epoch (barrier.c) */
    size_t nfix;
    uint32_t fix_epoch;
    uint64_t trimmed; /* the senders were told to trim to its image at this input (W_TRIM) */
    int log_wait;     /* failed for good: holders asked for its sender log (H_LOG), 0 once
                       * one gave it */
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
    uint32_t xinc;         /* executor numbers given (their incarnations) */
    bool direct;           /* messages go between executors (W_ENROL's PC_ENROL_DIRECT) */
    /* the recovery barrier and the log of determinants (barrier.c) */
    struct pc_detlog *dl;
    uint32_t barrier; /* the last barrier's number */
    bool barrier_due; /* a fence since it started: the next one starts at the flush */
    bool barrier_open, barrier_warned;
    uint64_t barrier_ms, barrier_sent_ms; /* when it started, when W_FLUSH last went */
    uint64_t barriers, barrier_last_ms, barrier_max_ms;
    uint64_t fixes, fixed, fix_errors, det_conflicts, orphans, trims;
} dep_vc;

struct pc_deployer {
    pc_peer *p;
    dep_vc *vcs;
    uint64_t next_tick;
};

/* VT `id` of the VC, or NULL (ids are handed out in order from 2: the
 * index is id - 2). */
static inline dep_vt *dep_vt_of(const dep_vc *vc, uint64_t id)
{
    return id >= 2 && id - 2 < (uint64_t)vc->nvts ? &vc->vts[id - 2] : NULL;
}

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

/* W_LINK from worker wi: its executor's endpoint for direct messages,
 * which every active worker then learns (W_LINKS). */
void pc_dep_on_link(pc_deployer *d, dep_vc *vc, const pc_msg *m, int wi);
/* Sends W_LINKS (where every active executor receives) to worker wi, or
 * to every active worker when wi < 0; nothing when the VC relays. */
void pc_dep_links_send(pc_deployer *d, dep_vc *vc, int wi);

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
/* Worker wi turned active: its executor gets a number (the one it had,
 * if no other active worker has it now; else the lowest free; -1 past
 * PC_CX_PEERS) and the table of where the VTs run (W_PLACE). */
void pc_dep_xno_assign(pc_deployer *d, dep_vc *vc, int wi);
/* Tells every active worker where vt runs now (its host's executor
 * number, or -1: pending, fenced or ended). */
void pc_dep_place_news(pc_deployer *d, dep_vc *vc, const dep_vt *vt);
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

/* ---- barrier.c ---- */

/* The VC's log of determinants: 0 or LEV_ENOMEM; freed with the VC's
 * fixed positions by pc_dep_barrier_free. */
int pc_dep_barrier_init(dep_vc *vc);
void pc_dep_barrier_free(dep_vc *vc);
/* Forgets vt's fixed positions. */
void pc_dep_fix_clear(dep_vt *vt);
/* vt has a new incarnation (vt->epoch): the log learns it; when the old
 * one was `fenced` (lost, not handed over), vt waits for a barrier. */
void pc_dep_epoch_moved(dep_vc *vc, dep_vt *vt, bool fenced);
/* Determinants from a worker of the VC, learnt (conflicts counted). */
void pc_dep_dets(dep_vc *vc, const pc_cx_det *d, size_t n);
/* No image of vt before input next_in will be resumed. */
void pc_dep_dets_stable(dep_vc *vc, uint64_t vt, uint64_t next_in);
/* The determinants an image carries (H_HELD), learnt: false when one
 * is of a branch a fenced incarnation took (an orphan image). */
bool pc_dep_image_dets(dep_vc *vc, const dep_vt *vt, const pc_cx_det *d, size_t n);
/* vt's oldest image that could still be resumed stands at input
 * next_in and consumed its channels as far as marks[n] (the wire's
 * (u64 vt, u64 seq) pairs): the senders' logs drop the rest (W_TRIM to
 * each active worker that runs a sender it names), once per such image. */
void pc_dep_trim(pc_deployer *d, dep_vc *vc, dep_vt *vt, uint64_t next_in, const void *marks,
                 uint32_t n);
/* Starts the barrier when a fence came since the last (at the flush and
 * the tick); the tick also asks again the workers that have not answered. */
void pc_dep_barrier_run(pc_deployer *d, dep_vc *vc);
void pc_dep_barrier_tick(pc_deployer *d, dep_vc *vc, uint64_t now);
/* W_FLUSHED from worker wi. */
void pc_dep_on_flushed(pc_deployer *d, dep_vc *vc, const pc_msg *m, int wi);
/* Worker wi is gone: a barrier that waited for it starts again. */
void pc_dep_barrier_worker_gone(dep_vc *vc, int wi);
/* Fixes the positions of vt's new incarnation after its image at input
 * next_in (0: from its start). */
void pc_dep_fix(dep_vc *vc, dep_vt *vt, uint64_t next_in);
/* Sends vt's host its fixed positions (W_FIX), if it has any. */
void pc_dep_fix_send(pc_deployer *d, dep_vc *vc, dep_vt *vt);
/* The VC's "recovery" status object. */
void pc_dep_barrier_status(const dep_vc *vc, pc_wbuf *j);

#endif
