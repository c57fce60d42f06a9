/* image_torture.c - the torture cycle (LEV_TORTURE): a capture and restore
 * that moves the VT as a resume in another process would.
 *
 * A restore in a new process puts every heap object and frame at a new
 * address; a pointer that the image did not carry (hidden in an integer)
 * then points at nothing valid. So a torture cycle must do the same
 * within one process: every heap object and frame of the VT goes to an
 * address where none of it was, and what a stale pointer reaches at the
 * old address is poison (RT_POISON), never a valid copy.
 *
 * - The capture poisons, in the same walk, every heap object and
 *   travelling static it reached (rt_image_capture_poison); the frames
 *   are poisoned next, and their chunks taken from the arena
 *   (rt_arena_detach).
 * - The old heap objects and chunks stay allocated while the restore
 *   allocates the new ones: the collector cannot hand their memory out,
 *   so no object or frame comes back at its old address.
 * - They stay allocated (quarantined) after the restore too: through the
 *   next cycle at least (S_KEEP_MIN), and through up to S_KEEP_MAX cycles
 *   while all that is held takes at most S_KEEP_BYTES, oldest released
 *   first (the rt_moved records on the VT). Until then a stale pointer
 *   reads poison, never a new object that the collector put there, nor
 *   the VT's next copy of the same object. Memory stays bounded: what a
 *   VT holds beyond its own is at most S_KEEP_BYTES or the S_KEEP_MIN
 *   newest generations, whichever is more, plus the one being replaced;
 *   the poison holds no pointer, so nothing else is kept alive.
 *
 * Travelling statics cannot move within a process: they are poisoned and
 * restored in place. Function and string-literal addresses do not move
 * either. A pointer to them hidden in an integer goes unseen here.
 */
#include <stdlib.h>

#include "arena.h"
#include "image.h"
#include "rt.h"
#include "vt.h"

/* Generations of moved-out memory a VT keeps: always the last
 * S_KEEP_MIN, then up to S_KEEP_MAX while all of them take at most
 * S_KEEP_BYTES. */
#define S_KEEP_MIN 1u
#define S_KEEP_MAX 8u
#define S_KEEP_BYTES ((size_t)16 << 20)

/* Makes gen the VT's newest moved-out memory and releases the oldest
 * generations beyond what it keeps. */
static void s_keep(rt_vt *vt, rt_moved *gen)
{
    gen->older = vt->moved;
    vt->moved = gen;
    size_t bytes = 0;
    unsigned n = 0;
    for (rt_moved **p = &vt->moved; *p; p = &(*p)->older) {
        bytes += (*p)->bytes;
        n++;
        if (n > S_KEEP_MIN && (n > S_KEEP_MAX || bytes > S_KEEP_BYTES)) {
            rt_moved_release(*p);
            *p = NULL;
            break;
        }
    }
}

int rt_image_torture(rt_vt *vt, size_t *img_len)
{
    if (!vt)
        return rt_err(LEV_EINVAL, "rt_image_torture: NULL argument");
    rt_moved *gen = calloc(1, sizeof *gen);
    if (!gen)
        return rt_err(LEV_ENOMEM, "out of memory holding the moved objects");
    uint8_t *img = NULL;
    size_t len = 0;
    int rc = rt_image_capture_poison(vt, &img, &len, gen);
    if (rc) {
        free(gen); /* nothing was poisoned */
        return rc;
    }
    if (img_len)
        *img_len = len;
    rt_arena_scribble(&vt->ctx, &vt->arena);
    gen->chunks = rt_arena_detach(&vt->ctx, &vt->arena);
    gen->bytes += rt_arena_chunks_bytes(gen->chunks);
    rc = rt_restore_into(vt, img, len);
    free(img);
    s_keep(vt, gen);
    return rc;
}
