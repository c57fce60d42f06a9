/* worker_private.h - the worker's state (worker.c), shared with the
 * parts of it in other files: the images of its VTs (worker_images.c).
 *
 * Internal to those files.
 */
#ifndef PC_WORKER_PRIVATE_H
#define PC_WORKER_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "gcopy.h"
#include "imgslot.h"
#include "modmgr.h"
#include "peer_private.h"

#define WK_HOLDERS_MAX 4
#define WK_DONE_KEEP 64 /* ends of VTs kept per VC, to send again if lost */
#define WK_XSTATS 7     /* the counters of X_STATS (wire.h) */

enum { X_NONE, X_STARTING, X_READY };

typedef struct wk_vt {
    uint64_t id;
    uint32_t epoch;
    uint64_t ckpt; /* images of this epoch sent to holders */
    int nh;
    char holders[WK_HOLDERS_MAX][PC_ENDPOINT_MAX];
    pc_buf *last;               /* the image sent last (image number ckpt), NULL: none */
    bool hbase[WK_HOLDERS_MAX]; /* holder i was sent `last`: patches against it may go */
    bool reads_ok;              /* W_READS_FROM came: its reads above reads_from may be */
    uint64_t reads_from;        /* answered here (worker_reads.c) */
} wk_vt;

/* The end of a VT as it was sent (W_DONE or W_PLACE_ERR), kept to be sent
 * again while the deployer still speaks to the VT as running (the first
 * was lost on the way). */
typedef struct wk_done {
    uint64_t vt;
    uint32_t epoch;
    uint16_t type;
    uint8_t *payload;
    size_t len;
    uint64_t sent_ms; /* when it last went (again) */
} wk_done;

/* Where a VT of the VC runs: its incarnation and its executor's number. */
typedef struct wk_place {
    uint64_t vt;
    uint32_t epoch;
    int32_t x;
} wk_place;

typedef struct wk_reads wk_reads; /* worker_reads.c */

typedef struct wk_vc {
    struct wk_vc *next;
    uint64_t vc;
    char deployer[PC_ENDPOINT_MAX];
    uint8_t hash[PC_HASH_LEN];
    uint64_t digest;
    int ckpt_ms;
    bool accepted;      /* the deployer was told the module loaded: it uses this worker */
    uint64_t orphan_ms; /* when its deployer was declared dead (0: it is not) */
    void *x;            /* its executor (the env's handle), or NULL */
    int pid;            /* the executor's process, or 0 (a thread, or a model) */
    int xstate;
    uint64_t crash_vt;
    int crash_sig;
    wk_vt *vts;
    int nvts;
    size_t capvts;
    wk_done done[WK_DONE_KEEP]; /* a ring: the newest ends */
    int done_next;
    pc_gcopies *copies; /* values of global variables its VTs were sent or committed */
    /* W_PLACE: its executor's number and where the VC's VTs run, kept so
     * that an executor started anew learns them (X_PLACE) */
    uint64_t xno;
    uint32_t xinc;
    wk_place *place;
    size_t nplace, capplace;
    bool direct;                /* its VTs' messages go between executors (PC_ENROL_DIRECT) */
    pc_buf *links;              /* the last W_LINKS, for an executor started anew */
    pc_rslot rs;                /* images to resume go to the executor through it */
    uint64_t xstats[WK_XSTATS]; /* the executor's last X_STATS */
    wk_reads *reads;            /* versioned copies, writes and answers (worker_reads.c) */
    uint64_t lim_state, lim_msg, lim_value; /* bytes of a VT's state, a message, a value:
                                             * the lower of the VC's and this peer's */
} wk_vc;

struct pc_worker {
    pc_peer *p;
    pc_modmgr *mm;
    wk_vc *vcs;
    bool leaving;
    uint64_t images, image_bytes;  /* periodic images, and their bytes */
    uint64_t sent_bytes;           /* bytes sent to holders for them (patches count their own) */
    uint64_t lent;                 /* of those images, the ones lent in shared memory */
    uint64_t resumes_slot;         /* images to resume lent in the resume slot */
    uint64_t ref_hits, ref_misses; /* inputs whose value came from a copy here, or did not */
    uint64_t ref_bytes;            /* the value bytes of those hits, which did not travel */
    uint64_t reads_here;           /* reads answered from a versioned copy here */
    uint64_t glob_pushes;          /* W_GLOB received */
    bool evict_due;                /* a module came in: the cache is bounded at the next tick */
    uint64_t evict_ms;             /* the last bounding */
};

/* worker.c */

/* VT id of v, or NULL. */
wk_vt *pc_wk_vt(wk_vc *v, uint64_t id);

/* Forgets VT id of v (it ended or went elsewhere). */
void pc_wk_vt_forget(wk_vc *v, uint64_t id);

/* Sends a record to v's deployer (bulk, if any, taken over). */
void pc_wk_send_deployer(pc_worker *w, wk_vc *v, uint16_t type, uint64_t vt, uint32_t epoch,
                         uint64_t seq, const void *body, size_t len, pc_buf *bulk);

/* Sends a record to v's executor; LEV_EPEER when it has none. */
int pc_wk_xsend(pc_worker *w, wk_vc *v, pc_hdr h, const struct iovec *iov, int n);

/* worker_images.c */

/* A periodic image (its envelope, taken) to every holder of its VT. */
void pc_wk_image_buf(pc_worker *w, wk_vc *v, const pc_hdr *h, pc_buf *image, bool lent);

/* A periodic image as bytes (X_IMAGE; payload taken). */
void pc_wk_image(pc_worker *w, wk_vc *v, const pc_hdr *h, uint8_t *payload);

/* A VT handed over by capture-and-stop (image taken; NULL with err when
 * the stop failed), to the deployer. */
void pc_wk_stopped_buf(pc_worker *w, wk_vc *v, const pc_hdr *h, int32_t err, pc_buf *image);

/* STOPPED as bytes (payload taken). */
void pc_wk_stopped(pc_worker *w, wk_vc *v, const pc_hdr *h, uint8_t *payload);

bool pc_wk_resume_slot(pc_worker *w, wk_vc *v, const pc_msg *m, uint64_t reports);

/* worker_reads.c (docs/GLOBAL_READS.md) */

/* W_GLOB: a change of a variable this worker's VTs read; acknowledged
 * (W_GLOB_ACK) in a VC with direct messages. pc_wk_glob_ack: the
 * acknowledgement alone (a W_GLOB of a VC this worker does not serve, so
 * that its deployer does not wait for it). */
void pc_wk_glob(pc_worker *w, wk_vc *v, const pc_msg *m);
void pc_wk_glob_ack(pc_worker *w, const pc_msg *m);

/* X_OUT of t (current incarnation): true when it was a read answered
 * here (the executor told, the deployer sent it marked): not to be sent
 * up as it is. An unlock or a put is noted (false). */
bool pc_wk_read_out(pc_worker *w, wk_vc *v, wk_vt *t, const pc_hdr *h, const uint8_t *payload);

/* The deployer has VT vt's outputs up to seq (W_ACK); VT vt left. */
void pc_wk_reads_acked(wk_vc *v, uint64_t vt, uint64_t seq);
void pc_wk_reads_forget(wk_vc *v, uint64_t vt);

/* Frees v's copies, writes and answers. */
void pc_wk_reads_free(wk_vc *v);

#endif
