/* msgmgr_direct.c - what the message manager keeps and does for direct
 * messages between executors (msgmgr.h; docs/DIRECT_MESSAGES.md): the
 * messages of ended senders kept for their receivers, the numbers of an
 * ended VT's last messages, and the trimming of a VT's logs by what its
 * oldest resumable image consumed on each channel.
 */
#include <stdlib.h>
#include <string.h>

#include "lev_errors.h"
#include "msgmgr.h"
#include "msgmgr_private.h"
#include "vec.h"
#include "vtchan.h"

/* An ended sender's message to v, on its channel, to v's host. */
void pc_mm_send_relay(pc_msgmgr *mm, mm_vt *v, const mm_relay *e)
{
    uint32_t epoch = 0;
    const char *host = pc_resolver_get(mm->o.where, pc_mm_id(mm, v), &epoch);
    if (!host || !v->synced)
        return;
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_u8(&b, RT_IN_MSG);
    pc_put_u8(&b, 0);
    pc_put_u64(&b, e->from);
    pc_put_u64(&b, 0);
    pc_put_i32(&b, 0);
    pc_put_u64(&b, e->from);
    pc_put_u64(&b, e->seq);
    pc_put_blob(&b, e->data, e->len);
    pc_peer_send(mm->o.p, host, pc_hdr_make(PC_W_IN, mm->o.vc, pc_mm_id(mm, v), epoch, 0), &b,
                 NULL);
    pc_wbuf_free(&b);
}

int pc_mm_vt_left(pc_msgmgr *mm, uint64_t id, const pc_cx_msg *log, size_t n)
{
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        mm_vt *t = pc_mm_vt_of(mm, log[i].to);
        if (!t || t->ended || log[i].from != id)
            continue;
        size_t len = log[i].data ? pc_buf_len(log[i].data) : 0;
        uint8_t *copy = len ? malloc(len) : NULL;
        if ((len && !copy) || RT_VEC_RESERVE(t->relay, t->caprelay, t->nrelay, 1)) {
            free(copy);
            rc = LEV_ENOMEM;
            continue;
        }
        if (len)
            memcpy(copy, pc_buf_data(log[i].data), len);
        mm_relay *e = &t->relay[t->nrelay++];
        *e = (mm_relay){.from = id, .seq = log[i].seq, .data = copy, .len = len};
        pc_mm_send_relay(mm, t, e); /* a receiver not placed yet has nothing of it */
    }
    return rc;
}

bool pc_mm_vt_kept(const pc_msgmgr *mm, uint64_t to, uint64_t from, uint64_t seq)
{
    const mm_vt *t = pc_mm_vt_of((pc_msgmgr *)mm, to);
    for (size_t i = 0; t && i < t->nrelay; i++)
        if (t->relay[i].from == from && t->relay[i].seq == seq)
            return true;
    return false;
}

int pc_mm_vt_had(pc_msgmgr *mm, uint64_t id, const pc_cx_mark *had, size_t n)
{
    mm_vt *v = pc_mm_vt_of(mm, id);
    if (!v || !n)
        return 0;
    pc_cx_mark *copy = malloc(n * sizeof *copy);
    if (!copy)
        return LEV_ENOMEM;
    memcpy(copy, had, n * sizeof *copy);
    free(v->had);
    v->had = copy;
    v->nhad = n;
    return 0;
}

void pc_mm_vt_last_sent(pc_msgmgr *mm, uint64_t id, const void *marks, uint32_t n)
{
    const uint8_t *p = marks;
    for (uint32_t i = 0; i < n; i++, p += 16) {
        mm_vt *t = pc_mm_vt_of(mm, rt_le64_get(p));
        uint64_t seq = rt_le64_get(p + 8), *last = t && id >= 2 ? pc_mm_chan(t, id) : NULL;
        if (last && seq > *last)
            *last = seq;
    }
}

void pc_mm_trim_marks(pc_msgmgr *mm, uint64_t id, const void *marks, uint32_t n)
{
    mm_vt *v = pc_mm_vt_of(mm, id);
    if (!v || !mm->o.direct)
        return;
    const uint8_t *p = marks;
    for (uint32_t i = 0; i < n; i++, p += 16) {
        uint64_t from = rt_le64_get(p), upto = rt_le64_get(p + 8);
        if (!from) { /* the deployer's channel: numbered by position in the log */
            size_t k = 0;
            while (k < v->nlog && v->log[k].d <= upto)
                free(v->log[k++].data);
            memmove(v->log, v->log + k, (v->nlog - k) * sizeof *v->log);
            v->nlog -= k;
            v->first = v->nlog ? v->log[0].d : v->next_d;
            continue;
        }
        size_t j = 0; /* an ended sender's messages it consumed */
        for (size_t r = 0; r < v->nrelay; r++) {
            if (v->relay[r].from == from && v->relay[r].seq <= upto)
                free(v->relay[r].data);
            else
                v->relay[j++] = v->relay[r];
        }
        v->nrelay = j;
    }
}
