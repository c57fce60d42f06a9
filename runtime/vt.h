/* vt.h - virtual threads (vt.c): the VT record around a lev_ctx, its one
 * initialisation (for a new VT and for one built from an image), its
 * identity (id and epoch, which a deployer may set), running
 * it on the calling OS thread until it unwinds or ends, and reaching a VT
 * from the context that generated code passes around (rt_vt_of).
 *
 * Internal (not installed). Depends on arena.h (a VT's frames), ttsp.h
 * and module.h. The executor that schedules VTs is above it (executor.h):
 * here it is only the opaque rt_exec a VT points to.
 */
#ifndef VT_H
#define VT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "module.h"
#include "ttsp.h"

typedef enum rt_vt_state {
    RT_VT_NEW = 0,  /* created, never spawned */
    RT_VT_RUNNABLE, /* queued, or suspended outside an executor (restored) */
    RT_VT_RUNNING,
    RT_VT_BLOCKED, /* parked, also while a worker captures it without waking it */
    RT_VT_DONE,
    RT_VT_FAILED,
    RT_VT_STOPPED /* captured and ended without running again (rt_exec_capture_stop) */
} rt_vt_state;

/* The smallest VT id: 0 (LEV_ANY) and 1 (LEV_CLIENT) name no VT. */
#define RT_VT_ID_MIN 2u

/* Why a VT unwound (bits of rt_vt.want). */
enum {
    RT_WANT_PREEMPT = 1u,
    RT_WANT_CAPTURE = 2u,
    RT_WANT_TORTURE = 4u,
    RT_WANT_BLOCK = 8u,
    RT_WANT_YIELD = 16u,
    RT_WANT_CANCEL = 32u,
    RT_WANT_STOP = 64u /* capture, then end STOPPED (rt_exec_capture_stop) */
};

/* rt_vt.magic of a live VT. */
#define RT_VT_MAGIC 0x4C565456u /* "LVTV" */

typedef struct rt_exec rt_exec;
typedef struct rt_vt rt_vt;

/* Memory that one torture cycle moved a VT out of (image_torture.c): its
 * old heap objects, poisoned and kept allocated by `objs` (their headers,
 * in GC-uncollectable memory), and its old frame chunks, poisoned, so that
 * no new object or frame is put where an old one was while the record
 * lives. A VT's records form a list, newest first. */
typedef struct rt_moved {
    struct rt_moved *older;
    void **objs; /* GC_malloc_uncollectable */
    size_t nobjs;
    size_t bytes;     /* heap and frame bytes held */
    rt_chunk *chunks; /* linked by next */
} rt_moved;

/* Frees the records of a list and lets the collector have their memory;
 * accepts NULL. */
void rt_moved_release(rt_moved *list);

struct rt_vt {
    lev_ctx ctx; /* what generated code sees; rt_vt_of(&vt->ctx) == vt */
    rt_arena arena;
    const lev_module *mod;
    rt_exec *exec;
    rt_vt *next;            /* run queue / list link */
    uint64_t id;            /* stable across migration (rt_vt_set_identity) */
    uint64_t key;           /* process-local serial, never changed: owner of streams */
    uint32_t epoch;         /* incarnation (rt_vt_set_identity) */
    uint32_t entry;         /* function id of the bottom frame */
    volatile uint32_t want; /* RT_WANT_* */
    int state;              /* rt_vt_state */
    int err;                /* failure code once FAILED */
    uint32_t magic;         /* RT_VT_MAGIC while the VT lives */
    char *errdetail;        /* malloc'd */
    void *result;           /* malloc'd result of lev_return */
    size_t result_len;
    uint64_t next_ck_ns;   /* monotonic time the next checkpoint is due */
    uint32_t torture_left; /* safe points until the next torture cycle */
    uint32_t flags;
    /* While the executor's on_image or on_capture_error runs for this VT:
     * RT_WANT_STOP for the capture of rt_exec_capture_stop, else
     * RT_WANT_CAPTURE (a checkpoint or rt_exec_request_capture). */
    uint32_t capture_why;
    void *host;           /* owned by the embedding side */
    rt_ttsp ttsp;         /* time to safe point (ttsp.c) */
    rt_moved *moved;      /* memory torture cycles moved it out of, newest first */
    struct rt_chan *chan; /* channel state (vtchan.c), created on first use */
    /* Capture requests (RT_WANT_CAPTURE, RT_WANT_STOP) put off while the
     * VT may not be captured (rt_ch_capture_ok); touched only by the
     * thread that holds the VT. */
    uint32_t deferred;
};

/* Reports a context that is not a live VT's and aborts. */
__attribute__((noreturn, cold)) void rt_vt_bad_ctx(const lev_ctx *ctx);

/* The VT whose context is ctx (what the lev_* entry points receive);
 * aborts if ctx is not the context of a live VT. */
static inline rt_vt *rt_vt_of(lev_ctx *ctx)
{
    rt_vt *vt = (rt_vt *)((char *)ctx - offsetof(rt_vt, ctx));
    if (LEV_UNLIKELY(vt->magic != RT_VT_MAGIC))
        rt_vt_bad_ctx(ctx);
    return vt;
}

/* Whether the VT has ended (DONE, FAILED or STOPPED): it runs no more. */
static inline bool rt_vt_ended(const rt_vt *vt)
{
    return vt->state == RT_VT_DONE || vt->state == RT_VT_FAILED || vt->state == RT_VT_STOPPED;
}

/* Allocates a VT of module m with no frames, in `state`, with id *id (id
 * NULL: the next id of this process's counter, from RT_VT_ID_MIN) and
 * epoch 1, its poll armed in torture mode; the only
 * place a VT record is initialised (rt_vt_alloc, and restore with
 * rt_vt_adopt_frames). NULL on exhaustion. */
rt_vt *rt_vt_create(const lev_module *m, const uint64_t *id, rt_vt_state state);

/* Replaces the VT's frames with chunk c (from rt_arena_chunk_new), whose
 * frames, those of an image laid bottom first by rt_arena_chunk_put, end
 * at `top`: the bottom frame's function becomes the entry, `epoch` the
 * epoch, and the poll is armed as for a new VT (torture mode). */
void rt_vt_adopt_frames(rt_vt *vt, rt_chunk *c, char *top, uint32_t epoch);

/* Sets the id and epoch of a VT that is not spawned: a new one, or one
 * just built by rt_restore (which keeps the image's id and epoch until
 * this is called). Images captured afterwards carry them, and lev_self()
 * returns the id. The caller (a deployer) chooses them; the process's own
 * counter is only for VTs that need no identity beyond this process.
 * 0, or LEV_EINVAL if vt is NULL, id is below RT_VT_ID_MIN (LEV_ANY,
 * LEV_CLIENT), epoch is 0, or the VT is spawned, running or has ended. */
int rt_vt_set_identity(rt_vt *vt, uint64_t id, uint32_t epoch);

/* Creates a VT that will run function `fn` of `m` (a task entry) with a
 * copy of arg; the VT is not scheduled. Caller owns it (rt_vt_destroy). */
int rt_vt_new(const lev_module *m, uint32_t fn, const void *arg, size_t len, rt_vt **out);

/* Creates a VT whose bottom frame (zeroed, pc 0) belongs to entry `fn`
 * (a task or main entry); the caller fills the frame's parameters. */
int rt_vt_alloc(const lev_module *m, uint32_t fn, rt_vt **out, void **frame);

/* The bottom (entry) frame of a VT, or NULL once it has none. */
void *rt_vt_bottom(rt_vt *vt);

/* LEV_TORTURE as read once from the environment (0: off). */
uint32_t rt_torture_every(void);

/* Frees a VT that is not running or queued; accepts NULL. */
void rt_vt_destroy(rt_vt **vt_p);

/* Runs the VT on the calling thread until it unwinds or ends; returns
 * LEV_RUN_DONE/LEV_RUN_EXIT (ended: see state) or LEV_RUN_UNWIND. */
int rt_vt_step(rt_vt *vt);

/* The VT running on the calling thread, or NULL. */
rt_vt *rt_vt_current(void);

#endif
