/* image.c - capture of a suspended VT into a portable checkpoint image and
 * restore from one.
 *
 * An image is a sequence of tpl images (tpl fixes byte order on unpack):
 *
 *   header   "uuUUuuuuU#"  magic, version, module hash, VT id, epoch,
 *                          entry function, objects, frames, and a table of
 *                          stream sizes, body length and checksum
 *   meta     "u#"          4 words per object: kind|flags, type/fn/static
 *                          id, element count or pc, bulk image size
 *   s1..s8   "c#" "v#" "u#" "U#"  the objects' scalars by width, in object
 *                          order; swizzled pointers go in the 8-byte stream
 *   bulk...  one "c#".."U#" image per large dense object, mapped directly
 *            on the object's memory (no intermediate copy)
 *
 * Objects are numbered frames first (bottom to top), then travelling
 * statics, then heap objects in discovery order. A pointer is encoded as
 * one 64-bit word: tag (2 bits: object, static symbol, function), id (30
 * bits), byte offset (32 bits); NULL is 0. The checksum covers the header
 * fields and every byte after the header.
 *
 * Decoding never reads outside the buffer it is given: every count is
 * checked against the stream it consumes before anything is allocated.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define GC_THREADS
#include <gc/gc.h>
#include <tpl.h>

#include "arena.h"
#include "heap.h"
#include "heap_private.h"
#include "image.h"
#include "module.h"
#include "rt.h"
#include "rt_tpl.h"
#include "vt.h"

#define S_MAGIC 0x4C455649u /* "LEVI" */
#define S_BULK_MIN 4096u
#define S_TAG_OBJ 1ull
#define S_TAG_SYM 2ull
#define S_TAG_FN 3ull
/* Tag 0 with this payload: a pointer into an object released by lev_free. */
#define S_DANGLING (1ull << 32)

/* Where a dangling pointer points after restore (and is known again by
 * the next capture). */
static const char s_dangling = 0;
#define S_ID_MAX ((1u << 30) - 1u)
#define S_HDR_FMT "uuUUuuuuU#"
#define S_NLEN 16

enum { S_OBJ_FRAME = 1, S_OBJ_HEAP = 2, S_OBJ_STATIC = 3 };
enum { S_F_BULK = 1 };
enum { S_META_WORDS = 4 };
/* Indices in the header's length table. */
enum {
    L_META_N, L_META_SZ, L_BSZ_N, L_BSZ_SZ, L_S1_N, L_S1_SZ, L_S2_N, L_S2_SZ, L_S4_N, L_S4_SZ,
    L_S8_N, L_S8_SZ, L_BODY, L_SUM, L_LIVE, L_RESERVED
};

/* ===================================================================
 * Checksum: a 4-lane multiply-rotate hash over little-endian words, so
 * every host computes the same value for the same bytes.
 * =================================================================== */

static inline uint64_t s_le64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline uint64_t s_rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

#define S_P1 0x9E3779B185EBCA87ull
#define S_P2 0xC2B2AE3D27D4EB4Full

static uint64_t s_hash_bytes(const unsigned char *p, size_t n, uint64_t seed)
{
    uint64_t a = seed + S_P1, b = seed ^ S_P2, c = seed, d = seed - S_P1;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        a = s_rotl(a + s_le64(p + i) * S_P2, 31) * S_P1;
        b = s_rotl(b + s_le64(p + i + 8) * S_P2, 31) * S_P1;
        c = s_rotl(c + s_le64(p + i + 16) * S_P2, 31) * S_P1;
        d = s_rotl(d + s_le64(p + i + 24) * S_P2, 31) * S_P1;
    }
    uint64_t h = s_rotl(a, 1) + s_rotl(b, 7) + s_rotl(c, 12) + s_rotl(d, 18) + n;
    for (; i + 8 <= n; i += 8)
        h = s_rotl(h ^ (s_le64(p + i) * S_P2), 27) * S_P1;
    for (; i < n; i++)
        h = s_rotl(h ^ (p[i] * S_P1), 11) * S_P2;
    h ^= h >> 33;
    h *= S_P2;
    h ^= h >> 29;
    return h;
}

typedef struct s_header {
    uint32_t magic, version;
    uint64_t module_hash, vt_id;
    uint32_t epoch, entry, nobj, nframes;
    uint64_t len[S_NLEN];
} s_header;

static uint64_t s_checksum(const s_header *h, const unsigned char *body, size_t n)
{
    unsigned char buf[8 * (6 + S_NLEN)];
    uint64_t v[6 + S_NLEN] = {h->magic, h->version, h->module_hash, h->vt_id, h->epoch,
                              ((uint64_t)h->entry << 32) | h->nobj};
    v[5] ^= (uint64_t)h->nframes << 16;
    for (int i = 0; i < S_NLEN; i++)
        v[6 + i] = i == L_SUM ? 0 : h->len[i];
    for (size_t i = 0; i < 6 + S_NLEN; i++)
        for (int k = 0; k < 8; k++)
            buf[i * 8 + k] = (unsigned char)(v[i] >> (8 * k));
    return s_hash_bytes(body, n, s_hash_bytes(buf, sizeof buf, 0x4C4556));
}

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
    size_t nc = s->cap ? s->cap : 256;
    while (nc < s->n + more)
        nc *= 2;
    unsigned char *np = realloc(s->p, nc * s->w);
    if (!np)
        return rt_err(LEV_ENOMEM, "out of memory in the image codec");
    s_hugepages(np + s->n * s->w, (nc - s->n) * s->w);
    s->p = np;
    s->cap = nc;
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

/* Copies n bytes; a single item of 1, 2, 4 or 8 bytes (most fields of
 * small objects) is one load and one store instead of a call to memcpy
 * with a size unknown at compile time. */
static inline void s_copy(void *dst, const void *src, size_t n)
{
    switch (n) {
    case 8:
        memcpy(dst, src, 8);
        break;
    case 4:
        memcpy(dst, src, 4);
        break;
    case 2:
        memcpy(dst, src, 2);
        break;
    case 1:
        memcpy(dst, src, 1);
        break;
    default:
        memcpy(dst, src, n);
    }
}

/* Appends one item of the stream's width. */
static inline int s_put1(s_stream *s, const void *src)
{
    if (LEV_UNLIKELY(s->n + 1 > s->cap) && s_reserve(s, 1))
        return rt_err(LEV_ENOMEM, "out of memory in the image codec");
    s_copy(s->p + s->n * s->w, src, s->w);
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
    uint32_t nfixed, capfixed, nframes;
    rt_objhdr **heap; /* discovery queue */
    uint32_t nheap, capheap;
    s_fref *frames;      /* sorted by address */
    int32_t *static_obj; /* sym -> object id of a travelling static, or -1 */
    s_bulk *bulk;
    uint32_t nbulk, capbulk;
    s_stream meta, bsz, s1, s2, s4, s8;
    uint32_t *group;     /* open meta group, or NULL */
    uint64_t live;
    rt_heap_cache *pages; /* heap pages seen by this capture */
} s_cap;

static _Atomic uint32_t s_gen_counter = 1;

static int s_grow(void **p, uint32_t *cap, size_t elem)
{
    uint32_t nc = *cap ? *cap * 2 : 64;
    void *np = realloc(*p, (size_t)nc * elem);
    if (!np)
        return rt_err(LEV_ENOMEM, "out of memory in the image codec");
    *p = np;
    *cap = nc;
    return 0;
}

static int s_add_fixed(s_cap *c, s_fixed o)
{
    if (c->nfixed == c->capfixed && s_grow((void **)&c->fixed, &c->capfixed, sizeof *c->fixed))
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
    return s_add_fixed(c, (s_fixed){frame, c->m->types[t].size, S_OBJ_FRAME, f->fn, f->pc});
}

static int s_fref_cmp(const void *a, const void *b)
{
    const s_fref *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Where a diagnostic says the bad pointer lives: object kind and id. */
static int s_bad_ptr(s_cap *c, uint32_t kind, uint32_t id, const rt_run *r, const void *p,
                     const char *what)
{
    if (kind == S_OBJ_FRAME)
        return rt_err(LEV_ECAPTURE, "%s %p in function %s, variable %s", what, p,
                      c->m->desc->fns[id].name, r->name);
    if (kind == S_OBJ_STATIC)
        return rt_err(LEV_ECAPTURE, "%s %p in static %s (%s)", what, p,
                      c->m->desc->statics[id].name, r->name);
    return rt_err(LEV_ECAPTURE, "%s %p in heap object of type %s, field %s", what, p,
                  c->m->types[id].name, r->name);
}

/* Encodes data pointer p found in an object of (kind, id), run r. */
static int s_ref(s_cap *c, uint32_t okind, uint32_t oid, const rt_run *r, char *p, uint64_t *out)
{
    if (!p) {
        *out = 0;
        return 0;
    }
    /* A frame of this VT? */
    uint32_t lo = 0, hi = c->nframes;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (c->frames[mid].addr <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo) {
        const s_fref *f = &c->frames[lo - 1];
        if ((uint64_t)(p - f->addr) <= f->size) {
            *out = (S_TAG_OBJ << 62) | ((uint64_t)f->obj << 32) | (uint64_t)(p - f->addr);
            return 0;
        }
    }
    if (LEV_UNLIKELY(p == &s_dangling)) {
        *out = S_DANGLING;
        return 0;
    }
    /* A heap object? */
    rt_objhdr *h = rt_heap_find_cached(c->pages, p);
    if (h) {
        uint32_t type = RT_OBJ_TYPE(h);
        if (LEV_UNLIKELY((h->type >> 24) == RT_OBJ_FREED) &&
            p >= (char *)h + sizeof(rt_objhdr)) {
            *out = S_DANGLING;
            return 0;
        }
        if (LEV_LIKELY((h->type >> 24) == RT_OBJ_MAGIC && type < c->m->ntypes &&
                       c->m->types[type].size)) {
            const rt_type *t = &c->m->types[type];
            char *data = (char *)h + sizeof(rt_objhdr);
            uint64_t size = (uint64_t)t->size * h->count;
            if (p >= data && (uint64_t)(p - data) <= size) {
                if (h->mark != c->gen) {
                    if (c->nheap == c->capheap &&
                        s_grow((void **)&c->heap, &c->capheap, sizeof *c->heap))
                        return rt_err(LEV_ENOMEM, "out of memory in the image codec");
                    if ((uint64_t)c->nfixed + c->nheap > S_ID_MAX)
                        return rt_err(LEV_ERANGE, "more than %u objects in one image", S_ID_MAX);
                    h->mark = c->gen;
                    h->id = c->nfixed + c->nheap;
                    c->heap[c->nheap++] = h;
                    c->live += size;
                }
                *out = (S_TAG_OBJ << 62) | ((uint64_t)h->id << 32) | (uint64_t)(p - data);
                return 0;
            }
        }
    }
    size_t off;
    int64_t s = rt_module_static_by_addr(c->m, p, &off);
    if (s >= 0) {
        if (c->static_obj[s] >= 0)
            *out = (S_TAG_OBJ << 62) | ((uint64_t)c->static_obj[s] << 32) | off;
        else
            *out = (S_TAG_SYM << 62) | ((uint64_t)s << 32) | off;
        return 0;
    }
    int64_t fn = rt_module_fn_by_addr(c->m, p);
    if (fn >= 0) {
        *out = (S_TAG_FN << 62) | ((uint64_t)fn << 32);
        return 0;
    }
    return s_bad_ptr(c, okind, oid, r, p, "pointer to memory the runtime does not own:");
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

/* Encodes `nelem` elements of type t at addr, an object of (kind, id). */
static int s_encode_obj(s_cap *c, char *addr, const rt_type *t, uint32_t nelem, uint32_t okind,
                        uint32_t oid)
{
    if (t->dense) {
        s_stream *s = s_stream_of(c, t->dense_kind);
        return s_put(s, addr, (size_t)t->runs[0].count * nelem);
    }
    for (uint32_t e = 0; e < nelem; e++) {
        char *eb = addr + (size_t)e * t->size;
        for (uint32_t k = 0; k < t->nruns; k++) {
            const rt_run *r = &t->runs[k];
            char *p = eb + r->offset;
            if (r->kind <= LEV_K_B8) {
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
                        v = (S_TAG_FN << 62) | ((uint64_t)fn << 32);
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
    if (kind == S_OBJ_HEAP && c->meta.n) {
        uint32_t *g = (uint32_t *)c->meta.p + c->meta.n - S_META_WORDS;
        if (g[0] == w0 && g[1] == id && g[2] == count && g[3] < UINT32_MAX) {
            g[3]++;
            return 0;
        }
    }
    uint32_t w[S_META_WORDS] = {w0, id, count, 1};
    return s_put(&c->meta, w, S_META_WORDS);
}

/* Encodes one object, or defers it to its own bulk image. */
static int s_emit(s_cap *c, char *addr, uint64_t size, const rt_type *t, uint32_t nelem,
                  uint32_t kind, uint32_t id, uint32_t count)
{
    uint32_t flags = 0;
    if (t->dense && size >= S_BULK_MIN && size / rt_kind_width(t->dense_kind) <= INT32_MAX) {
        if (c->nbulk == c->capbulk && s_grow((void **)&c->bulk, &c->capbulk, sizeof *c->bulk))
            return rt_err(LEV_ENOMEM, "out of memory in the image codec");
        c->bulk[c->nbulk++] = (s_bulk){addr, size / rt_kind_width(t->dense_kind), t->dense_kind};
        flags = S_F_BULK;
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
                                           S_OBJ_STATIC, s, d->statics[s].count})))
            return rc;
    }
    for (uint32_t i = 0; i < c->nfixed; i++) {
        s_fixed o = c->fixed[i];
        const rt_type *t = o.kind == S_OBJ_FRAME ? &c->m->types[d->fns[o.id].frame_type]
                                                 : &c->m->types[d->statics[o.id].type];
        uint32_t nelem = o.kind == S_OBJ_FRAME ? 1 : o.count;
        if ((rc = s_emit(c, o.addr, o.size, t, nelem, o.kind, o.id, o.count)))
            return rc;
    }
    /* The queue grows while it is encoded. */
    for (uint32_t i = 0; i < c->nheap; i++) {
        rt_objhdr *h = c->heap[i];
        uint32_t type = RT_OBJ_TYPE(h);
        const rt_type *t = &c->m->types[type];
        if ((rc = s_emit(c, rt_obj_data(h), (uint64_t)t->size * h->count, t, h->count,
                         S_OBJ_HEAP, type, h->count)))
            return rc;
    }
    return 0;
}

/* tpl format of a dense array of `kind`. */
static char *s_arr_fmt(uint32_t kind)
{
    switch (kind) {
    case LEV_K_B1:
        return "c#";
    case LEV_K_B2:
        return "v#";
    case LEV_K_B4:
        return "u#";
    default:
        return "U#";
    }
}

/* ===================================================================
 * Dense parts without tpl's copies
 *
 * A dense array part is a tpl image of one fixed-length array: "tpl",
 * a flags byte, the image's length (32 bits), the format ("U#" etc., NUL
 * terminated), the item count (32 bits), then the items, all in this
 * host's byte order. The streams are written and read as such directly
 * (one copy each way, none on restore) when a tpl image of two items
 * that this file builds comes out byte for byte as tpl's own; otherwise,
 * and for any part that is not exactly of that shape (another byte
 * order, damage), tpl does the work.
 * =================================================================== */

#define S_PRE 15u /* bytes before the items */

/* Per width index: 0 not checked yet, 1 direct, -1 through tpl. */
static _Atomic int s_direct_state[4];
static _Atomic int s_tpl_flags;

static inline uint32_t s_widx(uint32_t kind) { return kind - LEV_K_B1; }

/* Writes the tpl image of n items of kind (n * width + S_PRE bytes). */
static void s_direct_write(uint8_t *dst, uint32_t kind, const void *items, size_t n)
{
    uint32_t w = rt_kind_width(kind), total = (uint32_t)(S_PRE + n * w), cnt = (uint32_t)n;
    memcpy(dst, "tpl", 3);
    dst[3] = (uint8_t)atomic_load(&s_tpl_flags);
    memcpy(dst + 4, &total, 4);
    memcpy(dst + 8, s_arr_fmt(kind), 3); /* with its NUL */
    memcpy(dst + 11, &cnt, 4);
    if (n)
        memcpy(dst + S_PRE, items, n * w);
}

/* Whether this file writes parts of kind exactly as tpl does. */
static bool s_direct_ok(uint32_t kind)
{
    int st = atomic_load(&s_direct_state[s_widx(kind)]);
    if (st)
        return st > 0;
    uint64_t items[2] = {0x0102030405060708ull, 0x1112131415161718ull};
    unsigned char mine[S_PRE + 16];
    void *theirs = NULL;
    size_t len = 0;
    tpl_node *tn = tpl_map(s_arr_fmt(kind), items, 2);
    bool ok = tn && tpl_pack(tn, 0) == 0 && tpl_dump(tn, TPL_MEM, &theirs, &len) == 0 && theirs;
    if (tn)
        tpl_free(tn);
    uint32_t w = rt_kind_width(kind);
    if (ok && len == S_PRE + 2 * w) {
        atomic_store(&s_tpl_flags, ((unsigned char *)theirs)[3]);
        /* The first 2 * w bytes of items, as tpl_map read them. */
        s_direct_write(mine, kind, items, 2);
        ok = memcmp(mine, theirs, len) == 0;
    } else {
        ok = false;
    }
    free(theirs);
    atomic_store(&s_direct_state[s_widx(kind)], ok ? 1 : -1);
    return ok;
}

/* Whether the sz bytes at p are exactly the image s_direct_write makes
 * of n items of kind. */
static bool s_direct_match(const uint8_t *p, uint64_t sz, uint32_t kind, uint64_t n)
{
    uint32_t w = rt_kind_width(kind);
    if (!s_direct_ok(kind) || sz != S_PRE + n * w || sz > UINT32_MAX)
        return false;
    unsigned char pre[S_PRE];
    s_direct_write(pre, kind, NULL, 0);
    uint32_t total = (uint32_t)sz, cnt = (uint32_t)n;
    memcpy(pre + 4, &total, 4);
    memcpy(pre + 11, &cnt, 4);
    return memcmp(pre, p, S_PRE) == 0;
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
    part->tn = tpl_map(s_arr_fmt(kind), p, (int)n);
    if (!part->tn)
        return rt_err(LEV_ENOMEM, "tpl_map failed");
    if (tpl_pack(part->tn, 0) != 0 || tpl_dump(part->tn, TPL_GETSIZE, &part->size) != 0)
        return rt_err(LEV_ENOMEM, "tpl_pack failed");
    return 0;
}

static int s_pack_header(s_header *h, s_part *hp)
{
    hp->tn = tpl_map(S_HDR_FMT, &h->magic, &h->version, &h->module_hash, &h->vt_id, &h->epoch,
                     &h->entry, &h->nobj, &h->nframes, h->len, S_NLEN);
    if (!hp->tn)
        return rt_err(LEV_ENOMEM, "tpl_map failed");
    if (tpl_pack(hp->tn, 0) || tpl_dump(hp->tn, TPL_GETSIZE, &hp->size))
        return rt_err(LEV_ENOMEM, "tpl_pack of the header failed");
    return 0;
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
    s_header h = {S_MAGIC, RT_IMAGE_VERSION, c->m->hash, vt->id, vt->epoch, vt->entry,
                  c->nfixed + c->nheap, c->nframes, {0}};
    for (int k = 0; k < 6; k++) {
        if (streams[k]->n > INT32_MAX)
            return rt_err(LEV_ERANGE, "image stream too large for one image");
        h.len[2 * k] = streams[k]->n;
        if (streams[k]->n == 0)
            continue;
        if (s_direct_ok(kinds[k]) &&
            S_PRE + streams[k]->n * streams[k]->w <= UINT32_MAX) {
            parts[k] = (s_part){NULL, S_PRE + streams[k]->n * streams[k]->w, streams[k]->p,
                                streams[k]->n, kinds[k]};
        } else if ((rc = s_pack_arr(&parts[k], kinds[k], streams[k]->p, streams[k]->n))) {
            return rc;
        }
        h.len[2 * k + 1] = parts[k].size;
    }
    np = 6 + c->nbulk;
    h.len[L_LIVE] = c->live;
    uint64_t body = 0;
    for (uint32_t i = 0; i < np; i++)
        body += parts[i].size;
    h.len[L_BODY] = body;
    s_part hp = {0};
    rc = s_pack_header(&h, &hp);
    if (hp.tn)
        tpl_free(hp.tn);
    if (rc)
        return rc;
    uint64_t total = hp.size + body;
    if (total >= UINT32_MAX)
        return rt_err(LEV_ERANGE, "image of %llu bytes exceeds 4 GiB", (unsigned long long)total);
    uint8_t *out = malloc(total);
    if (!out)
        return rt_err(LEV_ENOMEM, "out of memory in the image codec");
    s_hugepages(out, total);
    size_t off = hp.size;
    for (uint32_t i = 0; i < np; i++) {
        if (parts[i].direct) {
            s_direct_write(out + off, parts[i].kind, parts[i].direct, parts[i].n);
            off += parts[i].size;
            continue;
        }
        if (!parts[i].tn)
            continue;
        if (tpl_dump(parts[i].tn, TPL_MEM | TPL_PREALLOCD, out + off, parts[i].size)) {
            free(out);
            return rt_err(LEV_ENOMEM, "tpl_dump failed");
        }
        off += parts[i].size;
    }
    /* The header's size does not depend on its values: pack it again
     * with the checksum over the body. */
    h.len[L_SUM] = s_checksum(&h, out + hp.size, body);
    size_t hsize = hp.size;
    hp.tn = NULL;
    rc = s_pack_header(&h, &hp);
    if (rc == 0 && (hp.size != hsize || tpl_dump(hp.tn, TPL_MEM | TPL_PREALLOCD, out, hsize)))
        rc = rt_err(LEV_ENOMEM, "tpl_dump of the header failed");
    if (hp.tn)
        tpl_free(hp.tn);
    if (rc) {
        free(out);
        return rc;
    }
    *img = out;
    *len = total;
    return 0;
}

static int s_capture(rt_vt *vt, uint8_t **img, size_t *len, bool scribble)
{
    s_cap c;
    int rc = s_collect(&c, vt);
    if (rc) {
        s_cap_free(&c);
        return rc;
    }
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
    if (rc == 0 && scribble) {
        /* Objects the wipe has not reached yet are referenced only from
         * the queue (malloc'd, not scanned) once their parents are wiped:
         * no collection may run until the wipe is over. */
        GC_disable();
        for (uint32_t i = 0; i < c.nfixed; i++)
            if (c.fixed[i].kind != S_OBJ_FRAME)
                memset(c.fixed[i].addr, 0xA5, c.fixed[i].size);
        for (uint32_t i = 0; i < c.nheap; i++)
            memset(rt_obj_data(c.heap[i]), 0xA5, rt_heap_obj_size(c.m, c.heap[i]));
        GC_enable();
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
    return s_capture(vt, img, len, false);
}

int rt_heap_scribble_reachable(rt_vt *vt)
{
    if (!vt)
        return rt_err(LEV_EINVAL, "rt_heap_scribble_reachable: NULL argument");
    return s_capture(vt, NULL, NULL, true);
}

/* ===================================================================
 * Collections held off during a restore
 *
 * A restore allocates every object of the image with collections off
 * (GC_disable): nothing it allocates is garbage before the frames are
 * installed, and a collection in the middle would only mark the heap
 * again. But a collector that runs out of free blocks while collections
 * are off grows its heap instead of collecting. A VT that allocates only
 * through restores (torture mode, or a program that allocates nothing
 * between its captures) therefore grew the heap by about one image per
 * restore without one collection ever running: memory grew without
 * bound (over 100 MB a second under LEV_TORTURE=1), every old copy of
 * the VT kept as garbage nobody collected. So before collections go off,
 * a restore does what the collector would have done: it collects when
 * the bytes allocated since the last collection reach the allowance
 * (s_gc_allowance), and grows the heap when even then it cannot hold
 * the restore. Restores on several threads share one window of held-off
 * collections; a collection that came due meanwhile runs when the last
 * of them ends.
 * =================================================================== */

static pthread_mutex_t s_hold_mu = PTHREAD_MUTEX_INITIALIZER;
static uint32_t s_holders; /* restores with collections off */
static size_t s_hold_heap; /* heap size when the window opened */
static bool s_hold_owed;   /* a collection was due but could not run */

/* Least allocation between two collections that a restore asks for: a
 * small VT restored at every safe point (torture mode) would otherwise
 * pay a whole collection, most of it the collector's fixed cost, every
 * cycle or two. */
#define S_GC_MIN_ALLOC ((size_t)4 << 20)

/* Most free heap a restore keeps beyond what it will allocate, for the
 * holes between free blocks that a slab or a large object cannot use. */
#define S_ROOM_SPARE ((size_t)1 << 20)

/* Bytes the collector may allocate between two collections: a share of
 * the heap in use (its free-space divisor), at least S_GC_MIN_ALLOC. */
static size_t s_gc_allowance(void)
{
    size_t heap = GC_get_heap_size(), fr = GC_get_free_bytes();
    GC_word div = GC_get_free_space_divisor();
    size_t a = (heap > fr ? heap - fr : 0) / (div ? div : 1);
    return a > S_GC_MIN_ALLOC ? a : S_GC_MIN_ALLOC;
}

/* Turns collections off for a restore that will allocate about `need`
 * bytes: first collects if a collection is due (the bytes allocated
 * since the last one reach the allowance), then, if the free heap cannot
 * hold `need` with half as much again to spare (at most S_ROOM_SPARE),
 * grows it to hold them. */
static void s_hold_begin(uint64_t need)
{
    pthread_mutex_lock(&s_hold_mu);
    bool due = GC_get_bytes_since_gc() >= s_gc_allowance();
    if (s_holders == 0) {
        if (due)
            GC_gcollect();
        size_t fr = GC_get_free_bytes();
        uint64_t room = need + (need / 2 < S_ROOM_SPARE ? need / 2 : S_ROOM_SPARE);
        if (fr < room && room - fr <= SIZE_MAX)
            GC_expand_hp((size_t)(room - fr)); /* if this fails, the restore grows it */
        s_hold_heap = GC_get_heap_size();
    } else if (due) {
        s_hold_owed = true;
    }
    s_holders++;
    GC_disable();
    pthread_mutex_unlock(&s_hold_mu);
}

/* Turns collections back on; the last restore of a window pays the
 * collection owed, if any, or one that came due while the heap grew. */
static void s_hold_end(void)
{
    pthread_mutex_lock(&s_hold_mu);
    GC_enable();
    if (--s_holders == 0) {
        if (s_hold_owed ||
            (GC_get_heap_size() > s_hold_heap && GC_get_bytes_since_gc() >= s_gc_allowance()))
            GC_gcollect();
        s_hold_owed = false;
    }
    pthread_mutex_unlock(&s_hold_mu);
}

/* ===================================================================
 * Restore
 * =================================================================== */

typedef struct s_rd {
    const unsigned char *p; /* stream items (in the image, or malloc'd) */
    size_t n, pos;
    uint32_t w;
    bool own;               /* p is malloc'd */
} s_rd;

/* Small objects that hold pointers come from GC_malloc_many batches (one
 * lock per batch rather than per object); they are scanned
 * conservatively, which is always safe. Others take the typed path. */
typedef struct s_batch {
    void *list;
    size_t bytes;
} s_batch;

#define S_BATCH_MAX 512u
/* A slab holds at most this many bytes of objects (rt_heap_alloc_slab). */
#define S_SLAB_MAX_BYTES (64u * 1024u)

typedef struct s_rst {
    const lev_module *m;
    s_header h;
    size_t hdr_size;
    const uint8_t *img;
    size_t len;
    uint32_t *meta;   /* groups of S_META_WORDS words */
    size_t ngroups;
    uint32_t *bsz;    /* image size of each bulk object */
    size_t nbsz;
    s_rd s[4];        /* scalars of 1, 2, 4, 8 bytes; pointers in s[3] */
    char **addr;      /* object id -> address (GC-visible) */
    uint32_t *size;   /* object id -> bytes (at most UINT32_MAX, checked) */
    rt_chunk *chunk;  /* the new frame chunk */
    size_t bulk_off;  /* where the bulk images begin */
    uint64_t frames_bytes;
    /* Allocation runs just ahead of decoding: objects [0, nalloc) have
     * addresses, [nfilled, nalloc) are not decoded yet. */
    uint32_t nalloc, nfilled;
    size_t ag;        /* meta group of object nalloc */
    uint32_t ak;      /* its index within that group */
    char *fp;         /* next frame in the chunk */
    s_batch batch;
    bool gc_off;      /* collections held off by the restore (s_hold_begin) */
    uint64_t gc_need; /* bytes the heap objects take from the collector */
} s_rst;

static size_t s_hdr_size;

static size_t s_header_size(void)
{
    if (s_hdr_size)
        return s_hdr_size;
    s_header h = {0};
    tpl_node *tn = tpl_map(S_HDR_FMT, &h.magic, &h.version, &h.module_hash, &h.vt_id, &h.epoch,
                           &h.entry, &h.nobj, &h.nframes, h.len, S_NLEN);
    size_t sz = 0;
    if (tn) {
        if (tpl_pack(tn, 0) == 0)
            tpl_dump(tn, TPL_GETSIZE, &sz);
        tpl_free(tn);
    }
    s_hdr_size = sz;
    return sz;
}

/* Checks that a part is a tpl image of the expected format and fixed
 * length before tpl_load ever sees it. */
static int s_check_fmt(const uint8_t *p, size_t n, const char *fmt, uint32_t expect_len,
                       const char *what)
{
    char *f = tpl_peek(TPL_MEM, p, n);
    if (!f)
        return rt_err(LEV_EIMAGE, "%s is not a tpl image", what);
    int ok = strcmp(f, fmt) == 0;
    free(f);
    if (!ok)
        return rt_err(LEV_EIMAGE, "%s has an unexpected format", what);
    uint32_t nfx = 0, *fx = NULL;
    f = tpl_peek(TPL_MEM | TPL_FXLENS, p, n, &nfx, &fx);
    if (!f)
        return rt_err(LEV_EIMAGE, "%s has no array length", what);
    free(f);
    uint32_t got = nfx == 1 && fx ? fx[0] : 0;
    free(fx);
    if (nfx != 1 || got != expect_len)
        return rt_err(LEV_EIMAGE, "%s has %u items, the header says %u", what, got, expect_len);
    return 0;
}

/* Unpacks one dense array part into dst (n items of kind). */
static int s_unpack_arr(const uint8_t *p, size_t sz, uint32_t kind, void *dst, size_t n,
                        const char *what)
{
    int rc = s_check_fmt(p, sz, s_arr_fmt(kind), (uint32_t)n, what);
    if (rc)
        return rc;
    tpl_node *tn = tpl_map(s_arr_fmt(kind), dst, (int)n);
    if (!tn)
        return rt_err(LEV_ENOMEM, "tpl_map failed");
    if (tpl_load(tn, TPL_MEM, p, sz) != 0) {
        tpl_free(tn);
        return rt_err(LEV_EIMAGE, "%s is damaged", what);
    }
    rc = tpl_unpack(tn, 0) == 1 ? 0 : rt_err(LEV_EIMAGE, "%s cannot be unpacked", what);
    tpl_free(tn);
    return rc;
}

static int s_read_header(const uint8_t *img, size_t len, s_header *h, size_t *hsz)
{
    size_t hs = s_header_size();
    if (!img || len < 8 || hs == 0)
        return rt_err(LEV_EIMAGE, "image of %zu bytes is too short", len);
    /* tpl sets only its byte-order bit for a format without strings; the
     * checksum covers the header's values, not this byte. */
    if (img[3] & ~1u)
        return rt_err(LEV_EIMAGE, "image header has unknown flags 0x%02x", img[3]);
    char *f = tpl_peek(TPL_MEM, img, len < hs ? len : hs);
    if (!f)
        return rt_err(LEV_EIMAGE, "image does not begin with a tpl header");
    int same = strcmp(f, S_HDR_FMT) == 0;
    free(f);
    if (!same)
        return rt_err(LEV_EVERSION, "image header has a foreign format");
    if (len < hs)
        return rt_err(LEV_EIMAGE, "image of %zu bytes is truncated inside its header", len);
    memset(h, 0, sizeof *h);
    tpl_node *tn = tpl_map(S_HDR_FMT, &h->magic, &h->version, &h->module_hash, &h->vt_id, &h->epoch,
                           &h->entry, &h->nobj, &h->nframes, h->len, S_NLEN);
    if (!tn)
        return rt_err(LEV_ENOMEM, "tpl_map failed");
    int rc = 0;
    if (tpl_load(tn, TPL_MEM, img, hs) != 0 || tpl_unpack(tn, 0) != 1)
        rc = rt_err(LEV_EIMAGE, "image header is damaged");
    tpl_free(tn);
    if (rc)
        return rc;
    if (h->magic != S_MAGIC)
        return rt_err(LEV_EIMAGE, "image has a bad magic number");
    if (h->version != RT_IMAGE_VERSION)
        return rt_err(LEV_EVERSION, "image format version %u, this runtime reads version %u",
                      h->version, RT_IMAGE_VERSION);
    if (h->len[L_BODY] != len - hs)
        return rt_err(LEV_EIMAGE, "image body is %zu bytes, the header says %llu%s", len - hs,
                      (unsigned long long)h->len[L_BODY],
                      len - hs < h->len[L_BODY] ? " (truncated)" : "");
    if (s_checksum(h, img + hs, len - hs) != h->len[L_SUM])
        return rt_err(LEV_EIMAGE, "image checksum does not match (damaged)");
    *hsz = hs;
    return 0;
}

static int s_info_guarded(const uint8_t *img, size_t len, rt_image_info *info)
{
    s_header h;
    size_t hs;
    int rc = s_read_header(img, len, &h, &hs);
    if (rc)
        return rc;
    info->version = h.version;
    info->module_hash = h.module_hash;
    info->vt_id = h.vt_id;
    info->epoch = h.epoch;
    info->nobjects = h.nobj;
    info->nframes = h.nframes;
    info->live_bytes = h.len[L_LIVE];
    return 0;
}

/* Runs fn(a, b, c) with tpl's fatal hook returning here. */
#define S_GUARDED(rc, call)                                                                        \
    do {                                                                                           \
        jmp_buf jb_;                                                                               \
        jmp_buf **slot_ = rt_tpl_jmp_slot();                                                       \
        jmp_buf *saved_ = *slot_;                                                                  \
        if (setjmp(jb_) == 0) {                                                                    \
            *slot_ = &jb_;                                                                         \
            rc = (call);                                                                           \
        } else {                                                                                   \
            rc = LEV_ENOMEM;                                                                       \
        }                                                                                          \
        *slot_ = saved_;                                                                           \
    } while (0)

int rt_image_info_get(const uint8_t *img, size_t len, rt_image_info *info)
{
    if (!info)
        return rt_err(LEV_EINVAL, "rt_image_info_get: NULL argument");
    rt_init();
    int rc;
    S_GUARDED(rc, s_info_guarded(img, len, info));
    return rc;
}

static void s_rst_free(s_rst *r, bool free_objects)
{
    if (free_objects && r->addr && r->meta) {
        uint32_t i = 0;
        for (size_t g = 0; g < r->ngroups; g++) {
            const uint32_t *w = r->meta + g * S_META_WORDS;
            for (uint32_t k = 0; k < w[3] && i < r->h.nobj; k++, i++)
                if ((w[0] & 0xFF) == S_OBJ_HEAP && r->addr[i])
                    rt_heap_free_restored((rt_objhdr *)(r->addr[i] - sizeof(rt_objhdr)));
        }
    }
    if (free_objects && r->chunk) {
        rt_arena_chunk_free(r->chunk);
        r->chunk = NULL;
    }
    free(r->meta);
    free(r->bsz);
    for (int k = 0; k < 4; k++)
        if (r->s[k].own)
            free((void *)r->s[k].p);
    if (r->addr)
        GC_free(r->addr);
    free(r->size);
}

/* Type and element count of the objects of meta group g. */
static const rt_type *s_group_type(s_rst *r, const uint32_t *w, uint32_t *nelem)
{
    const lev_module_desc *d = r->m->desc;
    uint32_t kind = w[0] & 0xFF;
    if (kind == S_OBJ_FRAME) {
        *nelem = 1;
        return &r->m->types[d->fns[w[1]].frame_type];
    }
    if (kind == S_OBJ_STATIC) {
        *nelem = d->statics[w[1]].count;
        return &r->m->types[d->statics[w[1]].type];
    }
    *nelem = w[2];
    return &r->m->types[w[1]];
}

/* About how many bytes of the collector's heap `rep` objects of `bytes`
 * data bytes take as restore allocates them: slabs, small objects in
 * 16-byte granules with one heap block per size, large ones in whole
 * pages. */
static uint64_t s_heap_need(uint64_t bytes, uint32_t rep)
{
    uint64_t one = sizeof(rt_objhdr) + bytes;
    uint32_t st = rt_heap_slab_stride(bytes);
    if (rep >= 2 && st)
        return (uint64_t)rep * st + ((uint64_t)rep * st / S_SLAB_MAX_BYTES + 1) * 4096u;
    if (one <= 2048)
        return (uint64_t)rep * ((one + 15) & ~(uint64_t)15) + 4096u;
    return (uint64_t)rep * ((one + 4095) & ~(uint64_t)4095);
}

/* Validates the object table and that the streams hold exactly what the
 * objects will consume; nothing is allocated for objects before this. */
static int s_validate_meta(s_rst *r)
{
    const lev_module_desc *d = r->m->desc;
    uint64_t need[LEV_K_B8 + 1] = {0};
    uint64_t nobj = 0, nbulk = 0;
    r->frames_bytes = 0;
    for (size_t g = 0; g < r->ngroups; g++) {
        const uint32_t *w = r->meta + g * S_META_WORDS;
        uint32_t kind = w[0] & 0xFF, flags = w[0] >> 8, rep = w[3];
        if (flags & ~(uint32_t)S_F_BULK)
            return rt_err(LEV_EIMAGE, "object group %zu has unknown flags", g);
        if (rep == 0 || rep > r->h.nobj - nobj)
            return rt_err(LEV_EIMAGE, "object group %zu repeats %u times past the object count",
                          g, rep);
        if ((nobj < r->h.nframes) != (kind == S_OBJ_FRAME) ||
            (kind == S_OBJ_FRAME && rep != 1))
            return rt_err(LEV_EIMAGE, "object %llu: frames must come first, one per group",
                          (unsigned long long)nobj);
        if (kind == S_OBJ_FRAME) {
            if (w[1] >= d->nfns || !d->fns[w[1]].frame_type)
                return rt_err(LEV_EIMAGE, "frame %llu names unknown function %u",
                              (unsigned long long)nobj, w[1]);
            if (nobj == 0 && !d->fns[w[1]].entry)
                return rt_err(LEV_EIMAGE, "bottom frame's function %s is not an entry",
                              d->fns[w[1]].name);
        } else if (kind == S_OBJ_STATIC) {
            if (rep != 1 || w[1] >= d->nstatics || !(d->statics[w[1]].flags & LEV_S_TRAVELS))
                return rt_err(LEV_EIMAGE, "object group %zu names static %u that does not travel",
                              g, w[1]);
            for (size_t j = 0; j < g; j++)
                if ((r->meta[j * S_META_WORDS] & 0xFF) == S_OBJ_STATIC &&
                    r->meta[j * S_META_WORDS + 1] == w[1])
                    return rt_err(LEV_EIMAGE, "static %u appears twice", w[1]);
        } else if (kind == S_OBJ_HEAP) {
            if (!rt_module_type(r->m, w[1]))
                return rt_err(LEV_EIMAGE, "heap object group %zu has unknown type %u", g, w[1]);
        } else {
            return rt_err(LEV_EIMAGE, "object group %zu has unknown kind %u", g, kind);
        }
        uint32_t nelem;
        const rt_type *t = s_group_type(r, w, &nelem);
        uint64_t bytes = (uint64_t)t->size * nelem;
        if (bytes > UINT32_MAX)
            return rt_err(LEV_EIMAGE, "object group %zu: objects of %llu bytes", g,
                          (unsigned long long)bytes);
        for (uint32_t k = 0; k < rep; k++)
            r->size[nobj + k] = (uint32_t)bytes;
        if (kind == S_OBJ_FRAME)
            r->frames_bytes += LEV_FRAME_SIZE(bytes);
        if (kind == S_OBJ_HEAP)
            r->gc_need += s_heap_need(bytes, rep);
        nobj += rep;
        if (flags & S_F_BULK) {
            if (!t->dense)
                return rt_err(LEV_EIMAGE, "object group %zu is bulk but its type is not dense", g);
            nbulk += rep;
            continue;
        }
        for (uint32_t k = 0; k < t->nruns; k++) {
            uint32_t kk = t->runs[k].kind;
            need[kk <= LEV_K_B8 ? kk : LEV_K_B8] += (uint64_t)t->runs[k].count * nelem * rep;
        }
    }
    if (nobj != r->h.nobj)
        return rt_err(LEV_EIMAGE, "object table lists %llu objects, the header says %u",
                      (unsigned long long)nobj, r->h.nobj);
    if (nbulk != r->nbsz)
        return rt_err(LEV_EIMAGE, "%llu bulk objects but %zu bulk images",
                      (unsigned long long)nbulk, r->nbsz);
    if (need[LEV_K_B1] != r->s[0].n || need[LEV_K_B2] != r->s[1].n ||
        need[LEV_K_B4] != r->s[2].n || need[LEV_K_B8] != r->s[3].n)
        return rt_err(LEV_EIMAGE, "object table does not match the data streams");
    /* Each bulk object's image must hold its elements before anything is
     * allocated for it. */
    size_t off = r->bulk_off, b = 0;
    uint64_t i = 0;
    for (size_t g = 0; g < r->ngroups; g++) {
        const uint32_t *w = r->meta + g * S_META_WORDS;
        uint32_t nelem;
        const rt_type *t = s_group_type(r, w, &nelem);
        for (uint32_t k = 0; k < w[3]; k++, i++) {
            if (!(w[0] >> 8 & S_F_BULK))
                continue;
            int rc = s_check_fmt(r->img + off, r->bsz[b], s_arr_fmt(t->dense_kind),
                                 (uint32_t)(r->size[i] / rt_kind_width(t->dense_kind)),
                                 "bulk object");
            if (rc)
                return rc;
            off += r->bsz[b++];
        }
    }
    return 0;
}

/* Objects allocated ahead of the one being decoded: enough to keep them
 * in cache until they are filled, few enough to stay there. */
#define S_AHEAD 64u

/* Zeroes the data of the heap objects allocated but not yet decoded
 * (allocated without clearing while collections were off), before
 * collections come back. Allocation happens between objects only
 * (s_alloc_for), so none of them is partly decoded. */
static void s_clear_pending(s_rst *r)
{
    uint32_t i = 0;
    for (size_t g = 0; g < r->ngroups && i < r->nalloc; g++) {
        const uint32_t *w = r->meta + g * S_META_WORDS;
        uint32_t end = i + w[3];
        if ((w[0] & 0xFF) == S_OBJ_HEAP)
            for (uint32_t k = i > r->nfilled ? i : r->nfilled; k < end && k < r->nalloc; k++)
                memset(r->addr[k], 0, r->size[k]);
        i = end;
    }
}

/* Allocates one heap object of `count` elements of type t (id `type`),
 * `bytes` bytes with its header. While collections are off, a batched
 * object of a packed type is not cleared: decoding writes every byte of
 * it before collections come back (s_clear_pending otherwise). */
static inline rt_objhdr *s_alloc_heap(s_rst *r, const rt_type *t, uint32_t type, uint32_t count,
                                      size_t bytes)
{
    if (!t->has_ptrs || bytes > S_BATCH_MAX)
        return rt_heap_alloc_raw(r->m, type, count, false);
    s_batch *b = &r->batch;
    if (LEV_UNLIKELY(b->bytes != bytes || !b->list)) {
        b->list = GC_malloc_many(bytes);
        b->bytes = bytes;
        if (!b->list)
            return NULL;
    }
    rt_objhdr *h = b->list;
    b->list = GC_NEXT(b->list);
    h->type = type | (RT_OBJ_MAGIC << 24);
    h->count = count;
    h->mark = 0;
    h->id = 0;
    if (!(t->packed && r->gc_off))
        memset(rt_obj_data(h), 0, bytes - sizeof *h);
    return h;
}

/* Gives addresses to the objects up to `end` (exclusive, at most nobj),
 * in object order: frames in the chunk, statics in place, heap objects
 * from the GC. On the first allocation failure collections come back
 * and the allocation is retried. */
static __attribute__((noinline)) int s_alloc_upto(s_rst *r, uint64_t end)
{
    if (end > r->h.nobj)
        end = r->h.nobj;
    const lev_module_desc *d = r->m->desc;
    while (r->nalloc < end) {
        const uint32_t *w = r->meta + r->ag * S_META_WORDS;
        if (r->ak == w[3]) {
            r->ag++;
            r->ak = 0;
            continue;
        }
        uint32_t kind = w[0] & 0xFF, n = w[3] - r->ak;
        if (n > end - r->nalloc)
            n = (uint32_t)(end - r->nalloc);
        if (kind == S_OBJ_FRAME) {
            uint32_t i = r->nalloc;
            r->addr[i] = r->fp;
            memset(r->fp, 0, LEV_FRAME_SIZE(r->size[i]));
            ((lev_frame *)r->fp)->fn = w[1];
            r->fp += LEV_FRAME_SIZE(r->size[i]);
            n = 1;
        } else if (kind == S_OBJ_STATIC) {
            r->addr[r->nalloc] = d->statics[w[1]].addr;
            n = 1;
        } else if (w[3] - r->ak >= 2 && rt_heap_slab_stride((size_t)r->size[r->nalloc])) {
            /* The rest of the group, or as much as one slab holds. */
            uint32_t stride = rt_heap_slab_stride((size_t)r->size[r->nalloc]);
            n = w[3] - r->ak;
            if (n > S_SLAB_MAX_BYTES / stride)
                n = S_SLAB_MAX_BYTES / stride;
            rt_objhdr *h = rt_heap_alloc_slab(r->m, w[1], w[2], n, &stride);
            if (!h && r->gc_off) {
                s_clear_pending(r);
                s_hold_end();
                r->gc_off = false;
                h = rt_heap_alloc_slab(r->m, w[1], w[2], n, &stride);
            }
            if (!h)
                return rt_err(LEV_ENOMEM, "cannot allocate heap objects %u..%u (%llu bytes each)",
                              r->nalloc, r->nalloc + n - 1, (unsigned long long)r->size[r->nalloc]);
            char *data = rt_obj_data(h);
            for (uint32_t k = 0; k < n; k++)
                r->addr[r->nalloc + k] = data + (size_t)k * stride;
        } else {
            const rt_type *t = &r->m->types[w[1]];
            size_t bytes = sizeof(rt_objhdr) + (size_t)t->size * w[2];
            for (uint32_t k = 0; k < n; k++) {
                uint32_t i = r->nalloc + k;
                rt_objhdr *h = s_alloc_heap(r, t, w[1], w[2], bytes);
                if (!h && r->gc_off) {
                    r->nalloc = i;
                    s_clear_pending(r);
                    s_hold_end();
                    r->gc_off = false;
                    h = s_alloc_heap(r, t, w[1], w[2], bytes);
                }
                if (!h) {
                    r->nalloc = i;
                    return rt_err(LEV_ENOMEM, "cannot allocate heap object %u (%llu bytes)", i,
                                  (unsigned long long)r->size[i]);
                }
                r->addr[i] = rt_obj_data(h);
            }
        }
        r->nalloc += n;
        r->ak += n;
    }
    return 0;
}

#define S_TAKE(rd, dst, items)                                                                     \
    do {                                                                                           \
        s_copy((dst), (rd)->p + (rd)->pos * (rd)->w, (size_t)(items) * (rd)->w);                   \
        (rd)->pos += (items);                                                                      \
    } while (0)

static __attribute__((noinline)) int s_unref_slow(s_rst *r, uint64_t v, uint32_t kind, void *dst,
                                                  uint32_t oi, const char *fname)
{
    if (v == 0) {
        memset(dst, 0, kind == LEV_K_PTR ? sizeof(void *) : sizeof(void (*)(void)));
        return 0;
    }
    uint64_t tag = v >> 62, id = (v >> 32) & S_ID_MAX, off = v & 0xFFFFFFFFull;
    const lev_module_desc *d = r->m->desc;
    if (kind == LEV_K_FNPTR || tag == S_TAG_FN) {
        if (tag != S_TAG_FN || off || id >= d->nfns || !d->fns[id].native)
            return rt_err(LEV_EIMAGE, "object %u field %s: bad function reference", oi, fname);
        void (*f)(void) = d->fns[id].native;
        if (kind == LEV_K_FNPTR)
            memcpy(dst, &f, sizeof f);
        else {
            void *p = (void *)(uintptr_t)f;
            memcpy(dst, &p, sizeof p);
        }
        return 0;
    }
    char *p;
    if (v == S_DANGLING && kind == LEV_K_PTR) {
        /* Never dereferenced by a correct program: any distinct non-NULL
         * address will do. */
        p = (char *)&s_dangling;
    } else if (tag == S_TAG_OBJ) {
        if (id >= r->h.nobj || off > r->size[id])
            return rt_err(LEV_EIMAGE, "object %u field %s: reference outside object %llu", oi,
                          fname, (unsigned long long)id);
        if (id >= r->nalloc) /* s_ref_end covered every word: cannot happen */
            return rt_err(LEV_EIMAGE, "object %u field %s: object %llu not allocated", oi, fname,
                          (unsigned long long)id);
        p = r->addr[id] + off;
    } else if (tag == S_TAG_SYM) {
        if (id >= d->nstatics || off > rt_module_static_size(r->m, (uint32_t)id))
            return rt_err(LEV_EIMAGE, "object %u field %s: bad static reference", oi, fname);
        p = (char *)d->statics[id].addr + off;
    } else {
        return rt_err(LEV_EIMAGE, "object %u field %s: bad reference tag", oi, fname);
    }
    memcpy(dst, &p, sizeof p);
    return 0;
}

/* Decodes pointer word v into dst, a field of kind PTR or FNPTR; the
 * common case, a data pointer into an object of the image, inline, with
 * the same checks as s_unref_slow (an offset of 0 is inside any object;
 * nalloc <= nobj). */
static inline int s_unref(s_rst *r, uint64_t v, uint32_t kind, void *dst, uint32_t oi,
                          const char *fname)
{
    uint64_t id = (v >> 32) & S_ID_MAX, off = v & 0xFFFFFFFFull;
    if (LEV_LIKELY(v >> 62 == S_TAG_OBJ && kind == LEV_K_PTR && id < r->nalloc &&
                   (off == 0 || off <= r->size[id]))) {
        char *p = r->addr[id] + off;
        memcpy(dst, &p, sizeof p);
        return 0;
    }
    return s_unref_slow(r, v, kind, dst, oi, fname);
}

/* The stream of a scalar kind (LEV_K_B1..LEV_K_B8). */
static inline s_rd *s_rd_of(s_rst *r, uint32_t kind) { return &r->s[kind - LEV_K_B1]; }

/* One past the highest object id that the n words at q may reference
 * (every word with an object tag counts, scalars included: at worst some
 * objects are allocated earlier than needed). */
static inline uint64_t s_ref_end(const unsigned char *q, size_t n)
{
    uint64_t end = 0;
    for (size_t j = 0; j < n; j++) {
        uint64_t v;
        memcpy(&v, q + j * 8, 8);
        uint64_t id1 = ((v >> 32) & S_ID_MAX) + 1;
        if (v >> 62 == S_TAG_OBJ && id1 > end)
            end = id1;
    }
    return end;
}

/* Allocates object oi and every object its 8-byte words may reference,
 * and some ahead, so that decoding it never allocates midway. */
static inline int s_alloc_for(s_rst *r, uint32_t oi, const rt_type *t, uint32_t nelem, bool bulk)
{
    uint64_t end = (uint64_t)oi + 1;
    if (!bulk && !t->dense && t->items[3]) {
        uint64_t e = s_ref_end(r->s[3].p + r->s[3].pos * 8, (size_t)t->items[3] * nelem);
        if (e > end)
            end = e;
    }
    return end <= r->nalloc ? 0 : s_alloc_upto(r, end - 1 + S_AHEAD);
}

static int s_decode_obj(s_rst *r, uint32_t oi, const rt_type *t, uint32_t nelem)
{
    char *addr = r->addr[oi];
    if (t->dense) {
        S_TAKE(s_rd_of(r, t->dense_kind), addr, (size_t)t->runs[0].count * nelem);
        return 0;
    }
    /* Local cursors: stores into the object could alias the stream
     * structs. s_validate_meta has checked that the streams hold exactly
     * what the objects consume. */
    const unsigned char *q[4];
    for (int k = 0; k < 4; k++)
        q[k] = t->items[k] ? r->s[k].p + (r->s[k].pos << k) : NULL;
    for (uint32_t e = 0; e < nelem; e++) {
        char *eb = addr + (size_t)e * t->size;
        for (uint32_t k = 0; k < t->nruns; k++) {
            const rt_run *run = &t->runs[k];
            char *p = eb + run->offset;
            if (run->kind <= LEV_K_B8) {
                uint32_t si = run->kind - LEV_K_B1, w = 1u << si;
                if (run->stride == w)
                    s_copy(p, q[si], (size_t)run->count * w);
                else
                    for (uint32_t j = 0; j < run->count; j++)
                        s_copy(p + (size_t)j * run->stride, q[si] + (size_t)j * w, w);
                q[si] += (size_t)run->count * w;
                continue;
            }
            for (uint32_t j = 0; j < run->count; j++) {
                uint64_t v;
                memcpy(&v, q[3], 8);
                q[3] += 8;
                int rc = s_unref(r, v, run->kind, p + (size_t)j * run->stride, oi, run->name);
                if (rc)
                    return rc;
            }
        }
    }
    for (int k = 0; k < 4; k++)
        if (t->items[k])
            r->s[k].pos = (size_t)(q[k] - r->s[k].p) >> k;
    return 0;
}

/* Loads the stream part at *off: read in place when `in_place` and the
 * part is a plain array of this host (its items are then only ever read
 * with memcpy), else unpacked into a malloc'd copy. */
static int s_load_stream(s_rst *r, s_rd *rd, uint32_t kind, size_t *off, int li, bool in_place,
                         const char *what)
{
    uint64_t n = r->h.len[li], sz = r->h.len[li + 1];
    rd->w = kind == LEV_K_B4 ? 4 : kind == LEV_K_B8 ? 8 : kind == LEV_K_B2 ? 2 : 1;
    rd->n = 0;
    rd->pos = 0;
    rd->own = false;
    if (n == 0) {
        if (sz)
            return rt_err(LEV_EIMAGE, "%s: empty stream with a size", what);
        return 0;
    }
    if (n > INT32_MAX || sz > r->len - *off || n * rd->w > sz)
        return rt_err(LEV_EIMAGE, "%s: length %llu does not fit the image", what,
                      (unsigned long long)n);
    bool direct = s_direct_match(r->img + *off, sz, kind, n);
    if (direct && in_place) {
        rd->p = r->img + *off + S_PRE;
        rd->n = n;
        *off += sz;
        return 0;
    }
    void *buf = malloc(n * rd->w);
    if (!buf)
        return rt_err(LEV_ENOMEM, "out of memory in the image codec");
    int rc = 0;
    if (direct)
        memcpy(buf, r->img + *off + S_PRE, n * rd->w);
    else
        rc = s_unpack_arr(r->img + *off, sz, kind, buf, n, what);
    if (rc) {
        free(buf);
        return rc;
    }
    rd->p = buf;
    rd->own = true;
    rd->n = n;
    *off += sz;
    return 0;
}

static int s_restore_guarded(s_rst *r)
{
    int rc = s_read_header(r->img, r->len, &r->h, &r->hdr_size);
    if (rc)
        return rc;
    if (r->h.module_hash != r->m->hash)
        return rt_err(LEV_EMODULE,
                      "image was taken with task module %016llx, this process has %s (%016llx)",
                      (unsigned long long)r->h.module_hash, r->m->desc->name,
                      (unsigned long long)r->m->hash);
    if (r->h.nframes == 0 || r->h.nframes > r->h.nobj || r->h.nobj > S_ID_MAX)
        return rt_err(LEV_EIMAGE, "image has %u frames in %u objects", r->h.nframes, r->h.nobj);
    if (r->h.len[L_META_N] % S_META_WORDS)
        return rt_err(LEV_EIMAGE, "object table length is not a whole number of groups");
    size_t off = r->hdr_size;
    s_rd meta = {0}, bsz = {0};
    rc = s_load_stream(r, &meta, LEV_K_B4, &off, L_META_N, false, "object table");
    r->meta = (uint32_t *)meta.p;
    r->ngroups = meta.n / S_META_WORDS;
    if (rc)
        return rc;
    rc = s_load_stream(r, &bsz, LEV_K_B4, &off, L_BSZ_N, false, "bulk size table");
    r->bsz = (uint32_t *)bsz.p;
    r->nbsz = bsz.n;
    if (rc)
        return rc;
    if ((rc = s_load_stream(r, &r->s[0], LEV_K_B1, &off, L_S1_N, true, "1-byte stream")) ||
        (rc = s_load_stream(r, &r->s[1], LEV_K_B2, &off, L_S2_N, true, "2-byte stream")) ||
        (rc = s_load_stream(r, &r->s[2], LEV_K_B4, &off, L_S4_N, true, "4-byte stream")) ||
        (rc = s_load_stream(r, &r->s[3], LEV_K_B8, &off, L_S8_N, true, "8-byte stream")))
        return rc;
    r->bulk_off = off;
    uint64_t bulk_total = 0;
    for (size_t i = 0; i < r->nbsz; i++)
        bulk_total += r->bsz[i];
    if (bulk_total != r->len - off)
        return rt_err(LEV_EIMAGE, "bulk images take %llu bytes, %zu remain in the image",
                      (unsigned long long)bulk_total, r->len - off);
    uint64_t listed = 0;
    for (size_t g = 0; g < r->ngroups; g++)
        listed += r->meta[g * S_META_WORDS + 3];
    if (listed != r->h.nobj)
        return rt_err(LEV_EIMAGE, "object table lists %llu objects, the header says %u",
                      (unsigned long long)listed, r->h.nobj);
    r->size = malloc((size_t)r->h.nobj * sizeof *r->size);
    r->addr = GC_malloc_uncollectable((size_t)r->h.nobj * sizeof *r->addr);
    if (!r->size || !r->addr)
        return rt_err(LEV_ENOMEM, "out of memory in the image codec");
    memset(r->addr, 0, (size_t)r->h.nobj * sizeof *r->addr);
    if ((rc = s_validate_meta(r)))
        return rc;
    /* Allocate: frames contiguously in one chunk, then the rest. */
    size_t cap = r->frames_bytes < 256 ? 256 : r->frames_bytes;
    r->chunk = rt_arena_chunk_new(cap);
    if (!r->chunk)
        return rt_err(LEV_ENOMEM, "out of memory in the image codec");
    r->fp = r->chunk->data;
    /* Objects are allocated as decoding reaches them (s_alloc_for), so
     * that each is written while still in cache. Nothing allocated here
     * can be garbage before the frames are installed: a collection now
     * would only re-mark the heap, so collections stay off until every
     * object is decoded (s_restore turns them back on after an error),
     * once s_hold_begin has collected if one is due and made room.
     * They come back on the first allocation failure, which is retried. */
    s_hold_begin(r->gc_need);
    r->gc_off = true;
    /* Fill, in object order, as the streams were written. */
    uint32_t i = 0;
    size_t b = 0;
    for (size_t g = 0; g < r->ngroups; g++) {
        const uint32_t *w = r->meta + g * S_META_WORDS;
        uint32_t nelem;
        const rt_type *t = s_group_type(r, w, &nelem);
        for (uint32_t k = 0; k < w[3]; k++, i++) {
            r->nfilled = i;
            if ((rc = s_alloc_for(r, i, t, nelem, w[0] >> 8 & S_F_BULK)))
                return rc;
            if (w[0] >> 8 & S_F_BULK) {
                uint32_t width = rt_kind_width(t->dense_kind);
                if ((rc = s_unpack_arr(r->img + off, r->bsz[b], t->dense_kind, r->addr[i],
                                       r->size[i] / width, "bulk object")))
                    return rc;
                off += r->bsz[b++];
            } else if ((rc = s_decode_obj(r, i, t, nelem))) {
                return rc;
            }
        }
    }
    r->nfilled = i;
    if (r->gc_off) {
        s_hold_end();
        r->gc_off = false;
    }
    for (size_t g = 0; g < r->h.nframes; g++) {
        const uint32_t *w = r->meta + g * S_META_WORDS;
        lev_frame *f = (lev_frame *)r->addr[g];
        f->fn = w[1];
        f->pc = w[2];
    }
    return 0;
}

/* Decodes an image for module m; on success r->chunk holds the frames. */
static int s_restore(const lev_module *m, const uint8_t *img, size_t len, s_rst *r)
{
    memset(r, 0, sizeof *r);
    r->m = m;
    r->img = img;
    r->len = len;
    rt_init();
    int rc;
    S_GUARDED(rc, s_restore_guarded(r));
    if (r->gc_off) {
        /* An error (or tpl's fatal hook) left collections off. */
        s_clear_pending(r);
        s_hold_end();
        r->gc_off = false;
    }
    return rc;
}

/* Hands the decoded frames to the VT (its arena adopts the chunk). */
static void s_install(rt_vt *vt, s_rst *r)
{
    rt_vt_adopt_frames(vt, r->chunk, r->frames_bytes, r->h.epoch);
    r->chunk = NULL;
}

int rt_restore_into(rt_vt *vt, const uint8_t *img, size_t len)
{
    if (!vt || !img)
        return rt_err(LEV_EINVAL, "rt_restore_into: NULL argument");
    s_rst r;
    int rc = s_restore(vt->mod, img, len, &r);
    if (rc == 0 && r.h.vt_id != vt->id)
        rc = rt_err(LEV_EIMAGE, "image belongs to VT %llu, not %llu",
                    (unsigned long long)r.h.vt_id, (unsigned long long)vt->id);
    if (rc == 0)
        s_install(vt, &r);
    s_rst_free(&r, rc != 0);
    return rc;
}

int rt_restore(const lev_module *m, const uint8_t *img, size_t len, rt_vt **out)
{
    if (!m || !img || !out)
        return rt_err(LEV_EINVAL, "rt_restore: NULL argument");
    s_rst r;
    int rc = s_restore(m, img, len, &r);
    rt_vt *vt = NULL;
    if (rc == 0) {
        vt = rt_vt_create(m, r.h.vt_id, RT_VT_RUNNABLE);
        if (!vt)
            rc = rt_err(LEV_ENOMEM, "out of memory allocating the VT");
    }
    if (rc == 0) {
        s_install(vt, &r);
        *out = vt;
    }
    s_rst_free(&r, rc != 0);
    return rc;
}
