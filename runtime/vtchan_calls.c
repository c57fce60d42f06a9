/* vtchan_calls.c - the calls a task makes over its VT's channels
 * (lev_task.h: lev_send, lev_recv, lev_global_lock/unlock/read/put; lev_abi.h:
 * their lev_*_try forms for checkpointable code) and reports as outputs.
 * A _try that cannot complete returns LEV_BLOCKED having noted what the
 * VT waits for; the plain forms wait on the calling OS thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "clock.h"
#include "executor.h"
#include "lev_client.h"
#include "lev_task.h"
#include "rt.h"
#include "vec.h"
#include "vtchan_private.h"

#define S_CONSUMED_EVERY 32u
#define S_WAIT_SLICE_NS 100000000u /* a plain call re-checks at least this often */

/* What one call emits: at most a request (or timeout) and a consumption. */
typedef struct s_emit {
    rt_out o[2];
    int n;
} s_emit;

/* The context of one call: its VT, channel state and host. */
typedef struct s_call {
    rt_vt *vt;
    rt_chan *ch;
    const rt_ch_host *h;
    s_emit em;
    uint64_t gen;                   /* ch->gen when the call looked at the stream */
    bool consumed;                  /* report the consumption before leaving */
    uint64_t taken_from, taken_ref; /* a VT's message taken: for h->taken */
} s_call;

/* Finds the calling VT, its channel state and its host; LEV_ENOVT
 * outside a VT, LEV_EUNSUPPORTED when its executor has no channel host. */
static int s_enter(lev_ctx *ctx, const char *what, s_call *c)
{
    memset(c, 0, sizeof *c);
    c->vt = ctx ? rt_vt_of(ctx) : rt_vt_current();
    if (!c->vt)
        return rt_err(LEV_ENOVT, "%s: not called from a virtual thread", what);
    c->h = rt_ch_host_of(c->vt);
    if (!c->h)
        return rt_err(LEV_EUNSUPPORTED, "%s: virtual thread %llu has no channel host", what,
                      (unsigned long long)c->vt->id);
    c->ch = rt_ch_get(c->vt);
    if (!c->ch)
        return rt_err(LEV_ENOMEM, "%s: no memory for the channel state", what);
    return 0;
}

/* Under ch->mu: emits an output of the call; LEV_ENOMEM. */
static int s_emit_locked(s_call *c, const rt_out *o)
{
    rt_out *slot = &c->em.o[c->em.n];
    *slot = *o;
    int rc = rt_ch_emit_locked(c->ch, slot);
    if (!rc)
        c->em.n++;
    return rc;
}

/* Under ch->mu: removes input i (consumed); the call reports the
 * consumption (RT_OUT_CONSUMED) when the stream is empty or every
 * S_CONSUMED_EVERY consumptions. */
static void s_consume_locked(s_call *c, size_t i)
{
    rt_chan *ch = c->ch;
    if (ch->in[i].kind == RT_IN_MSG && ch->in[i].from != LEV_CLIENT) {
        c->taken_from = ch->in[i].from;
        c->taken_ref = ch->in[i].ref;
    }
    free(ch->in[i].data);
    memmove(ch->in + i, ch->in + i + 1, (ch->nin - i - 1) * sizeof *ch->in);
    ch->nin--;
    if (++ch->since_consumed >= S_CONSUMED_EVERY || !ch->nin)
        c->consumed = true;
}

/* Releases ch->mu and hands the call's outputs to the host, in order;
 * a VT whose capture was put off and may now be captured gets it at its
 * next safe point. Returns rc. */
static int s_leave(s_call *c, int rc)
{
    rt_chan *ch = c->ch;
    if (c->consumed) {
        ch->since_consumed = 0;
        rt_out o = {.kind = RT_OUT_CONSUMED, .ref = ch->nin ? ch->in[0].d - 1 : ch->next_d - 1};
        s_emit_locked(c, &o);
        c->consumed = false;
    }
    c->gen = ch->gen;
    bool check = c->vt->deferred && c->ch->nlocks == 0;
    pthread_mutex_unlock(&c->ch->mu);
    for (int i = 0; i < c->em.n; i++)
        c->h->out(c->vt, &c->em.o[i], c->h->ud);
    c->em.n = 0;
    if (c->taken_from && c->h->taken)
        c->h->taken(c->vt, c->taken_from, c->taken_ref, c->h->ud);
    c->taken_from = 0;
    if (check && rc != LEV_BLOCKED && rt_ch_capture_ok(c->vt))
        rt_exec_capture_ready(c->vt);
    return rc;
}

/* Under ch->mu: the call cannot complete now. */
static int s_blocked_locked(s_call *c, int kind, bool park)
{
    c->ch->bk = (uint8_t)kind;
    c->ch->waiting = park;
    return LEV_BLOCKED;
}

/* Under ch->mu: a heap copy of an entry's bytes (NULL for none); false on
 * exhaustion (the detail is set). */
static bool s_heap_copy(s_call *c, const rt_ch_in *e, void **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    if (!e->len)
        return true;
    void *p = lev_alloc(c->vt->mod, LEV_T_BYTES, e->len);
    if (!p) {
        rt_err(LEV_ENOMEM, "no memory on the heap for %zu bytes", e->len);
        return false;
    }
    memcpy(p, e->data, e->len);
    *buf = p;
    *len = e->len;
    return true;
}

static bool s_missing_locked(const rt_chan *ch, uint64_t id)
{
    for (size_t i = 0; i < ch->nmissing; i++)
        if (ch->missing[i] == id)
            return true;
    return false;
}

static ssize_t s_lock_index_locked(const rt_chan *ch, const char *name)
{
    for (size_t i = 0; i < ch->nlocks; i++)
        if (strcmp(ch->locks[i], name) == 0)
            return (ssize_t)i;
    return -1;
}

static int s_check_name(const char *what, const char *name)
{
    if (!name)
        return rt_err(LEV_EINVAL, "%s: NULL name", what);
    size_t n = strnlen(name, LEV_NAME_MAX + 1);
    if (n == 0 || n > LEV_NAME_MAX)
        return rt_err(LEV_EINVAL, "%s: a name is 1 to %d bytes", what, LEV_NAME_MAX);
    return 0;
}

/* ===================================================================
 * Send
 * =================================================================== */

static int s_send(s_call *c, uint64_t to, const void *buf, size_t len, bool park)
{
    size_t max = c->h->max_msg ? c->h->max_msg : RT_CH_MAX_MSG;
    uint32_t window = c->h->window ? c->h->window : 256u;
    if (to == LEV_ANY || to == LEV_CLIENT || to == c->vt->id)
        return rt_err(LEV_EINVAL, "lev_send: cannot send to %llu (%s)", (unsigned long long)to,
                      to == c->vt->id ? "itself"
                      : to == LEV_ANY ? "LEV_ANY"
                                      : "LEV_CLIENT");
    if (len && !buf)
        return rt_err(LEV_EINVAL, "lev_send: NULL buffer of %zu bytes", len);
    if (len > max)
        return rt_err(LEV_ERANGE, "lev_send: %zu bytes above the message limit of %zu", len, max);
    pthread_mutex_lock(&c->ch->mu);
    int rc;
    if (s_missing_locked(c->ch, to)) {
        rc = rt_err(LEV_ENOVT, "lev_send: virtual thread %llu is not in the VC or has ended",
                    (unsigned long long)to);
    } else if (c->h->send) {
        for (;;) {
            c->ch->bk = RT_BK_NONE;
            uint64_t gen = c->ch->gen;
            s_leave(c, 0);
            rc = c->h->send(c->vt, to, buf, len, c->h->ud);
            if (rc != LEV_BLOCKED)
                return rc;
            /* held back by the host's flow control: wait, unless the
             * state moved since it looked (rt_ch_wake_send moves gen) */
            pthread_mutex_lock(&c->ch->mu);
            if (c->ch->gen == gen)
                return s_leave(c, s_blocked_locked(c, RT_BK_SEND, park));
        }
    } else if (c->ch->nmsg >= window) {
        return s_leave(c, s_blocked_locked(c, RT_BK_SEND, park));
    } else {
        rt_out o = {.kind = RT_OUT_MSG, .to = to, .data = buf, .len = len};
        rc = s_emit_locked(c, &o);
    }
    c->ch->bk = RT_BK_NONE;
    return s_leave(c, rc);
}

/* ===================================================================
 * Receive
 * =================================================================== */

/* Under ch->mu: the index of the entry the receive numbered recv_no
 * takes, or -1. */
static ssize_t s_recv_match_locked(const rt_chan *ch, uint64_t from, uint64_t recv_no)
{
    for (size_t i = 0; i < ch->nin; i++) {
        const rt_ch_in *e = &ch->in[i];
        if ((e->kind == RT_IN_MSG || e->kind == RT_IN_BOUNCE) &&
            (from == LEV_ANY || e->from == from))
            return (ssize_t)i;
        if (e->kind == RT_IN_TIMEOUT && e->ref == recv_no)
            return (ssize_t)i;
    }
    return -1;
}

/* Under ch->mu: consumes the stale timeouts before position `upto`
 * (entries of earlier receives); returns how many entries went. */
static size_t s_drop_stale_locked(s_call *c, size_t upto, uint64_t recv_no)
{
    size_t gone = 0;
    for (size_t i = 0; i < upto - gone;) {
        const rt_ch_in *e = &c->ch->in[i];
        if (e->kind == RT_IN_TIMEOUT && e->ref < recv_no) {
            s_consume_locked(c, i);
            gone++;
        } else {
            i++;
        }
    }
    return gone;
}

static int s_recv(s_call *c, uint64_t *from, void **buf, size_t *len, int timeout_ms, bool park)
{
    if (!from || !buf || !len)
        return rt_err(LEV_EINVAL, "lev_recv: NULL pointer");
    rt_chan *ch = c->ch;
    pthread_mutex_lock(&ch->mu);
    uint64_t now = rt_now_ns();
    if (ch->bk != RT_BK_RECV) { /* a new receive */
        ch->bk = RT_BK_RECV;
        ch->bk_recv = ++ch->recv_n;
        ch->bk_timeout = 0;
        ch->bk_dl_ns = timeout_ms > 0 ? now + (uint64_t)timeout_ms * 1000000u : 0;
    }
    uint64_t recv_no = ch->bk_recv;
    ssize_t m = s_recv_match_locked(ch, *from, recv_no);
    /* the end of the sender, where the stream had it: before the entry
     * the receive would take, it is what the receive takes */
    const rt_ch_end *end = *from != LEV_ANY ? rt_ch_ended_locked(ch, *from) : NULL;
    if (end && m >= 0 && ch->in[m].d < end->d)
        end = NULL;
    if (m < 0 && !end) {
        bool due = timeout_ms == 0 || (ch->bk_dl_ns && now >= ch->bk_dl_ns);
        if (due && !ch->bk_timeout) {
            rt_out o = {.kind = RT_OUT_TIMEOUT, .ref = recv_no};
            if (s_emit_locked(c, &o)) {
                ch->bk = RT_BK_NONE;
                return s_leave(c, LEV_ENOMEM);
            }
            ch->bk_timeout = 1;
        }
        return s_leave(c, s_blocked_locked(c, RT_BK_RECV, park));
    }
    if (timeout_ms >= 0 && !ch->bk_timeout) {
        /* A receive with a time limit asks for its timeout exactly once,
         * even when it completes first (the answer is a stale entry, passed
         * over later): whether it asked depends on timing, its output
         * number must not. */
        rt_out o = {.kind = RT_OUT_TIMEOUT, .ref = recv_no};
        if (s_emit_locked(c, &o)) {
            ch->bk = RT_BK_NONE;
            return s_leave(c, LEV_ENOMEM);
        }
        ch->bk_timeout = 1;
    }
    if (end) { /* nothing is consumed: every later receive from it ends here too */
        *buf = NULL;
        *len = 0;
        ch->bk = RT_BK_NONE;
        ch->bk_dl_ns = 0;
        return s_leave(c, rt_err(end->err, "lev_recv: virtual thread %llu %s",
                                 (unsigned long long)end->vt,
                                 end->err == LEV_EFAILED ? "failed" : "has ended"));
    }
    const rt_ch_in *e = &ch->in[m];
    int rc = 0;
    if (e->kind == RT_IN_MSG) {
        if (!s_heap_copy(c, e, buf, len)) {
            ch->bk = RT_BK_NONE;
            return s_leave(c, LEV_ENOMEM);
        }
        *from = e->from;
    } else {
        *buf = NULL;
        *len = 0;
        if (e->kind == RT_IN_BOUNCE) {
            *from = e->from;
            if (!s_missing_locked(ch, e->from)) {
                if (RT_VEC_RESERVE(ch->missing, ch->cmissing, ch->nmissing, 1)) {
                    ch->bk = RT_BK_NONE;
                    return s_leave(c, rt_err(LEV_ENOMEM, "lev_recv: no memory"));
                }
                ch->missing[ch->nmissing++] = e->from;
            }
            rc = rt_err(LEV_ENOVT, "lev_recv: a message to %llu was not delivered",
                        (unsigned long long)e->from);
        } else {
            rc = rt_err(LEV_ETIMEDOUT, "lev_recv: receive %llu timed out",
                        (unsigned long long)recv_no);
        }
    }
    ch->bk = RT_BK_NONE;
    ch->bk_dl_ns = 0;
    size_t at = (size_t)m - s_drop_stale_locked(c, (size_t)m, recv_no);
    s_consume_locked(c, at);
    return s_leave(c, rc);
}

/* ===================================================================
 * Global variables
 * =================================================================== */

/* A lock (RT_OUT_LOCK, RT_IN_GRANT) or a read (RT_OUT_READ, RT_IN_READ):
 * the request goes out once, when the call starts; the call completes
 * when its answer is in the stream. */
static int s_request(s_call *c, bool lock, const char *name, void **value, size_t *len, bool park)
{
    const char *what = lock ? "lev_global_lock" : "lev_global_read";
    int rc = s_check_name(what, name);
    if (rc)
        return rc;
    if (!value || !len)
        return rt_err(LEV_EINVAL, "%s: NULL pointer", what);
    rt_chan *ch = c->ch;
    int bk = lock ? RT_BK_LOCK : RT_BK_READ;
    pthread_mutex_lock(&ch->mu);
    if (ch->bk != bk) {
        if (lock && s_lock_index_locked(ch, name) >= 0) {
            ch->bk = RT_BK_NONE;
            return s_leave(c, rt_err(LEV_EBUSY, "%s: this VT holds \"%s\" already", what, name));
        }
        rt_out o = {.kind = lock ? RT_OUT_LOCK : RT_OUT_READ, .name = name};
        if (s_emit_locked(c, &o)) {
            ch->bk = RT_BK_NONE;
            return s_leave(c, LEV_ENOMEM);
        }
        ch->bk = (uint8_t)bk;
        ch->bk_ref = ch->out_seq;
    }
    uint8_t answer = lock ? RT_IN_GRANT : RT_IN_READ;
    for (size_t i = 0; i < ch->nin; i++) {
        const rt_ch_in *e = &ch->in[i];
        if (e->ref != ch->bk_ref || (e->kind != answer && e->kind != RT_IN_ERROR))
            continue;
        if (e->kind == RT_IN_ERROR) {
            *value = NULL;
            *len = 0;
            rc = rt_err(e->err, "%s: \"%s\": the request failed", what, name);
        } else if (!s_heap_copy(c, e, value, len)) {
            ch->bk = RT_BK_NONE;
            return s_leave(c, LEV_ENOMEM);
        } else if (lock) {
            char *copy = strdup(name);
            if (!copy || RT_VEC_RESERVE(ch->locks, ch->clocks, ch->nlocks, 1)) {
                free(copy);
                ch->bk = RT_BK_NONE;
                return s_leave(c, rt_err(LEV_ENOMEM, "%s: no memory", what));
            }
            ch->locks[ch->nlocks++] = copy;
        }
        ch->bk = RT_BK_NONE;
        s_consume_locked(c, i);
        return s_leave(c, rc);
    }
    const rt_ch_out *o = NULL; /* a read answered by the host (rt_ch_read_answer) */
    for (size_t i = 0; !lock && i < ch->nout && !o; i++)
        if (ch->out[i].seq == ch->bk_ref && ch->out[i].kind == RT_OUT_READ && ch->out[i].ref)
            o = &ch->out[i];
    if (o) {
        const rt_ch_in e = {.data = o->data, .len = o->len};
        if (RT_VEC_RESERVE(ch->ahead, ch->cahead, ch->nahead, 1) ||
            !s_heap_copy(c, &e, value, len)) {
            ch->bk = RT_BK_NONE;
            return s_leave(c, rt_err(LEV_ENOMEM, "%s: no memory", what));
        }
        ch->ahead[ch->nahead++] = ch->bk_ref; /* its logged answer is passed over */
        ch->bk = RT_BK_NONE;
        return s_leave(c, 0);
    }
    return s_leave(c, s_blocked_locked(c, bk, park));
}

/* A commit (an unlock or a put) from the calling VT: enters as s_enter
 * and checks the name. s_check_value: len within the value limit. */
static int s_enter_named(const char *what, const char *name, s_call *c)
{
    int rc = s_enter(NULL, what, c);
    return rc ? rc : s_check_name(what, name);
}

static int s_check_value(const s_call *c, const char *what, size_t len)
{
    size_t max = c->h->max_value ? c->h->max_value : RT_CH_MAX_VALUE;
    if (len > max)
        return rt_err(LEV_ERANGE, "%s: %zu bytes above the value limit of %zu", what, len, max);
    return 0;
}

int lev_global_unlock(const char *name, const void *value, size_t len)
{
    s_call c;
    int rc = s_enter_named("lev_global_unlock", name, &c);
    if (!rc && value)
        rc = s_check_value(&c, "lev_global_unlock", len);
    if (rc)
        return rc;
    pthread_mutex_lock(&c.ch->mu);
    ssize_t k = s_lock_index_locked(c.ch, name);
    if (k < 0)
        return s_leave(&c, rt_err(LEV_EINVAL, "lev_global_unlock: \"%s\" is not held", name));
    rt_out o = {.kind = RT_OUT_UNLOCK,
                .name = name,
                .keep = value == NULL,
                .data = value,
                .len = value ? len : 0};
    if (s_emit_locked(&c, &o))
        return s_leave(&c, LEV_ENOMEM);
    free(c.ch->locks[k]);
    c.ch->locks[k] = c.ch->locks[--c.ch->nlocks];
    return s_leave(&c, 0);
}

int lev_global_put(const char *name, const void *value, size_t len, uint64_t version)
{
    s_call c;
    int rc = s_enter_named("lev_global_put", name, &c);
    if (rc)
        return rc;
    if (!version)
        return rt_err(LEV_EINVAL, "lev_global_put: \"%s\": version 0 (versions start at 1)", name);
    if (!value && len)
        return rt_err(LEV_EINVAL, "lev_global_put: \"%s\": NULL value of %zu bytes", name, len);
    if ((rc = s_check_value(&c, "lev_global_put", len)) != 0)
        return rc;
    pthread_mutex_lock(&c.ch->mu);
    if (c.ch->nlocks)
        return s_leave(&c, rt_err(LEV_EBUSY, "lev_global_put: \"%s\": this VT holds \"%s\"", name,
                                  c.ch->locks[0]));
    rt_out o = {.kind = RT_OUT_PUT, .name = name, .ref = version, .data = value, .len = len};
    if (s_emit_locked(&c, &o))
        return s_leave(&c, LEV_ENOMEM);
    return s_leave(&c, 0);
}

/* ===================================================================
 * Entry points
 * =================================================================== */

/* A plain call's wait after LEV_BLOCKED: until the state changes, or the
 * receive's deadline passes (the caller then asks for its timeout). */
static void s_wait(s_call *c)
{
    rt_chan *ch = c->ch;
    pthread_mutex_lock(&ch->mu);
    while (ch->gen == c->gen) {
        uint64_t now = rt_now_ns(), until = now + S_WAIT_SLICE_NS;
        uint64_t dl = ch->bk == RT_BK_RECV && !ch->bk_timeout ? ch->bk_dl_ns : 0;
        if (dl && now >= dl)
            break;
        if (dl && dl < until)
            until = dl;
        struct timespec ts = {.tv_sec = (time_t)(until / 1000000000u),
                              .tv_nsec = (long)(until % 1000000000u)};
        if (pthread_cond_timedwait(&ch->cv, &ch->mu, &ts) == ETIMEDOUT && !dl)
            break; /* look again: a slice has passed */
    }
    pthread_mutex_unlock(&ch->mu);
}

int lev_send_try(lev_ctx *vt, uint64_t to, const void *buf, size_t len)
{
    s_call c;
    int rc = s_enter(vt, "lev_send", &c);
    return rc ? rc : s_send(&c, to, buf, len, true);
}

int lev_recv_try(lev_ctx *vt, uint64_t *from, void **buf, size_t *len, int timeout_ms)
{
    s_call c;
    int rc = s_enter(vt, "lev_recv", &c);
    return rc ? rc : s_recv(&c, from, buf, len, timeout_ms, true);
}

int lev_global_lock_try(lev_ctx *vt, const char *name, void **value, size_t *len)
{
    s_call c;
    int rc = s_enter(vt, "lev_global_lock", &c);
    return rc ? rc : s_request(&c, true, name, value, len, true);
}

int lev_global_read_try(lev_ctx *vt, const char *name, void **value, size_t *len)
{
    s_call c;
    int rc = s_enter(vt, "lev_global_read", &c);
    return rc ? rc : s_request(&c, false, name, value, len, true);
}

int lev_send(uint64_t to, const void *buf, size_t len)
{
    s_call c;
    int rc = s_enter(NULL, "lev_send", &c);
    while (!rc && (rc = s_send(&c, to, buf, len, false)) == LEV_BLOCKED)
        s_wait(&c), rc = 0;
    return rc;
}

int lev_recv(uint64_t *from, void **buf, size_t *len, int timeout_ms)
{
    s_call c;
    int rc = s_enter(NULL, "lev_recv", &c);
    while (!rc && (rc = s_recv(&c, from, buf, len, timeout_ms, false)) == LEV_BLOCKED)
        s_wait(&c), rc = 0;
    return rc;
}

int lev_global_lock(const char *name, void **value, size_t *len)
{
    s_call c;
    int rc = s_enter(NULL, "lev_global_lock", &c);
    while (!rc && (rc = s_request(&c, true, name, value, len, false)) == LEV_BLOCKED)
        s_wait(&c), rc = 0;
    return rc;
}

int lev_global_read(const char *name, void **value, size_t *len)
{
    s_call c;
    int rc = s_enter(NULL, "lev_global_read", &c);
    while (!rc && (rc = s_request(&c, false, name, value, len, false)) == LEV_BLOCKED)
        s_wait(&c), rc = 0;
    return rc;
}

int rt_ch_report(rt_vt *vt, const rt_ch_host *h, const void *buf, size_t len)
{
    s_call c = {.vt = vt, .h = h, .ch = rt_ch_get(vt)};
    if (!c.ch)
        return rt_err(LEV_ENOMEM, "lev_report: no memory for the channel state");
    pthread_mutex_lock(&c.ch->mu);
    rt_out o = {.kind = RT_OUT_REPORT, .data = buf, .len = len};
    return s_leave(&c, s_emit_locked(&c, &o));
}
