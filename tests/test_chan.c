/* test_chan.c - the channels of virtual threads (runtime/vtchan.h): ordered
 * delivery and filters by sender, LEV_ANY in stream order, receive
 * timeouts (a limit, and 0), duplicate and gap deliveries, window flow
 * control, a counter under a global lock from several VTs, captures put
 * off while a lock is held, the portable state (round trip, truncation,
 * damaged fields), replay after a restore (same inputs, same output
 * numbers), a VT captured while parked in a receive, numbered reports.
 *
 * Task code is one hand-written body (a small interpreter of a script in
 * its argument) as levpp generates it, with the _try calls and
 * LEV_SP_BLOCK. An in-test hub plays the deployer: it numbers outputs,
 * keeps each VT's stream, grants locks in FIFO order, applies each unlock
 * once, answers timeouts and acknowledges. Every wait has a time limit.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <setjmp.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "clock.h"
#include "executor.h"
#include "image.h"
#include "lev_client.h"
#include "lev_task.h"
#include "rt.h"
#include "vt.h"
#include "vtchan.h"

#define LIMIT_MS 20000 /* generous bound for anything that must happen */
#define ID0 10u        /* VT ids of the tests: ID0 + slot */
#define NSLOTS 8
#define LOGMAX 8192

/* ===================================================================
 * What tasks record
 * =================================================================== */

typedef struct log_ent {
    int rc;
    uint64_t from;
    int64_t v;
} log_ent;

static log_ent g_log[NSLOTS][LOGMAX];
static atomic_int g_nlog[NSLOTS];
static atomic_int g_flag[NSLOTS];
static atomic_llong g_progress[NSLOTS];
static lev_module *g_mod;

static void s_log(uint64_t id, int rc, uint64_t from, int64_t v)
{
    size_t slot = (size_t)(id - ID0);
    if (slot >= NSLOTS)
        return;
    int i = atomic_load(&g_nlog[slot]);
    if (i < LOGMAX) {
        g_log[slot][i] = (log_ent){rc, from, v};
        atomic_store(&g_nlog[slot], i + 1);
    }
}

/* ===================================================================
 * The task: a script of operations
 * =================================================================== */

enum {
    OP_SEND = 1,   /* a: to, b: first value, c: count */
    OP_RECV = 2,   /* a: from, b: timeout ms, c: count */
    OP_INC = 3,    /* c times: lock "g<a>", add 1, unlock */
    OP_LOCK = 4,   /* lock "g<a>" */
    OP_UNLOCK = 5, /* unlock "g<a>" setting b */
    OP_REPORT = 6, /* lev_report(b) */
    OP_GATE = 7,   /* yield until g_flag[a] */
    OP_READ = 8,   /* read "g<a>" */
    OP_PRECV = 9,  /* as OP_RECV with the plain lev_recv (untransformed code) */
    OP_PINC = 10,  /* as OP_INC with the plain lev_global_lock */
    OP_PUT = 11    /* put "g<a>" := b with version c (logs the code) */
};

typedef struct op {
    int32_t op, a, b, c;
} op;

struct script__frame {
    lev_task_frame t;
    int64_t i, k;
    uint64_t from;
    void *buf;
    int64_t len;
};

#define OP (((const op *)fr->t.arg)[fr->i])

static void s_name(char *name, int32_t a) { snprintf(name, 16, "g%d", (int)a); }

static int64_t s_val(const void *buf, size_t len)
{
    int64_t v = -1;
    if (len == sizeof(int32_t)) {
        int32_t x;
        memcpy(&x, buf, sizeof x);
        v = x;
    } else if (len == sizeof v) {
        memcpy(&v, buf, sizeof v);
    }
    return v;
}

/* The calls of the script, with arguments rebuilt from the frame (what
 * levpp keeps in the frame), so a resume point can re-issue them. */
static int s_send_try(lev_ctx *vt, int32_t to, int32_t v)
{
    return lev_send_try(vt, (uint64_t)to, &v, sizeof v);
}

static int s_recv_try(lev_ctx *vt, struct script__frame *fr, int32_t timeout_ms)
{
    size_t n = 0;
    int rc = lev_recv_try(vt, &fr->from, &fr->buf, &n, timeout_ms);
    fr->len = (int64_t)n;
    return rc;
}

static int s_global_try(lev_ctx *vt, bool lock, int32_t a, void **buf, int64_t *len)
{
    char name[16];
    s_name(name, a);
    size_t n = 0;
    int rc = lock ? lev_global_lock_try(vt, name, buf, &n) : lev_global_read_try(vt, name, buf, &n);
    *len = (int64_t)n;
    return rc;
}

/* A blocking call with resume point n: re-issued until not LEV_BLOCKED. */
#define BLOCKING(vt, fr, n, rc, call)                                                              \
    do {                                                                                           \
        resume_##n : (rc) = (call);                                                                \
        if ((rc) == LEV_BLOCKED) {                                                                 \
            (fr)->t.h.pc = (n);                                                                    \
            if (lev_safepoint(vt, LEV_SP_BLOCK))                                                   \
                return LEV_RUN_UNWIND;                                                             \
            goto resume_##n;                                                                       \
        }                                                                                          \
    } while (0)

static int script__run(lev_ctx *vt, void *frame)
{
    struct script__frame *fr = frame;
    uint64_t self = lev_self();
    char name[16];
    int rc;
    switch (fr->t.h.pc) {
    case 0:
        break;
    case 1:
        goto resume_1;
    case 2:
        goto resume_2;
    case 3:
        goto resume_3;
    case 4:
        goto resume_4;
    case 5:
        goto resume_5;
    case 6:
        goto resume_6;
    case 7:
        goto resume_7;
    default:
        lev_vt_fail(vt, LEV_EFAILED, "script: bad pc");
        return LEV_RUN_EXIT;
    }
    for (; fr->i < (int64_t)(fr->t.len / sizeof(op)); fr->i++, fr->k = 0) {
        switch (OP.op) {
        case OP_SEND:
            for (; fr->k < OP.c; fr->k++) {
                BLOCKING(vt, fr, 1, rc, s_send_try(vt, OP.a, OP.b + (int32_t)fr->k));
                if (rc)
                    s_log(self, rc, (uint64_t)OP.a, -1);
            }
            break;
        case OP_RECV:
            for (; fr->k < OP.c; fr->k++) {
                fr->from = (uint64_t)OP.a;
                fr->buf = NULL;
                BLOCKING(vt, fr, 2, rc, s_recv_try(vt, fr, OP.b));
                s_log(self, rc, fr->from, rc ? -1 : s_val(fr->buf, (size_t)fr->len));
                lev_free(fr->buf);
                fr->buf = NULL;
            }
            break;
        case OP_INC:
            for (; fr->k < OP.c; fr->k++) {
                BLOCKING(vt, fr, 3, rc, s_global_try(vt, true, OP.a, &fr->buf, &fr->len));
                if (rc)
                    return lev_vt_fail(vt, rc, "inc: lock"), LEV_RUN_EXIT;
                int64_t n = fr->len ? s_val(fr->buf, (size_t)fr->len) + 1 : 1;
                lev_free(fr->buf);
                fr->buf = NULL;
                s_name(name, OP.a);
                if (lev_global_unlock(name, &n, sizeof n))
                    return lev_vt_fail(vt, LEV_EFAILED, "inc: unlock"), LEV_RUN_EXIT;
                fr->t.h.pc = 4;
                if (lev_safepoint(vt, LEV_SP_YIELD))
                    return LEV_RUN_UNWIND;
            resume_4:;
            }
            break;
        case OP_LOCK:
        case OP_READ:
            if (OP.op == OP_LOCK)
                BLOCKING(vt, fr, 5, rc, s_global_try(vt, true, OP.a, &fr->buf, &fr->len));
            else
                BLOCKING(vt, fr, 7, rc, s_global_try(vt, false, OP.a, &fr->buf, &fr->len));
            s_log(self, rc, 0, rc || !fr->len ? -1 : s_val(fr->buf, (size_t)fr->len));
            lev_free(fr->buf);
            fr->buf = NULL;
            break;
        case OP_UNLOCK: {
            int64_t n = OP.b;
            s_name(name, OP.a);
            s_log(self, lev_global_unlock(name, &n, sizeof n), 0, n);
            break;
        }
        case OP_PUT: {
            int64_t n = OP.b;
            s_name(name, OP.a);
            s_log(self, lev_global_put(name, &n, sizeof n, (uint64_t)OP.c), 0, n);
            break;
        }
        case OP_PRECV:
            for (; fr->k < OP.c; fr->k++) {
                uint64_t from = (uint64_t)OP.a;
                void *buf = NULL;
                size_t len = 0;
                rc = lev_recv(&from, &buf, &len, OP.b);
                s_log(self, rc, from, rc ? -1 : s_val(buf, len));
                lev_free(buf);
            }
            break;
        case OP_PINC:
            for (; fr->k < OP.c; fr->k++) {
                void *buf = NULL;
                size_t len = 0;
                s_name(name, OP.a);
                if ((rc = lev_global_lock(name, &buf, &len)) != 0)
                    return lev_vt_fail(vt, rc, "pinc: lock"), LEV_RUN_EXIT;
                int64_t n = len ? s_val(buf, len) + 1 : 1;
                lev_free(buf);
                if (lev_global_unlock(name, &n, sizeof n))
                    return lev_vt_fail(vt, LEV_EFAILED, "pinc: unlock"), LEV_RUN_EXIT;
            }
            break;
        case OP_REPORT: {
            int64_t n = OP.b;
            lev_report(&n, sizeof n);
            break;
        }
        case OP_GATE:
            while (!atomic_load(&g_flag[OP.a])) {
                atomic_fetch_add(&g_progress[OP.a], 1);
                fr->t.h.pc = 6;
                if (lev_safepoint(vt, LEV_SP_YIELD))
                    return LEV_RUN_UNWIND;
            resume_6:;
            }
            break;
        default:
            lev_vt_fail(vt, LEV_EFAILED, "script: bad op");
            return LEV_RUN_EXIT;
        }
    }
    return LEV_RUN_DONE;
}

/* --- descriptors --------------------------------------------------- */

#define F(type, field, kind)                                                                       \
    {                                                                                              \
#field, (uint32_t)offsetof(type, field), kind, 1, 0                                        \
    }
#define NF(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))

static const lev_field_desc f_script[] = {
    F(struct script__frame, t.arg, LEV_K_PTR), F(struct script__frame, t.len, LEV_K_B8),
    F(struct script__frame, i, LEV_K_B8),      F(struct script__frame, k, LEV_K_B8),
    F(struct script__frame, from, LEV_K_B8),   F(struct script__frame, buf, LEV_K_PTR),
    F(struct script__frame, len, LEV_K_B8)};
static const lev_type_desc s_types[] = {{"struct script__frame",
                                         (uint32_t)sizeof(struct script__frame), NF(f_script),
                                         f_script, _Alignof(struct script__frame)}};
static const lev_fn_desc s_fns[] = {{"script", NULL, script__run, LEV_T_USER, LEV_FN_TASK}};
static const lev_module_desc s_desc = {LEV_ABI_VERSION, "test_chan", NF(s_types), s_types,
                                       NF(s_fns),       s_fns,       0,           NULL};

/* ===================================================================
 * The hub: the deployer's side, in the test
 * =================================================================== */

#define SMAX 8192 /* stream entries per VT */
#define NGLOB 4
#define NWAIT 16

typedef struct h_ent {
    rt_in in;
    uint8_t bytes[16];
} h_ent;

typedef struct h_vt {
    rt_vt *vt; /* NULL: not running here (its stream is kept) */
    bool known;
    h_ent s[SMAX];
    size_t n;
    uint64_t have; /* outputs up to this number are applied */
    uint64_t dups, gaps, consumed;
    int nreports;
    int64_t report_v[64];
    uint64_t report_seq[64];
    int ntimeouts;
} h_vt;

typedef struct h_glob {
    int64_t v;
    bool set;
    uint64_t version; /* of the last put applied */
    int puts;         /* puts seen */
    int holder;       /* slot, or -1 */
    int wslot[NWAIT];
    uint64_t wref[NWAIT];
    int nw;
} h_glob;

static struct hub {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    h_vt v[NSLOTS];
    h_glob g[NGLOB];
    bool hold_msg_acks; /* messages (and puts) are acknowledged by the test */
    int deliver_errors;
} H = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void h_reset(void)
{
    pthread_mutex_lock(&H.mu);
    memset(H.v, 0, sizeof H.v);
    for (int i = 0; i < NGLOB; i++)
        H.g[i] = (h_glob){.holder = -1};
    H.hold_msg_acks = false;
    H.deliver_errors = 0;
    pthread_mutex_unlock(&H.mu);
}

/* Under H.mu: delivers slot's stream from where its VT stands. */
static void h_pump(int slot)
{
    h_vt *hv = &H.v[slot];
    if (!hv->vt)
        return;
    for (uint64_t d = rt_ch_next_in(hv->vt); d <= hv->n; d++)
        if (rt_ch_deliver(hv->vt, &hv->s[d - 1].in) != 0)
            H.deliver_errors++;
}

/* Under H.mu: appends an entry to slot's stream and delivers it. */
static void h_append(int slot, uint8_t kind, uint64_t from, uint64_t ref, const void *data,
                     size_t len, bool novalue)
{
    h_vt *hv = &H.v[slot];
    assert_true(hv->n < SMAX && len <= sizeof hv->s[0].bytes);
    h_ent *e = &hv->s[hv->n];
    memset(e, 0, sizeof *e);
    if (len)
        memcpy(e->bytes, data, len);
    e->in = (rt_in){.d = hv->n + 1,
                    .from = from,
                    .ref = ref,
                    .kind = kind,
                    .novalue = novalue,
                    .data = len ? e->bytes : NULL,
                    .len = len,
                    .err = kind == RT_IN_BOUNCE ? LEV_ENOVT : 0};
    hv->n++;
    h_pump(slot);
    pthread_cond_broadcast(&H.cv);
}

static h_glob *h_glob_of(const char *name)
{
    int i = name[0] == 'g' ? atoi(name + 1) : -1;
    assert_true(i >= 0 && i < NGLOB);
    return &H.g[i >= 0 && i < NGLOB ? i : 0];
}

static void h_grant(int slot, uint64_t ref, h_glob *g)
{
    g->holder = slot;
    h_append(slot, RT_IN_GRANT, 0, ref, &g->v, g->set ? sizeof g->v : 0, !g->set);
}

/* Under H.mu: what the deployer does with a new output of slot. */
static void h_apply(int slot, const rt_out *o)
{
    h_vt *hv = &H.v[slot];
    switch (o->kind) {
    case RT_OUT_MSG: {
        size_t to = (size_t)(o->to - ID0);
        if (o->to < ID0 || to >= NSLOTS || !H.v[to].known)
            h_append(slot, RT_IN_BOUNCE, o->to, 0, NULL, 0, false);
        else
            h_append((int)to, RT_IN_MSG, ID0 + (uint64_t)slot, 0, o->data, o->len, false);
        break;
    }
    case RT_OUT_REPORT:
        if (hv->nreports < 64) {
            hv->report_v[hv->nreports] = s_val(o->data, o->len);
            hv->report_seq[hv->nreports++] = o->seq;
        }
        break;
    case RT_OUT_LOCK: {
        h_glob *g = h_glob_of(o->name);
        if (g->holder < 0) {
            h_grant(slot, o->seq, g);
        } else {
            assert_true(g->nw < NWAIT);
            g->wslot[g->nw] = slot;
            g->wref[g->nw++] = o->seq;
        }
        break;
    }
    case RT_OUT_UNLOCK: {
        h_glob *g = h_glob_of(o->name);
        assert_int_equal(g->holder, slot);
        if (!o->keep) {
            g->v = s_val(o->data, o->len);
            g->set = true;
        }
        g->holder = -1;
        if (g->nw) {
            int w = g->wslot[0];
            uint64_t ref = g->wref[0];
            memmove(g->wslot, g->wslot + 1, (size_t)(g->nw - 1) * sizeof g->wslot[0]);
            memmove(g->wref, g->wref + 1, (size_t)(g->nw - 1) * sizeof g->wref[0]);
            g->nw--;
            h_grant(w, ref, g);
        }
        break;
    }
    case RT_OUT_READ: {
        h_glob *g = h_glob_of(o->name);
        h_append(slot, RT_IN_READ, 0, o->seq, &g->v, g->set ? sizeof g->v : 0, !g->set);
        break;
    }
    case RT_OUT_PUT: {
        h_glob *g = h_glob_of(o->name);
        g->puts++;
        assert_true(o->ref > 0);
        if (o->ref > g->version) {
            g->v = s_val(o->data, o->len);
            g->set = true;
            g->version = o->ref;
        }
        break;
    }
    case RT_OUT_TIMEOUT:
        hv->ntimeouts++;
        h_append(slot, RT_IN_TIMEOUT, 0, o->ref, NULL, 0, false);
        break;
    default:
        fail_msg("unexpected output kind %u", o->kind);
    }
}

static void h_out(rt_vt *vt, const rt_out *o, void *ud)
{
    (void)ud;
    pthread_mutex_lock(&H.mu);
    int slot = vt->id >= ID0 && vt->id < ID0 + NSLOTS ? (int)(vt->id - ID0) : 0;
    assert_int_equal(vt->id, ID0 + (uint64_t)slot);
    h_vt *hv = &H.v[slot];
    if (o->kind == RT_OUT_CONSUMED) {
        assert_int_equal(o->seq, 0);
        hv->consumed = o->ref;
    } else if (o->seq <= hv->have) {
        hv->dups++;
    } else {
        if (o->seq != hv->have + 1)
            hv->gaps++;
        hv->have = o->seq;
        h_apply(slot, o);
    }
    if (o->kind != RT_OUT_CONSUMED &&
        !(H.hold_msg_acks && (o->kind == RT_OUT_MSG || o->kind == RT_OUT_PUT)))
        rt_ch_ack(vt, hv->have);
    pthread_cond_broadcast(&H.cv);
    pthread_mutex_unlock(&H.mu);
}

static const rt_ch_host s_host = {.out = h_out, .window = 4};

/* A message from the client to slot. */
static void h_client(int slot, int32_t v)
{
    pthread_mutex_lock(&H.mu);
    h_append(slot, RT_IN_MSG, LEV_CLIENT, 0, &v, sizeof v, false);
    pthread_mutex_unlock(&H.mu);
}

/* Waits until pred(arg) holds under H.mu, at most LIMIT_MS; whether it did. */
static bool h_until(bool (*pred)(void *), void *arg)
{
    uint64_t end = rt_now_ns() + (uint64_t)LIMIT_MS * 1000000u;
    pthread_mutex_lock(&H.mu);
    bool ok;
    while (!(ok = pred(arg)) && rt_now_ns() < end) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 5000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&H.cv, &H.mu, &ts);
    }
    pthread_mutex_unlock(&H.mu);
    return ok;
}

/* ===================================================================
 * Helpers
 * =================================================================== */

typedef struct images {
    pthread_mutex_t mu;
    int n;
    uint8_t *img, *chan;
    size_t img_len, chan_len;
    bool capture_ok; /* rt_ch_capture_ok when the image was taken */
} images;

static images g_im = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void s_on_image(rt_vt *vt, uint8_t *img, size_t len, void *ud)
{
    (void)ud;
    uint8_t *cb = NULL;
    size_t cl = 0;
    assert_int_equal(rt_ch_save(vt, &cb, &cl), 0);
    pthread_mutex_lock(&g_im.mu);
    free(g_im.img);
    free(g_im.chan);
    g_im.img = img;
    g_im.img_len = len;
    g_im.chan = cb;
    g_im.chan_len = cl;
    g_im.capture_ok = rt_ch_capture_ok(vt);
    g_im.n++;
    pthread_mutex_unlock(&g_im.mu);
    pthread_mutex_lock(&H.mu);
    pthread_cond_broadcast(&H.cv); /* h_until waiters look again */
    pthread_mutex_unlock(&H.mu);
}

static rt_exec *s_exec(int workers, const rt_ch_host *host)
{
    rt_exec_opts o = {.workers = workers, .chan = host, .on_image = s_on_image};
    rt_exec *ex = NULL;
    assert_int_equal(rt_exec_new(&ex, &o), 0);
    return ex;
}

/* A VT of slot running the script prog[n], known to the hub, not spawned. */
static rt_vt *s_new(int slot, const op *prog, size_t n)
{
    rt_vt *vt = NULL;
    assert_int_equal(rt_vt_new(g_mod, 0, prog, n * sizeof *prog, &vt), 0);
    assert_int_equal(rt_vt_set_identity(vt, ID0 + (uint64_t)slot, 1), 0);
    pthread_mutex_lock(&H.mu);
    H.v[slot].known = true;
    H.v[slot].vt = vt;
    pthread_mutex_unlock(&H.mu);
    return vt;
}

static rt_vt *s_spawn(rt_exec *ex, int slot, const op *prog, size_t n)
{
    rt_vt *vt = s_new(slot, prog, n);
    assert_int_equal(rt_exec_spawn(ex, vt), 0);
    return vt;
}

/* Waits for the VT to end well and takes it off the hub. */
static void s_done(rt_exec *ex, rt_vt *vt)
{
    assert_int_equal(rt_exec_wait(ex, vt, LIMIT_MS), 0);
    if (vt->state != RT_VT_DONE)
        fail_msg("VT %" PRIu64 " ended in state %d: %s (%s)", vt->id, vt->state,
                 lev_strerror(vt->err), vt->errdetail ? vt->errdetail : "");
    pthread_mutex_lock(&H.mu);
    H.v[vt->id - ID0].vt = NULL;
    pthread_mutex_unlock(&H.mu);
}

static bool p_nlog(void *arg)
{
    const int *want = arg; /* {slot, n} */
    return atomic_load(&g_nlog[want[0]]) >= want[1];
}

static bool s_wait_log(int slot, int n)
{
    int want[2] = {slot, n};
    return h_until(p_nlog, want);
}

static bool p_images(void *arg)
{
    return __atomic_load_n(&g_im.n, __ATOMIC_SEQ_CST) >= *(int *)arg;
}

static bool p_parked(void *arg) { return ((rt_vt *)arg)->state == RT_VT_BLOCKED; }

static void s_free_images(void)
{
    pthread_mutex_lock(&g_im.mu);
    free(g_im.img);
    free(g_im.chan);
    g_im.img = g_im.chan = NULL;
    g_im.n = 0;
    pthread_mutex_unlock(&g_im.mu);
}

static int s_setup(void **state)
{
    (void)state;
    h_reset();
    s_free_images();
    for (int i = 0; i < NSLOTS; i++) {
        atomic_store(&g_nlog[i], 0);
        atomic_store(&g_flag[i], 0);
        atomic_store(&g_progress[i], 0);
    }
    return 0;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ===================================================================
 * Tests
 * =================================================================== */

/* A receive from one sender passes over the others' messages, which a
 * later receive from them finds in their order. */
static void test_order_and_filter(void **state)
{
    (void)state;
    rt_exec *ex = s_exec(2, &s_host);
    const op recv[] = {{OP_RECV, ID0 + 2, -1, 3}, {OP_RECV, ID0 + 1, -1, 3}};
    const op send1[] = {{OP_SEND, ID0, 100, 3}};
    const op send2[] = {{OP_SEND, ID0, 200, 3}};
    rt_vt *a = s_spawn(ex, 0, recv, N(recv));
    rt_vt *b = s_spawn(ex, 1, send1, N(send1));
    s_done(ex, b);
    rt_vt *c = s_spawn(ex, 2, send2, N(send2));
    s_done(ex, c);
    s_done(ex, a);
    assert_int_equal(atomic_load(&g_nlog[0]), 6);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(g_log[0][i].rc, 0);
        assert_int_equal(g_log[0][i].from, ID0 + 2);
        assert_int_equal(g_log[0][i].v, 200 + i);
        assert_int_equal(g_log[0][3 + i].from, ID0 + 1);
        assert_int_equal(g_log[0][3 + i].v, 100 + i);
    }
    assert_int_equal(H.v[0].consumed, H.v[0].n); /* every input reported consumed */
    assert_int_equal(H.deliver_errors, 0);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&a);
    rt_vt_destroy(&b);
    rt_vt_destroy(&c);
}

/* LEV_ANY takes messages of several concurrent senders in stream order. */
static void test_any_follows_stream(void **state)
{
    (void)state;
    enum { EACH = 200 };
    rt_exec *ex = s_exec(2, &s_host);
    const op recv[] = {{OP_RECV, LEV_ANY, -1, 3 * EACH}};
    const op s1[] = {{OP_SEND, ID0, 1000, EACH}};
    const op s2[] = {{OP_SEND, ID0, 2000, EACH}};
    const op s3[] = {{OP_SEND, ID0, 3000, EACH}};
    rt_vt *a = s_spawn(ex, 0, recv, N(recv));
    rt_vt *b = s_spawn(ex, 1, s1, N(s1));
    rt_vt *c = s_spawn(ex, 2, s2, N(s2));
    rt_vt *d = s_spawn(ex, 3, s3, N(s3));
    s_done(ex, b);
    s_done(ex, c);
    s_done(ex, d);
    s_done(ex, a);
    assert_int_equal(atomic_load(&g_nlog[0]), 3 * EACH);
    int next[3] = {0, 0, 0};
    for (int i = 0; i < 3 * EACH; i++) {
        const rt_in *e = &H.v[0].s[i].in;
        assert_int_equal(g_log[0][i].rc, 0);
        assert_int_equal(g_log[0][i].from, e->from);
        assert_int_equal(g_log[0][i].v, s_val(e->data, e->len));
        int k = (int)(e->from - ID0 - 1);
        assert_int_equal(g_log[0][i].v, 1000 * (k + 1) + next[k]++); /* per sender in order */
    }
    rt_exec_destroy(&ex);
    rt_vt_destroy(&a);
    rt_vt_destroy(&b);
    rt_vt_destroy(&c);
    rt_vt_destroy(&d);
}

/* A receive with a limit times out through the stream (the timer wakes
 * the parked VT at its deadline); timeout 0 at once; a later message is
 * still received. */
static void test_timeouts(void **state)
{
    (void)state;
    rt_exec *ex = s_exec(1, &s_host);
    const op prog[] = {{OP_RECV, LEV_ANY, 30, 1},
                       {OP_RECV, LEV_ANY, 0, 1},
                       {OP_RECV, LEV_ANY, -1, 1},
                       {OP_RECV, LEV_ANY, 0, 1}};
    uint64_t t0 = rt_now_ns();
    rt_vt *a = s_spawn(ex, 0, prog, 1);
    s_done(ex, a);
    uint64_t took = rt_now_ns() - t0;
    assert_int_equal(g_log[0][0].rc, LEV_ETIMEDOUT);
    assert_true(took >= 30000000u);
    rt_vt_destroy(&a);

    h_reset();
    atomic_store(&g_nlog[0], 0);
    a = s_spawn(ex, 0, prog, N(prog));
    assert_true(s_wait_log(0, 2));
    h_client(0, 7); /* for the receive without limit */
    assert_true(s_wait_log(0, 3));
    h_client(0, 8); /* for the receive with timeout 0, unless its timeout comes first */
    s_done(ex, a);
    assert_int_equal(g_log[0][0].rc, LEV_ETIMEDOUT);
    assert_int_equal(g_log[0][1].rc, LEV_ETIMEDOUT);
    assert_int_equal(g_log[0][2].rc, 0);
    assert_int_equal(g_log[0][2].from, LEV_CLIENT);
    assert_int_equal(g_log[0][2].v, 7);
    /* the last receive took whichever came first in its stream */
    const rt_in *last = &H.v[0].s[H.v[0].n - 1].in;
    bool msg_first = last->kind == RT_IN_TIMEOUT;
    assert_int_equal(g_log[0][3].rc, msg_first ? 0 : LEV_ETIMEDOUT);
    assert_int_equal(H.v[0].ntimeouts, 3); /* one per receive with a limit */
    rt_exec_destroy(&ex);
    rt_vt_destroy(&a);
}

/* rt_ch_deliver's answers, and the calls outside a VT. */
static void test_deliver_codes(void **state)
{
    (void)state;
    const op prog[] = {{OP_RECV, LEV_ANY, -1, 1}};
    rt_vt *vt = s_new(0, prog, 1);
    int32_t v = 5;
    rt_in in = {.d = 1, .from = LEV_CLIENT, .kind = RT_IN_MSG, .data = &v, .len = sizeof v};
    assert_int_equal(rt_ch_next_in(vt), 1);
    assert_int_equal(rt_ch_deliver(vt, &in), 0);
    assert_int_equal(rt_ch_deliver(vt, &in), 1); /* duplicate */
    in.d = 3;
    assert_int_equal(rt_ch_deliver(vt, &in), LEV_ERANGE); /* gap */
    in.d = 2;
    in.kind = 99;
    assert_int_equal(rt_ch_deliver(vt, &in), LEV_EINVAL);
    assert_non_null(strstr(lev_errdetail(), "kind"));
    in.kind = RT_IN_MSG;
    in.data = NULL;
    assert_int_equal(rt_ch_deliver(vt, &in), LEV_EINVAL);
    in.data = &v;
    in.kind = RT_IN_GRANT; /* ref 0 */
    assert_int_equal(rt_ch_deliver(vt, &in), LEV_EINVAL);
    in.kind = RT_IN_VOID;
    assert_int_equal(rt_ch_deliver(vt, &in), 0);
    assert_int_equal(rt_ch_next_in(vt), 3);
    assert_true(rt_ch_capture_ok(vt));
    in = (rt_in){.d = 3, .ref = 4, .kind = RT_IN_GRANT};
    assert_int_equal(rt_ch_deliver(vt, &in), 0);
    assert_false(rt_ch_capture_ok(vt)); /* a grant it has not taken */
    void *buf;
    size_t len;
    uint64_t from = LEV_ANY;
    assert_int_equal(lev_send(ID0 + 1, &v, sizeof v), LEV_ENOVT);
    assert_int_equal(lev_recv(&from, &buf, &len, 0), LEV_ENOVT);
    assert_int_equal(lev_global_lock("g0", &buf, &len), LEV_ENOVT);
    assert_int_equal(lev_global_unlock("g0", NULL, 0), LEV_ENOVT);
    assert_int_equal(lev_global_read("g0", &buf, &len), LEV_ENOVT);
    rt_vt_destroy(&vt);
}

static uint64_t g_want_have;

static bool p_sender_parked(void *arg)
{
    rt_vt *vt = arg;
    return H.v[0].have == g_want_have && vt->state == RT_VT_BLOCKED;
}

/* The window: lev_send waits while 4 messages are unacknowledged. */
static void test_window(void **state)
{
    (void)state;
    rt_exec *ex = s_exec(1, &s_host);
    pthread_mutex_lock(&H.mu);
    H.hold_msg_acks = true;
    H.v[1].known = true; /* the receiver's stream only */
    pthread_mutex_unlock(&H.mu);
    const op prog[] = {{OP_SEND, ID0 + 1, 0, 10}};
    rt_vt *a = s_spawn(ex, 0, prog, N(prog));
    g_want_have = 4;
    assert_true(h_until(p_sender_parked, a)); /* 4 sent, waits for room */
    assert_int_equal(H.v[1].n, 4);
    rt_ch_ack(a, 4);
    g_want_have = 8;
    assert_true(h_until(p_sender_parked, a));
    rt_ch_ack(a, 8);
    s_done(ex, a);
    assert_int_equal(H.v[0].have, 10);
    assert_int_equal(H.v[1].n, 10);
    assert_int_equal(H.v[0].gaps, 0);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&a);
}

/* A host that takes messages itself (rt_ch_host.send): 10 go to it with
 * no output number and no window, none into the outbox or through out();
 * its error is lev_send's (the 11th returns it). */
static int g_direct_n;
static int h_direct(rt_vt *vt, uint64_t to, const void *data, size_t len, void *ud)
{
    (void)ud;
    pthread_mutex_lock(&H.mu);
    int rc = 0;
    if (g_direct_n == 10) {
        rc = rt_err(LEV_ENOMEM, "the test's host is full");
    } else {
        assert_int_equal(len, sizeof(int32_t));
        assert_int_equal(s_val(data, len), g_direct_n);
        assert_int_equal(to, ID0 + 1);
        assert_int_equal(vt->id, ID0);
        g_direct_n++;
    }
    pthread_cond_broadcast(&H.cv);
    pthread_mutex_unlock(&H.mu);
    return rc;
}

static void test_direct_send(void **state)
{
    (void)state;
    static const rt_ch_host host = {.out = h_out, .send = h_direct, .window = 4};
    rt_exec *ex = s_exec(1, &host);
    pthread_mutex_lock(&H.mu);
    H.hold_msg_acks = true; /* a message in the outbox would stop the VT at 4 */
    H.v[1].known = true;
    g_direct_n = 0;
    pthread_mutex_unlock(&H.mu);
    const op prog[] = {{OP_SEND, ID0 + 1, 0, 11}};
    rt_vt *a = s_spawn(ex, 0, prog, N(prog));
    s_done(ex, a);
    assert_int_equal(g_direct_n, 10);
    assert_int_equal(H.v[1].n, 0);    /* nothing through out() */
    assert_int_equal(H.v[0].have, 0); /* no output number */
    assert_int_equal(rt_ch_oldest_out(a), 0);
    assert_int_equal(g_nlog[0], 1);
    assert_int_equal(g_log[0][0].rc, LEV_ENOMEM);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&a);
}

/* A host with its own flow control (rt_ch_host.send returns LEV_BLOCKED
 * while it has no room): it delivers each message to the receiver itself
 * with its number on the channel as ref, and the receiver's takes come
 * back through rt_ch_host.taken. The sender waits, parked, at 3 until
 * rt_ch_wake_send; every message arrives once, in order. */
static struct {
    int sent, blocked, ntaken;
    bool room;
    rt_vt *rcv;
    uint64_t taken_from[8], taken_ref[8];
} g_fc;

static int h_fc_send(rt_vt *vt, uint64_t to, const void *data, size_t len, void *ud)
{
    (void)ud;
    (void)vt;
    pthread_mutex_lock(&H.mu);
    int rc = 0;
    if (g_fc.sent >= 3 && !g_fc.room) {
        g_fc.blocked++;
        rc = LEV_BLOCKED;
    } else {
        assert_int_equal(to, ID0 + 1);
        g_fc.sent++;
        rt_in in = {.d = rt_ch_next_in(g_fc.rcv),
                    .kind = RT_IN_MSG,
                    .from = ID0,
                    .ref = (uint64_t)g_fc.sent,
                    .data = data,
                    .len = len};
        assert_int_equal(rt_ch_deliver(g_fc.rcv, &in), 0);
    }
    pthread_cond_broadcast(&H.cv);
    pthread_mutex_unlock(&H.mu);
    return rc;
}

static void h_fc_taken(rt_vt *vt, uint64_t from, uint64_t ref, void *ud)
{
    (void)ud;
    assert_int_equal(vt->id, ID0 + 1);
    pthread_mutex_lock(&H.mu);
    assert_true(g_fc.ntaken < 8);
    g_fc.taken_from[g_fc.ntaken] = from;
    g_fc.taken_ref[g_fc.ntaken++] = ref;
    pthread_cond_broadcast(&H.cv);
    pthread_mutex_unlock(&H.mu);
}

static bool p_fc_waits(void *arg)
{
    rt_vt *vt = arg;
    return g_fc.blocked && g_fc.ntaken == 3 && vt->state == RT_VT_BLOCKED;
}

static void test_direct_wait(void **state)
{
    (void)state;
    static const rt_ch_host host = {.out = h_out, .send = h_fc_send, .taken = h_fc_taken};
    rt_exec *ex = s_exec(2, &host);
    memset(&g_fc, 0, sizeof g_fc);
    const op recv[] = {{OP_RECV, ID0, -1, 6}};
    const op send[] = {{OP_SEND, ID0 + 1, 0, 6}};
    rt_vt *b = s_new(1, recv, N(recv));
    g_fc.rcv = b;
    assert_int_equal(rt_exec_spawn(ex, b), 0);
    rt_vt *a = s_spawn(ex, 0, send, N(send));
    assert_true(h_until(p_fc_waits, a)); /* 3 sent and taken, the 4th waits */
    pthread_mutex_lock(&H.mu);
    assert_int_equal(g_fc.sent, 3);
    g_fc.room = true;
    pthread_mutex_unlock(&H.mu);
    rt_ch_wake_send(a);
    s_done(ex, a);
    s_done(ex, b);
    assert_int_equal(g_fc.sent, 6);
    assert_int_equal(g_fc.ntaken, 6);
    assert_int_equal(atomic_load(&g_nlog[1]), 6);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(g_fc.taken_from[i], ID0);
        assert_int_equal(g_fc.taken_ref[i], i + 1);
        assert_int_equal(g_log[1][i].rc, 0);
        assert_int_equal(g_log[1][i].v, i);
    }
    assert_int_equal(atomic_load(&g_nlog[0]), 0); /* no send failed */
    rt_exec_destroy(&ex);
    rt_vt_destroy(&a);
    rt_vt_destroy(&b);
}

/* 4 VTs add 1 to one global 1000 times each under its lock. */
static void test_lock_counter(void **state)
{
    (void)state;
    enum { VTS = 4, EACH = 1000 };
    rt_exec *ex = s_exec(2, &s_host);
    const op prog[] = {{OP_INC, 0, 0, EACH}, {OP_READ, 0, 0, 0}};
    rt_vt *vts[VTS];
    for (int i = 0; i < VTS; i++)
        vts[i] = s_spawn(ex, i, prog, N(prog));
    for (int i = 0; i < VTS; i++)
        s_done(ex, vts[i]);
    assert_true(H.g[0].set);
    assert_int_equal(H.g[0].v, VTS * EACH);
    assert_int_equal(H.g[0].holder, -1);
    for (int i = 0; i < VTS; i++) {
        assert_int_equal(H.v[i].gaps, 0);
        assert_int_equal(g_log[i][0].rc, 0);
        assert_true(g_log[i][0].v > 0 && g_log[i][0].v <= VTS * EACH); /* a committed value */
        rt_vt_destroy(&vts[i]);
    }
    rt_exec_destroy(&ex);
}

static bool p_progress_100(void *arg)
{
    return atomic_load(&g_progress[1]) >= *(long long *)arg + 100;
}

/* A capture asked while a lock is held is taken after the unlock. */
static void test_capture_after_unlock(void **state)
{
    (void)state;
    rt_exec *ex = s_exec(1, &s_host);
    const op prog[] = {
        {OP_LOCK, 1, 0, 0}, {OP_GATE, 1, 0, 0}, {OP_UNLOCK, 1, 42, 0}, {OP_GATE, 2, 0, 0}};
    rt_vt *a = s_spawn(ex, 0, prog, N(prog));
    assert_true(s_wait_log(0, 1)); /* it holds the lock */
    assert_int_equal(g_log[0][0].rc, 0);
    long long at = atomic_load(&g_progress[1]);
    assert_int_equal(rt_exec_request_capture(a), 0);
    assert_true(h_until(p_progress_100, &at)); /* 100 safe points later */
    assert_int_equal(__atomic_load_n(&g_im.n, __ATOMIC_SEQ_CST), 0);
    atomic_store(&g_flag[1], 1); /* unlock */
    int one = 1;
    assert_true(h_until(p_images, &one));
    assert_true(g_im.capture_ok);
    assert_int_equal(H.g[1].v, 42);
    atomic_store(&g_flag[2], 1);
    s_done(ex, a);
    /* the image's channel state holds no lock */
    rt_vt *b = s_new(3, prog, 1);
    assert_int_equal(rt_ch_load(b, g_im.chan, g_im.chan_len), 0);
    assert_true(rt_ch_capture_ok(b));
    rt_exec_destroy(&ex);
    rt_vt_destroy(&a);
    rt_vt_destroy(&b);
}

/* lev_global_put: an output with its version, applied by the host only
 * above the version it has; refused under a lock and with version 0; an
 * unacknowledged put travels in the channel state and is sent again. */
static void test_put(void **state)
{
    (void)state;
    rt_exec *ex = s_exec(1, &s_host);
    const op prog[] = {{OP_PUT, 0, 5, 2},  {OP_PUT, 0, 7, 1},  {OP_PUT, 0, 9, 3},
                       {OP_LOCK, 1, 0, 0}, {OP_PUT, 0, 11, 4}, {OP_UNLOCK, 1, 1, 0},
                       {OP_PUT, 0, 13, 0}, {OP_GATE, 1, 0, 0}};
    rt_vt *a = s_spawn(ex, 0, prog, N(prog));
    assert_true(s_wait_log(0, 7));
    const int want[] = {0, 0, 0, 0, LEV_EBUSY, 0, LEV_EINVAL};
    for (int i = 0; i < 7; i++)
        assert_int_equal(g_log[0][i].rc, want[i]);
    pthread_mutex_lock(&H.mu);
    assert_int_equal(H.g[0].puts, 3);
    assert_int_equal(H.g[0].v, 9);
    assert_int_equal(H.g[0].version, 3);
    H.hold_msg_acks = true; /* the next put stays in the outbox */
    pthread_mutex_unlock(&H.mu);
    atomic_store(&g_flag[1], 1);
    s_done(ex, a);
    /* outside a VT */
    int64_t n = 1;
    assert_int_equal(lev_global_put("g0", &n, sizeof n, 1), LEV_ENOVT);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&a);

    /* an unacknowledged put in the channel state: saved, loaded, the same bytes */
    ex = s_exec(1, &s_host);
    const op prog2[] = {{OP_PUT, 2, 21, 8}, {OP_GATE, 2, 0, 0}};
    rt_vt *b = s_spawn(ex, 1, prog2, N(prog2));
    assert_true(s_wait_log(1, 1));
    assert_int_equal(g_log[1][0].rc, 0);
    uint8_t *buf = NULL, *buf2 = NULL;
    size_t len = 0, len2 = 0;
    assert_int_equal(rt_ch_save(b, &buf, &len), 0);
    rt_vt *c = s_new(4, prog2, 1);
    assert_int_equal(rt_ch_load(c, buf, len), 0);
    assert_int_equal(rt_ch_save(c, &buf2, &len2), 0);
    assert_int_equal(len2, len);
    assert_memory_equal(buf2, buf, len);
    free(buf);
    free(buf2);
    atomic_store(&g_flag[2], 1);
    pthread_mutex_lock(&H.mu);
    assert_int_equal(H.g[2].puts, 1);
    assert_int_equal(H.g[2].v, 21);
    assert_int_equal(H.g[2].version, 8);
    pthread_mutex_unlock(&H.mu);
    s_done(ex, b);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&b);
    rt_vt_destroy(&c);
}

/* The portable state: a round trip gives the same bytes; every
 * truncation and damaged counts are refused naming the field. */
static void test_save_load(void **state)
{
    (void)state;
    rt_exec *ex = s_exec(1, &s_host);
    pthread_mutex_lock(&H.mu);
    H.hold_msg_acks = true;
    H.v[1].known = true;
    pthread_mutex_unlock(&H.mu);
    const op prog[] = {{OP_SEND, ID0 + 1, 0, 3}, {OP_LOCK, 2, 0, 0}, {OP_GATE, 3, 0, 0}};
    rt_vt *a = s_spawn(ex, 0, prog, N(prog));
    assert_true(s_wait_log(0, 1));
    h_client(0, 11);
    h_client(0, 12);
    uint8_t *buf = NULL, *buf2 = NULL;
    size_t len = 0, len2 = 0;
    assert_int_equal(rt_ch_save(a, &buf, &len), 0);
    rt_vt *b = s_new(4, prog, 1);
    assert_int_equal(rt_ch_load(b, buf, len), 0);
    assert_int_equal(rt_ch_next_in(b), rt_ch_next_in(a));
    assert_false(rt_ch_capture_ok(b)); /* it holds the lock */
    assert_int_equal(rt_ch_save(b, &buf2, &len2), 0);
    assert_int_equal(len2, len);
    assert_memory_equal(buf2, buf, len);
    free(buf2);
    rt_vt *c = s_new(5, prog, 1);
    for (size_t cut = 0; cut < len; cut++) {
        assert_int_equal(rt_ch_load(c, buf, cut), LEV_EIMAGE);
        assert_non_null(strstr(lev_errdetail(), "channel state"));
    }
    assert_int_equal(rt_ch_next_in(c), 1); /* unchanged */
    /* the input count, right after the fixed header */
    const size_t at = 4 + 4 + 8 + 8 + 8 + 4 + 1 + 1 + 8 + 8 + 8;
    uint8_t save = buf[at + 3];
    buf[at + 3] = 0xff;
    assert_int_equal(rt_ch_load(c, buf, len), LEV_EIMAGE);
    assert_non_null(strstr(lev_errdetail(), "input count"));
    buf[at + 3] = save;
    buf[0] ^= 1;
    assert_int_equal(rt_ch_load(c, buf, len), LEV_EIMAGE);
    assert_non_null(strstr(lev_errdetail(), "magic"));
    buf[0] ^= 1;
    buf[4] = 4;
    assert_int_equal(rt_ch_load(c, buf, len), LEV_EVERSION);
    buf[4] = 3;
    assert_int_equal(rt_ch_load(c, buf, len), 0);
    free(buf);
    atomic_store(&g_flag[3], 1);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&a);
    rt_vt_destroy(&b);
    rt_vt_destroy(&c);
}

static bool p_timeout_in_stream(void *arg)
{
    (void)arg;
    return H.v[0].ntimeouts >= 1;
}

/* What a worker does with slot 0's newest image and channel state: a
 * copy with the next epoch, its outbox sent again once spawned, its
 * stream delivered again from where the state stands. */
static rt_vt *s_restore_slot0(rt_exec *ex)
{
    rt_vt *copy = NULL;
    assert_int_equal(rt_restore(g_mod, g_im.img, g_im.img_len, &copy), 0);
    assert_int_equal(rt_vt_set_identity(copy, ID0, 2), 0);
    assert_int_equal(rt_ch_load(copy, g_im.chan, g_im.chan_len), 0);
    rt_ch_resend(copy);
    pthread_mutex_lock(&H.mu);
    H.v[0].vt = copy;
    pthread_mutex_unlock(&H.mu);
    assert_int_equal(rt_exec_spawn(ex, copy), 0);
    pthread_mutex_lock(&H.mu);
    h_pump(0);
    pthread_mutex_unlock(&H.mu);
    return copy;
}

/* Restored from an image with its channel state, a VT replays its stream:
 * the same inputs, and its outputs again with the same numbers. */
static void test_replay(void **state)
{
    (void)state;
    rt_exec *ex = s_exec(1, &s_host);
    const op prog[] = {{OP_RECV, LEV_ANY, -1, 2}, {OP_REPORT, 0, 7, 0},      {OP_GATE, 1, 0, 0},
                       {OP_RECV, LEV_ANY, 50, 1}, {OP_RECV, LEV_ANY, -1, 2}, {OP_REPORT, 0, 8, 0}};
    rt_vt *a = s_spawn(ex, 0, prog, N(prog));
    h_client(0, 1);
    h_client(0, 2);
    assert_true(s_wait_log(0, 2));
    assert_int_equal(rt_exec_request_capture(a), 0);
    int one = 1;
    assert_true(h_until(p_images, &one));
    atomic_store(&g_flag[1], 1);
    assert_true(h_until(p_timeout_in_stream, NULL));
    h_client(0, 3);
    h_client(0, 4);
    s_done(ex, a);
    log_ent first[5];
    assert_int_equal(atomic_load(&g_nlog[0]), 5);
    memcpy(first, g_log[0], sizeof first);
    assert_int_equal(first[2].rc, LEV_ETIMEDOUT);
    assert_int_equal(first[3].v, 3);
    uint64_t have = H.v[0].have;
    assert_int_equal(H.v[0].nreports, 2);
    assert_int_equal(H.v[0].report_seq[0], 1); /* reports are numbered outputs */

    atomic_store(&g_nlog[0], 0);
    pthread_mutex_lock(&H.mu);
    H.v[0].dups = 0;
    pthread_mutex_unlock(&H.mu);
    rt_vt *copy = s_restore_slot0(ex);
    s_done(ex, copy);
    assert_int_equal(atomic_load(&g_nlog[0]), 3);
    assert_memory_equal(g_log[0], first + 2, 3 * sizeof first[0]);
    assert_int_equal(H.v[0].have, have); /* nothing new */
    assert_int_equal(H.v[0].gaps, 0);
    assert_true(H.v[0].dups >= 2); /* its timeout request and report 8 again */
    assert_int_equal(H.v[0].nreports, 2);
    assert_int_equal(H.deliver_errors, 0);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&a);
    rt_vt_destroy(&copy);
}

/* A VT parked in a receive is captured and stopped where it waits; its
 * restored copy gets the message. */
static void test_parked_capture(void **state)
{
    (void)state;
    rt_exec *ex = s_exec(1, &s_host);
    const op prog[] = {{OP_RECV, LEV_ANY, -1, 1}};
    rt_vt *a = s_spawn(ex, 0, prog, N(prog));
    assert_true(h_until(p_parked, a));
    assert_int_equal(rt_exec_capture_stop(a), 0);
    assert_int_equal(rt_exec_wait(ex, a, LIMIT_MS), 0);
    assert_int_equal(a->state, RT_VT_STOPPED);
    rt_vt *copy = s_restore_slot0(ex);
    h_client(0, 99);
    s_done(ex, copy);
    assert_int_equal(atomic_load(&g_nlog[0]), 1);
    assert_int_equal(g_log[0][0].rc, 0);
    assert_int_equal(g_log[0][0].v, 99);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&a);
    rt_vt_destroy(&copy);
}

/* The plain calls (code levpp did not transform) wait on the OS thread:
 * a receive that times out, one that gets a message, a counter under a
 * lock shared with a VT that uses the _try forms. */
static void test_plain_calls(void **state)
{
    (void)state;
    enum { EACH = 300 };
    rt_exec *ex = s_exec(2, &s_host);
    const op prog[] = {
        {OP_PRECV, LEV_ANY, 30, 1}, {OP_PRECV, LEV_ANY, -1, 1}, {OP_PINC, 0, 0, EACH}};
    const op other[] = {{OP_INC, 0, 0, EACH}};
    uint64_t t0 = rt_now_ns();
    rt_vt *a = s_spawn(ex, 0, prog, N(prog));
    assert_true(s_wait_log(0, 1));
    assert_true(rt_now_ns() - t0 >= 30000000u);
    assert_int_equal(g_log[0][0].rc, LEV_ETIMEDOUT);
    rt_vt *b = s_spawn(ex, 1, other, N(other));
    h_client(0, 5);
    s_done(ex, a);
    s_done(ex, b);
    assert_int_equal(g_log[0][1].rc, 0);
    assert_int_equal(g_log[0][1].v, 5);
    assert_int_equal(H.g[0].v, 2 * EACH);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&a);
    rt_vt_destroy(&b);
}

/* A message to a VT that is not in the VC bounces: the receive returns
 * LEV_ENOVT once, and a send to it fails from then on. */
static void test_bounce(void **state)
{
    (void)state;
    rt_exec *ex = s_exec(1, &s_host);
    const op prog[] = {
        {OP_SEND, ID0 + 6, 1, 1}, {OP_RECV, ID0 + 6, -1, 1}, {OP_SEND, ID0 + 6, 2, 1}};
    rt_vt *a = s_spawn(ex, 0, prog, N(prog));
    s_done(ex, a);
    assert_int_equal(atomic_load(&g_nlog[0]), 2);
    assert_int_equal(g_log[0][0].rc, LEV_ENOVT);
    assert_int_equal(g_log[0][0].from, ID0 + 6);
    assert_int_equal(g_log[0][1].rc, LEV_ENOVT); /* the second send */
    rt_exec_destroy(&ex);
    rt_vt_destroy(&a);
}

int main(void)
{
    rt_init();
    if (lev_module_register(&s_desc, &g_mod)) {
        fprintf(stderr, "test_chan: cannot register the test module: %s\n", lev_errdetail());
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_order_and_filter, s_setup),
        cmocka_unit_test_setup(test_any_follows_stream, s_setup),
        cmocka_unit_test_setup(test_timeouts, s_setup),
        cmocka_unit_test_setup(test_deliver_codes, s_setup),
        cmocka_unit_test_setup(test_window, s_setup),
        cmocka_unit_test_setup(test_direct_send, s_setup),
        cmocka_unit_test_setup(test_direct_wait, s_setup),
        cmocka_unit_test_setup(test_lock_counter, s_setup),
        cmocka_unit_test_setup(test_capture_after_unlock, s_setup),
        cmocka_unit_test_setup(test_put, s_setup),
        cmocka_unit_test_setup(test_save_load, s_setup),
        cmocka_unit_test_setup(test_replay, s_setup),
        cmocka_unit_test_setup(test_parked_capture, s_setup),
        cmocka_unit_test_setup(test_bounce, s_setup),
        cmocka_unit_test_setup(test_plain_calls, s_setup),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    s_free_images();
    return rc;
}
