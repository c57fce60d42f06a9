/* bytes.h - the project's one byte codec (bytes.c): little-endian stores
 * and loads at a fixed place, a growing writer (rt_wbuf) and a
 * bounds-checked reader (rt_rbuf). Everything Leverage writes to bytes
 * or reads from them field by field goes through here: the channel state
 * of a VT (vtchan.c) and every message of the wire protocol (the peer
 * controller's pc_wbuf and pc_rbuf are these types). Depends on nothing
 * but lev_errors.h; part of the runtime's base layer.
 *
 * One rule for trailing bytes: a reader accepts a payload only when
 * rt_rbuf_done is true, i.e. every byte was read and no read failed.
 */
#ifndef RT_BYTES_H
#define RT_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ===================================================================
 * Fixed places (pure, async-signal-safe)
 * =================================================================== */

static inline void rt_le16_put(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void rt_le32_put(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline void rt_le64_put(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint16_t rt_le16_get(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }

static inline uint32_t rt_le32_get(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t rt_le64_get(const uint8_t *p)
{
    return (uint64_t)rt_le32_get(p) | (uint64_t)rt_le32_get(p + 4) << 32;
}

/* ===================================================================
 * Writer
 * =================================================================== */

/* A growing little-endian buffer. A failed allocation sets `err` and
 * makes every later put a no-op, so a writer checks once at the end. */
typedef struct rt_wbuf {
    uint8_t *data; /* malloc'd; the caller may take it over (then sets it NULL) */
    size_t len, cap;
    int err; /* 0, LEV_ENOMEM, or LEV_ERANGE (a blob above 4 GiB) */
} rt_wbuf;

void rt_wbuf_init(rt_wbuf *w);
/* Frees the bytes and empties w; w may be used again after rt_wbuf_init. */
void rt_wbuf_free(rt_wbuf *w);
void rt_put_u8(rt_wbuf *w, uint8_t v);
void rt_put_u16(rt_wbuf *w, uint16_t v);
void rt_put_u32(rt_wbuf *w, uint32_t v);
void rt_put_i32(rt_wbuf *w, int32_t v);
void rt_put_u64(rt_wbuf *w, uint64_t v);
void rt_put_raw(rt_wbuf *w, const void *p, size_t n);
void rt_put_blob(rt_wbuf *w, const void *p, size_t n); /* u32 length + bytes */
void rt_put_str(rt_wbuf *w, const char *s);            /* as a blob, s NULL: "" */

/* ===================================================================
 * Reader
 * =================================================================== */

/* A bounds-checked reader over received bytes. A read past the end or a
 * malformed field sets `bad` (with `why`, a static string), returns zero
 * or an empty value, and makes every later read fail too, so a reader
 * checks once. */
typedef struct rt_rbuf {
    const uint8_t *p;
    size_t len, off;
    bool bad;
    const char *why;
} rt_rbuf;

void rt_rbuf_init(rt_rbuf *r, const void *p, size_t len);
uint8_t rt_get_u8(rt_rbuf *r);
uint16_t rt_get_u16(rt_rbuf *r);
uint32_t rt_get_u32(rt_rbuf *r);
int32_t rt_get_i32(rt_rbuf *r);
uint64_t rt_get_u64(rt_rbuf *r);
/* Points *p at n raw bytes inside the buffer (no copy). */
bool rt_get_raw(rt_rbuf *r, const void **p, size_t n);
/* A blob: *p points inside the buffer, *n its length. */
bool rt_get_blob(rt_rbuf *r, const void **p, size_t *n);
/* A string of at most cap - 1 bytes without NUL inside, copied into
 * out[cap] and terminated. Longer, or holding a NUL: bad. */
bool rt_get_str(rt_rbuf *r, char *out, size_t cap);
/* A string as a malloc'd copy (NULL and bad on failure); at most max bytes. */
char *rt_get_strdup(rt_rbuf *r, size_t max);
/* A u32 count of entries that take at least `each` bytes (each > 0):
 * bad, and 0, when the bytes left cannot hold that many. */
uint32_t rt_get_count(rt_rbuf *r, size_t each);
/* Marks r bad with `why` (a static string) unless it is bad already:
 * a field read whole but wrong fails the reader as a short one does. */
void rt_rbuf_fail(rt_rbuf *r, const char *why);
/* The bytes not read yet. */
static inline size_t rt_rbuf_left(const rt_rbuf *r) { return r->len - r->off; }
/* True when every byte was read and nothing was bad. */
bool rt_rbuf_done(const rt_rbuf *r);
/* Why rt_rbuf_done is false (or NULL when it is true). */
const char *rt_rbuf_why(const rt_rbuf *r);

#endif
