/* wire.c - the codec of the wire protocol (wire.h): the fixed header
 * frame, the names of the message types, and the payloads that more than
 * one part writes or reads (C_STATS_REPLY). Structured payloads are
 * written and read with the runtime's byte codec (runtime/bytes.c), so
 * every byte that arrives from the network is read through one reader.
 */
#include "wire.h"

#include <string.h>

#include "lev_client.h"
#include "lev_errors.h"

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
    X(W_HOLDERS) X(W_OUT) X(W_ACK) X(W_IN) X(W_RESYNC) X(W_UNKNOWN) X(W_MIGRATE)                    \
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
