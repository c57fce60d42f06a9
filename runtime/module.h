/* module.h - registered task modules (module.c): the type table built from
 * a module's descriptors (each type flattened into runs of scalars and
 * pointers), the lookups of functions and statics by address and by name,
 * finding a task entry (in any registered module, or in one), and holding
 * the modules a task module loader registers until it publishes them
 * (taskmod.c).
 *
 * Internal (not installed). Depends on the base (rt.h) only.
 */
#ifndef MODULE_H
#define MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rt.h"

/* Bytes of the heap's header in front of every VT heap object (rt_objhdr
 * in heap.h, which checks it): a type's GC descriptor (rt_type.gc_descr)
 * describes such a header followed by one element. */
#define RT_OBJ_HDR_SIZE 16u

/* A flattened scalar or pointer run of a type: `count` items of `kind`
 * starting at `offset`, `stride` bytes apart. */
typedef struct rt_run {
    uint32_t offset;
    uint32_t kind; /* LEV_K_B1..LEV_K_FNPTR, or LEV_K_TAGGED (count 1) */
    uint32_t count;
    uint32_t stride;  /* bytes between items (the width for packed runs) */
    const char *name; /* field name for diagnostics */
    uint32_t table;   /* LEV_K_TAGGED: type id of the union's tag table */
} rt_run;

typedef struct rt_type {
    const char *name;
    uint32_t size;
    uint32_t align; /* the descriptor's (a power of two, or 0) */
    uint32_t nruns;
    rt_run *runs;
    bool has_ptrs; /* any PTR or FNPTR run */
    bool dense;    /* one packed scalar run that covers size exactly */
    /* LEV_T_UNTYPED: bytes with no pointer described, which the collector
     * scans conservatively all the same (they may hold the only pointer
     * to an object); a capture checks them (image_capture.c). */
    bool conservative;
    /* A tagged union's tag table (LEV_K_TAGGED in lev_abi.h), no object
     * type: the tag's offset from the union and width, and the rows that
     * map tag values to member kinds (the descriptor's own). */
    bool tag_table;
    int32_t tag_delta;
    uint32_t tag_width;
    uint32_t narms;
    const lev_field_desc *arms;
    uint32_t dense_kind;
    uintptr_t gc_descr; /* GC descriptor of header + one element, 0 if none */
    /* For the image codec, per element: items in the 1-, 2-, 4- and 8-byte
     * streams (pointers are 8-byte items), and whether the runs cover
     * every byte (no padding), so a restored object needs no clearing. */
    uint32_t items[4];
    bool packed;
    /* A type whose last field is a flexible array member (a field of
     * count 0 in its descriptor): an object of it is one element (the
     * head, described by the runs) and, from tail_off, as many elements
     * of type tail_type as its size holds. Its count is its size in
     * bytes, at least `size` (rt_type_bytes, rt_tail_elems). */
    bool tail;
    uint32_t tail_off, tail_type;
} rt_type;

struct lev_module {
    const lev_module_desc *desc;
    uint64_t hash;
    uint32_t ntypes; /* LEV_T_USER + desc->ntypes */
    rt_type *types;  /* indexed by type id (built-ins included) */
    /* statics sorted by address, for pointer lookup */
    uint32_t nstatics;
    uint32_t *static_by_addr;
    /* function address -> id, open addressing */
    uint32_t fn_cap;
    uintptr_t *fn_keys;
    uint32_t *fn_vals;
    lev_module *next;
};

/* Bytes of `count` elements of t (of an object of t whose count is
 * `count`: for a type with a trailing array, count is the bytes). */
static inline size_t rt_type_bytes(const rt_type *t, size_t count)
{
    return t->tail ? count : (size_t)t->size * count;
}

/* The elements of the trailing array of an object of `bytes` bytes of
 * type t (t->tail), and the bytes after them that no element covers
 * (*rem of them, from *rem_off), which travel as bytes. */
static inline uint32_t rt_tail_elems(const lev_module *m, const rt_type *t, uint32_t bytes,
                                     uint32_t *rem_off, uint32_t *rem)
{
    uint32_t esz = m->types[t->tail_type].size;
    uint32_t k = bytes > t->tail_off ? (bytes - t->tail_off) / esz : 0;
    uint32_t end = t->tail_off + k * esz;
    *rem_off = end > t->size ? end : t->size;
    *rem = bytes > *rem_off ? bytes - *rem_off : 0;
    return k;
}

/* Items in the 1-, 2-, 4- and 8-byte streams of an object of `count`
 * elements of t (rt_type.items, and for a trailing array its elements
 * and bytes). */
void rt_type_items(const lev_module *m, const rt_type *t, uint32_t count, uint64_t items[4]);

/* Width in bytes of a field kind (0 for LEV_K_REC or unknown). */
uint32_t rt_kind_width(uint32_t kind);

/* Kind of the member that tag table tt says is live in the tagged union
 * at u (LEV_K_PTR, LEV_K_FNPTR, LEV_K_B1), or 0 if its tag's value (in
 * *value unless value is NULL) is none the table lists. */
uint32_t rt_tagged_arm(const rt_type *tt, const char *u, uint64_t *value);

/* The type with id `t`, or NULL if out of range (inline: every typed
 * allocation looks its type up). */
static inline const rt_type *rt_module_type(const lev_module *m, uint32_t t)
{
    if (t >= m->ntypes || !m->types[t].size)
        return NULL;
    return &m->types[t];
}

/* Function id of the native address `p`, or -1. */
int64_t rt_module_fn_by_addr(const lev_module *m, const void *p);

/* Static symbol containing address p (end inclusive), or -1; sets *off. */
int64_t rt_module_static_by_addr(const lev_module *m, const void *p, size_t *off);

/* Byte size of a static symbol. */
size_t rt_module_static_size(const lev_module *m, uint32_t s);

/* Finds the task entry named `task` among the registered modules (a task
 * module registers itself when it is loaded): the first module that has
 * one, which in a process hosting several task modules (several virtual
 * computers) may not be the one meant; rt_task_find_in looks in one.
 * 0, or LEV_EMODULE. */
int rt_task_find(const char *task, const lev_module **m, uint32_t *fn);

/* Finds the task entry (a function flagged LEV_FN_TASK) named `task` in
 * module m only, into *fn. 0; LEV_EMODULE if m has no task of that name
 * (a function of that name that is not a task is none); LEV_EINVAL for a
 * NULL argument. */
int rt_task_find_in(const lev_module *m, const char *task, uint32_t *fn);

/* Finds a function id by name, or -1. */
int64_t rt_module_fn_by_name(const lev_module *m, const char *name);

/* What lev_module_register did on a thread while a task module loader
 * held its registrations (taskmod.c): the modules it built, kept out
 * of every lookup until the loader publishes or discards them, and the
 * first registration that failed. */
typedef struct rt_module_hold {
    lev_module *held; /* newest first, linked by next */
    uint32_t nheld;
    int err;          /* 0, or the code of the first failed registration */
    char detail[256]; /* its message and lev_errdetail */
} rt_module_hold;

/* Holds the modules registered on the calling thread (by the constructors
 * a dlopen runs) in *h until rt_module_hold_end; h is cleared first. */
void rt_module_hold_begin(rt_module_hold *h);

/* Stops holding; the modules stay in h->held for the caller to publish or
 * discard. */
void rt_module_hold_end(const rt_module_hold *h);

/* Makes a held module visible to the lookups and returns true; if a
 * registered module has the same hash already, frees m instead, returns
 * false, and *out is that module. */
bool rt_module_publish(lev_module *m, const lev_module **out);

/* Frees held modules that were never published (the list from m on). */
void rt_module_discard(lev_module *m);

/* The registered module with this hash, or NULL. */
const lev_module *rt_module_by_hash(uint64_t hash);

/* Stores up to cap registered modules in v and returns how many there are
 * (registered modules stay until the process ends). */
uint32_t rt_module_list(const lev_module **v, uint32_t cap);

#endif
