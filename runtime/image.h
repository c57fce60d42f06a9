/* image.h - checkpoint images: capture of a suspended VT into a portable
 * image (image_capture.c), restore of a VT from one (image_restore.c),
 * reading an image's header (image_format.c, which also holds the layout),
 * and the torture cycle, which moves a VT through both (image_torture.c).
 *
 * Internal (not installed). Depends on vt.h; the executor and rtmain are
 * above it.
 */
#ifndef IMAGE_H
#define IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "vt.h"

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

/* Captures a suspended (not running) VT into a new image, which carries
 * the VT's id and epoch as they are now. Caller owns
 * *img and frees it with free(). LEV_ECAPTURE names the function or type
 * and field holding a pointer that cannot be encoded. */
int rt_capture(rt_vt *vt, uint8_t **img, size_t *len);

/* Where rt_capture_into writes an image: alloc(len, ud) lends len
 * writable bytes, or NULL, and the capture then uses malloc (the image is
 * then freed with free(): the caller tells which by the address);
 * release(img, ud) takes back a lent buffer whose capture failed. */
typedef struct rt_img_alloc {
    uint8_t *(*alloc)(size_t len, void *ud);
    void (*release)(uint8_t *img, void *ud);
    void *ud;
} rt_img_alloc;

/* rt_capture, the image written into memory from a (NULL, or a->alloc
 * NULL: malloc). */
int rt_capture_into(rt_vt *vt, const rt_img_alloc *a, uint8_t **img, size_t *len);

/* Builds a new VT from an image, for module m, not spawned, with the
 * image's id and epoch (rt_vt_set_identity may set others before it is
 * spawned). Caller owns *out (rt_vt_destroy). Never reads outside
 * img[0..len). LEV_EIMAGE, LEV_EVERSION, LEV_EMODULE, LEV_ENOMEM. */
int rt_restore(const lev_module *m, const uint8_t *img, size_t len, rt_vt **out);

/* Replaces the frames and heap graph of `vt` with those of the image
 * (same VT, same id), without touching its scheduling state. */
int rt_restore_into(rt_vt *vt, const uint8_t *img, size_t len);

/* Reads and checks an image's header (and checksum). */
int rt_image_info_get(const uint8_t *img, size_t len, rt_image_info *info);

/* Overwrites every heap object and travelling static reachable from the
 * VT's frames with RT_POISON (torture mode). It finds them through the
 * frames, so call it before rt_arena_scribble. Returns 0 or the error of
 * the walk (e.g. LEV_ECAPTURE). */
int rt_image_scribble_reachable(rt_vt *vt);

/* rt_capture, then, in the same walk, what rt_image_scribble_reachable
 * does, keeping the poisoned heap objects allocated: gen->objs (GC-
 * uncollectable, rt_moved_release frees it) holds their gen->nobjs
 * headers and gen->bytes counts them. On failure nothing is poisoned
 * and there is no image. */
int rt_image_capture_poison(rt_vt *vt, uint8_t **img, size_t *len, rt_moved *gen);

/* One torture cycle that moves the VT: capture it, poison its reachable
 * heap, its travelling statics and its frames, and restore it with every
 * heap object and frame at a new address, the old ones kept allocated
 * (so not reused) for at least the next cycle (image_torture.c). With
 * img_len, *img_len is the image's size. 0 or the error of the capture
 * or of the restore: after a failed restore the VT has no frames. */
int rt_image_torture(rt_vt *vt, size_t *img_len);

#endif
