/* bench_direct.c - the path of a message between VTs as direct messages
 * with causal logging will take it (docs/DIRECT_MESSAGES.md), side by
 * side in one run with plain libzmq: two executor processes, each with
 * the peer controller's engine (peercontroller/causal.c) hosting one VT,
 * connected DEALER to ROUTER as the peers are, and a deployer process
 * that takes their determinants and answers with watermarks.
 *
 *   latency     round trip of a SIZE-byte message (default 1 KiB): the
 *               engines' ping-pong against libzmq's;
 *   throughput  messages per second of a one-way stream with one answer
 *               at the end, against libzmq's.
 *
 *   bench_direct [ROUNDS] [SIZE] [deplog]
 *
 * With `deplog`, the variant of docs/DIRECT_MESSAGES.md ("The direct
 * path: what the wiring has to settle"): every message also goes to the
 * deployer, which keeps a copy and acknowledges it, and a sender waits
 * while more than 256 of its messages are unacknowledged (a VT's window),
 * as the outbox of the runtime would.
 *
 * With `threads`, each VT runs on a thread of its own, as in an executor:
 * what it sends goes to its executor's loop through a queue and an
 * eventfd (the loop owns the sockets: a libzmq socket is not shared
 * between threads), and what it receives comes from the loop through a
 * condition variable. The hand-overs the other modes leave out.
 *
 * With `own`, each VT on a thread of its own as with `threads`, but the
 * VT's thread sends on a socket itself: each executor has the executors'
 * links of the peer controller (peercontroller/xlink.h), a ROUTER that
 * only receives and a DEALER to the other's that only sends; the VT's
 * thread takes the engine and the DEALER under the executor's lock and
 * sends, while the loop owns the ROUTER and the deployer's socket,
 * and hands the VT what the engine delivered (one hand-over a message,
 * not two).
 *
 * With `self`, as with `own`, and a VT waiting for its input reads the
 * ROUTER itself (the loop keeps only the deployer's socket, and sends
 * the determinants every millisecond): no hand-over at all, the best a
 * VT that takes its input from the socket itself can do.
 *
 * Each comparison alternates the two sides ROUNDS times (default 5) and
 * prints the medians and their ratio. What it leaves out of the real
 * path: the hand-over between a VT's thread and its executor's loop, and
 * images (the sender keeps its log as if the receiver's stable image
 * trailed it by 1,024 messages, which is what trims it).
 */
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <zmq.h>

#include "bench.h"
#include "causal.h"
#include "lev_errors.h"
#include "xlink.h"
#include "zbase.h"

#define PP_N 2000L
#define ST_N 20000L
#define TRAIL 1024 /* the receiver's stable image trails the sender by this much */
#define VT_A 2
#define VT_B 3

static void s_die(const char *what)
{
    fprintf(stderr, "bench_direct: %s\n", what);
    exit(1);
}

/* ===================================================================
 * An executor: an engine, a socket to the other executor, one to the
 * deployer
 * =================================================================== */

typedef struct ex {
    pc_cx *cx;
    void *peer, *dep; /* the other executor's socket; the deployer's */
    bool router;      /* peer is a ROUTER: frames go to `id` */
    zmq_msg_t id;
    bool have_id;
    uint64_t vt, other;
    /* inputs handed over by the engine, not yet consumed */
    uint64_t pos[1024];
    char kind[1024];
    int nin;
    uint64_t sent;
    pc_wbuf dets; /* determinants for the deployer, sent in batches */
    uint32_t ndets;
    uint64_t acked; /* deplog: messages the deployer acknowledged */
    /* threads: the VT's thread and the loop's hand-overs, under mu */
    int efd; /* the VT thread queued something to send */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pc_xlink *xl;    /* own: its links (the DEALER under mu; peer is its ROUTER) */
    char outq[4096]; /* kinds to send, queued by the VT thread */
    int nout;
    char inq[4096]; /* kinds received, for the VT thread */
    int nready;
    size_t size; /* of 'p' and its answer */
    bool stop;
} ex;

static bool s_deplog;    /* messages also go to the deployer (the variant) */
static bool s_threads;   /* each VT on a thread of its own */
static bool s_own;       /* ...which sends on a socket itself */
static bool s_self;      /* ...and reads its input from the socket itself */
static char s_a_ep[128]; /* own: where executor A's ROUTER is bound */

#define WINDOW 256 /* deplog: unacknowledged messages beyond which a sender waits */

#define DET_BATCH 256 /* determinants sent to the deployer at once, or when idle */

static void s_frame_out(ex *e, void *sock, const void *p, size_t n, bool to_peer)
{
    if (to_peer && e->router) {
        zmq_msg_t id;
        zmq_msg_init(&id);
        zmq_msg_copy(&id, &e->id);
        zmq_msg_send(&id, sock, ZMQ_SNDMORE);
    }
    zmq_send(sock, p, n, 0);
}

static void s_io_send(void *ud, int peer, const pc_cx_msg *m, const pc_cx_det *d, size_t n)
{
    ex *e = ud;
    (void)peer;
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_put_u8(&w, 'M');
    pc_cx_encode(&w, m, d, n);
    if (w.err)
        s_die("out of memory");
    if (s_own)
        pc_xlink_send(e->xl, peer, w.data, w.len);
    else
        s_frame_out(e, e->peer, w.data, w.len, true);
    pc_wbuf_free(&w);
}

/* The determinants go to the deployer asynchronously: in batches, or
 * when the executor has nothing else to do (an executor flushes them
 * too before anything else it sends the deployer, which this benchmark
 * does not). */
static void s_dets_flush(ex *e)
{
    if (!e->ndets)
        return;
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_put_u8(&w, 'D');
    pc_put_u32(&w, e->ndets);
    pc_put_raw(&w, e->dets.data, e->dets.len);
    s_frame_out(e, e->dep, w.data, w.len, false);
    pc_wbuf_free(&w);
    e->dets.len = 0;
    e->ndets = 0;
}

static void s_io_dets(void *ud, const pc_cx_det *d, size_t n)
{
    ex *e = ud;
    for (size_t i = 0; i < n; i++) {
        pc_put_u64(&e->dets, d[i].vt);
        pc_put_u64(&e->dets, d[i].pos);
    }
    e->ndets += (uint32_t)n;
    if (e->ndets >= DET_BATCH && !s_own) /* own: the loop flushes, on its socket */
        s_dets_flush(e);
}

static void s_io_deliver(void *ud, uint64_t pos, const pc_cx_msg *m)
{
    ex *e = ud;
    if (e->nin == 1024)
        s_die("too many inputs at once");
    e->pos[e->nin] = pos;
    e->kind[e->nin++] = pc_buf_len(m->data) ? *(const char *)pc_buf_data(m->data) : '?';
}

static void s_ex_init(ex *e, void *ctx, int self, uint64_t vt, uint64_t other, const char *dep_ep)
{
    memset(e, 0, sizeof *e);
    pc_wbuf_init(&e->dets);
    e->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->cv, NULL);
    if (e->efd < 0)
        s_die("eventfd");
    pc_cx_io io = {.ud = e, .send = s_io_send, .dets = s_io_dets, .deliver = s_io_deliver};
    e->cx = pc_cx_new(self, &io);
    e->vt = vt;
    e->other = other;
    e->dep = zmq_socket(ctx, ZMQ_DEALER);
    if (!e->cx || zmq_connect(e->dep, dep_ep))
        s_die("executor");
    pc_cx_image im = {.vt = vt, .epoch = 1};
    if (pc_cx_install(e->cx, &im, NULL, 0) || pc_cx_place(e->cx, other, 1, 1 - self))
        s_die("install");
}

/* One frame from the other executor or the deployer, handled, if one is
 * there (or whenever it comes, with `wait`): whether one was. */
static bool s_ex_frame_as(ex *e, void *sock, bool wait);

static bool s_ex_frame(ex *e, void *sock, bool wait)
{
    if (!s_own)
        return s_ex_frame_as(e, sock, wait);
    pthread_mutex_lock(&e->mu); /* the engine is shared with the VT's thread */
    bool got = s_ex_frame_as(e, sock, wait);
    pthread_mutex_unlock(&e->mu);
    return got;
}

/* own: a frame from the other executor's link: its message in. */
static void s_xl_on(void *ud, int src, uint32_t inc, const void *p, size_t n);

static bool s_ex_frame_as(ex *e, void *sock, bool wait)
{
    if (s_own && sock == e->peer) /* (never with `wait`) */
        return pc_xlink_read(e->xl, 1, s_xl_on, e) > 0;
    int flags = wait ? 0 : ZMQ_DONTWAIT;
    zmq_msg_t m;
    zmq_msg_init(&m);
    if (sock == e->peer && e->router) {
        zmq_msg_t id;
        zmq_msg_init(&id);
        if (zmq_msg_recv(&id, sock, flags) < 0) {
            zmq_msg_close(&id);
            zmq_msg_close(&m);
            return false;
        }
        if (e->have_id)
            zmq_msg_close(&e->id);
        zmq_msg_init(&e->id);
        zmq_msg_move(&e->id, &id);
        zmq_msg_close(&id);
        e->have_id = true;
        flags = 0; /* the rest of a message comes with its first part */
    }
    if (zmq_msg_recv(&m, sock, flags) < 0) {
        zmq_msg_close(&m);
        return false;
    }
    const uint8_t *p = zmq_msg_data(&m);
    size_t n = zmq_msg_size(&m);
    if (n && p[0] == 'M') {
        pc_cx_msg msg;
        const void *data;
        size_t len, nd;
        pc_cx_det *d;
        const char *why;
        if (pc_cx_decode(p + 1, n - 1, 1 << 20, &msg, &data, &len, &d, &nd, &why))
            s_die(why);
        msg.data = pc_buf_new(data, len);
        pc_cx_on_msg(e->cx, 1, &msg, d, nd);
        free(d);
    } else if (n == 9 && p[0] == 'A') {
        uint64_t a;
        memcpy(&a, p + 1, 8);
        if (a > e->acked)
            e->acked = a;
    } else if (n && p[0] == 'W') {
        pc_rbuf r;
        pc_rbuf_init(&r, p + 1, n - 1);
        uint32_t k = pc_get_count(&r, 16);
        for (uint32_t i = 0; i < k && !r.bad; i++) {
            uint64_t vt = pc_get_u64(&r), wm = pc_get_u64(&r);
            pc_cx_stable(e->cx, vt, wm);
        }
    }
    zmq_msg_close(&m);
    return true;
}

static void s_xl_on(void *ud, int src, uint32_t inc, const void *p, size_t n)
{
    ex *e = ud;
    (void)inc;
    const uint8_t *b = p;
    pc_cx_msg msg;
    const void *data;
    size_t len, nd;
    pc_cx_det *d;
    const char *why;
    if (!n || b[0] != 'M' || pc_cx_decode(b + 1, n - 1, 1 << 20, &msg, &data, &len, &d, &nd, &why))
        s_die("a malformed frame from the other executor");
    msg.data = pc_buf_new(data, len);
    pc_cx_on_msg(e->cx, src, &msg, d, nd);
    free(d);
}

/* Handles what came from either socket, reading until nothing is left
 * as an event loop does, and waits only when nothing is there; the
 * determinants go out when it would wait for nothing else. */
static void s_ex_wait(ex *e)
{
    if (s_self) { /* the loop keeps the deployer's socket only */
        while (s_ex_frame(e, e->dep, false))
            ;
        zmq_pollitem_t it[2] = {{e->dep, 0, ZMQ_POLLIN, 0}, {NULL, e->efd, ZMQ_POLLIN, 0}};
        if (zmq_poll(it, 2, 1) < 0)
            s_die("poll");
        pthread_mutex_lock(&e->mu);
        s_dets_flush(e);
        pthread_mutex_unlock(&e->mu);
        return;
    }
    bool got = false;
    for (int i = 0; i < 256 && s_ex_frame(e, e->peer, false); i++)
        got = true;
    while (s_ex_frame(e, e->dep, false))
        got = true;
    if (s_own && e->ndets >= DET_BATCH)
        s_dets_flush(e);
    if (got)
        return;
    zmq_pollitem_t it[3] = {
        {e->peer, 0, ZMQ_POLLIN, 0}, {e->dep, 0, ZMQ_POLLIN, 0}, {NULL, e->efd, ZMQ_POLLIN, 0}};
    int rc = zmq_poll(it, s_threads ? 3 : 2, e->ndets ? 1 : -1);
    if (rc < 0)
        s_die("poll");
    if (rc == 0)
        s_dets_flush(e);
}

static void s_ex_send(ex *e, char kind, size_t size);

/* threads, on the loop: sends what the VT thread queued (reading the
 * eventfd first, so that a later queue wakes the loop again); whether
 * it was told to stop. */
static bool s_loop_sends(ex *e)
{
    uint64_t n;
    ssize_t got = read(e->efd, &n, sizeof n); /* -1 (EAGAIN): nothing was queued */
    (void)got;
    char q[4096];
    pthread_mutex_lock(&e->mu);
    int k = e->nout;
    memcpy(q, e->outq, (size_t)k);
    e->nout = 0;
    bool stop = e->stop;
    pthread_mutex_unlock(&e->mu);
    for (int i = 0; i < k; i++)
        if (q[i] != 'x') /* 'x' only wakes the loop */
            s_ex_send(e, q[i], q[i] == 'p' || q[i] == 'r' ? e->size : 1);
    return stop;
}

/* threads, on the VT's thread: queues `kind` for the loop to send
 * (own: sends it itself). */
static void s_vt_send(ex *e, char kind)
{
    if (s_own && kind != 'x') {
        pthread_mutex_lock(&e->mu);
        s_ex_send(e, kind, kind == 'p' || kind == 'r' ? e->size : 1);
        pthread_mutex_unlock(&e->mu);
        return;
    }
    pthread_mutex_lock(&e->mu);
    while (e->nout == (int)sizeof e->outq) { /* the loop is behind: let it catch up */
        pthread_mutex_unlock(&e->mu);
        sched_yield();
        pthread_mutex_lock(&e->mu);
    }
    e->outq[e->nout++] = kind;
    pthread_mutex_unlock(&e->mu);
    uint64_t one = 1;
    if (write(e->efd, &one, sizeof one) < 0)
        s_die("eventfd");
}

/* threads, on the loop: hands the inputs the engine delivered to the VT
 * thread. */
static void s_loop_hand(ex *e, uint64_t vt)
{
    if (s_self || !e->nin)
        return;
    pthread_mutex_lock(&e->mu);
    for (int i = 0; i < e->nin; i++) {
        pc_cx_consumed(e->cx, vt, e->pos[i]);
        if (e->kind[i] != 's' && e->nready < (int)sizeof e->inq)
            e->inq[e->nready++] = e->kind[i];
    }
    e->nin = 0;
    pthread_cond_signal(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

/* threads, on the VT's thread: the next input it takes. */
static char s_vt_recv(ex *e)
{
    while (s_self) {
        pthread_mutex_lock(&e->mu);
        for (int i = 0; i < e->nin; i++) {
            pc_cx_consumed(e->cx, e->vt, e->pos[i]);
            if (e->kind[i] != 's' && e->nready < (int)sizeof e->inq)
                e->inq[e->nready++] = e->kind[i];
        }
        e->nin = 0;
        if (e->nready) {
            char k = e->inq[0];
            memmove(e->inq, e->inq + 1, (size_t)--e->nready);
            pthread_mutex_unlock(&e->mu);
            return k;
        }
        bool got = false;
        for (int i = 0; i < 256 && s_ex_frame_as(e, e->peer, false); i++)
            got = true;
        pthread_mutex_unlock(&e->mu);
        zmq_pollitem_t it = {e->peer, 0, ZMQ_POLLIN, 0};
        if (!got && zmq_poll(&it, 1, -1) < 0)
            s_die("poll");
    }
    pthread_mutex_lock(&e->mu);
    while (!e->nready)
        pthread_cond_wait(&e->cv, &e->mu);
    char k = e->inq[0];
    memmove(e->inq, e->inq + 1, (size_t)--e->nready);
    pthread_mutex_unlock(&e->mu);
    return k;
}

static void s_ex_send(ex *e, char kind, size_t size)
{
    char *buf = calloc(1, size ? size : 1);
    if (!buf)
        s_die("out of memory");
    buf[0] = kind;
    pc_buf *b = pc_buf_new(buf, size ? size : 1);
    free(buf);
    if (s_deplog) {
        /* the copy the deployer logs: u8 'C', then the message */
        zmq_send(e->dep, "C", 1, ZMQ_SNDMORE);
        zmq_send(e->dep, pc_buf_data(b), pc_buf_len(b), 0);
    }
    if (pc_cx_send(e->cx, e->vt, e->other, b))
        s_die("send");
    while (s_deplog && e->sent + 1 > e->acked + WINDOW)
        s_ex_frame(e, e->dep, true); /* the window is full: wait for an acknowledgement */
    if (++e->sent % TRAIL == 0) {
        pc_cx_mark upto = {.vt = e->vt, .seq = e->sent - TRAIL};
        pc_cx_trim(e->cx, e->other, &upto, 1);
    }
}

/* ===================================================================
 * The deployer: determinants in, watermarks out
 * =================================================================== */

/* Binds `sock` on a free loopback port and tells the parent where. */
static void s_bind_tell(void *sock, int fd)
{
    char ep[128];
    size_t n = sizeof ep;
    if (zmq_bind(sock, "tcp://127.0.0.1:*") || zmq_getsockopt(sock, ZMQ_LAST_ENDPOINT, ep, &n) ||
        write(fd, ep, strlen(ep) + 1) < 0)
        _exit(1);
}

static void s_deployer(void *ctx, int fd)
{
    void *r = zmq_socket(ctx, ZMQ_ROUTER);
    s_bind_tell(r, fd);
    zmq_msg_t ids[2];
    int nids = 0;
    uint64_t wm[8] = {0}, since = 0;
    uint64_t logged[2] = {0}, acked[2] = {0}; /* deplog, per executor */
    uint8_t *ring[64] = {0};                  /* the copies, the oldest dropped */
    size_t nring = 0;
    for (;;) {
        zmq_pollitem_t it = {r, 0, ZMQ_POLLIN, 0};
        int rc = zmq_poll(&it, 1, 0);
        for (int i = 0; i < nids; i++)
            if (logged[i] > acked[i] && (rc == 0 || logged[i] - acked[i] >= 64)) {
                /* deplog: acknowledged when nothing more waits, or every 64 */
                uint8_t a[9] = {'A'};
                memcpy(a + 1, &logged[i], 8);
                zmq_msg_t id;
                zmq_msg_init(&id);
                zmq_msg_copy(&id, &ids[i]);
                zmq_msg_send(&id, r, ZMQ_SNDMORE);
                zmq_send(r, a, sizeof a, 0);
                acked[i] = logged[i];
            }
        if (rc == 0)
            rc = zmq_poll(&it, 1, 1);
        if (rc < 0)
            _exit(1);
        if (rc > 0) {
            zmq_msg_t id, m;
            zmq_msg_init(&id);
            zmq_msg_init(&m);
            zmq_msg_recv(&id, r, 0);
            zmq_msg_recv(&m, r, 0);
            const uint8_t *p = zmq_msg_data(&m);
            size_t n = zmq_msg_size(&m);
            if (n && p[0] == 'q')
                break;
            int who = -1;
            for (int i = 0; i < nids; i++)
                if (zmq_msg_size(&ids[i]) == zmq_msg_size(&id) &&
                    !memcmp(zmq_msg_data(&ids[i]), zmq_msg_data(&id), zmq_msg_size(&id)))
                    who = i;
            if (who < 0 && nids < 2) {
                zmq_msg_init(&ids[nids]);
                zmq_msg_copy(&ids[nids], &id);
                who = nids++;
            }
            if (n == 1 && p[0] == 'C') { /* deplog: the message follows; a copy is kept */
                zmq_msg_t c;
                zmq_msg_init(&c);
                zmq_msg_recv(&c, r, 0);
                uint8_t *copy = malloc(zmq_msg_size(&c) ? zmq_msg_size(&c) : 1);
                if (!copy)
                    _exit(1);
                memcpy(copy, zmq_msg_data(&c), zmq_msg_size(&c));
                free(ring[nring % 64]);
                ring[nring++ % 64] = copy;
                zmq_msg_close(&c);
                if (who >= 0)
                    logged[who]++;
                zmq_msg_close(&id);
                zmq_msg_close(&m);
                continue;
            }
            pc_rbuf rb;
            pc_rbuf_init(&rb, p + 1, n ? n - 1 : 0);
            uint32_t k = pc_get_count(&rb, 16);
            for (uint32_t i = 0; i < k && !rb.bad; i++) {
                uint64_t vt = pc_get_u64(&rb), pos = pc_get_u64(&rb);
                if (vt < 8 && pos > wm[vt])
                    wm[vt] = pos;
                since++;
            }
            zmq_msg_close(&id);
            zmq_msg_close(&m);
        }
        if (since && (since >= 256 || rc == 0)) {
            uint8_t w[1 + 4 + 2 * 16];
            w[0] = 'W';
            uint32_t two = 2;
            memcpy(w + 1, &two, 4);
            uint64_t f[4] = {VT_A, wm[VT_A], VT_B, wm[VT_B]};
            memcpy(w + 5, f, sizeof f);
            for (int i = 0; i < nids; i++) {
                zmq_msg_t id;
                zmq_msg_init(&id);
                zmq_msg_copy(&id, &ids[i]);
                zmq_msg_send(&id, r, ZMQ_SNDMORE);
                zmq_send(r, w, sizeof w, 0);
            }
            since = 0;
        }
    }
    for (int i = 0; i < 64; i++)
        free(ring[i]);
    zmq_close(r);
}

/* ===================================================================
 * The receiving executor, in a child
 * =================================================================== */

/* threads: the receiving VT, on a thread of its own: answers 'p' and
 * 'e', and on 'q' tells the loop to stop. */
static void *s_receiver_vt(void *arg)
{
    ex *e = arg;
    for (;;) {
        char k = s_vt_recv(e);
        if (k == 'p' || k == 'e') {
            s_vt_send(e, 'r');
        } else if (k == 'q') {
            pthread_mutex_lock(&e->mu);
            e->stop = true;
            pthread_mutex_unlock(&e->mu);
            s_vt_send(e, 'x'); /* wakes the loop; 'x' is dropped */
            return NULL;
        }
    }
}

static void s_receiver(void *ctx, const char *dep_ep, int fd, size_t size)
{
    ex e;
    s_ex_init(&e, ctx, 1, VT_B, VT_A, dep_ep);
    e.size = size;
    if (s_own) {
        char ep[PC_ENDPOINT_MAX];
        if (pc_xlink_new(&e.xl, ctx, 1, 1, "127.0.0.1", 0, NULL, ep) ||
            pc_xlink_peer(e.xl, 0, s_a_ep) || write(fd, ep, strlen(ep) + 1) < 0)
            s_die("executor B's links");
        e.peer = pc_xlink_socket(e.xl);
    } else {
        e.peer = zmq_socket(ctx, ZMQ_ROUTER);
        e.router = true;
        s_bind_tell(e.peer, fd);
    }
    if (s_threads) {
        pthread_t vt;
        if (pthread_create(&vt, NULL, s_receiver_vt, &e))
            s_die("thread");
        while (!s_loop_sends(&e)) {
            s_ex_wait(&e);
            s_loop_hand(&e, VT_B);
        }
        pthread_join(vt, NULL);
    }
    for (bool quit = s_threads; !quit;) {
        s_ex_wait(&e);
        for (int i = 0; i < e.nin; i++) {
            pc_cx_consumed(e.cx, VT_B, e.pos[i]);
            /* 'p' answers, 's' is counted, 'e' ends a stream, 'q' quits */
            if (e.kind[i] == 'p' || e.kind[i] == 'e')
                s_ex_send(&e, 'r', e.kind[i] == 'p' ? size : 1);
            quit |= e.kind[i] == 'q';
        }
        e.nin = 0;
    }
    zmq_msg_close(&e.id);
    if (e.xl)
        pc_xlink_destroy(&e.xl);
    else
        zmq_close(e.peer);
    zmq_close(e.dep);
    pc_wbuf_free(&e.dets);
    pc_cx_destroy(&e.cx);
}

/* ===================================================================
 * The measurements
 * =================================================================== */

/* Waits for the answer to what VT A sent. */
static void s_wait_answer(ex *e)
{
    while (!e->nin)
        s_ex_wait(e);
    for (int i = 0; i < e->nin; i++)
        pc_cx_consumed(e->cx, VT_A, e->pos[i]);
    e->nin = 0;
}

static double s_pingpong(ex *e, long n, long warm, size_t size)
{
    double t0 = 0;
    for (long i = 0; i < warm + n; i++) {
        if (i == warm)
            t0 = bench_now();
        if (s_threads) {
            s_vt_send(e, 'p');
            s_vt_recv(e);
            continue;
        }
        s_ex_send(e, 'p', size);
        s_wait_answer(e);
    }
    return bench_now() - t0;
}

/* threads: VT A's executor loop, on a thread of its own. */
static void *s_loop_a(void *arg)
{
    ex *e = arg;
    while (!s_loop_sends(e)) {
        s_ex_wait(e);
        s_loop_hand(e, VT_A);
    }
    return NULL;
}

static double s_stream(ex *e, long n, size_t size)
{
    double t0 = bench_now();
    if (s_threads) {
        for (long i = 0; i < n; i++)
            s_vt_send(e, 's');
        s_vt_send(e, 'e');
        s_vt_recv(e);
        return bench_now() - t0;
    }
    for (long i = 0; i < n; i++) {
        s_ex_send(e, 's', size);
        /* what came in meanwhile (watermarks) is handled every so often */
        zmq_pollitem_t it = {e->dep, 0, ZMQ_POLLIN, 0};
        while (i % 64 == 0 && zmq_poll(&it, 1, 0) > 0)
            s_ex_frame(e, e->dep, true);
    }
    s_ex_send(e, 'e', 1);
    s_wait_answer(e);
    return bench_now() - t0;
}

/* Runs `run` in a child (the receiver when dep_ep is given, else the
 * deployer); *ep gets the endpoint it bound. */
static pid_t s_fork_child(bool receiver, const char *dep_ep, size_t size, char ep[128])
{
    int fds[2];
    if (pipe(fds))
        s_die("pipe");
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        void *ctx = zmq_ctx_new();
        if (receiver)
            s_receiver(ctx, dep_ep, fds[1], size);
        else
            s_deployer(ctx, fds[1]);
        zmq_ctx_term(ctx);
        _exit(0);
    }
    close(fds[1]);
    ssize_t n = read(fds[0], ep, 127);
    close(fds[0]);
    if (n <= 0)
        s_die("a child did not start");
    ep[n] = 0;
    return pid;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    long size = argc > 2 ? atol(argv[2]) : 1024;
    s_deplog = argc > 3 && !strcmp(argv[3], "deplog");
    s_self = argc > 3 && !strcmp(argv[3], "self");
    s_own = s_self || (argc > 3 && !strcmp(argv[3], "own"));
    s_threads = s_own || (argc > 3 && !strcmp(argv[3], "threads"));
    if (rounds < 1 || rounds > 100 || size < 1 || size > (1 << 20) ||
        (argc > 3 && !s_deplog && !s_threads) || argc > 4) {
        fprintf(stderr, "usage: bench_direct [ROUNDS 1..100] [SIZE 1..1048576] "
                        "[deplog|threads|own|self]\n");
        return 2;
    }
    char dep_ep[128], peer_ep[128];
    pid_t d = s_fork_child(false, NULL, 0, dep_ep);
    /* own: A's ROUTER is bound before B starts, so that B can connect to it */
    void *actx = s_own ? zmq_ctx_new() : NULL;
    pc_xlink *axl = NULL;
    if (s_own && pc_xlink_new(&axl, actx, 0, 1, "127.0.0.1", 0, NULL, s_a_ep))
        s_die("executor A's links");
    pid_t b = s_fork_child(true, dep_ep, (size_t)size, peer_ep);
    void *ctx = s_own ? actx : zmq_ctx_new();
    ex a;
    s_ex_init(&a, ctx, 0, VT_A, VT_B, dep_ep);
    if (s_own) {
        a.xl = axl;
        a.peer = pc_xlink_socket(axl);
        if (pc_xlink_peer(axl, 1, peer_ep))
            s_die("connect");
    } else {
        a.peer = zmq_socket(ctx, ZMQ_DEALER);
        if (zmq_connect(a.peer, peer_ep))
            s_die("connect");
    }
    a.size = (size_t)size;
    pthread_t loop;
    if (s_threads && pthread_create(&loop, NULL, s_loop_a, &a))
        s_die("thread");
    zb_pair z;
    if (zb_up(&z))
        s_die("the libzmq child did not start");
    double lz[100], le[100], sz[100], se[100];
    for (int r = 0; r < rounds; r++) {
        lz[r] = zb_pingpong(&z, PP_N, PP_N / 10, (size_t)size) / PP_N * 1e6;
        le[r] = s_pingpong(&a, PP_N, PP_N / 10, (size_t)size) / PP_N * 1e6;
        sz[r] = ST_N / zb_stream(&z, ST_N, (size_t)size);
        se[r] = ST_N / s_stream(&a, ST_N, (size_t)size);
    }
    zb_down(&z);
    if (s_threads) {
        s_vt_send(&a, 'q');
        pthread_mutex_lock(&a.mu);
        a.stop = true;
        pthread_mutex_unlock(&a.mu);
        s_vt_send(&a, 'x');
        pthread_join(loop, NULL);
    } else {
        s_ex_send(&a, 'q', 1);
    }
    void *q = zmq_socket(ctx, ZMQ_DEALER);
    zmq_connect(q, dep_ep);
    zmq_send(q, "q", 1, 0);
    waitpid(b, NULL, 0);
    waitpid(d, NULL, 0);
    double mlz = bench_median(lz, rounds), mle = bench_median(le, rounds);
    double msz = bench_median(sz, rounds), mse = bench_median(se, rounds);
    pc_cx_stats st = pc_cx_stats_of(a.cx);
    printf("%d rounds, %ld-byte messages%s\n\n", rounds, size,
           s_deplog    ? ", every message also logged by the deployer (deplog)"
           : s_self    ? ", each VT on a thread of its own that sends and receives itself (self)"
           : s_own     ? ", each VT on a thread of its own that sends itself (own)"
           : s_threads ? ", each VT on a thread of its own (threads)"
                       : "");
    printf("| measure | plain libzmq | engines, direct | ratio |\n|---|---|---|---|\n");
    printf("| round trip (us) | %.1f | %.1f | %.2fx |\n", mlz, mle, mle / mlz);
    printf("| stream (msgs/s) | %.0f | %.0f | %.1f%% |\n", msz, mse, 100.0 * mse / msz);
    printf("\ndeterminants held unstable at the end by the sender: %zu\n", st.unstable);
    zmq_close(q);
    if (a.xl)
        pc_xlink_destroy(&a.xl);
    else
        zmq_close(a.peer);
    zmq_close(a.dep);
    pc_wbuf_free(&a.dets);
    pc_cx_destroy(&a.cx);
    zmq_ctx_term(ctx);
    return 0;
}
