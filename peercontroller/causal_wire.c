/* causal_wire.c - the wire forms of causal logging (causal.h): a message
 * between executors with the determinants it carries, and the engine's
 * part of a VT's image. Each is read whole or refused with a reason.
 */
#include <stdlib.h>
#include <string.h>

#include "causal.h"
#include "lev_errors.h"

#define CX_DET_BYTES (4 * 8 + 4)
#define CX_MARK_BYTES 16
#define CX_LOG_BYTES (3 * 8 + 2 * 4 + 4)

static void s_put_det(pc_wbuf *w, const pc_cx_det *d)
{
    pc_put_u64(w, d->vt);
    pc_put_u64(w, d->pos);
    pc_put_u64(w, d->from);
    pc_put_u64(w, d->seq);
    pc_put_u32(w, d->epoch);
}

void pc_cx_dets_encode(pc_wbuf *w, const pc_cx_det *d, size_t n)
{
    pc_put_u32(w, (uint32_t)n);
    for (size_t i = 0; i < n; i++)
        s_put_det(w, &d[i]);
}

/* A determinant, checked: no zero number, not of a VT's message to itself. */
static void s_get_det(pc_rbuf *r, pc_cx_det *d)
{
    d->vt = pc_get_u64(r);
    d->pos = pc_get_u64(r);
    d->from = pc_get_u64(r);
    d->seq = pc_get_u64(r);
    d->epoch = pc_get_u32(r);
    if (!r->bad && (!d->vt || !d->pos || !d->seq || !d->epoch || d->vt == d->from))
        pc_rbuf_fail(r, "a determinant with a zero number, or of a VT's message to itself");
}

/* A u32 count of determinants and each: *d malloc'd (NULL when none, or
 * when r turns bad). 0, or LEV_ENOMEM. */
static int s_get_dets(pc_rbuf *r, pc_cx_det **d, uint32_t *n)
{
    *d = NULL;
    *n = pc_get_count(r, CX_DET_BYTES);
    if (r->bad || !*n)
        return 0;
    if (!(*d = malloc(*n * sizeof **d)))
        return LEV_ENOMEM;
    for (uint32_t i = 0; i < *n && !r->bad; i++)
        s_get_det(r, &(*d)[i]);
    return 0;
}

/* A message's numbers: u64 from, to, seq; u32 from_epoch, to_epoch. */
static void s_put_head(pc_wbuf *w, const pc_cx_msg *m)
{
    pc_put_u64(w, m->from);
    pc_put_u64(w, m->to);
    pc_put_u64(w, m->seq);
    pc_put_u32(w, m->from_epoch);
    pc_put_u32(w, m->to_epoch);
}

static void s_get_head(pc_rbuf *r, pc_cx_msg *m)
{
    m->from = pc_get_u64(r);
    m->to = pc_get_u64(r);
    m->seq = pc_get_u64(r);
    m->from_epoch = pc_get_u32(r);
    m->to_epoch = pc_get_u32(r);
}

void pc_cx_encode(pc_wbuf *w, const pc_cx_msg *m, const pc_cx_det *d, size_t n)
{
    s_put_head(w, m);
    pc_cx_dets_encode(w, d, n);
    pc_put_blob(w, pc_buf_data(m->data), pc_buf_len(m->data));
}

int pc_cx_decode(const void *bytes, size_t blen, size_t max_data, pc_cx_msg *m, const void **data,
                 size_t *len, pc_cx_det **d, size_t *n, const char **why)
{
    *d = NULL;
    *n = 0;
    *why = NULL;
    memset(m, 0, sizeof *m);
    pc_rbuf r;
    pc_rbuf_init(&r, bytes, blen);
    s_get_head(&r, m);
    if (!r.bad &&
        (!m->to || m->to == m->from || !m->seq || !m->to_epoch || (m->from && !m->from_epoch)))
        pc_rbuf_fail(&r, "a zero number, or a message to its sender");
    uint32_t count = 0;
    pc_cx_det *dets = NULL;
    if (s_get_dets(&r, &dets, &count))
        return LEV_ENOMEM;
    pc_get_blob(&r, data, len);
    if (!r.bad && *len > max_data)
        pc_rbuf_fail(&r, "data larger than allowed");
    if (!pc_rbuf_done(&r)) {
        *why = pc_rbuf_why(&r);
        free(dets);
        *data = NULL;
        *len = 0;
        return LEV_EINVAL;
    }
    *d = dets;
    *n = count;
    return 0;
}

void pc_cx_credit_encode(pc_wbuf *w, uint64_t from, uint64_t to, uint64_t seq)
{
    pc_put_u64(w, from);
    pc_put_u64(w, to);
    pc_put_u64(w, 0);
    pc_put_u64(w, seq);
}

int pc_cx_credit_decode(const void *bytes, size_t blen, uint64_t *from, uint64_t *to, uint64_t *seq,
                        const char **why)
{
    *why = NULL;
    pc_rbuf r;
    pc_rbuf_init(&r, bytes, blen);
    *from = pc_get_u64(&r);
    *to = pc_get_u64(&r);
    uint64_t zero = pc_get_u64(&r);
    if (r.bad || zero)
        return 0; /* not a credit: a message (or what pc_cx_decode refuses) */
    *seq = pc_get_u64(&r);
    if (!r.bad && (!*from || !*to || *from == *to))
        pc_rbuf_fail(&r, "a credit naming VT 0, or a VT to itself");
    if (!pc_rbuf_done(&r)) {
        *why = pc_rbuf_why(&r);
        return LEV_EINVAL;
    }
    return 1;
}

/* ---- the engine's part of an image ---- */

static void s_put_marks(pc_wbuf *w, const pc_cx_mark *m, size_t n)
{
    pc_put_u32(w, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        pc_put_u64(w, m[i].vt);
        pc_put_u64(w, m[i].seq);
    }
}

void pc_cx_image_encode(pc_wbuf *w, const pc_cx_image *im)
{
    pc_put_u64(w, im->vt);
    pc_put_u32(w, im->epoch);
    pc_put_u64(w, im->consumed);
    s_put_marks(w, im->cons, im->ncons);
    s_put_marks(w, im->chan, im->nchan);
    pc_put_u32(w, (uint32_t)im->nlog);
    for (size_t i = 0; i < im->nlog; i++) {
        const pc_cx_msg *m = &im->log[i];
        s_put_head(w, m);
        pc_put_blob(w, pc_buf_data(m->data), pc_buf_len(m->data));
        pc_put_u8(w, m->held ? 1 : 0);
    }
    pc_cx_dets_encode(w, im->dets, im->ndets);
}

/* A set of marks, checked: each channel once, no VT's channel to itself. */
static pc_cx_mark *s_get_marks(pc_rbuf *r, uint64_t vt, size_t *n)
{
    uint32_t k = pc_get_count(r, CX_MARK_BYTES);
    *n = 0;
    pc_cx_mark *m = malloc(((size_t)k + 1) * sizeof *m);
    if (!m) {
        pc_rbuf_fail(r, "out of memory");
        return NULL;
    }
    for (uint32_t i = 0; i < k && !r->bad; i++) {
        m[i].vt = pc_get_u64(r);
        m[i].seq = pc_get_u64(r);
        if (!r->bad && m[i].vt == vt)
            pc_rbuf_fail(r, "a VT's channel to itself");
        for (uint32_t j = 0; j < i && !r->bad; j++)
            if (m[j].vt == m[i].vt)
                pc_rbuf_fail(r, "a channel given twice");
    }
    *n = k;
    return m;
}

static int s_image_decode(const void *bytes, size_t blen, size_t max_data, pc_cx_image *im,
                          const char **why, bool with_data);

int pc_cx_image_decode(const void *bytes, size_t blen, size_t max_data, pc_cx_image *im,
                       const char **why)
{
    return s_image_decode(bytes, blen, max_data, im, why, true);
}

int pc_cx_image_peek(const void *bytes, size_t blen, size_t max_data, pc_cx_image *im,
                     const char **why)
{
    return s_image_decode(bytes, blen, max_data, im, why, false);
}

static int s_image_decode(const void *bytes, size_t blen, size_t max_data, pc_cx_image *im,
                          const char **why, bool with_data)
{
    memset(im, 0, sizeof *im);
    *why = NULL;
    pc_rbuf r;
    pc_rbuf_init(&r, bytes, blen);
    im->vt = pc_get_u64(&r);
    im->epoch = pc_get_u32(&r);
    im->consumed = pc_get_u64(&r);
    if (!r.bad && (!im->vt || !im->epoch))
        pc_rbuf_fail(&r, "an image of VT 0, or of incarnation 0");
    im->cons = s_get_marks(&r, im->vt, &im->ncons);
    im->chan = s_get_marks(&r, im->vt, &im->nchan);
    uint32_t nlog = pc_get_count(&r, CX_LOG_BYTES);
    im->log = calloc((size_t)nlog + 1, sizeof *im->log);
    if (!im->log)
        pc_rbuf_fail(&r, "out of memory");
    for (uint32_t i = 0; i < nlog && !r.bad; i++) {
        pc_cx_msg *m = &im->log[i];
        s_get_head(&r, m);
        const void *data;
        size_t len;
        pc_get_blob(&r, &data, &len);
        if (!r.bad && (m->from != im->vt || !m->to || m->to == im->vt || !m->seq))
            pc_rbuf_fail(&r, "a logged message not from the image's VT, or numbered 0");
        if (!r.bad && len > max_data)
            pc_rbuf_fail(&r, "logged data larger than allowed");
        uint8_t held = pc_get_u8(&r);
        if (!r.bad && held > 1)
            pc_rbuf_fail(&r, "a logged message's held flag neither 0 nor 1");
        m->held = held == 1;
        if (!r.bad && with_data && !(m->data = pc_buf_new(data, len)))
            pc_rbuf_fail(&r, "out of memory");
        if (!r.bad)
            im->nlog = i + 1;
    }
    uint32_t nd = 0;
    if (s_get_dets(&r, &im->dets, &nd))
        pc_rbuf_fail(&r, "out of memory");
    im->ndets = nd;
    if (!pc_rbuf_done(&r)) {
        *why = pc_rbuf_why(&r);
        bool oom = *why && !strcmp(*why, "out of memory");
        pc_cx_image_clear(im);
        return oom ? LEV_ENOMEM : LEV_EINVAL;
    }
    return 0;
}

int pc_cx_dets_decode(const void *bytes, size_t blen, pc_cx_det **d, size_t *n, const char **why)
{
    *d = NULL;
    *n = 0;
    *why = NULL;
    pc_rbuf r;
    pc_rbuf_init(&r, bytes, blen);
    uint32_t count = 0;
    pc_cx_det *dets = NULL;
    if (s_get_dets(&r, &dets, &count))
        return LEV_ENOMEM;
    if (!pc_rbuf_done(&r)) {
        *why = pc_rbuf_why(&r);
        free(dets);
        return LEV_EINVAL;
    }
    *d = dets;
    *n = count;
    return 0;
}

/* Reads a list of fences (places false) or placements (true) whole,
 * then applies it. */
static int s_apply(pc_cx *cx, const void *bytes, size_t blen, bool places, const char **why)
{
    *why = NULL;
    pc_rbuf r;
    pc_rbuf_init(&r, bytes, blen);
    uint32_t n = pc_get_count(&r, places ? 16 : 12);
    for (uint32_t i = 0; i < n && !r.bad; i++) {
        pc_get_u64(&r);
        pc_get_u32(&r);
        int32_t x = places ? (int32_t)pc_get_u32(&r) : -1;
        if (x < -1 || x >= PC_CX_PEERS)
            pc_rbuf_fail(&r, "an executor number out of range");
    }
    if (!pc_rbuf_done(&r)) {
        *why = pc_rbuf_why(&r);
        return LEV_EINVAL;
    }
    pc_rbuf_init(&r, bytes, blen);
    n = pc_get_count(&r, places ? 16 : 12);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t vt = pc_get_u64(&r);
        uint32_t epoch = pc_get_u32(&r), here = pc_cx_hosts(cx, vt);
        int32_t x = places ? (int32_t)pc_get_u32(&r) : -1;
        if ((places ? here && here != epoch : here != 0))
            continue;
        if (pc_cx_place(cx, vt, epoch, x))
            return LEV_ENOMEM;
    }
    return 0;
}

int pc_cx_fences_apply(pc_cx *cx, const void *bytes, size_t blen, const char **why)
{
    return s_apply(cx, bytes, blen, false, why);
}

int pc_cx_places_apply(pc_cx *cx, const void *bytes, size_t blen, const char **why)
{
    return s_apply(cx, bytes, blen, true, why);
}

int pc_cx_place_news(pc_cx *cx, uint64_t self, const void *bytes, size_t blen, const char **why)
{
    *why = NULL;
    int rc = self == UINT64_MAX   ? 0
             : self < PC_CX_PEERS ? pc_cx_set_self(cx, (int)self)
                                  : LEV_EINVAL;
    if (rc) {
        *why = rc == LEV_EBUSY ? "this executor has another number already"
                               : "an executor number out of range";
        return rc;
    }
    return s_apply(cx, bytes, blen, true, why);
}

int pc_cx_trim_apply(pc_cx *cx, uint64_t vt, const void *bytes, size_t blen, const char **why)
{
    *why = NULL;
    pc_rbuf r;
    pc_rbuf_init(&r, bytes, blen);
    size_t n = 0;
    pc_cx_mark *m = s_get_marks(&r, vt, &n);
    if (!pc_rbuf_done(&r)) {
        *why = pc_rbuf_why(&r);
        bool oom = *why && !strcmp(*why, "out of memory");
        free(m);
        return oom ? LEV_ENOMEM : LEV_EINVAL;
    }
    pc_cx_trim(cx, vt, m, n);
    free(m);
    return 0;
}
