/* image_format.c - the layout of a checkpoint image, shared by capture
 * (image_capture.c) and restore (image_restore.c): its checksum, the dense
 * array parts written and read without tpl's copies, and reading and
 * checking the header and the tpl parts; rt_image_info_get.
 *
 * An image is a sequence of tpl images (tpl fixes byte order on unpack):
 *
 *   header   "uuUUuuuuU#"  magic, version, module hash, VT id, epoch,
 *                          entry function, objects, frames, and a table of
 *                          stream sizes, body length and checksum
 *   meta     "u#"          4 words per object: kind|flags, type/fn/static
 *                          id, element count or pc, bulk image size
 *   s1..s8   "c#" "v#" "u#" "U#"  the objects' scalars by width, in object
 *                          order; swizzled pointers go in the 8-byte stream
 *   bulk...  one "c#".."U#" image per large dense object, mapped directly
 *            on the object's memory (no intermediate copy)
 *
 * Objects are numbered frames first (bottom to top), then travelling
 * statics, then heap objects in discovery order. A pointer is encoded as
 * one 64-bit word: tag (2 bits: object, static symbol, function), id (30
 * bits), byte offset (32 bits); NULL is 0. A tagged union (LEV_K_TAGGED)
 * is one byte in s1, what its tag selected at capture (0 bytes, 1 data
 * pointer, 2 function pointer), and one word in s8, the swizzled pointer
 * or the union's bytes, so every stream's length still follows from the
 * object table. The checksum covers the header fields and every byte
 * after the header.
 *
 * Decoding never reads outside the buffer it is given: every count is
 * checked against the stream it consumes before anything is allocated.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <tpl.h>

#include "image.h"
#include "image_private.h"
#include "module.h"
#include "rt.h"
#include "rt_tpl.h"

const char rt_img_dangling = 0;

/* ===================================================================
 * Checksum: a 4-lane multiply-rotate hash over little-endian words, so
 * every host computes the same value for the same bytes.
 * =================================================================== */

static inline uint64_t s_le64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline uint64_t s_rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

#define S_P1 0x9E3779B185EBCA87ull
#define S_P2 0xC2B2AE3D27D4EB4Full

static uint64_t s_hash_bytes(const unsigned char *p, size_t n, uint64_t seed)
{
    uint64_t a = seed + S_P1, b = seed ^ S_P2, c = seed, d = seed - S_P1;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        a = s_rotl(a + s_le64(p + i) * S_P2, 31) * S_P1;
        b = s_rotl(b + s_le64(p + i + 8) * S_P2, 31) * S_P1;
        c = s_rotl(c + s_le64(p + i + 16) * S_P2, 31) * S_P1;
        d = s_rotl(d + s_le64(p + i + 24) * S_P2, 31) * S_P1;
    }
    uint64_t h = s_rotl(a, 1) + s_rotl(b, 7) + s_rotl(c, 12) + s_rotl(d, 18) + n;
    for (; i + 8 <= n; i += 8)
        h = s_rotl(h ^ (s_le64(p + i) * S_P2), 27) * S_P1;
    for (; i < n; i++)
        h = s_rotl(h ^ (p[i] * S_P1), 11) * S_P2;
    h ^= h >> 33;
    h *= S_P2;
    h ^= h >> 29;
    return h;
}

uint64_t rt_img_checksum(const rt_img_header *h, const unsigned char *body, size_t n)
{
    unsigned char buf[8 * (6 + IMG_NLEN)];
    uint64_t word5 = ((uint64_t)h->entry << 32) | h->nobj;
    uint64_t v[6 + IMG_NLEN] = {h->magic, h->version, h->module_hash, h->vt_id, h->epoch, word5};
    v[5] ^= (uint64_t)h->nframes << 16;
    for (int i = 0; i < IMG_NLEN; i++)
        v[6 + i] = i == IMG_L_SUM ? 0 : h->len[i];
    for (size_t i = 0; i < 6 + IMG_NLEN; i++)
        for (int k = 0; k < 8; k++)
            buf[i * 8 + k] = (unsigned char)(v[i] >> (8 * k));
    return s_hash_bytes(body, n, s_hash_bytes(buf, sizeof buf, 0x4C4556));
}

char *rt_img_arr_fmt(uint32_t kind)
{
    switch (kind) {
    case LEV_K_B1:
        return "c#";
    case LEV_K_B2:
        return "v#";
    case LEV_K_B4:
        return "u#";
    default:
        return "U#";
    }
}

/* ===================================================================
 * Dense parts without tpl's copies
 *
 * A dense array part is a tpl image of one fixed-length array: "tpl",
 * a flags byte, the image's length (32 bits), the format ("U#" etc., NUL
 * terminated), the item count (32 bits), then the items, all in this
 * host's byte order. The streams are written and read as such directly
 * (one copy each way, none on restore) when a tpl image of two items
 * that image_format.c builds comes out byte for byte as tpl's own; otherwise,
 * and for any part that is not exactly of that shape (another byte
 * order, damage), tpl does the work.
 * =================================================================== */

/* Per width index: 0 not checked yet, 1 direct, -1 through tpl. */
static _Atomic int s_direct_state[4];
static _Atomic int s_tpl_flags;

static inline uint32_t s_widx(uint32_t kind) { return kind - LEV_K_B1; }

void rt_img_direct_write(uint8_t *dst, uint32_t kind, const void *items, size_t n)
{
    uint32_t w = rt_kind_width(kind), total = (uint32_t)(IMG_PRE + n * w), cnt = (uint32_t)n;
    memcpy(dst, "tpl", 3);
    dst[3] = (uint8_t)atomic_load(&s_tpl_flags);
    memcpy(dst + 4, &total, 4);
    memcpy(dst + 8, rt_img_arr_fmt(kind), 3); /* with its NUL */
    memcpy(dst + 11, &cnt, 4);
    if (n)
        memcpy(dst + IMG_PRE, items, n * w);
}

/* Whether this file writes parts of kind exactly as tpl does. */
bool rt_img_direct_ok(uint32_t kind)
{
    int st = atomic_load(&s_direct_state[s_widx(kind)]);
    if (st)
        return st > 0;
    uint64_t items[2] = {0x0102030405060708ull, 0x1112131415161718ull};
    unsigned char mine[IMG_PRE + 16];
    void *theirs = NULL;
    size_t len = 0;
    tpl_node *tn = tpl_map(rt_img_arr_fmt(kind), items, 2);
    bool ok = tn && tpl_pack(tn, 0) == 0 && tpl_dump(tn, TPL_MEM, &theirs, &len) == 0 && theirs;
    if (tn)
        tpl_free(tn);
    uint32_t w = rt_kind_width(kind);
    if (ok && len == IMG_PRE + 2 * w) {
        atomic_store(&s_tpl_flags, ((unsigned char *)theirs)[3]);
        /* The first 2 * w bytes of items, as tpl_map read them. */
        rt_img_direct_write(mine, kind, items, 2);
        ok = memcmp(mine, theirs, len) == 0;
    } else {
        ok = false;
    }
    free(theirs);
    atomic_store(&s_direct_state[s_widx(kind)], ok ? 1 : -1);
    return ok;
}

/* Whether the sz bytes at p are exactly the image rt_img_direct_write makes
 * of n items of kind. */
bool rt_img_direct_match(const uint8_t *p, uint64_t sz, uint32_t kind, uint64_t n)
{
    uint32_t w = rt_kind_width(kind);
    if (!rt_img_direct_ok(kind) || sz != IMG_PRE + n * w || sz > UINT32_MAX)
        return false;
    unsigned char pre[IMG_PRE];
    rt_img_direct_write(pre, kind, NULL, 0);
    uint32_t total = (uint32_t)sz, cnt = (uint32_t)n;
    memcpy(pre + 4, &total, 4);
    memcpy(pre + 11, &cnt, 4);
    return memcmp(pre, p, IMG_PRE) == 0;
}

/* ===================================================================
 * Header and parts
 * =================================================================== */

static size_t s_hdr_size;

size_t rt_img_header_size(void)
{
    if (s_hdr_size)
        return s_hdr_size;
    rt_img_header h = {0};
    tpl_node *tn = tpl_map(IMG_HDR_FMT, &h.magic, &h.version, &h.module_hash, &h.vt_id, &h.epoch,
                           &h.entry, &h.nobj, &h.nframes, h.len, IMG_NLEN);
    size_t sz = 0;
    if (tn) {
        if (tpl_pack(tn, 0) == 0)
            tpl_dump(tn, TPL_GETSIZE, &sz);
        tpl_free(tn);
    }
    s_hdr_size = sz;
    return sz;
}

/* Checks that a part is a tpl image of the expected format and fixed
 * length before tpl_load ever sees it. */
int rt_img_check_fmt(const uint8_t *p, size_t n, const char *fmt, uint32_t expect_len,
                     const char *what)
{
    char *f = tpl_peek(TPL_MEM, p, n);
    if (!f)
        return rt_err(LEV_EIMAGE, "%s is not a tpl image", what);
    int ok = strcmp(f, fmt) == 0;
    free(f);
    if (!ok)
        return rt_err(LEV_EIMAGE, "%s has an unexpected format", what);
    uint32_t nfx = 0, *fx = NULL;
    f = tpl_peek(TPL_MEM | TPL_FXLENS, p, n, &nfx, &fx);
    if (!f)
        return rt_err(LEV_EIMAGE, "%s has no array length", what);
    free(f);
    uint32_t got = nfx == 1 && fx ? fx[0] : 0;
    free(fx);
    if (nfx != 1 || got != expect_len)
        return rt_err(LEV_EIMAGE, "%s has %u items, the header says %u", what, got, expect_len);
    return 0;
}

/* Unpacks one dense array part into dst (n items of kind). */
int rt_img_unpack_arr(const uint8_t *p, size_t sz, uint32_t kind, void *dst, size_t n,
                      const char *what)
{
    int rc = rt_img_check_fmt(p, sz, rt_img_arr_fmt(kind), (uint32_t)n, what);
    if (rc)
        return rc;
    tpl_node *tn = tpl_map(rt_img_arr_fmt(kind), dst, (int)n);
    if (!tn)
        return rt_err(LEV_ENOMEM, "tpl_map failed");
    if (tpl_load(tn, TPL_MEM, p, sz) != 0) {
        tpl_free(tn);
        return rt_err(LEV_EIMAGE, "%s is damaged", what);
    }
    rc = tpl_unpack(tn, 0) == 1 ? 0 : rt_err(LEV_EIMAGE, "%s cannot be unpacked", what);
    tpl_free(tn);
    return rc;
}

int rt_img_read_header(const uint8_t *img, size_t len, rt_img_header *h, size_t *hsz)
{
    size_t hs = rt_img_header_size();
    if (!img || len < 8 || hs == 0)
        return rt_err(LEV_EIMAGE, "image of %zu bytes is too short", len);
    /* tpl sets only its byte-order bit for a format without strings; the
     * checksum covers the header's values, not this byte. */
    if (img[3] & ~1u)
        return rt_err(LEV_EIMAGE, "image header has unknown flags 0x%02x", img[3]);
    char *f = tpl_peek(TPL_MEM, img, len < hs ? len : hs);
    if (!f)
        return rt_err(LEV_EIMAGE, "image does not begin with a tpl header");
    int same = strcmp(f, IMG_HDR_FMT) == 0;
    free(f);
    if (!same)
        return rt_err(LEV_EVERSION, "image header has a foreign format");
    if (len < hs)
        return rt_err(LEV_EIMAGE, "image of %zu bytes is truncated inside its header", len);
    memset(h, 0, sizeof *h);
    tpl_node *tn = tpl_map(IMG_HDR_FMT, &h->magic, &h->version, &h->module_hash, &h->vt_id,
                           &h->epoch, &h->entry, &h->nobj, &h->nframes, h->len, IMG_NLEN);
    if (!tn)
        return rt_err(LEV_ENOMEM, "tpl_map failed");
    int rc = 0;
    if (tpl_load(tn, TPL_MEM, img, hs) != 0 || tpl_unpack(tn, 0) != 1)
        rc = rt_err(LEV_EIMAGE, "image header is damaged");
    tpl_free(tn);
    if (rc)
        return rc;
    if (h->magic != IMG_MAGIC)
        return rt_err(LEV_EIMAGE, "image has a bad magic number");
    if (h->version != RT_IMAGE_VERSION)
        return rt_err(LEV_EVERSION, "image format version %u, this runtime reads version %u",
                      h->version, RT_IMAGE_VERSION);
    if (h->len[IMG_L_BODY] != len - hs)
        return rt_err(LEV_EIMAGE, "image body is %zu bytes, the header says %llu%s", len - hs,
                      (unsigned long long)h->len[IMG_L_BODY],
                      len - hs < h->len[IMG_L_BODY] ? " (truncated)" : "");
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION /* the fuzzers reach what it guards */
    if (rt_img_checksum(h, img + hs, len - hs) != h->len[IMG_L_SUM])
        return rt_err(LEV_EIMAGE, "image checksum does not match (damaged)");
#endif
    *hsz = hs;
    return 0;
}

static int s_info_guarded(const uint8_t *img, size_t len, rt_image_info *info)
{
    rt_img_header h;
    size_t hs;
    int rc = rt_img_read_header(img, len, &h, &hs);
    if (rc)
        return rc;
    info->version = h.version;
    info->module_hash = h.module_hash;
    info->vt_id = h.vt_id;
    info->epoch = h.epoch;
    info->nobjects = h.nobj;
    info->nframes = h.nframes;
    info->live_bytes = h.len[IMG_L_LIVE];
    return 0;
}

int rt_image_info_get(const uint8_t *img, size_t len, rt_image_info *info)
{
    if (!info)
        return rt_err(LEV_EINVAL, "rt_image_info_get: NULL argument");
    rt_init();
    int rc;
    RT_IMG_GUARDED(rc, s_info_guarded(img, len, info));
    return rc;
}
