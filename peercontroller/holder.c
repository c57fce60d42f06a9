/* holder.c - the checkpoint holder: dormant images of other peers' VTs,
 * the newest per VT. An image is checked (its header names the VT and
 * epoch the message claims) before it is kept; an older one is dropped
 * once a newer one is in; on the word of the deployer the image names
 * (and only its), the image goes to the worker that resumes the VT, or is
 * dropped. Images stay in memory as the messages that brought them (no
 * copy).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envelope.h"
#include "lev_errors.h"
#include "log.h"
#include "peer_private.h"

typedef struct hd_img {
    struct hd_img *next;
    uint64_t vc, vt;
    uint32_t epoch;
    uint64_t seq;
    uint64_t next_in; /* input position of the VT the image stands at */
    char deployer[PC_ENDPOINT_MAX];
    uint64_t orphan_ms; /* when its deployer was declared dead (0: it is not) */
    pc_buf *img;
} hd_img;

struct pc_holder {
    pc_peer *p;
    hd_img *imgs;
    uint64_t n, bytes;
};

static hd_img **s_find(pc_holder *h, uint64_t vc, uint64_t vt)
{
    hd_img **pp = &h->imgs;
    while (*pp && ((*pp)->vc != vc || (*pp)->vt != vt))
        pp = &(*pp)->next;
    return pp;
}

static void s_unlink(pc_holder *h, hd_img **pp)
{
    hd_img *e = *pp;
    *pp = e->next;
    h->n--;
    h->bytes -= pc_buf_len(e->img);
    pc_buf_drop(&e->img);
    free(e);
}

static void s_hold(pc_holder *h, pc_msg *m)
{
    pc_rbuf r;
    pc_rbuf_init(&r, pc_buf_data(m->body), pc_buf_len(m->body));
    char deployer[PC_ENDPOINT_MAX];
    pc_get_str(&r, deployer, sizeof deployer);
    uint64_t next_in = pc_get_u64(&r);
    uint64_t img_vt = 0;
    uint32_t img_epoch = 0;
    const char *why = !pc_rbuf_done(&r)              ? pc_rbuf_why(&r)
                      : !pc_endpoint_valid(deployer) ? "no valid deployer endpoint"
                                                     : NULL;
    const uint8_t *chan, *img;
    size_t clen, ilen;
    if (!why &&
        pc_env_split(pc_buf_data(m->bulk), pc_buf_len(m->bulk), &chan, &clen, &img, &ilen, &why) &&
        h->p->env.image_id(h->p->env.ud, img, ilen, &img_vt, &img_epoch))
        why = "not a valid image"; /* (a bad envelope set why) */
    if (!why && (img_vt != m->h.vt || img_epoch != m->h.epoch))
        why = "image of another VT or epoch than the message says";
    if (why) {
        pc_log(PC_LOG_WARN, "refused image of VC %016llx VT %llu from %s: %s",
               (unsigned long long)m->h.vc, (unsigned long long)m->h.vt, m->from, why);
        return;
    }
    hd_img **pp = s_find(h, m->h.vc, m->h.vt);
    hd_img *e = *pp;
    if (e && (e->epoch > m->h.epoch || (e->epoch == m->h.epoch && e->seq >= m->h.seq)))
        return; /* a stale image arriving late */
    if (!e) {
        e = calloc(1, sizeof *e);
        if (!e)
            return;
        e->next = h->imgs;
        h->imgs = e;
        h->n++;
    }
    h->bytes -= pc_buf_len(e->img);
    pc_buf_drop(&e->img); /* the older image goes once the newer is in */
    e->img = pc_buf_take(&m->bulk);
    h->bytes += pc_buf_len(e->img);
    e->vc = m->h.vc;
    e->vt = m->h.vt;
    e->epoch = m->h.epoch;
    e->seq = m->h.seq;
    e->next_in = next_in;
    pc_ep_copy(e->deployer, deployer);
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_u64(&b, pc_buf_len(e->img));
    pc_put_u64(&b, e->next_in);
    pc_peer_send(h->p, deployer, pc_hdr_make(PC_H_HELD, e->vc, e->vt, e->epoch, e->seq), &b, NULL);
    pc_wbuf_free(&b);
}

/* Sends the held image to the worker that resumes the VT in a new epoch. */
static void s_send(pc_holder *h, pc_msg *m)
{
    pc_rbuf r;
    pc_rbuf_init(&r, pc_buf_data(m->body), pc_buf_len(m->body));
    char target[PC_ENDPOINT_MAX];
    pc_get_str(&r, target, sizeof target);
    /* the holders list (u32 n, n x s holder): checked whole, passed on as it is */
    size_t at = r.off;
    uint32_t n = pc_get_count(&r, 4);
    if (n > 64)
        pc_rbuf_fail(&r, "too many holders");
    for (uint32_t i = 0; i < n && !r.bad; i++) {
        char ep[PC_ENDPOINT_MAX];
        pc_get_str(&r, ep, sizeof ep);
    }
    bool ok = pc_rbuf_done(&r);
    hd_img *e = *s_find(h, m->h.vc, m->h.vt);
    if (e && strcmp(e->deployer, m->from)) {
        pc_log(PC_LOG_WARN, "refused SEND of VC %016llx VT %llu from %s: not its deployer",
               (unsigned long long)m->h.vc, (unsigned long long)m->h.vt, m->from);
        return;
    }
    if (!ok || !e || !pc_endpoint_valid(target)) {
        pc_log(PC_LOG_WARN, "cannot send image of VC %016llx VT %llu to %s: %s",
               (unsigned long long)m->h.vc, (unsigned long long)m->h.vt, target,
               !ok ? pc_rbuf_why(&r)
               : e ? "bad target"
                   : "no image held");
        pc_peer_send(h->p, m->from, pc_hdr_make(PC_H_MISSING, m->h.vc, m->h.vt, m->h.epoch, 0),
                     NULL, NULL);
        return;
    }
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_raw(&b, r.p + at, r.off - at);
    pc_put_u64(&b, e->next_in);
    pc_peer_send(h->p, target, pc_hdr_make(PC_W_RESUME, m->h.vc, m->h.vt, m->h.epoch, 0), &b,
                 pc_buf_ref(e->img)); /* shares the bytes */
    pc_wbuf_free(&b);
}

void pc_holder_on_msg(pc_holder *h, pc_msg *m)
{
    switch (m->h.type) {
    case PC_H_HOLD:
        s_hold(h, m);
        return;
    case PC_H_SEND:
        s_send(h, m);
        return;
    case PC_H_DROP:
        /* only the deployer of an image drops it */
        for (hd_img **pp = &h->imgs; *pp;) {
            if ((*pp)->vc == m->h.vc && (!m->h.vt || (*pp)->vt == m->h.vt) &&
                !strcmp((*pp)->deployer, m->from))
                s_unlink(h, pp);
            else
                pp = &(*pp)->next;
        }
        return;
    default:
        pc_log(PC_LOG_WARN, "dropped %s from %s: not for a holder", pc_type_name(m->h.type),
               m->from);
    }
}

/* A deployer that left took its client with it: its images go at once.
 * One declared dead may come back (a partition, a stall): its images go
 * only if it stays dead for the client timeout (pc_holder_tick), so that
 * a refuted death loses no image. */
void pc_holder_on_member(pc_holder *h, const pc_member *m, pc_member_state old)
{
    (void)old;
    uint64_t now = pc_peer_now(h->p);
    for (hd_img **pp = &h->imgs; *pp;) {
        hd_img *e = *pp;
        if (strcmp(e->deployer, m->rec.endpoint)) {
            pp = &e->next;
            continue;
        }
        if (m->state == PC_MEMBER_LEFT) {
            s_unlink(h, pp);
            continue;
        }
        if (m->state == PC_MEMBER_DEAD && !e->orphan_ms)
            e->orphan_ms = now ? now : 1;
        else if (m->state == PC_MEMBER_ALIVE)
            e->orphan_ms = 0;
        pp = &e->next;
    }
}

uint64_t pc_holder_tick(pc_holder *h, uint64_t now)
{
    uint64_t grace = (uint64_t)h->p->o.client_timeout_ms;
    for (hd_img **pp = &h->imgs; *pp;) {
        if ((*pp)->orphan_ms && now - (*pp)->orphan_ms >= grace)
            s_unlink(h, pp);
        else
            pp = &(*pp)->next;
    }
    return now + 1000;
}

int pc_holder_new(pc_holder **out, pc_peer *p)
{
    pc_holder *h = calloc(1, sizeof *h);
    if (!h)
        return LEV_ENOMEM;
    h->p = p;
    *out = h;
    return 0;
}

void pc_holder_destroy(pc_holder **h_p)
{
    pc_holder *h = h_p ? *h_p : NULL;
    if (!h)
        return;
    while (h->imgs)
        s_unlink(h, &h->imgs);
    free(h);
    *h_p = NULL;
}

void pc_holder_status(pc_holder *h, pc_wbuf *j)
{
    pc_json_fmt(j, "{\"images\":%llu,\"bytes\":%llu}", (unsigned long long)h->n,
                (unsigned long long)h->bytes);
}
