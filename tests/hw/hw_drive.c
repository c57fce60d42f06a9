/* hw_drive.c - straight, torture and migration drivers for the tests'
 * virtual threads (see hw_drive.h for how unwinds are forced).
 */
#include "hw_drive.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GC_THREADS
#include <gc/gc.h>

static void s_report(const char *what, int rc)
{
    fprintf(stderr, "hw_drive: %s failed: %s (%d): %s\n", what, lev_strerror(rc), rc,
            lev_errdetail());
}

void hw_force_unwind(rt_vt *vt)
{
    vt->want = RT_WANT_CAPTURE;
    vt->ctx.poll = 1;
}

int hw_restore_copy(const lev_module *m, const uint8_t *img, size_t len, rt_vt **out)
{
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy)
        return LEV_ENOMEM;
    memcpy(copy, img, len);
    int rc = rt_restore(m, copy, len, out);
    free(copy);
    return rc;
}

int hw_restore_into_copy(rt_vt *vt, const uint8_t *img, size_t len)
{
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy)
        return LEV_ENOMEM;
    memcpy(copy, img, len);
    int rc = rt_restore_into(vt, copy, len);
    free(copy);
    return rc;
}

unsigned hw_arena_chunks(const rt_vt *vt)
{
    unsigned n = 0;
    for (const rt_chunk *c = vt->arena.first; c; c = c->next) {
        n++;
        if (c == vt->arena.cur)
            break;
    }
    return n;
}

static int s_capture(rt_vt *vt, hw_stats *st, uint8_t **img, size_t *len)
{
    int rc = rt_capture(vt, img, len);
    if (rc) {
        s_report("rt_capture", rc);
        return rc;
    }
    if (*len > st->max_image)
        st->max_image = *len;
    return 0;
}

/* The heap is wiped before the frames: rt_image_scribble_reachable() finds
 * the objects by walking the frames, so once rt_arena_scribble() has run it
 * finds nothing to wipe. */
static void s_wipe(rt_vt *vt)
{
    rt_image_scribble_reachable(vt);
    rt_arena_scribble(&vt->ctx, &vt->arena);
}

int hw_cycle(rt_vt *vt, hw_stats *st)
{
    size_t len = 0;
    int rc = rt_image_torture(vt, &len);
    if (rc) {
        s_report("rt_image_torture", rc);
        return rc;
    }
    if (len > st->max_image)
        st->max_image = len;
    st->cycles++;
    return 0;
}

/* Serves an unwind that the driver did not force (LEV_TORTURE set in the
 * environment, or a checkpoint due): what the scheduler would do. */
static int s_serve(rt_vt *vt, hw_stats *st)
{
    uint32_t want = vt->want;
    vt->want = 0;
    if (want & RT_WANT_TORTURE)
        return hw_cycle(vt, st);
    return 0;
}

int hw_run_straight(rt_vt *vt, hw_stats *st)
{
    while (st->steps < HW_MAX_STEPS) {
        st->steps++;
        int r = rt_vt_step(vt);
        if (r != LEV_RUN_UNWIND)
            return r;
        st->unwinds++;
        int rc = s_serve(vt, st);
        if (rc)
            return rc;
    }
    return LEV_ETIMEDOUT;
}

int hw_run_torture(rt_vt *vt, hw_stats *st, unsigned gc_every)
{
    while (st->steps < HW_MAX_STEPS) {
        hw_force_unwind(vt);
        st->steps++;
        int r = rt_vt_step(vt);
        vt->want = 0;
        if (r != LEV_RUN_UNWIND)
            return r;
        st->unwinds++;
        int rc = hw_cycle(vt, st);
        if (rc)
            return rc;
        if (gc_every && st->cycles % gc_every == 0)
            GC_gcollect();
    }
    return LEV_ETIMEDOUT;
}

int hw_run_migrate(rt_vt **vt_p, unsigned at, hw_stats *st)
{
    rt_vt *vt = *vt_p;
    while (st->unwinds < at && st->steps < HW_MAX_STEPS) {
        hw_force_unwind(vt);
        st->steps++;
        int r = rt_vt_step(vt);
        vt->want = 0;
        if (r != LEV_RUN_UNWIND)
            return r; /* ended before safe point `at` */
        st->unwinds++;
    }
    if (st->unwinds < at)
        return LEV_ETIMEDOUT;

    uint8_t *img;
    size_t len;
    int rc = s_capture(vt, st, &img, &len);
    if (rc)
        return rc;
    const lev_module *m = vt->mod;
    s_wipe(vt);
    rt_vt_destroy(vt_p);
    rt_vt *nvt = NULL;
    rc = hw_restore_copy(m, img, len, &nvt);
    free(img);
    if (rc) {
        s_report("rt_restore", rc);
        return rc;
    }
    *vt_p = nvt;
    st->migrations++;
    GC_gcollect();
    return hw_run_straight(nvt, st);
}
