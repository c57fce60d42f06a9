/* patch.h - image patches (patch.c): the blocks of a checkpoint image
 * that changed since the image before it, so that a worker sends a holder
 * that has the earlier image only those (H_PATCH), and the holder makes
 * the new image from its own and the patch. An image is cut in blocks of
 * PC_PATCH_BLOCK bytes, the last as long as it is; a patch is
 *   u32 n, n x u32 block number (increasing), then the n blocks' bytes.
 * Blocks compare by their bytes: an image whose layout stays (objects of
 * the same sizes in the same order) patches small.
 */
#ifndef PC_PATCH_H
#define PC_PATCH_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* The patch that makes image b of image a, or NULL when its blocks would
 * be over half of b (b whole is then as cheap) or memory is short. */
pc_buf *pc_patch_make(const pc_buf *a, const pc_buf *b);

/* The image, len bytes long, that patch p[n] makes of image base: a new
 * buffer, or NULL with *why set (a damaged patch, a patch of another
 * base, or no memory). Reads nothing outside base and p[n]. */
pc_buf *pc_patch_apply(const pc_buf *base, const uint8_t *p, size_t n, uint64_t len,
                       const char **why);

#endif
