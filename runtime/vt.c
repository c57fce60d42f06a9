/* vt.c - virtual threads: creation with an entry frame, running one on the
 * calling OS thread until it unwinds or ends, and the safe-point slow path
 * that decides whether a VT must unwind (torture, checkpoint, yield, block).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GC_THREADS
#include <gc/gc.h>

#include "rt.h"

static _Atomic uint64_t s_next_id = 2; /* 0: LEV_ANY, 1: LEV_CLIENT */
static __thread rt_vt *s_current;

uint64_t rt_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

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

int rt_vt_alloc(const lev_module *m, uint32_t fn, rt_vt **out, void **frame)
{
    rt_init();
    if (!m || fn >= m->desc->nfns || !m->desc->fns[fn].entry || !m->desc->fns[fn].frame_type)
        return rt_err(LEV_EINVAL, "function id %u is not an entry of the module", fn);
    rt_vt *vt = GC_malloc_uncollectable(sizeof *vt);
    if (!vt)
        return LEV_ENOMEM;
    memset(vt, 0, sizeof *vt);
    vt->mod = m;
    vt->id = atomic_fetch_add(&s_next_id, 1);
    vt->epoch = 1;
    vt->entry = fn;
    vt->state = RT_VT_NEW;
    uint32_t every = rt_torture_every();
    if (every) {
        vt->torture_left = every;
        vt->ctx.poll = 1;
    }
    size_t size = m->types[m->desc->fns[fn].frame_type].size;
    void *fr = lev_frame_push(&vt->ctx, size, fn);
    if (!fr) {
        GC_free(vt);
        return LEV_ENOMEM;
    }
    memset((char *)fr + sizeof(lev_frame), 0, size - sizeof(lev_frame));
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
    free(vt->errdetail);
    free(vt->result);
    GC_free(vt);
    *vt_p = NULL;
}

rt_vt *rt_vt_current(void) { return s_current; }

void *rt_vt_bottom(rt_vt *vt) { return vt->arena.first ? vt->arena.first->data : NULL; }

int rt_vt_step(rt_vt *vt)
{
    lev_frame *bottom = rt_vt_bottom(vt);
    if (!bottom || vt->state == RT_VT_DONE || vt->state == RT_VT_FAILED)
        return LEV_RUN_EXIT;
    const lev_fn_desc *fd = &vt->mod->desc->fns[vt->entry];
    rt_vt *prev = s_current;
    s_current = vt;
    vt->state = RT_VT_RUNNING;
    rt_ttsp_run_start(vt);
    int r = fd->entry(&vt->ctx, bottom);
    rt_ttsp_run_end(vt);
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
    rt_vt *vt = (rt_vt *)ctx;
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
    if (vt->next_ck_ns && rt_now_ns() >= vt->next_ck_ns)
        add |= RT_WANT_CAPTURE;
    /* Clear the poll before reading `want`: a request that lands after the
     * read leaves poll set and is seen at the next safe point. The time
     * to this safe point is taken after the clear too, for the same
     * reason (a request stamps the VT before it sets the poll). Torture
     * asks again at once: the next safe point is timed from here. */
    ctx->poll = every ? 1u : 0u;
    rt_ttsp_honour(vt);
    if (every)
        rt_ttsp_request(vt);
    uint32_t w = __atomic_or_fetch(&vt->want, add, __ATOMIC_SEQ_CST);
    return w != 0;
}

void lev_vt_fail(lev_ctx *ctx, int err, const char *detail)
{
    rt_vt *vt = (rt_vt *)ctx;
    if (vt->err)
        return;
    vt->err = err ? err : LEV_EFAILED;
    free(vt->errdetail);
    vt->errdetail = detail ? strdup(detail) : NULL;
}
