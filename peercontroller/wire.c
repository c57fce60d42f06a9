/* wire.c - the codec of the wire protocol (wire.h): the fixed header
 * frame, the names of the message types, the little-endian writer and
 * bounds-checked reader of structured payloads, and the payloads that
 * more than one part writes or reads (C_STATS_REPLY). Every byte that arrives
 * from the network is read through here.
 */
#include "wire.h"

#include <stdlib.h>
#include <string.h>

#include "lev_client.h"
#include "lev_errors.h"

/* ===================================================================
 * Little-endian helpers
 * =================================================================== */

static void s_le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void s_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void s_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t s_rd16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }

static uint32_t s_rd32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint64_t s_rd64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* ===================================================================
 * Header
 * =================================================================== */

/* X(name): every type, once; the decoder accepts only these. */
// clang-format off
#define PC_TYPES(X)                                                                   \
    X(M_PING) X(M_ACK) X(M_PING_REQ) X(M_JOIN) X(M_SYNC) X(M_GOSSIP)                   \
    X(C_OPEN) X(C_START) X(C_CLOSE) X(C_PING) X(C_OPENED) X(C_STARTED) X(C_CLOSED)     \
    X(C_PONG) X(C_ERROR) X(C_RESULT) X(C_REPORT) X(C_SEND) X(C_GSET) X(C_GGET)         \
    X(C_SENT) X(C_GSET_OK) X(C_GVALUE) X(C_STATS) X(C_STATS_REPLY)                     \
    X(W_ENROL) X(W_ENROLLED) X(W_MODULE) X(W_MODULE_OK) X(W_RUN) X(W_RESUME)           \
    X(W_DONE) X(W_REPORT) X(W_STOPPED) X(W_FENCE) X(W_CLOSE) X(W_LOST) X(W_PLACE_ERR)  \
    X(W_HOLDERS) X(W_OUT) X(W_ACK) X(W_IN) X(W_RESYNC) X(W_UNKNOWN)                    \
    X(H_HOLD) X(H_HELD) X(H_SEND) X(H_MISSING) X(H_DROP)                               \
    X(S_STATUS) X(S_STATUS_REPLY)                                                      \
    X(X_READY) X(X_MODULE) X(X_MODULE_OK) X(X_RUN) X(X_RESUME) X(X_IMAGE) X(X_DONE)    \
    X(X_REPORT) X(X_STOP) X(X_STOPPED) X(X_CANCEL) X(X_CRASH) X(X_CONFIG) X(X_FAILED)  \
    X(X_OUT) X(X_ACK) X(X_IN) X(X_RESYNC)
// clang-format on

const char *pc_type_name(uint16_t type)
{
    switch (type) {
#define PC_TYPE_CASE_(n)                                                                           \
    case PC_##n:                                                                                   \
        return #n;
        PC_TYPES(PC_TYPE_CASE_)
#undef PC_TYPE_CASE_
    default:
        return "?";
    }
}

void pc_ep_copy(char *dst, const char *src)
{
    size_t n = src ? strnlen(src, PC_ENDPOINT_MAX - 1) : 0;
    if (n)
        memcpy(dst, src, n);
    dst[n] = '\0';
}

pc_hdr pc_hdr_make(uint16_t type, uint64_t vc, uint64_t vt, uint32_t epoch, uint64_t seq)
{
    pc_hdr h = {.magic = PC_WIRE_MAGIC,
                .version = PC_WIRE_VERSION,
                .type = type,
                .vc = vc,
                .vt = vt,
                .epoch = epoch,
                .seq = seq};
    return h;
}

void pc_hdr_encode(const pc_hdr *h, uint8_t out[PC_HDR_LEN])
{
    s_le32(out, h->magic);
    s_le16(out + 4, h->version);
    s_le16(out + 6, h->type);
    s_le64(out + 8, h->vc);
    s_le64(out + 16, h->vt);
    s_le32(out + 24, h->epoch);
    s_le32(out + 28, h->len);
    s_le64(out + 32, h->seq);
}

int pc_hdr_decode(const void *buf, size_t len, pc_hdr *h, const char **why)
{
    const uint8_t *p = buf;
    const char *dummy;
    if (!why)
        why = &dummy;
    memset(h, 0, sizeof *h);
    if (!p || len != PC_HDR_LEN) {
        *why = "header frame is not 40 bytes";
        return LEV_EINVAL;
    }
    h->magic = s_rd32(p);
    h->version = s_rd16(p + 4);
    h->type = s_rd16(p + 6);
    h->vc = s_rd64(p + 8);
    h->vt = s_rd64(p + 16);
    h->epoch = s_rd32(p + 24);
    h->len = s_rd32(p + 28);
    h->seq = s_rd64(p + 32);
    if (h->magic != PC_WIRE_MAGIC) {
        *why = "bad magic (not a Leverage message)";
        return LEV_EINVAL;
    }
    if (h->version != PC_WIRE_VERSION) {
        *why = "unknown protocol version";
        return LEV_EVERSION;
    }
    if (!strcmp(pc_type_name(h->type), "?")) {
        *why = "unknown message type";
        return LEV_EINVAL;
    }
    return 0;
}

/* ===================================================================
 * Writer
 * =================================================================== */

void pc_wbuf_init(pc_wbuf *w) { memset(w, 0, sizeof *w); }

void pc_wbuf_free(pc_wbuf *w)
{
    free(w->data);
    memset(w, 0, sizeof *w);
}

/* Room for n more bytes, or NULL (and w->err set). */
static uint8_t *s_room(pc_wbuf *w, size_t n)
{
    if (w->err)
        return NULL;
    if (n > SIZE_MAX / 2 - w->len) {
        w->err = LEV_ENOMEM;
        return NULL;
    }
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 64;
        while (cap < w->len + n)
            cap *= 2;
        uint8_t *d = realloc(w->data, cap);
        if (!d) {
            w->err = LEV_ENOMEM;
            return NULL;
        }
        w->data = d;
        w->cap = cap;
    }
    uint8_t *at = w->data + w->len;
    w->len += n;
    return at;
}

void pc_put_u8(pc_wbuf *w, uint8_t v)
{
    uint8_t *p = s_room(w, 1);
    if (p)
        *p = v;
}

void pc_put_u32(pc_wbuf *w, uint32_t v)
{
    uint8_t *p = s_room(w, 4);
    if (p)
        s_le32(p, v);
}

void pc_put_i32(pc_wbuf *w, int32_t v) { pc_put_u32(w, (uint32_t)v); }

void pc_put_u64(pc_wbuf *w, uint64_t v)
{
    uint8_t *p = s_room(w, 8);
    if (p)
        s_le64(p, v);
}

void pc_put_raw(pc_wbuf *w, const void *p, size_t n)
{
    uint8_t *at = s_room(w, n);
    if (at && n)
        memcpy(at, p, n);
}

void pc_put_blob(pc_wbuf *w, const void *p, size_t n)
{
    if (n > UINT32_MAX) {
        w->err = LEV_ERANGE;
        return;
    }
    pc_put_u32(w, (uint32_t)n);
    pc_put_raw(w, p, n);
}

void pc_put_str(pc_wbuf *w, const char *s) { pc_put_blob(w, s ? s : "", s ? strlen(s) : 0); }

/* ===================================================================
 * Reader
 * =================================================================== */

void pc_rbuf_init(pc_rbuf *r, const void *p, size_t len)
{
    r->p = p;
    r->len = p ? len : 0;
    r->off = 0;
    r->bad = false;
    r->why = NULL;
}

/* The next n bytes, or NULL once the payload is too short (marks r bad). */
static const uint8_t *s_take(pc_rbuf *r, size_t n)
{
    if (r->bad)
        return NULL;
    if (n > r->len - r->off) {
        r->bad = true;
        r->why = "payload truncated";
        return NULL;
    }
    const uint8_t *at = r->p + r->off;
    r->off += n;
    return at;
}

uint8_t pc_get_u8(pc_rbuf *r)
{
    const uint8_t *p = s_take(r, 1);
    return p ? *p : 0;
}

uint32_t pc_get_u32(pc_rbuf *r)
{
    const uint8_t *p = s_take(r, 4);
    return p ? s_rd32(p) : 0;
}

int32_t pc_get_i32(pc_rbuf *r) { return (int32_t)pc_get_u32(r); }

uint64_t pc_get_u64(pc_rbuf *r)
{
    const uint8_t *p = s_take(r, 8);
    return p ? s_rd64(p) : 0;
}

bool pc_get_raw(pc_rbuf *r, const void **p, size_t n)
{
    const uint8_t *at = s_take(r, n);
    *p = at;
    return at != NULL;
}

bool pc_get_blob(pc_rbuf *r, const void **p, size_t *n)
{
    uint32_t len = pc_get_u32(r);
    *n = 0;
    if (!pc_get_raw(r, p, len))
        return false;
    *n = len;
    return true;
}

bool pc_get_str(pc_rbuf *r, char *out, size_t cap)
{
    const void *p;
    size_t n;
    if (cap)
        out[0] = '\0';
    if (!pc_get_blob(r, &p, &n))
        return false;
    if (n >= cap || memchr(p, '\0', n)) {
        r->bad = true;
        r->why = n >= cap ? "string too long" : "string holds a NUL byte";
        return false;
    }
    memcpy(out, p, n);
    out[n] = '\0';
    return true;
}

char *pc_get_strdup(pc_rbuf *r, size_t max)
{
    const void *p;
    size_t n;
    if (!pc_get_blob(r, &p, &n))
        return NULL;
    if (n > max || memchr(p, '\0', n)) {
        r->bad = true;
        r->why = n > max ? "string too long" : "string holds a NUL byte";
        return NULL;
    }
    char *s = malloc(n + 1);
    if (!s) {
        r->bad = true;
        r->why = "out of memory";
        return NULL;
    }
    memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

bool pc_rbuf_done(const pc_rbuf *r) { return !r->bad && r->off == r->len; }

/* ===================================================================
 * Payloads of more than one user
 * =================================================================== */

void pc_put_vc_stats(pc_wbuf *w, const lev_vc_stats *st)
{
    pc_put_u32(w, st->peers);
    pc_put_u32(w, st->cores);
    pc_put_u32(w, st->vts);
    pc_put_u32(w, st->vts_ended);
    pc_put_u64(w, st->checkpoints);
    pc_put_u64(w, st->resumes);
    pc_put_u64(w, st->restarts);
    pc_put_u64(w, st->lost_peers);
    pc_put_u64(w, st->messages);
}

bool pc_get_vc_stats(pc_rbuf *r, lev_vc_stats *st)
{
    st->peers = pc_get_u32(r);
    st->cores = pc_get_u32(r);
    st->vts = pc_get_u32(r);
    st->vts_ended = pc_get_u32(r);
    st->checkpoints = pc_get_u64(r);
    st->resumes = pc_get_u64(r);
    st->restarts = pc_get_u64(r);
    st->lost_peers = pc_get_u64(r);
    st->messages = pc_get_u64(r);
    return !r->bad;
}
