/* embed.h - the peer a client process embeds when it names no peer
 * (embed.c): the one part of the peer controller that libleverage's
 * client (leverage/client_io.c) uses besides the wire protocol (wire.h).
 * Internal, not installed. A client includes this, wire.h and auth.h (its
 * keys) and no other header of peercontroller/; peer.h stays the
 * controller's own.
 */
#ifndef PC_EMBED_H
#define PC_EMBED_H

#include <stdbool.h>

#include "wire.h"

/* Starts the process's embedded peer on first use, listening on `listen`
 * (NULL or "": tcp://127.0.0.1:0) and joining the comma-separated seeds of
 * `join` (NULL or "": none), and copies its endpoint to out; later calls
 * return that peer's endpoint, whatever they pass. The peer lives until
 * the process exits. 0, or LEV_EINVAL (too many seeds, or too long a
 * list, named by lev_errdetail) or pc_peer_new's error. */
int pc_embed_endpoint(const char *listen, const char *join, char out[PC_ENDPOINT_MAX]);

/* Its keys (peercontroller/auth.h): with $LEV_KEY, that mesh's pair;
 * with $LEV_INSECURE=1, none; else a pair made for this process, so that
 * no other process reaches it (joining a mesh then needs one of the
 * first two: LEV_EINVAL says so). pc_embed_keys: whether the peer at
 * endpoint is this process's embedded one with keys, and its pair in
 * *pair (a client of it connects with it). */
struct pc_keypair;
bool pc_embed_keys(const char *endpoint, struct pc_keypair *pair);

#endif
