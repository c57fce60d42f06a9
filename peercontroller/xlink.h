/* xlink.h - an executor's links to the other executors of its VC
 * (xlink.c), the transport of direct messages (docs/DIRECT_MESSAGES.md):
 * one ROUTER that only receives, bound on the peer's own address, and one
 * DEALER per other executor that only sends, connected to its ROUTER.
 *
 * The two directions are apart because different threads use them: the
 * thread that sends (a VT's, under the engine's lock) writes its DEALER
 * itself, and the thread that waits for input (an idle worker of the
 * executor, or its loop) reads the ROUTER itself, so that no message is
 * handed from one thread to another on its way (`eval/README.md`,
 * "Direct messages": a hand-over per message took the round trip from
 * 1.2x to 1.8x libzmq's). Neither half is thread-safe: the caller
 * serializes the sends, and the reads.
 *
 * Every DEALER names its executor by its routing id ("x", the executor's
 * number 0..63, its incarnation as u32 little-endian), so a receiver knows
 * who sent each frame; a frame from a connection that does not name
 * itself so is dropped and counted, and so is one above the size bound.
 */
#ifndef PC_XLINK_H
#define PC_XLINK_H

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

#define PC_XLINK_PEERS 64 /* executors of a VC (causal.h: PC_CX_PEERS) */

typedef struct pc_xlink pc_xlink;

typedef struct pc_xlink_stats {
    uint64_t sent, received; /* frames */
    uint64_t dropped_out;    /* frames a full queue or a closed link refused */
    uint64_t dropped_in;     /* frames from a connection that does not name an executor */
    uint64_t bytes_out, bytes_in;
} pc_xlink_stats;

/* Links for executor `self` (0..PC_XLINK_PEERS-1) in its incarnation
 * `inc` (> 0), its ROUTER bound on `host` (a numeric IPv4 address) at a
 * port the system picks; *ep gets the endpoint to tell the others.
 * max_frame bounds a received frame (ZMQ_MAXMSGSIZE: a connection that
 * sends more is closed). curve: the links' key pair of a mesh with keys
 * (auth.h, pc_key_derive_links; kept by the caller), or NULL: every link
 * CurveZMQ with it, as server and as client. 0, LEV_EINVAL (self, inc or
 * host out of range), LEV_EPEER (cannot bind: the detail says why),
 * LEV_ENOMEM. */
struct pc_keypair;
int pc_xlink_new(pc_xlink **out, void *zctx, int self, uint32_t inc, const char *host,
                 size_t max_frame, const struct pc_keypair *curve, char ep[PC_ENDPOINT_MAX]);

/* Closes every socket, dropping what is queued; accepts NULL, sets *x_p
 * NULL. */
void pc_xlink_destroy(pc_xlink **x_p);

/* Executor `peer` listens at `ep` from now on (NULL: it is gone): its
 * DEALER connects, or connects again to a new endpoint, dropping what
 * was queued for the old one. 0, LEV_EINVAL (peer out of range or self,
 * ep not tcp://HOST:PORT), LEV_EPEER, LEV_ENOMEM. */
int pc_xlink_peer(pc_xlink *x, int peer, const char *ep);

/* Sends frame p[n] to executor `peer`. Never blocks: a frame its queue
 * cannot take is dropped and counted (what is dropped comes again: the
 * engine sends its log again when a receiver is placed anew). 0, or
 * LEV_EPEER (no link to peer, or dropped). */
int pc_xlink_send(pc_xlink *x, int peer, const void *p, size_t n);

/* What pc_xlink_read hands over: frame p[n] from executor `src` in its
 * incarnation `inc` (a frame of an incarnation the caller knows to be
 * replaced is for it to drop); p lives until the call returns. */
typedef void (*pc_xlink_on)(void *ud, int src, uint32_t inc, const void *p, size_t n);

/* Reads up to `max` frames that are there, without waiting, handing each
 * to on. Returns the frames handed over, or LEV_EPEER when the socket
 * failed. */
int pc_xlink_read(pc_xlink *x, int max, pc_xlink_on on, void *ud);

/* Waits up to ms milliseconds (-1: for ever) for a frame to read: 1 when
 * one is there, 0 when the time passed, LEV_EPEER on failure. */
int pc_xlink_wait(pc_xlink *x, int ms);

/* The ROUTER, to poll it with other sockets (ZMQ_POLLIN: pc_xlink_read). */
void *pc_xlink_socket(pc_xlink *x);

/* The ROUTER's ZMQ_FD, to poll it as a file: readable when something may
 * have come since pc_xlink_read last read it empty (-1 on failure). */
int pc_xlink_fd(pc_xlink *x);

pc_xlink_stats pc_xlink_stats_of(const pc_xlink *x);

#endif
