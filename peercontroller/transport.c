/* transport.c - the peer's ZeroMQ sockets (transport.h): the bound
 * ROUTER, one DEALER per peer it sends to, the checks every received
 * message passes before anything else reads it, and the passage of
 * payload frames to and from byte buffers (buf.h) without copies.
 */
#include "transport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "auth.h"
#include "lev_errors.h"
#include "log.h"
#include "rt.h"
#include "tsan_sync.h"

/* Messages queued per peer before drops. What a drop loses comes again:
 * a VT's outputs and inputs are numbered and re-sent on a gap (msgmgr.c),
 * the rest is re-sent by its protocol's own timers; but a drop costs a
 * round of that, so the queue holds far more than a VT's window. */
#define PC_SNDHWM 65536
#define PC_HEARTBEAT_MS 1000 /* ZMQ connection heartbeats */

typedef struct s_proxy {
    struct s_proxy *next;
    char endpoint[PC_ENDPOINT_MAX];
    void *sock; /* DEALER connected to endpoint */
} s_proxy;

struct pc_transport {
    void *zctx;
    void *router;
    char endpoint[PC_ENDPOINT_MAX];
    size_t max_msg;
    s_proxy *proxies;
    pc_transport_stats st;
    const pc_keypair *curve; /* the mesh's key pair, or NULL */
};

/* Sets an int socket option, ignoring failure (options this libzmq lacks). */
static void s_opt(void *sock, int opt, int v) { (void)zmq_setsockopt(sock, opt, &v, sizeof v); }

/* The first non-loopback IPv4 address of this machine into out, or "127.0.0.1". */
static void s_local_addr(char *out, size_t cap)
{
    struct ifaddrs *ifs = NULL;
    snprintf(out, cap, "127.0.0.1");
    if (getifaddrs(&ifs))
        return;
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || (i->ifa_flags & IFF_LOOPBACK))
            continue;
        inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, out, (socklen_t)cap);
        break;
    }
    freeifaddrs(ifs);
}

int pc_transport_new(pc_transport **out, void *zctx, const char *listen, const char *advertise,
                     size_t max_msg, const pc_keypair *curve)
{
    *out = NULL;
    if (!pc_endpoint_valid(listen))
        return rt_err(LEV_EINVAL, "listen endpoint '%s' is not tcp://HOST:PORT", listen);
    if (advertise && !pc_endpoint_valid(advertise))
        return rt_err(LEV_EINVAL, "advertised endpoint '%s' is not tcp://HOST:PORT", advertise);
    pc_transport *t = calloc(1, sizeof *t);
    if (!t)
        return LEV_ENOMEM;
    t->zctx = zctx;
    t->max_msg = max_msg;
    t->curve = curve;
    t->router = zmq_socket(zctx, ZMQ_ROUTER);
    if (!t->router) {
        free(t);
        return rt_err(LEV_EPEER, "cannot create a socket: %s", zmq_strerror(errno));
    }
    if (curve && pc_auth_serve(t->router, curve)) {
        zmq_close(t->router);
        free(t);
        return rt_err(LEV_EINVAL, "the mesh's key pair is not one libzmq takes");
    }
    s_opt(t->router, ZMQ_LINGER, 0);
    s_opt(t->router, ZMQ_ROUTER_HANDOVER, 1);
    s_opt(t->router, ZMQ_RCVHWM, 0);
    s_opt(t->router, ZMQ_SNDHWM, PC_SNDHWM);
    s_opt(t->router, ZMQ_HEARTBEAT_IVL, PC_HEARTBEAT_MS);
    s_opt(t->router, ZMQ_HEARTBEAT_TIMEOUT, 5 * PC_HEARTBEAT_MS);
    int64_t mx = (int64_t)max_msg;
    zmq_setsockopt(t->router, ZMQ_MAXMSGSIZE, &mx, sizeof mx);
    if (zmq_bind(t->router, listen)) {
        int e = errno;
        zmq_close(t->router);
        free(t);
        return rt_err(LEV_EPEER, "cannot listen on %s: %s", listen, zmq_strerror(e));
    }
    char bound[PC_ENDPOINT_MAX];
    size_t blen = sizeof bound;
    zmq_getsockopt(t->router, ZMQ_LAST_ENDPOINT, bound, &blen);
    if (advertise) {
        pc_ep_copy(t->endpoint, advertise);
    } else if (!strncmp(bound, "tcp://0.0.0.0:", 14)) {
        char addr[64], port[8];
        s_local_addr(addr, sizeof addr);
        snprintf(port, sizeof port, "%.7s", bound + 14);
        snprintf(t->endpoint, sizeof t->endpoint, "tcp://%s:%s", addr, port);
    } else {
        pc_ep_copy(t->endpoint, bound);
    }
    *out = t;
    return 0;
}

void pc_transport_destroy(pc_transport **t_p, int linger_ms)
{
    pc_transport *t = t_p ? *t_p : NULL;
    if (!t)
        return;
    for (s_proxy *p = t->proxies, *next; p; p = next) {
        next = p->next;
        s_opt(p->sock, ZMQ_LINGER, linger_ms);
        zmq_close(p->sock);
        free(p);
    }
    zmq_close(t->router);
    free(t);
    *t_p = NULL;
}

const char *pc_transport_endpoint(const pc_transport *t) { return t->endpoint; }

void *pc_transport_socket(pc_transport *t) { return t->router; }

void pc_transport_stats_get(const pc_transport *t, pc_transport_stats *st) { *st = t->st; }

/* The DEALER to `to`, connected on first use; NULL if it cannot be made. */
static void *s_proxy_sock(pc_transport *t, const char *to)
{
    for (s_proxy *p = t->proxies; p; p = p->next)
        if (!strcmp(p->endpoint, to))
            return p->sock;
    s_proxy *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->sock = zmq_socket(t->zctx, ZMQ_DEALER);
    if (!p->sock || (t->curve && pc_auth_connect(p->sock, t->curve, t->curve->pub))) {
        if (p->sock)
            zmq_close(p->sock);
        free(p);
        return NULL;
    }
    pc_ep_copy(p->endpoint, to);
    zmq_setsockopt(p->sock, ZMQ_ROUTING_ID, t->endpoint, strlen(t->endpoint));
    s_opt(p->sock, ZMQ_LINGER, 0);
    s_opt(p->sock, ZMQ_SNDHWM, PC_SNDHWM);
    s_opt(p->sock, ZMQ_RECONNECT_IVL, 100);
    s_opt(p->sock, ZMQ_RECONNECT_IVL_MAX, 1000);
    s_opt(p->sock, ZMQ_HEARTBEAT_IVL, PC_HEARTBEAT_MS);
    s_opt(p->sock, ZMQ_HEARTBEAT_TIMEOUT, 5 * PC_HEARTBEAT_MS);
    if (zmq_connect(p->sock, to)) {
        zmq_close(p->sock);
        free(p);
        return NULL;
    }
    p->next = t->proxies;
    t->proxies = p;
    return p->sock;
}

void pc_transport_forget(pc_transport *t, const char *endpoint)
{
    for (s_proxy **pp = &t->proxies; *pp; pp = &(*pp)->next) {
        if (!strcmp((*pp)->endpoint, endpoint)) {
            s_proxy *p = *pp;
            *pp = p->next;
            zmq_close(p->sock);
            free(p);
            return;
        }
    }
}

/* A routing id as text: as it is when it is printable, else "0x" and its
 * bytes in hex (ZeroMQ's own ids are binary), so that a reply finds it. */
static void s_id_text(const uint8_t *id, size_t n, char out[PC_ENDPOINT_MAX])
{
    bool printable = n > 0 && n < PC_ENDPOINT_MAX && !(n > 1 && id[0] == '0' && id[1] == 'x');
    for (size_t i = 0; i < n && printable; i++)
        printable = id[i] >= 0x20 && id[i] <= 0x7e;
    if (printable) {
        memcpy(out, id, n);
        out[n] = '\0';
        return;
    }
    static const char hex[] = "0123456789abcdef";
    size_t k = 0;
    out[k++] = '0';
    out[k++] = 'x';
    for (size_t i = 0; i < n && k + 3 <= PC_ENDPOINT_MAX; i++) {
        out[k++] = hex[id[i] >> 4];
        out[k++] = hex[id[i] & 15];
    }
    out[k] = '\0';
}

/* The bytes of a routing id given as text (s_id_text's inverse) into
 * out[cap]; returns their number. */
static size_t s_id_bytes(const char *text, uint8_t *out, size_t cap)
{
    if (strncmp(text, "0x", 2)) {
        size_t n = strnlen(text, cap);
        memcpy(out, text, n);
        return n;
    }
    size_t n = 0;
    for (const char *p = text + 2; p[0] && p[1] && n < cap; p += 2) {
        unsigned v = 0;
        for (int i = 0; i < 2; i++)
            v = v * 16 + (unsigned)(p[i] <= '9' ? p[i] - '0' : (p[i] | 32) - 'a' + 10);
        out[n++] = (uint8_t)v;
    }
    return n;
}

/* zmq_send of one frame, retried on EINTR; 0 or -1. */
static int s_send_frame(void *sock, const void *p, size_t n, int flags)
{
    LEV_TSAN_SENT();
    for (int tries = 0; tries < 100; tries++) {
        if (zmq_send(sock, p, n, flags | ZMQ_DONTWAIT) >= 0)
            return 0;
        if (errno != EINTR)
            return -1;
    }
    return -1;
}

/* ZeroMQ is done with the bytes of a buffer it sent (on its own thread). */
static void s_sent(void *data, void *hint)
{
    (void)data;
    LEV_TSAN_RECEIVED(); /* on ZeroMQ's thread */
    pc_buf *b = hint;
    pc_buf_drop(&b);
}

/* Sends the bulk buffer b (its reference taken over) as the last frame,
 * its bytes handed to ZeroMQ as they are; 0 or -1. */
static int s_send_bulk(void *sock, pc_buf *b)
{
    zmq_msg_t msg;
    if (zmq_msg_init_data(&msg, (void *)b->data, b->len, s_sent, b)) {
        pc_buf_drop(&b);
        return -1;
    }
    int rc = -1;
    LEV_TSAN_SENT();
    for (int tries = 0; tries < 100; tries++) {
        rc = zmq_msg_send(&msg, sock, ZMQ_DONTWAIT) >= 0 ? 0 : -1;
        if (!rc || errno != EINTR)
            break;
    }
    int e = errno;
    zmq_msg_close(&msg); /* unsent: drops the reference */
    errno = e;
    return rc;
}

int pc_transport_send_raw(pc_transport *t, const char *to, pc_hdr h, const void *body, size_t len,
                          pc_buf *bulk)
{
    size_t blen = pc_buf_len(bulk);
    if (len + blen > UINT32_MAX) {
        pc_buf_drop(&bulk);
        return rt_err(LEV_ERANGE, "message to %s is over 4 GiB", to);
    }
    h.len = (uint32_t)(len + blen);
    uint8_t hb[PC_HDR_LEN];
    pc_hdr_encode(&h, hb);
    int is_peer = !strncmp(to, "tcp://", 6);
    void *sock = is_peer ? s_proxy_sock(t, to) : t->router;
    int rc = -1;
    if (sock) {
        /* The first frame decides: if it cannot be queued nothing was. */
        uint8_t id[PC_ENDPOINT_MAX];
        size_t idn = is_peer ? 0 : s_id_bytes(to, id, sizeof id);
        rc = is_peer ? 0 : s_send_frame(sock, id, idn, ZMQ_SNDMORE);
        if (!rc)
            rc = s_send_frame(sock, hb, sizeof hb, ZMQ_SNDMORE);
        if (!rc)
            rc = s_send_frame(sock, body, len, bulk ? ZMQ_SNDMORE : 0);
        if (!rc && bulk)
            rc = s_send_bulk(sock, pc_buf_take(&bulk));
    }
    pc_buf_drop(&bulk);
    if (rc) {
        t->st.dropped_out++;
        pc_log(PC_LOG_DEBUG, "send %s to %s dropped: %s", pc_type_name(h.type), to,
               zmq_strerror(errno));
        return LEV_EPEER;
    }
    t->st.sent++;
    return 0;
}

int pc_transport_send(pc_transport *t, const char *to, pc_hdr h, const pc_wbuf *body, pc_buf *bulk)
{
    if (body && body->err) {
        pc_buf_drop(&bulk);
        return body->err;
    }
    return pc_transport_send_raw(t, to, h, body ? body->data : NULL, body ? body->len : 0, bulk);
}

/* Receives one frame into msg, retrying EINTR; 0, or -1 (EAGAIN: none). */
static int s_recv_frame(void *sock, zmq_msg_t *msg, int flags)
{
    for (int tries = 0; tries < 100; tries++) {
        if (zmq_msg_recv(msg, sock, flags) >= 0) {
            LEV_TSAN_RECEIVED();
            return 0;
        }
        if (errno != EINTR)
            return -1;
    }
    return -1;
}

/* Reads and drops the rest of a multipart message. */
static void s_drain(void *sock)
{
    int more = 1;
    size_t sz = sizeof more;
    for (int i = 0; i < 1024; i++) {
        if (zmq_getsockopt(sock, ZMQ_RCVMORE, &more, &sz) || !more)
            return;
        zmq_msg_t f;
        zmq_msg_init(&f);
        int rc = s_recv_frame(sock, &f, 0);
        zmq_msg_close(&f);
        if (rc)
            return;
    }
}

/* A received frame kept as a buffer's bytes. */
typedef struct s_frame {
    pc_buf b;
    zmq_msg_t msg;
} s_frame;

static void s_frame_release(pc_buf *b)
{
    s_frame *f = (s_frame *)b;
    zmq_msg_close(&f->msg);
    free(f);
}

/* Receives the next frame of a message as a buffer into *out (NULL when
 * the frame is empty) and whether more follow; 0, or -1 (none, or no
 * memory: the frame is left for s_drain). */
static int s_recv_buf(void *sock, pc_buf **out, int *more)
{
    s_frame *f = malloc(sizeof *f);
    if (!f)
        return -1;
    zmq_msg_init(&f->msg);
    if (s_recv_frame(sock, &f->msg, ZMQ_DONTWAIT)) {
        zmq_msg_close(&f->msg);
        free(f);
        return -1;
    }
    *more = zmq_msg_more(&f->msg);
    if (!zmq_msg_size(&f->msg)) {
        s_frame_release(&f->b);
        return 0;
    }
    pc_buf_init(&f->b, zmq_msg_data(&f->msg), zmq_msg_size(&f->msg), s_frame_release);
    *out = &f->b;
    return 0;
}

int pc_transport_recv(pc_transport *t, pc_msg *m, const char **why)
{
    void *s = t->router;
    zmq_msg_t id, hdr;
    zmq_msg_init(&id);
    m->body = m->bulk = NULL;
    m->from[0] = '\0';
    if (s_recv_frame(s, &id, ZMQ_DONTWAIT)) {
        zmq_msg_close(&id);
        return 0;
    }
    s_id_text(zmq_msg_data(&id), zmq_msg_size(&id), m->from);
    zmq_msg_close(&id);

    int rc = LEV_EINVAL;
    *why = "no header frame";
    zmq_msg_init(&hdr);
    if (s_recv_frame(s, &hdr, ZMQ_DONTWAIT))
        goto bad;
    if (pc_hdr_decode(zmq_msg_data(&hdr), zmq_msg_size(&hdr), &m->h, why) < 0)
        goto bad;
    int more = zmq_msg_more(&hdr);
    if (more && s_recv_buf(s, &m->body, &more))
        goto bad;
    if (more && s_recv_buf(s, &m->bulk, &more))
        goto bad;
    if (more) {
        *why = "more than two payload frames";
        goto bad;
    }
    if (pc_buf_len(m->body) + pc_buf_len(m->bulk) != m->h.len) {
        *why = "header length does not match the payload frames";
        goto bad;
    }
    zmq_msg_close(&hdr);
    t->st.received++;
    return 1;
bad:
    s_drain(s);
    zmq_msg_close(&hdr);
    pc_msg_close(m);
    t->st.dropped_in++;
    return rc;
}
