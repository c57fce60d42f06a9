/* heap.c - the VT heap: typed allocation on Boehm GC with a small header
 * in front of every object, so capture can find any object from an
 * interior pointer (GC_base) and know its type and requested size.
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#define GC_THREADS
#include <gc/gc.h>
#include <gc/gc_typed.h>

#include "rt.h"

#define S_MAX_BYTES ((size_t)UINT32_MAX)

size_t rt_heap_obj_size(const lev_module *m, const rt_objhdr *h)
{
    const rt_type *t = rt_module_type(m, RT_OBJ_TYPE(h));
    return t ? (size_t)t->size * h->count : 0;
}

rt_objhdr *rt_heap_alloc_raw(const lev_module *m, uint32_t type, size_t count, bool zero)
{
    const rt_type *t = m ? rt_module_type(m, type) : NULL;
    if (!t || count > UINT32_MAX || (count && t->size > S_MAX_BYTES / count))
        return NULL;
    size_t bytes = sizeof(rt_objhdr) + (size_t)t->size * count;
    rt_objhdr *h;
    if (!t->has_ptrs) {
        h = GC_malloc_atomic(bytes);
        if (h && zero)
            memset(h, 0, bytes);
    } else if (count == 1 && t->gc_descr) {
        h = GC_malloc_explicitly_typed(bytes, (GC_descr)t->gc_descr);
    } else {
        h = GC_malloc(bytes);
    }
    if (!h)
        return NULL;
    h->type = type | (RT_OBJ_MAGIC << 24);
    h->count = (uint32_t)count;
    h->mark = 0;
    h->id = 0;
    return h;
}

rt_objhdr *rt_heap_alloc_obj(const lev_module *m, uint32_t type, size_t count)
{
    return rt_heap_alloc_raw(m, type, count, true);
}

/* The header at GC block `base` if it is one of ours and holds p. */
static rt_objhdr *s_ours(void *base, const void *p)
{
    rt_objhdr *h = base;
    if ((h->type >> 24) != RT_OBJ_MAGIC)
        return NULL;
    size_t cap = GC_size(base);
    if (cap < sizeof(rt_objhdr))
        return NULL;
    /* The element size is not known here without the module; the data
     * must at least fit in the block. */
    const char *data = (const char *)base + sizeof(rt_objhdr);
    if ((const char *)p < data || (const char *)p > (const char *)base + cap)
        return NULL;
    return h;
}

rt_objhdr *rt_heap_find(const void *p)
{
    if (!p)
        return NULL;
    void *base = GC_base((void *)p);
    return base ? s_ours(base, p) : NULL;
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
    rt_objhdr *h = s_ours(base, p);
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
    rt_objhdr *nh = rt_heap_alloc_obj(m, type, count);
    if (!nh)
        return NULL;
    size_t nbytes = (size_t)t->size * count;
    memcpy(rt_obj_data(nh), p, old < nbytes ? old : nbytes);
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
