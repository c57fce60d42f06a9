/* image_private.h - what the image files share: the layout of an image
 * (constants, header, pointer words), its checksum, the dense array parts
 * written and read without tpl's copies, reading and checking the header
 * and the parts (image_format.c), and running tpl under a guard.
 *
 * Internal to image_format.c, image_capture.c and image_restore.c; nothing
 * else includes it. The layout itself is described in image_format.c.
 */
#ifndef IMAGE_PRIVATE_H
#define IMAGE_PRIVATE_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rt_tpl.h"

#define IMG_MAGIC 0x4C455649u /* "LEVI" */
#define IMG_BULK_MIN 4096u
#define IMG_TAG_OBJ 1ull
#define IMG_TAG_SYM 2ull
#define IMG_TAG_FN 3ull
/* Tag 0 with this payload: a pointer into an object released by lev_free. */
#define IMG_DANGLING (1ull << 32)
/* Tag 0, these ids, the value (or its negation) in the offset: a pointer
 * that holds a small number no object can be at, 1 to 4095 or -4095 to -1
 * (sentinels such as (void *)1 and (void *)-1), carried as it is. */
#define IMG_SENTINEL_LOW (2ull << 32)
#define IMG_SENTINEL_NEG (3ull << 32)
#define IMG_SENTINEL_MAX 4095u
/* Tag 0, this id, an object id in the offset: a pointer to a stream of
 * the C library (a FILE) that the object, the stream's record, describes
 * (streams.c); the restore gets the stream back from the record. */
#define IMG_STREAM (4ull << 32)

#define IMG_ID_MAX ((1u << 30) - 1u)
#define IMG_HDR_FMT "uuUUuuuuU#"
#define IMG_NLEN 16

enum { IMG_OBJ_FRAME = 1, IMG_OBJ_HEAP = 2, IMG_OBJ_STATIC = 3 };
enum { IMG_F_BULK = 1 };
enum { IMG_META_WORDS = 4 };
/* Indices in the header's length table. */
enum {
    IMG_L_META_N,
    IMG_L_META_SZ,
    IMG_L_BSZ_N,
    IMG_L_BSZ_SZ,
    IMG_L_S1_N,
    IMG_L_S1_SZ,
    IMG_L_S2_N,
    IMG_L_S2_SZ,
    IMG_L_S4_N,
    IMG_L_S4_SZ,
    IMG_L_S8_N,
    IMG_L_S8_SZ,
    IMG_L_BODY,
    IMG_L_SUM,
    IMG_L_LIVE,
    IMG_L_RESERVED
};

/* Where a dangling pointer points after restore (and is known again by
 * the next capture). */
extern const char rt_img_dangling;

/* An image's header, as packed with IMG_HDR_FMT. */
typedef struct rt_img_header {
    uint32_t magic, version;
    uint64_t module_hash, vt_id;
    uint32_t epoch, entry, nobj, nframes;
    uint64_t len[IMG_NLEN];
} rt_img_header;

/* The checksum of an image: the header's values (but its checksum) and
 * the n bytes of body after it. */
uint64_t rt_img_checksum(const rt_img_header *h, const unsigned char *body, size_t n);

/* Copies n bytes; a single item of 1, 2, 4 or 8 bytes (most fields of
 * small objects) is one load and one store instead of a call to memcpy
 * with a size unknown at compile time. */
static inline void rt_img_copy(void *dst, const void *src, size_t n)
{
    switch (n) {
    case 8:
        memcpy(dst, src, 8);
        break;
    case 4:
        memcpy(dst, src, 4);
        break;
    case 2:
        memcpy(dst, src, 2);
        break;
    case 1:
        memcpy(dst, src, 1);
        break;
    default:
        memcpy(dst, src, n);
    }
}

/* tpl format of a dense array of `kind`. */
char *rt_img_arr_fmt(uint32_t kind);

/* A dense array part written directly has this many bytes before its
 * items (see image_format.c). */
#define IMG_PRE 15u

/* Writes the tpl image of n items of kind (n * width + IMG_PRE bytes). */
void rt_img_direct_write(uint8_t *dst, uint32_t kind, const void *items, size_t n);

/* Whether rt_img_direct_write writes parts of kind exactly as tpl does. */
bool rt_img_direct_ok(uint32_t kind);

/* Whether the sz bytes at p are exactly the image rt_img_direct_write
 * makes of n items of kind. */
bool rt_img_direct_match(const uint8_t *p, uint64_t sz, uint32_t kind, uint64_t n);

/* Byte size of a packed header (it does not depend on its values), or 0
 * if tpl cannot pack one. */
size_t rt_img_header_size(void);

/* Checks that a part is a tpl image of the expected format and fixed
 * length before tpl_load ever sees it. LEV_EIMAGE names it `what`. */
int rt_img_check_fmt(const uint8_t *p, size_t n, const char *fmt, uint32_t expect_len,
                     const char *what);

/* Unpacks one dense array part into dst (n items of kind). */
int rt_img_unpack_arr(const uint8_t *p, size_t sz, uint32_t kind, void *dst, size_t n,
                      const char *what);

/* Reads, unpacks and checks the header of img (magic, version, body
 * length, checksum); *hsz is its size. LEV_EIMAGE, LEV_EVERSION. */
int rt_img_read_header(const uint8_t *img, size_t len, rt_img_header *h, size_t *hsz);

/* Runs `call` with tpl's fatal hook returning here (then rc is LEV_ENOMEM). */
#define RT_IMG_GUARDED(rc, call)                                                                   \
    do {                                                                                           \
        jmp_buf jb_;                                                                               \
        jmp_buf **slot_ = rt_tpl_jmp_slot();                                                       \
        jmp_buf *saved_ = *slot_;                                                                  \
        if (setjmp(jb_) == 0) {                                                                    \
            *slot_ = &jb_;                                                                         \
            rc = (call);                                                                           \
        } else {                                                                                   \
            rc = LEV_ENOMEM;                                                                       \
        }                                                                                          \
        *slot_ = saved_;                                                                           \
    } while (0)

#endif
