/* client_io.c - the transport of the client API: the process's ZeroMQ
 * context, the choice of a peer (given, LEV_PEER, or the embedded one), and
 * the thread of each VC that owns its DEALER socket, forwards requests,
 * pings the peer, decides when it is lost, and dispatches what it sends.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>
#include <zmq.h>

#include "auth.h"
#include "client_int.h"
#include "embed.h"
#include "rt.h"
#include "tsan_sync.h"

#define CL_MAX_MSG (1LL << 30) /* ZMQ_MAXMSGSIZE of a VC's socket */
#define CL_MAX_PARTS 4         /* frames of a message from the peer we read */
#define CL_RECV_BATCH 64       /* messages read from a socket per wakeup */

/* ===================================================================
 * The process's ZeroMQ context
 * =================================================================== */

static pthread_once_t s_ctx_once = PTHREAD_ONCE_INIT;
static void *s_ctx;

static void s_ctx_init(void)
{
    if (sodium_init() < 0)
        return;
    s_ctx = zmq_ctx_new();
    if (s_ctx)
        zmq_ctx_set(s_ctx, ZMQ_BLOCKY, 0);
}

/* The context every VC's sockets live in, created on first use and kept
 * until the process ends; NULL if it could not be created. */
static void *s_zmq_ctx(void)
{
    pthread_once(&s_ctx_once, s_ctx_init);
    return s_ctx;
}

uint64_t cl_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ===================================================================
 * Which peer
 * =================================================================== */

int cl_env_timeout(int *ms)
{
    const char *s = getenv("LEV_PEER_TIMEOUT_MS");
    *ms = CL_TIMEOUT_MS;
    if (!s || !*s)
        return 0;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v <= 0 || v > INT_MAX / (4 * CL_REQUEST_FACTOR))
        return rt_err(LEV_EINVAL, "LEV_PEER_TIMEOUT_MS='%s' is not a positive number of ms", s);
    *ms = (int)v;
    return 0;
}

int cl_peer_endpoint(const char *given, char out[PC_ENDPOINT_MAX])
{
    const char *env = getenv("LEV_PEER");
    const char *ep = given ? given : env && *env ? env : NULL;
    if (!ep)
        return pc_embed_endpoint(getenv("LEV_LISTEN"), getenv("LEV_JOIN"), out);
    if (strlen(ep) >= PC_ENDPOINT_MAX)
        return rt_err(LEV_EINVAL, "peer endpoint '%.40s...' is longer than %u bytes", ep,
                      PC_ENDPOINT_MAX - 1);
    snprintf(out, PC_ENDPOINT_MAX, "%s", ep);
    return 0;
}

/* ===================================================================
 * Sockets and the thread of a VC
 * =================================================================== */

static void *s_thread(void *arg);

/* Closes a socket if open and forgets it. */
static void s_close(void **sock)
{
    if (*sock)
        zmq_close(*sock);
    *sock = NULL;
}

/* Sets an int option; true on success. */
static bool s_opt(void *sock, int opt, int v)
{
    return zmq_setsockopt(sock, opt, &v, sizeof v) == 0;
}

/* CurveZMQ to a mesh with keys (peercontroller/auth.h): LEV_MESH_KEY
 * names the mesh's public key (NAME.pub, or the pair NAME.key), and
 * LEV_CLIENT_KEY this client's key pair, which the mesh must admit (by
 * default the mesh's pair, when LEV_MESH_KEY names it). Neither set: the
 * embedded peer's own pair when endpoint is that peer and it has keys
 * (embed.h), else no CurveZMQ. 0, or LEV_EINVAL naming the file and what
 * is wrong. */
static int s_curve(void *sock, const char *endpoint)
{
    pc_keypair m, c;
    char err[512];
    int rc = pc_client_keys(&m, &c, err, sizeof err);
    if (rc < 0)
        return rt_err(LEV_EINVAL, "%s", err);
    if (!rc && pc_embed_keys(endpoint, &c)) { /* this process's own peer */
        m = c;
        rc = 1;
    }
    if (rc && pc_auth_connect(sock, &c, m.pub))
        return rt_err(LEV_EINVAL, "the keys are not ones libzmq takes");
    return 0;
}

const char *cl_keys_hint(void)
{
    const char *k = getenv("LEV_MESH_KEY");
    return k && *k ? " (with keys: the peer may have refused this client's key; its log "
                     "names the address it refused)"
                   : "";
}

/* Creates the DEALER that talks to the peer, with its routing id
 * "client:<pid>:<random hex>", and connects it. */
static int s_dealer(lev_vc *vc, void *ctx)
{
    unsigned char rnd[8];
    char rid[64];
    randombytes_buf(rnd, sizeof rnd);
    int n = snprintf(rid, sizeof rid, "client:%ld:", (long)getpid());
    for (size_t i = 0; i < sizeof rnd; i++)
        n += snprintf(rid + n, sizeof rid - (size_t)n, "%02x", rnd[i]);
    int64_t max = CL_MAX_MSG;
    vc->dealer = zmq_socket(ctx, ZMQ_DEALER);
    if (!vc->dealer || !s_opt(vc->dealer, ZMQ_LINGER, 0) ||
        zmq_setsockopt(vc->dealer, ZMQ_ROUTING_ID, rid, (size_t)n) ||
        zmq_setsockopt(vc->dealer, ZMQ_MAXMSGSIZE, &max, sizeof max))
        return rt_err(LEV_ENOMEM, "cannot create a socket: %s", zmq_strerror(errno));
    int rc = s_curve(vc->dealer, vc->endpoint);
    if (rc)
        return rc;
    if (zmq_connect(vc->dealer, vc->endpoint))
        return rt_err(LEV_EINVAL, "malformed peer endpoint '%s': %s", vc->endpoint,
                      zmq_strerror(errno));
    return 0;
}

/* Creates the inproc pair that carries requests to the VC's thread: no
 * high-water mark, so a sender never waits on a thread busy in a report
 * callback. */
static int s_pair(lev_vc *vc, void *ctx)
{
    static atomic_uint_fast64_t next;
    char name[64];
    snprintf(name, sizeof name, "inproc://lev-client-%" PRIuFAST64, ++next);
    vc->rx = zmq_socket(ctx, ZMQ_PAIR);
    vc->tx = zmq_socket(ctx, ZMQ_PAIR);
    if (!vc->rx || !vc->tx || !s_opt(vc->rx, ZMQ_LINGER, 0) || !s_opt(vc->tx, ZMQ_LINGER, 0) ||
        !s_opt(vc->rx, ZMQ_RCVHWM, 0) || !s_opt(vc->tx, ZMQ_SNDHWM, 0) || zmq_bind(vc->rx, name) ||
        zmq_connect(vc->tx, name))
        return rt_err(LEV_ENOMEM, "cannot create the VC's inproc pair: %s", zmq_strerror(errno));
    return 0;
}

int cl_io_start(lev_vc *vc)
{
    void *ctx = s_zmq_ctx();
    if (!ctx)
        return rt_err(LEV_ENOMEM, "cannot create a ZeroMQ context: %s", zmq_strerror(errno));
    int rc = s_dealer(vc, ctx);
    if (!rc)
        rc = s_pair(vc, ctx);
    if (!rc) {
        /* The thread takes no signal of the application's. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        if (pthread_create(&vc->thread, NULL, s_thread, vc))
            rc = rt_err(LEV_ENOMEM, "cannot start the VC's thread");
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    if (rc) {
        s_close(&vc->dealer);
        s_close(&vc->rx);
        s_close(&vc->tx);
        return rc;
    }
    vc->running = true;
    return 0;
}

bool cl_io_on_thread(const lev_vc *vc)
{
    return vc->running && pthread_equal(pthread_self(), vc->thread);
}

/* Frees a payload buffer that ZeroMQ has sent. */
static void s_free_data(void *data, void *hint)
{
    (void)hint;
    LEV_TSAN_RECEIVED(); /* on ZeroMQ's thread */
    free(data);
}

int cl_io_send(lev_vc *vc, pc_hdr h, pc_wbuf *payload, const void *bulk, size_t bulk_len)
{
    if (payload && payload->err)
        return rt_err(payload->err, "cannot build the %s message", pc_type_name(h.type));
    size_t plen = payload ? payload->len : 0;
    if (plen > UINT32_MAX - bulk_len)
        return rt_err(LEV_ERANGE, "%s message of %zu bytes is over 4 GiB", pc_type_name(h.type),
                      plen + bulk_len);
    h.len = (uint32_t)(plen + bulk_len);
    uint8_t hb[PC_HDR_LEN];
    pc_hdr_encode(&h, hb);

    zmq_msg_t parts[3];
    int n = 0;
    if (zmq_msg_init_size(&parts[n], PC_HDR_LEN))
        return rt_err(LEV_ENOMEM, "cannot build the %s message", pc_type_name(h.type));
    memcpy(zmq_msg_data(&parts[n++]), hb, PC_HDR_LEN);
    if (plen) {
        if (zmq_msg_init_data(&parts[n], payload->data, plen, s_free_data, NULL)) {
            zmq_msg_close(&parts[0]);
            return rt_err(LEV_ENOMEM, "cannot build the %s message", pc_type_name(h.type));
        }
        pc_wbuf_init(payload); /* the buffer now belongs to the message */
        n++;
    }
    if (bulk)
        zmq_msg_init_data(&parts[n++], (void *)bulk, bulk_len, NULL, NULL);

    int rc = 0, i = 0;
    pthread_mutex_lock(&vc->tx_mu);
    LEV_TSAN_SENT();
    for (; i < n && !rc; i++)
        if (zmq_msg_send(&parts[i], vc->tx, i + 1 < n ? ZMQ_SNDMORE : 0) < 0)
            rc = rt_err(LEV_EPEER, "cannot hand the %s message to the VC's thread: %s",
                        pc_type_name(h.type), zmq_strerror(errno));
    pthread_mutex_unlock(&vc->tx_mu);
    for (i = rc ? i - 1 : n; i < n; i++)
        zmq_msg_close(&parts[i]);
    return rc;
}

bool cl_io_stop(lev_vc *vc)
{
    if (vc->running) {
        int sent = -1;
        pthread_mutex_lock(&vc->tx_mu);
        LEV_TSAN_SENT();
        for (int i = 0; i < 100 && sent < 0; i++)
            sent = zmq_send(vc->tx, "", 0, 0); /* an empty frame: stop */
        pthread_mutex_unlock(&vc->tx_mu);
        if (sent < 0)
            return false; /* only if the context were gone: the thread may still run */
        pthread_join(vc->thread, NULL);
        vc->running = false;
    }
    s_close(&vc->tx);
    return true;
}

/* ===================================================================
 * What the peer sends
 * =================================================================== */

/* A payload frame of a received message. */
typedef struct s_frame {
    const void *p;
    size_t n;
} s_frame;

/* Says on stderr why a message from the peer was dropped, if LEV_DEBUG. */
static void s_drop(const lev_vc *vc, const char *what, const char *why)
{
    if (vc->debug)
        fprintf(stderr, "libleverage: dropped %s from %s: %s\n", what, vc->endpoint, why);
}

/* Completes call c (unlinked already, under vc->mu) and wakes its caller. */
static void s_complete(lev_vc *vc, cl_call *c, int err, const char *detail)
{
    c->err = err;
    snprintf(c->detail, sizeof c->detail, "%s", detail ? detail : "");
    c->done = true;
    pthread_cond_broadcast(&vc->cond);
}

/* Starts reading the one structured payload frame of a message; false
 * (and nothing read) when there is not exactly one. */
static bool s_payload(pc_rbuf *r, const s_frame *f, int nf)
{
    pc_rbuf_init(r, nf == 1 ? f[0].p : NULL, nf == 1 ? f[0].n : 0);
    return nf == 1;
}

/* Why a payload read through r (s_payload said `one`) is malformed, or NULL. */
static const char *s_payload_fault(const pc_rbuf *r, bool one)
{
    if (!one)
        return "not one payload frame";
    return pc_rbuf_why(r);
}

/* Why a reply that carries nothing (OPENED, STARTED, CLOSED, SENT,
 * GSET_OK) is malformed, or NULL: no payload frame, or an empty one. */
static const char *s_empty_payload(const s_frame *f, int nf)
{
    pc_rbuf r;
    if (!nf)
        return NULL;
    bool one = s_payload(&r, f, nf);
    return s_payload_fault(&r, one);
}

/* Why reply h cannot complete call c (NULL: none waits), or NULL. */
static const char *s_reply_fault(const lev_vc *vc, const pc_hdr *h, const cl_call *c)
{
    if (!c)
        return "answers no waiting request";
    if (h->type != PC_C_ERROR && h->type != c->want)
        return "is not the reply to the request of its seq";
    if (h->type == PC_C_OPENED && !h->vc)
        return "names VC 0";
    if ((h->type == PC_C_STARTED || h->type == PC_C_STATS_REPLY) && h->vc != vc->id)
        return "names another VC";
    if (h->type == PC_C_STARTED && h->vt <= LEV_CLIENT)
        return "names VT 0 or 1";
    if (h->type == PC_C_STARTED && cl_vt_find(vc, h->vt))
        return "names a VT this VC has already";
    return NULL;
}

/* Reads ERROR's payload (i32 err < 0, s detail) into *err and detail;
 * returns why it is malformed, or NULL. */
static const char *s_error_payload(const s_frame *f, int nf, int *err, char detail[CL_DETAIL_MAX])
{
    pc_rbuf r;
    bool one = s_payload(&r, f, nf);
    *err = pc_get_i32(&r);
    char *d = pc_get_strdup(&r, 1u << 16);
    const char *why = s_payload_fault(&r, one);
    if (!why && *err >= 0)
        why = "error code is not negative";
    snprintf(detail, CL_DETAIL_MAX, "%s", d ? d : "");
    free(d);
    return why;
}

/* Reads GVALUE's payload (u8 set, b value) into a malloc'd copy *data
 * (NULL when empty) of *len bytes; a copy that cannot be made sets *err
 * (LEV_ENOMEM) and detail instead. Returns why it is malformed, or NULL. */
static const char *s_value_payload(const s_frame *f, int nf, void **data, size_t *len, int *err,
                                   char detail[CL_DETAIL_MAX])
{
    pc_rbuf r;
    const void *p = NULL;
    size_t n = 0;
    bool one = s_payload(&r, f, nf);
    uint8_t set = pc_get_u8(&r);
    pc_get_blob(&r, &p, &n);
    const char *why = s_payload_fault(&r, one);
    if (!why && set > 1)
        why = "set flag is neither 0 nor 1";
    if (!why && !set && n)
        why = "carries a value for a variable never set";
    if (why || !n)
        return why;
    if (!(*data = malloc(n))) {
        *err = LEV_ENOMEM;
        snprintf(detail, CL_DETAIL_MAX, "no memory for a value of %zu bytes", n);
        return NULL;
    }
    memcpy(*data, p, n);
    *len = n;
    return NULL;
}

/* Reads STATS_REPLY's payload (pc_get_vc_stats) into *st; returns why it
 * is malformed, or NULL. */
static const char *s_stats_payload(const s_frame *f, int nf, lev_vc_stats *st)
{
    pc_rbuf r;
    bool one = s_payload(&r, f, nf);
    pc_get_vc_stats(&r, st);
    return s_payload_fault(&r, one);
}

/* The reply to a request: OPENED, STARTED, CLOSED, SENT, GSET_OK, GVALUE
 * (its value handed to the call), STATS_REPLY (its counts too) or ERROR. A STARTED enters its VT in
 * the table before the caller wakes, so that no RESULT can find it missing. */
static void s_reply(lev_vc *vc, const pc_hdr *h, const s_frame *f, int nf)
{
    int err = 0;
    char detail[CL_DETAIL_MAX] = "";
    const char *why = NULL;
    void *data = NULL;
    size_t data_len = 0;
    lev_vc_stats stats = {0};
    if (h->type == PC_C_ERROR)
        why = s_error_payload(f, nf, &err, detail);
    else if (h->type == PC_C_GVALUE)
        why = s_value_payload(f, nf, &data, &data_len, &err, detail);
    else if (h->type == PC_C_STATS_REPLY)
        why = s_stats_payload(f, nf, &stats);
    else
        why = s_empty_payload(f, nf);
    pthread_mutex_lock(&vc->mu);
    cl_call *c = NULL;
    if (!why) {
        c = cl_call_find(vc, h->seq);
        why = s_reply_fault(vc, h, c);
    }
    if (!why && c) {
        cl_call_unlink(vc, c);
        c->vc = h->vc;
        c->vt = h->vt;
        if (h->type == PC_C_OPENED)
            vc->id = h->vc;
        if (h->type == PC_C_STARTED && cl_vt_add(vc, h->vt)) {
            err = LEV_ENOMEM;
            snprintf(detail, sizeof detail, "no memory to record VT %" PRIu64, h->vt);
        }
        c->data = data;
        c->data_len = data_len;
        c->stats = stats;
        data = NULL;
        s_complete(vc, c, err, detail);
    }
    pthread_mutex_unlock(&vc->mu);
    free(data);
    if (why)
        s_drop(vc, pc_type_name(h->type), why);
}

/* The result of a VT: kept in its record until lev_vt_join takes it. */
static void s_result(lev_vc *vc, const pc_hdr *h, const s_frame *f, int nf)
{
    pc_rbuf r;
    const void *res = NULL;
    size_t len = 0;
    bool one = s_payload(&r, f, nf);
    int err = pc_get_i32(&r);
    char *detail = pc_get_strdup(&r, 1u << 16);
    pc_get_blob(&r, &res, &len);
    const char *why = s_payload_fault(&r, one);
    if (!why && err > 0)
        why = "error code is positive";
    void *copy = NULL;
    if (!why && err == 0 && len && !(copy = malloc(len))) {
        err = LEV_ENOMEM;
        free(detail);
        detail = strdup("no memory for the result");
    }
    if (copy)
        memcpy(copy, res, len);

    pthread_mutex_lock(&vc->mu);
    cl_vt *v = NULL;
    if (!why) {
        v = cl_vt_find(vc, h->vt);
        why = h->vc != vc->id ? "names another VC"
              : !v            ? "names a VT this VC did not start or has joined"
              : v->done       ? "repeats a result"
                              : NULL;
    }
    if (!why && v) {
        v->done = true;
        v->err = err;
        v->detail = detail;
        v->result = copy;
        v->len = copy ? len : 0;
        detail = NULL;
        copy = NULL;
        pthread_cond_broadcast(&vc->cond);
    }
    pthread_mutex_unlock(&vc->mu);
    free(detail);
    free(copy);
    if (why)
        s_drop(vc, "C_RESULT", why);
}

/* A report of a VT: handed to the callback, outside the lock. */
static void s_report(lev_vc *vc, const pc_hdr *h, const s_frame *f, int nf)
{
    pc_rbuf r;
    const void *buf = NULL;
    size_t len = 0;
    bool one = s_payload(&r, f, nf);
    pc_get_blob(&r, &buf, &len);
    const char *why = s_payload_fault(&r, one);
    cl_report_fn cb = NULL;
    void *ctx = NULL;
    pthread_mutex_lock(&vc->mu);
    if (!why)
        why = h->vc != vc->id          ? "names another VC"
              : !cl_vt_find(vc, h->vt) ? "names a VT this VC did not start or has joined"
                                       : NULL;
    if (!why && (cb = vc->cb)) {
        ctx = vc->cb_ctx;
        vc->cb_running = true;
    }
    pthread_mutex_unlock(&vc->mu);
    if (why) {
        s_drop(vc, "C_REPORT", why);
        return;
    }
    if (!cb)
        return;
    cb(h->vt, len ? buf : NULL, len, ctx);
    pthread_mutex_lock(&vc->mu);
    vc->cb_running = false;
    pthread_cond_broadcast(&vc->cond);
    pthread_mutex_unlock(&vc->mu);
}

/* Handles one well-formed message from the peer. */
static void s_dispatch(lev_vc *vc, const pc_hdr *h, const s_frame *f, int nf)
{
    switch (h->type) {
    case PC_C_PONG:
        return;
    case PC_C_OPENED:
    case PC_C_STARTED:
    case PC_C_CLOSED:
    case PC_C_SENT:
    case PC_C_GSET_OK:
    case PC_C_GVALUE:
    case PC_C_STATS_REPLY:
    case PC_C_ERROR:
        s_reply(vc, h, f, nf);
        return;
    case PC_C_RESULT:
        s_result(vc, h, f, nf);
        return;
    case PC_C_REPORT:
        s_report(vc, h, f, nf);
        return;
    default:
        s_drop(vc, pc_type_name(h->type), "not a message for a client");
    }
}

/* Reads the frames of one message from sock, keeping the first max in
 * parts (*kept of them; the caller closes those) and dropping the rest.
 * Returns how many frames it read, 0 if no message was waiting. */
static int s_recv_parts(void *sock, zmq_msg_t *parts, int max, int *kept)
{
    int total = 0, more = 1;
    *kept = 0;
    while (more) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, sock, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&m);
            break;
        }
        LEV_TSAN_RECEIVED();
        more = zmq_msg_more(&m);
        total++;
        if (*kept < max) {
            zmq_msg_init(&parts[*kept]);
            zmq_msg_move(&parts[(*kept)++], &m);
        }
        zmq_msg_close(&m);
    }
    return total;
}

/* Reads one message from the peer if there is one: false if none. A
 * malformed one is dropped; *alive is set when a well-formed one came. */
static bool s_receive(lev_vc *vc, bool *alive)
{
    zmq_msg_t parts[CL_MAX_PARTS];
    int n, total = s_recv_parts(vc->dealer, parts, CL_MAX_PARTS, &n);
    if (!total)
        return false;
    pc_hdr h;
    s_frame f[CL_MAX_PARTS];
    const char *why = NULL;
    size_t sum = 0;
    for (int i = 1; i < n; i++) {
        f[i - 1].p = zmq_msg_data(&parts[i]);
        f[i - 1].n = zmq_msg_size(&parts[i]);
        sum += f[i - 1].n;
    }
    if (total > CL_MAX_PARTS)
        why = "too many frames";
    else if (!pc_hdr_decode(zmq_msg_data(&parts[0]), zmq_msg_size(&parts[0]), &h, &why) &&
             h.len != sum)
        why = "header length differs from its frames";
    if (why) {
        s_drop(vc, "a message", why);
    } else {
        *alive = true;
        s_dispatch(vc, &h, f, n - 1);
    }
    for (int i = 0; i < n; i++)
        zmq_msg_close(&parts[i]);
    return true;
}

/* ===================================================================
 * The thread: forwarding, liveness
 * =================================================================== */

/* Fails the waiting call of `seq`: its request could not be sent. */
static void s_fail_call(lev_vc *vc, uint64_t seq, const char *detail)
{
    pthread_mutex_lock(&vc->mu);
    cl_call *c = cl_call_find(vc, seq);
    if (c) {
        cl_call_unlink(vc, c);
        s_complete(vc, c, LEV_EPEER, detail);
    }
    pthread_mutex_unlock(&vc->mu);
}

/* Forwards one request from the pair to the peer: 1 done, 0 none waiting,
 * -1 told to stop (an empty frame). */
static int s_forward(lev_vc *vc)
{
    zmq_msg_t parts[3]; /* cl_io_send sends at most 3 */
    int n;
    s_recv_parts(vc->rx, parts, 3, &n);
    if (!n)
        return 0;
    pc_hdr h;
    int sent = 0;
    bool stop = n == 1 && zmq_msg_size(&parts[0]) == 0;
    if (!stop && !pc_hdr_decode(zmq_msg_data(&parts[0]), zmq_msg_size(&parts[0]), &h, NULL)) {
        LEV_TSAN_SENT();
        for (; sent < n; sent++)
            if (zmq_msg_send(&parts[sent], vc->dealer,
                             ZMQ_DONTWAIT | (sent + 1 < n ? ZMQ_SNDMORE : 0)) < 0)
                break;
        if (sent < n) {
            char why[CL_DETAIL_MAX];
            snprintf(why, sizeof why, "cannot send %s to levpeer at %s: %s", pc_type_name(h.type),
                     vc->endpoint, zmq_strerror(errno));
            s_fail_call(vc, h.seq, why);
        }
    }
    for (int i = sent; i < n; i++)
        zmq_msg_close(&parts[i]);
    return stop ? -1 : 1;
}

/* Sends a PING; a full queue skips one (silence decides). */
static void s_ping(lev_vc *vc)
{
    pthread_mutex_lock(&vc->mu);
    pc_hdr h = pc_hdr_make(PC_C_PING, vc->id, 0, 0, ++vc->seq);
    pthread_mutex_unlock(&vc->mu);
    uint8_t hb[PC_HDR_LEN];
    pc_hdr_encode(&h, hb);
    LEV_TSAN_SENT();
    zmq_send(vc->dealer, hb, PC_HDR_LEN, ZMQ_DONTWAIT);
}

/* Declares the peer lost: every waiting call and every later one fails. */
static void s_lose(lev_vc *vc, uint64_t silent_ms)
{
    pthread_mutex_lock(&vc->mu);
    vc->lost = true;
    snprintf(vc->lost_detail, sizeof vc->lost_detail,
             "levpeer at %s unreachable (no answer for %" PRIu64 " ms)%s", vc->endpoint, silent_ms,
             cl_keys_hint());
    while (vc->calls) {
        cl_call *c = vc->calls;
        cl_call_unlink(vc, c);
        s_complete(vc, c, LEV_EPEER, vc->lost_detail);
    }
    pthread_cond_broadcast(&vc->cond); /* joins wait on it too */
    pthread_mutex_unlock(&vc->mu);
}

/* The VC's thread: forwards requests, pings, reads and dispatches what the
 * peer sends, and declares the peer lost after timeout_ms of silence,
 * counted only while it waits (not while a report callback runs). Owns rx
 * and dealer and closes them when told to stop. */
static void *s_thread(void *arg)
{
    lev_vc *vc = arg;
    uint64_t timeout = (uint64_t)vc->timeout_ms, silent = 0;
    uint64_t ping_ms = timeout / 3 < CL_PING_MS ? timeout / 3 + 1 : CL_PING_MS;
    uint64_t next_ping = cl_now_ms();
    bool lost = false;
    for (;;) {
        uint64_t now = cl_now_ms();
        if (!lost && silent >= timeout) {
            s_lose(vc, silent);
            lost = true;
        }
        if (!lost && now >= next_ping) {
            s_ping(vc);
            next_ping = now + ping_ms;
        }
        long wait = -1;
        if (!lost) {
            uint64_t to_ping = next_ping > now ? next_ping - now : 0;
            wait = (long)(to_ping < timeout - silent ? to_ping : timeout - silent);
        }
        zmq_pollitem_t items[2] = {{vc->rx, 0, ZMQ_POLLIN, 0}, {vc->dealer, 0, ZMQ_POLLIN, 0}};
        int rc = zmq_poll(items, 2, wait);
        silent += cl_now_ms() - now;
        if (rc < 0 && errno != EINTR)
            break; /* the context is gone */
        int fwd = 0;
        for (int i = 0; i < CL_RECV_BATCH && (fwd = s_forward(vc)) > 0; i++)
            ;
        if (fwd < 0)
            break;
        bool alive = false;
        for (int i = 0; i < CL_RECV_BATCH && s_receive(vc, &alive); i++)
            ;
        if (alive)
            silent = 0;
    }
    s_close(&vc->dealer);
    s_close(&vc->rx);
    return NULL;
}
