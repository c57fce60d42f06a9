/* buf.c - the reference-counted immutable byte buffer (buf.h): its
 * three makers (embedded, copied, wrapped), sharing and release, and the
 * release of a received message.
 */
#include "buf.h"

#include <stdlib.h>
#include <string.h>

void pc_buf_init(pc_buf *b, const void *data, size_t len, void (*release)(pc_buf *b))
{
    b->data = data;
    b->len = len;
    atomic_init(&b->refs, 1);
    b->release = release;
}

static void s_free(pc_buf *b) { free(b); }

pc_buf *pc_buf_new(const void *data, size_t len)
{
    pc_buf *b = malloc(sizeof *b + len);
    if (!b)
        return NULL;
    uint8_t *bytes = (uint8_t *)(b + 1);
    if (len)
        memcpy(bytes, data, len);
    pc_buf_init(b, bytes, len, s_free);
    return b;
}

/* A buffer over bytes someone else owns, and how to give them back. */
typedef struct s_wrapped {
    pc_buf b;
    void (*done)(void *ctx);
    void *ctx;
} s_wrapped;

static void s_unwrap(pc_buf *b)
{
    s_wrapped *w = (s_wrapped *)b;
    w->done(w->ctx);
    free(w);
}

pc_buf *pc_buf_wrap(const void *data, size_t len, void (*done)(void *ctx), void *ctx)
{
    s_wrapped *w = malloc(sizeof *w);
    if (!w)
        return NULL;
    pc_buf_init(&w->b, data, len, s_unwrap);
    w->done = done;
    w->ctx = ctx;
    return &w->b;
}

pc_buf *pc_buf_ref(pc_buf *b)
{
    if (b)
        atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
    return b;
}

pc_buf *pc_buf_take(pc_buf **bp)
{
    pc_buf *b = *bp;
    *bp = NULL;
    return b;
}

void pc_buf_drop(pc_buf **bp)
{
    pc_buf *b = pc_buf_take(bp);
    /* the last one sees every other holder's release before it frees */
    if (b && atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1)
        b->release(b);
}

void pc_msg_close(pc_msg *m)
{
    pc_buf_drop(&m->body);
    pc_buf_drop(&m->bulk);
}
