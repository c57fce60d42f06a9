/* heap_bins.c - recycling of small VT heap objects that the program frees
 * (lev_free): each thread keeps them in bins by kind (scanned or atomic)
 * and size class, and the next allocation of that kind and class takes
 * one back, with no collector call. A collection runs when enough has
 * been allocated since the last one, so a program that frees what it
 * allocates (a parser that builds and deletes trees) runs few of them, as
 * with malloc and free.
 *
 * A binned object keeps its header marked freed (RT_OBJ_FREED), so a
 * pointer left dangling to it is still captured as dangling; once it is
 * allocated again it is a live object like any other. The bins are held
 * by uncollectable memory, so the collector keeps binned objects; a
 * scanned object is cleared when binned, so it retains nothing. Each
 * thread keeps at most RT_BINS_KEPT_MAX bytes; what does not fit is left to the
 * collector. A thread's bins are emptied when it exits and go to the
 * next thread. Depends on heap.h and heap_private.h.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define GC_THREADS
#include <gc/gc.h>
#include <gc/gc_inline.h>
#include <gc/gc_mark.h>

#include "heap.h"
#include "heap_private.h"

/* Large objects (past the size classes) a thread keeps, RT_BIN_LARGE of
 * each kind, up to S_LARGE_MAX bytes each: larger ones go back to the
 * collector, as the C library gives them back to the system. */
#define S_LARGE_MAX (256u << 10)

__thread rt_bins *rt_bins_mine RT_TLS_FAST;
static pthread_once_t s_once = PTHREAD_ONCE_INIT;
static pthread_key_t s_key;
static bool s_key_ok;
static pthread_mutex_t s_spare_lock = PTHREAD_MUTEX_INITIALIZER;
static rt_bins *s_spare;

/* Thread exit: the objects go to the collector, the bins to the next
 * thread (their arrays cleared, so that they keep nothing alive). */
static void s_release(void *p)
{
    rt_bins *b = p;
    for (int k = 0; k < 2; k++)
        for (unsigned c = 0; c <= RT_BIN_CLASSES; c++) {
            rt_bin *bn = &b->bin[k][c];
            if (bn->n)
                memset(bn->v, 0, bn->n * sizeof *bn->v);
            bn->n = 0;
        }
    memset(b->large, 0, sizeof b->large);
    b->kept = 0;
    if (rt_bins_mine == b) /* a later free makes the thread new bins */
        rt_bins_mine = NULL;
    pthread_mutex_lock(&s_spare_lock);
    b->next = s_spare;
    s_spare = b;
    pthread_mutex_unlock(&s_spare_lock);
}

static void s_init(void) { s_key_ok = pthread_key_create(&s_key, s_release) == 0; }

/* The calling thread's bins, made on its first free; NULL if they cannot
 * be (the object is then left to the collector). */
static rt_bins *s_bins_get(void)
{
    if (LEV_LIKELY(rt_bins_mine != NULL))
        return rt_bins_mine;
    pthread_once(&s_once, s_init);
    if (!s_key_ok)
        return NULL;
    pthread_mutex_lock(&s_spare_lock);
    rt_bins *b = s_spare;
    if (b)
        s_spare = b->next;
    pthread_mutex_unlock(&s_spare_lock);
    if (!b) {
        b = GC_malloc_uncollectable(sizeof *b);
        if (!b)
            return NULL;
        memset(b, 0, sizeof *b);
    }
    b->next = NULL;
    if (pthread_setspecific(s_key, b) != 0) {
        s_release(b);
        return NULL;
    }
    rt_bins_mine = b;
    return b;
}

rt_objhdr *rt_bins_take_large(bool scanned, size_t bytes)
{
    rt_bins *b = rt_bins_mine;
    if (!b)
        return NULL;
    rt_bin_large *l = &b->large[scanned];
    /* The smallest that holds bytes and one more (a pointer one past the
     * end stays inside), wasting at most a quarter and a page. */
    uint32_t best = RT_BIN_LARGE;
    for (uint32_t i = 0; i < RT_BIN_LARGE; i++)
        if (l->o[i] && l->sz[i] > bytes && l->sz[i] - bytes <= bytes / 4 + 4096 &&
            (best == RT_BIN_LARGE || l->sz[i] < l->sz[best]))
            best = i;
    if (best == RT_BIN_LARGE)
        return NULL;
    void *o = l->o[best];
    l->o[best] = NULL;
    b->kept -= l->sz[best];
    return o;
}

/* Keeps large object o of sz bytes in l, giving up an older one if all
 * slots are taken (it is then the collector's). */
static bool s_put_large(rt_bins *b, rt_bin_large *l, void *o, size_t sz)
{
    uint32_t i = 0;
    while (i < RT_BIN_LARGE && l->o[i])
        i++;
    if (i == RT_BIN_LARGE) {
        i = l->evict;
        l->evict = (l->evict + 1) % RT_BIN_LARGE;
        b->kept -= l->sz[i];
        l->o[i] = NULL;
    }
    if (b->kept + sz > RT_BINS_KEPT_MAX)
        return false;
    l->o[i] = o;
    l->sz[i] = sz;
    b->kept += sz;
    return true;
}

/* Adds small object o of sz bytes to bin bn, growing its array. */
static bool s_put_small(rt_bins *b, rt_bin *bn, void *o, size_t sz)
{
    if (b->kept + sz > RT_BINS_KEPT_MAX)
        return false;
    if (bn->n == bn->cap) {
        uint32_t cap = bn->cap ? 2 * bn->cap : 64;
        void **v = GC_malloc_uncollectable(cap * sizeof *v);
        if (!v)
            return false;
        if (bn->n)
            memcpy(v, bn->v, bn->n * sizeof *v);
        memset(v + bn->n, 0, (cap - bn->n) * sizeof *v);
        GC_free(bn->v);
        bn->v = v;
        bn->cap = cap;
    }
    bn->v[bn->n++] = o;
    b->kept += sz;
    return true;
}

_Static_assert(GC_I_PTRFREE == 0 && GC_I_NORMAL == 1, "a kind indexes bin[scanned]");

bool rt_bins_put(void *base, int kind, size_t sz)
{
    if ((kind != GC_I_NORMAL && kind != GC_I_PTRFREE) || sz < sizeof(rt_objhdr) || sz > S_LARGE_MAX)
        return false;
    rt_bins *b = s_bins_get();
    if (!b)
        return false;
    bool scanned = kind == GC_I_NORMAL;
    bool small = sz <= (size_t)RT_BIN_CLASSES * RT_BIN_GRANULE;
    if (small && sz % RT_BIN_GRANULE)
        return false;
    if (small ? !s_put_small(b, &b->bin[scanned][sz / RT_BIN_GRANULE], base, sz)
              : !s_put_large(b, &b->large[scanned], base, sz))
        return false;
    /* Scanned memory comes cleared from the collector, and must retain
     * nothing meanwhile. */
    if (scanned)
        memset((char *)base + sizeof(rt_objhdr), 0, sz - sizeof(rt_objhdr));
    return true;
}
