/* deployer.c - the deployer: one virtual computer (VC) per local client.
 * It is the authority for the VC's VT ids and epochs; its enrolment
 * requestor and worker quota maintainer keep `quota` workers enrolled; it
 * takes the client's requests and the workers' and holders' messages,
 * and answers for the VC's status. Where VTs run, who holds their images
 * and recovery after a peer is declared dead or left are placement.c's
 * (deployer_private.h is what the two share).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delegator.h"
#include "deployer_private.h"
#include "lev_errors.h"
#include "log.h"
#include "modmgr.h"
#include "vec.h"
#include "vtchan.h"

#define DEP_ENROL_TIMEOUT_MS 3000
#define DEP_REFUSED_RETRY_MS 5000
#define DEP_TICK_MS 50
#define DEP_MM_TICK_MS 1000 /* the message manager's repairs (pc_mm_tick) */

/* A refusal for a reason that does not pass (the module cannot be
 * loaded there) is not asked again for this VC. */
#define DEP_NEVER UINT64_MAX
static const char *const s_wstate[] = {"enrolling", "loading", "active", "gone", "refused"};
static const char *const s_vtstate[] = {"pending", "running", "done", "failed"};

/* ===================================================================
 * Helpers
 * =================================================================== */

static dep_vc *s_vc(pc_deployer *d, uint64_t id)
{
    for (dep_vc *vc = d->vcs; vc; vc = vc->next)
        if (vc->id == id)
            return vc;
    return NULL;
}

static dep_vt *s_vt(dep_vc *vc, uint64_t id) { return dep_vt_of(vc, id); }

int pc_dep_worker(const dep_vc *vc, const char *ep)
{
    for (int i = 0; i < vc->nw; i++)
        if (!strcmp(vc->w[i].ep, ep))
            return i;
    return -1;
}

static void s_client_error(pc_deployer *d, const char *to, uint64_t vcid, uint64_t seq, int err,
                           const char *detail)
{
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_i32(&b, err);
    pc_put_str(&b, detail);
    pc_peer_send(d->p, to, pc_hdr_make(PC_C_ERROR, vcid, 0, 0, seq), &b, NULL);
    pc_wbuf_free(&b);
}

/* Direct messages: reads a VT's causal state (b: pc_cx_image, as W_DONE
 * and H_LOGGED carry it) into *im; false when it is empty. */
static bool s_get_cx(pc_rbuf *r, pc_cx_image *im)
{
    const void *part = NULL;
    size_t plen = 0;
    pc_get_blob(r, &part, &plen);
    const char *why = NULL;
    if (pc_rbuf_done(r) && plen && pc_cx_image_decode(part, plen, RT_CH_MAX_MSG, im, &why))
        pc_rbuf_fail(r, why ? why : "deployer out of memory");
    return plen != 0;
}

/* Direct messages: what VT `id`, which ended or failed, still held in
 * its sender log (and, when `had`, how far it had each channel) is kept
 * for its receivers. */
static void s_keep_left(dep_vc *vc, uint64_t id, const pc_cx_image *im, bool had)
{
    if (pc_mm_vt_left(vc->mm, id, im->log, im->nlog) ||
        (had && pc_mm_vt_had(vc->mm, id, im->cons, im->ncons)))
        pc_log(PC_LOG_ERROR,
               "VC %016llx VT %llu: no memory to keep what it sent for receivers that resume",
               (unsigned long long)vc->id, (unsigned long long)id);
}

/* Direct messages: a VT that fails for good takes its sender log with
 * it, and a receiver resumed from an image older than a message it had
 * of it waits at that message's fixed position. The holders of its
 * newest image have the log as far as that image: they are asked for it
 * (H_LOG; s_logged keeps the first answer for the receivers). */
static void s_ask_log(pc_deployer *d, dep_vc *vc, dep_vt *vt)
{
    const dep_holder *newest = NULL;
    for (int i = 0; i < vt->nholders; i++) {
        const dep_holder *h = &vt->holders[i];
        if (h->epoch && (!newest || h->epoch > newest->epoch ||
                         (h->epoch == newest->epoch && h->seq > newest->seq)))
            newest = h;
    }
    vt->log_wait = 0;
    for (int i = 0; newest && i < vt->nholders; i++) {
        const dep_holder *h = &vt->holders[i];
        if (h->epoch != newest->epoch || h->seq != newest->seq)
            continue;
        pc_peer_send(d->p, h->ep, dep_hdr(PC_H_LOG, vc, vt, 0), NULL, NULL);
        vt->log_wait++;
    }
    if (!vt->log_wait)
        pc_log(PC_LOG_INFO,
               "VC %016llx VT %llu failed with no image held: what it sent after its start is "
               "lost to receivers that resume",
               (unsigned long long)vc->id, (unsigned long long)vt->id);
}

static void s_logged(pc_deployer *d, dep_vc *vc, pc_msg *m)
{
    (void)d;
    dep_vt *vt = s_vt(vc, m->h.vt);
    if (!vt || vt->state != VT_FAILED || vt->log_wait <= 0)
        return; /* not asked, or answered already */
    pc_rbuf r;
    pc_rbuf_init(&r, pc_buf_data(m->body), pc_buf_len(m->body));
    pc_cx_image im = {0};
    bool none = !s_get_cx(&r, &im) && pc_rbuf_done(&r);
    if (pc_rbuf_done(&r) && !none && im.vt != vt->id)
        pc_rbuf_fail(&r, "the causal state of another VT");
    vt->log_wait--;
    if (!pc_rbuf_done(&r) || none) {
        pc_log(vt->log_wait ? PC_LOG_INFO : PC_LOG_WARN,
               "VC %016llx VT %llu: no sender log from %s (%s)%s", (unsigned long long)vc->id,
               (unsigned long long)vt->id, m->from, none ? "no image held" : pc_rbuf_why(&r),
               vt->log_wait ? "" : ": what it sent after its last image held is lost");
        pc_cx_image_clear(&im);
        return;
    }
    vt->log_wait = 0;
    s_keep_left(vc, vt->id, &im, false);
    pc_log(PC_LOG_DEBUG, "VC %016llx VT %llu failed: %zu messages of its image %u.%llu kept",
           (unsigned long long)vc->id, (unsigned long long)vt->id, im.nlog, m->h.epoch,
           (unsigned long long)m->h.seq);
    pc_cx_image_clear(&im);
}

/* Ends a VT with its result (or error) and tells the client, once. */
static void s_finish(pc_deployer *d, dep_vc *vc, dep_vt *vt, int err, const char *detail,
                     const void *res, size_t len)
{
    if (vt->state == VT_DONE || vt->state == VT_FAILED)
        return;
    vt->state = err ? VT_FAILED : VT_DONE;
    if (vt->host >= 0 && vc->w[vt->host].nvts)
        vc->w[vt->host].nvts--;
    if (vt->host >= 0)
        vc->w[vt->host].ended++;
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_i32(&b, err);
    pc_put_str(&b, detail);
    pc_put_blob(&b, res, len);
    pc_peer_send(d->p, vc->client, dep_hdr(PC_C_RESULT, vc, vt, 0), &b, NULL);
    pc_wbuf_free(&b);
    pc_dep_src_clear(d, vc, vt);
    if (err && vc->direct)
        s_ask_log(d, vc, vt); /* before the drop, which follows it to the same holders */
    for (int i = 0; i < vt->nholders; i++)
        pc_peer_send(d->p, vt->holders[i].ep, dep_hdr(PC_H_DROP, vc, vt, 0), NULL, NULL);
    vt->nholders = 0;
    pc_buf_drop(&vt->image);
    pc_resolver_forget(vc->where, vt->id);
    pc_mm_vt_ended_with(vc->mm, vt->id, err);
    pc_dep_place_news(d, vc, vt);
    pc_dep_fix_clear(vt);
    vt->awaits_barrier = false;
    free(vt->arg);
    vt->arg = NULL;
    pc_log(err ? PC_LOG_WARN : PC_LOG_DEBUG, "VC %016llx VT %llu %s%s%s%s",
           (unsigned long long)vc->id, (unsigned long long)vt->id, err ? "failed: " : "done",
           err ? lev_strerror(err) : "", err && detail && *detail ? ": " : "",
           err && detail ? detail : "");
}

/* ===================================================================
 * Enrolment requestor and worker quota maintainer
 * =================================================================== */

int pc_dep_count(const dep_vc *vc, int state)
{
    int n = 0;
    for (int i = 0; i < vc->nw; i++)
        n += vc->w[i].state == state;
    return n;
}

static dep_worker *s_add_worker(dep_vc *vc, const char *ep)
{
    if (RT_VEC_RESERVE(vc->w, vc->capw, (size_t)vc->nw, 1))
        return NULL;
    dep_worker *w = &vc->w[vc->nw++];
    memset(w, 0, sizeof *w);
    pc_ep_copy(w->ep, ep);
    w->xno = -1;
    return w;
}

static void s_send_enrol(pc_deployer *d, dep_vc *vc, dep_worker *w, uint64_t now)
{
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_str(&b, pc_peer_endpoint(d->p));
    pc_put_raw(&b, vc->hash, PC_HASH_LEN);
    pc_put_u64(&b, pc_buf_len(vc->module));
    pc_put_str(&b, vc->arch);
    pc_put_i32(&b, vc->ckpt_ms);
    pc_put_u64(&b, pc_members_mesh_id(d->p->mem)); /* a peer of another mesh refuses */
    pc_put_u8(&b, vc->direct ? PC_ENROL_DIRECT : 0);
    /* the VC's limits: the worker holds its VTs to them (and to its own) */
    pc_put_u64(&b, d->p->o.limits.vt_memory);
    pc_put_u64(&b, pc_mm_max_msg(vc->mm));
    pc_put_u64(&b, d->p->o.limits.value);
    w->state = W_ENROLLING;
    w->since_ms = now;
    pc_peer_send(d->p, w->ep, dep_hdr(PC_W_ENROL, vc, NULL, 0), &b, NULL);
    pc_wbuf_free(&b);
}

void pc_dep_enrol(pc_deployer *d, dep_vc *vc, uint64_t now)
{
    int have =
        pc_dep_count(vc, W_ENROLLING) + pc_dep_count(vc, W_LOADING) + pc_dep_count(vc, W_ACTIVE);
    int want = vc->quota ? vc->quota : 1 << 20;
    if (have >= want)
        return;
    pc_member view[256];
    size_t n = pc_members_view(d->p->mem, view, 256);
    if (n > 256)
        n = 256;
    for (size_t i = 0; i < n && have < want; i++) {
        const pc_member *m = &view[i];
        if (m->state != PC_MEMBER_ALIVE || !m->rec.cores)
            continue;
        int k = pc_dep_worker(vc, m->rec.endpoint);
        dep_worker *w = k >= 0 ? &vc->w[k] : NULL;
        if (w && (w->state == W_ENROLLING || w->state == W_LOADING || w->state == W_ACTIVE))
            continue;
        if (w && w->state == W_REFUSED &&
            (w->since_ms == DEP_NEVER || now - w->since_ms < DEP_REFUSED_RETRY_MS))
            continue;
        if (w && w->state == W_GONE && now - w->since_ms < DEP_REFUSED_RETRY_MS)
            continue;
        if (!w && !(w = s_add_worker(vc, m->rec.endpoint)))
            return;
        w->cores = m->rec.cores;
        w->rate = m->rec.rate;
        s_send_enrol(d, vc, w, now);
        have++;
    }
}

/* ===================================================================
 * Client requests
 * =================================================================== */

static void s_vc_free(dep_vc *vc)
{
    for (int i = 0; i < vc->nvts; i++) {
        free(vc->vts[i].task);
        free(vc->vts[i].arg);
        pc_buf_drop(&vc->vts[i].image);
    }
    pc_dep_barrier_free(vc);
    free(vc->vts);
    free(vc->w);
    pc_buf_drop(&vc->module);
    pc_resolver_destroy(&vc->where);
    pc_mm_destroy(&vc->mm);
    free(vc);
}

/* Closes a VC: workers drop it, holders drop its images. */
static void s_vc_close(pc_deployer *d, dep_vc *vc, const char *why)
{
    for (int i = 0; i < vc->nw; i++)
        if (vc->w[i].state != W_REFUSED)
            pc_peer_send(d->p, vc->w[i].ep, dep_hdr(PC_W_CLOSE, vc, NULL, 0), NULL, NULL);
    pc_member view[256];
    size_t n = pc_members_view(d->p->mem, view, 256);
    for (size_t i = 0; i < n && i < 256; i++) /* a suspected holder too, if it comes back */
        if (view[i].state == PC_MEMBER_ALIVE || view[i].state == PC_MEMBER_SUSPECT)
            pc_peer_send(d->p, view[i].rec.endpoint, dep_hdr(PC_H_DROP, vc, NULL, 0), NULL, NULL);
    for (dep_vc **pp = &d->vcs; *pp; pp = &(*pp)->next)
        if (*pp == vc) {
            *pp = vc->next;
            break;
        }
    pc_log(PC_LOG_INFO, "VC %016llx closed (%s)", (unsigned long long)vc->id, why);
    s_vc_free(vc);
}

static void s_open(pc_deployer *d, pc_msg *m)
{
    pc_rbuf r;
    pc_rbuf_init(&r, pc_buf_data(m->body), pc_buf_len(m->body));
    int32_t workers = pc_get_i32(&r), ckpt = pc_get_i32(&r), replicas = pc_get_i32(&r);
    uint64_t digest = pc_get_u64(&r);
    const void *hash = NULL;
    pc_get_raw(&r, &hash, PC_HASH_LEN);
    if (!pc_rbuf_done(&r) || !pc_buf_len(m->bulk) || workers < 0 || replicas < 0) {
        s_client_error(d, m->from, 0, m->h.seq, LEV_EINVAL,
                       !pc_rbuf_done(&r) ? pc_rbuf_why(&r)
                                         : "VC options out of range, or no task module");
        return;
    }
    dep_vc *vc = calloc(1, sizeof *vc);
    if (!vc || pc_resolver_new(&vc->where)) {
        free(vc);
        s_client_error(d, m->from, 0, m->h.seq, LEV_ENOMEM, "deployer out of memory");
        return;
    }
    vc->id = ++d->p->vc_counter;
    pc_ep_copy(vc->client, m->from);
    vc->quota = workers;
    vc->ckpt_ms = ckpt == 0 ? 2000 : ckpt;
    /* Two holders by default, on two peers other than the VT's host (and
     * other than this one while other peers are live): any two faults of
     * other peers than the client's, a crash or a pause, leave the host
     * or one of the copies (see README.md, "Recovery and fencing"). The
     * client's own peer could hold every image and never count as a
     * fault, but then every image of the VC would cross the client's one
     * link and sit in its memory: holders on the workers spread that
     * load over the mesh. */
    vc->replicas = replicas ? replicas : 2;
    memcpy(vc->hash, hash, PC_HASH_LEN);
    vc->digest = digest;
    vc->module = pc_buf_take(&m->bulk);
    if (pc_module_arch(pc_buf_data(vc->module), pc_buf_len(vc->module), vc->arch)) {
        uint64_t seq = m->h.seq;
        s_vc_free(vc);
        s_client_error(d, m->from, 0, seq, LEV_EMODULE, "the task module is not an ELF file");
        return;
    }
    /* a message must fit in one wire message of this mesh, with its header */
    size_t max_msg = d->p->o.max_msg > 4096 ? d->p->o.max_msg - 4096 : 1;
    pc_mm_opts mo = {.p = d->p,
                     .vc = vc->id,
                     .client = vc->client,
                     .where = vc->where,
                     .max_msg = max_msg < RT_CH_MAX_MSG ? max_msg : RT_CH_MAX_MSG,
                     .max_value = d->p->o.limits.value,
                     .ref_min = d->p->o.global_ref_min,
                     .direct = d->p->o.direct,
                     .reads_near = !d->p->o.reads_deployer};
    if (pc_mm_new(&vc->mm, &mo) || pc_dep_barrier_init(vc)) {
        uint64_t seq = m->h.seq;
        s_vc_free(vc);
        s_client_error(d, m->from, 0, seq, LEV_ENOMEM, "deployer out of memory");
        return;
    }
    vc->next_vt = 2;
    vc->direct = d->p->o.direct;
    vc->client_seen_ms = vc->opened_ms = pc_peer_now(d->p);
    vc->next = d->vcs;
    d->vcs = vc;
    pc_log(PC_LOG_INFO, "VC %016llx opened for %s: quota %d, checkpoint %d ms, %d replicas",
           (unsigned long long)vc->id, vc->client, vc->quota, vc->ckpt_ms, vc->replicas);
    pc_peer_send(d->p, m->from, pc_hdr_make(PC_C_OPENED, vc->id, 0, 0, m->h.seq), NULL, NULL);
    pc_dep_enrol(d, vc, pc_peer_now(d->p));
}

static void s_start(pc_deployer *d, dep_vc *vc, pc_msg *m)
{
    pc_rbuf r;
    pc_rbuf_init(&r, pc_buf_data(m->body), pc_buf_len(m->body));
    char *task = pc_get_strdup(&r, 255);
    const void *arg = NULL;
    size_t len = 0;
    pc_get_blob(&r, &arg, &len);
    if (!pc_rbuf_done(&r) || !task || !*task) {
        free(task);
        s_client_error(d, m->from, vc->id, m->h.seq, LEV_EINVAL,
                       !pc_rbuf_done(&r) ? pc_rbuf_why(&r) : "start: no task name");
        return;
    }
    if (d->p->o.limits.vts && vc->nvts >= d->p->o.limits.vts) {
        free(task);
        char why[160];
        snprintf(why, sizeof why,
                 "the VC has started %d VTs, the most its deployer allows (levpeer --max-vts)",
                 vc->nvts);
        s_client_error(d, m->from, vc->id, m->h.seq, LEV_ERANGE, why);
        return;
    }
    if (RT_VEC_RESERVE(vc->vts, vc->capvts, (size_t)vc->nvts, 1)) {
        free(task);
        s_client_error(d, m->from, vc->id, m->h.seq, LEV_ENOMEM, "deployer out of memory");
        return;
    }
    dep_vt *vt = &vc->vts[vc->nvts];
    memset(vt, 0, sizeof *vt);
    vt->arg = len ? malloc(len) : NULL;
    if (len && !vt->arg) {
        free(task);
        s_client_error(d, m->from, vc->id, m->h.seq, LEV_ENOMEM, "deployer out of memory");
        return;
    }
    if (len)
        memcpy(vt->arg, arg, len);
    if (pc_mm_vt_add(vc->mm, vc->next_vt)) {
        free(task);
        free(vt->arg);
        s_client_error(d, m->from, vc->id, m->h.seq, LEV_ENOMEM, "deployer out of memory");
        return;
    }
    vc->nvts++;
    vt->id = vc->next_vt++;
    vt->task = task;
    vt->arglen = len;
    vt->epoch = 1;
    vt->host = -1;
    vt->state = VT_PENDING;
    vt->started_ms = pc_peer_now(d->p);
    pc_peer_send(d->p, m->from, pc_hdr_make(PC_C_STARTED, vc->id, vt->id, 1, m->h.seq), NULL, NULL);
    pc_dep_place(d, vc, vt);
}

/* The VC's counts now (what C_STATS answers and the status shows). */
static lev_vc_stats s_vc_stats(const dep_vc *vc)
{
    lev_vc_stats st = {.lost_peers = vc->lost_workers, .messages = pc_mm_delivered(vc->mm)};
    for (int i = 0; i < vc->nw; i++)
        if (vc->w[i].state == W_ACTIVE) {
            st.peers++;
            st.cores += vc->w[i].cores;
        }
    for (int i = 0; i < vc->nvts; i++) {
        const dep_vt *vt = &vc->vts[i];
        bool ended = vt->state == VT_DONE || vt->state == VT_FAILED;
        st.vts += !ended;
        st.vts_ended += ended;
        st.checkpoints += vt->checkpoints;
        st.resumes += (uint64_t)vt->resumes;
        st.restarts += (uint64_t)vt->restarts;
    }
    return st;
}

static void s_client_msg(pc_deployer *d, pc_msg *m)
{
    if (m->h.type == PC_C_OPEN) {
        s_open(d, m);
        return;
    }
    if (m->h.type == PC_C_PING) {
        for (dep_vc *vc = d->vcs; vc; vc = vc->next)
            if (!strcmp(vc->client, m->from))
                vc->client_seen_ms = pc_peer_now(d->p);
        pc_peer_send(d->p, m->from, pc_hdr_make(PC_C_PONG, m->h.vc, 0, 0, m->h.seq), NULL, NULL);
        return;
    }
    dep_vc *vc = s_vc(d, m->h.vc);
    if (!vc || strcmp(vc->client, m->from)) {
        pc_log_src(PC_LOG_WARN, m->from, "dropped %s from %s: no VC %016llx of that client here",
                   pc_type_name(m->h.type), m->from, (unsigned long long)m->h.vc);
        s_client_error(d, m->from, m->h.vc, m->h.seq, LEV_EINVAL, "no such virtual computer");
        return;
    }
    vc->client_seen_ms = pc_peer_now(d->p);
    if (m->h.type == PC_C_START) {
        s_start(d, vc, m);
    } else if (m->h.type == PC_C_SEND || m->h.type == PC_C_GSET || m->h.type == PC_C_GGET) {
        pc_mm_client(vc->mm, m);
    } else if (m->h.type == PC_C_STATS) {
        lev_vc_stats st = s_vc_stats(vc);
        pc_wbuf b;
        pc_wbuf_init(&b);
        pc_put_vc_stats(&b, &st);
        pc_peer_send(d->p, m->from, dep_hdr(PC_C_STATS_REPLY, vc, NULL, m->h.seq), &b, NULL);
        pc_wbuf_free(&b);
    } else if (m->h.type == PC_C_CLOSE) {
        uint64_t id = vc->id;
        s_vc_close(d, vc, "closed by its client");
        pc_peer_send(d->p, m->from, pc_hdr_make(PC_C_CLOSED, id, 0, 0, m->h.seq), NULL, NULL);
    } else {
        pc_log_src(PC_LOG_WARN, m->from, "dropped %s from client %s: not a request",
                   pc_type_name(m->h.type), m->from);
    }
}

/* ===================================================================
 * Workers' and holders' messages
 * =================================================================== */

/* The VT a worker's message is about, if it comes from the current
 * incarnation's host; otherwise NULL, and an older incarnation is
 * fenced. */
static dep_vt *s_current(pc_deployer *d, dep_vc *vc, pc_msg *m, bool from_host)
{
    dep_vt *vt = s_vt(vc, m->h.vt);
    if (!vt) {
        pc_log_src(PC_LOG_WARN, m->from, "dropped %s from %s: no VT %llu in VC %016llx",
                   pc_type_name(m->h.type), m->from, (unsigned long long)m->h.vt,
                   (unsigned long long)vc->id);
        return NULL;
    }
    bool host_ok = !from_host || (vt->host >= 0 && !strcmp(vc->w[vt->host].ep, m->from));
    if (m->h.epoch != vt->epoch || !host_ok) {
        pc_log_src(PC_LOG_INFO, m->from, "refused %s of VT %llu epoch %u from %s: current epoch %u",
                   pc_type_name(m->h.type), (unsigned long long)vt->id, m->h.epoch, m->from,
                   vt->epoch);
        if (m->h.epoch < vt->epoch && from_host)
            pc_peer_send(d->p, m->from, dep_hdr(PC_W_FENCE, vc, vt, 0), NULL, NULL);
        return NULL;
    }
    if (vt->state == VT_DONE || vt->state == VT_FAILED)
        return NULL;
    return vt;
}

/* Direct messages: W_STALL, a VT has waited at a position fixed for a
 * message (its executor says so at each look). If no one has that
 * message any more (its sender failed for good, and neither the
 * sender's last image held nor anything else kept it), the VT would
 * wait for good: it fails, saying which message was lost. */
static void s_stall(pc_deployer *d, dep_vc *vc, pc_msg *m)
{
    dep_vt *t = s_current(d, vc, m, true);
    if (!t)
        return;
    pc_cx_det *at = NULL;
    size_t n = 0;
    const char *why = NULL;
    if (pc_cx_dets_decode(pc_buf_data(m->body), pc_buf_len(m->body), &at, &n, &why) || n != 1 ||
        at[0].vt != t->id) {
        pc_log_src(PC_LOG_WARN, m->from, "dropped STALL from %s: %s", m->from,
                   why ? why : "not one position of its VT");
        free(at);
        return;
    }
    const dep_vt *s = s_vt(vc, at[0].from);
    bool lost = s && s->state == VT_FAILED && s->log_wait <= 0 &&
                !pc_mm_vt_kept(vc->mm, t->id, s->id, at[0].seq);
    if (lost) {
        char detail[160];
        snprintf(detail, sizeof detail,
                 "message %llu of VT %llu, which it had taken, is lost: VT %llu failed and no "
                 "image of it held the message",
                 (unsigned long long)at[0].seq, (unsigned long long)s->id,
                 (unsigned long long)s->id);
        s_finish(d, vc, t, LEV_EFAILED, detail, NULL, 0);
    }
    free(at);
}

static void s_enrolled(pc_deployer *d, dep_vc *vc, pc_msg *m, int wi)
{
    dep_worker *w = &vc->w[wi];
    pc_rbuf r;
    pc_rbuf_init(&r, pc_buf_data(m->body), pc_buf_len(m->body));
    int32_t err = pc_get_i32(&r);
    uint8_t has = pc_get_u8(&r);
    uint32_t cores = pc_get_u32(&r);
    if (!pc_rbuf_done(&r) || w->state != W_ENROLLING)
        return;
    if (err || !cores) {
        w->state = W_REFUSED;
        /* the module cannot be loaded there, or it is of another mesh */
        w->since_ms = err == LEV_EMODULE || err == LEV_EPEER ? DEP_NEVER : pc_peer_now(d->p);
        pc_log(PC_LOG_INFO, "VC %016llx: %s refused to enrol: %s", (unsigned long long)vc->id,
               w->ep, lev_strerror(err ? err : LEV_EBUSY));
        pc_dep_enrol(d, vc, pc_peer_now(d->p));
        return;
    }
    w->cores = cores;
    w->state = W_LOADING;
    if (!has) {
        pc_wbuf b;
        pc_wbuf_init(&b);
        pc_put_raw(&b, vc->hash, PC_HASH_LEN);
        pc_put_u64(&b, vc->digest);
        pc_peer_send(d->p, w->ep, dep_hdr(PC_W_MODULE, vc, NULL, 0), &b, pc_buf_ref(vc->module));
        pc_wbuf_free(&b);
    }
}

static void s_module_ok(pc_deployer *d, dep_vc *vc, pc_msg *m, int wi)
{
    dep_worker *w = &vc->w[wi];
    pc_rbuf r;
    pc_rbuf_init(&r, pc_buf_data(m->body), pc_buf_len(m->body));
    int32_t err = pc_get_i32(&r);
    char detail[256];
    pc_get_str(&r, detail, sizeof detail);
    bool bad = !pc_rbuf_done(&r) || err > 0;
    if (bad)
        snprintf(detail, sizeof detail, "malformed MODULE_OK");
    /* a confirmation that comes after the enrolment timed out still counts */
    bool late = w->state == W_REFUSED && w->since_ms != DEP_NEVER && !bad && !err;
    if (w->state != W_LOADING && !late)
        return;
    if (bad || err) {
        w->state = W_REFUSED;
        w->since_ms = DEP_NEVER;
        pc_log(PC_LOG_WARN, "VC %016llx: %s cannot load the task module: %s%s%s",
               (unsigned long long)vc->id, w->ep, lev_strerror(err ? err : LEV_EINVAL),
               *detail ? ": " : "", detail);
        pc_dep_enrol(d, vc, pc_peer_now(d->p));
        return;
    }
    w->state = W_ACTIVE;
    pc_dep_xno_assign(d, vc, wi);
    pc_log(PC_LOG_INFO, "VC %016llx: worker %s enrolled (%u cores, rate %u, executor %d)",
           (unsigned long long)vc->id, w->ep, w->cores, w->rate, w->xno);
    pc_dep_place_pending(d, vc);
}

static void s_done(pc_deployer *d, dep_vc *vc, pc_msg *m)
{
    dep_vt *vt = s_current(d, vc, m, true);
    if (!vt)
        return;
    pc_rbuf r;
    pc_rbuf_init(&r, pc_buf_data(m->body), pc_buf_len(m->body));
    int32_t err = pc_get_i32(&r);
    char detail[512];
    pc_get_str(&r, detail, sizeof detail);
    const void *res = NULL, *marks = NULL;
    size_t len = 0;
    pc_get_blob(&r, &res, &len);
    uint32_t nmarks = r.off < r.len ? pc_get_count(&r, 16) : 0; /* direct messages: its last */
    pc_get_raw(&r, &marks, (size_t)nmarks * 16);
    pc_cx_image im = {0}; /* and its sender log */
    if (r.off < r.len)
        s_get_cx(&r, &im);
    if (!pc_rbuf_done(&r)) {
        pc_log_src(PC_LOG_WARN, m->from, "dropped DONE of VT %llu from %s: %s",
                   (unsigned long long)vt->id, m->from, pc_rbuf_why(&r));
        return;
    }
    if (vc->direct) {
        pc_mm_vt_last_sent(vc->mm, vt->id, marks, nmarks);
        if (im.vt == vt->id)
            s_keep_left(vc, vt->id, &im, true);
    }
    pc_cx_image_clear(&im);
    s_finish(d, vc, vt, err, detail, res, len);
}

static void s_held(pc_deployer *d, dep_vc *vc, pc_msg *m)
{
    if (!s_vt(vc, m->h.vt)) { /* nor of a VT the VC does not have */
        if (m->h.vt)
            pc_peer_send(d->p, m->from, pc_hdr_make(PC_H_DROP, vc->id, m->h.vt, 0, 0), NULL, NULL);
        pc_log_src(PC_LOG_WARN, m->from, "dropped HELD from %s: no VT %llu in VC %016llx", m->from,
                   (unsigned long long)m->h.vt, (unsigned long long)vc->id);
        return;
    }
    dep_vt *vt = s_current(d, vc, m, false);
    if (!vt)
        return;
    pc_rbuf r;
    pc_rbuf_init(&r, pc_buf_data(m->body), pc_buf_len(m->body));
    pc_get_u64(&r); /* its size */
    uint64_t next_in = pc_get_u64(&r);
    /* how far it consumed each channel, and the determinants it carries
     * (the message was checked whole on arrival) */
    uint32_t nmarks = pc_get_count(&r, 16);
    const void *marks = NULL, *rest = NULL;
    pc_get_raw(&r, &marks, (size_t)nmarks * 16);
    size_t restlen = r.bad ? 0 : r.len - r.off;
    pc_get_raw(&r, &rest, restlen);
    pc_cx_det *dets = NULL;
    size_t nd = 0;
    const char *why = NULL;
    if (!r.bad && pc_cx_dets_decode(rest, restlen, &dets, &nd, &why))
        pc_rbuf_fail(&r, why ? why : "deployer out of memory");
    if (!pc_rbuf_done(&r)) {
        pc_log_src(PC_LOG_WARN, m->from, "dropped HELD of VT %llu from %s: %s",
                   (unsigned long long)vt->id, m->from, pc_rbuf_why(&r));
        free(dets);
        return;
    }
    bool usable = pc_dep_image_dets(vc, vt, dets, nd);
    free(dets);
    if (!usable) {
        /* an orphan: its state depends on a branch no one else does; the
         * holder has it in place of any older one, so it holds none */
        for (int i = 0; i < vt->nholders; i++)
            if (!strcmp(vt->holders[i].ep, m->from))
                vt->holders[i].epoch = 0;
        pc_peer_send(d->p, m->from, dep_hdr(PC_H_DROP, vc, vt, 0), NULL, NULL);
        return;
    }
    for (int i = 0; i < vt->nholders; i++) {
        dep_holder *h = &vt->holders[i];
        bool newer = m->h.epoch > h->epoch || (m->h.epoch == h->epoch && m->h.seq > h->seq);
        if (!strcmp(h->ep, m->from) && newer) {
            h->epoch = m->h.epoch;
            h->seq = m->h.seq;
            h->next_in = next_in;
            vt->ckpt_ms = pc_peer_now(d->p);
            /* an image counts once, when the first of its holders acknowledges it */
            if (h->epoch > vt->ckpt_epoch ||
                (h->epoch == vt->ckpt_epoch && h->seq > vt->ckpt_seq)) {
                vt->checkpoints++;
                vt->ckpt_epoch = h->epoch;
                vt->ckpt_seq = h->seq;
            }
        }
    }
    /* an image of this epoch: its host runs it; a replacement holder
     * that has one lets a suspected holder go */
    pc_dep_confirm(d, vc, vt);
    pc_dep_holders_refresh(d, vc, vt, false);
    /* the inputs that no image which could be resumed needs any more */
    uint64_t floor = pc_dep_trim_floor(vt);
    if (floor != UINT64_MAX) {
        pc_mm_trim(vc->mm, vt->id, floor);
        pc_dep_dets_stable(vc, vt->id, floor);
        /* this image is the oldest that could still be resumed: what it
         * consumed, no sender needs to keep */
        if (floor == next_in) {
            pc_dep_trim(d, vc, vt, next_in, marks, nmarks);
            pc_mm_trim_marks(vc->mm, vt->id, marks, nmarks); /* direct messages */
        }
    }
}

/* A leaving worker handed over a VT's image: resume it elsewhere. */
static void s_stopped(pc_deployer *d, dep_vc *vc, pc_msg *m, int wi)
{
    dep_vt *vt = s_current(d, vc, m, true);
    if (!vt)
        return;
    pc_rbuf r;
    pc_rbuf_init(&r, pc_buf_data(m->body), pc_buf_len(m->body));
    int32_t err = pc_get_i32(&r);
    uint64_t next_in = pc_get_u64(&r);
    if (!pc_rbuf_done(&r) || err > 0) {
        /* its VTs move when the worker is declared left or dead */
        pc_log_src(PC_LOG_WARN, m->from, "dropped STOPPED of VT %llu from %s: %s",
                   (unsigned long long)vt->id, m->from,
                   r.bad     ? r.why
                   : err > 0 ? "error code above zero"
                             : "trailing bytes");
        return;
    }
    /* a move the deployer asked for (the worker stays), or a leave */
    bool moved = vt->migrating_ms != 0;
    vt->migrating_ms = 0;
    if (!moved)
        vt->move_why = PC_PLACE_NONE;
    if (!moved && vc->w[wi].state != W_GONE)
        pc_dep_worker_gone(d, vc, wi);
    pc_dep_unplace(d, vc, vt);
    if (!err && pc_buf_len(m->bulk)) {
        pc_buf_drop(&vt->image);
        vt->image = pc_buf_take(&m->bulk);
        vt->image_next_in = next_in;
    }
    pc_log_src(PC_LOG_INFO, m->from, "VC %016llx VT %llu migrating from %s (%s)",
               (unsigned long long)vc->id, (unsigned long long)vt->id, m->from,
               err ? lev_strerror(err) : "live image");
    if (!moved)
        pc_dep_enrol(d, vc, pc_peer_now(d->p));
    pc_dep_place(d, vc, vt);
}

/* Whether W_LOST's list "u32 n, n x (u64 vt, u32 epoch)" names this
 * incarnation of the VT (the list is checked whole before). */
static bool s_lost_names(const uint8_t *list, uint32_t n, const dep_vt *vt)
{
    pc_rbuf r;
    pc_rbuf_init(&r, list, (size_t)n * 12);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t id = pc_get_u64(&r);
        uint32_t epoch = pc_get_u32(&r);
        if (id == vt->id && epoch == vt->epoch)
            return true;
    }
    return false;
}

/* The executor of the VC on a worker died: the VT that crashed it counts
 * one crash; its VTs resume from their images. Those it lists, and those
 * it had confirmed (a placement still on its way starts a new executor). */
static void s_lost(pc_deployer *d, dep_vc *vc, pc_msg *m, int wi)
{
    pc_rbuf r;
    pc_rbuf_init(&r, pc_buf_data(m->body), pc_buf_len(m->body));
    uint64_t culprit = pc_get_u64(&r);
    int32_t sig = pc_get_i32(&r);
    uint32_t n = pc_get_count(&r, 12);
    const void *list = NULL;
    pc_get_raw(&r, &list, (size_t)n * 12);
    if (!pc_rbuf_done(&r)) {
        pc_log_src(PC_LOG_WARN, m->from, "dropped LOST from %s: %s", m->from, pc_rbuf_why(&r));
        return;
    }
    for (int i = 0; i < vc->nvts; i++) {
        dep_vt *vt = &vc->vts[i];
        if (vt->host != wi || vt->state != VT_RUNNING ||
            !(vt->confirmed || s_lost_names(list, n, vt)))
            continue;
        if (vt->id == culprit && ++vt->crashes >= d->p->o.crash_limit) {
            char detail[128];
            snprintf(detail, sizeof detail, "crashed its executor %d times (last by signal %d)",
                     vt->crashes, (int)sig);
            s_finish(d, vc, vt, LEV_EFAILED, detail, NULL, 0);
            continue;
        }
        pc_dep_requeue(d, vc, vt);
    }
}

static void s_place_err(pc_deployer *d, dep_vc *vc, pc_msg *m)
{
    dep_vt *vt = s_current(d, vc, m, true);
    if (!vt)
        return;
    pc_rbuf r;
    pc_rbuf_init(&r, pc_buf_data(m->body), pc_buf_len(m->body));
    int32_t err = pc_get_i32(&r);
    char detail[256];
    pc_get_str(&r, detail, sizeof detail);
    if (!pc_rbuf_done(&r) || err >= 0) {
        /* its host could not run it, and cannot say why */
        snprintf(detail, sizeof detail, "its worker %s could not run it (malformed PLACE_ERR: %s)",
                 m->from,
                 r.bad      ? r.why
                 : err >= 0 ? "no error code"
                            : "trailing bytes");
        s_finish(d, vc, vt, LEV_EFAILED, detail, NULL, 0);
        return;
    }
    if (err == LEV_EBUSY) {
        /* the worker cannot serve the VC (no executor there): the VT goes
         * elsewhere, and so do the others it has */
        int wi = pc_dep_worker(vc, m->from);
        if (wi >= 0)
            pc_dep_worker_lost(d, vc, wi, detail);
        else
            pc_dep_requeue(d, vc, vt);
        return;
    }
    if (err == LEV_EIMAGE || err == LEV_EVERSION) {
        /* a damaged image: start over rather than fail */
        for (int i = 0; i < vt->nholders; i++)
            vt->holders[i].epoch = 0;
        vt->recovering = false;
        pc_dep_requeue(d, vc, vt);
        return;
    }
    s_finish(d, vc, vt, err, detail, NULL, 0);
}

static void s_missing(pc_deployer *d, dep_vc *vc, pc_msg *m)
{
    dep_vt *vt = s_current(d, vc, m, false);
    if (!vt || pc_buf_len(m->body))
        return;
    for (int i = 0; i < vt->nholders; i++)
        if (!strcmp(vt->holders[i].ep, m->from))
            vt->holders[i].epoch = 0;
    /* the holder asked to send the image has none: another, or the start */
    if (vt->state == VT_RUNNING && !vt->confirmed && !strcmp(vt->src, m->from)) {
        vt->src[0] = '\0';
        pc_dep_requeue(d, vc, vt);
    }
}

/* W_DET from a worker of the VC: into the VC's log of determinants
 * (the fenced incarnations' too) and checked against the message
 * manager's log (the current ones'). */
static void s_dets(dep_vc *vc, const pc_msg *m)
{
    pc_cx_det *dets = NULL;
    size_t n = 0;
    const char *why = NULL;
    if (pc_cx_dets_decode(pc_buf_data(m->body), pc_buf_len(m->body), &dets, &n, &why)) {
        pc_log_src(PC_LOG_WARN, m->from, "dropped DET from %s: %s", m->from,
                   why ? why : "deployer out of memory");
        return;
    }
    pc_dep_dets(vc, dets, n);
    pc_mm_on_dets(vc->mm, m->from, dets, n);
    free(dets);
}

void pc_deployer_on_msg(pc_deployer *d, pc_msg *m)
{
    if ((m->h.type >> 8) == 0x02) {
        s_client_msg(d, m);
        return;
    }
    dep_vc *vc = s_vc(d, m->h.vc);
    if (!vc) {
        pc_log_src(PC_LOG_DEBUG, m->from, "dropped %s from %s: no VC %016llx here",
                   pc_type_name(m->h.type), m->from, (unsigned long long)m->h.vc);
        if (m->h.type == PC_H_HELD) /* a holder keeps no image of a VC no one deploys */
            pc_peer_send(d->p, m->from, pc_hdr_make(PC_H_DROP, m->h.vc, 0, 0, 0), NULL, NULL);
        return;
    }
    int wi = pc_dep_worker(vc, m->from);
    switch (m->h.type) {
    case PC_W_ENROLLED:
        if (wi >= 0)
            s_enrolled(d, vc, m, wi);
        return;
    case PC_W_MODULE_OK:
        if (wi >= 0)
            s_module_ok(d, vc, m, wi);
        return;
    case PC_W_DONE:
        s_done(d, vc, m);
        return;
    case PC_W_LINK:
        if (wi >= 0)
            pc_dep_on_link(d, vc, m, wi);
        return;
    case PC_W_OUT:
    case PC_W_IN_MISS:
    case PC_W_RESYNC: {
        dep_vt *vt = s_current(d, vc, m, true);
        if (!vt)
            return;
        pc_dep_confirm(d, vc, vt);
        if (m->h.type == PC_W_OUT) {
            pc_mm_on_out(vc->mm, m);
        } else if (m->h.type == PC_W_IN_MISS) {
            pc_mm_on_miss(vc->mm, m);
        } else if (pc_dep_fix_send(d, vc, vt), pc_mm_on_resync(vc->mm, m)) {
            s_finish(d, vc, vt, LEV_EFAILED,
                     "restarted from its beginning, but its first inputs are no longer logged",
                     NULL, 0);
        }
        return;
    }
    case PC_W_DET:
        if (wi >= 0)
            s_dets(vc, m);
        return;
    case PC_W_GLOB_ACK:
        if (wi >= 0)
            pc_mm_on_glob_ack(vc->mm, m);
        return;
    case PC_W_FLUSHED:
        if (wi >= 0)
            pc_dep_on_flushed(d, vc, m, wi);
        return;
    case PC_W_STOPPED:
        if (wi >= 0)
            s_stopped(d, vc, m, wi);
        return;
    case PC_W_LOST:
        if (wi >= 0)
            s_lost(d, vc, m, wi);
        return;
    case PC_W_UNKNOWN:
        /* a worker that restarted on its endpoint (or dropped the VC) */
        if (wi >= 0 && vc->w[wi].state != W_GONE && vc->w[wi].state != W_REFUSED)
            pc_dep_worker_lost(d, vc, wi, "it does not serve the VC: restarted?");
        return;
    case PC_W_PLACE_ERR:
        s_place_err(d, vc, m);
        return;
    case PC_H_HELD:
        s_held(d, vc, m);
        return;
    case PC_H_MISSING:
        s_missing(d, vc, m);
        return;
    case PC_H_LOGGED:
        s_logged(d, vc, m);
        return;
    case PC_W_STALL:
        if (wi >= 0)
            s_stall(d, vc, m);
        return;
    default:
        pc_log_src(PC_LOG_WARN, m->from, "dropped %s from %s: not for a deployer",
                   pc_type_name(m->h.type), m->from);
    }
}

/* Recovery acts on a confirmed death (DEAD) or departure (LEFT) only: a
 * suspicion that is refuted costs no rollback (it only gives the
 * suspected peer's holder duties a replacement meanwhile). */
void pc_deployer_on_member(pc_deployer *d, const pc_member *m, pc_member_state old)
{
    uint64_t now = pc_peer_now(d->p);
    for (dep_vc *vc = d->vcs; vc; vc = vc->next) {
        if (m->state == PC_MEMBER_ALIVE) {
            /* a worker taken for dead that is back (it refuted, or it
             * restarted) is enrolled again at once, not after the retry
             * delay: the VTs recovered meanwhile spread back onto it */
            int wi = pc_dep_worker(vc, m->rec.endpoint);
            if (wi >= 0 && vc->w[wi].state == W_GONE && old != PC_MEMBER_ALIVE) {
                vc->w[wi].since_ms = now > DEP_REFUSED_RETRY_MS ? now - DEP_REFUSED_RETRY_MS : 0;
                /* the fence sent when it was lost went nowhere if it was cut
                 * off: its copies of the VTs recovered since would run on
                 * (until they next said something) */
                pc_peer_send(d->p, m->rec.endpoint, pc_hdr_make(PC_W_FENCE, vc->id, 0, 0, 0), NULL,
                             NULL);
            }
            pc_dep_enrol(d, vc, now); /* a newcomer may fill the quota */
        }
        pc_dep_on_member(d, vc, m);
    }
}

uint64_t pc_deployer_tick(pc_deployer *d, uint64_t now)
{
    if (!d->vcs) { /* nothing to watch: no wake-up (a VC opened ticks at once) */
        d->next_tick = 0;
        return UINT64_MAX;
    }
    if (now < d->next_tick)
        return d->next_tick;
    d->next_tick = now + DEP_TICK_MS;
    for (dep_vc *vc = d->vcs, *next; vc; vc = next) {
        next = vc->next;
        if (now - vc->client_seen_ms > (uint64_t)d->p->o.client_timeout_ms) {
            s_vc_close(d, vc, "its client went silent");
            continue;
        }
        for (int i = 0; i < vc->nw; i++) {
            dep_worker *w = &vc->w[i];
            if ((w->state == W_ENROLLING || w->state == W_LOADING) &&
                now - w->since_ms > DEP_ENROL_TIMEOUT_MS) {
                w->state = W_REFUSED;
                w->since_ms = now;
                pc_log(PC_LOG_WARN, "VC %016llx: %s did not answer the enrolment",
                       (unsigned long long)vc->id, w->ep);
            }
        }
        pc_dep_enrol(d, vc, now);
        pc_dep_barrier_tick(d, vc, now);
        pc_dep_place_pending(d, vc);
        pc_dep_watchdog(d, vc, now);
        pc_dep_rebalance(d, vc, now);
        if (now - vc->mm_tick_ms >= DEP_MM_TICK_MS) {
            vc->mm_tick_ms = now;
            pc_mm_tick(vc->mm);
        }
    }
    return d->next_tick;
}

int pc_deployer_new(pc_deployer **out, pc_peer *p)
{
    pc_deployer *d = calloc(1, sizeof *d);
    if (!d)
        return LEV_ENOMEM;
    d->p = p;
    *out = d;
    return 0;
}

void pc_deployer_destroy(pc_deployer **d_p)
{
    pc_deployer *d = d_p ? *d_p : NULL;
    if (!d)
        return;
    while (d->vcs) {
        dep_vc *vc = d->vcs;
        d->vcs = vc->next;
        s_vc_free(vc);
    }
    free(d);
    *d_p = NULL;
}

/* ===================================================================
 * Status
 * =================================================================== */

void pc_deployer_flush(pc_deployer *d)
{
    for (dep_vc *vc = d ? d->vcs : NULL; vc; vc = vc->next) {
        pc_dep_barrier_run(d, vc);
        pc_mm_flush(vc->mm);
    }
}

void pc_deployer_status(pc_deployer *d, pc_wbuf *j)
{
    uint64_t now = pc_peer_now(d->p);
    bool first = true;
    for (dep_vc *vc = d->vcs; vc; vc = vc->next, first = false) {
        pc_json_fmt(j, "%s{\"id\":\"%016llx\",\"client\":", first ? "" : ",",
                    (unsigned long long)vc->id);
        pc_json_str(j, vc->client);
        lev_vc_stats vs = s_vc_stats(vc);
        pc_json_fmt(j,
                    ",\"quota\":%d,\"checkpoint_ms\":%d,\"replicas\":%d,\"checkpoints\":%llu,"
                    "\"lost_workers\":%llu,\"workers\":[",
                    vc->quota, vc->ckpt_ms, vc->replicas, (unsigned long long)vs.checkpoints,
                    (unsigned long long)vs.lost_peers);
        bool wf = true;
        for (int i = 0; i < vc->nw; i++) {
            if (vc->w[i].state != W_ACTIVE)
                continue;
            pc_json_fmt(j, "%s", wf ? "" : ",");
            pc_json_str(j, vc->w[i].ep);
            wf = false;
        }
        pc_json_fmt(j, "],\"worker_states\":{");
        for (int i = 0; i < vc->nw; i++) {
            pc_json_fmt(j, "%s", i ? "," : "");
            pc_json_str(j, vc->w[i].ep);
            /* an active worker under suspicion stays active: shown so */
            bool suspect = vc->w[i].state == W_ACTIVE && pc_peer_member(d->p, vc->w[i].ep) &&
                           pc_peer_member(d->p, vc->w[i].ep)->state == PC_MEMBER_SUSPECT;
            pc_json_fmt(j, ":\"%s\"", suspect ? "suspect" : s_wstate[vc->w[i].state]);
        }
        /* what the delegator weighs: each active worker's cores, rate
         * per core as measured, and VTs of this VC placed there */
        pc_json_fmt(j, "},\"placement\":[");
        for (int i = 0, n = 0; i < vc->nw; i++) {
            if (vc->w[i].state != W_ACTIVE)
                continue;
            pc_json_fmt(j, "%s{\"worker\":", n++ ? "," : "");
            pc_json_str(j, vc->w[i].ep);
            pc_json_fmt(j, ",\"cores\":%u,\"rate\":%u,\"vts\":%u,\"executor\":%d}", vc->w[i].cores,
                        vc->w[i].rate, vc->w[i].nvts, vc->w[i].xno);
        }
        pc_json_fmt(j, "],\"vts\":[");
        for (int i = 0; i < vc->nvts; i++) {
            const dep_vt *vt = &vc->vts[i];
            const char *st = vt->state == VT_RUNNING && vt->recovering && !vt->ckpt_ms
                                 ? "recovering"
                                 : s_vtstate[vt->state];
            pc_json_fmt(j, "%s{\"id\":%llu,\"task\":", i ? "," : "", (unsigned long long)vt->id);
            pc_json_str(j, vt->task);
            pc_json_fmt(j, ",\"state\":\"%s\",\"host\":", st);
            pc_json_str(j, vt->host >= 0 ? vc->w[vt->host].ep : "");
            pc_json_fmt(j, ",\"placed\":\"%s\"",
                        vt->host >= 0 ? pc_place_why_text((pc_place_why)vt->placed_why) : "");
            pc_json_fmt(j,
                        ",\"epoch\":%u,\"checkpoint_age_ms\":%lld,\"checkpoints\":%llu,"
                        "\"crashes\":%d,\"resumes\":%d,\"restarts\":%d,\"holders\":[",
                        vt->epoch, vt->ckpt_ms ? (long long)(now - vt->ckpt_ms) : -1LL,
                        (unsigned long long)vt->checkpoints, vt->crashes, vt->resumes,
                        vt->restarts);
            for (int k = 0; k < vt->nholders; k++) {
                pc_json_fmt(j, "%s", k ? "," : "");
                pc_json_str(j, vt->holders[k].ep);
            }
            uint32_t ie = 0; /* the newest epoch an acknowledged image is of */
            for (int k = 0; k < vt->nholders; k++)
                ie = vt->holders[k].epoch > ie ? vt->holders[k].epoch : ie;
            pc_json_fmt(j, "],\"image_epoch\":%u", ie);
            pc_mm_vt_status(vc->mm, vt->id, j);
            pc_json_fmt(j, ",\"held\":[");
            for (int k = 0, n = 0; k < vt->nholders; k++) {
                if (!vt->holders[k].epoch)
                    continue; /* assigned, no image acknowledged yet */
                pc_json_fmt(j, "%s", n++ ? "," : "");
                pc_json_str(j, vt->holders[k].ep);
            }
            pc_json_fmt(j, "]}");
        }
        pc_json_fmt(j, "]");
        pc_mm_status(vc->mm, j);
        pc_dep_barrier_status(vc, j);
        pc_json_fmt(j, "}");
    }
}
