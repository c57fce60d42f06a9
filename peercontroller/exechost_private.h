/* exechost_private.h - what the executor host's files share:
 * exechost.c (the daemon's requests, the VTs' records, the main loop),
 * exechost_out.c (everything the executor sends: the queue and its
 * sender thread, the runtime's callbacks that produce records, the fault
 * report) and exechost_causal.c (the VC's causal logging engine: the
 * order of the VTs' inputs, determinants, the engine's part of images).
 * Not used outside the executor.
 */
#ifndef PC_EXECHOST_PRIVATE_H
#define PC_EXECHOST_PRIVATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "auth.h"
#include "causal.h"
#include "chan.h"
#include "executor.h"
#include "imgslot.h"
#include "module.h"
#include "vt.h"
#include "vtchan.h"
#include "xlink.h"

/* A VT of this executor. The main thread owns the record; the callbacks
 * reach it through vt->host. */
typedef struct xh_vtrec {
    struct xh_vtrec *live_next; /* in h->live (main thread only) */
    struct xh_vtrec *reap_next; /* in h->reap (under h->mu) */
    rt_vt *vt;
    uint64_t id;
    uint32_t epoch;
    uint64_t next_in; /* input position of its newest image (the VT's worker only) */
    uint64_t oldest;  /* its oldest unacknowledged output at the last look (main thread) */
    bool heard;       /* an input or acknowledgement reached it (main thread) */
    bool draining;    /* ended, its DONE held until its outputs are acknowledged (main thread) */
    /* under h->mu */
    bool stopping;           /* STOP received */
    bool forget;             /* CANCEL received: nothing more goes out */
    struct xh_out *stop_out; /* the STOPPED record of the image taken for the STOP */
    struct xh_out *end;      /* its DONE, queued once its outbox is empty (s_reap) */
    bool warned;             /* a failed periodic checkpoint was printed */
    int fail_err;            /* it was canceled for this (a limit), which its DONE says */
    char fail_detail[160];
} xh_vtrec;

/* Direct messages (exechost_direct.c): a VT hosted here, as its
 * messages need it (under h->cx_mu). */
typedef struct xd_hosted {
    uint64_t id;
    rt_vt *vt;
    uint64_t acked;     /* its outputs acknowledged up to here */
    uint64_t hold_seq;  /* its UNLOCK not yet acknowledged (0: none): what it sends is held */
    uint64_t stall_pos; /* the fixed position it waited at, at the last look (0: none) */
    bool stall_told;    /* and that was said */
    pc_cx_mark held_at; /* the first message it held at the last look: (to, seq), 0s: none */
    bool held_told;     /* and that was said */
} xd_hosted;

/* A message the engine sent to a VT of this executor, taken once the
 * engine's call returns. */
typedef struct xd_loop {
    pc_cx_msg m;
    pc_cx_det *d;
    size_t n;
} xd_loop;

/* Flow control's news from the engine to itself (a channel between two
 * VTs of this executor), taken once its call returns. */
typedef struct xd_credit {
    uint64_t from, to, seq;
} xd_credit;

/* The positions the deployer fixed for an incarnation not yet installed
 * (X_FIX before its RESUME): taken by its install (under h->cx_mu). */
typedef struct xd_fix {
    uint64_t id;
    uint32_t epoch;
    pc_cx_det *d;
    size_t n;
} xd_fix;

/* A new incarnation (epoch > 1) whose start waits for its fixed
 * positions, with direct messages (main thread). */
typedef struct xh_parked {
    struct xh_parked *next;
    pc_hdr req;
    rt_vt *vt;
    uint8_t *cx; /* its image's causal state (copied), or NULL */
    size_t cxlen;
    int looks; /* the main loop's looks at it: named in the log at the second */
} xh_parked;

typedef struct xd_stats {
    uint64_t sent, received, looped; /* frames */
    uint64_t credits_in;             /* flow control's frames received */
    uint64_t told;                   /* the sum of the counters last told (X_STATS) */
    uint64_t dropped;                /* no link yet, or a full queue: the engine sends again */
    uint64_t refused;                /* malformed frames */
} xd_stats;

/* A record queued for the sender: a structured head, then bulk bytes (an
 * image or a result, malloc'd) as they are. */
typedef struct xh_out {
    struct xh_out *next;
    pc_hdr hdr;
    pc_wbuf head;
    uint8_t *bulk;
    size_t bulk_len;
    uint8_t *tail; /* bytes after the bulk (malloc'd), or NULL */
    size_t tail_len;
    pc_slots *slots; /* an X_IMAGE_SLOT: the pool of its slot... */
    int slot;        /* ...and the slot, lent when it is sent (else -1) */
} xh_out;

typedef struct xh_host {
    pc_chan *chan;
    rt_exec *ex; /* made at the first RUN or RESUME */
    int checkpoint_ms, threads;
    const lev_module **mods; /* loaded through MODULE, oldest first */
    int nmods;
    size_t capmods;
    xh_vtrec *live; /* VTs running here (main thread) */
    int nvts;       /* VTs not reaped yet, canceled ones included (main thread) */
    int wake_fd;    /* eventfd: a VT ended, reap it */

    pthread_mutex_t mu;
    pthread_cond_t out_cv;
    xh_out *qhead, *qtail; /* records to send */
    bool qstop;            /* the sender drains the queue and ends */
    bool writing;          /* a thread writes a record on the channel */
    bool send_failed;
    xh_vtrec *reap;     /* VTs that ended, for the main thread */
    rt_ch_host chost;   /* the VTs' channels go out through pc_xh_on_output */
    uint64_t lim_state; /* bytes of a VT's image beyond which it fails (0: none) */
    pc_slots *slots;    /* periodic images lent in shared memory; NULL: as bytes */
    pc_rslot_map rs;    /* the daemon's resume slot, mapped (main thread) */
    pthread_t sender;
    bool sender_started;

    /* causal logging (exechost_causal.c), under cx_mu */
    pthread_mutex_t cx_mu;
    pc_cx *cx;
    pc_cx_det *dets; /* determinants for the next X_DET */
    size_t ndets, capdets;
    const rt_in *in_hand; /* the input being ordered, and what became of it */
    rt_vt *in_vt;
    uint64_t in_cfrom, in_cseq, in_pos;
    int in_rc;

    /* direct messages (exechost_direct.c), under cx_mu but the ROUTER's
     * reads (main thread) */
    bool direct;                     /* X_CONFIG named an address: the VC's messages go here */
    char link_host[PC_ENDPOINT_MAX]; /* that address */
    pc_keypair link_key;             /* the links' CurveZMQ pair (auth.h), pub "" for none */
    void *zctx;                      /* libzmq's, made with the link */
    pc_xlink *xl;          /* the links, once the executor has a number; replaced under rd_mu too */
    pthread_mutex_t rd_mu; /* the ROUTER's reads: the main thread's or an idle worker's */
    int xl_fd;             /* its ZMQ_FD (-1: none) */
    int idle_efd;          /* wakes the idle worker reading it (-1: none) */
    int xl_self;           /* that number (-1: none yet) */
    uint32_t xl_inc;       /* and its incarnation */
    char xl_eps[PC_CX_PEERS][PC_ENDPOINT_MAX]; /* where the others receive (X_LINKS) */
    xd_hosted *hosted;
    size_t nhosted, caphosted;
    xd_loop *loop;
    size_t nloop, caploop;
    pc_cx_mark *cons; /* (VT, position) delivered during an engine call */
    size_t ncons, capcons;
    xd_credit *lcred; /* flow control's news for this executor, during an engine call */
    size_t nlcred, caplcred;
    xd_fix *fixes; /* for incarnations still to be installed */
    size_t nfixes, capfixes;
    xh_parked *parked; /* (main thread) */
    xd_stats xd;
} xh_host;

/* Installs the fault handlers of an executor process: a fault writes one
 * CRASH record naming the faulting VT on fd, then kills the process. */
void pc_xh_fault_handlers(int fd);

/* A new record to send with an empty head (NULL on exhaustion). */
xh_out *pc_xh_out_new(uint16_t type, uint64_t vt, uint32_t epoch, uint64_t seq);
void pc_xh_out_free(xh_out *o);

/* Under h->mu: appends a record for the sender (NULL or failed: dropped
 * with a note); pc_xh_queue takes h->mu itself. */
void pc_xh_queue_locked(xh_host *h, xh_out *o);
void pc_xh_queue(xh_host *h, xh_out *o);

/* Under h->mu: unlinks and frees the queued records `drop` selects, for
 * example pc_xh_is_canceled (a record of VT key->vt, of any VT if 0, of
 * an epoch below key->epoch). */
void pc_xh_queue_drop_locked(xh_host *h, bool (*drop)(const xh_out *, const pc_hdr *),
                             const pc_hdr *key);
bool pc_xh_is_canceled(const xh_out *o, const pc_hdr *k);

/* Queues a record with i32 err and s detail (MODULE_OK, FAILED, STOPPED
 * without an image). */
void pc_xh_queue_err(xh_host *h, uint16_t type, uint64_t vt, uint32_t epoch, uint64_t seq, int err,
                     const char *detail);

/* The sender thread (arg: the host): writes queued records in order
 * until h->qstop and the queue is empty. */
void *pc_xh_sender_main(void *arg);

/* The runtime executor's callbacks (rt_exec_opts, ud: the host) and the
 * channels' output (rt_ch_host.out). */
void pc_xh_on_done(rt_vt *vt, void *ud);
void pc_xh_on_image(rt_vt *vt, uint8_t *img, size_t len, void *ud);
void pc_xh_on_capture_error(rt_vt *vt, int err, const char *detail, void *ud);
void pc_xh_on_output(rt_vt *vt, const rt_out *out, void *ud);

/* Causal logging (exechost_causal.c). pc_xh_cx_init makes the engine
 * (0 or LEV_ENOMEM); pc_xh_cx_free frees it. */
int pc_xh_cx_init(xh_host *h);
void pc_xh_cx_free(xh_host *h);

/* Hosts incarnation `epoch` of VT `id` (vt, its channel state loaded)
 * in the engine: from the causal state part[len] of its image, or new
 * (part NULL). 0, or an error whose detail names the fault. */
int pc_xh_cx_install(xh_host *h, rt_vt *vt, uint64_t id, uint32_t epoch, const uint8_t *part,
                     size_t len);

/* VT `id` is no longer here. */
void pc_xh_cx_remove(xh_host *h, uint64_t id);

/* Input `in` of vt from the deployer, message cseq of the channel from
 * cfrom: ordered and, at its position, delivered. 0; 1 for an input the
 * VT has; LEV_ERANGE for a gap (ask again from rt_ch_next_in); another
 * error when the VT's channel refused it. */
int pc_xh_cx_in(xh_host *h, rt_vt *vt, const rt_in *in, uint64_t cfrom, uint64_t cseq,
                uint32_t epoch);

/* X_STABLE: the deployer has VT id's determinants up to pos. */
void pc_xh_cx_stable(xh_host *h, uint64_t id, uint64_t pos);

/* Queues the determinants made since the last X_DET: when a batch is
 * full, or all of them. */
void pc_xh_cx_flush(xh_host *h, bool all);

/* X_FLUSH `id`: the fences p[len] names (wire.h, W_FLUSH) are learnt,
 * then every determinant held goes up, then X_FLUSHED. */
void pc_xh_cx_barrier(xh_host *h, uint64_t id, const uint8_t *p, size_t len);

/* X_PLACE: this executor's number `self` in the VC (PC_XNO_NONE: none)
 * and where VTs run, p[len] (wire.h, W_PLACE); a refusal is printed. */
void pc_xh_cx_place(xh_host *h, uint64_t self, const uint8_t *p, size_t len);

/* X_TRIM: VT id's stable image consumed the channels p[len] says (wire.h,
 * W_TRIM); the sender logs here drop that. A refusal is printed. */
void pc_xh_cx_trim(xh_host *h, uint64_t id, const uint8_t *p, size_t len);

/* X_FIX: the positions p[len] (a list of determinants) the deployer
 * fixed for incarnation `epoch` of VT `id`; a refusal is printed. */
void pc_xh_cx_fix(xh_host *h, uint64_t id, uint32_t epoch, const uint8_t *p, size_t len);

/* The tail of vt's image envelope (envelope.h: its channel state and
 * the engine's part, taken at one position, which *next_in gets).
 * 0, or LEV_ENOMEM. */
int pc_xh_state_tail(xh_host *h, rt_vt *vt, uint8_t **tail, size_t *tlen, uint64_t *next_in);

/* Direct messages (exechost_direct.c); each does nothing in a VC whose
 * messages go through the deployer (h->direct false). */

/* Under cx_mu: VT id, hosted in the engine, runs here as vt
 * (pc_xh_cx_install); gone (pc_xh_cx_remove). */
void pc_xh_direct_host_locked(xh_host *h, uint64_t id, rt_vt *vt);
void pc_xh_direct_unhost_locked(xh_host *h, uint64_t id);

/* The engine's callbacks: m to executor `peer`; input `pos` delivered. */
void pc_xh_direct_send_cb(xh_host *h, int peer, const pc_cx_msg *m, const pc_cx_det *d, size_t n);
void pc_xh_direct_deliver(xh_host *h, uint64_t pos, const pc_cx_msg *m);

/* The engine's flow control news for the executor of `from`. */
void pc_xh_direct_credit_cb(xh_host *h, int peer, uint64_t from, uint64_t to, uint64_t seq);

/* Under cx_mu, after every engine call: what it sent to this executor and
 * the positions it delivered are taken. */
void pc_xh_direct_settle_locked(xh_host *h);

/* rt_ch_host.taken: VT vt took message `seq` of the channel from `from`
 * (flow control: its sender's window moves). */
void pc_xh_direct_taken(rt_vt *vt, uint64_t from, uint64_t seq, void *ud);

/* rt_ch_host.send: a VT's message into the engine (ud: the host). */
int pc_xh_direct_send(rt_vt *vt, uint64_t to, const void *data, size_t len, void *ud);

/* VT id's output seq must be acknowledged before anything it sends
 * after it is seen (a commit, or a read answered at its worker): what it
 * sends is held until then (never an earlier hold's end).
 * pc_xh_direct_ack: its outputs are acknowledged up to seq (rt_ch_ack,
 * and held messages released). */
void pc_xh_direct_hold(xh_host *h, uint64_t id, uint64_t seq);
void pc_xh_direct_ack(xh_host *h, rt_vt *vt, uint64_t seq);

/* VT id ended: what it held goes, and its DONE's head gets the number of
 * its last message to each VT it sent to (wire.h, W_DONE). */
void pc_xh_direct_done(xh_host *h, uint64_t id, xh_out *end);

/* The deployer's input `in`, number cseq on the channel from cfrom
 * (0: the deployer's own), into the engine: 0; LEV_ERANGE when inputs
 * before it are missing (ask again from pc_xh_next_wanted); another
 * error with its detail. */
int pc_xh_direct_in(xh_host *h, rt_vt *vt, const rt_in *in, uint64_t cfrom, uint64_t cseq,
                    uint32_t epoch);

/* What a RESYNC of vt asks for: the next input position (messages
 * through the deployer), or the next number on the deployer's channel. */
uint64_t pc_xh_next_wanted(xh_host *h, rt_vt *vt);

/* Under cx_mu: takes the positions fixed for incarnation `epoch` of VT
 * id before its install (*d malloc'd, the caller frees; NULL and 0:
 * none). pc_xh_direct_fix_ready: whether they came (or none are
 * needed: messages through the deployer, or a first incarnation). */
void pc_xh_direct_fix_take_locked(xh_host *h, uint64_t id, uint32_t epoch, pc_cx_det **d,
                                  size_t *n);
bool pc_xh_direct_fix_ready(xh_host *h, uint64_t id, uint32_t epoch);

/* Under cx_mu: keeps positions fixed for an incarnation not installed
 * yet (takes d). 0 or LEV_ENOMEM. */
int pc_xh_direct_fix_keep_locked(xh_host *h, uint64_t id, uint32_t epoch, pc_cx_det *d, size_t n);

/* X_PLACE gave this executor number `self` in incarnation `inc`: the
 * links are made (again) and named (X_LINK). X_LINKS p[len]: where the
 * others receive. */
void pc_xh_direct_placed(xh_host *h, uint64_t self, uint32_t inc);
void pc_xh_direct_links(xh_host *h, const uint8_t *p, size_t len);

/* Sets up what the direct path needs before anything runs: 0, or
 * LEV_ENOMEM. */
int pc_xh_direct_init(xh_host *h);

/* The ROUTER's file to poll (-1: none yet), and its frames read unless
 * an idle worker reads them (any thread). */
int pc_xh_direct_fd(xh_host *h);
void pc_xh_direct_read(xh_host *h);

/* Tells the daemon the direct path's counters (X_STATS) if they moved. */
void pc_xh_direct_stats(xh_host *h);

/* The runtime's idle wait (rt_exec_opts.idle) with direct messages: an
 * idle worker reads the ROUTER itself and runs the VT that an input
 * makes ready, with no hand-over. */
rt_exec_idle pc_xh_direct_idle(xh_host *h);

/* Frees the links and tables. */
void pc_xh_direct_free(xh_host *h);

/* The runtime's image allocator over h->slots (rt_exec_opts.image_alloc). */
rt_img_alloc pc_xh_image_alloc(xh_host *h);

#endif
