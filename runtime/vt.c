/* vt.c - virtual threads: creation with an entry frame, running one on the
 * calling OS thread until it unwinds or ends, and the safe-point slow path
 * that decides whether a VT must unwind (torture, checkpoint, yield, block).
 * The lev_* entry points that receive a context (safe point, failure, the
 * frame slow paths) find their VT here, with rt_vt_of.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GC_THREADS
#include <gc/gc.h>

#include "arena.h"
#include "clock.h"
#include "module.h"
#include "rt.h"
#include "ttsp.h"
#include "vt.h"
#include "vtchan.h"

static _Atomic uint64_t s_next_id = RT_VT_ID_MIN;
static _Atomic uint64_t s_next_key = 1;
static __thread rt_vt *s_current RT_TLS_FAST;

uint32_t rt_torture_every(void)
{
    static int cached = -1;
    if (cached < 0) {
        const char *s = getenv("LEV_TORTURE");
        long n = s ? strtol(s, NULL, 10) : 0;
        cached = (n > 0 && n < (long)UINT32_MAX) ? (int)n : 0;
    }
    return (uint32_t)cached;
}

rt_vt *rt_vt_create(const lev_module *m, const uint64_t *id, rt_vt_state state)
{
    rt_vt *vt = GC_malloc_uncollectable(sizeof *vt);
    if (!vt)
        return NULL;
    memset(vt, 0, sizeof *vt);
    vt->magic = RT_VT_MAGIC;
    vt->mod = m;
    vt->id = id ? *id : atomic_fetch_add(&s_next_id, 1);
    vt->key = atomic_fetch_add(&s_next_key, 1);
    vt->epoch = 1;
    vt->state = state;
    uint32_t every = rt_torture_every();
    if (every) {
        vt->torture_left = every;
        vt->ctx.poll = 1;
    }
    return vt;
}

void rt_vt_adopt_frames(rt_vt *vt, rt_chunk *c, char *top, uint32_t epoch)
{
    rt_arena_adopt(&vt->ctx, &vt->arena, c, top);
    vt->entry = ((lev_frame *)rt_vt_bottom(vt))->fn;
    vt->epoch = epoch;
    vt->ctx.poll = rt_torture_every() ? 1u : 0u;
}

int rt_vt_set_identity(rt_vt *vt, uint64_t id, uint32_t epoch)
{
    if (!vt)
        return rt_err(LEV_EINVAL, "rt_vt_set_identity: NULL virtual thread");
    if (id < RT_VT_ID_MIN)
        return rt_err(LEV_EINVAL, "VT id %llu is reserved (0: any sender, 1: the client)",
                      (unsigned long long)id);
    if (!epoch)
        return rt_err(LEV_EINVAL, "VT epoch 0 is not an incarnation (epochs start at 1)");
    if (__atomic_load_n(&vt->exec, __ATOMIC_ACQUIRE) || vt->state == RT_VT_RUNNING)
        return rt_err(LEV_EINVAL, "virtual thread %llu is spawned: its identity is set before",
                      (unsigned long long)vt->id);
    if (rt_vt_ended(vt))
        return rt_err(LEV_EINVAL, "virtual thread %llu has ended", (unsigned long long)vt->id);
    vt->id = id;
    vt->epoch = epoch;
    return 0;
}

void rt_vt_bad_ctx(const lev_ctx *ctx)
{
    fprintf(stderr, "leverage: context %p is not that of a live virtual thread\n",
            (const void *)ctx);
    abort();
}

int rt_vt_alloc(const lev_module *m, uint32_t fn, rt_vt **out, void **frame)
{
    rt_init();
    if (!m || fn >= m->desc->nfns || !m->desc->fns[fn].entry || !m->desc->fns[fn].frame_type)
        return rt_err(LEV_EINVAL, "function id %u is not an entry of the module", fn);
    rt_vt *vt = rt_vt_create(m, NULL, RT_VT_NEW);
    if (!vt)
        return LEV_ENOMEM;
    vt->entry = fn;
    size_t size = m->types[m->desc->fns[fn].frame_type].size;
    void *fr = rt_arena_push_slow(&vt->ctx, &vt->arena, size, rt_frame_align(m, fn));
    if (!fr) {
        vt->magic = 0;
        GC_free(vt);
        return LEV_ENOMEM;
    }
    memset(fr, 0, size);
    ((lev_frame *)fr)->fn = fn;
    *out = vt;
    *frame = fr;
    return 0;
}

int rt_vt_new(const lev_module *m, uint32_t fn, const void *arg, size_t len, rt_vt **out)
{
    if (!out || (len && !arg))
        return rt_err(LEV_EINVAL, "rt_vt_new: NULL argument");
    if (!m || fn >= m->desc->nfns || !(m->desc->fns[fn].flags & LEV_FN_TASK))
        return rt_err(LEV_EINVAL, "function id %u is not a task entry", fn);
    rt_vt *vt;
    void *frame;
    int rc = rt_vt_alloc(m, fn, &vt, &frame);
    if (rc)
        return rc;
    lev_task_frame *tf = frame;
    void *copy = lev_alloc(m, LEV_T_BYTES, len ? len : 1);
    if (!copy) {
        rt_vt_destroy(&vt);
        return LEV_ENOMEM;
    }
    if (len)
        memcpy(copy, arg, len);
    tf->arg = copy;
    tf->len = len;
    *out = vt;
    return 0;
}

void rt_vt_destroy(rt_vt **vt_p)
{
    if (!vt_p || !*vt_p)
        return;
    rt_vt *vt = *vt_p;
    rt_arena_clear(&vt->ctx, &vt->arena);
    rt_moved_release(vt->moved);
    rt_ch_free(vt);
    free(vt->errdetail);
    free(vt->result);
    vt->magic = 0;
    GC_free(vt);
    *vt_p = NULL;
}

void rt_moved_release(rt_moved *list)
{
    while (list) {
        rt_moved *older = list->older;
        GC_free(list->objs);
        rt_arena_chunks_free(list->chunks);
        free(list);
        list = older;
    }
}

rt_vt *rt_vt_current(void) { return s_current; }

void *rt_vt_bottom(rt_vt *vt) { return rt_arena_bottom(&vt->arena); }

int rt_vt_step(rt_vt *vt)
{
    lev_frame *bottom = rt_vt_bottom(vt);
    if (!bottom || rt_vt_ended(vt))
        return LEV_RUN_EXIT;
    const lev_fn_desc *fd = &vt->mod->desc->fns[vt->entry];
    rt_vt *prev = s_current;
    s_current = vt;
    vt->state = RT_VT_RUNNING;
    rt_ttsp_run_start(&vt->ttsp, &vt->ctx.poll);
    int r = fd->entry(&vt->ctx, bottom);
    rt_ttsp_run_end(&vt->ttsp);
    s_current = prev;
    if (vt->arena.spill_len &&
        rt_arena_lay_spilled(&vt->ctx, &vt->arena, r == LEV_RUN_UNWIND && !vt->err)) {
        lev_vt_fail(&vt->ctx, LEV_ENOMEM, lev_errdetail());
        r = LEV_RUN_EXIT;
    }
    if (r == LEV_RUN_UNWIND) {
        vt->state = RT_VT_RUNNABLE;
        return r;
    }
    vt->state = vt->err ? RT_VT_FAILED : RT_VT_DONE;
    return r == LEV_RUN_DONE ? LEV_RUN_DONE : LEV_RUN_EXIT;
}

int lev_safepoint(lev_ctx *ctx, int kind)
{
    rt_vt *vt = rt_vt_of(ctx);
    uint32_t every = rt_torture_every();
    uint32_t add = 0;
    if (every && --vt->torture_left == 0) {
        vt->torture_left = every;
        add |= RT_WANT_TORTURE;
    }
    if (kind == LEV_SP_YIELD)
        add |= RT_WANT_YIELD;
    else if (kind == LEV_SP_BLOCK)
        add |= RT_WANT_BLOCK;
    if (vt->next_ck_ns && !(vt->deferred & RT_WANT_CAPTURE) && rt_now_ns() >= vt->next_ck_ns)
        add |= RT_WANT_CAPTURE;
    /* Clear the poll before reading `want`: a request that lands after the
     * read leaves poll set and is seen at the next safe point. The time
     * to this safe point is taken after the clear too, for the same
     * reason (a request stamps the VT before it sets the poll). Torture
     * asks again at once: the next safe point is timed from here. */
    ctx->poll = every ? 1u : 0u;
    rt_ttsp_honour(&vt->ttsp);
    if (every)
        rt_ttsp_request(&vt->ttsp);
    uint32_t w = __atomic_or_fetch(&vt->want, add, __ATOMIC_SEQ_CST);
    return w != 0;
}

void lev_vt_fail(lev_ctx *ctx, int err, const char *detail)
{
    rt_vt *vt = rt_vt_of(ctx);
    if (vt->err)
        return;
    vt->err = err ? err : LEV_EFAILED;
    free(vt->errdetail);
    vt->errdetail = detail ? strdup(detail) : NULL;
}

/* ===================================================================
 * The frame slow paths of lev_abi.h, on the VT's arena
 * =================================================================== */

void *lev_frame_push_slow(lev_ctx *ctx, size_t size)
{
    return rt_arena_push_slow(ctx, &rt_vt_of(ctx)->arena, size, LEV_FRAME_ALIGN);
}

void *lev_frame_push_aligned_slow(lev_ctx *ctx, size_t size, size_t align)
{
    return rt_arena_push_slow(ctx, &rt_vt_of(ctx)->arena, size, align);
}

void lev_frame_pop_slow(lev_ctx *ctx, void *frame)
{
    rt_arena_pop_slow(ctx, &rt_vt_of(ctx)->arena, frame);
}

void *lev_frame_callee(lev_ctx *ctx, void *frame, size_t size)
{
    return rt_arena_callee(ctx, &rt_vt_of(ctx)->arena, frame, size);
}

void *lev_frame_spill(lev_ctx *ctx, size_t size, uint32_t fn)
{
    rt_vt *vt = rt_vt_of(ctx);
    void *p = rt_arena_spill(&vt->arena, size, rt_frame_align(vt->mod, fn), fn);
    if (!p)
        lev_vt_fail(ctx, LEV_ENOMEM, "no memory for a frame while unwinding");
    return p;
}
