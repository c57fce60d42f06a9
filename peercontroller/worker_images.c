/* worker_images.c - the images of a worker's VTs (worker_private.h):
 * periodic images to the VT's holders (whole, or as a patch against the
 * image a holder was sent before: patch.h), the image of a stop to the
 * deployer, and an image to resume to the executor through the VC's
 * resume slot (imgslot.h).
 */
#include <stdlib.h>
#include <string.h>

#include "lev_errors.h"
#include "log.h"
#include "patch.h"
#include "worker_private.h"

/* A periodic image (its envelope, taken): to every holder of the VT,
 * without copies: whole, or as a patch to a holder that was sent the
 * image before it. */
void pc_wk_image_buf(pc_worker *w, wk_vc *v, const pc_hdr *h, pc_buf *image, bool lent)
{
    wk_vt *t = pc_wk_vt(v, h->vt);
    if (!t || t->epoch != h->epoch || !t->nh) {
        pc_buf_drop(&image);
        return;
    }
    size_t len = pc_buf_len(image);
    /* a holder that has the image sent last gets the blocks that changed */
    bool any = false;
    for (int i = 0; i < t->nh; i++)
        any |= t->hbase[i];
    pc_buf *patch = any && t->last ? pc_patch_make(t->last, image) : NULL;
    w->images++;
    w->lent += lent;
    w->image_bytes += len;
    pc_wbuf b, pb;
    pc_wbuf_init(&b);
    pc_put_str(&b, v->deployer);
    pc_put_u64(&b, h->seq);
    pc_wbuf_init(&pb);
    pc_put_raw(&pb, b.data, b.len);
    pc_put_u64(&pb, t->ckpt);
    pc_put_u64(&pb, len);
    t->ckpt++;
    for (int i = 0; i < t->nh; i++) {
        bool p = patch && t->hbase[i] && !pb.err;
        pc_peer_send(w->p, t->holders[i],
                     pc_hdr_make(p ? PC_H_PATCH : PC_H_HOLD, v->vc, t->id, t->epoch, t->ckpt),
                     p ? &pb : &b, pc_buf_ref(p ? patch : image));
        w->sent_bytes += p ? pc_buf_len(patch) : len;
        t->hbase[i] = true;
    }
    pc_wbuf_free(&b);
    pc_wbuf_free(&pb);
    pc_buf_drop(&patch);
    pc_buf_drop(&t->last);
    t->last = image;
}

/* A periodic image as bytes (X_IMAGE): its envelope, in the payload. */
void pc_wk_image(pc_worker *w, wk_vc *v, const pc_hdr *h, uint8_t *payload)
{
    pc_rbuf r;
    pc_rbuf_init(&r, payload, h->len);
    const void *img = NULL;
    size_t len = 0;
    pc_get_blob(&r, &img, &len);
    if (!pc_rbuf_done(&r)) {
        pc_log(PC_LOG_WARN, "VC %016llx: dropped a malformed IMAGE from the executor: %s",
               (unsigned long long)v->vc, pc_rbuf_why(&r));
        free(payload);
        return;
    }
    pc_buf *image = pc_buf_wrap(img, len, free, payload);
    if (!image)
        free(payload);
    else
        pc_wk_image_buf(w, v, h, image, false);
}

/* A VT handed over by capture-and-stop: its image (taken; NULL with err
 * when the stop failed) goes to the deployer. */
void pc_wk_stopped_buf(pc_worker *w, wk_vc *v, const pc_hdr *h, int32_t err, pc_buf *image)
{
    wk_vt *t = pc_wk_vt(v, h->vt);
    if (!t || t->epoch != h->epoch) {
        pc_buf_drop(&image);
        return;
    }
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_i32(&b, err);
    pc_put_u64(&b, h->seq);
    if (err)
        pc_buf_drop(&image);
    pc_wk_send_deployer(w, v, PC_W_STOPPED, h->vt, h->epoch, 0, b.data, b.len, image);
    pc_wbuf_free(&b);
    pc_wk_vt_forget(v, h->vt);
}

/* STOPPED as bytes: err, detail, the image in the payload. */
void pc_wk_stopped(pc_worker *w, wk_vc *v, const pc_hdr *h, uint8_t *payload)
{
    pc_rbuf r;
    pc_rbuf_init(&r, payload, h->len);
    int32_t err = pc_get_i32(&r);
    char detail[256];
    pc_get_str(&r, detail, sizeof detail);
    const void *img = NULL;
    size_t len = 0;
    pc_get_blob(&r, &img, &len);
    if (!pc_rbuf_done(&r)) {
        pc_log(PC_LOG_WARN, "VC %016llx: dropped a malformed STOPPED from the executor: %s",
               (unsigned long long)v->vc, pc_rbuf_why(&r));
        free(payload);
        return;
    }
    pc_buf *image = !err && len ? pc_buf_wrap(img, len, free, payload) : NULL;
    if (!image)
        free(payload);
    pc_wk_stopped_buf(w, v, h, err, image);
}

/* An image to resume (W_RESUME's bulk) through the VC's resume slot
 * (imgslot.h): true if it went, false when the slot is lent, memfds
 * fail, descriptors cannot pass or LEV_IMAGE_SLOTS=0 (the caller sends
 * it as bytes). */
bool pc_wk_resume_slot(pc_worker *w, wk_vc *v, const pc_msg *m, uint64_t reports)
{
    uint8_t rec[PC_RSLOT_REC_LEN];
    int fd = -1;
    if (!v->x || !w->p->env.exec_send_fd || !pc_slots_wanted() ||
        pc_rslot_fill(&v->rs, pc_buf_data(m->bulk), pc_buf_len(m->bulk), rec, &fd))
        return false;
    pc_hdr h = pc_hdr_make(PC_X_RESUME_SLOT, v->vc, m->h.vt, m->h.epoch, reports);
    struct iovec io = {rec, sizeof rec};
    if (fd >= 0)
        w->p->env.exec_send_fd(w->p->env.ud, v->x, h, &io, 1, fd);
    else
        pc_wk_xsend(w, v, h, &io, 1);
    w->resumes_slot++;
    return true;
}
