/* hw_drive.h - drivers that run a virtual thread the way the scheduler
 * would, with the unwinds, captures and restores that tests need forced
 * in-process: straight through, in a torture loop, or migrated.
 *
 * How an unwind is forced without LEV_TORTURE (which the runtime reads once
 * from the environment): a safe point is `lev_poll(vt) && lev_safepoint(vt,
 * kind)`. The driver sets vt->ctx.poll = 1 so that the next safe point takes
 * the slow path, and a non-zero reason in vt->want (RT_WANT_CAPTURE) so that
 * lev_safepoint() answers "unwind". lev_safepoint() clears poll again when
 * torture mode is off, so exactly one safe point unwinds per step: each
 * rt_vt_step() advances the VT by one safe point. The driver clears want
 * after each unwind, as the scheduler does once it has served the request.
 */
#ifndef HW_DRIVE_H
#define HW_DRIVE_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "image.h"
#include "vt.h"

typedef struct hw_stats {
    unsigned steps;      /* rt_vt_step calls */
    unsigned unwinds;    /* safe points at which the VT unwound */
    unsigned cycles;     /* torture cycles (hw_cycle) */
    unsigned migrations; /* times the VT moved to a new rt_vt */
    size_t max_image;    /* largest image in bytes */
} hw_stats;

/* Upper bound on the steps of one run, so a broken body cannot loop. */
#define HW_MAX_STEPS 2000000u

/* Makes the next safe point the VT reaches unwind. */
void hw_force_unwind(rt_vt *vt);

/* Runs the VT to its end with no forced unwind (under LEV_TORTURE the
 * unwinds it asks for are served with hw_cycle). Returns the last
 * rt_vt_step result (LEV_RUN_DONE or LEV_RUN_EXIT) or a negative LEV_E code
 * of a failed capture or restore. */
int hw_run_straight(rt_vt *vt, hw_stats *st);

/* One torture cycle at a safe point, as the executor does it
 * (rt_image_torture): capture, poison the old state (heap objects
 * reachable from the VT, then the frames) and restore it at new
 * addresses, the old memory kept allocated. 0 or a negative LEV_E code. */
int hw_cycle(rt_vt *vt, hw_stats *st);

/* Runs the VT to its end, unwinding at every safe point and doing a
 * torture cycle there; a full collection every gc_every cycles (0: never).
 * Returns as hw_run_straight. */
int hw_run_torture(rt_vt *vt, hw_stats *st, unsigned gc_every);

/* Runs the VT to its `at`-th safe point (1-based), captures it there, wipes
 * and destroys it, restores a new VT from a malloc'd copy of the image with
 * rt_restore, collects garbage and runs the new VT to its end. *vt_p is
 * replaced by the new VT. st->migrations says whether the VT got that far.
 * Returns as hw_run_straight. */
int hw_run_migrate(rt_vt **vt_p, unsigned at, hw_stats *st);

/* Restores a VT from a malloc'd copy of exactly img[0..len), so that
 * AddressSanitizer sees any read outside the image. */
int hw_restore_copy(const lev_module *m, const uint8_t *img, size_t len, rt_vt **out);

/* rt_restore_into from a malloc'd copy of exactly img[0..len). */
int hw_restore_into_copy(rt_vt *vt, const uint8_t *img, size_t len);

/* Number of chunks in use in the VT's frame arena. */
unsigned hw_arena_chunks(const rt_vt *vt);

#endif
