/* arena.c - the per-VT frame arena: a chain of chunks holding the frames
 * of a VT's checkpointable calls in call order. Chunks are GC roots
 * (uncollectable, scanned), so frames may hold the only pointer to a heap
 * object. A frame never spans two chunks. The arena allocates and frees
 * every chunk, and is the only code that sets a context's frame
 * registers (base, sp, limit).
 */
#include <string.h>

#define GC_THREADS
#include <gc/gc.h>

#include "arena.h"
#include "rt.h"

/* The first chunk holds an idle VT's few frames (its memory counts for
 * every VT); a VT that outgrows it gets chunks of at least S_NEXT_CAP,
 * doubling up to S_MAX_GROW. A call chain that goes back and forth over
 * the end of a chunk pays a runtime call each way (push and pop), so the
 * boundaries are kept few and deep: with chunks doubling from 64 bytes, a
 * ray tracer's recursion crossed one at every pixel. */
#define S_FIRST_CAP 64u
#define S_NEXT_CAP 4096u
#define S_MAX_GROW (64u * 1024u)

rt_chunk *rt_arena_chunk_new(size_t cap)
{
    rt_chunk *c = GC_malloc_uncollectable(sizeof(rt_chunk) + cap);
    if (!c)
        return NULL;
    c->prev = c->next = NULL;
    c->cap = cap;
    c->end = c->data;
    return c;
}

static void s_enter(lev_ctx *ctx, rt_chunk *c, char *top)
{
    ctx->base = c->data;
    ctx->sp = top;
    ctx->limit = c->data + c->cap;
}

void *rt_arena_push_slow(lev_ctx *vt_ctx, rt_arena *a, size_t size)
{
    size_t sz = LEV_FRAME_SIZE(size);
    rt_chunk *cur = a->cur;
    rt_chunk *c;
    if (!cur) {
        c = rt_arena_chunk_new(sz > S_FIRST_CAP ? sz : S_FIRST_CAP);
        if (!c)
            return NULL;
        a->first = a->cur = c;
    } else if (vt_ctx->sp == cur->data) {
        /* The current chunk is empty and too small: replace it, so the
         * chain never holds an empty chunk below a used one. */
        size_t cap = cur->cap * 2;
        if (cap < sz)
            cap = sz;
        c = rt_arena_chunk_new(cap);
        if (!c)
            return NULL;
        c->prev = cur->prev;
        c->next = cur->next;
        if (c->prev)
            c->prev->next = c;
        else
            a->first = c;
        if (c->next)
            c->next->prev = c;
        GC_free(cur);
        a->cur = c;
    } else {
        cur->end = vt_ctx->sp;
        c = cur->next;
        if (c && c->cap < sz) {
            cur->next = c->next;
            if (c->next)
                c->next->prev = cur;
            GC_free(c);
            c = NULL;
        }
        if (!c) {
            size_t cap = cur->cap * 2;
            if (cap > S_MAX_GROW)
                cap = S_MAX_GROW;
            if (cap < S_NEXT_CAP)
                cap = S_NEXT_CAP;
            if (cap < sz)
                cap = sz;
            c = rt_arena_chunk_new(cap);
            if (!c)
                return NULL;
            c->prev = cur;
            c->next = cur->next;
            if (c->next)
                c->next->prev = c;
            cur->next = c;
        }
        a->cur = c;
    }
    s_enter(vt_ctx, c, c->data + sz);
    c->end = c->data;
    return c->data;
}

void rt_arena_pop_slow(lev_ctx *vt_ctx, rt_arena *a, void *frame)
{
    rt_chunk *cur = a->cur;
    if (cur && cur->prev && (char *)frame == cur->data) {
        cur->end = cur->data;
        a->cur = cur->prev;
        s_enter(vt_ctx, a->cur, a->cur->end);
    } else {
        vt_ctx->sp = (char *)frame;
    }
}

size_t rt_frame_size(const lev_module *m, uint32_t fn)
{
    if (fn >= m->desc->nfns)
        return 0;
    uint32_t t = m->desc->fns[fn].frame_type;
    if (!t)
        return 0;
    return LEV_FRAME_SIZE(m->types[t].size);
}

static char *s_top(lev_ctx *ctx, rt_arena *a, rt_chunk *c)
{
    return c == a->cur ? ctx->sp : c->end;
}

int rt_arena_walk(lev_ctx *ctx, rt_arena *a, const lev_module *m,
                  int (*fn)(void *frame, size_t size, void *ud), void *ud)
{
    for (rt_chunk *c = a->first; c; c = c->next) {
        char *top = s_top(ctx, a, c);
        char *p = c->data;
        while (p < top) {
            lev_frame *f = (lev_frame *)p;
            size_t sz = rt_frame_size(m, f->fn);
            if (!sz || p + sz > top)
                return rt_err(LEV_EINVAL, "frame arena is corrupt at function id %u", f->fn);
            int rc = fn(p, sz, ud);
            if (rc)
                return rc;
            p += sz;
        }
        if (c == a->cur)
            break;
    }
    return 0;
}

void *rt_arena_callee(lev_ctx *ctx, rt_arena *a, void *frame, size_t size)
{
    char *next = (char *)frame + LEV_FRAME_SIZE(size);
    for (rt_chunk *c = a->first; c; c = c->next) {
        if ((char *)frame >= c->data && (char *)frame < c->data + c->cap) {
            if (next < s_top(ctx, a, c))
                return next;
            return c->next ? c->next->data : NULL;
        }
        if (c == a->cur)
            break;
    }
    return NULL;
}

/* ===================================================================
 * Spilled frames: a body that ran without a frame gets one only when it
 * unwinds, innermost first; each record is the frame followed by a
 * trailer holding its size, so the buffer is read back from its end,
 * outermost first, when the frames are laid on the chain.
 * =================================================================== */

#define S_TRAILER ((size_t)LEV_FRAME_ALIGN)
#define S_SPILL_FIRST 1024u

void *rt_arena_spill(rt_arena *a, size_t size, uint32_t fn)
{
    size_t sz = LEV_FRAME_SIZE(size);
    size_t need = a->spill_len + sz + S_TRAILER;
    if (need > a->spill_cap) {
        size_t cap = a->spill_cap ? a->spill_cap : S_SPILL_FIRST;
        while (cap < need)
            cap *= 2;
        /* scanned: a spilled frame may hold the only pointer to an object */
        char *n = GC_malloc_uncollectable(cap);
        if (!n)
            return NULL;
        if (a->spill_len)
            memcpy(n, a->spill, a->spill_len);
        GC_free(a->spill);
        a->spill = n;
        a->spill_cap = cap;
    }
    char *p = a->spill + a->spill_len;
    memset(p, 0, sz);
    ((lev_frame *)p)->fn = fn;
    memcpy(p + sz, &sz, sizeof sz);
    a->spill_len = need;
    return p;
}

/* lev_frame_push without its frame header stores (the caller copies a
 * whole frame in). */
static void *s_push(lev_ctx *ctx, rt_arena *a, size_t sz)
{
    char *p = ctx->sp;
    char *np = p + LEV_FRAME_SIZE(sz);
    if (LEV_UNLIKELY(np > ctx->limit))
        return rt_arena_push_slow(ctx, a, sz);
    ctx->sp = np;
    return p;
}

int rt_arena_lay_spilled(lev_ctx *ctx, rt_arena *a, int lay)
{
    int rc = 0;
    size_t end = a->spill_len;
    while (lay && end) {
        size_t sz;
        memcpy(&sz, a->spill + end - S_TRAILER, sizeof sz);
        char *src = a->spill + end - S_TRAILER - sz;
        void *dst = s_push(ctx, a, sz);
        if (!dst) {
            rc = rt_err(LEV_ENOMEM, "no memory for the frames of an unwound virtual thread");
            break;
        }
        memcpy(dst, src, sz);
        end = (size_t)(src - a->spill);
    }
    /* no stale pointers left for the collector to keep objects alive by */
    memset(a->spill, 0, a->spill_len);
    a->spill_len = 0;
    return rc;
}

void rt_arena_cut(lev_ctx *ctx, rt_arena *a, void *frame, size_t size)
{
    rt_chunk *c = a->first;
    while (c && !((char *)frame >= c->data && (char *)frame < c->data + c->cap))
        c = c->next;
    if (!c)
        return;
    /* the chunks above keep their memory, empty, as a pop leaves them */
    for (rt_chunk *n = c->next; n; n = n->next)
        n->end = n->data;
    a->cur = c;
    s_enter(ctx, c, (char *)frame + LEV_FRAME_SIZE(size));
}

void rt_arena_clear(lev_ctx *ctx, rt_arena *a)
{
    GC_free(a->spill);
    a->spill = NULL;
    a->spill_len = a->spill_cap = 0;
    rt_arena_chunks_free(rt_arena_detach(ctx, a));
}

void rt_poison(void *p, size_t n)
{
    const uint64_t w = RT_POISON;
    char *q = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        memcpy(q + i, &w, 8);
    if (i < n)
        memcpy(q + i, &w, n - i);
}

void rt_arena_scribble(lev_ctx *ctx, rt_arena *a)
{
    for (rt_chunk *c = a->first; c; c = c->next) {
        char *top = s_top(ctx, a, c);
        rt_poison(c->data, (size_t)(top - c->data));
        if (c == a->cur)
            break;
    }
}

rt_chunk *rt_arena_detach(lev_ctx *ctx, rt_arena *a)
{
    rt_chunk *c = a->first;
    a->first = a->cur = NULL;
    ctx->sp = ctx->limit = ctx->base = NULL;
    return c;
}

void rt_arena_chunks_free(rt_chunk *c)
{
    while (c) {
        rt_chunk *n = c->next;
        GC_free(c);
        c = n;
    }
}

size_t rt_arena_chunks_bytes(const rt_chunk *c)
{
    size_t n = 0;
    for (; c; c = c->next)
        n += c->cap;
    return n;
}

void *rt_arena_bottom(const rt_arena *a) { return a->first ? a->first->data : NULL; }

void rt_arena_chunk_free(rt_chunk *c) { GC_free(c); }

void rt_arena_adopt(lev_ctx *ctx, rt_arena *a, rt_chunk *c, size_t used)
{
    rt_arena_clear(ctx, a);
    a->first = a->cur = c;
    c->end = c->data + used;
    s_enter(ctx, c, c->end);
}
