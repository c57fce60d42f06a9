/* wire.c - the codec of the wire protocol (wire.h): the fixed header
 * frame, the names of the message types, and the payloads that more than
 * one part writes or reads (C_STATS_REPLY). Structured payloads are
 * written and read with the runtime's byte codec (runtime/bytes.c), so
 * every byte that arrives from the network is read through one reader.
 */
#include "wire.h"

#include <stdlib.h>
#include <string.h>

#include "lev_client.h"
#include "lev_errors.h"

/* ===================================================================
 * Header
 * =================================================================== */

/* X(name, fields): every type, once (the decoder accepts only these),
 * with the fields of its payload, which pc_msg_check reads whole before
 * anything acts on a message. Fields: u8 u32 i32 u64; h, PC_HASH_LEN raw
 * bytes; s, a string (u32 length, bytes without NUL); b, a blob; L, a
 * list of strings (u32 n, n x s); V, a list of VT incarnations (u32 n,
 * n x (u64 vt, u32 epoch)); D, a list of determinants (u32 n, n x (u64
 * vt, u64 pos, u64 from, u64 seq, u32 epoch): causal.h); P, a list of
 * placements (u32 n, n x (u64 vt, u32 epoch, i32 executor, -1 or more));
 * M, a list of channel marks (u32 n, n x (u64 vt, u64 seq): causal.h);
 * a trailing ?
 * makes the last field optional; +F: a bulk frame follows, +F? it may.
 * "*": a payload of its own codec (membership.c's), not read here.
 * wire.h says what each field is. */
// clang-format off
#define PC_TYPES(X)                                                                           \
    X(M_PING, "*") X(M_ACK, "*") X(M_PING_REQ, "*") X(M_JOIN, "*") X(M_SYNC, "*")             \
    X(M_GOSSIP, "*")                                                                          \
    X(C_OPEN, "i32 i32 i32 u64 h +F") X(C_START, "s b") X(C_CLOSE, "") X(C_PING, "")          \
    X(C_OPENED, "") X(C_STARTED, "") X(C_CLOSED, "") X(C_PONG, "") X(C_ERROR, "i32 s")        \
    X(C_RESULT, "i32 s b") X(C_REPORT, "b") X(C_SEND, "b") X(C_GSET, "s b") X(C_GGET, "s")    \
    X(C_SENT, "") X(C_GSET_OK, "") X(C_GVALUE, "u8 b") X(C_STATS, "")                         \
    X(C_STATS_REPLY, "u32 u32 u32 u32 u64 u64 u64 u64 u64")                                   \
    X(W_ENROL, "s h u64 s i32 u64 u8 u64 u64 u64") X(W_ENROLLED, "i32 u8 u32") X(W_MODULE, "h u64 +F")       \
    X(W_MODULE_OK, "i32 s") X(W_RUN, "s b L") X(W_RESUME, "L u64 +F") X(W_DONE, "i32 s b M? b?")    \
    X(W_REPORT, "b") X(W_STOPPED, "i32 u64 +F?") X(W_FENCE, "") X(W_CLOSE, "")                \
    X(W_LOST, "u64 i32 V") X(W_PLACE_ERR, "i32 s") X(W_HOLDERS, "L")                          \
    X(W_OUT, "u8 u64 u64 u8 s b") X(W_ACK, "u8?")                                             \
    X(W_IN, "u8 u8 u64 u64 i32 u64 u64 b")                                                    \
    X(W_RESYNC, "") X(W_UNKNOWN, "") X(W_MIGRATE, "") X(W_FULL, "")                           \
    X(W_IN_REF, "u8 u8 u64 u64 i32 u64 u64 h u32") X(W_IN_MISS, "") X(W_DET, "D")             \
    X(W_STABLE, "") X(W_FLUSH, "V") X(W_FLUSHED, "") X(W_FIX, "D") X(W_PLACE, "P")            \
    X(W_TRIM, "M") X(W_LINK, "s") X(W_LINKS, "L") X(W_STALL, "D")                            \
    X(W_GLOB, "s u8 b") X(W_READS_FROM, "") X(W_GLOB_ACK, "s")                                           \
    X(H_HOLD, "s u64 +F") X(H_HELD, "u64 u64 M D") X(H_SEND, "s L") X(H_MISSING, "")              \
    X(H_DROP, "") X(H_PATCH, "s u64 u64 u64 +F") X(H_LOG, "") X(H_LOGGED, "b")                \
    X(S_STATUS, "") X(S_STATUS_REPLY, "s")                                                    \
    X(X_READY, "i32") X(X_MODULE, "h u64 b") X(X_MODULE_OK, "i32 s") X(X_RUN, "s b")          \
    X(X_RESUME, "b") X(X_IMAGE, "b") X(X_DONE, "i32 s b M? b?") X(X_REPORT, "b") X(X_STOP, "")      \
    X(X_STOPPED, "i32 s b") X(X_CANCEL, "") X(X_CRASH, "i32") X(X_CONFIG, "i32 i32 s s s u64 u64 u64")        \
    X(X_FAILED, "i32 s") X(X_OUT, "u8 u64 u64 u8 s b") X(X_ACK, "u8?")                        \
    X(X_IN, "u8 u8 u64 u64 i32 u64 u64 b") X(X_RESYNC, "")                                    \
    X(X_IMAGE_SLOT, "u32 u8 u64 u64 u64")                                                     \
    X(X_SLOT_FREE, "u32") X(X_STOPPED_SLOT, "u32 u8 u64 u64 u64") X(X_DET, "D")               \
    X(X_STABLE, "") X(X_FLUSH, "V") X(X_FLUSHED, "") X(X_FIX, "D") X(X_PLACE, "P") X(X_TRIM, "M")    \
    X(X_LINK, "s") X(X_LINKS, "L") X(X_STATS, "u64 u64 u64 u64 u64 u64 u64") X(X_STALL, "D")          \
    X(X_RESUME_SLOT, "u64 u64 u8") X(X_RESUME_FREE, "") X(X_READ_AT, "u64 b")
// clang-format on

const char *pc_type_name(uint16_t type)
{
    switch (type) {
#define PC_TYPE_CASE_(n, f)                                                                        \
    case PC_##n:                                                                                   \
        return #n;
        PC_TYPES(PC_TYPE_CASE_)
#undef PC_TYPE_CASE_
    default:
        return "?";
    }
}

/* The fields of a type's payload (see PC_TYPES), or NULL for an unknown one. */
static const char *s_fields(uint16_t type)
{
    switch (type) {
#define PC_TYPE_FIELDS_(n, f)                                                                      \
    case PC_##n:                                                                                   \
        return f;
        PC_TYPES(PC_TYPE_FIELDS_)
#undef PC_TYPE_FIELDS_
    default:
        return NULL;
    }
}

/* Reads one field of kind k (its letters, n bytes) from r. */
static void s_field(pc_rbuf *r, const char *k, size_t n)
{
    const void *p;
    size_t len;
    if (n == 2 && !memcmp(k, "u8", 2)) {
        pc_get_u8(r);
    } else if (n == 3 && (!memcmp(k, "u32", 3) || !memcmp(k, "i32", 3))) {
        pc_get_u32(r);
    } else if (n == 3 && !memcmp(k, "u64", 3)) {
        pc_get_u64(r);
    } else if (n == 1 && *k == 'h') {
        pc_get_raw(r, &p, PC_HASH_LEN);
    } else if (n == 1 && (*k == 's' || *k == 'b')) {
        if (pc_get_blob(r, &p, &len) && *k == 's' && memchr(p, 0, len))
            rt_rbuf_fail(r, "a string holds a NUL byte");
    } else if (n == 1 && *k == 'L') {
        uint32_t c = rt_get_count(r, 4);
        for (uint32_t i = 0; i < c && !r->bad; i++)
            s_field(r, "s", 1);
    } else if (n == 1 && *k == 'V') {
        uint32_t c = rt_get_count(r, 12);
        for (uint32_t i = 0; i < c && !r->bad; i++) {
            pc_get_u64(r);
            pc_get_u32(r);
        }
    } else if (n == 1 && *k == 'M') {
        uint32_t c = rt_get_count(r, 16);
        for (uint32_t i = 0; i < c && !r->bad; i++) {
            pc_get_u64(r);
            pc_get_u64(r);
        }
    } else if (n == 1 && *k == 'P') {
        uint32_t c = rt_get_count(r, 16);
        for (uint32_t i = 0; i < c && !r->bad; i++) {
            pc_get_u64(r);
            pc_get_u32(r);
            if ((int32_t)pc_get_u32(r) < -1)
                rt_rbuf_fail(r, "an executor number below -1");
        }
    } else if (n == 1 && *k == 'D') {
        uint32_t c = rt_get_count(r, 36);
        for (uint32_t i = 0; i < c && !r->bad; i++) {
            pc_get_u64(r);
            pc_get_u64(r);
            pc_get_u64(r);
            pc_get_u64(r);
            pc_get_u32(r);
        }
    } else {
        rt_rbuf_fail(r, "the table of fields names an unknown kind");
    }
}

int pc_msg_check(const pc_hdr *h, const void *body, size_t len, size_t bulk, const char **why)
{
    const char *f = s_fields(h->type), *dummy;
    if (!why)
        why = &dummy;
    *why = NULL;
    if (!f) {
        *why = "unknown message type";
        return LEV_EINVAL;
    }
    if (*f == '*')
        return 0;
    pc_rbuf r;
    pc_rbuf_init(&r, body, len);
    bool bulk_ok = bulk == 0;
    while (*f) {
        while (*f == ' ')
            f++;
        size_t n = strcspn(f, " ");
        if (!n)
            break;
        bool opt = f[n - 1] == '?';
        size_t k = opt ? n - 1 : n;
        if (*f == '+') {
            bulk_ok = bulk > 0 || opt;
        } else if (!opt || rt_rbuf_left(&r)) {
            s_field(&r, f, k);
        }
        f += n;
    }
    if (!pc_rbuf_done(&r)) {
        *why = pc_rbuf_why(&r);
        return LEV_EINVAL;
    }
    if (!bulk_ok) {
        *why = bulk ? "a bulk frame where none goes" : "no bulk frame where one goes";
        return LEV_EINVAL;
    }
    return 0;
}

void pc_ep_copy(char *dst, const char *src)
{
    size_t n = src ? strnlen(src, PC_ENDPOINT_MAX - 1) : 0;
    if (n)
        memcpy(dst, src, n);
    dst[n] = '\0';
}

int pc_endpoint_valid(const char *s)
{
    if (!s || strncmp(s, "tcp://", 6) || strlen(s) >= PC_ENDPOINT_MAX)
        return 0;
    const char *colon = strrchr(s + 6, ':');
    if (!colon || colon == s + 6 || !colon[1])
        return 0;
    for (const char *p = colon + 1; *p; p++)
        if (*p < '0' || *p > '9')
            return 0;
    return atol(colon + 1) <= 65535;
}

int pc_endpoint_host(const char *ep, char *host, size_t cap)
{
    if (!pc_endpoint_valid(ep))
        return LEV_EINVAL;
    size_t n = (size_t)(strrchr(ep + 6, ':') - (ep + 6));
    if (n >= cap)
        return LEV_EINVAL;
    memcpy(host, ep + 6, n);
    host[n] = '\0';
    return 0;
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
    rt_le32_put(out, h->magic);
    rt_le16_put(out + 4, h->version);
    rt_le16_put(out + 6, h->type);
    rt_le64_put(out + 8, h->vc);
    rt_le64_put(out + 16, h->vt);
    rt_le32_put(out + 24, h->epoch);
    rt_le32_put(out + 28, h->len);
    rt_le64_put(out + 32, h->seq);
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
    h->magic = rt_le32_get(p);
    h->version = rt_le16_get(p + 4);
    h->type = rt_le16_get(p + 6);
    h->vc = rt_le64_get(p + 8);
    h->vt = rt_le64_get(p + 16);
    h->epoch = rt_le32_get(p + 24);
    h->len = rt_le32_get(p + 28);
    h->seq = rt_le64_get(p + 32);
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
