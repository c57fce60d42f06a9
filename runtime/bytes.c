/* bytes.c - the byte codec (bytes.h): the growing little-endian writer
 * and the bounds-checked reader that every encoded field of the project
 * goes through, with the one rule for trailing bytes (rt_rbuf_done).
 */
#include "bytes.h"

#include <stdlib.h>
#include <string.h>

#include "lev_errors.h"
#include "vec.h"

/* ===================================================================
 * Writer
 * =================================================================== */

void rt_wbuf_init(rt_wbuf *w) { memset(w, 0, sizeof *w); }

void rt_wbuf_free(rt_wbuf *w)
{
    free(w->data);
    memset(w, 0, sizeof *w);
}

/* Room for n more bytes (n > 0), or NULL (and w->err set). */
static uint8_t *s_room(rt_wbuf *w, size_t n)
{
    if (w->err)
        return NULL;
    if (n > w->cap - w->len && RT_VEC_RESERVE(w->data, w->cap, w->len, n)) {
        w->err = LEV_ENOMEM;
        return NULL;
    }
    uint8_t *at = w->data + w->len;
    w->len += n;
    return at;
}

void rt_put_u8(rt_wbuf *w, uint8_t v)
{
    uint8_t *p = s_room(w, 1);
    if (p)
        *p = v;
}

void rt_put_u16(rt_wbuf *w, uint16_t v)
{
    uint8_t *p = s_room(w, 2);
    if (p)
        rt_le16_put(p, v);
}

void rt_put_u32(rt_wbuf *w, uint32_t v)
{
    uint8_t *p = s_room(w, 4);
    if (p)
        rt_le32_put(p, v);
}

void rt_put_i32(rt_wbuf *w, int32_t v) { rt_put_u32(w, (uint32_t)v); }

void rt_put_u64(rt_wbuf *w, uint64_t v)
{
    uint8_t *p = s_room(w, 8);
    if (p)
        rt_le64_put(p, v);
}

void rt_put_raw(rt_wbuf *w, const void *p, size_t n)
{
    if (!n)
        return;
    uint8_t *at = s_room(w, n);
    if (at)
        memcpy(at, p, n);
}

void rt_put_blob(rt_wbuf *w, const void *p, size_t n)
{
    if (n > UINT32_MAX) {
        if (!w->err)
            w->err = LEV_ERANGE;
        return;
    }
    rt_put_u32(w, (uint32_t)n);
    rt_put_raw(w, p, n);
}

void rt_put_str(rt_wbuf *w, const char *s) { rt_put_blob(w, s ? s : "", s ? strlen(s) : 0); }

/* ===================================================================
 * Reader
 * =================================================================== */

void rt_rbuf_init(rt_rbuf *r, const void *p, size_t len)
{
    r->p = p;
    r->len = p ? len : 0;
    r->off = 0;
    r->bad = false;
    r->why = NULL;
}

void rt_rbuf_fail(rt_rbuf *r, const char *why)
{
    if (r->bad)
        return;
    r->bad = true;
    r->why = why;
}

/* The next n bytes, or NULL once the payload is too short (marks r bad). */
static const uint8_t *s_take(rt_rbuf *r, size_t n)
{
    if (r->bad)
        return NULL;
    if (n > r->len - r->off) {
        rt_rbuf_fail(r, "payload truncated");
        return NULL;
    }
    const uint8_t *at = r->p + r->off;
    r->off += n;
    return at;
}

uint8_t rt_get_u8(rt_rbuf *r)
{
    const uint8_t *p = s_take(r, 1);
    return p ? *p : 0;
}

uint16_t rt_get_u16(rt_rbuf *r)
{
    const uint8_t *p = s_take(r, 2);
    return p ? rt_le16_get(p) : 0;
}

uint32_t rt_get_u32(rt_rbuf *r)
{
    const uint8_t *p = s_take(r, 4);
    return p ? rt_le32_get(p) : 0;
}

int32_t rt_get_i32(rt_rbuf *r) { return (int32_t)rt_get_u32(r); }

uint64_t rt_get_u64(rt_rbuf *r)
{
    const uint8_t *p = s_take(r, 8);
    return p ? rt_le64_get(p) : 0;
}

bool rt_get_raw(rt_rbuf *r, const void **p, size_t n)
{
    const uint8_t *at = s_take(r, n);
    *p = at;
    return at != NULL;
}

bool rt_get_blob(rt_rbuf *r, const void **p, size_t *n)
{
    uint32_t len = rt_get_u32(r);
    *n = 0;
    if (!rt_get_raw(r, p, len))
        return false;
    *n = len;
    return true;
}

bool rt_get_str(rt_rbuf *r, char *out, size_t cap)
{
    const void *p;
    size_t n;
    if (cap)
        out[0] = '\0';
    if (!rt_get_blob(r, &p, &n))
        return false;
    if (n >= cap || memchr(p, '\0', n)) {
        rt_rbuf_fail(r, n >= cap ? "string too long" : "string holds a NUL byte");
        return false;
    }
    memcpy(out, p, n);
    out[n] = '\0';
    return true;
}

char *rt_get_strdup(rt_rbuf *r, size_t max)
{
    const void *p;
    size_t n;
    if (!rt_get_blob(r, &p, &n))
        return NULL;
    if (n > max || memchr(p, '\0', n)) {
        rt_rbuf_fail(r, n > max ? "string too long" : "string holds a NUL byte");
        return NULL;
    }
    char *s = malloc(n + 1);
    if (!s) {
        rt_rbuf_fail(r, "out of memory");
        return NULL;
    }
    memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

uint32_t rt_get_count(rt_rbuf *r, size_t each)
{
    size_t at = r->off;
    uint32_t n = rt_get_u32(r);
    if (!r->bad && each && n > rt_rbuf_left(r) / each) {
        r->off = at;
        rt_rbuf_fail(r, "count larger than the bytes that follow");
        return 0;
    }
    return n;
}

bool rt_rbuf_done(const rt_rbuf *r) { return !r->bad && r->off == r->len; }

const char *rt_rbuf_why(const rt_rbuf *r)
{
    if (r->bad)
        return r->why ? r->why : "malformed";
    return r->off == r->len ? NULL : "trailing bytes after the payload";
}
