/* client_int.h - what the two halves of the client API share: the state of
 * a virtual computer (struct lev_vc), the calls waiting for a reply, the
 * VTs it started, and the transport that client_io.c gives client.c.
 *
 * Internal (not installed). Names: cl_ for the client's internals.
 */
#ifndef CL_CLIENT_INT_H
#define CL_CLIENT_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lev_client.h"
#include "wire.h"

#define CL_DETAIL_MAX 384u       /* bytes of an error detail kept for a caller */
#define CL_TASK_MAX 255u         /* bytes of a task name, and of a global's */
#define CL_DATA_MAX (1ull << 31) /* bytes of a message or value the client sends */
#define CL_VT_BUCKETS 256u       /* buckets of a VC's table of VTs */
#define CL_PING_MS 250           /* a PING to the peer at least this often */
#define CL_TIMEOUT_MS 3000       /* LEV_PEER_TIMEOUT_MS when unset */
#define CL_REQUEST_FACTOR 10     /* a request waits at most this many peer timeouts */

/* A request waiting for its reply (on the caller's stack while it waits). */
typedef struct cl_call {
    uint64_t seq;  /* the request's hdr.seq, which the reply repeats */
    uint16_t want; /* the reply type that completes it (or C_ERROR) */
    bool done;
    int err;         /* 0, the peer's error, or LEV_EPEER */
    uint64_t vc, vt; /* the reply's hdr.vc and hdr.vt */
    char detail[CL_DETAIL_MAX];
    void *data; /* GVALUE's value (malloc'd; NULL when empty), the caller's */
    size_t data_len;
    lev_vc_stats stats; /* STATS_REPLY's counts */
    struct cl_call *next;
} cl_call;

/* A VT this VC started and nobody has joined yet. */
typedef struct cl_vt {
    lev_vt_id id;
    bool done; /* its RESULT arrived */
    int err;
    char *detail; /* malloc'd, or NULL */
    void *result; /* malloc'd, or NULL for an empty result */
    size_t len;
    struct cl_vt *next;
} cl_vt;

typedef void (*cl_report_fn)(lev_vt_id vt, const void *buf, size_t len, void *ctx);

struct lev_vc {
    pthread_mutex_t mu;  /* guards everything below but the sockets */
    pthread_cond_t cond; /* on CLOCK_MONOTONIC; broadcast on every change */
    uint64_t id;         /* from OPENED; 0 before */
    uint64_t seq;        /* the last hdr.seq used */
    bool lost;           /* the peer stopped answering: calls fail with EPEER */
    char lost_detail[CL_DETAIL_MAX];
    cl_call *calls;
    cl_vt *vts[CL_VT_BUCKETS];
    cl_report_fn cb;
    void *cb_ctx;
    bool cb_running;

    /* Fixed once open. */
    char endpoint[PC_ENDPOINT_MAX];
    int timeout_ms; /* of the peer's silence before it is lost */
    bool debug;     /* LEV_DEBUG: say on stderr what is dropped */

    /* Transport (client_io.c). The thread owns `rx` and `dealer`; callers
     * send on `tx` under tx_mu, which is never held with mu. */
    pthread_mutex_t tx_mu;
    void *tx, *rx, *dealer;
    pthread_t thread;
    bool running;
};

/* Locates the VT `id` in the VC's table, or NULL; called under vc->mu. */
cl_vt *cl_vt_find(const lev_vc *vc, lev_vt_id id);

/* Adds a VT record to the VC's table (under vc->mu). 0 or LEV_ENOMEM. */
int cl_vt_add(lev_vc *vc, lev_vt_id id);

/* Frees a VT record and what it holds; accepts NULL. */
void cl_vt_free(cl_vt *v);

/* The waiting call of sequence `seq`, or NULL; under vc->mu. */
cl_call *cl_call_find(lev_vc *vc, uint64_t seq);

/* Removes call c from the VC's waiting calls (under vc->mu); c may be
 * missing already. */
void cl_call_unlink(lev_vc *vc, cl_call *c);

/* Chooses the peer endpoint: `given`, else LEV_PEER, else the embedded
 * peer (started on first use). 0, LEV_EINVAL (too long), or the embedded
 * peer's error (LEV_EUNSUPPORTED where it is not built in). */
int cl_peer_endpoint(const char *given, char out[PC_ENDPOINT_MAX]);

/* Reads LEV_PEER_TIMEOUT_MS into *ms (CL_TIMEOUT_MS when unset).
 * 0 or LEV_EINVAL (not a positive number of milliseconds). */
int cl_env_timeout(int *ms);

/* Creates the VC's sockets, connects to vc->endpoint and starts its
 * thread. 0, LEV_EINVAL (malformed endpoint), LEV_ENOMEM, LEV_EPEER.
 * On failure nothing is left to stop. */
int cl_io_start(lev_vc *vc);

/* Sends a message to the peer through the VC's thread: the header (its
 * len is set here), then `payload` as frame 1 (its buffer is taken over
 * and the wbuf emptied; NULL or empty: no frame) and `bulk` bytes as
 * frame 2 without a copy (they must outlive the process's sends; NULL: no
 * frame). 0, LEV_ENOMEM, LEV_ERANGE (over 4 GiB), LEV_EPEER. */
int cl_io_send(lev_vc *vc, pc_hdr h, pc_wbuf *payload, const void *bulk, size_t bulk_len);

/* What an error about a silent peer adds when the client uses keys
 * (LEV_MESH_KEY): that the peer may have refused its key; else "". */
const char *cl_keys_hint(void);

/* Stops the VC's thread and closes its sockets; accepts a VC never
 * started. False if the thread could not be told to stop (it may still
 * use the VC, which must then not be freed). */
bool cl_io_stop(lev_vc *vc);

/* True on the VC's own thread (in a report callback). */
bool cl_io_on_thread(const lev_vc *vc);

/* Monotonic milliseconds. */
uint64_t cl_now_ms(void);

#endif
