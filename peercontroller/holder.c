/* holder.c - the checkpoint holder: dormant images of other peers' VTs,
 * the newest per VT. An image comes whole (H_HOLD) or as a patch of the
 * one held (H_PATCH: the blocks that changed); either way it is checked
 * (its header and checksum, and that it names the VT and epoch the
 * message claims, and its causal state whole) before it is kept, and the
 * deployer is told how far it consumed each channel and the
 * determinants it carries (H_HELD); an older one is dropped once a
 * newer one is in; a patch without its base here asks the worker for
 * whole images (W_FULL). On the word of the deployer the image names
 * (and only its), the image goes to the worker that resumes the VT, or is
 * dropped; when the VT failed for good, its deployer takes the image's
 * sender log (H_LOG). A whole image stays in memory as the message that
 * brought it (no copy).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "causal.h"
#include "envelope.h"
#include "lev_errors.h"
#include "log.h"
#include "patch.h"
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
    uint64_t patched; /* images made from patches */
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

/* Keeps envelope *env (taken) as the newest image of the message's VT
 * once it is checked, and tells the deployer. */
static void s_keep(pc_holder *h, const pc_msg *m, const char *deployer, uint64_t next_in,
                   pc_buf **env)
{
    uint64_t img_vt = 0;
    uint32_t img_epoch = 0;
    const char *why = NULL;
    const uint8_t *chan, *img, *cx = NULL;
    size_t clen, ilen, cxlen = 0;
    char big[128];
    bool split = pc_env_split(pc_buf_data(*env), pc_buf_len(*env), &chan, &clen, &img, &ilen, &cx,
                              &cxlen, &why); /* (a bad envelope sets why) */
    if (split && h->p->o.limits.vt_memory && ilen > h->p->o.limits.vt_memory) {
        snprintf(big, sizeof big, "%zu bytes, above this peer's limit of %zu per VT", ilen,
                 h->p->o.limits.vt_memory);
        why = big;
    } else if (split && h->p->env.image_id(h->p->env.ud, img, ilen, &img_vt, &img_epoch)) {
        why = "not a valid image";
    }
    if (!why && (img_vt != m->h.vt || img_epoch != m->h.epoch))
        why = "image of another VT or epoch than the message says";
    /* its causal state: what the deployer learns from the image */
    pc_cx_image im = {0};
    const char *cxwhy = NULL;
    int cxrc = why ? 0 : pc_cx_image_peek(cx, cxlen, SIZE_MAX, &im, &cxwhy);
    if (!why && cxrc)
        why = cxrc == LEV_ENOMEM ? "no memory for its causal state" : cxwhy;
    if (!why && (im.vt != m->h.vt || im.epoch > m->h.epoch))
        why = "causal state of another VT or incarnation than the image";
    if (why) {
        pc_log_src(PC_LOG_WARN, m->from, "refused image of VC %016llx VT %llu from %s: %s",
                   (unsigned long long)m->h.vc, (unsigned long long)m->h.vt, m->from, why);
        pc_cx_image_clear(&im);
        pc_buf_drop(env);
        return;
    }
    hd_img **pp = s_find(h, m->h.vc, m->h.vt);
    hd_img *e = *pp;
    if (e && (e->epoch > m->h.epoch || (e->epoch == m->h.epoch && e->seq >= m->h.seq))) {
        pc_cx_image_clear(&im);
        pc_buf_drop(env);
        return; /* a stale image arriving late */
    }
    if (!e) {
        e = calloc(1, sizeof *e);
        if (!e) {
            pc_cx_image_clear(&im);
            pc_buf_drop(env);
            return;
        }
        e->next = h->imgs;
        h->imgs = e;
        h->n++;
    }
    h->bytes -= pc_buf_len(e->img);
    pc_buf_drop(&e->img); /* the older image goes once the newer is in */
    e->img = pc_buf_take(env);
    h->bytes += pc_buf_len(e->img);
    e->vc = m->h.vc;
    e->vt = m->h.vt;
    e->epoch = m->h.epoch;
    e->seq = m->h.seq;
    e->next_in = next_in;
    pc_ep_copy(e->deployer, deployer);
    /* from a deployer taken for dead: an orphan from now, unless it
     * comes back (pc_holder_on_member) */
    const pc_member *dm = pc_peer_member(h->p, deployer);
    uint64_t now = pc_peer_now(h->p);
    if (dm && dm->state == PC_MEMBER_DEAD)
        e->orphan_ms = e->orphan_ms ? e->orphan_ms : now ? now : 1;
    else
        e->orphan_ms = 0;
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_u64(&b, pc_buf_len(e->img));
    pc_put_u64(&b, e->next_in);
    pc_put_u32(&b, (uint32_t)im.ncons);
    for (size_t i = 0; i < im.ncons; i++) {
        pc_put_u64(&b, im.cons[i].vt);
        pc_put_u64(&b, im.cons[i].seq);
    }
    pc_cx_dets_encode(&b, im.dets, im.ndets);
    pc_cx_image_clear(&im);
    pc_peer_send(h->p, deployer, pc_hdr_make(PC_H_HELD, e->vc, e->vt, e->epoch, e->seq), &b, NULL);
    pc_wbuf_free(&b);
}

/* Reads H_HOLD's or H_PATCH's "s deployer, u64 next_in" (and H_PATCH's
 * "u64 base_seq, u64 length"); NULL, or why the body is bad. */
static const char *s_head(pc_holder *h, const pc_msg *m, char *deployer, uint64_t *next_in,
                          uint64_t *base, uint64_t *len)
{
    pc_rbuf r;
    pc_rbuf_init(&r, pc_buf_data(m->body), pc_buf_len(m->body));
    pc_get_str(&r, deployer, PC_ENDPOINT_MAX);
    *next_in = pc_get_u64(&r);
    if (base) {
        *base = pc_get_u64(&r);
        *len = pc_get_u64(&r);
    }
    if (!pc_rbuf_done(&r))
        return pc_rbuf_why(&r);
    if (!pc_endpoint_valid(deployer))
        return "no valid deployer endpoint";
    /* a VC this holder serves has a deployer in the mesh, which answers
     * HELD for a VC or VT it does not know with DROP. One taken for dead
     * may be so falsely (a stall, a partition): its images are kept, as
     * an orphan's (pc_holder_on_member) */
    const pc_member *dm = pc_peer_member(h->p, deployer);
    if (!dm || dm->state == PC_MEMBER_LEFT)
        return "its deployer is no peer of this mesh";
    return NULL;
}

static void s_hold(pc_holder *h, pc_msg *m)
{
    char deployer[PC_ENDPOINT_MAX];
    uint64_t next_in = 0;
    const char *why = s_head(h, m, deployer, &next_in, NULL, NULL);
    if (why) {
        pc_log_src(PC_LOG_WARN, m->from, "refused image of VC %016llx VT %llu from %s: %s",
                   (unsigned long long)m->h.vc, (unsigned long long)m->h.vt, m->from, why);
        return;
    }
    pc_buf *env = pc_buf_take(&m->bulk);
    s_keep(h, m, deployer, next_in, &env);
}

/* An image as the blocks that changed since the one held (H_PATCH). */
static void s_patch(pc_holder *h, pc_msg *m)
{
    char deployer[PC_ENDPOINT_MAX];
    uint64_t next_in = 0, base = 0, len = 0;
    const char *why = s_head(h, m, deployer, &next_in, &base, &len);
    hd_img *e = why ? NULL : *s_find(h, m->h.vc, m->h.vt);
    if (!why && (!e || e->epoch != m->h.epoch || e->seq != base || strcmp(e->deployer, deployer))) {
        if (e && e->epoch == m->h.epoch && e->seq >= m->h.seq)
            return; /* a stale patch arriving late */
        /* not the base it was made against (one was lost, or this holder
         * is new to the VT): whole images from now on */
        pc_log_src(PC_LOG_DEBUG, m->from,
                   "VC %016llx VT %llu: patch from %s against image %llu, not held",
                   (unsigned long long)m->h.vc, (unsigned long long)m->h.vt, m->from,
                   (unsigned long long)base);
        pc_peer_send(h->p, m->from, pc_hdr_make(PC_W_FULL, m->h.vc, m->h.vt, m->h.epoch, m->h.seq),
                     NULL, NULL);
        return;
    }
    pc_buf *env =
        why ? NULL : pc_patch_apply(e->img, pc_buf_data(m->bulk), pc_buf_len(m->bulk), len, &why);
    if (!env) {
        pc_log_src(PC_LOG_WARN, m->from, "refused image patch of VC %016llx VT %llu from %s: %s",
                   (unsigned long long)m->h.vc, (unsigned long long)m->h.vt, m->from, why);
        pc_peer_send(h->p, m->from, pc_hdr_make(PC_W_FULL, m->h.vc, m->h.vt, m->h.epoch, m->h.seq),
                     NULL, NULL);
        return;
    }
    h->patched++;
    s_keep(h, m, deployer, next_in, &env);
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
        pc_log_src(PC_LOG_WARN, m->from,
                   "refused SEND of VC %016llx VT %llu from %s: not its deployer",
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

/* The VT failed for good: its deployer takes the sender log of the
 * image held (H_LOGGED; an empty one when none is held), for receivers
 * resumed from images older than messages only that log still has. */
static void s_log(pc_holder *h, pc_msg *m)
{
    hd_img *e = *s_find(h, m->h.vc, m->h.vt);
    if (e && strcmp(e->deployer, m->from)) {
        pc_log_src(PC_LOG_WARN, m->from,
                   "refused LOG of VC %016llx VT %llu from %s: not its deployer",
                   (unsigned long long)m->h.vc, (unsigned long long)m->h.vt, m->from);
        return;
    }
    const uint8_t *chan = NULL, *img = NULL, *cx = NULL;
    size_t clen = 0, ilen = 0, cxlen = 0;
    const char *why = NULL;
    if (e && !pc_env_split(pc_buf_data(e->img), pc_buf_len(e->img), &chan, &clen, &img, &ilen, &cx,
                           &cxlen, &why))
        cx = NULL, cxlen = 0; /* it was checked when it came: not reached */
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_blob(&b, cx, cxlen);
    pc_peer_send(h->p, m->from,
                 pc_hdr_make(PC_H_LOGGED, m->h.vc, m->h.vt, e ? e->epoch : 0, e ? e->seq : 0), &b,
                 NULL);
    pc_wbuf_free(&b);
}

void pc_holder_on_msg(pc_holder *h, pc_msg *m)
{
    switch (m->h.type) {
    case PC_H_HOLD:
        s_hold(h, m);
        return;
    case PC_H_PATCH:
        s_patch(h, m);
        return;
    case PC_H_SEND:
        s_send(h, m);
        return;
    case PC_H_LOG:
        s_log(h, m);
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
        pc_log_src(PC_LOG_WARN, m->from, "dropped %s from %s: not for a holder",
                   pc_type_name(m->h.type), m->from);
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

uint64_t pc_holder_patched(const pc_holder *h) { return h ? h->patched : 0; }

void pc_holder_status(pc_holder *h, pc_wbuf *j)
{
    pc_json_fmt(j, "{\"images\":%llu,\"bytes\":%llu,\"patched\":%llu}", (unsigned long long)h->n,
                (unsigned long long)h->bytes, (unsigned long long)h->patched);
}
