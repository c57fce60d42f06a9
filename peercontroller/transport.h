/* transport.h - the peer's network endpoint (transport.c): one ZeroMQ
 * ROUTER bound on the listen endpoint receives every message; sends go
 * to other peers through one DEALER per peer endpoint (the peer unit
 * proxies of the paper), whose routing id is this peer's endpoint, so a
 * receiver knows who sent; replies to a client (a routing id that is not
 * an endpoint) go back through the ROUTER.
 *
 * Received messages are checked here, once: the multipart shape, the
 * header (pc_hdr_decode) and its length against the frames. Their
 * payload frames reach the rest of the peer as byte buffers (buf.h) that
 * keep the received frames, and a bulk buffer sent goes out as it is:
 * no payload is copied on its way through. Only the peer's network
 * thread uses a transport.
 */
#ifndef PC_TRANSPORT_H
#define PC_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "wire.h"

typedef struct pc_transport pc_transport;

/* Counters since pc_transport_new. */
typedef struct pc_transport_stats {
    uint64_t received, sent, dropped_in, dropped_out;
} pc_transport_stats;

struct pc_keypair;

/* Binds the ROUTER on `listen` (tcp://HOST:PORT, port 0: any) and names
 * this peer `advertise`, or the bound endpoint (a wildcard host replaced
 * by this machine's first non-loopback address). max_msg bounds what is
 * accepted (ZMQ_MAXMSGSIZE). curve: the mesh's key pair (auth.h, kept by
 * the caller), or NULL: no CurveZMQ; with it the ROUTER is a CURVE server
 * (the ZAP handler of zctx, pc_auth, admits keys) and every DEALER
 * connects as a CURVE client with it. 0, LEV_EINVAL (bad endpoint or
 * key), LEV_EPEER (cannot bind: the detail says why), LEV_ENOMEM. */
int pc_transport_new(pc_transport **out, void *zctx, const char *listen, const char *advertise,
                     size_t max_msg, const struct pc_keypair *curve);

/* Closes every socket (queued messages to peers get linger_ms to leave)
 * and frees; accepts NULL. */
void pc_transport_destroy(pc_transport **t_p, int linger_ms);

/* This peer's endpoint. */
const char *pc_transport_endpoint(const pc_transport *t);

/* The ROUTER, for zmq_poll (ZMQ_POLLIN: call pc_transport_recv). */
void *pc_transport_socket(pc_transport *t);

/* Sends a message to `to` (a peer endpoint, or a client's routing id):
 * the header, then body (NULL: an empty frame) and bulk (NULL: none;
 * otherwise a reference the call takes over, released once the network
 * has sent the bytes or dropped them). Never blocks: a message that
 * cannot be queued is dropped and counted. 0, or LEV_EPEER (dropped),
 * LEV_EINVAL (bad destination). */
int pc_transport_send(pc_transport *t, const char *to, pc_hdr h, const pc_wbuf *body, pc_buf *bulk);

/* Same with raw bytes as the body. */
int pc_transport_send_raw(pc_transport *t, const char *to, pc_hdr h, const void *body, size_t len,
                          pc_buf *bulk);

/* Receives one message without blocking. 1: *m filled (caller closes it,
 * pc_msg_close);
 * 0: none waiting; LEV_EINVAL: a malformed message was read and dropped,
 * *why says why and *from who sent it (when known). */
int pc_transport_recv(pc_transport *t, pc_msg *m, const char **why);

/* Closes the DEALER to a peer that is gone, dropping what is queued for it. */
void pc_transport_forget(pc_transport *t, const char *endpoint);

void pc_transport_stats_get(const pc_transport *t, pc_transport_stats *st);

#endif
