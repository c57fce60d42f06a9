/* xlink.c - an executor's links to the other executors of its VC
 * (xlink.h): the ROUTER that receives, a DEALER per executor it sends
 * to, the routing ids that name the sending executor, and the frames
 * that are refused.
 */
#include "xlink.h"
#include "auth.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "lev_errors.h"
#include "rt.h"
#include "tsan_sync.h"

/* Frames queued per executor before drops: far more than a VT's window
 * of unacknowledged messages, so that a drop means a link that is down. */
#define XL_SNDHWM 65536
#define XL_ID_LEN 6 /* 'x', u8 executor, u32 incarnation */

typedef struct xl_peer {
    void *sock; /* DEALER connected to ep, or NULL */
    char ep[PC_ENDPOINT_MAX];
} xl_peer;

struct pc_xlink {
    void *zctx, *router;
    int self;
    uint32_t inc;
    uint8_t id[XL_ID_LEN];
    xl_peer peers[PC_XLINK_PEERS];
    pc_xlink_stats st;
    const pc_keypair *curve; /* the mesh's links pair (kept by the caller), or NULL */
};

static void s_opt(void *sock, int opt, int v) { (void)zmq_setsockopt(sock, opt, &v, sizeof v); }

int pc_xlink_new(pc_xlink **out, void *zctx, int self, uint32_t inc, const char *host,
                 size_t max_frame, const pc_keypair *curve, char ep[PC_ENDPOINT_MAX])
{
    *out = NULL;
    struct in_addr a;
    if (self < 0 || self >= PC_XLINK_PEERS || !inc || !host || inet_pton(AF_INET, host, &a) != 1)
        return rt_err(LEV_EINVAL,
                      "executor links: executor %d, incarnation %u, host '%s' out of "
                      "range (0..%d, above 0, a numeric IPv4 address)",
                      self, (unsigned)inc, host ? host : "(none)", PC_XLINK_PEERS - 1);
    pc_xlink *x = calloc(1, sizeof *x);
    if (!x)
        return LEV_ENOMEM;
    x->zctx = zctx;
    x->self = self;
    x->inc = inc;
    x->curve = curve;
    x->id[0] = 'x';
    x->id[1] = (uint8_t)self;
    for (int i = 0; i < 4; i++)
        x->id[2 + i] = (uint8_t)(inc >> (8 * i));
    x->router = zmq_socket(zctx, ZMQ_ROUTER);
    if (!x->router) {
        free(x);
        return rt_err(LEV_EPEER, "executor links: cannot create a socket: %s", zmq_strerror(errno));
    }
    if (curve && pc_auth_serve(x->router, curve)) {
        zmq_close(x->router);
        free(x);
        return rt_err(LEV_EINVAL, "executor links: a key libzmq does not take");
    }
    s_opt(x->router, ZMQ_LINGER, 0);
    s_opt(x->router, ZMQ_ROUTER_HANDOVER, 1); /* an executor that connects again takes its id */
    s_opt(x->router, ZMQ_RCVHWM, 0);
    int64_t mx = (int64_t)max_frame;
    if (max_frame)
        zmq_setsockopt(x->router, ZMQ_MAXMSGSIZE, &mx, sizeof mx);
    char bind[PC_ENDPOINT_MAX];
    snprintf(bind, sizeof bind, "tcp://%s:*", host);
    size_t n = PC_ENDPOINT_MAX;
    if (zmq_bind(x->router, bind) || zmq_getsockopt(x->router, ZMQ_LAST_ENDPOINT, ep, &n)) {
        int e = errno;
        zmq_close(x->router);
        free(x);
        return rt_err(LEV_EPEER, "executor links: cannot listen on %s: %s", bind, zmq_strerror(e));
    }
    *out = x;
    return 0;
}

static void s_peer_close(xl_peer *p)
{
    if (p->sock)
        zmq_close(p->sock);
    p->sock = NULL;
    p->ep[0] = '\0';
}

void pc_xlink_destroy(pc_xlink **x_p)
{
    pc_xlink *x = x_p ? *x_p : NULL;
    if (!x)
        return;
    for (int i = 0; i < PC_XLINK_PEERS; i++)
        s_peer_close(&x->peers[i]);
    zmq_close(x->router);
    free(x);
    *x_p = NULL;
}

int pc_xlink_peer(pc_xlink *x, int peer, const char *ep)
{
    if (peer < 0 || peer >= PC_XLINK_PEERS || peer == x->self)
        return rt_err(LEV_EINVAL, "executor links: no executor %d to link to", peer);
    if (ep && !pc_endpoint_valid(ep))
        return rt_err(LEV_EINVAL, "executor links: endpoint '%s' is not tcp://HOST:PORT", ep);
    xl_peer *p = &x->peers[peer];
    if (ep && p->sock && !strcmp(p->ep, ep))
        return 0;
    s_peer_close(p);
    if (!ep)
        return 0;
    p->sock = zmq_socket(x->zctx, ZMQ_DEALER);
    if (!p->sock)
        return rt_err(LEV_EPEER, "executor links: cannot create a socket: %s", zmq_strerror(errno));
    if (x->curve && pc_auth_connect(p->sock, x->curve, x->curve->pub)) {
        s_peer_close(p);
        return rt_err(LEV_EINVAL, "executor links: a key libzmq does not take");
    }
    zmq_setsockopt(p->sock, ZMQ_ROUTING_ID, x->id, XL_ID_LEN);
    s_opt(p->sock, ZMQ_LINGER, 0);
    s_opt(p->sock, ZMQ_SNDHWM, XL_SNDHWM);
    s_opt(p->sock, ZMQ_RECONNECT_IVL, 100);
    s_opt(p->sock, ZMQ_RECONNECT_IVL_MAX, 1000);
    s_opt(p->sock, ZMQ_IMMEDIATE, 0); /* queue while it connects */
    if (zmq_connect(p->sock, ep)) {
        int e = errno;
        s_peer_close(p);
        return rt_err(LEV_EPEER, "executor links: cannot connect to %s: %s", ep, zmq_strerror(e));
    }
    pc_ep_copy(p->ep, ep);
    return 0;
}

int pc_xlink_send(pc_xlink *x, int peer, const void *p, size_t n)
{
    xl_peer *l = peer >= 0 && peer < PC_XLINK_PEERS ? &x->peers[peer] : NULL;
    LEV_TSAN_SENT();
    if (!l || !l->sock || zmq_send(l->sock, p, n, ZMQ_DONTWAIT) < 0) {
        x->st.dropped_out++;
        return LEV_EPEER;
    }
    x->st.sent++;
    x->st.bytes_out += n;
    return 0;
}

/* The executor a routing id names, and its incarnation: false for an id
 * that does not name one. */
static bool s_id_read(const uint8_t *id, size_t n, int *src, uint32_t *inc)
{
    if (n != XL_ID_LEN || id[0] != 'x' || id[1] >= PC_XLINK_PEERS)
        return false;
    *src = id[1];
    *inc = 0;
    for (int i = 0; i < 4; i++)
        *inc |= (uint32_t)id[2 + i] << (8 * i);
    return *inc != 0;
}

int pc_xlink_read(pc_xlink *x, int max, pc_xlink_on on, void *ud)
{
    int got = 0;
    while (got < max) {
        zmq_msg_t id, body;
        zmq_msg_init(&id);
        if (zmq_msg_recv(&id, x->router, ZMQ_DONTWAIT) < 0) {
            int e = errno;
            zmq_msg_close(&id);
            return e == EAGAIN || e == EINTR ? got : LEV_EPEER;
        }
        LEV_TSAN_RECEIVED();
        bool more = zmq_msg_more(&id);
        zmq_msg_init(&body);
        bool whole = more && zmq_msg_recv(&body, x->router, 0) >= 0;
        /* a frame is one part after the id: more parts make it malformed */
        bool extra = whole && zmq_msg_more(&body);
        while (extra) {
            zmq_msg_t rest;
            zmq_msg_init(&rest);
            extra = zmq_msg_recv(&rest, x->router, 0) >= 0 && zmq_msg_more(&rest);
            zmq_msg_close(&rest);
            whole = false;
        }
        int src;
        uint32_t inc;
        if (whole && s_id_read(zmq_msg_data(&id), zmq_msg_size(&id), &src, &inc)) {
            x->st.received++;
            x->st.bytes_in += zmq_msg_size(&body);
            on(ud, src, inc, zmq_msg_data(&body), zmq_msg_size(&body));
            got++;
        } else {
            x->st.dropped_in++;
        }
        zmq_msg_close(&body);
        zmq_msg_close(&id);
    }
    return got;
}

int pc_xlink_wait(pc_xlink *x, int ms)
{
    zmq_pollitem_t it = {x->router, 0, ZMQ_POLLIN, 0};
    int rc = zmq_poll(&it, 1, ms);
    if (rc < 0)
        return errno == EINTR ? 0 : LEV_EPEER;
    return rc > 0;
}

void *pc_xlink_socket(pc_xlink *x) { return x->router; }

int pc_xlink_fd(pc_xlink *x)
{
    int fd = -1;
    size_t n = sizeof fd;
    return zmq_getsockopt(x->router, ZMQ_FD, &fd, &n) ? -1 : fd;
}

pc_xlink_stats pc_xlink_stats_of(const pc_xlink *x) { return x->st; }
