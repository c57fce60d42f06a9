/* worker.c - the worker: this peer's part in remote virtual computers.
 * It answers enrolments, keeps the task modules it was sent (by their
 * BLAKE2b hash), runs each VC's VTs in an executor of that VC, forwards
 * their results and reports to the deployer and their images to their
 * holders, stops fenced copies, and on a graceful leave hands every VT
 * over as a live image. The executors (processes or threads, execproc.c;
 * model ones in the simulator) are reached only through the peer's env:
 * exec_start, exec_send, exec_stop in; pc_worker_exec_record and
 * pc_worker_exec_ended back. Its state is in worker_private.h, and the
 * images of its VTs in worker_images.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "gcopy.h"
#include "imgslot.h"
#include "lev_errors.h"
#include "lev_task.h"
#include "log.h"
#include "modmgr.h"
#include "peer_private.h"
#include "vec.h"
#include "vtchan.h"
#include "worker_private.h"

/* ===================================================================
 * Helpers
 * =================================================================== */

static wk_vc *s_vc(pc_worker *w, uint64_t id)
{
    for (wk_vc *v = w->vcs; v; v = v->next)
        if (v->vc == id)
            return v;
    return NULL;
}

wk_vt *pc_wk_vt(wk_vc *v, uint64_t id)
{
    for (int i = 0; i < v->nvts; i++)
        if (v->vts[i].id == id)
            return &v->vts[i];
    return NULL;
}

void pc_wk_vt_forget(wk_vc *v, uint64_t id)
{
    pc_wk_reads_forget(v, id);
    for (int i = 0; i < v->nvts; i++)
        if (v->vts[i].id == id) {
            pc_buf_drop(&v->vts[i].last);
            v->vts[i] = v->vts[--v->nvts];
            return;
        }
}

/* Forgets every VT of the VC. */
static void s_vts_clear(wk_vc *v)
{
    for (int i = 0; i < v->nvts; i++)
        pc_buf_drop(&v->vts[i].last);
    v->nvts = 0;
}

/* The VT's record for a new incarnation (an older one is replaced). */
static wk_vt *s_vt_track(wk_vc *v, uint64_t id, uint32_t epoch)
{
    wk_vt *t = pc_wk_vt(v, id);
    if (!t) {
        if (RT_VEC_RESERVE(v->vts, v->capvts, (size_t)v->nvts, 1))
            return NULL;
        t = &v->vts[v->nvts++];
    } else {
        pc_buf_drop(&t->last);
    }
    memset(t, 0, sizeof *t);
    t->id = id;
    t->epoch = epoch;
    return t;
}

/* Reads "u32 n, n x s holder" into the VT's holders. */
static void s_read_holders(pc_rbuf *r, wk_vt *t)
{
    uint32_t n = pc_get_u32(r);
    if (n > 64) {
        pc_rbuf_fail(r, "too many holders");
        return;
    }
    t->nh = 0;
    for (uint32_t i = 0; i < n && !r->bad; i++) {
        char ep[PC_ENDPOINT_MAX];
        if (pc_get_str(r, ep, sizeof ep) && t->nh < WK_HOLDERS_MAX)
            snprintf(t->holders[t->nh++], PC_ENDPOINT_MAX, "%s", ep);
    }
}

void pc_wk_send_deployer(pc_worker *w, wk_vc *v, uint16_t type, uint64_t vt, uint32_t epoch,
                         uint64_t seq, const void *body, size_t len, pc_buf *bulk)
{
    pc_peer_send_raw(w->p, v->deployer, pc_hdr_make(type, v->vc, vt, epoch, seq), body, len, bulk);
}

/* ===================================================================
 * Executors
 * =================================================================== */

/* Sends a record to the VC's executor; 0 or an error. */
int pc_wk_xsend(pc_worker *w, wk_vc *v, pc_hdr h, const struct iovec *iov, int n)
{
    return v->x ? w->p->env.exec_send(w->p->env.ud, v->x, h, iov, n) : LEV_EPEER;
}

static int s_xsend_buf(pc_worker *w, wk_vc *v, pc_hdr h, const pc_wbuf *b)
{
    if (b && b->err)
        return b->err;
    struct iovec io = {b ? b->data : NULL, b ? b->len : 0};
    return pc_wk_xsend(w, v, h, &io, io.iov_len ? 1 : 0);
}

/* The placements kept for the VC, to its executor (one started anew). */
static void s_place_all(pc_worker *w, wk_vc *v)
{
    if (v->xno == PC_XNO_NONE && !v->nplace)
        return;
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_u32(&b, (uint32_t)v->nplace);
    for (size_t i = 0; i < v->nplace; i++) {
        pc_put_u64(&b, v->place[i].vt);
        pc_put_u32(&b, v->place[i].epoch);
        pc_put_u32(&b, (uint32_t)v->place[i].x);
    }
    s_xsend_buf(w, v, pc_hdr_make(PC_X_PLACE, v->vc, 0, v->xinc, v->xno), &b);
    pc_wbuf_free(&b);
}

/* W_PLACE (checked whole on arrival): kept, newer news per VT winning,
 * and passed on to the executor as it is. */
static void s_place(pc_worker *w, wk_vc *v, const pc_msg *m)
{
    pc_rbuf r;
    pc_rbuf_init(&r, pc_buf_data(m->body), pc_buf_len(m->body));
    uint32_t n = pc_get_count(&r, 16);
    for (uint32_t i = 0; i < n && !r.bad; i++) {
        wk_place e = {.vt = pc_get_u64(&r), .epoch = pc_get_u32(&r), .x = (int32_t)pc_get_u32(&r)};
        size_t k = 0;
        while (k < v->nplace && v->place[k].vt != e.vt)
            k++;
        if (k == v->nplace && RT_VEC_RESERVE(v->place, v->capplace, v->nplace, 1)) {
            pc_log(PC_LOG_WARN, "VC %016llx: no memory for a placement", (unsigned long long)v->vc);
            break;
        }
        if (k == v->nplace)
            v->place[v->nplace++] = e;
        else if (e.epoch >= v->place[k].epoch)
            v->place[k] = e;
    }
    v->xno = m->h.seq;
    v->xinc = m->h.epoch;
    struct iovec io = {(void *)pc_buf_data(m->body), pc_buf_len(m->body)};
    pc_wk_xsend(w, v, pc_hdr_make(PC_X_PLACE, v->vc, 0, v->xinc, v->xno), &io, io.iov_len ? 1 : 0);
}

/* Stops the VC's executor (nothing more comes from it). */
static void s_exec_kill(pc_worker *w, wk_vc *v)
{
    if (v->x)
        w->p->env.exec_stop(w->p->env.ud, v->x);
    v->x = NULL;
    v->pid = 0;
    v->xstate = X_NONE;
    pc_rslot_reset(&v->rs);
}

/* Starts the VC's executor and has it load the module. 0 or an error. */
static int s_exec_start(pc_worker *w, wk_vc *v)
{
    const uint8_t *mod = NULL;
    size_t modlen = 0;
    int rc = pc_modmgr_get(w->mm, v->hash, &mod, &modlen);
    if (rc)
        return rc;
    rc = w->p->env.exec_start(w->p->env.ud, &v->x, &v->pid);
    if (rc) {
        v->x = NULL;
        return rc;
    }
    v->xstate = X_STARTING;
    v->crash_vt = 0;
    v->crash_sig = 0;
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_i32(&b, v->ckpt_ms);
    pc_put_i32(&b, (int32_t)w->p->self.cores);
    char host[PC_ENDPOINT_MAX] = "";
    if (v->direct && pc_endpoint_host(pc_peer_endpoint(w->p), host, sizeof host))
        pc_log(PC_LOG_WARN, "VC %016llx: no address for direct messages in %s",
               (unsigned long long)v->vc, pc_peer_endpoint(w->p));
    pc_put_str(&b, host);
    pc_keypair lk; /* a mesh with keys: its executors' links are CurveZMQ too */
    memset(&lk, 0, sizeof lk);
    if (w->p->curve)
        pc_key_derive_links(w->p->curve, &lk);
    pc_put_str(&b, lk.pub);
    pc_put_str(&b, lk.sec);
    pc_put_u64(&b, v->lim_state);
    pc_put_u64(&b, v->lim_msg);
    pc_put_u64(&b, v->lim_value);
    s_xsend_buf(w, v, pc_hdr_make(PC_X_CONFIG, v->vc, 0, 0, 0), &b);
    pc_wbuf_free(&b);
    pc_wbuf_init(&b);
    pc_put_raw(&b, v->hash, PC_HASH_LEN);
    pc_put_u64(&b, v->digest);
    pc_put_u32(&b, (uint32_t)modlen);
    struct iovec io[2] = {{b.data, b.len}, {(void *)mod, modlen}};
    rc = b.err ? b.err : pc_wk_xsend(w, v, pc_hdr_make(PC_X_MODULE, v->vc, 0, 0, 0), io, 2);
    pc_wbuf_free(&b);
    pc_log(PC_LOG_INFO, "VC %016llx: executor started (%s %d)", (unsigned long long)v->vc,
           v->pid ? "process" : "thread", (int)v->pid);
    if (!rc)
        s_place_all(w, v);
    if (!rc && v->links) {
        struct iovec io = {(void *)pc_buf_data(v->links), pc_buf_len(v->links)};
        pc_wk_xsend(w, v, pc_hdr_make(PC_X_LINKS, v->vc, 0, 0, 0), &io, io.iov_len ? 1 : 0);
    }
    return rc;
}

static void s_module_reply(pc_worker *w, wk_vc *v, int err, const char *detail);

/* The executor of a VC is gone (its end reported by the env, with the
 * signal that ended a process): tell the deployer which VTs died with it
 * and which one crashed it. */
static void s_exec_dead(pc_worker *w, wk_vc *v, const char *why, int signal)
{
    int sig = v->crash_sig ? v->crash_sig : signal;
    char sigtext[32] = "";
    if (sig)
        snprintf(sigtext, sizeof sigtext, ", signal %d", sig);
    pc_log(PC_LOG_WARN, "VC %016llx: executor %d ended (%s%s), %d VTs lost",
           (unsigned long long)v->vc, (int)v->pid, why, sigtext, v->nvts);
    v->x = NULL; /* the env has stopped it */
    v->pid = 0;
    v->xstate = X_NONE;
    pc_rslot_reset(&v->rs);
    /* Before the worker was ever accepted, an executor that dies is a
     * refusal; after, a restarted one that dies (even before it confirmed
     * the module: a VT may crash it first) loses its VTs like any other. */
    if (!v->accepted) {
        s_module_reply(w, v, LEV_EMODULE, "the executor ended before it loaded the module");
        return;
    }
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_u64(&b, v->crash_vt);
    pc_put_i32(&b, sig);
    pc_put_u32(&b, (uint32_t)v->nvts);
    for (int i = 0; i < v->nvts; i++) {
        pc_put_u64(&b, v->vts[i].id);
        pc_put_u32(&b, v->vts[i].epoch);
    }
    if (!b.err)
        pc_wk_send_deployer(w, v, PC_W_LOST, 0, 0, 0, b.data, b.len, NULL);
    pc_wbuf_free(&b);
    s_vts_clear(v);
}

/* The executor, started if it is not running. */
static int s_exec_ensure(pc_worker *w, wk_vc *v) { return v->x ? 0 : s_exec_start(w, v); }

static void s_vc_drop(pc_worker *w, wk_vc *v, const char *why)
{
    for (wk_vc **pp = &w->vcs; *pp; pp = &(*pp)->next)
        if (*pp == v) {
            *pp = v->next;
            break;
        }
    pc_log(PC_LOG_INFO, "VC %016llx dropped (%s)", (unsigned long long)v->vc, why);
    s_exec_kill(w, v);
    for (int i = 0; i < WK_DONE_KEEP; i++)
        free(v->done[i].payload);
    s_vts_clear(v);
    free(v->vts);
    free(v->place);
    pc_buf_drop(&v->links);
    pc_wk_reads_free(v);
    pc_gcopies_destroy(&v->copies);
    pc_rslot_close(&v->rs);
    free(v);
}

/* ===================================================================
 * Copies of global values (gcopy.h)
 * =================================================================== */

/* Keeps a copy of a global's value a VT of v was sent or committed. */
static void s_copy_keep(wk_vc *v, const void *data, size_t len)
{
    if (!len)
        return;
    if (!v->copies)
        v->copies = pc_gcopies_new(0);
    pc_gcopies_put(v->copies, data, len);
}

/* An input going to a VT whole (W_IN): a read's or a grant's value is
 * kept, to be named by its hash next time. */
static void s_copy_in(wk_vc *v, const pc_buf *body)
{
    const uint8_t *p = pc_buf_data(body);
    if (!pc_buf_len(body) || (p[0] != RT_IN_READ && p[0] != RT_IN_GRANT))
        return; /* a message, a timeout...: nothing to keep, nothing read */
    pc_rbuf r;
    pc_rbuf_init(&r, p, pc_buf_len(body));
    uint8_t kind = pc_get_u8(&r), novalue = pc_get_u8(&r);
    pc_get_u64(&r);
    pc_get_u64(&r);
    pc_get_i32(&r);
    pc_get_u64(&r);
    pc_get_u64(&r);
    const void *data = NULL;
    size_t len = 0;
    pc_get_blob(&r, &data, &len);
    if (pc_rbuf_done(&r) && !novalue && (kind == RT_IN_READ || kind == RT_IN_GRANT))
        s_copy_keep(v, data, len);
}

/* An output of a VT going up (X_OUT): an unlock's or a put's new value
 * is kept. */
static void s_copy_out(wk_vc *v, const uint8_t *payload, size_t n)
{
    pc_rbuf r;
    pc_rbuf_init(&r, payload, n);
    uint8_t kind = pc_get_u8(&r);
    if (kind != RT_OUT_UNLOCK && kind != RT_OUT_PUT)
        return;
    pc_get_u64(&r);
    pc_get_u64(&r);
    uint8_t keep = pc_get_u8(&r);
    char name[LEV_NAME_MAX + 1];
    pc_get_str(&r, name, sizeof name);
    const void *data = NULL;
    size_t len = 0;
    pc_get_blob(&r, &data, &len);
    if (pc_rbuf_done(&r) && !keep)
        s_copy_keep(v, data, len);
}

/* The fields of W_IN and W_IN_REF before the value (wire.h): kind,
 * novalue, from, ref, err, cfrom, cseq. */
#define WK_IN_FIELDS (1 + 1 + 8 + 8 + 4 + 8 + 8)

/* W_IN_REF: the input to the executor with the value from the copy its
 * hash names, or W_IN_MISS to the deployer, which sends it whole. */
static void s_in_ref(pc_worker *w, wk_vc *v, const pc_msg *m)
{
    pc_rbuf r;
    pc_rbuf_init(&r, pc_buf_data(m->body), pc_buf_len(m->body));
    const void *fields = NULL, *hash = NULL;
    pc_get_raw(&r, &fields, WK_IN_FIELDS);
    pc_get_raw(&r, &hash, PC_HASH_LEN);
    uint32_t len = pc_get_u32(&r);
    pc_buf *val = pc_rbuf_done(&r) ? pc_gcopies_get(v->copies, hash, len) : NULL;
    if (!val) {
        w->ref_misses++;
        pc_wk_send_deployer(w, v, PC_W_IN_MISS, m->h.vt, m->h.epoch, m->h.seq, NULL, 0, NULL);
        return;
    }
    w->ref_hits++;
    w->ref_bytes += len;
    uint8_t blen[4];
    rt_le32_put(blen, len);
    struct iovec io[3] = {
        {(void *)fields, WK_IN_FIELDS}, {blen, 4}, {(void *)pc_buf_data(val), len}};
    pc_wk_xsend(w, v, pc_hdr_make(PC_X_IN, v->vc, m->h.vt, m->h.epoch, m->h.seq), io, 3);
    pc_buf_drop(&val);
}

/* Keeps the end of a VT (the oldest kept is dropped). */
static void s_done_keep(wk_vc *v, uint16_t type, const pc_hdr *h, const uint8_t *payload,
                        uint64_t now)
{
    wk_done *d = &v->done[v->done_next];
    v->done_next = (v->done_next + 1) % WK_DONE_KEEP;
    free(d->payload);
    *d = (wk_done){.vt = h->vt, .epoch = h->epoch, .type = type, .sent_ms = now};
    if (h->len && (d->payload = malloc(h->len))) {
        memcpy(d->payload, payload, h->len);
        d->len = h->len;
    } else if (h->len) {
        d->vt = 0; /* out of memory: not kept */
    }
}

/* ===================================================================
 * The deployer's messages
 * =================================================================== */

static void s_enrol(pc_worker *w, pc_msg *m)
{
    pc_rbuf r;
    pc_rbuf_init(&r, pc_buf_data(m->body), pc_buf_len(m->body));
    char deployer[PC_ENDPOINT_MAX], arch[PC_ARCH_MAX];
    const void *hash = NULL;
    pc_get_str(&r, deployer, sizeof deployer);
    pc_get_raw(&r, &hash, PC_HASH_LEN);
    uint64_t size = pc_get_u64(&r);
    pc_get_str(&r, arch, sizeof arch);
    int32_t ckpt = pc_get_i32(&r);
    uint64_t mesh = pc_get_u64(&r);
    uint8_t flags = pc_get_u8(&r);
    uint64_t lim[3]; /* the VC's: a VT's state, a message, a value */
    for (int i = 0; i < 3; i++)
        lim[i] = pc_get_u64(&r);
    (void)size;
    if (!pc_rbuf_done(&r) || !pc_endpoint_valid(deployer) || !m->h.vc) {
        pc_log_src(PC_LOG_WARN, m->from, "dropped ENROL from %s: %s", m->from,
                   !pc_rbuf_done(&r) ? pc_rbuf_why(&r) : "bad deployer or VC");
        return;
    }
    int err = 0;
    uint64_t own = pc_members_mesh_id(w->p->mem);
    if (mesh != own && !pc_members_mesh_settled(w->p->mem)) {
        err = LEV_EBUSY; /* its mesh id is not known yet: asked again later */
    } else if (mesh != own) {
        /* a deployer of another mesh took this endpoint for one of its peers */
        pc_log(PC_LOG_WARN,
               "refused to enrol in VC %016llx of %s: it is of mesh %016llx, this "
               "peer of mesh %016llx",
               (unsigned long long)m->h.vc, deployer, (unsigned long long)mesh,
               (unsigned long long)own);
        err = LEV_EPEER;
    } else if (!w->p->self.cores || w->leaving)
        err = LEV_EBUSY;
    else if (pc_arch_check(arch)) /* another architecture: the delegator goes elsewhere */
        err = LEV_EMODULE;
    wk_vc *v = s_vc(w, m->h.vc);
    if (!err && !v) {
        v = calloc(1, sizeof *v);
        if (!v) {
            err = LEV_ENOMEM;
        } else {
            v->vc = m->h.vc;
            v->xno = PC_XNO_NONE;
            pc_rslot_init(&v->rs);
            pc_ep_copy(v->deployer, deployer);
            memcpy(v->hash, hash, PC_HASH_LEN);
            v->ckpt_ms = ckpt;
            v->direct = flags & PC_ENROL_DIRECT;
            const pc_limits *own = &w->p->o.limits;
            v->lim_state = lim[0] && lim[0] < own->vt_memory ? lim[0] : own->vt_memory;
            v->lim_msg = lim[1] && lim[1] < RT_CH_MAX_MSG ? lim[1] : RT_CH_MAX_MSG;
            v->lim_value = lim[2] && lim[2] < own->value ? lim[2] : own->value;
            v->next = w->vcs;
            w->vcs = v;
        }
    }
    bool has = !err && pc_modmgr_has(w->mm, hash);
    if (has && !v->x && (err = s_exec_start(w, v)))
        has = false;
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_i32(&b, err);
    pc_put_u8(&b, has);
    pc_put_u32(&b, err ? 0 : w->p->self.cores);
    pc_peer_send(w->p, deployer, pc_hdr_make(PC_W_ENROLLED, m->h.vc, 0, 0, m->h.seq), &b, NULL);
    pc_wbuf_free(&b);
    /* Enrolled again (the deployer gave up waiting the first time, on a
     * slow machine): the executor confirmed the module already, and will
     * not again, so the answer is given here. */
    if (!err && v->accepted)
        s_module_reply(w, v, 0, "");
}

static void s_module_reply(pc_worker *w, wk_vc *v, int err, const char *detail)
{
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_i32(&b, err);
    pc_put_str(&b, detail);
    pc_peer_send(w->p, v->deployer, pc_hdr_make(PC_W_MODULE_OK, v->vc, 0, 0, 0), &b, NULL);
    pc_wbuf_free(&b);
    v->accepted |= !err;
}

static void s_module(pc_worker *w, wk_vc *v, pc_msg *m)
{
    pc_rbuf r;
    pc_rbuf_init(&r, pc_buf_data(m->body), pc_buf_len(m->body));
    const void *hash = NULL;
    pc_get_raw(&r, &hash, PC_HASH_LEN);
    uint64_t digest = pc_get_u64(&r);
    if (!pc_rbuf_done(&r) || memcmp(hash, v->hash, PC_HASH_LEN)) {
        s_module_reply(w, v, LEV_EMODULE, "module message does not match the enrolment");
        return;
    }
    v->digest = digest;
    int rc = pc_module_arch_check(pc_buf_data(m->bulk), pc_buf_len(m->bulk));
    if (!rc)
        rc = pc_modmgr_put(w->mm, v->hash, pc_buf_data(m->bulk), pc_buf_len(m->bulk));
    if (!rc)
        rc = s_exec_ensure(w, v);
    if (!rc)
        w->evict_due = true; /* the cache grew: the next tick bounds it */
    if (rc)
        s_module_reply(w, v, rc, lev_errdetail());
}

/* The record of the incarnation a RUN or RESUME places here, with its
 * holders, its executor started; NULL when this incarnation or a newer one
 * is here already, or when there can be none here (the deployer is told,
 * PLACE_ERR with LEV_EBUSY, and places it elsewhere). */
static wk_vt *s_incarnation(pc_worker *w, wk_vc *v, const pc_msg *m, const wk_vt *holders)
{
    const wk_vt *cur = pc_wk_vt(v, m->h.vt);
    if (cur && cur->epoch >= m->h.epoch) {
        /* a duplicate, or overtaken on the way by the placement of a newer
         * incarnation: that one stays */
        pc_log(PC_LOG_DEBUG, "VC %016llx VT %llu: dropped %s of epoch %u: epoch %u is here",
               (unsigned long long)v->vc, (unsigned long long)m->h.vt, pc_type_name(m->h.type),
               m->h.epoch, cur->epoch);
        return NULL;
    }
    int rc = s_exec_ensure(w, v);
    wk_vt *t = rc ? NULL : s_vt_track(v, m->h.vt, m->h.epoch);
    if (!t) {
        pc_wbuf b;
        pc_wbuf_init(&b);
        pc_put_i32(&b, LEV_EBUSY);
        pc_put_str(&b, "cannot start an executor here");
        pc_wk_send_deployer(w, v, PC_W_PLACE_ERR, m->h.vt, m->h.epoch, 0, b.data, b.len, NULL);
        pc_wbuf_free(&b);
        return NULL;
    }
    t->nh = holders->nh;
    memcpy(t->holders, holders->holders, sizeof holders->holders);
    return t;
}

static void s_run(pc_worker *w, wk_vc *v, pc_msg *m)
{
    pc_rbuf r;
    pc_rbuf_init(&r, pc_buf_data(m->body), pc_buf_len(m->body));
    const void *task = NULL, *arg = NULL;
    size_t tlen = 0, alen = 0;
    pc_get_blob(&r, &task, &tlen);
    pc_get_blob(&r, &arg, &alen);
    size_t args_end = r.off;
    wk_vt tmp;
    s_read_holders(&r, &tmp);
    if (!pc_rbuf_done(&r) || m->h.vt < 2 || !m->h.epoch) {
        pc_log_src(PC_LOG_WARN, m->from, "dropped RUN from %s: %s", m->from,
                   !pc_rbuf_done(&r) ? pc_rbuf_why(&r) : "bad VT");
        return;
    }
    wk_vt *t = s_incarnation(w, v, m, &tmp);
    if (!t)
        return;
    struct iovec io = {(void *)pc_buf_data(m->body), args_end};
    pc_wk_xsend(w, v, pc_hdr_make(PC_X_RUN, v->vc, m->h.vt, m->h.epoch, 0), &io, 1);
}

static void s_resume(pc_worker *w, wk_vc *v, pc_msg *m)
{
    pc_rbuf r;
    pc_rbuf_init(&r, pc_buf_data(m->body), pc_buf_len(m->body));
    wk_vt tmp;
    s_read_holders(&r, &tmp);
    uint64_t reports = pc_get_u64(&r);
    if (!pc_rbuf_done(&r) || m->h.vt < 2 || !m->h.epoch || !pc_buf_len(m->bulk)) {
        pc_log_src(PC_LOG_WARN, m->from, "dropped RESUME from %s: %s", m->from,
                   !pc_rbuf_done(&r) ? pc_rbuf_why(&r) : "bad VT");
        return;
    }
    wk_vt *t = s_incarnation(w, v, m, &tmp);
    if (!t)
        return;
    if (pc_wk_resume_slot(w, v, m, reports))
        return; /* (else as bytes) */
    size_t n = pc_buf_len(m->bulk);
    uint8_t len[4]; /* X_RESUME's b image: its length, then the bulk frame as it is */
    rt_le32_put(len, (uint32_t)n);
    struct iovec io[2] = {{len, 4}, {(void *)pc_buf_data(m->bulk), n}};
    pc_wk_xsend(w, v, pc_hdr_make(PC_X_RESUME, v->vc, m->h.vt, m->h.epoch, reports), io, 2);
}

void pc_worker_on_msg(pc_worker *w, pc_msg *m)
{
    if (m->h.type == PC_W_ENROL) {
        s_enrol(w, m);
        return;
    }
    wk_vc *v = s_vc(w, m->h.vc);
    if (v && m->h.type == PC_W_FULL) {
        /* a holder that could not apply a patch: whole images to it */
        wk_vt *t = pc_wk_vt(v, m->h.vt);
        for (int i = 0; t && t->epoch == m->h.epoch && i < t->nh; i++)
            if (!strcmp(t->holders[i], m->from))
                t->hbase[i] = false;
        return;
    }
    if (!v || (strcmp(v->deployer, m->from) && m->h.type != PC_W_RESUME)) {
        pc_log_src(PC_LOG_DEBUG, m->from, "dropped %s from %s: not enrolled in VC %016llx",
                   pc_type_name(m->h.type), m->from, (unsigned long long)m->h.vc);
        /* A deployer that takes this peer for a worker of a VC it does not
         * serve (it restarted on the same endpoint, or dropped the VC) is
         * told, so that it recovers the VTs it thinks run here. */
        if (!v && m->h.type != PC_W_FENCE && m->h.type != PC_W_CLOSE && m->h.type != PC_W_RESUME &&
            m->h.type != PC_W_GLOB)
            pc_peer_send(w->p, m->from, pc_hdr_make(PC_W_UNKNOWN, m->h.vc, 0, 0, 0), NULL, NULL);
        if (!v && m->h.type == PC_W_GLOB)
            pc_wk_glob_ack(w, m); /* it has no copy: nothing to wait for here */
        return;
    }
    switch (m->h.type) {
    case PC_W_MODULE:
        s_module(w, v, m);
        return;
    case PC_W_RUN:
        s_run(w, v, m);
        return;
    case PC_W_RESUME:
        s_resume(w, v, m);
        return;
    case PC_W_HOLDERS: {
        wk_vt *t = pc_wk_vt(v, m->h.vt);
        pc_rbuf r;
        pc_rbuf_init(&r, pc_buf_data(m->body), pc_buf_len(m->body));
        wk_vt tmp;
        s_read_holders(&r, &tmp);
        if (!pc_rbuf_done(&r)) {
            pc_log_src(PC_LOG_WARN, m->from, "dropped HOLDERS from %s: %s", m->from,
                       pc_rbuf_why(&r));
            return;
        }
        if (t) {
            /* a holder that stays keeps its base for patches */
            bool base[WK_HOLDERS_MAX] = {false};
            for (int i = 0; i < tmp.nh; i++)
                for (int k = 0; k < t->nh; k++)
                    if (!strcmp(tmp.holders[i], t->holders[k]))
                        base[i] = t->hbase[k];
            t->nh = tmp.nh;
            memcpy(t->holders, tmp.holders, sizeof tmp.holders);
            memcpy(t->hbase, base, sizeof base);
        }
        return;
    }
    case PC_W_FENCE:
        if (!m->h.vt) {
            s_vc_drop(w, v, "fenced: this worker was taken for lost");
            return;
        }
        pc_wk_xsend(w, v, pc_hdr_make(PC_X_CANCEL, v->vc, m->h.vt, m->h.epoch, 0), NULL, 0);
        wk_vt *t = pc_wk_vt(v, m->h.vt);
        if (t && t->epoch < m->h.epoch) {
            pc_log(PC_LOG_INFO, "VC %016llx VT %llu epoch %u fenced (now epoch %u elsewhere)",
                   (unsigned long long)v->vc, (unsigned long long)t->id, t->epoch, m->h.epoch);
            pc_wk_vt_forget(v, t->id);
        }
        return;
    case PC_W_CLOSE:
        s_vc_drop(w, v, "closed by its deployer");
        return;
    case PC_W_GLOB:
        pc_wk_glob(w, v, m);
        return;
    case PC_W_READS_FROM: {
        wk_vt *t = pc_wk_vt(v, m->h.vt);
        if (t && t->epoch == m->h.epoch) {
            t->reads_ok = true;
            t->reads_from = m->h.seq;
        }
        return;
    }
    case PC_W_PLACE:
        s_place(w, v, m);
        return;
    case PC_W_LINKS: { /* checked whole on arrival; kept for an executor started anew */
        pc_buf_drop(&v->links);
        v->links = pc_buf_take(&m->body);
        struct iovec io = {(void *)pc_buf_data(v->links), pc_buf_len(v->links)};
        pc_wk_xsend(w, v, pc_hdr_make(PC_X_LINKS, v->vc, 0, 0, 0), &io, io.iov_len ? 1 : 0);
        return;
    }
    case PC_W_TRIM: { /* for the sender logs of the VTs here, whichever VT it names */
        struct iovec io = {(void *)pc_buf_data(m->body), pc_buf_len(m->body)};
        pc_wk_xsend(w, v, pc_hdr_make(PC_X_TRIM, v->vc, m->h.vt, 0, 0), &io, io.iov_len ? 1 : 0);
        return;
    }
    case PC_W_FLUSH:
        /* the recovery barrier: the executor answers after its last
         * determinants; with none running here, nothing is held */
        if (!v->x) {
            pc_wk_send_deployer(w, v, PC_W_FLUSHED, 0, 0, m->h.seq, NULL, 0, NULL);
        } else {
            struct iovec io = {(void *)pc_buf_data(m->body), pc_buf_len(m->body)};
            pc_wk_xsend(w, v, pc_hdr_make(PC_X_FLUSH, v->vc, 0, 0, m->h.seq), &io,
                        io.iov_len ? 1 : 0);
        }
        return;
    case PC_W_MIGRATE: {
        /* the deployer moves the VT to a less loaded worker: captured and
         * stopped in one step, its image goes back (W_STOPPED) */
        wk_vt *t = pc_wk_vt(v, m->h.vt);
        if (t && t->epoch == m->h.epoch && !pc_buf_len(m->body))
            pc_wk_xsend(w, v, pc_hdr_make(PC_X_STOP, v->vc, t->id, 0, 0), NULL, 0);
        return;
    }
    case PC_W_STABLE:
        if (v->direct) { /* of any VT: its determinants ride on the messages sent here */
            pc_wk_xsend(w, v, pc_hdr_make(PC_X_STABLE, v->vc, m->h.vt, m->h.epoch, m->h.seq), NULL,
                        0);
            return;
        }
        /* fall through */
    case PC_W_IN:
    case PC_W_IN_REF:
    case PC_W_FIX:
    case PC_W_ACK: {
        /* a VT's inputs and acknowledgements, to its executor as they are */
        wk_vt *t = pc_wk_vt(v, m->h.vt);
        if (!t) {
            /* an incarnation that ended here: its end was lost (the
             * deployer's inputs and its acknowledgements sent again say
             * so), it goes again, at most once a second: it carries the
             * VT's sender log, megabytes with direct messages, and such
             * messages may come by the thousand meanwhile (each sending it
             * again queued 3.5 GB in one worker of eval/curve/msg.sh) */
            uint64_t now = pc_peer_now(w->p);
            for (int i = 0; i < WK_DONE_KEEP; i++) {
                wk_done *d = &v->done[i];
                if (d->vt == m->h.vt && d->epoch == m->h.epoch) {
                    if (now - d->sent_ms >= 1000) {
                        d->sent_ms = now;
                        pc_wk_send_deployer(w, v, d->type, d->vt, d->epoch, 0, d->payload, d->len,
                                            NULL);
                    }
                    break;
                }
            }
            return;
        }
        if (t->epoch != m->h.epoch || !v->x)
            return;
        if (m->h.type == PC_W_ACK) { /* u8 resend (0 or 1), or no payload */
            pc_rbuf r;
            pc_rbuf_init(&r, pc_buf_data(m->body), pc_buf_len(m->body));
            if (r.len && pc_get_u8(&r) > 1)
                pc_rbuf_fail(&r, "resend flag neither 0 nor 1");
            if (!pc_rbuf_done(&r)) {
                pc_log_src(PC_LOG_WARN, m->from, "dropped ACK from %s: %s", m->from,
                           pc_rbuf_why(&r));
                return;
            }
            pc_wk_reads_acked(v, t->id, m->h.seq);
        }
        if (m->h.type == PC_W_IN_REF) {
            s_in_ref(w, v, m);
            return;
        }
        if (m->h.type == PC_W_STABLE) {
            pc_wk_xsend(w, v, pc_hdr_make(PC_X_STABLE, v->vc, m->h.vt, m->h.epoch, m->h.seq), NULL,
                        0);
            return;
        }
        if (m->h.type == PC_W_FIX) {
            struct iovec io = {(void *)pc_buf_data(m->body), pc_buf_len(m->body)};
            pc_wk_xsend(w, v, pc_hdr_make(PC_X_FIX, v->vc, m->h.vt, m->h.epoch, 0), &io,
                        io.iov_len ? 1 : 0);
            return;
        }
        if (m->h.type == PC_W_IN)
            s_copy_in(v, m->body);
        struct iovec io = {(void *)pc_buf_data(m->body), pc_buf_len(m->body)};
        pc_wk_xsend(w, v,
                    pc_hdr_make(m->h.type == PC_W_IN ? PC_X_IN : PC_X_ACK, v->vc, m->h.vt,
                                m->h.epoch, m->h.seq),
                    &io, io.iov_len ? 1 : 0);
        return;
    }
    default:
        return;
    }
}

/* ===================================================================
 * The executors' messages
 * =================================================================== */

static void s_exec_msg(pc_worker *w, wk_vc *v, const pc_hdr *h, uint8_t *payload)
{
    wk_vt *t = h->vt ? pc_wk_vt(v, h->vt) : NULL;
    bool current = t && t->epoch == h->epoch;
    switch (h->type) {
    case PC_X_READY:
        v->xstate = X_READY;
        break;
    case PC_X_RESUME_FREE:
        pc_rslot_back(&v->rs);
        break;
    case PC_X_STATS: {
        pc_rbuf r;
        pc_rbuf_init(&r, payload, h->len);
        uint64_t x[WK_XSTATS];
        for (int i = 0; i < WK_XSTATS; i++)
            x[i] = pc_get_u64(&r);
        if (pc_rbuf_done(&r))
            memcpy(v->xstats, x, sizeof x);
        else
            pc_log(PC_LOG_WARN, "VC %016llx: malformed STATS from its executor: %s",
                   (unsigned long long)v->vc, pc_rbuf_why(&r));
        break;
    }
    case PC_X_LINK: /* the deployer checks the number and incarnation */
        pc_wk_send_deployer(w, v, PC_W_LINK, 0, h->epoch, h->seq, payload, h->len, NULL);
        break;
    case PC_X_MODULE_OK: {
        pc_rbuf r;
        pc_rbuf_init(&r, payload, h->len);
        int32_t err = pc_get_i32(&r);
        char detail[256];
        pc_get_str(&r, detail, sizeof detail);
        if (!v->accepted)
            s_module_reply(w, v, pc_rbuf_done(&r) ? err : LEV_EMODULE,
                           pc_rbuf_done(&r) ? detail : "malformed MODULE_OK from the executor");
        break;
    }
    case PC_X_IMAGE:
        pc_wk_image(w, v, h, payload);
        return;
    case PC_X_STOPPED:
        pc_wk_stopped(w, v, h, payload);
        return;
    case PC_X_DONE:
    case PC_X_FAILED:
        if (current) {
            uint16_t type = h->type == PC_X_DONE ? PC_W_DONE : PC_W_PLACE_ERR;
            pc_wk_send_deployer(w, v, type, h->vt, h->epoch, 0, payload, h->len, NULL);
            s_done_keep(v, type, h, payload, pc_peer_now(w->p));
            pc_wk_vt_forget(v, h->vt);
        }
        break;
    case PC_X_OUT:
    case PC_X_RESYNC:
        if (current && h->type == PC_X_OUT && pc_wk_read_out(w, v, t, h, payload))
            break; /* answered here */
        if (current && h->type == PC_X_OUT)
            s_copy_out(v, payload, h->len);
        if (current)
            pc_wk_send_deployer(w, v, h->type == PC_X_OUT ? PC_W_OUT : PC_W_RESYNC, h->vt, h->epoch,
                                h->seq, payload, h->len, NULL);
        break;
    case PC_X_STALL:
        if (current)
            pc_wk_send_deployer(w, v, PC_W_STALL, h->vt, h->epoch, 0, payload, h->len, NULL);
        break;
    case PC_X_DET: /* for VTs of this executor; the deployer checks which */
        pc_wk_send_deployer(w, v, PC_W_DET, 0, 0, 0, payload, h->len, NULL);
        break;
    case PC_X_FLUSHED: /* after its last X_DET, so after its last W_DET */
        pc_wk_send_deployer(w, v, PC_W_FLUSHED, 0, 0, h->seq, NULL, 0, NULL);
        break;
    case PC_X_CRASH: {
        pc_rbuf r;
        pc_rbuf_init(&r, payload, h->len);
        int32_t sig = pc_get_i32(&r);
        if (!pc_rbuf_done(&r)) {
            pc_log(PC_LOG_WARN, "VC %016llx: dropped a malformed CRASH from the executor: %s",
                   (unsigned long long)v->vc, pc_rbuf_why(&r));
            break;
        }
        v->crash_vt = h->vt;
        v->crash_sig = sig;
        break;
    }
    default:
        pc_log(PC_LOG_WARN, "VC %016llx: executor sent %s, not an executor's message",
               (unsigned long long)v->vc, pc_type_name(h->type));
    }
    free(payload);
}

/* The VC whose executor is x, or NULL (an executor stopped since). */
static wk_vc *s_vc_of_exec(pc_worker *w, const void *x)
{
    for (wk_vc *v = w->vcs; v; v = v->next)
        if (v->x == x)
            return v;
    return NULL;
}

void pc_worker_exec_record(pc_worker *w, void *x, const pc_hdr *h, uint8_t *payload)
{
    wk_vc *v = s_vc_of_exec(w, x);
    const char *why = NULL;
    if (v && pc_msg_check(h, payload, h->len, 0, &why)) {
        pc_log(PC_LOG_WARN, "VC %016llx: refused %s from the executor: %s",
               (unsigned long long)v->vc, pc_type_name(h->type), why);
        v = NULL;
    }
    if (!v) {
        free(payload);
        return;
    }
    s_exec_msg(w, v, h, payload);
}

void pc_worker_exec_image(pc_worker *w, void *x, const pc_hdr *h, pc_buf *image, const char *why)
{
    wk_vc *v = s_vc_of_exec(w, x);
    if (v && !image)
        pc_log(PC_LOG_WARN, "VC %016llx: refused an image of VT %llu from the executor: %s",
               (unsigned long long)v->vc, (unsigned long long)h->vt, why ? why : "-");
    if (v && h->type == PC_X_STOPPED_SLOT) /* refused: the stop failed, its held image serves */
        pc_wk_stopped_buf(w, v, h, image ? 0 : LEV_EIMAGE, image);
    else if (v && image)
        pc_wk_image_buf(w, v, h, image, true);
    else
        pc_buf_drop(&image);
}

void pc_worker_exec_ended(pc_worker *w, void *x, const char *why, int signal)
{
    wk_vc *v = s_vc_of_exec(w, x);
    if (v)
        s_exec_dead(w, v, why, signal);
}

/* ===================================================================
 * Membership, leave, status, life cycle
 * =================================================================== */

/* A deployer that left took its client with it: its VCs go at once. One
 * declared dead may be falsely so (a partition, a stall) and come back:
 * its VCs go only if it stays dead for the client timeout, so that a
 * refuted death costs no VT (pc_worker_tick). */
void pc_worker_on_member(pc_worker *w, const pc_member *m, pc_member_state old)
{
    (void)old;
    uint64_t now = pc_peer_now(w->p);
    for (wk_vc *v = w->vcs, *next; v; v = next) {
        next = v->next;
        if (strcmp(v->deployer, m->rec.endpoint))
            continue;
        if (m->state == PC_MEMBER_LEFT)
            s_vc_drop(w, v, "its deployer left");
        else if (m->state == PC_MEMBER_DEAD && !v->orphan_ms)
            v->orphan_ms = now ? now : 1;
        else if (m->state == PC_MEMBER_ALIVE)
            v->orphan_ms = 0;
    }
}

void pc_worker_leave(pc_worker *w)
{
    w->leaving = true;
    for (wk_vc *v = w->vcs; v; v = v->next)
        if (v->x && v->nvts)
            pc_wk_xsend(w, v, pc_hdr_make(PC_X_STOP, v->vc, 0, 0, 0), NULL, 0);
}

uint32_t pc_worker_load(const pc_worker *w)
{
    uint32_t n = 0;
    for (const wk_vc *v = w->vcs; v; v = v->next)
        n += (uint32_t)v->nvts;
    return n;
}

/* Evicts cached modules beyond the cache's bounds, but none of the VCs
 * this peer serves. */
static void s_evict(pc_worker *w)
{
    uint8_t(*keep)[PC_HASH_LEN] = NULL;
    size_t n = 0, cap = 0;
    for (const wk_vc *v = w->vcs; v; v = v->next)
        if (!RT_VEC_RESERVE(keep, cap, n, 1))
            memcpy(keep[n++], v->hash, PC_HASH_LEN);
        else
            goto out; /* no memory: nothing is evicted */
    size_t gone = pc_modmgr_evict(w->mm, (const uint8_t(*)[PC_HASH_LEN])keep, n);
    if (gone)
        pc_log(PC_LOG_INFO, "module cache: %zu module(s) evicted (size or age)", gone);
out:
    free(keep);
}

uint64_t pc_worker_tick(pc_worker *w, uint64_t now)
{
    uint64_t grace = (uint64_t)w->p->o.client_timeout_ms;
    for (wk_vc *v = w->vcs, *next; v; v = next) {
        next = v->next;
        if (v->orphan_ms && now - v->orphan_ms >= grace)
            s_vc_drop(w, v, "its deployer is gone");
    }
    if (w->evict_due || now - w->evict_ms >= 60000) {
        w->evict_due = false;
        w->evict_ms = now;
        s_evict(w);
    }
    return now + 1000;
}

void pc_worker_ckpt_status(pc_worker *w, pc_wbuf *j)
{
    pc_json_fmt(j,
                "{\"images\":%llu,\"bytes\":%llu,\"sent_bytes\":%llu,\"lent\":%llu,"
                "\"resumes_in_slot\":%llu}",
                (unsigned long long)w->images, (unsigned long long)w->image_bytes,
                (unsigned long long)w->sent_bytes, (unsigned long long)w->lent,
                (unsigned long long)w->resumes_slot);
}

void pc_worker_modules_status(pc_worker *w, pc_wbuf *j)
{
    pc_modmgr_stats st;
    pc_modmgr_status(w->mm, &st);
    pc_json_fmt(j,
                "{\"cached\":%zu,\"bytes\":%zu,\"limit\":%zu,\"evicted\":%llu,"
                "\"refused\":%llu}",
                st.held, st.bytes, st.max_bytes, (unsigned long long)st.evicted,
                (unsigned long long)st.refused);
}

void pc_worker_copies_status(pc_worker *w, pc_wbuf *j)
{
    size_t copies = 0, bytes = 0;
    for (wk_vc *v = w->vcs; v; v = v->next) {
        copies += pc_gcopies_count(v->copies);
        bytes += pc_gcopies_bytes(v->copies);
    }
    pc_json_fmt(j,
                "{\"copies\":%zu,\"bytes\":%zu,\"hits\":%llu,\"misses\":%llu,\"bytes_saved\":%llu}",
                copies, bytes, (unsigned long long)w->ref_hits, (unsigned long long)w->ref_misses,
                (unsigned long long)w->ref_bytes);
}

void pc_worker_status(pc_worker *w, pc_wbuf *j)
{
    bool first = true;
    for (wk_vc *v = w->vcs; v; v = v->next, first = false) {
        pc_json_fmt(j, "%s{\"vc\":\"%016llx\",\"deployer\":", first ? "" : ",",
                    (unsigned long long)v->vc);
        pc_json_str(j, v->deployer);
        pc_json_fmt(j, ",\"pid\":%d,\"vts\":%d,\"running\":[", (int)v->pid, v->nvts);
        for (int i = 0; i < v->nvts; i++)
            pc_json_fmt(j, "%s%llu", i ? "," : "", (unsigned long long)v->vts[i].id);
        pc_json_fmt(j, "]");
        if (v->direct) {
            static const char *const names[WK_XSTATS] = {
                "sent",       "received",     "dropped",         "refused",
                "send_waits", "credits_sent", "credits_received"};
            for (int i = 0; i < WK_XSTATS; i++)
                pc_json_fmt(j, "%s\"%s\":%llu", i ? "," : ",\"direct\":{", names[i],
                            (unsigned long long)v->xstats[i]);
            pc_json_fmt(j, "}");
        }
        pc_json_fmt(j, "}");
    }
}

int pc_worker_new(pc_worker **out, pc_peer *p)
{
    pc_worker *w = calloc(1, sizeof *w);
    if (!w)
        return LEV_ENOMEM;
    w->p = p;
    int rc = pc_modmgr_new(&w->mm, p->o.data_dir);
    if (!rc) {
        pc_modmgr_limit(w->mm, p->o.limits.module_cache, p->o.limits.module_age_s);
        s_evict(w); /* what an earlier run left above the bounds */
    }
    if (rc) {
        free(w);
        return rc;
    }
    *out = w;
    return 0;
}

void pc_worker_destroy(pc_worker **w_p)
{
    pc_worker *w = w_p ? *w_p : NULL;
    if (!w)
        return;
    while (w->vcs)
        s_vc_drop(w, w->vcs, "peer stopping");
    pc_modmgr_destroy(&w->mm);
    free(w);
    *w_p = NULL;
}
