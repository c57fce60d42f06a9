/* heap.c - the VT heap: typed allocation on Boehm GC with a small header
 * in front of every object, so capture can find any object from an
 * interior pointer (GC_base) and know its type and requested size.
 * Restore allocates small objects in slabs (one GC object for many VT
 * objects, each with its own header), and lookups during a capture go
 * through a cache of the heap pages already seen. Objects the program
 * frees are reused through the thread's bins (heap_bins.c).
 */
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define GC_THREADS
#include <gc/gc.h>
#include <gc/gc_mark.h>
#include <gc/gc_typed.h>

#include "heap.h"
#include "heap_private.h"
#include "module.h"
#include "rt.h"

#define S_MAX_BYTES ((size_t)UINT32_MAX)

size_t rt_heap_obj_size(const lev_module *m, const rt_objhdr *h)
{
    if (RT_OBJ_TYPE(h) == LEV_T_UNTYPED)
        return h->count; /* bytes */
    const rt_type *t = rt_module_type(m, RT_OBJ_TYPE(h));
    return t ? rt_type_bytes(t, h->count) : 0;
}

/* A GC object of `bytes` bytes for a VT object: one the thread freed and
 * binned (heap_bins.c), or from the collector. Small objects come from
 * its thread-local free lists (GC_malloc and GC_malloc_atomic take no
 * lock); those with pointers are scanned conservatively, which can only
 * retain more. Larger ones with pointers are typed by their descriptor
 * when they have one (`descr`), so that their numbers are not taken for
 * pointers. A scanned object's memory is cleared; an atomic one's is
 * not. */
static rt_objhdr *s_gc_alloc(size_t bytes, bool scanned, uintptr_t descr)
{
    if (scanned && descr && bytes > RT_HEAP_SCAN_SMALL)
        return GC_malloc_explicitly_typed(bytes, (GC_descr)descr);
    unsigned cls = rt_bin_class(bytes);
    rt_objhdr *h = LEV_LIKELY(cls <= RT_BIN_CLASSES) ? rt_bins_take(scanned, cls)
                                                     : rt_bins_take_large(scanned, bytes);
    if (h)
        return h;
    return scanned ? GC_malloc(bytes) : GC_malloc_atomic(bytes);
}

/* rt_heap_alloc_type past its fast path. */
static __attribute__((noinline)) rt_objhdr *s_alloc_type_slow(const rt_type *t, uint32_t type,
                                                              size_t count, bool zero)
{
    if (t->tail && count < t->size)
        count = t->size; /* a trailing array: count is bytes, the head at least */
    /* t->size < 2^32 and count <= 2^32: the product does not wrap. */
    if (count > UINT32_MAX || (!t->tail && (uint64_t)t->size * count > S_MAX_BYTES))
        return NULL;
    size_t bytes = sizeof(rt_objhdr) + rt_type_bytes(t, count);
    bool scanned = t->has_ptrs || t->conservative;
    rt_objhdr *h = s_gc_alloc(bytes, scanned, count == 1 && !t->tail ? t->gc_descr : 0);
    if (!h)
        return NULL;
    if (!scanned && zero)
        memset(rt_obj_data(h), 0, bytes - sizeof(rt_objhdr));
    rt_obj_set_header(h, type, count);
    return h;
}

rt_objhdr *rt_heap_alloc_type(const rt_type *t, uint32_t type, size_t count, bool zero)
{
    rt_objhdr *h = rt_heap_alloc_binned(t, type, count, zero);
    return LEV_LIKELY(h != NULL) ? h : s_alloc_type_slow(t, type, count, zero);
}

rt_objhdr *rt_heap_alloc_raw(const lev_module *m, uint32_t type, size_t count, bool zero)
{
    const rt_type *t = m ? rt_module_type(m, type) : NULL;
    return t ? rt_heap_alloc_type(t, type, count, zero) : NULL;
}

rt_objhdr *rt_heap_alloc_obj(const lev_module *m, uint32_t type, size_t count)
{
    return rt_heap_alloc_raw(m, type, count, true);
}

rt_objhdr *rt_heap_alloc_untyped(size_t bytes)
{
    if (bytes > S_MAX_BYTES)
        return NULL;
    /* Scanned conservatively: it may hold the only pointer to an object. */
    rt_objhdr *h = s_gc_alloc(sizeof(rt_objhdr) + bytes, true, 0);
    if (!h)
        return NULL;
    rt_obj_set_header(h, LEV_T_UNTYPED, bytes);
    return h;
}

/* ===================================================================
 * Slabs
 * =================================================================== */

/* Largest slab (bytes of objects): few GC allocations per restore, and
 * little memory kept alive by one surviving object. */
#define S_SLAB_BYTES (64u * 1024u)
/* Largest object that goes in a slab (header included). */
#define S_SLAB_OBJ 1024u

/* Whether GC object `base` is a slab (its header checked against the
 * object's size, so that no other GC object passes for one). */
static bool s_is_slab(const void *base)
{
    const rt_slab *s = base;
    if ((s->magic >> 24) != RT_SLAB_MAGIC || s->stride < sizeof(rt_objhdr) ||
        s->stride > S_SLAB_OBJ || s->n == 0 || s->n > S_SLAB_BYTES / s->stride)
        return false;
    return sizeof(rt_slab) + (size_t)s->stride * s->n <= GC_size((void *)base);
}

uint32_t rt_heap_slab_stride(size_t bytes)
{
    size_t stride = (sizeof(rt_objhdr) + bytes + 15) & ~(size_t)15;
    return stride <= S_SLAB_OBJ ? (uint32_t)stride : 0;
}

rt_objhdr *rt_heap_alloc_slab(const lev_module *m, uint32_t type, uint32_t count, uint32_t n,
                              uint32_t *stride)
{
    const rt_type *t = m ? rt_module_type(m, type) : NULL;
    if (!t || n == 0 || (count && !t->tail && t->size > S_SLAB_OBJ / count))
        return NULL;
    uint32_t st = rt_heap_slab_stride(rt_type_bytes(t, count));
    if (!st || n > S_SLAB_BYTES / st)
        return NULL;
    size_t bytes = sizeof(rt_slab) + (size_t)st * n;
    /* Memory from GC_malloc is cleared; GC_malloc_atomic's is not. */
    bool scanned = t->has_ptrs || t->conservative;
    rt_slab *s = scanned ? GC_malloc(bytes) : GC_malloc_atomic(bytes);
    if (!s)
        return NULL;
    if (!scanned)
        memset(s, 0, bytes);
    s->magic = (uint32_t)RT_SLAB_MAGIC << 24;
    s->stride = st;
    s->n = n;
    char *first = (char *)s + sizeof(rt_slab);
    for (uint32_t k = 0; k < n; k++) {
        rt_objhdr *h = (rt_objhdr *)(first + (size_t)k * st);
        h->type = type | (RT_OBJ_MAGIC << 24);
        h->count = count;
    }
    *stride = st;
    return (rt_objhdr *)first;
}

void rt_heap_free_restored(rt_objhdr *h)
{
    void *base = GC_base(h);
    if (base == (void *)h)
        GC_free(h);
    else if (base && s_is_slab(base) && (char *)base + sizeof(rt_slab) == (char *)h)
        GC_free(base);
}

/* The slot of slab `base` that holds p (the previous slot when p is one
 * past its end), or NULL when p is in no slot. */
static rt_objhdr *s_slab_slot(const rt_slab *s, const void *p)
{
    const char *first = (const char *)s + sizeof(rt_slab), *q = p;
    if (q < first)
        return NULL;
    size_t k = (size_t)(q - first) / s->stride;
    if (k > s->n || (k == s->n && q != first + (size_t)k * s->stride))
        return NULL;
    if (k == s->n || (k > 0 && q < first + k * s->stride + sizeof(rt_objhdr)))
        k--;
    return (rt_objhdr *)(first + k * s->stride);
}

/* The header of the GC object or slab slot at GC block `base` holding p. */
static rt_objhdr *s_slot(void *base, const void *p)
{
    return s_is_slab(base) ? s_slab_slot(base, p) : base;
}

/* The header h if it is one of ours and holds p. */
static rt_objhdr *s_ours(void *base, rt_objhdr *h, const void *p)
{
    if (!h || (h->type >> 24) != RT_OBJ_MAGIC)
        return NULL;
    /* The element size is not known here without the module; the data
     * must at least fit in the GC object or slab slot. */
    const char *end = (const char *)base + GC_size(base);
    if ((void *)h != base)
        end = (const char *)h + ((const rt_slab *)base)->stride;
    const char *data = (const char *)h + sizeof(rt_objhdr);
    if ((const char *)p < data || (const char *)p > end)
        return NULL;
    return h;
}

rt_objhdr *rt_heap_find(const void *p)
{
    if (!p)
        return NULL;
    void *base = GC_base((void *)p);
    return base ? s_ours(base, s_slot(base, p), p) : NULL;
}

/* ===================================================================
 * Page cache of lookups
 * =================================================================== */

static pthread_once_t s_layout_once = PTHREAD_ONCE_INIT;
static atomic_bool s_layout_ok;

/* Small GC objects are cached by the 4 KiB page they are in, which
 * assumes that the collector's heap blocks are whole pages, each holding
 * objects of one size from its start (GC_base gives the same answer).
 * Checked once on objects of a size that does not divide 4096: in blocks
 * smaller than a page, some would lie off that grid. */
static void s_layout_probe(void)
{
    enum { N = 256 };
    bool ok = true;
    for (int i = 0; i < N && ok; i++) {
        void *o = GC_malloc_atomic(40);
        if (!o)
            return;
        size_t sz = GC_size(o);
        ok = sz > 0 && ((uintptr_t)o & 4095) % sz == 0;
    }
    atomic_store(&s_layout_ok, ok);
}

static inline uint32_t s_recip(uint32_t sz)
{
    return (uint32_t)((((uint64_t)1 << 32) + sz - 1) / sz);
}

rt_objhdr *rt_heap_find_slow(rt_heap_cache *c, const void *p)
{
    void *base = p ? GC_base((void *)p) : NULL;
    if (!base)
        return NULL;
    rt_objhdr *h = s_slot(base, p);
    if (!h || ((h->type >> 24) != RT_OBJ_MAGIC && (h->type >> 24) != RT_OBJ_FREED))
        return h;
    /* A VT object: its GC block stays allocated while it is reachable. */
    uintptr_t a = (uintptr_t)p, page = a & ~(uintptr_t)4095;
    rt_heap_page e = {0};
    if (s_is_slab(base)) {
        const rt_slab *s = base;
        uintptr_t first = (uintptr_t)base + sizeof(rt_slab);
        uintptr_t from = page > first ? page : first;
        e = (rt_heap_page){page,
                           first + (from - first) / s->stride * s->stride,
                           first + (uintptr_t)s->n * s->stride,
                           first,
                           s->stride,
                           0};
    } else {
        pthread_once(&s_layout_once, s_layout_probe);
        size_t sz = GC_size(base);
        if (!atomic_load(&s_layout_ok) || sz < 16 || sz > 2048 || ((uintptr_t)base & 4095) % sz)
            return h;
        e = (rt_heap_page){page, page, page + 4096 / sz * sz, 0, (uint32_t)sz, 0};
    }
    e.recip = s_recip(e.sz);
    c->e[(a >> 12) % RT_HEAP_CACHE] = e;
    return h;
}

void *lev_alloc(const lev_module *m, uint32_t type, size_t count)
{
    rt_objhdr *h = rt_heap_alloc_obj(m, type, count);
    return h ? rt_obj_data(h) : NULL;
}

void lev_free(void *p)
{
    if (!p)
        return;
    void *base = GC_base(p);
    if (!base) {
        free(p); /* memory of the C library */
        return;
    }
    rt_objhdr *h = base;
    /* A whole GC object (a slab has RT_SLAB_MAGIC where an object has its
     * type): marked freed, and binned for reuse if small. */
    if ((char *)p == (char *)base + sizeof(rt_objhdr) && (h->type >> 24) == RT_OBJ_MAGIC) {
        h->type = RT_OBJ_TYPE(h) | (RT_OBJ_FREED << 24);
        size_t sz = 0;
        int kind = GC_get_kind_and_size(base, &sz);
        rt_bins_put_fast(base, kind, sz);
        return;
    }
    h = s_ours(base, s_slot(base, p), p);
    if (h && p == rt_obj_data(h))
        h->type = RT_OBJ_TYPE(h) | (RT_OBJ_FREED << 24);
}

size_t lev_alloc_size(const lev_module *m, const void *p)
{
    rt_objhdr *h = rt_heap_find(p);
    if (!h || p != rt_obj_data(h))
        return 0;
    return rt_heap_obj_size(m, h);
}

void *lev_realloc(const lev_module *m, void *p, uint32_t type, size_t count)
{
    if (!p)
        return lev_alloc(m, type, count);
    const rt_type *t = m ? rt_module_type(m, type) : NULL;
    if (!t)
        return NULL;
    size_t old;
    rt_objhdr *oh = NULL;
    if (!GC_base(p)) {
        old = malloc_usable_size(p);
    } else {
        oh = rt_heap_find(p);
        if (!oh || p != rt_obj_data(oh))
            return NULL;
        old = rt_heap_obj_size(m, oh);
    }
    /* Cleared past what is copied (only there: it may be large). */
    rt_objhdr *nh = rt_heap_alloc_raw(m, type, count, false);
    if (!nh)
        return NULL;
    size_t nbytes = rt_heap_obj_size(m, nh);
    memcpy(rt_obj_data(nh), p, old < nbytes ? old : nbytes);
    if (old < nbytes)
        memset((char *)rt_obj_data(nh) + old, 0, nbytes - old);
    if (oh)
        lev_free(p);
    else
        free(p);
    return rt_obj_data(nh);
}

char *lev_strdup(const lev_module *m, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = lev_alloc(m, LEV_T_BYTES, n);
    if (d)
        memcpy(d, s, n);
    return d;
}
