/* patch.c - image patches (patch.h): the blocks of an image that differ
 * from the image before it, and the image made again from the earlier
 * one and a patch, every count and block number checked first.
 */
#include "patch.h"

#include <stdlib.h>
#include <string.h>

#include "wire.h"

static void s_free_bytes(void *p) { free(p); }

pc_buf *pc_patch_make(const pc_buf *a, const pc_buf *b)
{
    const uint8_t *pa = pc_buf_data(a), *pb = pc_buf_data(b);
    size_t la = pc_buf_len(a), lb = pc_buf_len(b), bs = PC_PATCH_BLOCK;
    size_t nblocks = (lb + bs - 1) / bs, n = 0, bytes = 0;
    if (nblocks > UINT32_MAX)
        return NULL;
    uint32_t *idx = malloc((nblocks ? nblocks : 1) * sizeof *idx);
    if (!idx)
        return NULL;
    for (size_t k = 0; k < nblocks; k++) {
        size_t at = k * bs, bl = lb - at < bs ? lb - at : bs;
        if (at + bl <= la && !memcmp(pa + at, pb + at, bl))
            continue;
        idx[n++] = (uint32_t)k;
        bytes += bl;
    }
    uint8_t *out = NULL;
    size_t olen = 4 + 4 * n + bytes;
    if (bytes * 2 <= lb && (out = malloc(olen))) {
        rt_le32_put(out, (uint32_t)n);
        uint8_t *d = out + 4 + 4 * n;
        for (size_t i = 0; i < n; i++) {
            size_t at = (size_t)idx[i] * bs, bl = lb - at < bs ? lb - at : bs;
            rt_le32_put(out + 4 + 4 * i, idx[i]);
            memcpy(d, pb + at, bl);
            d += bl;
        }
    }
    free(idx);
    pc_buf *patch = out ? pc_buf_wrap(out, olen, s_free_bytes, out) : NULL;
    if (out && !patch)
        free(out);
    return patch;
}

/* Fails a patch: frees out, sets *why, returns NULL. */
static pc_buf *s_bad(uint8_t *out, const char **why, const char *what)
{
    free(out);
    *why = what;
    return NULL;
}

pc_buf *pc_patch_apply(const pc_buf *base, const uint8_t *p, size_t n, uint64_t len,
                       const char **why)
{
    const uint8_t *bp = pc_buf_data(base);
    const size_t blen = pc_buf_len(base);
    const uint64_t bs = PC_PATCH_BLOCK, nblocks = (len + bs - 1) / bs;
    pc_rbuf r;
    pc_rbuf_init(&r, p, n);
    uint32_t k = pc_get_count(&r, 4);
    const void *idx = NULL;
    pc_get_raw(&r, &idx, (size_t)k * 4);
    if (r.bad)
        return s_bad(NULL, why, pc_rbuf_why(&r));
    if (len > ((uint64_t)1 << 40) || k > nblocks)
        return s_bad(NULL, why, "more blocks than the image has");
    uint8_t *out = malloc(len ? (size_t)len : 1);
    if (!out)
        return s_bad(NULL, why, "no memory");
    const uint8_t *data = p + r.off, *end = p + n;
    uint64_t next = 0; /* the first block not written yet */
    for (uint32_t i = 0; i <= k; i++) {
        uint64_t b = i < k ? rt_le32_get((const uint8_t *)idx + 4 * (size_t)i) : nblocks;
        if (b < next || (i < k && b >= nblocks))
            return s_bad(out, why, "block numbers out of order or past the image");
        /* blocks next..b-1 stay as in the base */
        uint64_t from = next * bs, to = b * bs < len ? b * bs : len;
        if (to > from) {
            if (to > blen)
                return s_bad(out, why, "a block left as it was lies past the base image");
            memcpy(out + from, bp + from, (size_t)(to - from));
        }
        if (i == k)
            break;
        uint64_t at = b * bs, bl = len - at < bs ? len - at : bs;
        if ((uint64_t)(end - data) < bl)
            return s_bad(out, why, "the patch is shorter than its blocks");
        memcpy(out + at, data, (size_t)bl);
        data += bl;
        next = b + 1;
    }
    if (data != end)
        return s_bad(out, why, "bytes after the patch's blocks");
    pc_buf *img = pc_buf_wrap(out, (size_t)len, s_free_bytes, out);
    if (!img)
        return s_bad(out, why, "no memory");
    return img;
}
