/* exechost.c - the executor of one virtual computer (exechost.h): reads
 * the daemon's requests on the main thread, runs VTs on a runtime
 * executor, queues what they produce for a sender thread that writes the
 * channel, reaps ended VTs, and in an executor process of its own lowers
 * its priority, dies with its daemon and reports faults.
 */
#define _GNU_SOURCE
#include "exechost.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "chan.h"
#include "envelope.h"
#include "exechost_private.h"
#include "executor.h"
#include "image.h"
#include "imgslot.h"
#include "lev_errors.h"
#include "lev_task.h"
#include "modmgr.h"
#include "module.h"
#include "rt.h"
#include "taskmod.h"
#include "vec.h"
#include "vt.h"
#include "vtchan.h"

#define S_TASK_MAX 1024      /* bytes of a task name */
#define S_REAP_WAIT_MS 10000 /* an ended VT leaves its executor long before this */
#define S_STALE_MS 2000      /* outboxes are looked at this often (s_stale_outboxes) */
/* Lowers the priority of the calling thread, which the threads it starts
 * inherit: SCHED_IDLE, else nice 19; LEV_EXEC_NICE=N: nice N (0: none). */
static void s_lower_priority(void)
{
    const char *env = getenv("LEV_EXEC_NICE");
    if (env && *env) {
        char *end;
        long n = strtol(env, &end, 10);
        if (!*end && n >= 0 && n <= 19) {
            if (n && setpriority(PRIO_PROCESS, 0, (int)n))
                fprintf(stderr, "levpeer executor: cannot set nice %ld: %s\n", n, strerror(errno));
            return;
        }
        fprintf(stderr, "levpeer executor: LEV_EXEC_NICE=%s is not 0..19; using SCHED_IDLE\n", env);
    }
    struct sched_param sp = {.sched_priority = 0};
    if (sched_setscheduler(0, SCHED_IDLE, &sp) == 0)
        return;
    if (setpriority(PRIO_PROCESS, 0, 19))
        fprintf(stderr, "levpeer executor: cannot lower the priority: %s\n", strerror(errno));
}

/* Makes the process die with its parent; false if the parent is gone. */
static bool s_tie_to_parent(void)
{
    pid_t parent = getppid();
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
        fprintf(stderr, "levpeer executor: PR_SET_PDEATHSIG: %s\n", strerror(errno));
    return getppid() == parent;
}

/* Queues FAILED for a VT that did not start, with the thread's error
 * detail, and returns err. */
static int s_failed(xh_host *h, const pc_hdr *req, int err)
{
    const char *d = lev_errdetail();
    pc_xh_queue_err(h, PC_X_FAILED, req->vt, req->epoch, req->seq, err,
                    d && *d ? d : lev_strerror(err));
    return err;
}

/* ===================================================================
 * VTs
 * =================================================================== */

/* The executor, made at first use with the configured options. */
static int s_exec(xh_host *h, rt_exec **out)
{
    if (!h->ex) {
        rt_exec_opts o = {.workers = h->threads,
                          .checkpoint_ms = h->checkpoint_ms,
                          .on_done = pc_xh_on_done,
                          .on_image = pc_xh_on_image,
                          .image_alloc = pc_xh_image_alloc(h),
                          .on_capture_error = pc_xh_on_capture_error,
                          .chan = &h->chost,
                          .idle = pc_xh_direct_idle(h),
                          .ud = h};
        int rc = rt_exec_new(&h->ex, &o);
        if (rc)
            return rc;
    }
    *out = h->ex;
    return 0;
}

static xh_vtrec *s_live_find(xh_host *h, uint64_t id)
{
    for (xh_vtrec *r = h->live; r; r = r->live_next)
        if (r->id == id)
            return r;
    return NULL;
}

static void s_live_unlink(xh_host *h, const xh_vtrec *r)
{
    for (xh_vtrec **pp = &h->live; *pp; pp = &(*pp)->live_next)
        if (*pp == r) {
            *pp = r->live_next;
            return;
        }
}

static void s_vtrec_free(xh_vtrec *r)
{
    if (r->stop_out)
        pc_xh_out_free(r->stop_out);
    if (r->end)
        pc_xh_out_free(r->end);
    free(r);
}

/* With direct messages, a new incarnation takes no input before it has
 * the positions the deployer fixed for it (X_FIX, which may come after
 * its RESUME: the image can come from a holder): it waits here, and asks
 * for them (RESYNC: the deployer sends them with each answer). */
static bool s_park(xh_host *h, const pc_hdr *req, rt_vt *vt, const uint8_t *cx, size_t cxlen)
{
    if (pc_xh_direct_fix_ready(h, req->vt, req->epoch))
        return false;
    xh_parked *k = calloc(1, sizeof *k);
    uint8_t *copy = cxlen ? malloc(cxlen) : NULL;
    if (!k || (cxlen && !copy)) {
        free(k);
        free(copy);
        return false; /* it starts with the positions as they come */
    }
    if (cxlen)
        memcpy(copy, cx, cxlen);
    *k = (xh_parked){.next = h->parked, .req = *req, .vt = vt, .cx = copy, .cxlen = cxlen};
    h->parked = k;
    pc_xh_queue(h, pc_xh_out_new(PC_X_RESYNC, req->vt, req->epoch, UINT64_MAX));
    return true;
}

/* Drops the parked starts `drop` selects (all when NULL). */
static void s_unpark(xh_host *h, bool (*drop)(const xh_parked *, const pc_hdr *), const pc_hdr *key)
{
    for (xh_parked **pp = &h->parked; *pp;) {
        xh_parked *k = *pp;
        if (drop && !drop(k, key)) {
            pp = &k->next;
            continue;
        }
        *pp = k->next;
        rt_vt_destroy(&k->vt);
        free(k->cx);
        free(k);
    }
}

static bool s_parked_older(const xh_parked *k, const pc_hdr *key)
{
    return (!key->vt || k->req.vt == key->vt) && k->req.epoch < key->epoch;
}

static int s_start(xh_host *h, const pc_hdr *req, rt_vt *vt, const uint8_t *cx, size_t cxlen);

/* X_FIX came: a start that waited for it goes on. */
static void s_fixed(xh_host *h, uint64_t id, uint32_t epoch)
{
    for (xh_parked **pp = &h->parked; *pp; pp = &(*pp)->next) {
        xh_parked *k = *pp;
        if (k->req.vt != id || k->req.epoch != epoch || !pc_xh_direct_fix_ready(h, id, epoch))
            continue;
        *pp = k->next;
        s_start(h, &k->req, k->vt, k->cx, k->cxlen);
        free(k->cx);
        free(k);
        return;
    }
}

/* Gives a new VT its identity and a record, and spawns it; on failure the
 * VT is destroyed and FAILED queued. The caller checked the id. */
static int s_start(xh_host *h, const pc_hdr *req, rt_vt *vt, const uint8_t *cx, size_t cxlen)
{
    if (s_park(h, req, vt, cx, cxlen))
        return 0;
    rt_exec *ex = NULL;
    int rc = s_exec(h, &ex);
    xh_vtrec *r = rc ? NULL : calloc(1, sizeof *r);
    if (!rc && !r)
        rc = rt_err(LEV_ENOMEM, "no memory for a virtual thread's record");
    if (!rc)
        rc = rt_vt_set_identity(vt, req->vt, req->epoch);
    if (!rc)
        rc = pc_xh_cx_install(h, vt, req->vt, req->epoch, cx, cxlen);
    if (!rc) {
        r->vt = vt;
        r->id = req->vt;
        r->epoch = req->epoch;
        vt->host = r;
        /* its inputs from where it stands, then what it had not had
         * acknowledged (the deployer drops what it has) */
        xh_out *o = pc_xh_out_new(PC_X_RESYNC, r->id, r->epoch, pc_xh_next_wanted(h, vt));
        pc_xh_queue(h, o);
        rt_ch_resend(vt);
        rc = rt_exec_spawn(ex, vt);
        /* A resumed VT's only image may be on this very peer (its holder
         * became its host): a new one goes to its new holders at once. */
        if (!rc && req->type == PC_X_RESUME)
            rt_exec_request_capture(vt);
    }
    if (rc) {
        free(r);
        rt_vt_destroy(&vt);
        return s_failed(h, req, rc);
    }
    r->live_next = h->live;
    h->live = r;
    h->nvts++;
    return 0;
}

/* Sends the DONE of an ended VT (unless it was canceled), then destroys
 * the VT and its record. */
static void s_finish(xh_host *h, xh_vtrec *r)
{
    s_live_unlink(h, r);
    pthread_mutex_lock(&h->mu);
    xh_out *end = r->end && !r->forget ? r->end : NULL; /* not queued yet: ours */
    pthread_mutex_unlock(&h->mu);
    /* it takes cx_mu, never under h->mu (the order is cx_mu, then h->mu:
     * a VT's output sends its determinants up under cx_mu) */
    if (end)
        pc_xh_direct_done(h, r->id, end);
    if (!s_live_find(h, r->id))
        pc_xh_cx_remove(h, r->id); /* unless a newer incarnation runs here */
    pthread_mutex_lock(&h->mu);
    if (r->end && !r->forget) {
        pc_xh_queue_locked(h, r->end);
        r->end = NULL;
    }
    pthread_mutex_unlock(&h->mu);
    rt_vt_destroy(&r->vt);
    s_vtrec_free(r);
    h->nvts--;
}

/* An ended VT whose outbox still holds unacknowledged outputs: its DONE
 * waits for them, or it could overtake its last messages and reports on
 * the way (or outlive them, lost) and the deployer would end the VT
 * without them. It stays in h->live, where acknowledgements reach it and
 * s_stale_outboxes sends its outbox again. */
static bool s_drains(xh_host *h, xh_vtrec *r)
{
    pthread_mutex_lock(&h->mu);
    bool held = r->end && !r->forget;
    pthread_mutex_unlock(&h->mu);
    r->draining = held && rt_ch_oldest_out(r->vt) != 0;
    return r->draining;
}

/* Destroys the VTs that ended (h->reap), sending their DONE, or keeps
 * those whose outputs are not all acknowledged yet (s_drains). With the
 * executor still there it first waits until it is done with each. */
static void s_reap(xh_host *h)
{
    pthread_mutex_lock(&h->mu);
    xh_vtrec *list = h->reap;
    h->reap = NULL;
    pthread_mutex_unlock(&h->mu);
    while (list) {
        xh_vtrec *r = list;
        list = r->reap_next;
        if (h->ex && rt_exec_wait(h->ex, r->vt, S_REAP_WAIT_MS)) {
            s_live_unlink(h, r);
            fprintf(stderr, "levpeer executor: virtual thread %llu does not leave its executor\n",
                    (unsigned long long)r->id);
            continue; /* leaked rather than freed under a worker */
        }
        if (!s_drains(h, r))
            s_finish(h, r);
    }
}

/* 0 if a VT of this id may start here, else FAILED is queued. A VT whose
 * DONE went out is reaped first: the daemon may reuse its id at once. */
static int s_id_free(xh_host *h, const pc_hdr *req)
{
    s_reap(h);
    if (req->vt <= 1)
        return s_failed(
            h, req,
            rt_err(LEV_EINVAL, "virtual thread id %llu is reserved", (unsigned long long)req->vt));
    xh_vtrec *r = s_live_find(h, req->vt);
    if (r && r->draining && r->epoch < req->epoch) {
        /* ended, its DONE held: a newer incarnation replaces it */
        pthread_mutex_lock(&h->mu);
        r->forget = true;
        pthread_mutex_unlock(&h->mu);
        s_finish(h, r);
        r = NULL;
    }
    if (r)
        return s_failed(h, req,
                        rt_err(LEV_EBUSY, "virtual thread %llu runs here already (epoch %u)",
                               (unsigned long long)r->id, r->epoch));
    pc_hdr key = {.vt = req->vt, .epoch = UINT32_MAX};
    s_unpark(h, s_parked_older, &key); /* a start that waited is replaced */
    return 0;
}

/* ===================================================================
 * Requests
 * =================================================================== */

static void s_config(xh_host *h, pc_rbuf *rb)
{
    int ck = pc_get_i32(rb), threads = pc_get_i32(rb);
    char host[PC_ENDPOINT_MAX];
    pc_keypair key;
    memset(&key, 0, sizeof key);
    pc_get_str(rb, host, sizeof host);
    pc_get_str(rb, key.pub, sizeof key.pub);
    pc_get_str(rb, key.sec, sizeof key.sec);
    uint64_t lim_state = pc_get_u64(rb), lim_msg = pc_get_u64(rb), lim_value = pc_get_u64(rb);
    if (!pc_rbuf_done(rb) || strlen(key.pub) != strlen(key.sec) ||
        (key.pub[0] && strlen(key.pub) != PC_KEY_Z85)) {
        fprintf(stderr, "levpeer executor: malformed CONFIG: %s\n", pc_rbuf_why(rb));
        return;
    }
    s_reap(h);
    if (h->nvts) {
        fprintf(stderr, "levpeer executor: CONFIG while virtual threads run; ignored\n");
        return;
    }
    rt_exec_destroy(&h->ex); /* made again with these options at the next start */
    h->checkpoint_ms = ck;
    h->threads = threads > 0 ? threads : 0;
    /* an address to receive on: the VC's messages go between executors */
    h->direct = host[0] != '\0';
    memcpy(h->link_host, host, sizeof host);
    h->link_key = key; /* "": no keys */
    h->lim_state = lim_state;
    h->chost.max_msg = lim_msg < RT_CH_MAX_MSG ? (size_t)lim_msg : 0;
    h->chost.max_value = lim_value < RT_CH_MAX_VALUE ? (size_t)lim_value : 0;
    h->chost.send = h->direct ? pc_xh_direct_send : NULL;
    h->chost.taken = h->direct ? pc_xh_direct_taken : NULL;
}

/* Checks and loads a module; 0 or an error with its detail. */
static int s_load_module(xh_host *h, pc_rbuf *rb)
{
    const void *hash, *bytes;
    size_t len;
    pc_get_raw(rb, &hash, PC_HASH_LEN);
    uint64_t digest = pc_get_u64(rb);
    pc_get_blob(rb, &bytes, &len);
    if (!pc_rbuf_done(rb))
        return rt_err(LEV_EINVAL, "malformed MODULE: %s", pc_rbuf_why(rb));
    uint8_t got[PC_HASH_LEN];
    pc_module_hash(bytes, len, got);
    if (memcmp(got, hash, PC_HASH_LEN))
        return rt_err(LEV_EMODULE,
                      "the module's %zu bytes are damaged: their hash is not the one "
                      "they were sent with",
                      len);
    const lev_module *m = NULL;
    int rc = rt_taskmod_load(bytes, len, digest, 0, &m);
    if (rc)
        return rc;
    for (int i = 0; i < h->nmods; i++)
        if (h->mods[i] == m)
            return 0;
    if (RT_VEC_RESERVE(h->mods, h->capmods, (size_t)h->nmods, 1))
        return rt_err(LEV_ENOMEM, "no memory to list a loaded module");
    h->mods[h->nmods++] = m;
    return 0;
}

static void s_module(xh_host *h, const pc_hdr *req, pc_rbuf *rb)
{
    int rc = s_load_module(h, rb);
    pc_xh_queue_err(h, PC_X_MODULE_OK, 0, 0, req->seq, rc, rc ? lev_errdetail() : "");
}

static void s_run(xh_host *h, const pc_hdr *req, pc_rbuf *rb)
{
    const void *arg;
    size_t len;
    char *task = pc_get_strdup(rb, S_TASK_MAX);
    pc_get_blob(rb, &arg, &len);
    if (!pc_rbuf_done(rb)) {
        s_failed(h, req, rt_err(LEV_EINVAL, "malformed RUN: %s", pc_rbuf_why(rb)));
    } else if (!s_id_free(h, req)) {
        int rc = rt_err(LEV_EMODULE, "no task named %s: no task module is loaded", task);
        const lev_module *m = NULL;
        uint32_t fn = 0;
        for (int i = h->nmods - 1; i >= 0 && rc; i--)
            if ((rc = rt_task_find_in(h->mods[i], task, &fn)) == 0)
                m = h->mods[i];
        rt_vt *vt = NULL;
        if (!rc)
            rc = rt_vt_new(m, fn, arg, len, &vt);
        if (rc)
            s_failed(h, req, rc);
        else
            s_start(h, req, vt, NULL, 0);
    }
    free(task);
}

/* Restores the VT of envelope env[envlen] (X_RESUME's bytes, or the
 * resume slot's mapping: nothing of it is kept) and starts it. */
static void s_resume_env(xh_host *h, const pc_hdr *req, const void *env, size_t envlen)
{
    const uint8_t *chan, *img, *cx;
    size_t clen, len, cxlen;
    const char *bad = NULL;
    if (!pc_env_split(env, envlen, &chan, &clen, &img, &len, &cx, &cxlen, &bad)) {
        s_failed(h, req, rt_err(LEV_EIMAGE, "%s", bad));
        return;
    }
    if (s_id_free(h, req))
        return;
    rt_image_info info;
    int rc = rt_image_info_get(img, len, &info);
    if (rc) {
        s_failed(h, req, rc);
        return;
    }
    if (info.vt_id != req->vt) {
        s_failed(h, req,
                 rt_err(LEV_EIMAGE, "the image is of virtual thread %llu, not %llu",
                        (unsigned long long)info.vt_id, (unsigned long long)req->vt));
        return;
    }
    const lev_module *m = NULL;
    for (int i = 0; i < h->nmods && !m; i++)
        if (lev_module_hash(h->mods[i]) == info.module_hash)
            m = h->mods[i];
    if (!m) {
        s_failed(h, req,
                 rt_err(LEV_EMODULE,
                        "the image is of task module %016llx, which this executor has not loaded",
                        (unsigned long long)info.module_hash));
        return;
    }
    rt_vt *vt = NULL;
    rc = rt_restore(m, img, len, &vt);
    if (!rc && (rc = rt_ch_load(vt, chan, clen)) != 0)
        rt_vt_destroy(&vt);
    if (rc)
        s_failed(h, req, rc);
    else
        s_start(h, req, vt, cx, cxlen);
}

static void s_resume(xh_host *h, const pc_hdr *req, pc_rbuf *rb)
{
    const void *env;
    size_t envlen;
    pc_get_blob(rb, &env, &envlen);
    if (!pc_rbuf_done(rb)) {
        s_failed(h, req, rt_err(LEV_EINVAL, "malformed RESUME: %s", pc_rbuf_why(rb)));
        return;
    }
    s_resume_env(h, req, env, envlen);
}

/* X_RESUME_SLOT: the envelope in the daemon's resume slot (imgslot.h),
 * read from this executor's mapping of it; the slot goes back to the
 * daemon whatever came of it. */
static void s_resume_slot(xh_host *h, const pc_hdr *req, const uint8_t *payload)
{
    int fd = pc_chan_take_fd(h->chan); /* (one that came with it, named or not) */
    uint64_t len = 0;
    const char *why = NULL;
    const uint8_t *env = pc_rslot_take(&h->rs, payload, req->len, fd, &len, &why);
    if (env)
        s_resume_env(h, req, env, (size_t)len);
    else
        s_failed(h, req, rt_err(LEV_EIMAGE, "the image to resume (RESUME_SLOT): %s", why));
    pc_xh_queue(h, pc_xh_out_new(PC_X_RESUME_FREE, req->vt, req->epoch, 0));
}

/* Sends a VT's outbox again (one that ended has left the runtime's
 * executor: its outbox goes through this host's channel directly). */
static void s_resend(xh_host *h, xh_vtrec *r)
{
    if (r->draining)
        rt_ch_resend_via(r->vt, &h->chost);
    else
        rt_ch_resend(r->vt);
}

/* Every S_STALE_MS: a VT whose oldest unacknowledged output has not
 * changed since the last look sends its outbox again (the output, or its
 * acknowledgement, was lost on the way and nothing after it showed the
 * gap); one that has heard nothing from its deployer since it started
 * asks for its inputs again (its RESYNC was lost: the deployer sends
 * nothing to an incarnation until it has one). */
static void s_stale_outboxes(xh_host *h)
{
    for (xh_vtrec *r = h->live; r; r = r->live_next) {
        if (!r->heard && !r->draining)
            pc_xh_queue(h,
                        pc_xh_out_new(PC_X_RESYNC, r->id, r->epoch, pc_xh_next_wanted(h, r->vt)));
        uint64_t o = rt_ch_oldest_out(r->vt);
        if (o && o == r->oldest)
            s_resend(h, r);
        r->oldest = o;
    }
    for (const xh_parked *k = h->parked; k; k = k->next) /* their X_FIX may have been lost */
        pc_xh_queue(h, pc_xh_out_new(PC_X_RESYNC, k->req.vt, k->req.epoch, UINT64_MAX));
}

/* A VT's input (X_IN) or acknowledgement (X_ACK) from its deployer. */
static void s_chan_in(xh_host *h, const pc_hdr *req, pc_rbuf *rb)
{
    xh_vtrec *r = s_live_find(h, req->vt);
    if (!r || r->epoch != req->epoch)
        return; /* an older incarnation's, or it ended */
    bool ack = req->type == PC_X_ACK;
    uint8_t resend = 0; /* X_ACK: u8 resend (1: an output after seq was lost), or no payload */
    rt_in in = {.d = req->seq};
    uint64_t cfrom = 0, cseq = 0; /* the input's channel (wire.h, W_IN) */
    if (ack) {
        resend = rb->len ? pc_get_u8(rb) : 0;
        if (resend > 1)
            pc_rbuf_fail(rb, "resend flag neither 0 nor 1");
    } else {
        in.kind = pc_get_u8(rb);
        in.novalue = pc_get_u8(rb);
        in.from = pc_get_u64(rb);
        in.ref = pc_get_u64(rb);
        in.err = pc_get_i32(rb);
        cfrom = pc_get_u64(rb);
        cseq = pc_get_u64(rb);
        pc_get_blob(rb, &in.data, &in.len);
    }
    if (!pc_rbuf_done(rb)) {
        fprintf(stderr, "levpeer executor: malformed %s for virtual thread %llu: %s\n",
                ack ? "acknowledgement" : "input", (unsigned long long)req->vt, pc_rbuf_why(rb));
        return;
    }
    r->heard = true;
    if (ack) {
        if (h->direct)
            pc_xh_direct_ack(h, r->vt, req->seq);
        else
            rt_ch_ack(r->vt, req->seq);
        if (r->draining && !rt_ch_oldest_out(r->vt))
            s_finish(h, r); /* its outputs taken: its DONE goes now */
        else if (resend)
            s_resend(h, r);
        return;
    }
    if (r->draining)
        return; /* it ended: an input it can no longer take */
    int rc = pc_xh_cx_in(h, r->vt, &in, cfrom, cseq, r->epoch);
    if (rc == LEV_ERANGE) /* a gap: ask again from where it stands */
        pc_xh_queue(h, pc_xh_out_new(PC_X_RESYNC, r->id, r->epoch, pc_xh_next_wanted(h, r->vt)));
    else if (rc < 0)
        fprintf(stderr, "levpeer executor: input %llu of virtual thread %llu refused: %s (%s)\n",
                (unsigned long long)req->seq, (unsigned long long)req->vt, lev_strerror(rc),
                lev_errdetail());
}

/* STOP of one VT (r NULL: it is not here). */
static void s_stop_one(xh_host *h, const pc_hdr *req, xh_vtrec *r)
{
    if (!r) {
        pc_xh_queue_err(h, PC_X_STOPPED, req->vt, req->epoch, req->seq, LEV_ENOVT,
                        "no such virtual thread runs here");
        return;
    }
    pthread_mutex_lock(&h->mu);
    bool first = !r->stopping && !r->forget;
    r->stopping = true;
    pthread_mutex_unlock(&h->mu);
    /* LEV_ENOVT: it ended meanwhile, and its DONE answers. */
    if (first)
        rt_exec_capture_stop(r->vt);
}

static void s_stop(xh_host *h, const pc_hdr *req)
{
    if (req->vt) {
        s_stop_one(h, req, s_live_find(h, req->vt));
        return;
    }
    for (xh_vtrec *r = h->live; r; r = r->live_next)
        s_stop_one(h, req, r);
}

static void s_cancel(xh_host *h, const pc_hdr *req)
{
    s_unpark(h, s_parked_older, req);
    for (xh_vtrec **pp = &h->live; *pp;) {
        xh_vtrec *r = *pp;
        if ((req->vt && r->id != req->vt) || r->epoch >= req->epoch) {
            pp = &r->live_next;
            continue;
        }
        pthread_mutex_lock(&h->mu);
        r->forget = true;
        pthread_mutex_unlock(&h->mu);
        if (r->draining) { /* it ended: its held DONE is dropped with it */
            s_finish(h, r);
            continue;
        }
        *pp = r->live_next; /* reaped once it ends */
        r->live_next = NULL;
        rt_exec_cancel(r->vt); /* LEV_ENOVT: it ended already */
    }
    pthread_mutex_lock(&h->mu);
    pc_xh_queue_drop_locked(h, pc_xh_is_canceled, req);
    pthread_mutex_unlock(&h->mu);
}

/* Acts on one request from the daemon. */
static void s_handle(xh_host *h, const pc_hdr *req, const uint8_t *payload)
{
    pc_rbuf rb;
    pc_rbuf_init(&rb, payload, req->len);
    rt_err_clear();
    switch (req->type) {
    case PC_X_CONFIG:
        s_config(h, &rb);
        break;
    case PC_X_MODULE:
        s_module(h, req, &rb);
        break;
    case PC_X_RUN:
        s_run(h, req, &rb);
        break;
    case PC_X_RESUME:
        s_resume(h, req, &rb);
        break;
    case PC_X_RESUME_SLOT:
        s_resume_slot(h, req, payload);
        break;
    case PC_X_STOP:
    case PC_X_CANCEL:
        if (!pc_rbuf_done(&rb)) { /* they carry no payload */
            fprintf(stderr, "levpeer executor: malformed %s: %s\n", pc_type_name(req->type),
                    pc_rbuf_why(&rb));
            break;
        }
        if (req->type == PC_X_STOP)
            s_stop(h, req);
        else
            s_cancel(h, req);
        break;
    case PC_X_IN:
    case PC_X_ACK:
        s_chan_in(h, req, &rb);
        break;
    case PC_X_READ_AT: { /* a read answered at the worker, ahead of its log */
        uint64_t rev = pc_get_u64(&rb);
        const void *data = NULL;
        size_t len = 0;
        pc_get_blob(&rb, &data, &len);
        xh_vtrec *r = s_live_find(h, req->vt);
        if (!pc_rbuf_done(&rb) || !rev || !req->seq)
            fprintf(stderr, "levpeer executor: malformed READ_AT for virtual thread %llu: %s\n",
                    (unsigned long long)req->vt,
                    pc_rbuf_done(&rb) ? "revision or read number 0" : pc_rbuf_why(&rb));
        else if (r && r->epoch == req->epoch && !r->draining) {
            /* with direct messages, what the VT sends after it waits until
             * the deployer has logged the answer (held first: the VT may
             * send as soon as it has it) */
            if (h->direct)
                pc_xh_direct_hold(h, r->id, req->seq);
            rt_ch_read_answer(r->vt, req->seq, rev, data, len); /* 1: not waiting for it */
        }
        break;
    }
    case PC_X_STABLE:
        if (pc_rbuf_done(&rb))
            pc_xh_cx_stable(h, req->vt, req->seq);
        break;
    case PC_X_FLUSH:
        pc_xh_cx_barrier(h, req->seq, payload, req->len);
        break;
    case PC_X_FIX:
        pc_xh_cx_fix(h, req->vt, req->epoch, payload, req->len);
        s_fixed(h, req->vt, req->epoch);
        break;
    case PC_X_PLACE:
        pc_xh_cx_place(h, req->seq, payload, req->len);
        pc_xh_direct_placed(h, req->seq, req->epoch);
        break;
    case PC_X_LINKS:
        pc_xh_direct_links(h, payload, req->len);
        break;
    case PC_X_TRIM:
        pc_xh_cx_trim(h, req->vt, payload, req->len);
        break;
    case PC_X_SLOT_FREE: {
        uint32_t slot = pc_get_u32(&rb);
        if (!pc_rbuf_done(&rb) || pc_slots_back(h->slots, slot))
            fprintf(stderr, "levpeer executor: SLOT_FREE of image slot %u, which is not lent%s%s\n",
                    (unsigned)slot, pc_rbuf_done(&rb) ? "" : ": ",
                    pc_rbuf_done(&rb) ? "" : pc_rbuf_why(&rb));
        break;
    }
    default:
        fprintf(stderr, "levpeer executor: unexpected %s record; ignored\n",
                pc_type_name(req->type));
    }
}

/* ===================================================================
 * Main loop
 * =================================================================== */

/* Serves the channel until it closes; 0, or 1 when it broke. */
static int s_serve(xh_host *h)
{
    zmq_pollitem_t p[3] = {{.fd = pc_chan_fd(h->chan), .events = ZMQ_POLLIN},
                           {.fd = h->wake_fd, .events = ZMQ_POLLIN},
                           {.events = ZMQ_POLLIN}};
    struct timespec last;
    clock_gettime(CLOCK_MONOTONIC, &last);
    for (;;) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long since = (now.tv_sec - last.tv_sec) * 1000 + (now.tv_nsec - last.tv_nsec) / 1000000;
        if (since >= S_STALE_MS) {
            pc_xh_cx_flush(h, true);
            s_stale_outboxes(h);
            pc_xh_direct_stats(h);
            for (xh_parked *k = h->parked; k; k = k->next)
                if (k->looks++ == 1)
                    fprintf(stderr,
                            "levpeer executor: virtual thread %llu incarnation %u waits for the "
                            "positions fixed for it (FIX)\n",
                            (unsigned long long)k->req.vt, (unsigned)k->req.epoch);
            last = now;
            since = 0;
        }
        /* direct messages: read while they come (the ROUTER signals
         * only what arrives after it was read empty) */
        pc_xh_direct_read(h);
        pc_xh_cx_flush(h, false);
        /* direct messages: once VTs run here, the runtime's idle worker
         * reads them itself (no hand-over); until then this loop does */
        p[2].fd = h->ex ? -1 : pc_xh_direct_fd(h);
        if (zmq_poll(p, p[2].fd >= 0 ? 3 : 2, (long)(S_STALE_MS - since)) < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "levpeer executor: poll: %s\n", zmq_strerror(errno));
            return 1;
        }
        if (p[1].revents) {
            uint64_t n;
            while (read(h->wake_fd, &n, sizeof n) < 0 && errno == EINTR)
                ;
            s_reap(h);
        }
        if (!p[0].revents)
            continue;
        for (;;) {
            pc_hdr req;
            uint8_t *payload = NULL;
            const char *why = NULL;
            int r = pc_chan_recv(h->chan, &req, &payload, 0, &why);
            if (r == 0) {
                pc_xh_cx_flush(h, false);
                break;
            }
            if (r < 0) {
                bool closed = why && !strcmp(why, "the other end closed the channel");
                if (!closed)
                    fprintf(stderr, "levpeer executor: %s\n", why ? why : "channel broken");
                return closed ? 0 : 1;
            }
            s_handle(h, &req, payload);
            free(payload);
        }
    }
}

/* Ends everything: VTs, executor, sender, channel. */
static void s_shutdown(xh_host *h)
{
    rt_exec_destroy(&h->ex); /* cancels what runs; their DONE cannot be sent */
    s_reap(h);
    s_unpark(h, NULL, NULL);
    for (xh_vtrec *r = h->live, *next; r; r = next) {
        next = r->live_next;
        if (r->draining)
            s_finish(h, r); /* its outputs can no longer be acknowledged */
    }
    if (h->chan)
        shutdown(pc_chan_fd(h->chan), SHUT_RDWR); /* a blocked send fails at once */
    if (h->sender_started) {
        pthread_mutex_lock(&h->mu);
        h->qstop = true;
        pthread_cond_signal(&h->out_cv);
        pthread_mutex_unlock(&h->mu);
        pthread_join(h->sender, NULL);
    }
    for (xh_out *o = h->qhead, *next; o; o = next) {
        next = o->next;
        pc_xh_out_free(o);
    }
    /* VTs whose executor gave up on them (native code that never reached
     * a safe point) stay allocated: their workers may still use them. */
    if (h->wake_fd >= 0)
        close(h->wake_fd);
    pc_chan_destroy(&h->chan);
    pc_slots_destroy(&h->slots); /* the daemon's mappings stay until it drops them */
    pc_rslot_unmap(&h->rs);
    free(h->mods);
    pthread_cond_destroy(&h->out_cv);
    pthread_mutex_destroy(&h->mu);
    pc_xh_direct_free(h);
    pc_xh_cx_free(h);
}

/* Images are large and made every checkpoint interval: the C library
 * keeps the memory of the last ones for the next instead of handing it
 * back to the system and faulting fresh pages in on the VT's thread (on
 * some machines first touching memory runs at a few hundred MB/s). */
static void s_keep_image_memory(void)
{
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

int pc_exechost_run(int fd, bool own_process)
{
    if (own_process) {
        s_keep_image_memory();
        s_lower_priority();
        if (!s_tie_to_parent()) {
            close(fd);
            return 1; /* the daemon is gone already */
        }
    }
    rt_init();
    xh_host h = {.wake_fd = -1, .xl_self = -1, .xl_fd = -1, .idle_efd = -1};
    h.chost = (rt_ch_host){.out = pc_xh_on_output, .ud = &h};
    pthread_mutex_init(&h.mu, NULL);
    pthread_cond_init(&h.out_cv, NULL);
    int cx = pc_xh_cx_init(&h);
    if (!cx)
        cx = pc_xh_direct_init(&h);
    h.chan = pc_chan_new(fd, 0);
    h.slots = pc_slots_wanted() ? pc_slots_new() : NULL; /* (else images go as bytes) */
    h.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    int rc = 1;
    if (!h.chan || h.wake_fd < 0 || cx) {
        fprintf(stderr, "levpeer executor: cannot set up its channel: %s\n", strerror(errno));
    } else if (pthread_create(&h.sender, NULL, pc_xh_sender_main, &h) != 0) {
        fprintf(stderr, "levpeer executor: cannot start its sender thread\n");
    } else {
        h.sender_started = true;
        if (own_process)
            pc_xh_fault_handlers(fd);
        xh_out *ready = pc_xh_out_new(PC_X_READY, 0, 0, 0);
        if (ready)
            pc_put_i32(&ready->head, (int32_t)getpid());
        pc_xh_queue(&h, ready);
        rc = s_serve(&h);
    }
    s_shutdown(&h);
    return rc;
}
