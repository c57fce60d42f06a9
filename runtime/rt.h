/* rt.h - the runtime's interface to the rest of Leverage: modules, virtual
 * threads, the executor that schedules them, and checkpoint images.
 *
 * Internal (not installed). The runtime knows nothing about networks: the
 * channels a task uses (reports, results, images) leave it through the
 * rt_host callbacks that the embedding side provides.
 */
#ifndef RT_H
#define RT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "lev_abi.h"

/* ===================================================================
 * Errors
 * =================================================================== */

/* Records `err` with a printf-style detail for lev_errdetail() on this
 * thread and returns err, so failures read `return rt_err(LEV_EIMAGE, ...)`. */
int rt_err(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clears this thread's error detail. */
void rt_err_clear(void);

/* One-time process initialisation (GC, tpl hooks); idempotent, thread-safe. */
void rt_init(void);

/* ===================================================================
 * Modules (module.c)
 * =================================================================== */

/* A flattened scalar or pointer run of a type: `count` items of `kind`
 * starting at `offset`, `stride` bytes apart. */
typedef struct rt_run {
    uint32_t offset;
    uint32_t kind;   /* LEV_K_B1..LEV_K_FNPTR */
    uint32_t count;
    uint32_t stride; /* bytes between items (the width for packed runs) */
    const char *name; /* field name for diagnostics */
} rt_run;

typedef struct rt_type {
    const char *name;
    uint32_t size;
    uint32_t nruns;
    rt_run *runs;
    bool has_ptrs;     /* any PTR or FNPTR run */
    bool dense;        /* one packed scalar run that covers size exactly */
    uint32_t dense_kind;
    uintptr_t gc_descr; /* GC descriptor of header + one element, 0 if none */
    /* For the image codec, per element: items in the 1-, 2-, 4- and 8-byte
     * streams (pointers are 8-byte items), and whether the runs cover
     * every byte (no padding), so a restored object needs no clearing. */
    uint32_t items[4];
    bool packed;
} rt_type;

struct lev_module {
    const lev_module_desc *desc;
    uint64_t hash;
    uint32_t ntypes;         /* LEV_T_USER + desc->ntypes */
    rt_type *types;          /* indexed by type id (built-ins included) */
    /* statics sorted by address, for pointer lookup */
    uint32_t nstatics;
    uint32_t *static_by_addr;
    /* function address -> id, open addressing */
    uint32_t fn_cap;
    uintptr_t *fn_keys;
    uint32_t *fn_vals;
    lev_module *next;
};

/* Width in bytes of a field kind (0 for LEV_K_REC or unknown). */
uint32_t rt_kind_width(uint32_t kind);

/* The type with id `t`, or NULL if out of range. */
const rt_type *rt_module_type(const lev_module *m, uint32_t t);

/* Function id of the native address `p`, or -1. */
int64_t rt_module_fn_by_addr(const lev_module *m, const void *p);

/* Static symbol containing address p (end inclusive), or -1; sets *off. */
int64_t rt_module_static_by_addr(const lev_module *m, const void *p, size_t *off);

/* Byte size of a static symbol. */
size_t rt_module_static_size(const lev_module *m, uint32_t s);

/* Finds the task entry named `task` among the registered modules (a task
 * module registers itself when it is loaded). 0, or LEV_EMODULE. */
int rt_task_find(const char *task, const lev_module **m, uint32_t *fn);

/* Finds a function id by name, or -1. */
int64_t rt_module_fn_by_name(const lev_module *m, const char *name);

/* What lev_module_register did on a thread while a task module loader
 * held its registrations (taskmod.c): the modules it built, kept out
 * of every lookup until the loader publishes or discards them, and the
 * first registration that failed. */
typedef struct rt_module_hold {
    lev_module *held;  /* newest first, linked by next */
    uint32_t nheld;
    int err;           /* 0, or the code of the first failed registration */
    char detail[256];  /* its message and lev_errdetail */
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

/* ===================================================================
 * Heap (heap.c)
 * =================================================================== */

/* Header in front of every VT heap object. The user's pointer is
 * (char *)hdr + sizeof(rt_objhdr). */
typedef struct rt_objhdr {
    uint32_t type;  /* type id; high byte is RT_OBJ_MAGIC */
    uint32_t count; /* number of elements */
    uint32_t mark;  /* capture generation that last visited this object */
    uint32_t id;    /* object id within that capture */
} rt_objhdr;

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

/* Like rt_heap_alloc_obj; data is left unzeroed when !zero and the
 * type holds no pointers (restore overwrites it all). */
rt_objhdr *rt_heap_alloc_raw(const lev_module *m, uint32_t type, size_t count, bool zero);

/* Byte size of an object's data. */
size_t rt_heap_obj_size(const lev_module *m, const rt_objhdr *h);

LEV_INLINE void *rt_obj_data(rt_objhdr *h) { return (char *)h + sizeof(rt_objhdr); }

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

/* ===================================================================
 * Frame arena (arena.c)
 * =================================================================== */

typedef struct rt_chunk {
    struct rt_chunk *prev;
    struct rt_chunk *next;
    char *end;   /* top of this chunk's frames while it is not current */
    size_t cap;  /* bytes of frame space */
    uint64_t pad_;
    char data[]; /* 16-byte aligned */
} rt_chunk;

typedef struct rt_arena {
    rt_chunk *first;
    rt_chunk *cur;
    /* Frames written while unwinding by bodies that ran without one
     * (lev_frame_spill), innermost first; GC-scanned, laid on the chain
     * by rt_arena_lay_spilled once the VT has unwound. */
    char *spill;
    size_t spill_len, spill_cap;
} rt_arena;

/* Calls fn for every frame from the bottom of the chain to the top;
 * stops early and returns fn's result if it is non-zero. */
int rt_arena_walk(lev_ctx *ctx, rt_arena *a, const lev_module *m,
                  int (*fn)(void *frame, size_t size, void *ud), void *ud);

/* With `lay`, pushes the spilled frames on the chain, outermost first;
 * either way empties the spill buffer. 0, or LEV_ENOMEM (some spilled
 * frames are then missing from the chain: the VT cannot go on). */
int rt_arena_lay_spilled(lev_ctx *ctx, rt_arena *a, int lay);

/* Frees every chunk and leaves the arena and ctx empty. */
void rt_arena_clear(lev_ctx *ctx, rt_arena *a);

/* Overwrites every frame byte with garbage (torture mode). */
void rt_arena_scribble(lev_ctx *ctx, rt_arena *a);

/* Byte size of the frame of function `fn` in module m (aligned). */
size_t rt_frame_size(const lev_module *m, uint32_t fn);

/* ===================================================================
 * Virtual threads
 * =================================================================== */

typedef enum rt_vt_state {
    RT_VT_NEW = 0,
    RT_VT_RUNNABLE,
    RT_VT_RUNNING,
    RT_VT_BLOCKED,
    RT_VT_DONE,
    RT_VT_FAILED
} rt_vt_state;

/* Why a VT unwound (bits of rt_vt.want). */
enum {
    RT_WANT_PREEMPT = 1u,
    RT_WANT_CAPTURE = 2u,
    RT_WANT_TORTURE = 4u,
    RT_WANT_BLOCK = 8u,
    RT_WANT_YIELD = 16u,
    RT_WANT_CANCEL = 32u
};

typedef struct rt_exec rt_exec;
typedef struct rt_vt rt_vt;

struct rt_vt {
    lev_ctx ctx;             /* first: generated code sees a lev_ctx * */
    rt_arena arena;
    const lev_module *mod;
    rt_exec *exec;
    rt_vt *next;             /* run queue / list link */
    uint64_t id;             /* stable across migration */
    uint32_t epoch;          /* incarnation */
    uint32_t entry;          /* function id of the bottom frame */
    volatile uint32_t want;  /* RT_WANT_* */
    int state;               /* rt_vt_state */
    int err;                 /* failure code once FAILED */
    char *errdetail;         /* malloc'd */
    void *result;            /* malloc'd result of lev_return */
    size_t result_len;
    uint64_t next_ck_ns;     /* monotonic time the next checkpoint is due */
    uint32_t torture_left;   /* safe points until the next torture cycle */
    uint32_t flags;
    void *host;              /* owned by the embedding side */
    /* time to safe point (ttsp.c): the pending request's stamps, and the
     * CPU clock of the thread running the VT */
    uint64_t ttsp_wall;      /* monotonic ns of the pending request, 0: none */
    uint64_t ttsp_cpu;       /* the running thread's CPU ns then, 0: unknown */
    clockid_t ttsp_clock;
    int ttsp_running;        /* ttsp_clock is valid */
};

/* Creates a VT that will run function `fn` of `m` (a task entry) with a
 * copy of arg; the VT is not scheduled. Caller owns it (rt_vt_destroy). */
int rt_vt_new(const lev_module *m, uint32_t fn, const void *arg, size_t len, rt_vt **out);

/* Creates a VT whose bottom frame (zeroed, pc 0) belongs to entry `fn`
 * (a task or main entry); the caller fills the frame's parameters. */
int rt_vt_alloc(const lev_module *m, uint32_t fn, rt_vt **out, void **frame);

/* The bottom (entry) frame of a VT, or NULL once it has none. */
void *rt_vt_bottom(rt_vt *vt);

/* Monotonic clock in nanoseconds. */
uint64_t rt_now_ns(void);

/* LEV_TORTURE as read once from the environment (0: off). */
uint32_t rt_torture_every(void);

/* Frees a VT that is not running or queued; accepts NULL. */
void rt_vt_destroy(rt_vt **vt_p);

/* ===================================================================
 * Time to safe point (ttsp.c)
 * =================================================================== */

/* Safe points that honoured a timed poll request, and the time each took
 * from the request, in wall time and in the running thread's CPU time
 * (quantiles are bucket bounds, within 25%; maxima exact). */
typedef struct rt_ttsp_stats {
    uint64_t count;
    uint64_t wall_max_ns, wall_p99_ns, wall_p50_ns;
    uint64_t cpu_count; /* of count, those whose CPU time was known */
    uint64_t cpu_max_ns, cpu_p99_ns, cpu_p50_ns;
} rt_ttsp_stats;

/* Stamps a poll request of vt (call it before setting the poll word); a
 * request already pending keeps its stamp. Any thread. */
void rt_ttsp_request(rt_vt *vt);

/* The calling thread starts running vt: a request pending now is timed
 * from now. */
void rt_ttsp_run_start(rt_vt *vt);

/* The calling thread stops running vt. */
void rt_ttsp_run_end(rt_vt *vt);

/* At a safe point of vt (its slow path): records the time since the
 * pending request, if any. */
void rt_ttsp_honour(rt_vt *vt);

/* Sums the histograms of all threads; rt_ttsp_reset clears them (call it
 * while no VT runs). */
void rt_ttsp_get(rt_ttsp_stats *st);
void rt_ttsp_reset(void);

/* Whether LEV_TTSP_REPORT is set (read once; if so, a summary is printed
 * on stderr at exit: "lev-ttsp: count N wall_max_ns ..."). */
int rt_ttsp_report(void);

/* Runs the VT on the calling thread until it unwinds or ends; returns
 * LEV_RUN_DONE/LEV_RUN_EXIT (ended: see state) or LEV_RUN_UNWIND. */
int rt_vt_step(rt_vt *vt);

/* The VT running on the calling thread, or NULL. */
rt_vt *rt_vt_current(void);

/* ===================================================================
 * Images (image.c)
 * =================================================================== */

#define RT_IMAGE_VERSION 1u

typedef struct rt_image_info {
    uint32_t version;
    uint64_t module_hash;
    uint64_t vt_id;
    uint32_t epoch;
    uint32_t nobjects;
    uint32_t nframes;
    uint64_t live_bytes;
} rt_image_info;

/* Captures a suspended (not running) VT into a new image. Caller owns
 * *img and frees it with free(). LEV_ECAPTURE names the function or type
 * and field holding a pointer that cannot be encoded. */
int rt_capture(rt_vt *vt, uint8_t **img, size_t *len);

/* Builds a new VT from an image, for module m. Never reads outside
 * img[0..len). LEV_EIMAGE, LEV_EVERSION, LEV_EMODULE, LEV_ENOMEM. */
int rt_restore(const lev_module *m, const uint8_t *img, size_t len, rt_vt **out);

/* Replaces the frames and heap graph of `vt` with those of the image
 * (same VT, same id), without touching its scheduling state. */
int rt_restore_into(rt_vt *vt, const uint8_t *img, size_t len);

/* Reads and checks an image's header (and checksum). */
int rt_image_info_get(const uint8_t *img, size_t len, rt_image_info *info);

/* Overwrites every heap object and travelling static reachable from the
 * VT's frames with garbage (torture mode). It finds them through the
 * frames, so call it before rt_arena_scribble. Returns 0 or the error of
 * the walk (e.g. LEV_ECAPTURE). */
int rt_heap_scribble_reachable(rt_vt *vt);

#endif
