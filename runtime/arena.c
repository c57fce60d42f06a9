/* arena.c - the per-VT frame arena: a chain of chunks holding the frames
 * of a VT's checkpointable calls in call order, each aligned as its type
 * requires (a gap, marked, below an over-aligned one). Chunks are GC roots
 * (uncollectable, scanned), so frames may hold the only pointer to a heap
 * object. A frame never spans two chunks. The arena allocates and frees
 * every chunk, and is the only code that sets a context's frame
 * registers (base, sp, limit).
 */
#include <stddef.h>
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

_Static_assert(offsetof(rt_chunk, data) % LEV_FRAME_ALIGN == 0, "rt_chunk.data is not aligned");

rt_chunk *rt_arena_chunk_new(size_t cap)
{
    rt_chunk *c = GC_malloc_uncollectable(sizeof(rt_chunk) + cap);
    if (!c)
        return NULL;
    c->prev = c->next = NULL;
    c->cap = cap;
    c->start = c->end = c->data;
    return c;
}

static void s_enter(lev_ctx *ctx, rt_chunk *c, char *top)
{
    ctx->base = c->start;
    ctx->sp = top;
    ctx->limit = c->data + c->cap;
}

static uintptr_t s_align_up(uintptr_t p, size_t align)
{
    return (p + (align - 1)) & ~(uintptr_t)(align - 1);
}

size_t rt_arena_room(size_t size, size_t align)
{
    /* chunk data and every frame top are multiples of LEV_FRAME_ALIGN */
    return LEV_FRAME_SIZE(size) + (align > LEV_FRAME_ALIGN ? align - LEV_FRAME_ALIGN : 0);
}

/* Where a frame of sz bytes (a multiple of LEV_FRAME_ALIGN) aligned to
 * `align` goes in chunk c whose frames end at `top`: the aligned address,
 * with the gap below it marked (RT_FRAME_GAP); NULL if it does not fit. */
static char *s_place(rt_chunk *c, char *top, size_t sz, size_t align)
{
    uintptr_t p = s_align_up((uintptr_t)top, align), end = (uintptr_t)(c->data + c->cap);
    if (p > end || sz > end - p)
        return NULL;
    if (p != (uintptr_t)top) {
        lev_frame *gap = (lev_frame *)top;
        gap->fn = RT_FRAME_GAP;
        gap->pc = (uint32_t)(p - (uintptr_t)top);
    }
    return (char *)p;
}

/* Makes empty chunk c begin with a frame of sz bytes aligned to `align`:
 * its start moves up to the first aligned address. NULL if it does not
 * fit. */
static char *s_first(rt_chunk *c, size_t sz, size_t align)
{
    uintptr_t p = s_align_up((uintptr_t)c->data, align), end = (uintptr_t)(c->data + c->cap);
    if (p > end || sz > end - p)
        return NULL;
    c->start = c->end = (char *)p;
    return c->start;
}

void *rt_arena_chunk_put(rt_chunk *c, char **top, size_t size, size_t align)
{
    size_t sz = LEV_FRAME_SIZE(size);
    char *p = *top ? s_place(c, *top, sz, align) : s_first(c, sz, align);
    if (p)
        *top = p + sz;
    return p;
}

void *rt_arena_push_slow(lev_ctx *vt_ctx, rt_arena *a, size_t size, size_t align)
{
    if (align < LEV_FRAME_ALIGN)
        align = LEV_FRAME_ALIGN;
    size_t sz = LEV_FRAME_SIZE(size), need = rt_arena_room(size, align);
    rt_chunk *cur = a->cur;
    rt_chunk *c;
    char *p;
    if (cur && vt_ctx->sp != cur->start && (p = s_place(cur, vt_ctx->sp, sz, align))) {
        /* an over-aligned frame that fits above a gap */
        vt_ctx->sp = p + sz;
        return p;
    }
    if (!cur) {
        c = rt_arena_chunk_new(need > S_FIRST_CAP ? need : S_FIRST_CAP);
        if (!c)
            return NULL;
        a->first = a->cur = c;
    } else if (vt_ctx->sp == cur->start && cur->cap >= need) {
        c = cur; /* empty, and only its start was not aligned */
    } else if (vt_ctx->sp == cur->start) {
        /* The current chunk is empty and too small: replace it, so the
         * chain never holds an empty chunk below a used one. */
        size_t cap = cur->cap * 2;
        if (cap < need)
            cap = need;
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
        if (c && c->cap < need) {
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
            if (cap < need)
                cap = need;
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
    p = s_first(c, sz, align); /* fits: c->cap >= need */
    s_enter(vt_ctx, c, p + sz);
    return p;
}

void rt_arena_pop_slow(lev_ctx *vt_ctx, rt_arena *a, void *frame)
{
    rt_chunk *cur = a->cur;
    if (cur && cur->prev && (char *)frame == cur->start) {
        cur->end = cur->start;
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

size_t rt_frame_align(const lev_module *m, uint32_t fn)
{
    uint32_t t = fn < m->desc->nfns ? m->desc->fns[fn].frame_type : 0;
    size_t al = t ? m->types[t].align : 0;
    return al > LEV_FRAME_ALIGN ? al : LEV_FRAME_ALIGN;
}

/* The first frame at or above p below top: p past the gaps there. */
static char *s_skip_gaps(char *p, char *top)
{
    while (p < top && ((lev_frame *)p)->fn == RT_FRAME_GAP && ((lev_frame *)p)->pc)
        p += ((lev_frame *)p)->pc;
    return p;
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
        char *p = c->start;
        while (p < top) {
            lev_frame *f = (lev_frame *)p;
            if (f->fn == RT_FRAME_GAP) {
                if (!f->pc || f->pc % LEV_FRAME_ALIGN || f->pc > (size_t)(top - p))
                    return rt_err(LEV_EINVAL, "frame arena is corrupt: a gap of %u bytes", f->pc);
                p += f->pc;
                continue;
            }
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
            char *top = s_top(ctx, a, c);
            next = s_skip_gaps(next, top);
            if (next < top)
                return next;
            return c->next ? c->next->start : NULL;
        }
        if (c == a->cur)
            break;
    }
    return NULL;
}

/* ===================================================================
 * Spilled frames: a body that ran without a frame gets one only when it
 * unwinds, innermost first; each record is a gap that aligns the frame,
 * the frame, and a trailer holding the frame's size, the gap's and the
 * alignment, so the buffer is read back from its end, outermost first,
 * when the frames are laid on the chain. A frame is aligned where it is
 * written; once the buffer grows, the frames before it (written already)
 * may not be, until they are laid.
 * =================================================================== */

typedef struct s_trailer {
    uint64_t size;
    uint32_t gap, align;
} s_trailer;

#define S_TRAILER ((size_t)LEV_FRAME_ALIGN)
_Static_assert(sizeof(s_trailer) == S_TRAILER, "a spilled frame's trailer");
#define S_SPILL_FIRST 1024u

void *rt_arena_spill(rt_arena *a, size_t size, size_t align, uint32_t fn)
{
    if (align < LEV_FRAME_ALIGN)
        align = LEV_FRAME_ALIGN;
    size_t sz = LEV_FRAME_SIZE(size);
    size_t need = a->spill_len + rt_arena_room(size, align) + S_TRAILER;
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
    char *rec = a->spill + a->spill_len;
    char *p = (char *)s_align_up((uintptr_t)rec, align);
    memset(rec, 0, (size_t)(p - rec) + sz);
    ((lev_frame *)p)->fn = fn;
    s_trailer t = {sz, (uint32_t)(p - rec), (uint32_t)align};
    memcpy(p + sz, &t, sizeof t);
    a->spill_len = (size_t)(p + sz + S_TRAILER - a->spill);
    return p;
}

/* lev_frame_push_aligned without its frame header stores (the caller
 * copies a whole frame in). */
static void *s_push(lev_ctx *ctx, rt_arena *a, size_t sz, size_t align)
{
    char *p = ctx->sp;
    uintptr_t np = (uintptr_t)p + LEV_FRAME_SIZE(sz);
    if (LEV_UNLIKELY(((uintptr_t)p & (align - 1)) != 0 || np > (uintptr_t)ctx->limit))
        return rt_arena_push_slow(ctx, a, sz, align);
    ctx->sp = (char *)np;
    return p;
}

int rt_arena_lay_spilled(lev_ctx *ctx, rt_arena *a, int lay)
{
    int rc = 0;
    size_t end = a->spill_len;
    while (lay && end) {
        s_trailer t;
        memcpy(&t, a->spill + end - S_TRAILER, sizeof t);
        char *src = a->spill + end - S_TRAILER - t.size;
        void *dst = s_push(ctx, a, t.size, t.align);
        if (!dst) {
            rc = rt_err(LEV_ENOMEM, "no memory for the frames of an unwound virtual thread");
            break;
        }
        memcpy(dst, src, t.size);
        end = (size_t)(src - t.gap - a->spill);
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
        n->end = n->start;
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

void *rt_arena_bottom(const rt_arena *a) { return a->first ? a->first->start : NULL; }

void rt_arena_chunk_free(rt_chunk *c) { GC_free(c); }

void rt_arena_adopt(lev_ctx *ctx, rt_arena *a, rt_chunk *c, char *top)
{
    rt_arena_clear(ctx, a);
    a->first = a->cur = c;
    c->end = top;
    s_enter(ctx, c, c->end);
}
