/* heap.h - the VT heap (heap.c): typed allocation on Boehm GC, each object
 * behind a small header (rt_objhdr) that tells its type and element count,
 * and finding an object's header from any pointer into it.
 *
 * Internal (not installed). Depends on module.h (types). The slab and
 * page-cache internals that only the image codec uses are in
 * heap_private.h.
 */
#ifndef HEAP_H
#define HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "module.h"

/* Header in front of every VT heap object. The user's pointer is
 * (char *)hdr + sizeof(rt_objhdr). */
typedef struct rt_objhdr {
    uint32_t type;  /* type id; high byte is RT_OBJ_MAGIC */
    uint32_t count; /* number of elements */
    uint32_t mark;  /* capture generation that last visited this object */
    uint32_t id;    /* object id within that capture */
} rt_objhdr;

_Static_assert(sizeof(rt_objhdr) == RT_OBJ_HDR_SIZE, "module.h's RT_OBJ_HDR_SIZE");

#define RT_OBJ_MAGIC 0xA7u
/* High byte of the type of an object released by lev_free: the collector
 * reclaims it once nothing points to it, and a pointer left dangling to it
 * is captured as such rather than failing the capture. */
#define RT_OBJ_FREED 0xF7u
#define RT_OBJ_TYPE(h) ((h)->type & 0xFFFFFFu)

/* The header of the VT heap object containing p (interior and one-past-end
 * pointers included), or NULL if p is not in one. */
rt_objhdr *rt_heap_find(const void *p);

/* Allocates an object with `count` elements of `type` and returns its
 * header (data zeroed). NULL on exhaustion or overflow. */
rt_objhdr *rt_heap_alloc_obj(const lev_module *m, uint32_t type, size_t count);

/* Like rt_heap_alloc_obj with the type already looked up (t is type's
 * entry in the module); data zeroed if `zero` or the type holds
 * pointers. */
rt_objhdr *rt_heap_alloc_type(const rt_type *t, uint32_t type, size_t count, bool zero);

/* Allocates an untyped object of `bytes` bytes (LEV_T_UNTYPED, count =
 * bytes, data zeroed, scanned conservatively). NULL on exhaustion. */
rt_objhdr *rt_heap_alloc_untyped(size_t bytes);

/* Byte size of an object's data. */
size_t rt_heap_obj_size(const lev_module *m, const rt_objhdr *h);

LEV_INLINE void *rt_obj_data(rt_objhdr *h) { return (char *)h + sizeof(rt_objhdr); }

#endif
