/* envelope.h - an image as executors ship it: the runtime's image and
 * the VT's channel state (runtime/vtchan.h, rt_ch_save) behind it, so
 * that the two travel and are held as one. Layout (little-endian):
 *   0 magic u32 "LVE2"   4 chan_len u32   8 image   n-chan_len chan bytes
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

#define PC_ENV_MAGIC 0x3245564Cu /* "LVE2" read little-endian */
#define PC_ENV_HEAD 8u

/* Splits an envelope into its channel state and its image (pointers into
 * p). False, with *why set, when it is not a well-formed envelope. */
static inline bool pc_env_split(const void *p, size_t n, const uint8_t **chan, size_t *clen,
                                const uint8_t **img, size_t *ilen, const char **why)
{
    const uint8_t *b = p;
    if (n < PC_ENV_HEAD || rt_le32_get(b) != PC_ENV_MAGIC) {
        *why = "not an image envelope (bad magic or too short)";
        return false;
    }
    size_t c = rt_le32_get(b + 4);
    if (c > n - PC_ENV_HEAD) {
        *why = "image envelope: channel state longer than the envelope";
        return false;
    }
    *img = b + PC_ENV_HEAD;
    *ilen = n - PC_ENV_HEAD - c;
    *chan = b + n - c;
    *clen = c;
    return true;
}

/* A malloc'd envelope of chan[clen] and img[ilen]; NULL on exhaustion
 * or a channel state above 4 GiB. Caller frees it. */
static inline uint8_t *pc_env_make(const uint8_t *chan, size_t clen, const uint8_t *img,
                                   size_t ilen, size_t *len)
{
    if (clen > UINT32_MAX || ilen > SIZE_MAX - PC_ENV_HEAD - clen)
        return NULL;
    uint8_t *e = malloc(PC_ENV_HEAD + clen + ilen);
    if (!e)
        return NULL;
    rt_le32_put(e, PC_ENV_MAGIC);
    rt_le32_put(e + 4, (uint32_t)clen);
    if (ilen)
        memcpy(e + PC_ENV_HEAD, img, ilen);
    if (clen)
        memcpy(e + PC_ENV_HEAD + ilen, chan, clen);
    *len = PC_ENV_HEAD + clen + ilen;
    return e;
}

#endif
