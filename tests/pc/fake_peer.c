/* fake_peer.c - the stand-in levpeer of the client and levctl tests
 * (fake_peer.h): a ROUTER socket served by a thread, answering OPEN,
 * START, CLOSE, PING, SEND, GSET, GGET, STATS and S_STATUS, pushing REPORT and
 * RESULT, and in its noisy and garbage modes sending what a real peer must
 * never send.
 */
#include "fake_peer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>
#include <zmq.h>

#include "lev_errors.h"
#include "taskmod.h"
#include "tsan_sync.h"

#define FP_MAX_PARTS 5

struct fake_peer {
    void *ctx, *sock;
    char endpoint[PC_ENDPOINT_MAX];
    fp_mode mode;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    /* Under mu. */
    bool stop, mute, release;
    int open_err;
    char open_detail[128];
    const char *status;
    fp_seen seen;
    size_t msg_max, value_max;
    lev_vc_stats stats;
    bool stats_cut;
    /* The thread's own. */
    struct {
        char name[256];
        void *value; /* malloc'd, NULL when empty */
        size_t len;
    } globals[FP_GLOBALS];
    int nglobals;
    uint8_t rid[256];
    size_t rid_len;
    uint64_t next_vt, held_vt, held_seq;
    void *held_arg;
    size_t held_len;
};

/* Dies with a message: the test fails (this is test scaffolding). */
static void s_die(const char *what)
{
    fprintf(stderr, "fake peer: %s: %s\n", what, zmq_strerror(errno));
    abort();
}

uint64_t fp_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ===================================================================
 * Sending
 * =================================================================== */

/* Sends frames to the last client: its routing id, then the n frames. */
static void s_send_frames(fake_peer *fp, int n, const void *const *p, const size_t *len)
{
    LEV_TSAN_SENT();
    zmq_send(fp->sock, fp->rid, fp->rid_len, ZMQ_SNDMORE);
    for (int i = 0; i < n; i++)
        zmq_send(fp->sock, p[i], len[i], i + 1 < n ? ZMQ_SNDMORE : 0);
}

/* Sends a message whose header says `len` payload bytes while it carries
 * payload w (NULL: none); len SIZE_MAX: the true length. */
static void s_send_len(fake_peer *fp, uint16_t type, uint64_t vc, uint64_t vt, uint64_t seq,
                       const pc_wbuf *w, size_t len)
{
    pc_hdr h = pc_hdr_make(type, vc, vt, 0, seq);
    size_t plen = w ? w->len : 0;
    h.len = (uint32_t)(len == SIZE_MAX ? plen : len);
    uint8_t hb[PC_HDR_LEN];
    pc_hdr_encode(&h, hb);
    const void *p[2] = {hb, w ? w->data : NULL};
    size_t l[2] = {PC_HDR_LEN, plen};
    s_send_frames(fp, plen ? 2 : 1, p, l);
}

static void s_send(fake_peer *fp, uint16_t type, uint64_t vc, uint64_t vt, uint64_t seq,
                   const pc_wbuf *w)
{
    s_send_len(fp, type, vc, vt, seq, w, SIZE_MAX);
}

/* ERROR err with detail, for request seq. */
static void s_error(fake_peer *fp, uint64_t seq, int err, const char *detail)
{
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_put_i32(&w, err);
    pc_put_str(&w, detail);
    s_send(fp, PC_C_ERROR, 0, 0, seq, &w);
    pc_wbuf_free(&w);
}

/* RESULT of vt (on VC vc): err, detail and the result bytes. */
static void s_result(fake_peer *fp, uint64_t vc, uint64_t vt, int err, const char *detail,
                     const void *res, size_t len)
{
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_put_i32(&w, err);
    pc_put_str(&w, detail);
    pc_put_blob(&w, res, len);
    s_send(fp, PC_C_RESULT, vc, vt, 0, &w);
    pc_wbuf_free(&w);
}

/* REPORT of vt on VC vc; `trailing` appends a byte the layout has not. */
static void s_report(fake_peer *fp, uint64_t vc, uint64_t vt, const void *buf, size_t len,
                     bool trailing)
{
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_put_blob(&w, buf, len);
    if (trailing)
        pc_put_u8(&w, 0);
    s_send(fp, PC_C_REPORT, vc, vt, 0, &w);
    pc_wbuf_free(&w);
}

/* ===================================================================
 * Noise: what the client must drop
 * =================================================================== */

/* Malformed and misdirected messages around the request of seq (h). */
static void s_noise(fake_peer *fp, const pc_hdr *h)
{
    uint8_t hb[PC_HDR_LEN];
    pc_hdr bad = pc_hdr_make(PC_C_OPENED, FP_VC, 0, 0, h->seq);
    pc_hdr_encode(&bad, hb);
    hb[0] ^= 0xff; /* bad magic */
    const void *p[6] = {hb, hb, hb, hb, hb, hb};
    size_t l[6] = {PC_HDR_LEN, PC_HDR_LEN, PC_HDR_LEN, PC_HDR_LEN, PC_HDR_LEN, PC_HDR_LEN};
    s_send_frames(fp, 1, p, l);
    l[0] = PC_HDR_LEN - 1; /* short header */
    s_send_frames(fp, 1, p, l);
    l[0] = 3;
    s_send_frames(fp, 1, p, l);
    hb[0] ^= 0xff;
    hb[4] = 9; /* another protocol version */
    l[0] = PC_HDR_LEN;
    s_send_frames(fp, 1, p, l);
    hb[4] = PC_WIRE_VERSION;
    s_send_frames(fp, 6, p, l);                              /* too many frames */
    s_send_len(fp, PC_C_OPENED, FP_VC, 0, h->seq, NULL, 12); /* length without frames */
    s_send(fp, PC_C_OPENED, FP_VC, 0, h->seq + 1000, NULL);  /* answers nothing */
    s_send(fp, PC_C_CLOSED, FP_VC, 0, h->seq, NULL);         /* the wrong reply */
    s_send(fp, PC_W_RUN, FP_VC, 2, h->seq, NULL);            /* not for a client */
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_put_i32(&w, LEV_EPEER); /* an ERROR without its detail */
    s_send(fp, PC_C_ERROR, 0, 0, h->seq, &w);
    pc_put_str(&w, "error code zero");
    memset(w.data, 0, 4);
    s_send(fp, PC_C_ERROR, 0, 0, h->seq, &w);
    pc_wbuf_free(&w);
}

/* Malformed and misdirected results and reports of vt, before its own. */
static void s_noise_vt(fake_peer *fp, uint64_t vt)
{
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_put_i32(&w, 0);
    pc_put_str(&w, "");
    pc_put_u32(&w, 100); /* a blob of 100 bytes that has 2 */
    pc_put_u8(&w, 'x');
    pc_put_u8(&w, 'y');
    s_send(fp, PC_C_RESULT, FP_VC, vt, 0, &w);
    pc_wbuf_free(&w);
    s_result(fp, FP_VC + 1, vt, 0, "", "other VC", 8);
    s_result(fp, FP_VC, vt + 1000, 0, "", "no such VT", 10);
    s_result(fp, FP_VC, vt, 5, "", "positive error", 14);
    s_report(fp, FP_VC, vt, "trailing", 8, true);
    s_report(fp, FP_VC, vt + 1000, "no such VT", 10, false);
    s_report(fp, FP_VC + 1, vt, "other VC", 8, false);
}

/* Malformed GVALUEs for the GGET of seq, before its own. */
static void s_noise_value(fake_peer *fp, uint64_t seq)
{
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_put_u8(&w, 2); /* neither set nor unset */
    pc_put_blob(&w, "x", 1);
    s_send(fp, PC_C_GVALUE, FP_VC, 0, seq, &w);
    w.data[0] = 0; /* never set, yet a value */
    s_send(fp, PC_C_GVALUE, FP_VC, 0, seq, &w);
    w.data[0] = 1;
    pc_put_u8(&w, 0); /* a byte after the value */
    s_send(fp, PC_C_GVALUE, FP_VC, 0, seq, &w);
    w.len = 3; /* a value cut short */
    s_send(fp, PC_C_GVALUE, FP_VC, 0, seq, &w);
    pc_wbuf_free(&w);
}

/* STATS: the counts set (cut short if told), after malformed and
 * misdirected replies in the noisy mode. */
static void s_stats(fake_peer *fp, const pc_hdr *h)
{
    pthread_mutex_lock(&fp->mu);
    fp->seen.stats++;
    lev_vc_stats st = fp->stats;
    bool cut = fp->stats_cut;
    pthread_mutex_unlock(&fp->mu);
    if (h->vc != FP_VC) {
        s_error(fp, h->seq, LEV_EINVAL, "STATS of another VC");
        return;
    }
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_put_vc_stats(&w, &st);
    if (fp->mode == FP_NOISY) {
        w.len -= 1; /* short */
        s_send(fp, PC_C_STATS_REPLY, FP_VC, 0, h->seq, &w);
        w.len += 1;
        s_send(fp, PC_C_STATS_REPLY, FP_VC + 1, 0, h->seq, &w); /* another VC */
        pc_put_u8(&w, 0);                                       /* a byte after the counts */
        s_send(fp, PC_C_STATS_REPLY, FP_VC, 0, h->seq, &w);
        w.len -= 1;
    }
    if (cut)
        w.len -= 4;
    s_send(fp, PC_C_STATS_REPLY, FP_VC, 0, h->seq, &w);
    pc_wbuf_free(&w);
}

/* Answers a request with malformed messages only. */
static void s_garbage(fake_peer *fp, const pc_hdr *h)
{
    uint8_t hb[PC_HDR_LEN];
    pc_hdr g = pc_hdr_make(PC_C_PONG, FP_VC, 0, 0, h->seq);
    pc_hdr_encode(&g, hb);
    hb[1] ^= 0x55;
    const void *p[1] = {hb};
    size_t l[1] = {PC_HDR_LEN};
    s_send_frames(fp, 1, p, l);
    l[0] = 7;
    s_send_frames(fp, 1, p, l);
    s_send_len(fp, PC_C_PONG, 0, 0, h->seq, NULL, 1); /* length without frames */
}

/* ===================================================================
 * Answering
 * =================================================================== */

/* OPEN: checks the module it carries against its digest and hash. */
static void s_open(fake_peer *fp, const pc_hdr *h, const zmq_msg_t *parts, int n)
{
    pc_rbuf r;
    pc_rbuf_init(&r, n > 1 ? zmq_msg_data((zmq_msg_t *)&parts[1]) : NULL,
                 n > 1 ? zmq_msg_size((zmq_msg_t *)&parts[1]) : 0);
    int workers = pc_get_i32(&r), checkpoint_ms = pc_get_i32(&r), replicas = pc_get_i32(&r);
    uint64_t digest = pc_get_u64(&r);
    const void *hash = NULL;
    pc_get_raw(&r, &hash, PC_HASH_LEN);
    bool ok = n == 3 && pc_rbuf_done(&r);
    if (ok) {
        const void *mod = zmq_msg_data((zmq_msg_t *)&parts[2]);
        size_t len = zmq_msg_size((zmq_msg_t *)&parts[2]);
        uint8_t mine[PC_HASH_LEN];
        crypto_generichash(mine, sizeof mine, mod, len, NULL, 0);
        ok = digest == rt_taskmod_digest(mod, len) && !memcmp(mine, hash, PC_HASH_LEN) && len;
    }
    pthread_mutex_lock(&fp->mu);
    fp->seen.opens++;
    fp->seen.workers = workers;
    fp->seen.checkpoint_ms = checkpoint_ms;
    fp->seen.replicas = replicas;
    fp->seen.module_ok = ok;
    int err = fp->open_err;
    char detail[128];
    snprintf(detail, sizeof detail, "%s", fp->open_detail);
    pthread_mutex_unlock(&fp->mu);
    if (err)
        s_error(fp, h->seq, err, detail);
    else
        s_send(fp, PC_C_OPENED, FP_VC, 0, h->seq, NULL);
}

/* START: the tasks of fake_peer.h. */
static void s_start(fake_peer *fp, const pc_hdr *h, const zmq_msg_t *parts, int n)
{
    pc_rbuf r;
    char task[256];
    const void *arg = NULL;
    size_t len = 0;
    pc_rbuf_init(&r, n > 1 ? zmq_msg_data((zmq_msg_t *)&parts[1]) : NULL,
                 n > 1 ? zmq_msg_size((zmq_msg_t *)&parts[1]) : 0);
    pc_get_str(&r, task, sizeof task);
    pc_get_blob(&r, &arg, &len);
    pthread_mutex_lock(&fp->mu);
    fp->seen.starts++;
    snprintf(fp->seen.task, sizeof fp->seen.task, "%s", task);
    pthread_mutex_unlock(&fp->mu);
    if (!pc_rbuf_done(&r) || h->vc != FP_VC) {
        s_error(fp, h->seq, LEV_EINVAL, "malformed START");
        return;
    }
    const char *known[] = {"echo", "reports", "fail", "hold"};
    bool found = false;
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        found |= !strcmp(task, known[i]);
    if (!found) {
        char detail[300];
        snprintf(detail, sizeof detail, "no task named %s", task);
        s_error(fp, h->seq, LEV_EMODULE, detail);
        return;
    }
    uint64_t vt = fp->next_vt++;
    s_send(fp, PC_C_STARTED, FP_VC, vt, h->seq, NULL);
    if (fp->mode == FP_NOISY)
        s_noise_vt(fp, vt);
    if (!strcmp(task, "echo")) {
        s_report(fp, FP_VC, vt, arg, len, false);
        s_result(fp, FP_VC, vt, 0, "", arg, len);
    } else if (!strcmp(task, "reports")) {
        for (int i = 0; i < 3; i++) {
            char rep[3] = {'r', (char)('0' + i), 0};
            s_report(fp, FP_VC, vt, rep, 2, false);
        }
        s_result(fp, FP_VC, vt, 0, "", "done", 4);
    } else if (!strcmp(task, "fail")) {
        s_result(fp, FP_VC, vt, LEV_EFAILED, "task failed on purpose", NULL, 0);
    } else {
        free(fp->held_arg);
        fp->held_arg = len ? malloc(len) : NULL;
        if (len)
            memcpy(fp->held_arg, arg, len);
        fp->held_len = len;
        fp->held_vt = vt;
    }
}

/* Starts reading the structured payload (frame 1) of a request of n frames. */
static void s_request_payload(pc_rbuf *r, const zmq_msg_t *parts, int n)
{
    pc_rbuf_init(r, n == 2 ? zmq_msg_data((zmq_msg_t *)&parts[1]) : NULL,
                 n == 2 ? zmq_msg_size((zmq_msg_t *)&parts[1]) : 0);
}

/* Answers ERROR LEV_ERANGE for request seq when len bytes of `what` are
 * above `max` (0: no limit); true if it did. */
static bool s_over_limit(fake_peer *fp, uint64_t seq, const char *what, size_t len, size_t max)
{
    if (!max || len <= max)
        return false;
    char detail[160];
    snprintf(detail, sizeof detail, "%s of %zu bytes is above the VC's %s limit of %zu bytes", what,
             len, what, max);
    s_error(fp, seq, LEV_ERANGE, detail);
    return true;
}

/* SEND: accepted (recorded, SENT) while its VT runs, ENOVT otherwise. */
static void s_msg(fake_peer *fp, const pc_hdr *h, const zmq_msg_t *parts, int n)
{
    pc_rbuf r;
    const void *buf = NULL;
    size_t len = 0;
    s_request_payload(&r, parts, n);
    pc_get_blob(&r, &buf, &len);
    pthread_mutex_lock(&fp->mu);
    fp->seen.sends++;
    size_t max = fp->msg_max;
    pthread_mutex_unlock(&fp->mu);
    if (!pc_rbuf_done(&r) || h->vc != FP_VC) {
        s_error(fp, h->seq, LEV_EINVAL, "malformed SEND");
        return;
    }
    if (s_over_limit(fp, h->seq, "message", len, max))
        return;
    if (!h->vt || h->vt != fp->held_vt) {
        char detail[80];
        snprintf(detail, sizeof detail, "VT %llu is not running in the VC",
                 (unsigned long long)h->vt);
        s_error(fp, h->seq, LEV_ENOVT, detail);
        return;
    }
    pthread_mutex_lock(&fp->mu);
    int i = fp->seen.nsent++;
    if (i < FP_SENT_KEPT) {
        fp->seen.sent_vt[i] = h->vt;
        snprintf(fp->seen.sent[i], sizeof fp->seen.sent[i], "%.*s",
                 (int)(len < sizeof fp->seen.sent[i] ? len : sizeof fp->seen.sent[i] - 1),
                 len ? (const char *)buf : "");
    }
    fp->seen.last_len = len;
    fp->seen.last_hash = fp_hash(buf, len);
    pthread_mutex_unlock(&fp->mu);
    s_send(fp, PC_C_SENT, FP_VC, h->vt, h->seq, NULL);
}

/* The slot of global `name`, a new one if `add` (NULL when full or absent). */
static int s_global(fake_peer *fp, const char *name, bool add)
{
    for (int i = 0; i < fp->nglobals; i++)
        if (!strcmp(fp->globals[i].name, name))
            return i;
    if (!add || fp->nglobals == FP_GLOBALS)
        return -1;
    snprintf(fp->globals[fp->nglobals].name, sizeof fp->globals[0].name, "%s", name);
    return fp->nglobals++;
}

/* GSET and GGET on the table of globals. */
static void s_global_req(fake_peer *fp, const pc_hdr *h, const zmq_msg_t *parts, int n)
{
    pc_rbuf r;
    char name[256];
    const void *value = NULL;
    size_t len = 0;
    bool set = h->type == PC_C_GSET;
    s_request_payload(&r, parts, n);
    pc_get_str(&r, name, sizeof name);
    if (set)
        pc_get_blob(&r, &value, &len);
    pthread_mutex_lock(&fp->mu);
    *(set ? &fp->seen.gsets : &fp->seen.ggets) += 1;
    size_t max = fp->value_max;
    pthread_mutex_unlock(&fp->mu);
    if (!pc_rbuf_done(&r) || h->vc != FP_VC || !*name) {
        s_error(fp, h->seq, LEV_EINVAL, set ? "malformed GSET" : "malformed GGET");
        return;
    }
    if (set && s_over_limit(fp, h->seq, "value", len, max))
        return;
    int i = s_global(fp, name, set);
    if (set && i < 0) {
        s_error(fp, h->seq, LEV_ENOMEM, "the fake peer's table of globals is full");
        return;
    }
    pc_wbuf w;
    pc_wbuf_init(&w);
    if (set) {
        free(fp->globals[i].value);
        fp->globals[i].value = len ? malloc(len) : NULL;
        if (len)
            memcpy(fp->globals[i].value, value, len);
        fp->globals[i].len = len;
        s_send(fp, PC_C_GSET_OK, FP_VC, 0, h->seq, NULL);
    } else {
        if (fp->mode == FP_NOISY)
            s_noise_value(fp, h->seq);
        pc_put_u8(&w, i >= 0);
        pc_put_blob(&w, i >= 0 ? fp->globals[i].value : NULL, i >= 0 ? fp->globals[i].len : 0);
        s_send(fp, PC_C_GVALUE, FP_VC, 0, h->seq, &w);
    }
    pc_wbuf_free(&w);
}

/* Answers one message of the client (or status tool). */
static void s_answer(fake_peer *fp, const pc_hdr *h, const zmq_msg_t *parts, int n)
{
    if (fp->mode == FP_GARBAGE) {
        s_garbage(fp, h);
        return;
    }
    if (fp->mode == FP_NOISY && h->type != PC_C_PING)
        s_noise(fp, h);
    switch (h->type) {
    case PC_C_OPEN:
        s_open(fp, h, parts, n);
        break;
    case PC_C_START:
        s_start(fp, h, parts, n);
        break;
    case PC_C_SEND:
        s_msg(fp, h, parts, n);
        break;
    case PC_C_GSET:
    case PC_C_GGET:
        s_global_req(fp, h, parts, n);
        break;
    case PC_C_STATS:
        s_stats(fp, h);
        break;
    case PC_C_CLOSE:
        pthread_mutex_lock(&fp->mu);
        fp->seen.closes++;
        pthread_mutex_unlock(&fp->mu);
        s_send(fp, PC_C_CLOSED, FP_VC, 0, h->seq, NULL);
        break;
    case PC_C_PING:
        pthread_mutex_lock(&fp->mu);
        fp->seen.pings++;
        pthread_cond_broadcast(&fp->cond);
        pthread_mutex_unlock(&fp->mu);
        s_send(fp, PC_C_PONG, 0, 0, h->seq, NULL);
        break;
    case PC_S_STATUS: {
        pthread_mutex_lock(&fp->mu);
        fp->seen.statuses++;
        const char *json = fp->status;
        pthread_mutex_unlock(&fp->mu);
        if (json) {
            pc_wbuf w;
            pc_wbuf_init(&w);
            pc_put_str(&w, json);
            s_send(fp, PC_S_STATUS_REPLY, 0, 0, h->seq, &w);
            pc_wbuf_free(&w);
        }
        break;
    }
    default:
        break;
    }
}

/* Reads one message and answers it unless muted. */
static void s_serve_one(fake_peer *fp)
{
    zmq_msg_t parts[FP_MAX_PARTS];
    int n = 0, more = 1;
    while (more) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, fp->sock, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&m);
            break;
        }
        LEV_TSAN_RECEIVED();
        more = zmq_msg_more(&m);
        if (n < FP_MAX_PARTS) {
            zmq_msg_init(&parts[n]);
            zmq_msg_move(&parts[n++], &m);
        }
        zmq_msg_close(&m);
    }
    pthread_mutex_lock(&fp->mu);
    bool mute = fp->mute;
    pthread_mutex_unlock(&fp->mu);
    pc_hdr h;
    if (n >= 2 && !mute && zmq_msg_size(&parts[0]) <= sizeof fp->rid &&
        !pc_hdr_decode(zmq_msg_data(&parts[1]), zmq_msg_size(&parts[1]), &h, NULL)) {
        fp->rid_len = zmq_msg_size(&parts[0]);
        memcpy(fp->rid, zmq_msg_data(&parts[0]), fp->rid_len);
        s_answer(fp, &h, parts + 1, n - 1);
    }
    for (int i = 0; i < n; i++)
        zmq_msg_close(&parts[i]);
}

static void *s_thread(void *arg)
{
    fake_peer *fp = arg;
    for (;;) {
        pthread_mutex_lock(&fp->mu);
        bool stop = fp->stop, release = fp->release && fp->held_vt;
        fp->release = false;
        pthread_mutex_unlock(&fp->mu);
        if (stop)
            break;
        if (release) {
            s_result(fp, FP_VC, fp->held_vt, 0, "", fp->held_arg, fp->held_len);
            fp->held_vt = 0;
        }
        zmq_pollitem_t it = {fp->sock, 0, ZMQ_POLLIN, 0};
        if (zmq_poll(&it, 1, 10) > 0)
            s_serve_one(fp);
    }
    return NULL;
}

/* ===================================================================
 * Life and control
 * =================================================================== */

fake_peer *fp_new(fp_mode mode)
{
    fake_peer *fp = calloc(1, sizeof *fp);
    if (!fp || sodium_init() < 0 || !(fp->ctx = zmq_ctx_new()))
        s_die("cannot start");
    int zero = 0;
    size_t len = sizeof fp->endpoint;
    fp->sock = zmq_socket(fp->ctx, ZMQ_ROUTER);
    if (!fp->sock || zmq_setsockopt(fp->sock, ZMQ_LINGER, &zero, sizeof zero) ||
        zmq_bind(fp->sock, "tcp://127.0.0.1:*") ||
        zmq_getsockopt(fp->sock, ZMQ_LAST_ENDPOINT, fp->endpoint, &len))
        s_die("cannot bind");
    fp->mode = mode;
    fp->next_vt = 2;
    pthread_mutex_init(&fp->mu, NULL);
    pthread_cond_init(&fp->cond, NULL);
    if (pthread_create(&fp->thread, NULL, s_thread, fp))
        s_die("cannot start its thread");
    return fp;
}

void fp_destroy(fake_peer **fp_p)
{
    fake_peer *fp = *fp_p;
    if (!fp)
        return;
    pthread_mutex_lock(&fp->mu);
    fp->stop = true;
    pthread_mutex_unlock(&fp->mu);
    pthread_join(fp->thread, NULL);
    zmq_close(fp->sock);
    zmq_ctx_term(fp->ctx);
    pthread_mutex_destroy(&fp->mu);
    pthread_cond_destroy(&fp->cond);
    free(fp->held_arg);
    for (int i = 0; i < fp->nglobals; i++)
        free(fp->globals[i].value);
    free(fp);
    *fp_p = NULL;
}

const char *fp_endpoint(const fake_peer *fp) { return fp->endpoint; }

void fp_mute(fake_peer *fp, bool mute)
{
    pthread_mutex_lock(&fp->mu);
    fp->mute = mute;
    pthread_mutex_unlock(&fp->mu);
}

void fp_refuse_open(fake_peer *fp, int err, const char *detail)
{
    pthread_mutex_lock(&fp->mu);
    fp->open_err = err;
    snprintf(fp->open_detail, sizeof fp->open_detail, "%s", detail ? detail : "");
    pthread_mutex_unlock(&fp->mu);
}

void fp_release(fake_peer *fp)
{
    pthread_mutex_lock(&fp->mu);
    fp->release = true;
    pthread_mutex_unlock(&fp->mu);
}

void fp_set_status(fake_peer *fp, const char *json)
{
    pthread_mutex_lock(&fp->mu);
    fp->status = json;
    pthread_mutex_unlock(&fp->mu);
}

void fp_set_limits(fake_peer *fp, size_t msg_max, size_t value_max)
{
    pthread_mutex_lock(&fp->mu);
    fp->msg_max = msg_max;
    fp->value_max = value_max;
    pthread_mutex_unlock(&fp->mu);
}

void fp_set_stats(fake_peer *fp, const lev_vc_stats *st, bool cut)
{
    pthread_mutex_lock(&fp->mu);
    fp->stats = *st;
    fp->stats_cut = cut;
    pthread_mutex_unlock(&fp->mu);
}

uint64_t fp_hash(const void *buf, size_t len)
{
    const uint8_t *p = buf;
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

fp_seen fp_seen_get(fake_peer *fp)
{
    pthread_mutex_lock(&fp->mu);
    fp_seen s = fp->seen;
    pthread_mutex_unlock(&fp->mu);
    return s;
}

bool fp_wait_pings(fake_peer *fp, int n, int timeout_ms)
{
    uint64_t end = fp_now_ms() + (uint64_t)timeout_ms;
    pthread_mutex_lock(&fp->mu);
    while (fp->seen.pings < n && fp_now_ms() < end) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 20 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&fp->cond, &fp->mu, &ts);
    }
    bool ok = fp->seen.pings >= n;
    pthread_mutex_unlock(&fp->mu);
    return ok;
}

void fp_dead_endpoint(char out[PC_ENDPOINT_MAX])
{
    void *ctx = zmq_ctx_new();
    void *s = ctx ? zmq_socket(ctx, ZMQ_ROUTER) : NULL;
    size_t len = PC_ENDPOINT_MAX;
    int zero = 0;
    if (!s || zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero) ||
        zmq_bind(s, "tcp://127.0.0.1:*") || zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, out, &len))
        s_die("cannot find a free port");
    zmq_close(s);
    zmq_ctx_term(ctx);
}
