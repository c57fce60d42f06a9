/* envelope.h - an image as executors ship it: the runtime's image and,
 * behind it, the VT's channel state (runtime/vtchan.h, rt_ch_save) and
 * its executor's causal state (causal.h, pc_cx_image_encode), so that
 * they travel and are held as one. Layout (little-endian):
 *   0 magic u32 "LVE3"   4 tail_len u32   8 image   then the tail:
 *   chan bytes, causal bytes, u32 causal_len
 * The image comes first so that it starts at the same offset in every
 * envelope whatever the channel state's length: the blocks of two
 * envelopes of a VT then line up for patches (patch.h). Workers and
 * holders pass envelopes on as they are; a holder looks inside only to
 * check the image's identity.
 */
#ifndef PC_ENVELOPE_H
#define PC_ENVELOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"

#define PC_ENV_MAGIC 0x3345564Cu /* "LVE3" read little-endian */
#define PC_ENV_HEAD 8u

/* Splits an envelope into its image, its channel state and its causal
 * state (pointers into p; cx may be NULL when the caller has no use for
 * it). False, with *why set, when it is not a well-formed envelope. */
static inline bool pc_env_split(const void *p, size_t n, const uint8_t **chan, size_t *clen,
                                const uint8_t **img, size_t *ilen, const uint8_t **cx,
                                size_t *cxlen, const char **why)
{
    const uint8_t *b = p;
    if (n < PC_ENV_HEAD || rt_le32_get(b) != PC_ENV_MAGIC) {
        *why = "not an image envelope (bad magic or too short)";
        return false;
    }
    size_t t = rt_le32_get(b + 4);
    if (t > n - PC_ENV_HEAD || t < 4) {
        *why = "image envelope: its states longer than the envelope, or cut short";
        return false;
    }
    size_t x = rt_le32_get(b + n - 4);
    if (x > t - 4) {
        *why = "image envelope: causal state longer than the states";
        return false;
    }
    *img = b + PC_ENV_HEAD;
    *ilen = n - PC_ENV_HEAD - t;
    *chan = b + n - t;
    *clen = t - 4 - x;
    if (cx) {
        *cx = *chan + *clen;
        *cxlen = x;
    }
    return true;
}

/* The tail of an envelope (malloc'd, *len its size): chan[clen], then
 * cx[cxlen] and its length. NULL on exhaustion or above 4 GiB. */
static inline uint8_t *pc_env_tail(const uint8_t *chan, size_t clen, const uint8_t *cx,
                                   size_t cxlen, size_t *len)
{
    if (clen > UINT32_MAX - 4 || cxlen > UINT32_MAX - 4 - clen)
        return NULL;
    uint8_t *t = malloc(clen + cxlen + 4);
    if (!t)
        return NULL;
    if (clen)
        memcpy(t, chan, clen);
    if (cxlen)
        memcpy(t + clen, cx, cxlen);
    rt_le32_put(t + clen + cxlen, (uint32_t)cxlen);
    *len = clen + cxlen + 4;
    return t;
}

/* A malloc'd envelope of img[ilen] and the tail tail[tlen]
 * (pc_env_tail's); NULL on exhaustion or a tail above 4 GiB. Caller
 * frees it. */
static inline uint8_t *pc_env_make(const uint8_t *tail, size_t tlen, const uint8_t *img,
                                   size_t ilen, size_t *len)
{
    if (tlen > UINT32_MAX || ilen > SIZE_MAX - PC_ENV_HEAD - tlen)
        return NULL;
    uint8_t *e = malloc(PC_ENV_HEAD + tlen + ilen);
    if (!e)
        return NULL;
    rt_le32_put(e, PC_ENV_MAGIC);
    rt_le32_put(e + 4, (uint32_t)tlen);
    if (ilen)
        memcpy(e + PC_ENV_HEAD, img, ilen);
    if (tlen)
        memcpy(e + PC_ENV_HEAD + ilen, tail, tlen);
    *len = PC_ENV_HEAD + tlen + ilen;
    return e;
}

#endif
