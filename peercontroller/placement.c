/* placement.c - the deployer's placement and recovery (deployer_private.h):
 * where each VT of a VC runs (the delegator decides), which peers hold
 * its newest images, and what happens when a peer is lost: a VT whose
 * host died or left resumes elsewhere from its newest held image with a
 * new epoch, and a holder list never loses a suspected holder before a
 * replacement has acknowledged an image. Decisions only: time and network
 * are the peer's env (pc_peer_now, pc_peer_send).
 */
#include <stdio.h>
#include <string.h>

#include "delegator.h"
#include "deployer_private.h"
#include "log.h"

/* A placement the host has not confirmed (its executor asks for the VT's
 * inputs first thing, W_RESYNC) after this long, plus the suspicion
 * timeout, is taken for lost and made again: a RUN, RESUME or H_SEND
 * that never arrived, or a RESUME its worker could not act on. It is far
 * above the time an image takes to cross a LAN. */
#define DEP_CONFIRM_MS 30000

/* A VT that can resume only from an image on a peer declared dead waits
 * this long for that peer to come back before it starts over (and fails,
 * when its log was trimmed). About the time a false death takes to be
 * refuted after a partition heals, several times over. */
#define DEP_DEAD_WAIT_MS 20000

/* ===================================================================
 * Holder lists
 * =================================================================== */

/* A peer's state in this peer's view; one it no longer knows is dead. */
static pc_member_state s_state(pc_deployer *d, const char *ep)
{
    const pc_member *m = pc_peer_member(d->p, ep);
    return m ? m->state : PC_MEMBER_DEAD;
}

static bool s_gone(pc_member_state st) { return st == PC_MEMBER_DEAD || st == PC_MEMBER_LEFT; }

/* Whether holder a's image is newer than b's (no image is the oldest). */
static bool s_newer(const dep_holder *a, const dep_holder *b)
{
    return a->epoch > b->epoch || (a->epoch == b->epoch && a->seq > b->seq);
}

static bool s_listed(const dep_vt *vt, const char *ep)
{
    for (int i = 0; i < vt->nholders; i++)
        if (!strcmp(vt->holders[i].ep, ep))
            return true;
    return false;
}

/* Whether holder i is a live replica: alive, and not the host (whose
 * entry stays, for the image it has, until the host confirms the VT). */
static bool s_replica(pc_deployer *d, const dep_vc *vc, const dep_vt *vt, int i)
{
    return s_state(d, vt->holders[i].ep) == PC_MEMBER_ALIVE &&
           (vt->host < 0 || strcmp(vt->holders[i].ep, vc->w[vt->host].ep));
}

static int s_count_alive(pc_deployer *d, const dep_vc *vc, const dep_vt *vt)
{
    int n = 0;
    for (int i = 0; i < vt->nholders; i++)
        n += s_replica(d, vc, vt, i);
    return n;
}

/* Removes holder i from the list; a holder that can still hear it drops
 * its image (but not the one sending it to the host now). */
static void s_remove(pc_deployer *d, dep_vc *vc, dep_vt *vt, int i)
{
    const char *ep = vt->holders[i].ep;
    if (strcmp(ep, vt->src) && !s_gone(s_state(d, ep)))
        pc_peer_send(d->p, ep, dep_hdr(PC_H_DROP, vc, vt, 0), NULL, NULL);
    memmove(&vt->holders[i], &vt->holders[i + 1],
            (size_t)(vt->nholders - i - 1) * sizeof vt->holders[0]);
    vt->nholders--;
}

/* Adds up to `need` live holders that are not the host: other active
 * workers of the VC first (they can resume the VT without a transfer),
 * then any other live peer, and this deployer's own peer last. Returns
 * whether it added any. */
static bool s_add_holders(pc_deployer *d, dep_vc *vc, dep_vt *vt, const char *hostep, int need)
{
    int added = 0;
    pc_member view[256];
    size_t n = pc_members_view(d->p->mem, view, 256);
    if (n > 256)
        n = 256;
    for (int pass = 0; pass < 3 && added < need && vt->nholders < DEP_HOLDERS_MAX; pass++) {
        /* start at a point that spreads the holders over the VTs */
        for (size_t j = 0; j < n && added < need && vt->nholders < DEP_HOLDERS_MAX; j++) {
            const pc_member *m = &view[(j + vt->id) % n];
            if (m->state != PC_MEMBER_ALIVE || !strcmp(m->rec.endpoint, hostep) ||
                s_listed(vt, m->rec.endpoint))
                continue;
            int wi = pc_dep_worker(vc, m->rec.endpoint);
            bool active = wi >= 0 && vc->w[wi].state == W_ACTIVE;
            bool self = !strcmp(m->rec.endpoint, d->p->self.endpoint);
            if ((pass == 0 && !active) || (pass < 2 && self))
                continue;
            dep_holder *h = &vt->holders[vt->nholders++];
            memset(h, 0, sizeof *h);
            pc_ep_copy(h->ep, m->rec.endpoint);
            added++;
        }
    }
    return added > 0;
}

/* Brings the list to `replicas` live holders other than the host. A
 * suspected holder stays, with the image it acknowledged, until `replicas`
 * live holders have acknowledged one at least as new (or it is declared
 * dead or left): a stall that is refuted must not leave a VT without a
 * copy. Returns whether the list changed. */
static bool s_holders_update(pc_deployer *d, dep_vc *vc, dep_vt *vt)
{
    int want = vc->replicas < DEP_REPLICAS_MAX ? vc->replicas : DEP_REPLICAS_MAX;
    const char *hostep = vt->host >= 0 ? vc->w[vt->host].ep : "";
    bool changed = false;
    /* the host's copy dies with the host (but until the host confirms
     * the VT it may be the one to resume from); one that left, or that
     * this peer forgot, holds nothing. One declared dead may have been so
     * falsely (a partition, a loss of messages) and come back with its
     * image: it stays, like a suspected one, until it is covered. */
    for (int i = vt->nholders - 1; i >= 0; i--) {
        const pc_member *m = pc_peer_member(d->p, vt->holders[i].ep);
        if ((vt->confirmed && !strcmp(vt->holders[i].ep, hostep)) || !m ||
            m->state == PC_MEMBER_LEFT) {
            s_remove(d, vc, vt, i);
            changed = true;
        }
    }
    int alive = s_count_alive(d, vc, vt);
    if (alive < want)
        changed |= s_add_holders(d, vc, vt, hostep, want - alive);
    for (int i = vt->nholders - 1; i >= 0; i--) {
        pc_member_state st = s_state(d, vt->holders[i].ep);
        if (st != PC_MEMBER_SUSPECT && st != PC_MEMBER_DEAD)
            continue;
        int covered = 0;
        for (int k = 0; k < vt->nholders; k++)
            covered += s_replica(d, vc, vt, k) && !s_newer(&vt->holders[i], &vt->holders[k]);
        if (covered >= want) {
            s_remove(d, vc, vt, i);
            changed = true;
        }
    }
    /* more live holders than wanted (a suspected one came back): the one
     * with the oldest image goes, the newest added on a tie */
    while (s_count_alive(d, vc, vt) > want) {
        int worst = -1;
        for (int i = 0; i < vt->nholders; i++)
            if (s_replica(d, vc, vt, i) &&
                (worst < 0 || !s_newer(&vt->holders[i], &vt->holders[worst])))
                worst = i;
        if (worst < 0)
            break;
        s_remove(d, vc, vt, worst);
        changed = true;
    }
    return changed;
}

/* "u32 n, n x s holder": the live holders, those a worker sends images
 * to (a suspected one is kept for the image it has, not fed). */
static void s_put_holders(pc_deployer *d, pc_wbuf *b, const dep_vc *vc, const dep_vt *vt)
{
    pc_put_u32(b, (uint32_t)s_count_alive(d, vc, vt));
    for (int i = 0; i < vt->nholders; i++)
        if (s_replica(d, vc, vt, i))
            pc_put_str(b, vt->holders[i].ep);
}

void pc_dep_holders_refresh(pc_deployer *d, dep_vc *vc, dep_vt *vt, bool force)
{
    bool changed = s_holders_update(d, vc, vt);
    if (!(changed || force) || vt->state != VT_RUNNING || !vt->confirmed || vt->host < 0)
        return;
    pc_wbuf b;
    pc_wbuf_init(&b);
    s_put_holders(d, &b, vc, vt);
    pc_peer_send(d->p, vc->w[vt->host].ep, dep_hdr(PC_W_HOLDERS, vc, vt, 0), &b, NULL);
    pc_wbuf_free(&b);
}

uint64_t pc_dep_trim_floor(dep_vt *vt)
{
    uint64_t floor = UINT64_MAX;
    for (int i = 0; i < vt->nholders; i++)
        if (vt->holders[i].epoch && vt->holders[i].next_in < floor)
            floor = vt->holders[i].next_in;
    if (pc_buf_len(vt->image) && vt->image_next_in < floor)
        floor = vt->image_next_in;
    if (*vt->src && vt->src_next_in < floor)
        floor = vt->src_next_in;
    return floor;
}

void pc_dep_src_clear(pc_deployer *d, dep_vc *vc, dep_vt *vt)
{
    if (!*vt->src)
        return;
    if (!s_listed(vt, vt->src) && !s_gone(s_state(d, vt->src)))
        pc_peer_send(d->p, vt->src, dep_hdr(PC_H_DROP, vc, vt, 0), NULL, NULL);
    vt->src[0] = '\0';
}

void pc_dep_confirm(pc_deployer *d, dep_vc *vc, dep_vt *vt)
{
    if (vt->confirmed || vt->state != VT_RUNNING)
        return;
    vt->confirmed = true;
    pc_dep_src_clear(d, vc, vt);
    /* an H_SEND carried the list of its time: the host gets today's */
    pc_dep_holders_refresh(d, vc, vt, true);
}

/* ===================================================================
 * Placement (the delegator decides where)
 * =================================================================== */

/* The holder with the newest image of this VT, or -1: a live one, or a
 * suspected one when no live holder has an image as new (its H_SEND is
 * acted on when it resumes; if it dies first the VT is placed again). */
static int s_best_holder(pc_deployer *d, const dep_vt *vt)
{
    int best = -1;
    bool best_alive = false;
    for (int i = 0; i < vt->nholders; i++) {
        const dep_holder *h = &vt->holders[i];
        pc_member_state st = s_state(d, h->ep);
        if (!h->epoch || (st != PC_MEMBER_ALIVE && st != PC_MEMBER_SUSPECT))
            continue;
        bool alive = st == PC_MEMBER_ALIVE;
        if (best < 0 || s_newer(h, &vt->holders[best]) ||
            (alive && !best_alive && !s_newer(&vt->holders[best], h))) {
            best = i;
            best_alive = alive;
        }
    }
    return best;
}

/* The index of ep's entry if it holds an image as new as holder src's,
 * or -1. */
static int s_holds_best(const dep_vt *vt, int src, const char *ep)
{
    for (int i = 0; src >= 0 && i < vt->nholders; i++)
        if (!strcmp(vt->holders[i].ep, ep) && vt->holders[i].epoch &&
            !s_newer(&vt->holders[src], &vt->holders[i]))
            return i;
    return -1;
}

/* Whether a VT that lost every image it could resume from, and cannot
 * start over (its log was trimmed), should wait rather than fail: a peer
 * declared dead, perhaps falsely, holds an image of it, and it has not
 * waited DEP_DEAD_WAIT_MS yet. The tick places it once that peer is
 * back (or fails it once the wait is over). */
static bool s_waits_for_dead(pc_deployer *d, dep_vc *vc, dep_vt *vt)
{
    if (!vt->recovering || pc_mm_replayable(vc->mm, vt->id))
        return false;
    bool dead_image = false;
    for (int i = 0; i < vt->nholders; i++)
        dead_image |= vt->holders[i].epoch && s_state(d, vt->holders[i].ep) == PC_MEMBER_DEAD;
    uint64_t now = pc_peer_now(d->p);
    if (!dead_image) {
        vt->wait_since = 0;
        return false;
    }
    if (!vt->wait_since) {
        vt->wait_since = now ? now : 1;
        pc_log(PC_LOG_WARN,
               "VC %016llx VT %llu: its images are on peers declared dead and it cannot start "
               "over: waiting %d s for them",
               (unsigned long long)vc->id, (unsigned long long)vt->id, DEP_DEAD_WAIT_MS / 1000);
    }
    return now - vt->wait_since < DEP_DEAD_WAIT_MS;
}

/* The VC's active, live workers as the delegator's candidates (their
 * indices in idx[]): what each offers, and for a VT being placed (vt not
 * NULL) whether it holds the image at holder index src. Their count. */
static int s_cands(pc_deployer *d, dep_vc *vc, const dep_vt *vt, int src, pc_place_cand *cand,
                   int *idx)
{
    int n = 0;
    for (int i = 0; i < vc->nw && n < PC_PLACE_MAX; i++) {
        dep_worker *w = &vc->w[i];
        if (w->state != W_ACTIVE || !pc_peer_alive(d->p, w->ep))
            continue;
        const pc_member *m = pc_peer_member(d->p, w->ep);
        cand[n] = (pc_place_cand){.cores = w->cores,
                                  .rate = w->rate,
                                  .assigned = w->nvts,
                                  .load = m ? m->rec.load : 0,
                                  .holds_image = vt && s_holds_best(vt, src, w->ep) >= 0,
                                  .fresh = !w->ended};
        idx[n++] = i;
    }
    return n;
}

bool pc_dep_place(pc_deployer *d, dep_vc *vc, dep_vt *vt)
{
    /* Just after the VC opened, wait a moment for the workers still
     * enrolling, or every first VT would go to the first one enrolled. */
    if (vt->awaits_barrier)
        return true; /* pending still, the others are placed meanwhile */
    bool enrolling = pc_dep_count(vc, W_ENROLLING) + pc_dep_count(vc, W_LOADING) > 0;
    if (enrolling && pc_peer_now(d->p) - vc->opened_ms < DEP_SETTLE_MS)
        return false;
    pc_place_cand cand[PC_PLACE_MAX];
    int idx[PC_PLACE_MAX];
    int src = s_best_holder(d, vt);
    if (src < 0 && s_waits_for_dead(d, vc, vt))
        return true; /* pending still; the others are placed meanwhile */
    vt->wait_since = 0;
    int n = s_cands(d, vc, vt, src, cand, idx);
    pc_place_why why;
    int c = pc_delegate_why(cand, n, &why);
    if (c < 0)
        return false;
    if (vt->move_why) /* a move rebalancing asked for: its reason */
        why = (pc_place_why)vt->move_why;
    vt->move_why = PC_PLACE_NONE;
    vt->placed_why = (uint8_t)why;
    int host = idx[c];
    dep_worker *w = &vc->w[host];
    bool from_image = pc_buf_len(vt->image) > 0;
    vt->src[0] = '\0';
    if (s_holds_best(vt, src, w->ep) >= 0) /* it resumes from its own copy */
        src = s_holds_best(vt, src, w->ep);
    if (!from_image && vt->recovering && src >= 0) {
        /* before the holders change: the new host leaves their list */
        pc_ep_copy(vt->src, vt->holders[src].ep);
        vt->src_next_in = vt->holders[src].next_in;
    }
    /* a new incarnation takes again the positions after its image that
     * the log knows (one that restarts from nothing can only if its
     * inputs are all still logged) */
    if (vt->epoch > 1 && (from_image || *vt->src || pc_mm_replayable(vc->mm, vt->id)))
        pc_dep_fix(vc, vt, from_image ? vt->image_next_in : *vt->src ? vt->src_next_in : 0);
    vt->host = host;
    vt->state = VT_RUNNING;
    vt->confirmed = false;
    vt->placed_ms = pc_peer_now(d->p);
    w->nvts++;
    pc_resolver_set(vc->where, vt->id, w->ep, vt->epoch);
    pc_dep_place_news(d, vc, vt); /* before its host is told to run it */
    s_holders_update(d, vc, vt);
    pc_wbuf b;
    pc_wbuf_init(&b);
    if (from_image) {
        vt->resumes++;
        s_put_holders(d, &b, vc, vt);
        pc_put_u64(&b, vt->image_next_in);
        pc_peer_send(d->p, w->ep, dep_hdr(PC_W_RESUME, vc, vt, 0), &b, pc_buf_take(&vt->image));
    } else if (*vt->src) {
        /* the holder sends its image straight to the new worker */
        vt->resumes++;
        pc_put_str(&b, w->ep);
        s_put_holders(d, &b, vc, vt);
        pc_peer_send(d->p, vt->src, dep_hdr(PC_H_SEND, vc, vt, 0), &b, NULL);
    } else {
        vt->restarts += vt->epoch > 1;
        pc_put_str(&b, vt->task);
        pc_put_blob(&b, vt->arg, vt->arglen);
        s_put_holders(d, &b, vc, vt);
        pc_peer_send(d->p, w->ep, dep_hdr(PC_W_RUN, vc, vt, 0), &b, NULL);
    }
    pc_wbuf_free(&b);
    if (vc->direct) /* it takes no input without them (a RESYNC asks again) */
        pc_dep_fix_send(d, vc, vt);
    pc_log(PC_LOG_INFO,
           "VC %016llx VT %llu epoch %u placed on %s (%s: %u of %u cores, rate %u)%s%s",
           (unsigned long long)vc->id, (unsigned long long)vt->id, vt->epoch, w->ep,
           pc_place_why_text(why), w->nvts, w->cores, w->rate,
           *vt->src     ? ", from the image at "
           : from_image ? ", from a live image"
                        : "",
           vt->src);
    return true;
}

/* ===================================================================
 * Executor numbers and where each VT runs (W_PLACE)
 * =================================================================== */

static int32_t s_xno_of(const dep_vc *vc, const dep_vt *vt)
{
    const dep_worker *w = vt->state == VT_RUNNING && vt->host >= 0 ? &vc->w[vt->host] : NULL;
    return w && w->state == W_ACTIVE ? w->xno : -1;
}

static void s_send_place(pc_deployer *d, dep_vc *vc, const dep_worker *w, const pc_wbuf *b)
{
    pc_hdr h =
        pc_hdr_make(PC_W_PLACE, vc->id, 0, w->xinc, w->xno >= 0 ? (uint64_t)w->xno : PC_XNO_NONE);
    pc_peer_send(d->p, w->ep, h, b, NULL);
}

void pc_dep_xno_assign(pc_deployer *d, dep_vc *vc, int wi)
{
    uint64_t used = 0;
    for (int i = 0; i < vc->nw; i++)
        if (i != wi && vc->w[i].state == W_ACTIVE && vc->w[i].xno >= 0)
            used |= 1ull << vc->w[i].xno;
    dep_worker *w = &vc->w[wi];
    /* a worker enrolled again keeps its number while no other took it:
     * its executor may be the same process */
    if (w->xno < 0 || (used & 1ull << w->xno))
        w->xno = -1;
    for (int k = 0; k < PC_CX_PEERS && w->xno < 0; k++)
        if (!(used & 1ull << k))
            w->xno = k;
    w->xinc = ++vc->xinc;
    if (w->xno < 0)
        pc_log(PC_LOG_WARN,
               "VC %016llx: %s gets no executor number: %d workers are active, and messages "
               "between executors reach %d at most",
               (unsigned long long)vc->id, w->ep, PC_CX_PEERS + 1, PC_CX_PEERS);
    pc_wbuf b;
    pc_wbuf_init(&b);
    uint32_t n = 0;
    for (int i = 0; i < vc->nvts; i++)
        n += vc->vts[i].state == VT_RUNNING;
    pc_put_u32(&b, n);
    for (int i = 0; i < vc->nvts; i++) {
        const dep_vt *vt = &vc->vts[i];
        if (vt->state != VT_RUNNING)
            continue;
        pc_put_u64(&b, vt->id);
        pc_put_u32(&b, vt->epoch);
        pc_put_u32(&b, (uint32_t)s_xno_of(vc, vt));
    }
    s_send_place(d, vc, w, &b);
    pc_wbuf_free(&b);
    w->xep[0] = '\0'; /* its executor says where it receives under this number */
    pc_dep_links_send(d, vc, wi);
}

void pc_dep_links_send(pc_deployer *d, dep_vc *vc, int wi)
{
    if (!vc->direct)
        return;
    const char *eps[PC_CX_PEERS] = {0};
    uint32_t n = 0;
    for (int i = 0; i < vc->nw; i++) {
        const dep_worker *w = &vc->w[i];
        if (w->state == W_ACTIVE && w->xno >= 0 && w->xep[0]) {
            eps[w->xno] = w->xep;
            n = (uint32_t)w->xno + 1 > n ? (uint32_t)w->xno + 1 : n;
        }
    }
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_u32(&b, n);
    for (uint32_t k = 0; k < n; k++)
        pc_put_str(&b, eps[k] ? eps[k] : "");
    for (int i = 0; i < vc->nw; i++)
        if ((wi < 0 || i == wi) && vc->w[i].state == W_ACTIVE)
            pc_peer_send(d->p, vc->w[i].ep, pc_hdr_make(PC_W_LINKS, vc->id, 0, 0, 0), &b, NULL);
    pc_wbuf_free(&b);
}

void pc_dep_on_link(pc_deployer *d, dep_vc *vc, const pc_msg *m, int wi)
{
    dep_worker *w = &vc->w[wi];
    char ep[PC_ENDPOINT_MAX];
    pc_rbuf r;
    pc_rbuf_init(&r, pc_buf_data(m->body), pc_buf_len(m->body));
    pc_get_str(&r, ep, sizeof ep);
    if (!pc_rbuf_done(&r) || !pc_endpoint_valid(ep)) {
        pc_log(PC_LOG_WARN, "VC %016llx: dropped LINK from %s: %s", (unsigned long long)vc->id,
               w->ep, pc_rbuf_done(&r) ? "not an endpoint" : pc_rbuf_why(&r));
        return;
    }
    /* a link of an executor number the worker no longer has is stale */
    if (!vc->direct || w->state != W_ACTIVE || w->xno < 0 || m->h.seq != (uint64_t)w->xno ||
        m->h.epoch != w->xinc || !strcmp(w->xep, ep))
        return;
    pc_ep_copy(w->xep, ep);
    pc_log(PC_LOG_DEBUG, "VC %016llx: executor %d of %s receives at %s", (unsigned long long)vc->id,
           w->xno, w->ep, ep);
    pc_dep_links_send(d, vc, -1);
}

void pc_dep_place_news(pc_deployer *d, dep_vc *vc, const dep_vt *vt)
{
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_u32(&b, 1);
    pc_put_u64(&b, vt->id);
    pc_put_u32(&b, vt->epoch);
    pc_put_u32(&b, (uint32_t)s_xno_of(vc, vt));
    for (int i = 0; i < vc->nw; i++)
        if (vc->w[i].state == W_ACTIVE)
            s_send_place(d, vc, &vc->w[i], &b);
    pc_wbuf_free(&b);
}

void pc_dep_place_pending(pc_deployer *d, dep_vc *vc)
{
    for (int i = 0; i < vc->nvts; i++)
        if (vc->vts[i].state == VT_PENDING && !pc_dep_place(d, vc, &vc->vts[i]))
            return;
}

void pc_dep_unplace(pc_deployer *d, dep_vc *vc, dep_vt *vt)
{
    if (vt->host >= 0 && vc->w[vt->host].nvts)
        vc->w[vt->host].nvts--;
    pc_dep_src_clear(d, vc, vt);
    vt->epoch++;
    pc_dep_epoch_moved(vc, vt, false);
    vt->host = -1;
    vt->state = VT_PENDING;
    pc_dep_place_news(d, vc, vt);
    vt->recovering = true;
    vt->confirmed = false;
    pc_mm_vt_lost(vc->mm, vt->id);
}

void pc_dep_requeue(pc_deployer *d, dep_vc *vc, dep_vt *vt)
{
    if (vt->state != VT_RUNNING && vt->state != VT_PENDING)
        return;
    int old = vt->host;
    pc_dep_unplace(d, vc, vt);
    pc_dep_epoch_moved(vc, vt, true); /* placed once the barrier is done */
    vt->move_why = PC_PLACE_NONE;     /* placed again for a loss, not moved */
    /* whoever ran it stops its copy when this reaches it */
    if (old >= 0)
        pc_peer_send(d->p, vc->w[old].ep, dep_hdr(PC_W_FENCE, vc, vt, 0), NULL, NULL);
    pc_dep_place(d, vc, vt);
}

/* ===================================================================
 * Recovery
 * =================================================================== */

bool pc_dep_worker_gone(pc_deployer *d, dep_vc *vc, int wi)
{
    dep_worker *w = &vc->w[wi];
    bool was_active = w->state == W_ACTIVE || w->state == W_LOADING;
    vc->lost_workers += was_active;
    w->state = W_GONE;
    w->since_ms = pc_peer_now(d->p);
    pc_dep_barrier_worker_gone(vc, wi);
    pc_mm_host_gone(vc->mm, w->ep); /* no writer waits for its copies any more */
    return was_active;
}

void pc_dep_worker_lost(pc_deployer *d, dep_vc *vc, int wi, const char *why)
{
    dep_worker *w = &vc->w[wi];
    bool was_active = w->state != W_GONE && pc_dep_worker_gone(d, vc, wi);
    int moved = 0;
    for (int i = 0; i < vc->nvts; i++) {
        dep_vt *vt = &vc->vts[i];
        if (vt->host == wi && vt->state == VT_RUNNING) {
            pc_dep_requeue(d, vc, vt);
            moved++;
        }
    }
    if (!was_active && !moved)
        return;
    /* the worker drops the whole VC if it comes back */
    pc_peer_send(d->p, w->ep, pc_hdr_make(PC_W_FENCE, vc->id, 0, 0, 0), NULL, NULL);
    pc_log(PC_LOG_WARN, "VC %016llx lost worker %s (%s): %d VTs recovering",
           (unsigned long long)vc->id, w->ep, why, moved);
    pc_dep_enrol(d, vc, pc_peer_now(d->p));
}

void pc_dep_on_member(pc_deployer *d, dep_vc *vc, const pc_member *m)
{
    const char *ep = m->rec.endpoint;
    if (s_gone(m->state)) {
        int wi = pc_dep_worker(vc, ep);
        if (wi >= 0)
            pc_dep_worker_lost(d, vc, wi, pc_member_state_name(m->state));
        for (int i = 0; i < vc->nvts; i++) {
            dep_vt *vt = &vc->vts[i];
            if (vt->state != VT_RUNNING || vt->confirmed || strcmp(vt->src, ep))
                continue;
            pc_log(PC_LOG_WARN, "VC %016llx VT %llu: %s died before it sent the image",
                   (unsigned long long)vc->id, (unsigned long long)vt->id, ep);
            pc_dep_requeue(d, vc, vt);
        }
    }
    /* a suspected holder gets a replacement, a dead one is dropped, a
     * newcomer may fill a short list; the host learns of any change */
    for (int i = 0; i < vc->nvts; i++) {
        dep_vt *vt = &vc->vts[i];
        if (vt->state == VT_RUNNING)
            pc_dep_holders_refresh(d, vc, vt, s_listed(vt, ep));
    }
}

void pc_dep_watchdog(pc_deployer *d, dep_vc *vc, uint64_t now)
{
    int suspect_ms =
        d->p->o.members.suspect_ms > 0 ? d->p->o.members.suspect_ms : PC_MEMBERS_SUSPECT_MS;
    uint64_t limit = DEP_CONFIRM_MS + (uint64_t)suspect_ms;
    for (int i = 0; i < vc->nvts; i++) {
        dep_vt *vt = &vc->vts[i];
        if (vt->state != VT_RUNNING || vt->confirmed || now - vt->placed_ms <= limit)
            continue;
        pc_log(PC_LOG_WARN, "VC %016llx VT %llu: %s never confirmed epoch %u; placing it again",
               (unsigned long long)vc->id, (unsigned long long)vt->id, vc->w[vt->host].ep,
               vt->epoch);
        /* a worker that does not start what it is given for this long is
         * not serving the VC (its executor is stuck, or it restarted and
         * forgot the VC): it is taken for lost, not given the VT again */
        if (vt->host >= 0 && vc->w[vt->host].state == W_ACTIVE)
            pc_dep_worker_lost(d, vc, vt->host, "it never started a VT it was given");
        if (vt->state == VT_RUNNING && !vt->confirmed)
            pc_dep_requeue(d, vc, vt);
    }
}

/* A move whose image has not come back (W_STOPPED) after this long is
 * given up: the VT may have been stopped and its image lost on the way,
 * so it is placed again from its newest held image (and the copy that
 * may still run where it was is fenced). */
#define DEP_MIGRATE_MS 5000
/* A VT placed less than this long ago is not moved again. */
#define DEP_SETTLED_MS 2000

void pc_dep_rebalance(pc_deployer *d, dep_vc *vc, uint64_t now)
{
    for (int i = 0; i < vc->nvts; i++) {
        dep_vt *vt = &vc->vts[i];
        if (!vt->migrating_ms)
            continue;
        if (vt->state == VT_RUNNING && now - vt->migrating_ms < DEP_MIGRATE_MS)
            return; /* one move at a time */
        vt->migrating_ms = 0;
        if (vt->state == VT_RUNNING) {
            pc_log(PC_LOG_WARN, "VC %016llx VT %llu: its move got no image back: placed again",
                   (unsigned long long)vc->id, (unsigned long long)vt->id);
            pc_dep_requeue(d, vc, vt);
        }
    }
    pc_place_cand cand[PC_PLACE_MAX];
    int idx[PC_PLACE_MAX];
    int n = s_cands(d, vc, NULL, -1, cand, idx);
    pc_move mv;
    if (!pc_rebalance(cand, n, &mv))
        return;
    for (int i = vc->nvts - 1; i >= 0; i--) {
        dep_vt *vt = &vc->vts[i];
        if (vt->state != VT_RUNNING || vt->host != idx[mv.from] || !vt->confirmed ||
            now - vt->placed_ms < DEP_SETTLED_MS)
            continue;
        vt->migrating_ms = now ? now : 1;
        vt->move_why = (uint8_t)mv.why;
        pc_peer_send(d->p, vc->w[vt->host].ep, dep_hdr(PC_W_MIGRATE, vc, vt, 0), NULL, NULL);
        const dep_worker *a = &vc->w[idx[mv.from]], *b = &vc->w[idx[mv.to]];
        pc_log(PC_LOG_INFO,
               "VC %016llx VT %llu: moving from %s (%u VTs on %u cores, rate %u) to %s (%u VTs "
               "on %u cores, rate %u): %s",
               (unsigned long long)vc->id, (unsigned long long)vt->id, a->ep, a->nvts, a->cores,
               a->rate, b->ep, b->nvts, b->cores, b->rate, pc_place_why_text(mv.why));
        return;
    }
}
