/* image_restore.c - restore of a VT from a checkpoint image: the streams
 * are loaded (in place when they are plain arrays of this host), the
 * object table is validated against them before anything is allocated,
 * then objects are allocated just ahead of decoding (frames in one chunk
 * that the VT's arena adopts, small heap objects in slabs or batches) with
 * collections held off, and pointer words are turned back into addresses
 * (image_format.c has the layout).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define GC_THREADS
#include <gc/gc.h>

#include "arena.h"
#include "heap.h"
#include "heap_private.h"
#include "image.h"
#include "image_private.h"
#include "module.h"
#include "rt.h"
#include "streams.h"
#include "vec.h"
#include "vt.h"

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
    bool own; /* p is malloc'd */
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
    rt_img_header h;
    size_t hdr_size;
    const uint8_t *img;
    size_t len;
    uint32_t *meta; /* groups of IMG_META_WORDS words */
    size_t ngroups;
    uint32_t *bsz; /* image size of each bulk object */
    size_t nbsz;
    s_rd s[4];             /* scalars of 1, 2, 4, 8 bytes; pointers in s[3] */
    char **addr;           /* object id -> address (GC-visible) */
    uint32_t *size;        /* object id -> bytes (at most UINT32_MAX, checked) */
    rt_chunk *chunk;       /* the new frame chunk */
    size_t bulk_off;       /* where the bulk images begin */
    uint64_t frames_bytes; /* chunk room the frames need, gaps included */
    /* Allocation runs just ahead of decoding: objects [0, nalloc) have
     * addresses, [nfilled, nalloc) are not decoded yet. */
    uint32_t nalloc, nfilled;
    size_t ag;   /* meta group of object nalloc */
    uint32_t ak; /* its index within that group */
    char *fp;    /* top of the frames in the chunk (NULL: none yet) */
    s_batch batch;
    bool gc_off;      /* collections held off by the restore (s_hold_begin) */
    uint64_t gc_need; /* bytes the heap objects take from the collector */
    /* Pointers to streams: where each goes and the id of its record,
     * filled in once every object is decoded (s_revive_streams). */
    struct s_sfix {
        void *dst;
        uint32_t id;
    } * sfix;
    size_t nsfix, capsfix;
    FILE **sopen; /* the streams s_revive_streams opened, nsopen of them */
    size_t nsopen;
} s_rst;

static void s_rst_free(s_rst *r, bool free_objects)
{
    if (free_objects && r->addr && r->meta) {
        uint32_t i = 0;
        for (size_t g = 0; g < r->ngroups; g++) {
            const uint32_t *w = r->meta + g * IMG_META_WORDS;
            for (uint32_t k = 0; k < w[3] && i < r->h.nobj; k++, i++)
                if ((w[0] & 0xFF) == IMG_OBJ_HEAP && r->addr[i])
                    rt_heap_free_restored((rt_objhdr *)(r->addr[i] - sizeof(rt_objhdr)));
        }
    }
    if (free_objects && r->chunk) {
        rt_arena_chunk_free(r->chunk);
        r->chunk = NULL;
    }
    for (size_t i = 0; free_objects && i < r->nsopen; i++)
        rt_stream_drop(r->sopen[i]); /* the restore failed after opening them */
    free(r->sopen);
    free(r->sfix);
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
    if (kind == IMG_OBJ_FRAME) {
        *nelem = 1;
        return &r->m->types[d->fns[w[1]].frame_type];
    }
    if (kind == IMG_OBJ_STATIC) {
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
        const uint32_t *w = r->meta + g * IMG_META_WORDS;
        uint32_t kind = w[0] & 0xFF, flags = w[0] >> 8, rep = w[3];
        if (flags & ~(uint32_t)IMG_F_BULK)
            return rt_err(LEV_EIMAGE, "object group %zu has unknown flags", g);
        if (rep == 0 || rep > r->h.nobj - nobj)
            return rt_err(LEV_EIMAGE, "object group %zu repeats %u times past the object count", g,
                          rep);
        if ((nobj < r->h.nframes) != (kind == IMG_OBJ_FRAME) || (kind == IMG_OBJ_FRAME && rep != 1))
            return rt_err(LEV_EIMAGE, "object %llu: frames must come first, one per group",
                          (unsigned long long)nobj);
        if (kind == IMG_OBJ_FRAME) {
            if (w[1] >= d->nfns || !d->fns[w[1]].frame_type)
                return rt_err(LEV_EIMAGE, "frame %llu names unknown function %u",
                              (unsigned long long)nobj, w[1]);
            if (nobj == 0 && !d->fns[w[1]].entry)
                return rt_err(LEV_EIMAGE, "bottom frame's function %s is not an entry",
                              d->fns[w[1]].name);
        } else if (kind == IMG_OBJ_STATIC) {
            if (rep != 1 || w[1] >= d->nstatics || !(d->statics[w[1]].flags & LEV_S_TRAVELS))
                return rt_err(LEV_EIMAGE, "object group %zu names static %u that does not travel",
                              g, w[1]);
            for (size_t j = 0; j < g; j++)
                if ((r->meta[j * IMG_META_WORDS] & 0xFF) == IMG_OBJ_STATIC &&
                    r->meta[j * IMG_META_WORDS + 1] == w[1])
                    return rt_err(LEV_EIMAGE, "static %u appears twice", w[1]);
        } else if (kind == IMG_OBJ_HEAP) {
            if (!rt_module_type(r->m, w[1]))
                return rt_err(LEV_EIMAGE, "heap object group %zu has unknown type %u", g, w[1]);
        } else {
            return rt_err(LEV_EIMAGE, "object group %zu has unknown kind %u", g, kind);
        }
        uint32_t nelem;
        const rt_type *t = s_group_type(r, w, &nelem);
        uint64_t bytes = t->tail ? nelem : (uint64_t)t->size * nelem;
        if (t->tail && nelem < t->size)
            return rt_err(LEV_EIMAGE, "object group %zu: %u bytes of a type of %u", g, nelem,
                          t->size);
        if (bytes > UINT32_MAX)
            return rt_err(LEV_EIMAGE, "object group %zu: objects of %llu bytes", g,
                          (unsigned long long)bytes);
        for (uint32_t k = 0; k < rep; k++)
            r->size[nobj + k] = (uint32_t)bytes;
        if (kind == IMG_OBJ_FRAME) /* aligned as this process's module says */
            r->frames_bytes += rt_arena_room(bytes, rt_frame_align(r->m, w[1]));
        if (kind == IMG_OBJ_HEAP)
            r->gc_need += s_heap_need(bytes, rep);
        nobj += rep;
        if (flags & IMG_F_BULK) {
            if (!t->dense)
                return rt_err(LEV_EIMAGE, "object group %zu is bulk but its type is not dense", g);
            nbulk += rep;
            continue;
        }
        uint64_t items[4];
        rt_type_items(r->m, t, nelem, items);
        for (int k = 0; k < 4; k++)
            need[LEV_K_B1 + k] += items[k] * rep;
    }
    if (nobj != r->h.nobj)
        return rt_err(LEV_EIMAGE, "object table lists %llu objects, the header says %u",
                      (unsigned long long)nobj, r->h.nobj);
    if (nbulk != r->nbsz)
        return rt_err(LEV_EIMAGE, "%llu bulk objects but %zu bulk images",
                      (unsigned long long)nbulk, r->nbsz);
    if (need[LEV_K_B1] != r->s[0].n || need[LEV_K_B2] != r->s[1].n || need[LEV_K_B4] != r->s[2].n ||
        need[LEV_K_B8] != r->s[3].n)
        return rt_err(LEV_EIMAGE, "object table does not match the data streams");
    /* Each bulk object's image must hold its elements before anything is
     * allocated for it. */
    size_t off = r->bulk_off, b = 0;
    uint64_t i = 0;
    for (size_t g = 0; g < r->ngroups; g++) {
        const uint32_t *w = r->meta + g * IMG_META_WORDS;
        uint32_t nelem;
        const rt_type *t = s_group_type(r, w, &nelem);
        for (uint32_t k = 0; k < w[3]; k++, i++) {
            if (!(w[0] >> 8 & IMG_F_BULK))
                continue;
            int rc = rt_img_check_fmt(r->img + off, r->bsz[b], rt_img_arr_fmt(t->dense_kind),
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
        const uint32_t *w = r->meta + g * IMG_META_WORDS;
        uint32_t end = i + w[3];
        if ((w[0] & 0xFF) == IMG_OBJ_HEAP)
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
        const uint32_t *w = r->meta + r->ag * IMG_META_WORDS;
        if (r->ak == w[3]) {
            r->ag++;
            r->ak = 0;
            continue;
        }
        uint32_t kind = w[0] & 0xFF, n = w[3] - r->ak;
        if (n > end - r->nalloc)
            n = (uint32_t)(end - r->nalloc);
        if (kind == IMG_OBJ_FRAME) {
            uint32_t i = r->nalloc;
            /* room for it was counted (s_validate_meta) */
            char *p = rt_arena_chunk_put(r->chunk, &r->fp, r->size[i], rt_frame_align(r->m, w[1]));
            if (!p)
                return rt_err(LEV_EIMAGE, "frame %u does not fit in its chunk", i);
            r->addr[i] = p;
            memset(p, 0, LEV_FRAME_SIZE(r->size[i]));
            ((lev_frame *)p)->fn = w[1];
            n = 1;
        } else if (kind == IMG_OBJ_STATIC) {
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
            size_t bytes = sizeof(rt_objhdr) + rt_type_bytes(t, w[2]);
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
        rt_img_copy((dst), (rd)->p + (rd)->pos * (rd)->w, (size_t)(items) * (rd)->w);              \
        (rd)->pos += (items);                                                                      \
    } while (0)

static __attribute__((noinline)) int s_unref_slow(s_rst *r, uint64_t v, uint32_t kind, void *dst,
                                                  uint32_t oi, const char *fname)
{
    if (v == 0) {
        memset(dst, 0, kind == LEV_K_PTR ? sizeof(void *) : sizeof(void (*)(void)));
        return 0;
    }
    uint64_t tag = v >> 62, id = (v >> 32) & IMG_ID_MAX, off = v & 0xFFFFFFFFull;
    const lev_module_desc *d = r->m->desc;
    if (kind == LEV_K_FNPTR || tag == IMG_TAG_FN) {
        if (tag != IMG_TAG_FN || off || id >= d->nfns || !d->fns[id].native)
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
    uint64_t low = v & 0xFFFFFFFFull;
    if (kind == LEV_K_PTR && (v & ~0xFFFFFFFFull) == IMG_SENTINEL_LOW && low &&
        low <= IMG_SENTINEL_MAX) {
        p = (char *)(uintptr_t)low;
    } else if (kind == LEV_K_PTR && (v & ~0xFFFFFFFFull) == IMG_SENTINEL_NEG && low &&
               low <= IMG_SENTINEL_MAX) {
        p = (char *)-(uintptr_t)low;
    } else if ((v & ~0xFFFFFFFFull) == IMG_STREAM && kind == LEV_K_PTR) {
        if (low >= r->h.nobj)
            return rt_err(LEV_EIMAGE, "object %u field %s: stream record %llu outside the image",
                          oi, fname, (unsigned long long)low);
        if (RT_VEC_RESERVE(r->sfix, r->capsfix, r->nsfix, 1))
            return rt_err(LEV_ENOMEM, "out of memory in the image codec");
        r->sfix[r->nsfix++] = (struct s_sfix){dst, (uint32_t)low};
        p = NULL; /* until s_revive_streams */
    } else if (v == IMG_DANGLING && kind == LEV_K_PTR) {
        /* Never dereferenced by a correct program: any distinct non-NULL
         * address will do. */
        p = (char *)&rt_img_dangling;
    } else if (tag == IMG_TAG_OBJ) {
        if (id >= r->h.nobj || off > r->size[id])
            return rt_err(LEV_EIMAGE, "object %u field %s: reference outside object %llu", oi,
                          fname, (unsigned long long)id);
        if (id >= r->nalloc) /* s_ref_end covered every word: cannot happen */
            return rt_err(LEV_EIMAGE, "object %u field %s: object %llu not allocated", oi, fname,
                          (unsigned long long)id);
        p = r->addr[id] + off;
    } else if (tag == IMG_TAG_SYM) {
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
    uint64_t id = (v >> 32) & IMG_ID_MAX, off = v & 0xFFFFFFFFull;
    if (LEV_LIKELY(v >> 62 == IMG_TAG_OBJ && kind == LEV_K_PTR && id < r->nalloc &&
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
        uint64_t id1 = ((v >> 32) & IMG_ID_MAX) + 1;
        if (v >> 62 == IMG_TAG_OBJ && id1 > end)
            end = id1;
    }
    return end;
}

/* Allocates object oi and every object its 8-byte words may reference,
 * and some ahead, so that decoding it never allocates midway. */
static inline int s_alloc_for(s_rst *r, uint32_t oi, const rt_type *t, uint32_t nelem, bool bulk)
{
    uint64_t end = (uint64_t)oi + 1;
    uint64_t items[4] = {0, 0, 0, 0};
    if (!bulk && !t->dense)
        rt_type_items(r->m, t, nelem, items);
    if (items[3]) {
        uint64_t e = s_ref_end(r->s[3].p + r->s[3].pos * 8, (size_t)items[3]);
        if (e > end)
            end = e;
    }
    return end <= r->nalloc ? 0 : s_alloc_upto(r, end - 1 + S_AHEAD);
}

/* Decodes a tagged union (run `run`) into p from its flag byte and its
 * 8-byte item (s_encode_tagged). */
static int s_decode_tagged(s_rst *r, char *p, const rt_run *run, const unsigned char *flag,
                           const unsigned char *item, uint32_t oi)
{
    uint64_t v;
    memcpy(&v, item, 8);
    if (*flag == 0) {
        memcpy(p, &v, run->stride);
        return 0;
    }
    if (*flag > 2 || run->stride != sizeof(void *))
        return rt_err(LEV_EIMAGE, "object %u field %s: bad tagged union flag %u", oi, run->name,
                      *flag);
    return s_unref(r, v, *flag == 1 ? LEV_K_PTR : LEV_K_FNPTR, p, oi, run->name);
}

static int s_decode_at(s_rst *r, uint32_t oi, char *addr, const rt_type *t, uint32_t nelem);

/* Decodes object oi of `bytes` bytes of type t with a trailing array (see
 * s_encode_tail). */
static int s_decode_tail(s_rst *r, uint32_t oi, const rt_type *t, uint32_t bytes)
{
    char *addr = r->addr[oi];
    uint32_t roff, rem, n = rt_tail_elems(r->m, t, bytes, &roff, &rem);
    rt_type head = *t;
    head.tail = false;
    int rc = s_decode_at(r, oi, addr, &head, 1);
    if (!rc && n)
        rc = s_decode_at(r, oi, addr + t->tail_off, &r->m->types[t->tail_type], n);
    if (!rc && rem)
        S_TAKE(s_rd_of(r, LEV_K_B1), addr + roff, rem);
    return rc;
}

static int s_decode_obj(s_rst *r, uint32_t oi, const rt_type *t, uint32_t nelem)
{
    if (LEV_UNLIKELY(t->tail))
        return s_decode_tail(r, oi, t, nelem);
    return s_decode_at(r, oi, r->addr[oi], t, nelem);
}

/* Decodes nelem elements of t at addr, in object oi. */
static int s_decode_at(s_rst *r, uint32_t oi, char *addr, const rt_type *t, uint32_t nelem)
{
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
                    rt_img_copy(p, q[si], (size_t)run->count * w);
                else
                    for (uint32_t j = 0; j < run->count; j++)
                        rt_img_copy(p + (size_t)j * run->stride, q[si] + (size_t)j * w, w);
                q[si] += (size_t)run->count * w;
                continue;
            }
            if (LEV_UNLIKELY(run->kind == LEV_K_TAGGED)) {
                int rc = s_decode_tagged(r, p, run, q[0]++, q[3], oi);
                q[3] += 8;
                if (rc)
                    return rc;
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
    bool direct = rt_img_direct_match(r->img + *off, sz, kind, n);
    if (direct && in_place) {
        rd->p = r->img + *off + IMG_PRE;
        rd->n = n;
        *off += sz;
        return 0;
    }
    void *buf = malloc(n * rd->w);
    if (!buf)
        return rt_err(LEV_ENOMEM, "out of memory in the image codec");
    int rc = 0;
    if (direct)
        memcpy(buf, r->img + *off + IMG_PRE, n * rd->w);
    else
        rc = rt_img_unpack_arr(r->img + *off, sz, kind, buf, n, what);
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

/* Reads the header and loads the object table, the bulk size table and
 * the four streams, checking their lengths against the header and the
 * image; r->bulk_off is then where the bulk images begin. */
static int s_load_parts(s_rst *r)
{
    int rc = rt_img_read_header(r->img, r->len, &r->h, &r->hdr_size);
    if (rc)
        return rc;
    if (r->h.module_hash != r->m->hash)
        return rt_err(
            LEV_EMODULE, "image was taken with task module %016llx, this process has %s (%016llx)",
            (unsigned long long)r->h.module_hash, r->m->desc->name, (unsigned long long)r->m->hash);
    if (r->h.nframes == 0 || r->h.nframes > r->h.nobj || r->h.nobj > IMG_ID_MAX)
        return rt_err(LEV_EIMAGE, "image has %u frames in %u objects", r->h.nframes, r->h.nobj);
    if (r->h.len[IMG_L_META_N] % IMG_META_WORDS)
        return rt_err(LEV_EIMAGE, "object table length is not a whole number of groups");
    size_t off = r->hdr_size;
    s_rd meta = {0}, bsz = {0};
    rc = s_load_stream(r, &meta, LEV_K_B4, &off, IMG_L_META_N, false, "object table");
    r->meta = (uint32_t *)meta.p;
    r->ngroups = meta.n / IMG_META_WORDS;
    if (rc)
        return rc;
    rc = s_load_stream(r, &bsz, LEV_K_B4, &off, IMG_L_BSZ_N, false, "bulk size table");
    r->bsz = (uint32_t *)bsz.p;
    r->nbsz = bsz.n;
    if (rc)
        return rc;
    if ((rc = s_load_stream(r, &r->s[0], LEV_K_B1, &off, IMG_L_S1_N, true, "1-byte stream")) ||
        (rc = s_load_stream(r, &r->s[1], LEV_K_B2, &off, IMG_L_S2_N, true, "2-byte stream")) ||
        (rc = s_load_stream(r, &r->s[2], LEV_K_B4, &off, IMG_L_S4_N, true, "4-byte stream")) ||
        (rc = s_load_stream(r, &r->s[3], LEV_K_B8, &off, IMG_L_S8_N, true, "8-byte stream")))
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
        listed += r->meta[g * IMG_META_WORDS + 3];
    if (listed != r->h.nobj)
        return rt_err(LEV_EIMAGE, "object table lists %llu objects, the header says %u",
                      (unsigned long long)listed, r->h.nobj);
    return 0;
}

static int s_restore_guarded(s_rst *r)
{
    int rc = s_load_parts(r);
    if (rc)
        return rc;
    size_t off = r->bulk_off;
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
    r->fp = NULL; /* no frame yet */
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
        const uint32_t *w = r->meta + g * IMG_META_WORDS;
        uint32_t nelem;
        const rt_type *t = s_group_type(r, w, &nelem);
        for (uint32_t k = 0; k < w[3]; k++, i++) {
            r->nfilled = i;
            if ((rc = s_alloc_for(r, i, t, nelem, w[0] >> 8 & IMG_F_BULK)))
                return rc;
            if (w[0] >> 8 & IMG_F_BULK) {
                uint32_t width = rt_kind_width(t->dense_kind);
                if ((rc = rt_img_unpack_arr(r->img + off, r->bsz[b], t->dense_kind, r->addr[i],
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
        const uint32_t *w = r->meta + g * IMG_META_WORDS;
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
    RT_IMG_GUARDED(rc, s_restore_guarded(r));
    if (r->gc_off) {
        /* An error (or tpl's fatal hook) left collections off. */
        s_clear_pending(r);
        s_hold_end();
        r->gc_off = false;
    }
    return rc;
}

/* Gets back the stream of every pointer to one (rt_stream_revive) for the
 * VT whose key is `key`, once every object, records included, is decoded;
 * the ones it opened are closed again if the restore fails (s_rst_free). */
static int s_revive_streams(s_rst *r, uint64_t key)
{
    if (r->nsfix && !(r->sopen = malloc(r->nsfix * sizeof *r->sopen)))
        return rt_err(LEV_ENOMEM, "out of memory in the image codec");
    for (size_t i = 0; i < r->nsfix; i++) {
        FILE *fp = NULL;
        int opened = 0;
        int rc = rt_stream_revive(r->m, r->addr[r->sfix[i].id], key, &fp, &opened);
        if (rc)
            return rc;
        if (opened)
            r->sopen[r->nsopen++] = fp;
        memcpy(r->sfix[i].dst, &fp, sizeof fp);
    }
    return 0;
}

/* Hands the decoded frames to the VT (its arena adopts the chunk). */
static void s_install(rt_vt *vt, s_rst *r)
{
    rt_vt_adopt_frames(vt, r->chunk, r->fp, r->h.epoch);
    r->chunk = NULL;
}

int rt_restore_into(rt_vt *vt, const uint8_t *img, size_t len)
{
    if (!vt || !img)
        return rt_err(LEV_EINVAL, "rt_restore_into: NULL argument");
    s_rst r;
    int rc = s_restore(vt->mod, img, len, &r);
    if (rc == 0 && r.h.vt_id != vt->id)
        rc = rt_err(LEV_EIMAGE, "image belongs to VT %llu, not %llu", (unsigned long long)r.h.vt_id,
                    (unsigned long long)vt->id);
    if (rc == 0)
        rc = s_revive_streams(&r, vt->key);
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
    if (rc == 0 && !(vt = rt_vt_create(m, &r.h.vt_id, RT_VT_RUNNABLE)))
        rc = rt_err(LEV_ENOMEM, "out of memory allocating the VT");
    if (rc == 0)
        rc = s_revive_streams(&r, vt->key); /* the streams are the new VT's */
    if (rc == 0) {
        s_install(vt, &r);
        *out = vt;
    }
    s_rst_free(&r, rc != 0);
    if (rc)
        rt_vt_destroy(&vt);
    return rc;
}
