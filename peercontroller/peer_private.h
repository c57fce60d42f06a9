/* peer_private.h - what the parts of one peer share (peer.c owns it): the
 * peer record, its transport and membership, and the three roles a peer
 * plays at once, each in its own file:
 *   deployer.c  the deployer of each local client's virtual computer, with
 *               its enrolment requestor, worker quota maintainer and
 *               recovery (delegator.c places VTs);
 *   worker.c    the worker of remote virtual computers: an executor per
 *               VC, its images sent to their holders;
 *   holder.c    the checkpoint holder: dormant images of others' VTs.
 * Everything here runs on the peer's network thread only.
 */
#ifndef PC_PEER_PRIVATE_H
#define PC_PEER_PRIVATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "buf.h"
#include "capacity.h"
#include "membership.h"
#include "peer.h"
#include "status.h"
#include "wire.h"

typedef struct pc_deployer pc_deployer;
typedef struct pc_peer pc_peer;

/* The world the roles live in, and their only way out of the network
 * thread's state: the time, sending a message, and checking the identity
 * of an image. peer.c gives the real one (the monotonic clock, the
 * transport, the runtime's image header); the simulator of whole virtual
 * computers (tests/pc/vcsim.c) gives a simulated one, with its own clock
 * and network. The deployer, the holder and the message manager read no
 * clock and touch no socket themselves; messages come in and bulk frames
 * go out as byte buffers (buf.h), never as the transport's own. */
typedef struct pc_env {
    /* Milliseconds of a monotonic clock. */
    uint64_t (*now)(void *ud);
    /* Sends as pc_transport_send_raw does (the reference in bulk, if
     * any, taken over). */
    int (*send)(void *ud, const char *to, pc_hdr h, const void *body, size_t len, pc_buf *bulk);
    /* The VT id and epoch an image names (the runtime's part of an
     * envelope); 0, or an error when it is not a valid image. */
    int (*image_id)(void *ud, const uint8_t *img, size_t len, uint64_t *vt, uint32_t *epoch);
    /* The executors of the worker's VCs, one per VC: exec_start starts
     * one (*x names it, *pid is its process or 0), exec_send hands it a
     * record of the executor protocol (exechost.h), exec_stop stops it
     * (nothing more comes from it). What an executor sends, and its end,
     * come back to the worker through pc_worker_exec_record and
     * pc_worker_exec_ended, from the host's loop, never from inside
     * these calls. */
    int (*exec_start)(void *ud, void **x, int *pid);
    int (*exec_send)(void *ud, void *x, pc_hdr h, const struct iovec *iov, int n);
    /* As exec_send, at once, with descriptor fd passed along (the caller
     * keeps its own); NULL where executors take no descriptors (the
     * worker then sends images to resume as bytes). */
    int (*exec_send_fd)(void *ud, void *x, pc_hdr h, const struct iovec *iov, int n, int fd);
    void (*exec_stop)(void *ud, void *x);
    void *ud;
} pc_env;
typedef struct pc_worker pc_worker;
typedef struct pc_holder pc_holder;
typedef struct pc_execs pc_execs;

/* Commands from other threads to the network thread. */
enum { PC_CMD_NONE = 0, PC_CMD_STOP = 1, PC_CMD_LEAVE = 2 };

struct pc_peer {
    pc_peer_opts o;
    pc_env env;     /* the clock and the network the roles use */
    char *data_dir; /* copies of the option strings */
    char *exec_prog;
    char join[PC_JOIN_MAX][PC_ENDPOINT_MAX];
    int njoin;
    void *zctx;
    struct pc_transport *tr;
    pc_members *mem;
    pc_peer_rec self;
    pc_deployer *dep;
    pc_worker *wk;
    pc_holder *hold;
    pc_execs *execs;            /* the worker's executors (execproc.c) */
    struct pc_portprobe *probe; /* connections that confirm a suspect's crash (portprobe.c) */
    pc_capacity cap;            /* what this machine offers: CPUs, quota, rates (capacity.c) */
    uint64_t vc_counter;        /* VC ids: this peer's salt and a counter */
    uint64_t refused;           /* messages refused: their payload did not match their type */
    struct pc_keypair *curve;   /* the mesh's key pair (o.key), or NULL */
    struct pc_auth *auth;       /* its ZAP handler, or NULL */
    uint64_t started_ms;

    pthread_t thread;
    int wake[2]; /* pipe: other threads wake the network thread */
    atomic_int cmd;
    pthread_mutex_t mu; /* guards the fields below, for pc_peer_leave */
    pthread_cond_t cv;
    bool stopped; /* the network thread has ended */
    int leave_rc; /* result of a graceful leave */
    uint64_t leave_deadline_ms;
    bool leaving;
    uint64_t load_sent_ms;

    /* A measured rate is measured again while the peer is idle, on a
     * thread of its own (peer.c, s_rate_tick); the best one is offered. */
    pthread_t rate_thread;
    bool rate_busy;        /* a measurement runs on rate_thread */
    atomic_uint rate_new;  /* its result (rate1), 0 until it is done */
    uint32_t rate_best;    /* the best rate1 measured so far */
    int rate_runs;         /* measurements so far, the first at start included */
    uint64_t rate_next_ms; /* when the next may start (0: no more) */
};

/* Milliseconds of the monotonic clock (the real one: peer.c's own
 * loop; the roles ask pc_peer_now). */
uint64_t pc_now_ms(void);

/* The time of the peer's world (its env). */
uint64_t pc_peer_now(const pc_peer *p);

/* The peer's view entry for an endpoint, or NULL. */
const pc_member *pc_peer_member(pc_peer *p, const char *endpoint);

/* True if the endpoint is a member seen ALIVE. */
bool pc_peer_alive(pc_peer *p, const char *endpoint);

/* Sends through the peer's env (see pc_transport_send): a body whose
 * writer failed is not sent, its error returned. */
int pc_peer_send(pc_peer *p, const char *to, pc_hdr h, const pc_wbuf *body, pc_buf *bulk);
int pc_peer_send_raw(pc_peer *p, const char *to, pc_hdr h, const void *body, size_t len,
                     pc_buf *bulk);

/* Which role takes a message of this type from the network. */
typedef enum pc_role {
    PC_ROLE_NONE = 0,
    PC_ROLE_MEMBERS,
    PC_ROLE_DEPLOYER,
    PC_ROLE_WORKER,
    PC_ROLE_HOLDER,
    PC_ROLE_STATUS
} pc_role;
pc_role pc_msg_role(uint16_t type);

/* ===================================================================
 * The roles (their files say how)
 * =================================================================== */

int pc_deployer_new(pc_deployer **out, pc_peer *p);
void pc_deployer_destroy(pc_deployer **d_p);
void pc_deployer_on_msg(pc_deployer *d, pc_msg *m);
void pc_deployer_on_member(pc_deployer *d, const pc_member *m, pc_member_state old);
uint64_t pc_deployer_tick(pc_deployer *d, uint64_t now);
/* Sends what the messages handled since the last call left due (the
 * acknowledgements of a burst of outputs); before the loop waits again. */
void pc_deployer_flush(pc_deployer *d);
void pc_deployer_status(pc_deployer *d, pc_wbuf *json);

int pc_worker_new(pc_worker **out, pc_peer *p);
void pc_worker_destroy(pc_worker **w_p);
void pc_worker_on_msg(pc_worker *w, pc_msg *m);
void pc_worker_on_member(pc_worker *w, const pc_member *m, pc_member_state old);
uint64_t pc_worker_tick(pc_worker *w, uint64_t now);
/* A record from the executor x (the worker owns payload, malloc'd or
 * NULL), and the end of x (why, and the signal that ended a process or
 * 0): what the env's executors hand back. */
void pc_worker_exec_record(pc_worker *w, void *x, const pc_hdr *h, uint8_t *payload);
/* A periodic image (X_IMAGE_SLOT) or the image of a stop
 * (X_STOPPED_SLOT) from executor x given as its envelope (image, taken),
 * lent in shared memory; NULL with why when the record was refused. */
void pc_worker_exec_image(pc_worker *w, void *x, const pc_hdr *h, pc_buf *image, const char *why);
void pc_worker_exec_ended(pc_worker *w, void *x, const char *why, int signal);
/* Starts migrating every VT away (graceful leave). */
void pc_worker_leave(pc_worker *w);
/* VTs still running here (0 once a leave has moved them all). */
uint32_t pc_worker_load(const pc_worker *w);
void pc_worker_status(pc_worker *w, pc_wbuf *json);
/* The periodic images this worker sent its VTs' holders: how many, their
 * bytes, and the bytes that went (whole images, or patches of them). */
void pc_worker_ckpt_status(pc_worker *w, pc_wbuf *json);
/* The copies of global values this worker keeps for its VTs (gcopy.h):
 * how many, their bytes, and the inputs that named one it had or not. */
void pc_worker_copies_status(pc_worker *w, pc_wbuf *json);

/* Appends the module cache's counts: {"cached":N,"bytes":N,...}. */
void pc_worker_modules_status(pc_worker *w, pc_wbuf *json);
/* Reads answered at this worker (worker_reads.c): {"answered", "versioned_copies",
 * "pushes"}. */
void pc_worker_reads_status(pc_worker *w, pc_wbuf *json);

int pc_holder_new(pc_holder **out, pc_peer *p);
void pc_holder_destroy(pc_holder **h_p);
void pc_holder_on_msg(pc_holder *h, pc_msg *m);
void pc_holder_on_member(pc_holder *h, const pc_member *m, pc_member_state old);
/* Drops the images of a deployer dead for the client timeout; returns
 * when it wants to run again. */
uint64_t pc_holder_tick(pc_holder *h, uint64_t now);
void pc_holder_status(pc_holder *h, pc_wbuf *json);
/* Images this holder made from patches. */
uint64_t pc_holder_patched(const pc_holder *h);

/* ===================================================================
 * JSON text (status.c)
 * =================================================================== */

/* The status document of this peer (see README.md, "Status"), written
 * with the JSON text of status.h. */
void pc_status_json(pc_peer *p, pc_wbuf *out);

#endif
