/* client.c - the client API (lev_client.h): opening and closing a virtual
 * computer, starting and joining its VTs, reports, messages to VTs,
 * global variables and the VC's counts; the argument checks,
 * the table of a VC's VTs and the requests that wait for their replies.
 * The transport and the VC's thread are in client_io.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "client_int.h"
#include "rt.h"
#include "taskmod.h"

/* ===================================================================
 * The VC's tables: VTs, waiting calls
 * =================================================================== */

static size_t s_bucket(lev_vt_id id) { return (size_t)(id % CL_VT_BUCKETS); }

cl_vt *cl_vt_find(const lev_vc *vc, lev_vt_id id)
{
    cl_vt *v = vc->vts[s_bucket(id)];
    while (v && v->id != id)
        v = v->next;
    return v;
}

int cl_vt_add(lev_vc *vc, lev_vt_id id)
{
    cl_vt *v = calloc(1, sizeof *v);
    if (!v)
        return LEV_ENOMEM;
    v->id = id;
    v->next = vc->vts[s_bucket(id)];
    vc->vts[s_bucket(id)] = v;
    return 0;
}

/* Removes VT record v from the table (under vc->mu). */
static void s_vt_unlink(lev_vc *vc, cl_vt *v)
{
    cl_vt **p = &vc->vts[s_bucket(v->id)];
    while (*p && *p != v)
        p = &(*p)->next;
    if (*p)
        *p = v->next;
}

void cl_vt_free(cl_vt *v)
{
    if (!v)
        return;
    free(v->detail);
    free(v->result);
    free(v);
}

cl_call *cl_call_find(lev_vc *vc, uint64_t seq)
{
    cl_call *c = vc->calls;
    while (c && c->seq != seq)
        c = c->next;
    return c;
}

void cl_call_unlink(lev_vc *vc, cl_call *c)
{
    cl_call **p = &vc->calls;
    while (*p && *p != c)
        p = &(*p)->next;
    if (*p)
        *p = c->next;
}

/* ===================================================================
 * Waiting
 * =================================================================== */

/* The absolute CLOCK_MONOTONIC time timeout_ms from now. */
static struct timespec s_deadline(int timeout_ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += timeout_ms / 1000;
    ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

/* Waits on the VC's condition (under vc->mu) until woken or the deadline
 * (NULL: none); false once the deadline has passed. */
static bool s_wait(lev_vc *vc, const struct timespec *deadline)
{
    if (!deadline) {
        pthread_cond_wait(&vc->cond, &vc->mu);
        return true;
    }
    return pthread_cond_timedwait(&vc->cond, &vc->mu, deadline) == 0;
}

/* Sends a request of `type` on the VC (hdr.vc: its id; hdr.vt: vt) with
 * its payload and bulk frame, and waits for the reply of type `want` or an
 * ERROR, at most wait_ms (< 0: until the reply or the peer's loss). Fills
 * *reply; a value it carries (reply->data) is the caller's on success and
 * freed here on failure. Returns 0, the peer's error (its detail in
 * lev_errdetail), or LEV_EPEER (the peer is lost, or did not answer in
 * time). */
static int s_request(lev_vc *vc, uint16_t type, uint16_t want, lev_vt_id vt, pc_wbuf *payload,
                     const void *bulk, size_t bulk_len, int wait_ms, cl_call *reply)
{
    memset(reply, 0, sizeof *reply);
    reply->want = want;
    pthread_mutex_lock(&vc->mu);
    if (vc->lost) {
        pthread_mutex_unlock(&vc->mu);
        return rt_err(LEV_EPEER, "%s", vc->lost_detail);
    }
    reply->seq = ++vc->seq;
    reply->next = vc->calls;
    vc->calls = reply;
    pc_hdr h = pc_hdr_make(type, vc->id, vt, 0, reply->seq);
    pthread_mutex_unlock(&vc->mu);

    int rc = cl_io_send(vc, h, payload, bulk, bulk_len);
    struct timespec deadline = s_deadline(wait_ms < 0 ? 0 : wait_ms);
    pthread_mutex_lock(&vc->mu);
    while (!rc && !reply->done && s_wait(vc, wait_ms < 0 ? NULL : &deadline))
        ;
    if (!rc && !reply->done)
        rc = rt_err(LEV_EPEER, "levpeer at %s did not answer %s within %d ms%s", vc->endpoint,
                    pc_type_name(type), wait_ms, cl_keys_hint());
    else if (!rc && reply->err)
        rc = rt_err(reply->err, "%s", reply->detail);
    cl_call_unlink(vc, reply);
    pthread_mutex_unlock(&vc->mu);
    if (rc) {
        free(reply->data);
        reply->data = NULL;
        reply->data_len = 0;
    }
    return rc;
}

/* Sends request `type` (hdr.vt: vt) with the payload [s name][b data[len]]
 * (name NULL: no string; with_data false: no blob) and waits for `want`,
 * as s_request does. */
static int s_ask(lev_vc *vc, uint16_t type, uint16_t want, lev_vt_id vt, const char *name,
                 const void *data, size_t len, bool with_data, int wait_ms, cl_call *reply)
{
    pc_wbuf w;
    pc_wbuf_init(&w);
    if (name)
        pc_put_str(&w, name);
    if (with_data)
        pc_put_blob(&w, data, len);
    int rc = s_request(vc, type, want, vt, &w, NULL, 0, wait_ms, reply);
    pc_wbuf_free(&w);
    return rc;
}

/* Refuses a call that would wait for the VC's own thread from it. */
static int s_not_on_thread(const lev_vc *vc, const char *fn)
{
    if (cl_io_on_thread(vc))
        return rt_err(LEV_EBUSY,
                      "%s: called from a report callback of its VC, which cannot wait "
                      "for it",
                      fn);
    return 0;
}

/* Refuses a name (of a task or a global variable) that is empty or longer
 * than CL_TASK_MAX bytes: 0 or LEV_EINVAL naming `what`. */
static int s_name_check(const char *fn, const char *what, const char *name)
{
    size_t n = strlen(name);
    if (!n || n > CL_TASK_MAX)
        return rt_err(LEV_EINVAL, "%s: %s of %zu bytes (1 to %u)", fn, what, n, CL_TASK_MAX);
    return 0;
}

/* ===================================================================
 * Opening and closing
 * =================================================================== */

/* Frees a VC whose thread is stopped, with whatever it still holds. */
static void s_vc_free(lev_vc *vc)
{
    for (size_t b = 0; b < CL_VT_BUCKETS; b++)
        while (vc->vts[b]) {
            cl_vt *v = vc->vts[b];
            vc->vts[b] = v->next;
            cl_vt_free(v);
        }
    pthread_cond_destroy(&vc->cond);
    pthread_mutex_destroy(&vc->mu);
    pthread_mutex_destroy(&vc->tx_mu);
    free(vc);
}

/* A new VC bound to no peer yet, or NULL. */
static lev_vc *s_vc_new(void)
{
    lev_vc *vc = calloc(1, sizeof *vc);
    pthread_condattr_t ca;
    if (!vc)
        return NULL;
    pthread_mutex_init(&vc->mu, NULL);
    pthread_mutex_init(&vc->tx_mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&vc->cond, &ca);
    pthread_condattr_destroy(&ca);
    const char *debug = getenv("LEV_DEBUG");
    vc->debug = debug && *debug && strcmp(debug, "0");
    return vc;
}

/* The payload of OPEN for the carried module m, in w. */
static void s_open_payload(pc_wbuf *w, const lev_vc_options *o, const rt_taskmod_carried *m)
{
    uint8_t hash[PC_HASH_LEN];
    crypto_generichash(hash, sizeof hash, m->bytes, m->len, NULL, 0);
    pc_put_i32(w, o->workers);
    pc_put_i32(w, o->checkpoint_ms ? o->checkpoint_ms : 2000);
    pc_put_i32(w, o->replicas); /* 0: the deployer's default */
    pc_put_u64(w, m->digest);
    pc_put_raw(w, hash, sizeof hash);
}

int lev_vc_open(lev_vc **out, const lev_vc_options *opt)
{
    if (!out)
        return rt_err(LEV_EINVAL, "lev_vc_open: vc is NULL");
    *out = NULL;
    lev_vc_options o = opt ? *opt : (lev_vc_options){0};
    if (o.workers < 0)
        return rt_err(LEV_EINVAL, "lev_vc_open: workers is %d, below zero", o.workers);
    if (o.replicas < 0)
        return rt_err(LEV_EINVAL, "lev_vc_open: replicas is %d, below zero", o.replicas);
    const rt_taskmod_carried *mod;
    int rc = rt_taskmod_carried_get(&mod);
    if (rc) {
        char why[CL_DETAIL_MAX];
        snprintf(why, sizeof why, "%s", lev_errdetail());
        return rt_err(LEV_EMODULE,
                      "lev_vc_open: this program carries no task module to ship (build it with "
                      "leverage_add_tasks): %s",
                      why);
    }
    int timeout_ms;
    char endpoint[PC_ENDPOINT_MAX];
    if ((rc = cl_env_timeout(&timeout_ms)) || (rc = cl_peer_endpoint(o.peer, endpoint)))
        return rc;

    lev_vc *vc = s_vc_new();
    if (!vc)
        return rt_err(LEV_ENOMEM, "lev_vc_open: no memory for a VC");
    memcpy(vc->endpoint, endpoint, sizeof endpoint);
    vc->timeout_ms = timeout_ms;
    if ((rc = cl_io_start(vc))) {
        s_vc_free(vc);
        return rc;
    }
    pc_wbuf w;
    cl_call reply;
    pc_wbuf_init(&w);
    s_open_payload(&w, &o, mod);
    rc = s_request(vc, PC_C_OPEN, PC_C_OPENED, 0, &w, mod->bytes, mod->len,
                   timeout_ms * CL_REQUEST_FACTOR, &reply);
    pc_wbuf_free(&w);
    if (rc) {
        char why[CL_DETAIL_MAX];
        snprintf(why, sizeof why, "%s", lev_errdetail());
        if (cl_io_stop(vc))
            s_vc_free(vc);
        return rt_err(rc, "%s", why);
    }
    *out = vc;
    return 0;
}

int lev_vc_close(lev_vc **vc_p)
{
    lev_vc *vc = vc_p ? *vc_p : NULL;
    if (!vc)
        return 0;
    int rc = s_not_on_thread(vc, "lev_vc_close");
    if (rc)
        return rc;
    /* Unconfirmed (the peer lost or silent), the deployer closes the VC
     * once this client has been silent for its client timeout. */
    cl_call reply;
    s_request(vc, PC_C_CLOSE, PC_C_CLOSED, 0, NULL, NULL, 0, vc->timeout_ms, &reply);
    if (cl_io_stop(vc))
        s_vc_free(vc);
    *vc_p = NULL;
    rt_err_clear();
    return 0;
}

/* ===================================================================
 * Virtual threads
 * =================================================================== */

int lev_vt_start(lev_vc *vc, const char *task, const void *arg, size_t len, lev_vt_id *id)
{
    if (id)
        *id = 0;
    if (!vc || !task || !id)
        return rt_err(LEV_EINVAL, "lev_vt_start: %s is NULL", !vc ? "vc" : !task ? "task" : "id");
    if (!arg && len)
        return rt_err(LEV_EINVAL, "lev_vt_start: arg is NULL with len %zu", len);
    int rc = s_name_check("lev_vt_start", "task name", task);
    if (rc)
        return rc;
    if (len > UINT32_MAX - 1024)
        return rt_err(LEV_ERANGE, "lev_vt_start: argument of %zu bytes is over 4 GiB", len);
    if ((rc = s_not_on_thread(vc, "lev_vt_start")))
        return rc;
    cl_call reply;
    rc = s_ask(vc, PC_C_START, PC_C_STARTED, 0, task, arg, len, true,
               vc->timeout_ms * CL_REQUEST_FACTOR, &reply);
    if (!rc)
        *id = reply.vt;
    return rc;
}

/* Hands the ended VT v (unlinked) to the joiner and frees its record;
 * returns the VT's own outcome. */
static int s_hand_over(cl_vt *v, void **result, size_t *len)
{
    int err = v->err;
    if (!err && result) {
        *result = v->result;
        v->result = NULL;
    }
    if (!err && len)
        *len = v->len;
    if (err)
        rt_err(err, "VT %" PRIu64 ": %s", v->id,
               v->detail && *v->detail ? v->detail : lev_strerror(err));
    cl_vt_free(v);
    return err;
}

int lev_vt_join(lev_vc *vc, lev_vt_id id, void **result, size_t *len, int timeout_ms)
{
    if (result)
        *result = NULL;
    if (len)
        *len = 0;
    if (!vc)
        return rt_err(LEV_EINVAL, "lev_vt_join: vc is NULL");
    struct timespec deadline = s_deadline(timeout_ms > 0 ? timeout_ms : 0);
    bool on_thread = cl_io_on_thread(vc), late = timeout_ms == 0;
    int rc;
    pthread_mutex_lock(&vc->mu);
    for (;;) {
        cl_vt *v = cl_vt_find(vc, id);
        if (v && v->done) {
            s_vt_unlink(vc, v);
            pthread_mutex_unlock(&vc->mu);
            return s_hand_over(v, result, len);
        }
        if (!v)
            rc = rt_err(
                LEV_ENOVT,
                "lev_vt_join: VT %" PRIu64 " was not started by this VC or is joined already", id);
        else if (vc->lost)
            rc = rt_err(LEV_EPEER, "%s", vc->lost_detail);
        else if (late)
            rc = rt_err(LEV_ETIMEDOUT, "lev_vt_join: VT %" PRIu64 " did not end within %d ms", id,
                        timeout_ms);
        else if (on_thread)
            rc = s_not_on_thread(vc, "lev_vt_join");
        else {
            late = !s_wait(vc, timeout_ms < 0 ? NULL : &deadline);
            continue;
        }
        break;
    }
    pthread_mutex_unlock(&vc->mu);
    return rc;
}

int lev_vc_on_report(lev_vc *vc, void (*cb)(lev_vt_id, const void *, size_t, void *), void *ctx)
{
    if (!vc)
        return rt_err(LEV_EINVAL, "lev_vc_on_report: vc is NULL");
    bool on_thread = cl_io_on_thread(vc);
    pthread_mutex_lock(&vc->mu);
    while (vc->cb_running && !on_thread)
        s_wait(vc, NULL);
    vc->cb = cb;
    vc->cb_ctx = ctx;
    pthread_mutex_unlock(&vc->mu);
    return 0;
}

/* ===================================================================
 * Messages and global variables
 * =================================================================== */

/* Refuses data of len bytes above what the client sends at all (the peer
 * enforces the VC's own, lower limits): 0 or LEV_ERANGE. */
static int s_data_check(const char *fn, const char *what, size_t len)
{
    if (len > CL_DATA_MAX)
        return rt_err(LEV_ERANGE, "%s: %s of %zu bytes is above %llu bytes", fn, what, len,
                      CL_DATA_MAX);
    return 0;
}

int lev_vt_send(lev_vc *vc, lev_vt_id id, const void *buf, size_t len)
{
    if (!vc)
        return rt_err(LEV_EINVAL, "lev_vt_send: vc is NULL");
    if (id == LEV_ANY || id == LEV_CLIENT)
        return rt_err(LEV_EINVAL, "lev_vt_send: id is %s, not a VT",
                      id == LEV_ANY ? "LEV_ANY" : "LEV_CLIENT");
    if (!buf && len)
        return rt_err(LEV_EINVAL, "lev_vt_send: buf is NULL with len %zu", len);
    int rc = s_data_check("lev_vt_send", "message", len);
    if (rc || (rc = s_not_on_thread(vc, "lev_vt_send")))
        return rc;
    cl_call reply;
    return s_ask(vc, PC_C_SEND, PC_C_SENT, id, NULL, buf, len, true,
                 vc->timeout_ms * CL_REQUEST_FACTOR, &reply);
}

int lev_global_set(lev_vc *vc, const char *name, const void *value, size_t len)
{
    if (!vc || !name)
        return rt_err(LEV_EINVAL, "lev_global_set: %s is NULL", !vc ? "vc" : "name");
    if (!value && len)
        return rt_err(LEV_EINVAL, "lev_global_set: value is NULL with len %zu", len);
    int rc = s_name_check("lev_global_set", "name", name);
    if (rc || (rc = s_data_check("lev_global_set", "value", len)) ||
        (rc = s_not_on_thread(vc, "lev_global_set")))
        return rc;
    cl_call reply;
    /* The update waits for the VT that holds the lock, however long: no
     * deadline but the peer's loss. */
    return s_ask(vc, PC_C_GSET, PC_C_GSET_OK, 0, name, value, len, true, -1, &reply);
}

int lev_global_get(lev_vc *vc, const char *name, void **value, size_t *len)
{
    if (value)
        *value = NULL;
    if (len)
        *len = 0;
    if (!vc || !name || !value || !len)
        return rt_err(LEV_EINVAL, "lev_global_get: %s is NULL",
                      !vc      ? "vc"
                      : !name  ? "name"
                      : !value ? "value"
                               : "len");
    int rc = s_name_check("lev_global_get", "name", name);
    if (rc || (rc = s_not_on_thread(vc, "lev_global_get")))
        return rc;
    cl_call reply;
    rc = s_ask(vc, PC_C_GGET, PC_C_GVALUE, 0, name, NULL, 0, false,
               vc->timeout_ms * CL_REQUEST_FACTOR, &reply);
    if (!rc) {
        *value = reply.data;
        *len = reply.data_len;
    }
    return rc;
}

/* ===================================================================
 * The VC's counts
 * =================================================================== */

int lev_vc_stats_get(lev_vc *vc, lev_vc_stats *st)
{
    if (st)
        memset(st, 0, sizeof *st);
    if (!vc || !st)
        return rt_err(LEV_EINVAL, "lev_vc_stats_get: %s is NULL", !vc ? "vc" : "st");
    int rc = s_not_on_thread(vc, "lev_vc_stats_get");
    if (rc)
        return rc;
    cl_call reply;
    rc = s_request(vc, PC_C_STATS, PC_C_STATS_REPLY, 0, NULL, NULL, 0, vc->timeout_ms, &reply);
    if (!rc)
        *st = reply.stats;
    return rc;
}
