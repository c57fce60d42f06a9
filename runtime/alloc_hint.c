/* alloc_hint.c - allocation-type hints: malloc, calloc and realloc where
 * levpp cannot see the element type (inside allocation wrappers, malloc
 * taken as a value) take it from a per-thread hint that levpp sets around
 * the call whose result is cast or assigned to a T *. What no hint
 * describes exactly becomes an untyped object, which an image carries as
 * bytes once it is checked to hold no pointer (image_capture.c). Also
 * the untyped allocations levpp writes where nothing gives a type.
 *
 * The hint lives only during a call that cannot reach a safe point (levpp
 * sets it only around calls of functions that are not checkpointable), so
 * no other VT runs on the thread while it is set and it never needs to
 * travel. Depends on heap.h, heap_private.h (the bins, for malloc's fast
 * path), module.h and vt.h (the running VT's module).
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#define GC_THREADS
#include <gc/gc.h>

#include "heap.h"
#include "heap_private.h"
#include "module.h"
#include "vt.h"

__thread lev_alloc_hint lev__hint RT_TLS_FAST = {NULL, LEV_HINT_NONE};

/* Takes the hint (clears it): the first hinted allocation of the call is
 * the one it describes. */
static lev_alloc_hint s_take(void)
{
    lev_alloc_hint h = lev__hint;
    lev__hint.type = LEV_HINT_NONE;
    if (!h.m) {
        rt_vt *vt = rt_vt_current();
        h.m = vt ? vt->mod : NULL;
    }
    return h;
}

/* The type of `type` in m if n bytes are a whole number of its elements,
 * or it has a trailing array (*count set), else NULL. */
static const rt_type *s_fits(const lev_module *m, uint32_t type, size_t n, size_t *count)
{
    const rt_type *t = m && type != LEV_HINT_NONE ? rt_module_type(m, type) : NULL;
    if (!t)
        return NULL;
    if (t->tail) { /* a trailing array: any size, in bytes */
        *count = n;
        return t;
    }
    if (LEV_LIKELY(n == t->size)) {
        *count = 1; /* the common cases, without a division */
        return t;
    }
    if (t->size == 1) { /* bytes */
        *count = n;
        return t;
    }
    if (n % t->size)
        return NULL;
    *count = n / t->size;
    return t;
}

/* An object of n bytes as hint h describes it. Memory that may hold
 * pointers is always cleared; other memory only when `zero` (calloc): what
 * malloc returns natively is indeterminate too. */
static void *s_alloc(lev_alloc_hint h, size_t n, bool zero)
{
    size_t count;
    const rt_type *t = s_fits(h.m, h.type, n, &count);
    rt_objhdr *o = t ? rt_heap_alloc_type(t, h.type, count, zero) : rt_heap_alloc_untyped(n);
    return o ? rt_obj_data(o) : NULL;
}

void *lev_malloc_hinted(size_t n)
{
    /* The fast path: n bytes of the hinted type, or n bytes, from the
     * thread's bins. */
    lev_alloc_hint h = lev__hint;
    if (LEV_LIKELY(h.m != NULL)) {
        const rt_type *t = rt_module_type(h.m, h.type); /* NULL for LEV_HINT_NONE */
        if (LEV_LIKELY(t && (n == t->size || t->size == 1))) {
            rt_objhdr *o = rt_heap_alloc_binned(t, h.type, t->size == 1 ? n : 1, false);
            if (LEV_LIKELY(o != NULL)) {
                lev__hint.type = LEV_HINT_NONE;
                return rt_obj_data(o);
            }
        }
    }
    return s_alloc(s_take(), n, false);
}

void *lev_calloc_hinted(size_t n, size_t size)
{
    lev_alloc_hint h = s_take();
    if (size && n > SIZE_MAX / size)
        return NULL;
    return s_alloc(h, n * size, true);
}

static void *s_realloc(lev_alloc_hint h, void *p, size_t n);

void *lev_realloc_hinted(void *p, size_t n) { return s_realloc(s_take(), p, n); }

void *lev_malloc_untyped(size_t n)
{
    return s_alloc((lev_alloc_hint){NULL, LEV_HINT_NONE}, n, true);
}

void *lev_calloc_untyped(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    return lev_malloc_untyped(n * size); /* zeroed */
}

void *lev_realloc_untyped(void *p, size_t n)
{
    rt_vt *vt = rt_vt_current();
    return s_realloc((lev_alloc_hint){vt ? vt->mod : NULL, LEV_HINT_NONE}, p, n);
}

static void *s_realloc(lev_alloc_hint h, void *p, size_t n)
{
    if (!p)
        return s_alloc(h, n, false);
    size_t old;
    rt_objhdr *oh = NULL;
    if (!GC_base(p)) {
        old = malloc_usable_size(p); /* memory of the C library */
    } else {
        oh = rt_heap_find(p);
        if (!oh || p != rt_obj_data(oh) || (oh->type >> 24) != RT_OBJ_MAGIC)
            return NULL;
        if (RT_OBJ_TYPE(oh) != LEV_T_UNTYPED && !h.m)
            return NULL; /* no module to size it: outside any VT */
        old = rt_heap_obj_size(h.m, oh);
        if (h.type == LEV_HINT_NONE && RT_OBJ_TYPE(oh) != LEV_T_UNTYPED)
            h.type = RT_OBJ_TYPE(oh); /* the object keeps its type */
    }
    void *q = s_alloc(h, n, false);
    if (!q)
        return NULL;
    memcpy(q, p, old < n ? old : n);
    if (oh)
        lev_free(p);
    else
        free(p);
    return q;
}
