/* heap_private.h - the heap's internals that the image codec shares: raw
 * (unzeroed) allocation and slabs for restore, and the cache of heap pages
 * that makes a capture's pointer lookups cheap; and the bins of freed
 * objects (heap_bins.c) that heap.c allocates from and frees to, their
 * fast paths inline.
 *
 * Internal to heap.c, heap_bins.c, alloc_hint.c, image_capture.c and
 * image_restore.c; nothing else includes it. Depends on heap.h.
 */
#ifndef HEAP_PRIVATE_H
#define HEAP_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "heap.h"

/* Small objects are recycled (heap_bins.c) by size class: classes of
 * RT_BIN_GRANULE bytes up to RT_BIN_CLASSES of them. */
#define RT_BIN_GRANULE 16u
#define RT_BIN_CLASSES 128u

/* Size class of a GC object allocated for `bytes` bytes (header
 * included), as the collector rounds it: one byte more, so that a
 * pointer one past the end stays inside (all interior pointers are on). */
LEV_INLINE unsigned rt_bin_class(size_t bytes)
{
    return (unsigned)((bytes + RT_BIN_GRANULE) / RT_BIN_GRANULE);
}

/* Large objects (past the size classes) a thread keeps of each kind. */
#define RT_BIN_LARGE 8u

/* A thread's bins (heap_bins.c): here so that allocation takes from them
 * inline. */
typedef struct rt_bin {
    void **v; /* uncollectable array of binned objects */
    uint32_t n, cap;
} rt_bin;

/* Large objects, each of its own size, taken back by best fit. */
typedef struct rt_bin_large {
    void *o[RT_BIN_LARGE];
    size_t sz[RT_BIN_LARGE];
    uint32_t evict; /* next slot to give up when all are taken */
} rt_bin_large;

typedef struct rt_bins {
    rt_bin bin[2][RT_BIN_CLASSES + 1]; /* [scanned][class] */
    rt_bin_large large[2];             /* [scanned] */
    size_t kept;                       /* bytes of objects binned */
    struct rt_bins *next;              /* in the spare list */
} rt_bins;

/* The calling thread's bins, NULL until its first lev_free. */
extern __thread rt_bins *rt_bins_mine RT_TLS_FAST;

/* A binned object of the class (cls <= RT_BIN_CLASSES), scanned or
 * atomic, with its old header; a scanned one's data is cleared. NULL if
 * the thread's bin is empty. */
LEV_INLINE rt_objhdr *rt_bins_take(bool scanned, unsigned cls)
{
    rt_bins *b = rt_bins_mine;
    if (!b)
        return NULL;
    rt_bin *bn = &b->bin[scanned][cls];
    if (!bn->n)
        return NULL;
    void *o = bn->v[--bn->n];
    bn->v[bn->n] = NULL; /* the array keeps nothing alive */
    b->kept -= (size_t)cls * RT_BIN_GRANULE;
    return o;
}

/* A binned object past the classes, scanned or atomic, of more than
 * `bytes` bytes and not much more; NULL if none fits. */
rt_objhdr *rt_bins_take_large(bool scanned, size_t bytes);

/* Objects with pointers up to this size (header included) are scanned
 * conservatively; larger ones of a type with a GC descriptor are typed
 * (GC_malloc_explicitly_typed: never binned). */
#define RT_HEAP_SCAN_SMALL 512u

LEV_INLINE void rt_obj_set_header(rt_objhdr *h, uint32_t type, size_t count)
{
    h->type = type | (RT_OBJ_MAGIC << 24);
    h->count = (uint32_t)count;
    h->mark = 0;
    h->id = 0;
}

/* rt_heap_alloc_type's fast path, inline: a small object of `count`
 * elements of type t (not one with a trailing array) taken from the
 * thread's bins, its header set; nothing to clear (scanned ones come
 * cleared), so not an atomic one to be zeroed. NULL when it takes more. */
LEV_INLINE rt_objhdr *rt_heap_alloc_binned(const rt_type *t, uint32_t type, size_t count, bool zero)
{
    bool scanned = t->has_ptrs || t->conservative;
    if (LEV_UNLIKELY(t->tail || count > RT_BIN_CLASSES * RT_BIN_GRANULE || (!scanned && zero)))
        return NULL;
    size_t bytes = sizeof(rt_objhdr) + (size_t)t->size * count;
    unsigned cls = rt_bin_class(bytes);
    if (LEV_UNLIKELY(cls > RT_BIN_CLASSES ||
                     (scanned && bytes > RT_HEAP_SCAN_SMALL && count == 1 && t->gc_descr)))
        return NULL;
    rt_objhdr *h = rt_bins_take(scanned, cls);
    if (LEV_LIKELY(h != NULL))
        rt_obj_set_header(h, type, count);
    return h;
}

/* Bytes a thread keeps in its bins at most. */
#define RT_BINS_KEPT_MAX (4u << 20)

/* Bins the GC object `base` (a whole VT object whose header says it is
 * freed) of collector kind `kind` and `sz` bytes (GC_get_kind_and_size)
 * for reuse by this thread; false if it does not fit (of another kind,
 * bins full), and it is then the collector's. */
bool rt_bins_put(void *base, int kind, size_t sz);

/* rt_bins_put's fast path, inline: a small object of a class (kind 0
 * atomic, 1 scanned, as the collector numbers them), a bin with room.
 * A scanned object is cleared: memory comes so from the collector, and a
 * binned object must retain nothing meanwhile. */
LEV_INLINE bool rt_bins_put_fast(void *base, int kind, size_t sz)
{
    rt_bins *b = rt_bins_mine;
    if (LEV_LIKELY(b && (unsigned)kind <= 1u &&
                   sz - RT_BIN_GRANULE < (size_t)RT_BIN_CLASSES * RT_BIN_GRANULE &&
                   sz % RT_BIN_GRANULE == 0 && b->kept + sz <= RT_BINS_KEPT_MAX)) {
        rt_bin *bn = &b->bin[kind][sz / RT_BIN_GRANULE];
        if (LEV_LIKELY(bn->n < bn->cap)) {
            bn->v[bn->n++] = base;
            b->kept += sz;
            if (kind)
                memset((char *)base + sizeof(rt_objhdr), 0, sz - sizeof(rt_objhdr));
            return true;
        }
    }
    return rt_bins_put(base, kind, sz);
}

/* Like rt_heap_alloc_obj; data is left unzeroed when !zero and the
 * type holds no pointers (restore overwrites it all). */
rt_objhdr *rt_heap_alloc_raw(const lev_module *m, uint32_t type, size_t count, bool zero);

/* A slab: one GC object holding `n` VT objects of one type and element
 * count, `stride` bytes apart from the end of this header on, each with
 * its own rt_objhdr. Restore allocates small objects this way; a slab is
 * reclaimed once none of its objects is referenced. */
typedef struct rt_slab {
    uint32_t magic; /* RT_SLAB_MAGIC << 24, where an object has its type */
    uint32_t stride;
    uint32_t n;
    uint32_t pad_;
} rt_slab;

#define RT_SLAB_MAGIC 0x5Bu

/* Allocates a slab of n objects of `count` elements of `type`, headers
 * set and data zeroed, and returns the header of the first (the others
 * follow *stride bytes apart). NULL on exhaustion or overflow. */
rt_objhdr *rt_heap_alloc_slab(const lev_module *m, uint32_t type, uint32_t count, uint32_t n,
                              uint32_t *stride);

/* Slab stride of objects of `bytes` data bytes: 0 if they are too large
 * to share a slab. */
uint32_t rt_heap_slab_stride(size_t bytes);

/* Frees a restored object at once (error paths): its slab with the
 * slab's first object, nothing for the slab's other objects. */
void rt_heap_free_restored(rt_objhdr *h);

/* What a lookup learnt about one 4 KiB page of the GC heap: VT objects
 * (or GC objects) of `sz` bytes start at o0 + k*sz up to lim. */
typedef struct rt_heap_page {
    uintptr_t page; /* page address, 0 if the entry is empty */
    uintptr_t o0, lim;
    uintptr_t first; /* first object of a slab (0 for a GC block) */
    uint32_t sz;
    uint32_t recip; /* ceil(2^32 / sz) */
} rt_heap_page;

#define RT_HEAP_CACHE 256u

/* Pages seen by one walk over objects that stay allocated meanwhile
 * (a capture): lookups in a known page need no GC_base. Zero it first. */
typedef struct rt_heap_cache {
    rt_heap_page e[RT_HEAP_CACHE];
} rt_heap_cache;

/* rt_heap_find through the cache; records p's page when p is in a VT
 * object, which must stay allocated while the cache is in use. */
rt_objhdr *rt_heap_find_slow(rt_heap_cache *c, const void *p);

/* The header of the GC object or slab slot that holds p, through the
 * cache: like rt_heap_find but the magic and bounds are the caller's to
 * check, and p may be an object's one-past-end pointer. */
LEV_INLINE rt_objhdr *rt_heap_find_cached(rt_heap_cache *c, const void *p)
{
    uintptr_t a = (uintptr_t)p;
    const rt_heap_page *e = &c->e[(a >> 12) % RT_HEAP_CACHE];
    if (LEV_LIKELY(e->page == (a & ~(uintptr_t)4095) && a >= e->o0)) {
        uintptr_t base = e->o0 + (uintptr_t)(((uint64_t)(a - e->o0) * e->recip) >> 32) * e->sz;
        if (LEV_LIKELY(base + e->sz <= e->lim)) {
            if (!e->first) {
                /* A small slab shares its page with other GC objects. */
                if (LEV_LIKELY((((const rt_slab *)base)->magic >> 24) != RT_SLAB_MAGIC))
                    return (rt_objhdr *)base;
                return rt_heap_find_slow(c, p);
            }
            if (a >= base + sizeof(rt_objhdr))
                return (rt_objhdr *)base;
            if (base > e->first)
                return (rt_objhdr *)(base - e->sz); /* one past the previous one's end */
        }
    }
    return rt_heap_find_slow(c, p);
}

#endif
