/* barrier.c - a VC's recovery barrier and its log of determinants, at
 * the deployer (deployer_private.h; docs/DIRECT_MESSAGES.md has the
 * protocol and why it is exact).
 *
 * The determinants the executors send up (W_DET) are learnt into the
 * VC's log (detlog.c), those of fenced incarnations included. When a VT
 * loses its incarnation (its worker died, left, or never started it) it
 * is fenced and waits: the deployer runs a barrier over the VC's live
 * workers (W_FLUSH, naming every fence), each of which answers
 * (W_FLUSHED) once every determinant its executor held is on its way,
 * and only then are the fenced VTs placed again. A worker lost during
 * the barrier starts it again with its VTs added. When a VT is placed
 * again, the positions after its image that the log knows without a gap
 * are fixed for the new incarnation; its executor gets them (W_FIX) with
 * every resync, before the inputs, and takes those inputs in that order.
 *
 * The deployer still relays and numbers every input, so the fixed
 * positions must agree with its log: the executor's engine checks each
 * input against them. Runs on the peer's network thread, like the rest
 * of the deployer.
 */
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "deployer_private.h"
#include "detlog.h"
#include "lev_errors.h"
#include "log.h"

#define DEP_BARRIER_WARN_MS 5000  /* an open barrier this old is named in the log, once */
#define DEP_BARRIER_AGAIN_MS 1000 /* W_FLUSH again to those that have not answered */

int pc_dep_barrier_init(dep_vc *vc)
{
    vc->dl = pc_detlog_new();
    return vc->dl ? 0 : LEV_ENOMEM;
}

void pc_dep_barrier_free(dep_vc *vc)
{
    pc_detlog_destroy(&vc->dl);
    for (int i = 0; i < vc->nvts; i++)
        pc_dep_fix_clear(&vc->vts[i]);
}

void pc_dep_fix_clear(dep_vt *vt)
{
    free(vt->fix);
    vt->fix = NULL;
    vt->nfix = 0;
    vt->fix_epoch = 0;
}

void pc_dep_epoch_moved(dep_vc *vc, dep_vt *vt, bool fenced)
{
    pc_dep_fix_clear(vt);
    if (pc_detlog_fence_to(vc->dl, vt->id, vt->epoch))
        pc_log(PC_LOG_ERROR, "VC %016llx VT %llu: no memory to fence incarnation %u",
               (unsigned long long)vc->id, (unsigned long long)vt->id, vt->epoch);
    if (fenced) {
        vt->awaits_barrier = true;
        vc->barrier_due = true;
    }
}

void pc_dep_dets(dep_vc *vc, const pc_cx_det *d, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int rc = pc_detlog_add(vc->dl, &d[i]);
        if (rc == LEV_EINVAL) {
            vc->det_conflicts++;
            pc_log(PC_LOG_ERROR,
                   "VC %016llx VT %llu: two messages at input %llu (the second, message %llu "
                   "from %llu, of incarnation %u)",
                   (unsigned long long)vc->id, (unsigned long long)d[i].vt,
                   (unsigned long long)d[i].pos, (unsigned long long)d[i].seq,
                   (unsigned long long)d[i].from, (unsigned)d[i].epoch);
        } else if (rc) {
            pc_log(PC_LOG_ERROR, "VC %016llx: no memory for determinants",
                   (unsigned long long)vc->id);
            return;
        }
    }
}

bool pc_dep_image_dets(dep_vc *vc, const dep_vt *vt, const pc_cx_det *d, size_t n)
{
    bool usable = true;
    int rc = pc_detlog_image(vc->dl, d, n, &usable);
    if (rc == LEV_EINVAL) {
        vc->det_conflicts++;
        pc_log(PC_LOG_ERROR,
               "VC %016llx VT %llu: an image carries a determinant that names a second input at "
               "a known position",
               (unsigned long long)vc->id, (unsigned long long)vt->id);
    } else if (!usable) {
        vc->orphans++;
        pc_log(PC_LOG_INFO,
               "VC %016llx VT %llu: an image of incarnation %u depends on a branch a fenced "
               "incarnation took; dropped",
               (unsigned long long)vc->id, (unsigned long long)vt->id, vt->epoch);
    }
    return usable;
}

void pc_dep_trim(pc_deployer *d, dep_vc *vc, dep_vt *vt, uint64_t next_in, const void *marks,
                 uint32_t n)
{
    if (next_in <= vt->trimmed)
        return;
    vt->trimmed = next_in;
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_u32(&b, n);
    pc_put_raw(&b, marks, (size_t)n * 16);
    /* to the workers that run a sender it names: their engines hold the
     * logs (a sender placed anew later trims at the next image) */
    const uint8_t *m = marks;
    for (int i = 0; i < vc->nw; i++) {
        bool sender = false;
        for (uint32_t k = 0; k < n && !sender && vc->w[i].state == W_ACTIVE; k++) {
            const dep_vt *s = dep_vt_of(vc, rt_le64_get(m + 16 * (size_t)k));
            sender = s && s->state == VT_RUNNING && s->host == i;
        }
        if (sender) {
            pc_peer_send(d->p, vc->w[i].ep, dep_hdr(PC_W_TRIM, vc, vt, 0), &b, NULL);
            vc->trims++;
        }
    }
    pc_wbuf_free(&b);
}

void pc_dep_dets_stable(dep_vc *vc, uint64_t vt, uint64_t next_in)
{
    if (next_in > 1)
        pc_detlog_stable(vc->dl, vt, next_in - 1);
}

/* The fences the barrier names: every VT that waits for it. */
static void s_put_fences(pc_wbuf *b, const dep_vc *vc)
{
    uint32_t n = 0;
    for (int i = 0; i < vc->nvts; i++)
        n += vc->vts[i].awaits_barrier;
    pc_put_u32(b, n);
    for (int i = 0; i < vc->nvts; i++)
        if (vc->vts[i].awaits_barrier) {
            pc_put_u64(b, vc->vts[i].id);
            pc_put_u32(b, vc->vts[i].epoch);
        }
}

static void s_send_flush(pc_deployer *d, dep_vc *vc, const dep_worker *w)
{
    pc_wbuf b;
    pc_wbuf_init(&b);
    s_put_fences(&b, vc);
    pc_peer_send(d->p, w->ep, pc_hdr_make(PC_W_FLUSH, vc->id, 0, 0, vc->barrier), &b, NULL);
    pc_wbuf_free(&b);
}

/* The barrier running is complete when no live worker still owes an
 * answer and no fence came since it started: the VTs it waited for are
 * placed. */
static void s_complete(pc_deployer *d, dep_vc *vc)
{
    if (!vc->barrier_open || vc->barrier_due)
        return;
    for (int i = 0; i < vc->nw; i++)
        if (vc->w[i].flush_wait == vc->barrier)
            return;
    uint64_t took = pc_peer_now(d->p) - vc->barrier_ms;
    vc->barrier_open = false;
    vc->barriers++;
    vc->barrier_last_ms = took;
    if (took > vc->barrier_max_ms)
        vc->barrier_max_ms = took;
    int n = 0;
    for (int i = 0; i < vc->nvts; i++) {
        n += vc->vts[i].awaits_barrier;
        vc->vts[i].awaits_barrier = false;
    }
    pc_log(PC_LOG_INFO, "VC %016llx: recovery barrier %u done in %llu ms; %d VTs resume",
           (unsigned long long)vc->id, vc->barrier, (unsigned long long)took, n);
    pc_dep_place_pending(d, vc);
}

void pc_dep_barrier_run(pc_deployer *d, dep_vc *vc)
{
    if (!vc->barrier_due)
        return;
    vc->barrier_due = false;
    vc->barrier_open = true;
    vc->barrier++;
    vc->barrier_ms = vc->barrier_sent_ms = pc_peer_now(d->p);
    vc->barrier_warned = false;
    for (int i = 0; i < vc->nw; i++) {
        dep_worker *w = &vc->w[i];
        w->flush_wait = 0;
        if (w->state != W_ACTIVE && w->state != W_LOADING)
            continue;
        w->flush_wait = vc->barrier;
        s_send_flush(d, vc, w);
    }
    s_complete(d, vc);
}

void pc_dep_barrier_tick(pc_deployer *d, dep_vc *vc, uint64_t now)
{
    pc_dep_barrier_run(d, vc);
    if (!vc->barrier_open)
        return;
    /* a lost W_FLUSH or W_FLUSHED is asked again; a worker that never
     * answers is lost to the failure detector, which ends the wait */
    if (now - vc->barrier_sent_ms >= DEP_BARRIER_AGAIN_MS) {
        vc->barrier_sent_ms = now;
        for (int i = 0; i < vc->nw; i++)
            if (vc->w[i].flush_wait == vc->barrier)
                s_send_flush(d, vc, &vc->w[i]);
    }
    if (!vc->barrier_warned && now - vc->barrier_ms > DEP_BARRIER_WARN_MS) {
        vc->barrier_warned = true;
        for (int i = 0; i < vc->nw; i++)
            if (vc->w[i].flush_wait == vc->barrier)
                pc_log(PC_LOG_WARN,
                       "VC %016llx: recovery barrier %u still waits for %s after %llu ms",
                       (unsigned long long)vc->id, vc->barrier, vc->w[i].ep,
                       (unsigned long long)(now - vc->barrier_ms));
    }
}

void pc_dep_on_flushed(pc_deployer *d, dep_vc *vc, const pc_msg *m, int wi)
{
    if (pc_buf_len(m->body)) {
        pc_log_src(PC_LOG_WARN, m->from, "dropped FLUSHED from %s: trailing bytes", m->from);
        return;
    }
    dep_worker *w = &vc->w[wi];
    if (!vc->barrier_open || m->h.seq != vc->barrier || w->flush_wait != vc->barrier)
        return; /* an older barrier's, or twice */
    w->flush_wait = 0;
    s_complete(d, vc);
}

void pc_dep_barrier_worker_gone(dep_vc *vc, int wi)
{
    /* what it held is lost: the barrier starts again without it (its
     * VTs, fenced meanwhile, join the next one) */
    if (vc->barrier_open && vc->w[wi].flush_wait == vc->barrier)
        vc->barrier_due = true;
    vc->w[wi].flush_wait = 0;
}

void pc_dep_fix(dep_vc *vc, dep_vt *vt, uint64_t next_in)
{
    pc_dep_fix_clear(vt);
    uint64_t p = next_in ? next_in - 1 : 0;
    pc_cx_det *fixed = NULL;
    size_t n = 0;
    int rc = pc_detlog_fix(vc->dl, vt->id, p, &fixed, &n);
    if (rc) {
        vc->fix_errors++;
        pc_log(PC_LOG_ERROR,
               "VC %016llx VT %llu: %s; incarnation %u resumes at input %llu with no "
               "position fixed",
               (unsigned long long)vc->id, (unsigned long long)vt->id,
               rc == LEV_ENOMEM ? "no memory to fix its positions"
                                : "the determinants after its image leave a gap, or its image "
                                  "is older than its stable one",
               vt->epoch, (unsigned long long)p);
        return;
    }
    vt->fix = fixed;
    vt->nfix = n;
    vt->fix_epoch = vt->epoch;
    vc->fixes++;
    vc->fixed += n;
}

void pc_dep_fix_send(pc_deployer *d, dep_vc *vc, dep_vt *vt)
{
    /* with direct messages, a new incarnation waits for its positions
     * fixed, none included */
    if (vc->direct && vt->epoch > 1 && vt->fix_epoch != vt->epoch) {
        pc_dep_fix_clear(vt);
        vt->fix_epoch = vt->epoch;
    }
    if ((!vt->nfix && !vc->direct) || vt->fix_epoch != vt->epoch || vt->host < 0)
        return;
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_cx_dets_encode(&b, vt->fix, vt->nfix);
    pc_peer_send(d->p, vc->w[vt->host].ep, dep_hdr(PC_W_FIX, vc, vt, 0), &b, NULL);
    pc_wbuf_free(&b);
}

void pc_dep_barrier_status(const dep_vc *vc, pc_wbuf *j)
{
    pc_json_fmt(j,
                ",\"recovery\":{\"barriers\":%llu,\"barrier_open\":%s,\"last_barrier_ms\":%llu,"
                "\"max_barrier_ms\":%llu,\"fixes\":%llu,\"fixed_positions\":%llu,"
                "\"fix_errors\":%llu,\"determinants_learnt\":%llu,\"conflicts\":%llu,"
                "\"orphan_images\":%llu,\"trims\":%llu}",
                (unsigned long long)vc->barriers, vc->barrier_open ? "true" : "false",
                (unsigned long long)vc->barrier_last_ms, (unsigned long long)vc->barrier_max_ms,
                (unsigned long long)vc->fixes, (unsigned long long)vc->fixed,
                (unsigned long long)vc->fix_errors, (unsigned long long)pc_detlog_count(vc->dl),
                (unsigned long long)vc->det_conflicts, (unsigned long long)vc->orphans,
                (unsigned long long)vc->trims);
}
