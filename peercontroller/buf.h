/* buf.h - the peer controller's byte buffer (buf.c): pc_buf, immutable
 * bytes shared by reference counting, and pc_msg, a received message
 * made of them. A module or an image travels from the network to the
 * roles, is held, and goes out again to several peers without a copy:
 * the transport wraps a received frame in a buffer and hands a buffer's
 * bytes to the network as they are; the roles and the simulator share,
 * move and release buffers and never see how the bytes are kept.
 *
 * A buffer is immutable once made. Its count of references is atomic:
 * the roles run on the peer's network thread, but the last reference may
 * go on another thread (the network library's own, once it has sent the
 * bytes). A NULL buffer is the empty one: pc_buf_len gives 0, and every
 * function here accepts it.
 */
#ifndef PC_BUF_H
#define PC_BUF_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

typedef struct pc_buf pc_buf;

/* Read-only but for who makes the buffer (pc_buf_init). */
struct pc_buf {
    const uint8_t *data;
    size_t len;
    atomic_size_t refs;
    void (*release)(pc_buf *b); /* frees b and its bytes once refs drops to 0 */
};

/* For a maker that embeds the buffer in its own record (the transport's
 * received frames): one reference, given to the maker; release frees the
 * record and its bytes. */
void pc_buf_init(pc_buf *b, const void *data, size_t len, void (*release)(pc_buf *b));

/* A buffer with a copy of len bytes (small payloads); NULL: no memory. */
pc_buf *pc_buf_new(const void *data, size_t len);

/* A buffer over len bytes at data, owned by someone else: done(ctx) runs
 * once the last reference goes (on whatever thread drops it). NULL: no
 * memory, and done is not called (the caller still owns the bytes). */
pc_buf *pc_buf_wrap(const void *data, size_t len, void (*done)(void *ctx), void *ctx);

/* Shares b: one more reference, to release on its own; returns b. */
pc_buf *pc_buf_ref(pc_buf *b);

/* Moves *bp out: returns it and empties *bp (the reference goes along). */
pc_buf *pc_buf_take(pc_buf **bp);

/* Releases the reference in *bp and empties it; the bytes go with the
 * last reference. */
void pc_buf_drop(pc_buf **bp);

static inline const void *pc_buf_data(const pc_buf *b) { return b ? b->data : NULL; }
static inline size_t pc_buf_len(const pc_buf *b) { return b ? b->len : 0; }

/* A received message: the header, who sent it, and up to two payload
 * frames: the structured part and a bulk part (a module or an image),
 * each NULL when absent or empty. A role that keeps a frame takes it
 * (pc_buf_take) or shares it (pc_buf_ref); the receiver releases the
 * rest with pc_msg_close. */
typedef struct pc_msg {
    pc_hdr h;
    char from[PC_ENDPOINT_MAX]; /* a peer's endpoint, or a client's routing id */
    pc_buf *body;               /* frame 1 */
    pc_buf *bulk;               /* frame 2 */
} pc_msg;

void pc_msg_close(pc_msg *m);

#endif
