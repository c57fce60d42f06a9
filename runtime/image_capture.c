/* image_capture.c - capture of a suspended VT into a checkpoint image:
 * a breadth-first walk of the object graph from its frames and travelling
 * statics, encoding each object's scalars into streams by width and its
 * pointers as (tag, id, offset) words, then the tpl parts and the header
 * (image_format.c has the layout). Untyped objects travel as bytes once
 * they are checked to hold nothing that looks like a pointer. Also the torture mode's poisoning of
 * what a capture reaches (rt_image_scribble_reachable,
 * rt_image_capture_poison).
 */
#include <setjmp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define GC_THREADS
#include <gc/gc.h>
#include <gc/gc_mark.h>
#include <tpl.h>

#include "arena.h"
#include "heap.h"
#include "heap_private.h"
#include "image.h"
#include "image_private.h"
#include "module.h"
#include "rt.h"
#include "rt_tpl.h"
#include "streams.h"
#include "vec.h"
#include "vt.h"

/* ===================================================================
 * Growable streams
 * =================================================================== */

typedef struct s_stream {
    unsigned char *p;
    size_t n;   /* items */
    size_t cap; /* items */
    uint32_t w; /* item width */
} s_stream;

/* Large buffers are filled at once: ask for transparent huge pages so
 * the kernel takes one fault per 2 MiB instead of one per 4 KiB. */
static void s_hugepages(void *p, size_t n)
{
    const uintptr_t huge = (uintptr_t)2 << 20;
    if (n < 2 * huge)
        return;
    uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1);
    uintptr_t e = ((uintptr_t)p + n) & ~(huge - 1);
    if (e > a)
        madvise((void *)a, e - a, MADV_HUGEPAGE);
}

static int s_reserve(s_stream *s, size_t more)
{
    if (s->n + more <= s->cap)
        return 0;
    if (rt_vec_reserve(&s->p, &s->cap, s->n, more, s->w))
        return rt_err(LEV_ENOMEM, "out of memory in the image codec");
    s_hugepages(s->p + s->n * s->w, (s->cap - s->n) * s->w);
    return 0;
}

static inline int s_put(s_stream *s, const void *src, size_t items)
{
    if (LEV_UNLIKELY(s->n + items > s->cap) && s_reserve(s, items))
        return rt_err(LEV_ENOMEM, "out of memory in the image codec");
    memcpy(s->p + s->n * s->w, src, items * s->w);
    s->n += items;
    return 0;
}

/* Appends one item of the stream's width. */
static inline int s_put1(s_stream *s, const void *src)
{
    if (LEV_UNLIKELY(s->n + 1 > s->cap) && s_reserve(s, 1))
        return rt_err(LEV_ENOMEM, "out of memory in the image codec");
    rt_img_copy(s->p + s->n * s->w, src, s->w);
    s->n++;
    return 0;
}

static inline int s_put64(s_stream *s, uint64_t v)
{
    if (LEV_UNLIKELY(s->n + 1 > s->cap) && s_reserve(s, 1))
        return rt_err(LEV_ENOMEM, "out of memory in the image codec");
    memcpy(s->p + s->n * 8, &v, 8);
    s->n++;
    return 0;
}

/* ===================================================================
 * Capture
 * =================================================================== */

/* A frame or travelling static (few per VT); heap objects are kept only
 * as header pointers in the discovery queue. */
typedef struct s_fixed {
    char *addr;
    uint64_t size;
    uint32_t kind;
    uint32_t id;    /* fn (frame), sym (static) */
    uint32_t count; /* pc (frame), elements (static) */
} s_fixed;

typedef struct s_fref {
    char *addr;
    uint64_t size;
    uint32_t obj;
} s_fref;

typedef struct s_bulk {
    char *addr;
    size_t n;
    uint32_t kind;
} s_bulk;

typedef struct s_cap {
    rt_vt *vt;
    const lev_module *m;
    uint32_t gen;
    s_fixed *fixed;
    uint32_t nfixed, nframes;
    size_t capfixed;
    rt_objhdr **heap; /* discovery queue */
    uint32_t nheap;
    size_t capheap;
    s_fref *frames;      /* sorted by address */
    int32_t *static_obj; /* sym -> object id of a travelling static, or -1 */
    s_bulk *bulk;
    uint32_t nbulk;
    size_t capbulk;
    s_stream meta, bsz, s1, s2, s4, s8;
    uint32_t *group; /* open meta group, or NULL */
    uint64_t live;
    rt_heap_cache *pages;      /* heap pages seen by this capture */
    uintptr_t mod_lo, mod_hi;  /* the module's statics and functions (0, 0: not yet) */
    const rt_img_alloc *alloc; /* where the image goes (NULL: malloc) */
} s_cap;

static _Atomic uint32_t s_gen_counter = 1;

static int s_add_fixed(s_cap *c, s_fixed o)
{
    if (c->nfixed == c->capfixed && RT_VEC_RESERVE(c->fixed, c->capfixed, c->nfixed, 1))
        return rt_err(LEV_ENOMEM, "out of memory in the image codec");
    c->fixed[c->nfixed++] = o;
    c->live += o.size;
    return 0;
}

static int s_frame_cb(void *frame, size_t size, void *ud)
{
    s_cap *c = ud;
    const lev_frame *f = frame;
    (void)size;
    uint32_t t = c->m->desc->fns[f->fn].frame_type;
    c->nframes++;
    return s_add_fixed(c, (s_fixed){frame, c->m->types[t].size, IMG_OBJ_FRAME, f->fn, f->pc});
}

static int s_fref_cmp(const void *a, const void *b)
{
    const s_fref *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Where a diagnostic says a value lives: object kind and id, run r. */
static void s_where(const s_cap *c, uint32_t kind, uint32_t id, const rt_run *r, char *buf,
                    size_t n)
{
    if (kind == IMG_OBJ_FRAME)
        snprintf(buf, n, "in function %s, variable %s", c->m->desc->fns[id].name, r->name);
    else if (kind == IMG_OBJ_STATIC)
        snprintf(buf, n, "in static %s (%s)", c->m->desc->statics[id].name, r->name);
    else
        snprintf(buf, n, "in heap object of type %s, field %s", c->m->types[id].name, r->name);
}

static int s_bad_ptr(s_cap *c, uint32_t kind, uint32_t id, const rt_run *r, const void *p,
                     const char *what)
{
    char where[256];
    s_where(c, kind, id, r, where, sizeof where);
    return rt_err(LEV_ECAPTURE, "%s %p %s", what, p, where);
}

/* The frame of the VT that p points into (its end included), or NULL. */
static const s_fref *s_frame_at(const s_cap *c, const char *p)
{
    uint32_t lo = 0, hi = c->nframes;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (c->frames[mid].addr <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    const s_fref *f = lo ? &c->frames[lo - 1] : NULL;
    return f && (uint64_t)(p - f->addr) <= f->size ? f : NULL;
}

static int s_ref_stream(s_cap *c, uint32_t okind, uint32_t oid, const rt_run *r, char *p,
                        uint64_t *out);

/* Encodes data pointer p found in an object of (kind, id), run r. */
static int s_ref(s_cap *c, uint32_t okind, uint32_t oid, const rt_run *r, char *p, uint64_t *out)
{
    if (!p) {
        *out = 0;
        return 0;
    }
    /* A sentinel: no object is in the first or the last page. */
    if (LEV_UNLIKELY((uintptr_t)p <= IMG_SENTINEL_MAX)) {
        *out = IMG_SENTINEL_LOW | (uintptr_t)p;
        return 0;
    }
    if (LEV_UNLIKELY(-(uintptr_t)p <= IMG_SENTINEL_MAX)) {
        *out = IMG_SENTINEL_NEG | -(uintptr_t)p;
        return 0;
    }
    const s_fref *f = s_frame_at(c, p);
    if (f) {
        *out = (IMG_TAG_OBJ << 62) | ((uint64_t)f->obj << 32) | (uint64_t)(p - f->addr);
        return 0;
    }
    if (LEV_UNLIKELY(p == &rt_img_dangling)) {
        *out = IMG_DANGLING;
        return 0;
    }
    /* A heap object? */
    rt_objhdr *h = rt_heap_find_cached(c->pages, p);
    if (h) {
        uint32_t type = RT_OBJ_TYPE(h);
        if (LEV_UNLIKELY((h->type >> 24) == RT_OBJ_FREED) && p >= (char *)h + sizeof(rt_objhdr)) {
            *out = IMG_DANGLING;
            return 0;
        }
        if (LEV_LIKELY((h->type >> 24) == RT_OBJ_MAGIC && type < c->m->ntypes &&
                       c->m->types[type].size)) {
            const rt_type *t = &c->m->types[type];
            char *data = (char *)h + sizeof(rt_objhdr);
            uint64_t size = rt_type_bytes(t, h->count);
            if (p >= data && (uint64_t)(p - data) <= size) {
                if (h->mark != c->gen) {
                    if (c->nheap == c->capheap && RT_VEC_RESERVE(c->heap, c->capheap, c->nheap, 1))
                        return rt_err(LEV_ENOMEM, "out of memory in the image codec");
                    if ((uint64_t)c->nfixed + c->nheap > IMG_ID_MAX)
                        return rt_err(LEV_ERANGE, "more than %u objects in one image", IMG_ID_MAX);
                    h->mark = c->gen;
                    h->id = c->nfixed + c->nheap;
                    c->heap[c->nheap++] = h;
                    c->live += size;
                }
                *out = (IMG_TAG_OBJ << 62) | ((uint64_t)h->id << 32) | (uint64_t)(p - data);
                return 0;
            }
        }
    }
    size_t off;
    int64_t s = rt_module_static_by_addr(c->m, p, &off);
    if (s >= 0) {
        if (c->static_obj[s] >= 0)
            *out = (IMG_TAG_OBJ << 62) | ((uint64_t)c->static_obj[s] << 32) | off;
        else
            *out = (IMG_TAG_SYM << 62) | ((uint64_t)s << 32) | off;
        return 0;
    }
    int64_t fn = rt_module_fn_by_addr(c->m, p);
    if (fn >= 0) {
        *out = (IMG_TAG_FN << 62) | ((uint64_t)fn << 32);
        return 0;
    }
    return s_ref_stream(c, okind, oid, r, p, out);
}

/* Encodes data pointer p, which no object of the VT holds: a stream of
 * the C library's that the runtime registered (streams.c) is a reference
 * to its record, one the program closed dangles; anything else fails the
 * capture. */
static int s_ref_stream(s_cap *c, uint32_t okind, uint32_t oid, const rt_run *r, char *p,
                        uint64_t *out)
{
    void *rec = NULL;
    switch (rt_stream_lookup(p, &rec)) {
    case RT_STREAM_CLOSED:
        *out = IMG_DANGLING;
        return 0;
    case RT_STREAM_OPEN: {
        uint64_t w = 0;
        int rc = s_ref(c, okind, oid, r, rec, &w);
        if (rc == 0 && w >> 62 != IMG_TAG_OBJ)
            rc = rt_err(LEV_ECAPTURE, "stream %p: its record is not a heap object", (void *)p);
        *out = IMG_STREAM | ((w >> 32) & IMG_ID_MAX);
        return rc;
    }
    default:
        break;
    }
    return s_bad_ptr(c, okind, oid, r, p, "pointer to memory the runtime does not own:");
}

/* What p points into that an image would relocate (a frame of the VT, a
 * live heap object, a static or a function of the module), or NULL. */
static const char *s_owned(s_cap *c, const char *p)
{
    if (s_frame_at(c, p))
        return "a frame";
    rt_objhdr *h = rt_heap_find_cached(c->pages, p);
    if (h && (h->type >> 24) == RT_OBJ_MAGIC)
        return "a heap object";
    size_t off;
    if (rt_module_static_by_addr(c->m, p, &off) >= 0)
        return "a static";
    if (rt_module_fn_by_addr(c->m, p) >= 0)
        return "a function";
    return NULL;
}

/* Whether some 8 of the n bytes at d, at any offset, equal an address
 * the image would have to relocate: then *at is that offset, *val the
 * value, and the result says what it points into; else NULL. Bytes that
 * travel as bytes (untyped objects, tagged unions whose tag selects no
 * pointer) must hold none: a guess either way could be wrong. */
static const char *s_addr_in(s_cap *c, const unsigned char *d, size_t n, size_t *at, void **val)
{
    if (!c->mod_hi) {
        const lev_module_desc *md = c->m->desc;
        c->mod_lo = UINTPTR_MAX;
        c->mod_hi = 1;
        for (uint32_t s = 0; s < md->nstatics; s++) {
            uintptr_t a = (uintptr_t)md->statics[s].addr;
            c->mod_lo = a < c->mod_lo ? a : c->mod_lo;
            a += rt_module_static_size(c->m, s);
            c->mod_hi = a > c->mod_hi ? a : c->mod_hi;
        }
        for (uint32_t f = 0; f < md->nfns; f++) {
            uintptr_t a = (uintptr_t)md->fns[f].native;
            if (!a)
                continue;
            c->mod_lo = a < c->mod_lo ? a : c->mod_lo;
            c->mod_hi = a > c->mod_hi ? a : c->mod_hi;
        }
    }
    uintptr_t glo = (uintptr_t)GC_least_plausible_heap_addr;
    uintptr_t ghi = (uintptr_t)GC_greatest_plausible_heap_addr;
    for (size_t o = 0; o + sizeof(uintptr_t) <= n; o++) {
        uintptr_t v;
        memcpy(&v, d + o, sizeof v);
        if (LEV_LIKELY(v < 4096 || (v >> 47) != 0))
            continue;
        if ((v < glo || v > ghi) && (v < c->mod_lo || v > c->mod_hi))
            continue;
        const char *what = s_owned(c, (const char *)v);
        if (what) {
            *at = o;
            *val = (void *)v;
            return what;
        }
    }
    return NULL;
}

/* An untyped object (LEV_T_UNTYPED: allocated where levpp could not infer
 * a type) travels as bytes, which is right only if it holds no pointer. */
static int s_untyped_check(s_cap *c, const rt_objhdr *h)
{
    size_t n = h->count, o;
    void *v;
    const char *what = s_addr_in(c, rt_obj_data((rt_objhdr *)h), n, &o, &v);
    if (what)
        return rt_err(LEV_ECAPTURE,
                      "untyped heap object of %zu bytes holds at offset %zu the value %p, "
                      "which is the address of %s: levpp could not infer the type of its "
                      "allocation (memory kept in a void *, or a size that is no whole "
                      "number of the type it is cast to), so the image cannot tell a "
                      "pointer from bytes; allocate it as malloc(n * sizeof(T)) assigned "
                      "to a T *",
                      n, o, v, what);
    return 0;
}

/* Encodes the tagged union at p (run r, tag table tt) of an object of
 * (kind, id): a flag byte (0 bytes, 1 data pointer, 2 function pointer)
 * and an 8-byte item. */
static int s_encode_tagged(s_cap *c, char *p, const rt_run *r, uint32_t okind, uint32_t oid)
{
    const rt_type *tt = &c->m->types[r->table];
    uint64_t tagv;
    uint32_t arm = rt_tagged_arm(tt, p, &tagv);
    uint8_t flag = arm == LEV_K_PTR ? 1 : arm == LEV_K_FNPTR ? 2 : 0;
    uint64_t v = 0;
    if (flag == 1) {
        char *val;
        memcpy(&val, p, sizeof val);
        int rc = s_ref(c, okind, oid, r, val, &v);
        if (rc)
            return rc;
    } else if (flag == 2) {
        void (*fv)(void);
        memcpy(&fv, p, sizeof fv);
        int64_t fn = fv ? rt_module_fn_by_addr(c->m, (const void *)(uintptr_t)fv) : 0;
        if (fn < 0)
            return s_bad_ptr(c, okind, oid, r, (const void *)(uintptr_t)fv,
                             "function pointer outside the task module:");
        v = fv ? (IMG_TAG_FN << 62) | ((uint64_t)fn << 32) : 0;
    } else {
        size_t o;
        void *a;
        const char *what = arm ? NULL : s_addr_in(c, (const unsigned char *)p, r->stride, &o, &a);
        if (what) {
            char where[256];
            s_where(c, okind, oid, r, where, sizeof where);
            const char *tag = tt->arms[-1].name ? tt->arms[-1].name : "?";
            return rt_err(LEV_ECAPTURE,
                          "tagged union %s holds at offset %zu the value %p, the address of "
                          "%s, but the value %llu of its tag '%s' selects no member levpp "
                          "knows of: the image cannot tell a pointer from bytes (name the "
                          "member that value selects in a `leverage tagged_union` annotation)",
                          where, o, a, what, (unsigned long long)tagv, tag);
        }
        memcpy(&v, p, r->stride);
    }
    if (s_put(&c->s1, &flag, 1) || s_put64(&c->s8, v))
        return rt_err(LEV_ENOMEM, "out of memory in the image codec");
    return 0;
}

static s_stream *s_stream_of(s_cap *c, uint32_t kind)
{
    switch (kind) {
    case LEV_K_B1:
        return &c->s1;
    case LEV_K_B2:
        return &c->s2;
    case LEV_K_B4:
        return &c->s4;
    default:
        return &c->s8;
    }
}

static int s_encode_obj(s_cap *c, char *addr, const rt_type *t, uint32_t nelem, uint32_t okind,
                        uint32_t oid);

/* Encodes an object of `bytes` bytes of type t with a trailing array: its
 * head, the elements of the array, then the bytes after them. */
static int s_encode_tail(s_cap *c, char *addr, const rt_type *t, uint32_t bytes, uint32_t okind,
                         uint32_t oid)
{
    uint32_t roff, rem, n = rt_tail_elems(c->m, t, bytes, &roff, &rem);
    rt_type head = *t;
    head.tail = false;
    int rc = s_encode_obj(c, addr, &head, 1, okind, oid);
    if (!rc && n)
        rc = s_encode_obj(c, addr + t->tail_off, &c->m->types[t->tail_type], n, okind, oid);
    if (!rc && rem && s_put(&c->s1, addr + roff, rem))
        rc = rt_err(LEV_ENOMEM, "out of memory in the image codec");
    return rc;
}

/* The 8-byte integers of run r at p, in a heap object of type id with
 * pointers of its own (a type without travels densely, unchecked): none
 * may hold the address of what an image relocates. One that does was
 * written through a pointer of another type laid over the object (a
 * header struct over the first elements of an array typed by its cast):
 * carried as a number, it would point into the old memory after a
 * restore. */
static int s_int_check(s_cap *c, const char *p, const rt_run *r, uint32_t id)
{
    uintptr_t glo = (uintptr_t)GC_least_plausible_heap_addr;
    uintptr_t ghi = (uintptr_t)GC_greatest_plausible_heap_addr;
    for (uint32_t j = 0; j < r->count; j++) {
        const unsigned char *q = (const unsigned char *)p + (size_t)j * r->stride;
        uintptr_t x;
        memcpy(&x, q, sizeof x);
        /* s_addr_in's tests, inline (the module's range once it knows it) */
        if (LEV_LIKELY(x < 4096 || (x >> 47) != 0))
            continue;
        if (c->mod_hi && (x < glo || x > ghi) && (x < c->mod_lo || x > c->mod_hi))
            continue;
        size_t o;
        void *v;
        const char *what = s_addr_in(c, q, sizeof(uint64_t), &o, &v);
        if (LEV_UNLIKELY(what != NULL))
            return rt_err(LEV_ECAPTURE,
                          "heap object of type %s holds in its integer field %s the value %p, "
                          "which is the address of %s: a pointer was written there through "
                          "a pointer of another type (a struct laid over memory allocated as "
                          "%s), and an image cannot carry it as a number; allocate the two "
                          "apart",
                          c->m->types[id].name, r->name, v, what, c->m->types[id].name);
    }
    return 0;
}

/* Encodes `nelem` elements of type t at addr, an object of (kind, id)
 * (with a trailing array: an object of nelem bytes). */
static int s_encode_obj(s_cap *c, char *addr, const rt_type *t, uint32_t nelem, uint32_t okind,
                        uint32_t oid)
{
    if (LEV_UNLIKELY(t->tail))
        return s_encode_tail(c, addr, t, nelem, okind, oid);
    if (t->dense) {
        s_stream *s = s_stream_of(c, t->dense_kind);
        return s_put(s, addr, (size_t)t->runs[0].count * nelem);
    }
    for (uint32_t e = 0; e < nelem; e++) {
        char *eb = addr + (size_t)e * t->size;
        for (uint32_t k = 0; k < t->nruns; k++) {
            const rt_run *r = &t->runs[k];
            char *p = eb + r->offset;
            if (LEV_UNLIKELY(r->kind == LEV_K_TAGGED)) {
                int rc = s_encode_tagged(c, p, r, okind, oid);
                if (rc)
                    return rc;
                continue;
            }
            if (r->kind <= LEV_K_B8) {
                if (r->kind == LEV_K_B8 && okind == IMG_OBJ_HEAP) {
                    int rc = s_int_check(c, p, r, oid);
                    if (rc)
                        return rc;
                }
                s_stream *s = s_stream_of(c, r->kind);
                if (r->count == 1) {
                    if (s_put1(s, p))
                        return rt_err(LEV_ENOMEM, "out of memory in the image codec");
                } else if (r->stride == s->w) {
                    if (s_put(s, p, r->count))
                        return rt_err(LEV_ENOMEM, "out of memory in the image codec");
                } else {
                    for (uint32_t j = 0; j < r->count; j++)
                        if (s_put(s, p + (size_t)j * r->stride, 1))
                            return rt_err(LEV_ENOMEM, "out of memory in the image codec");
                }
                continue;
            }
            for (uint32_t j = 0; j < r->count; j++) {
                char *fp = p + (size_t)j * r->stride;
                uint64_t v = 0;
                if (r->kind == LEV_K_PTR) {
                    char *val;
                    memcpy(&val, fp, sizeof val);
                    int rc = s_ref(c, okind, oid, r, val, &v);
                    if (rc)
                        return rc;
                } else {
                    void (*fv)(void);
                    memcpy(&fv, fp, sizeof fv);
                    if (fv) {
                        int64_t fn = rt_module_fn_by_addr(c->m, (const void *)(uintptr_t)fv);
                        if (fn < 0)
                            return s_bad_ptr(c, okind, oid, r, (const void *)(uintptr_t)fv,
                                             "function pointer outside the task module:");
                        v = (IMG_TAG_FN << 62) | ((uint64_t)fn << 32);
                    }
                }
                if (s_put64(&c->s8, v))
                    return rt_err(LEV_ENOMEM, "out of memory in the image codec");
            }
        }
    }
    return 0;
}

/* Appends an object to the meta stream, extending the open group when
 * the object repeats its (kind, flags, id, count). */
static int s_meta(s_cap *c, uint32_t kind, uint32_t flags, uint32_t id, uint32_t count)
{
    uint32_t w0 = kind | (flags << 8);
    if (kind == IMG_OBJ_HEAP && c->meta.n) {
        uint32_t *g = (uint32_t *)c->meta.p + c->meta.n - IMG_META_WORDS;
        if (g[0] == w0 && g[1] == id && g[2] == count && g[3] < UINT32_MAX) {
            g[3]++;
            return 0;
        }
    }
    uint32_t w[IMG_META_WORDS] = {w0, id, count, 1};
    return s_put(&c->meta, w, IMG_META_WORDS);
}

/* Encodes one object, or defers it to its own bulk image. */
static int s_emit(s_cap *c, char *addr, uint64_t size, const rt_type *t, uint32_t nelem,
                  uint32_t kind, uint32_t id, uint32_t count)
{
    uint32_t flags = 0;
    if (t->dense && size >= IMG_BULK_MIN && size / rt_kind_width(t->dense_kind) <= INT32_MAX) {
        if (c->nbulk == c->capbulk && RT_VEC_RESERVE(c->bulk, c->capbulk, c->nbulk, 1))
            return rt_err(LEV_ENOMEM, "out of memory in the image codec");
        c->bulk[c->nbulk++] = (s_bulk){addr, size / rt_kind_width(t->dense_kind), t->dense_kind};
        flags = IMG_F_BULK;
    } else {
        int rc = s_encode_obj(c, addr, t, nelem, kind, id);
        if (rc)
            return rc;
    }
    return s_meta(c, kind, flags, id, count);
}

static void s_cap_free(s_cap *c)
{
    free(c->fixed);
    free(c->heap);
    free(c->frames);
    free(c->static_obj);
    free(c->bulk);
    free(c->meta.p);
    free(c->bsz.p);
    free(c->s1.p);
    free(c->s2.p);
    free(c->s4.p);
    free(c->s8.p);
    free(c->pages);
}

/* Walks the VT's object graph breadth-first and fills the streams. */
static int s_collect(s_cap *c, rt_vt *vt)
{
    memset(c, 0, sizeof *c);
    c->vt = vt;
    c->m = vt->mod;
    c->meta.w = c->bsz.w = 4;
    c->s1.w = 1;
    c->s2.w = 2;
    c->s4.w = 4;
    c->s8.w = 8;
    c->gen = atomic_fetch_add(&s_gen_counter, 1);
    if (c->gen == 0)
        c->gen = atomic_fetch_add(&s_gen_counter, 1);
    const lev_module_desc *d = c->m->desc;
    c->static_obj = malloc((d->nstatics ? d->nstatics : 1) * sizeof(int32_t));
    c->pages = calloc(1, sizeof *c->pages);
    if (!c->static_obj || !c->pages)
        return rt_err(LEV_ENOMEM, "out of memory in the image codec");
    int rc = rt_arena_walk(&vt->ctx, &vt->arena, c->m, s_frame_cb, c);
    if (rc)
        return rc;
    if (c->nframes == 0)
        return rt_err(LEV_EINVAL, "VT %llu has no frames to capture", (unsigned long long)vt->id);
    c->frames = malloc(c->nframes * sizeof *c->frames);
    if (!c->frames)
        return rt_err(LEV_ENOMEM, "out of memory in the image codec");
    for (uint32_t i = 0; i < c->nframes; i++)
        c->frames[i] = (s_fref){c->fixed[i].addr, c->fixed[i].size, i};
    qsort(c->frames, c->nframes, sizeof *c->frames, s_fref_cmp);
    for (uint32_t s = 0; s < d->nstatics; s++) {
        c->static_obj[s] = -1;
        if (!(d->statics[s].flags & LEV_S_TRAVELS))
            continue;
        c->static_obj[s] = (int32_t)c->nfixed;
        if ((rc = s_add_fixed(c, (s_fixed){d->statics[s].addr, rt_module_static_size(c->m, s),
                                           IMG_OBJ_STATIC, s, d->statics[s].count})))
            return rc;
    }
    for (uint32_t i = 0; i < c->nfixed; i++) {
        s_fixed o = c->fixed[i];
        const rt_type *t = o.kind == IMG_OBJ_FRAME ? &c->m->types[d->fns[o.id].frame_type]
                                                   : &c->m->types[d->statics[o.id].type];
        uint32_t nelem = o.kind == IMG_OBJ_FRAME ? 1 : o.count;
        if ((rc = s_emit(c, o.addr, o.size, t, nelem, o.kind, o.id, o.count)))
            return rc;
    }
    /* The queue grows while it is encoded. */
    for (uint32_t i = 0; i < c->nheap; i++) {
        rt_objhdr *h = c->heap[i];
        uint32_t type = RT_OBJ_TYPE(h);
        const rt_type *t = &c->m->types[type];
        if (LEV_UNLIKELY(t->conservative) && (rc = s_untyped_check(c, h)))
            return rc;
        if ((rc = s_emit(c, rt_obj_data(h), rt_type_bytes(t, h->count), t, h->count, IMG_OBJ_HEAP,
                         type, h->count)))
            return rc;
    }
    return 0;
}

/* A part of the image: a tpl node to dump, or items written directly. */
typedef struct s_part {
    tpl_node *tn;
    size_t size;
    const void *direct;
    size_t n;
    uint32_t kind;
} s_part;

/* Maps and packs one dense array as its own tpl image. */
static int s_pack_arr(s_part *part, uint32_t kind, void *p, size_t n)
{
    part->tn = tpl_map(rt_img_arr_fmt(kind), p, (int)n);
    if (!part->tn)
        return rt_err(LEV_ENOMEM, "tpl_map failed");
    if (tpl_pack(part->tn, 0) != 0 || tpl_dump(part->tn, TPL_GETSIZE, &part->size) != 0)
        return rt_err(LEV_ENOMEM, "tpl_pack failed");
    return 0;
}

static int s_pack_header(rt_img_header *h, s_part *hp)
{
    hp->tn = tpl_map(IMG_HDR_FMT, &h->magic, &h->version, &h->module_hash, &h->vt_id, &h->epoch,
                     &h->entry, &h->nobj, &h->nframes, h->len, IMG_NLEN);
    if (!hp->tn)
        return rt_err(LEV_ENOMEM, "tpl_map failed");
    if (tpl_pack(hp->tn, 0) || tpl_dump(hp->tn, TPL_GETSIZE, &hp->size))
        return rt_err(LEV_ENOMEM, "tpl_pack of the header failed");
    return 0;
}

/* Gives back an image buffer the capture could not finish: to the host
 * that lent it (a), or to malloc. */
static void s_img_release(const rt_img_alloc *a, uint8_t *out)
{
    if (a && a->release)
        a->release(out, a->ud);
    else if (!a)
        free(out);
}

static int s_capture_guarded(s_cap *c, s_part *parts, uint8_t **img, size_t *len)
{
    rt_vt *vt = c->vt;
    uint32_t np = 0;
    int rc = 0;
    /* Bulk objects first (their sizes form a stream of their own), each
     * mapped directly on the object's memory. */
    s_part *bparts = parts + 6;
    for (uint32_t i = 0; i < c->nbulk; i++) {
        if ((rc = s_pack_arr(&bparts[i], c->bulk[i].kind, c->bulk[i].addr, c->bulk[i].n)))
            return rc;
        if (bparts[i].size > UINT32_MAX)
            return rt_err(LEV_ERANGE, "object too large for one image");
        uint32_t sz = (uint32_t)bparts[i].size;
        if ((rc = s_put(&c->bsz, &sz, 1)))
            return rc;
    }
    s_stream *streams[6] = {&c->meta, &c->bsz, &c->s1, &c->s2, &c->s4, &c->s8};
    uint32_t kinds[6] = {LEV_K_B4, LEV_K_B4, LEV_K_B1, LEV_K_B2, LEV_K_B4, LEV_K_B8};
    rt_img_header h = {.magic = IMG_MAGIC,
                       .version = RT_IMAGE_VERSION,
                       .module_hash = c->m->hash,
                       .vt_id = vt->id,
                       .epoch = vt->epoch,
                       .entry = vt->entry,
                       .nobj = c->nfixed + c->nheap,
                       .nframes = c->nframes};
    for (int k = 0; k < 6; k++) {
        if (streams[k]->n > INT32_MAX)
            return rt_err(LEV_ERANGE, "image stream too large for one image");
        h.len[2 * k] = streams[k]->n;
        if (streams[k]->n == 0)
            continue;
        if (rt_img_direct_ok(kinds[k]) && IMG_PRE + streams[k]->n * streams[k]->w <= UINT32_MAX) {
            parts[k] = (s_part){NULL, IMG_PRE + streams[k]->n * streams[k]->w, streams[k]->p,
                                streams[k]->n, kinds[k]};
        } else if ((rc = s_pack_arr(&parts[k], kinds[k], streams[k]->p, streams[k]->n))) {
            return rc;
        }
        h.len[2 * k + 1] = parts[k].size;
    }
    np = 6 + c->nbulk;
    h.len[IMG_L_LIVE] = c->live;
    uint64_t body = 0;
    for (uint32_t i = 0; i < np; i++)
        body += parts[i].size;
    h.len[IMG_L_BODY] = body;
    s_part hp = {0};
    rc = s_pack_header(&h, &hp);
    if (hp.tn)
        tpl_free(hp.tn);
    if (rc)
        return rc;
    uint64_t total = hp.size + body;
    if (total >= UINT32_MAX)
        return rt_err(LEV_ERANGE, "image of %llu bytes exceeds 4 GiB", (unsigned long long)total);
    const rt_img_alloc *a = c->alloc && c->alloc->alloc ? c->alloc : NULL;
    uint8_t *out = a ? a->alloc(total, a->ud) : NULL;
    if (!out) {
        a = NULL; /* the host had no room: malloc, freed with free() */
        if (!(out = malloc(total)))
            return rt_err(LEV_ENOMEM, "out of memory in the image codec");
        s_hugepages(out, total);
    }
    size_t off = hp.size;
    for (uint32_t i = 0; i < np; i++) {
        if (parts[i].direct) {
            rt_img_direct_write(out + off, parts[i].kind, parts[i].direct, parts[i].n);
            off += parts[i].size;
            continue;
        }
        if (!parts[i].tn)
            continue;
        if (tpl_dump(parts[i].tn, TPL_MEM | TPL_PREALLOCD, out + off, parts[i].size)) {
            s_img_release(a, out);
            return rt_err(LEV_ENOMEM, "tpl_dump failed");
        }
        off += parts[i].size;
    }
    /* The header's size does not depend on its values: pack it again
     * with the checksum over the body. */
    h.len[IMG_L_SUM] = rt_img_checksum(&h, out + hp.size, body);
    size_t hsize = hp.size;
    hp.tn = NULL;
    rc = s_pack_header(&h, &hp);
    if (rc == 0 && (hp.size != hsize || tpl_dump(hp.tn, TPL_MEM | TPL_PREALLOCD, out, hsize)))
        rc = rt_err(LEV_ENOMEM, "tpl_dump of the header failed");
    if (hp.tn)
        tpl_free(hp.tn);
    if (rc) {
        s_img_release(a, out);
        return rc;
    }
    *img = out;
    *len = total;
    return 0;
}

/* Overwrites the heap objects and travelling statics that capture c
 * reached with poison; with `gen`, first makes gen->objs hold the headers
 * of those heap objects, which keeps them allocated (and gen->bytes count
 * them). */
static int s_poison(s_cap *c, rt_moved *gen)
{
    if (gen) {
        gen->objs = GC_malloc_uncollectable((c->nheap ? c->nheap : 1) * sizeof(void *));
        if (!gen->objs)
            return rt_err(LEV_ENOMEM, "out of memory holding the moved objects");
        gen->nobjs = c->nheap;
    }
    /* Objects the wipe has not reached yet are referenced only from the
     * queue (malloc'd, not scanned) once their parents are wiped: no
     * collection may run until the wipe is over. */
    GC_disable();
    for (uint32_t i = 0; i < c->nfixed; i++)
        if (c->fixed[i].kind != IMG_OBJ_FRAME)
            rt_poison(c->fixed[i].addr, c->fixed[i].size);
    for (uint32_t i = 0; i < c->nheap; i++) {
        size_t n = rt_heap_obj_size(c->m, c->heap[i]);
        if (gen) {
            gen->objs[i] = c->heap[i];
            gen->bytes += sizeof(rt_objhdr) + n;
        }
        rt_poison(rt_obj_data(c->heap[i]), n);
    }
    GC_enable();
    return 0;
}

static int s_capture(rt_vt *vt, const rt_img_alloc *a, uint8_t **img, size_t *len, bool scribble,
                     rt_moved *gen)
{
    /* A torture cycle (scribble) restores in this process. */
    int rc = rt_streams_sync(vt->key, !scribble);
    if (rc)
        return rc;
    s_cap c;
    rc = s_collect(&c, vt);
    if (rc) {
        s_cap_free(&c);
        return rc;
    }
    c.alloc = a;
    if (img) {
        uint32_t nparts = 6 + c.nbulk;
        s_part *volatile parts = calloc(nparts, sizeof(s_part));
        if (!parts) {
            s_cap_free(&c);
            return rt_err(LEV_ENOMEM, "out of memory in the image codec");
        }
        jmp_buf jb;
        jmp_buf **slot = rt_tpl_jmp_slot();
        jmp_buf *saved = *slot;
        if (setjmp(jb) == 0) {
            *slot = &jb;
            rc = s_capture_guarded(&c, parts, img, len);
        } else {
            rc = rt_err(LEV_ENOMEM, "out of memory in tpl");
        }
        *slot = saved;
        for (uint32_t i = 0; i < nparts; i++)
            if (parts[i].tn)
                tpl_free(parts[i].tn);
        free(parts);
    }
    if (rc == 0 && scribble && (rc = s_poison(&c, gen)) && img) {
        free(*img);
        *img = NULL;
    }
    s_cap_free(&c);
    return rc;
}

int rt_capture(rt_vt *vt, uint8_t **img, size_t *len)
{
    if (!vt || !img || !len)
        return rt_err(LEV_EINVAL, "rt_capture: NULL argument");
    if (vt->state == RT_VT_RUNNING)
        return rt_err(LEV_EBUSY, "VT %llu is running", (unsigned long long)vt->id);
    return s_capture(vt, NULL, img, len, false, NULL);
}

int rt_capture_into(rt_vt *vt, const rt_img_alloc *a, uint8_t **img, size_t *len)
{
    if (!vt || !img || !len)
        return rt_err(LEV_EINVAL, "rt_capture_into: NULL argument");
    if (vt->state == RT_VT_RUNNING)
        return rt_err(LEV_EBUSY, "VT %llu is running", (unsigned long long)vt->id);
    return s_capture(vt, a, img, len, false, NULL);
}

int rt_image_scribble_reachable(rt_vt *vt)
{
    if (!vt)
        return rt_err(LEV_EINVAL, "rt_image_scribble_reachable: NULL argument");
    return s_capture(vt, NULL, NULL, NULL, true, NULL);
}

int rt_image_capture_poison(rt_vt *vt, uint8_t **img, size_t *len, rt_moved *gen)
{
    if (!vt || !img || !len || !gen)
        return rt_err(LEV_EINVAL, "rt_image_capture_poison: NULL argument");
    if (vt->state == RT_VT_RUNNING)
        return rt_err(LEV_EBUSY, "VT %llu is running", (unsigned long long)vt->id);
    return s_capture(vt, NULL, img, len, true, gen);
}
