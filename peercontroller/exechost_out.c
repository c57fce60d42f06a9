/* exechost_out.c - what an executor sends its daemon (exechost_private.h):
 * records queued for the sender thread, which writes them in order; the
 * runtime's callbacks that make them (a VT's end, its images, its
 * outputs, which its own thread writes when the channel is free, and
 * failed captures); and the fault report of an executor process.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "envelope.h"
#include "exechost_private.h"
#include "lev_errors.h"
#include "lev_task.h"
#include "rt.h"
/* ===================================================================
 * Fault reporting (an executor process only)
 * =================================================================== */

static int s_crash_fd = -1;  /* the channel's socket */
static atomic_int s_sending; /* sends in progress on the channel */
static atomic_int s_crashed; /* a fault handler owns the channel */
static const int s_fault_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

/* Writes one CRASH record naming the VT of the faulting thread, once no
 * send is in the middle of a record (waiting at most 2 s), then dies of
 * the signal. Async-signal-safe: the record is encoded on the stack
 * (pc_hdr_encode is pure) and written with send(2). */
static void s_fault(int sig)
{
    if (atomic_exchange(&s_crashed, 1) == 0) {
        rt_vt *vt = rt_vt_current();
        pc_hdr h = pc_hdr_make(PC_X_CRASH, 0, vt ? vt->id : 0, vt ? vt->epoch : 0, 0);
        h.len = 4;
        uint8_t rec[PC_HDR_LEN + 4];
        pc_hdr_encode(&h, rec);
        rt_le32_put(rec + PC_HDR_LEN, (uint32_t)sig);
        struct timespec ms = {0, 1000000};
        for (int i = 0; i < 2000 && atomic_load(&s_sending); i++)
            nanosleep(&ms, NULL);
        for (size_t off = 0; !atomic_load(&s_sending) && off < sizeof rec;) {
            ssize_t w = send(s_crash_fd, rec + off, sizeof rec - off, MSG_NOSIGNAL);
            if (w > 0)
                off += (size_t)w;
            else if (w < 0 && errno != EINTR)
                break;
        }
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Installs s_fault for the fault signals. */
void pc_xh_fault_handlers(int fd)
{
    s_crash_fd = fd;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = s_fault;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof s_fault_sigs / sizeof s_fault_sigs[0]; i++)
        sigaddset(&sa.sa_mask, s_fault_sigs[i]);
    for (size_t i = 0; i < sizeof s_fault_sigs / sizeof s_fault_sigs[0]; i++)
        sigaction(s_fault_sigs[i], &sa, NULL);
}

/* ===================================================================
 * Sending
 * =================================================================== */

/* A new record to send with an empty head (NULL on exhaustion). */
xh_out *pc_xh_out_new(uint16_t type, uint64_t vt, uint32_t epoch, uint64_t seq)
{
    xh_out *o = calloc(1, sizeof *o);
    if (o) {
        o->hdr = pc_hdr_make(type, 0, vt, epoch, seq);
        pc_wbuf_init(&o->head);
        o->slot = -1;
    }
    return o;
}

void pc_xh_out_free(xh_out *o)
{
    pc_wbuf_free(&o->head);
    if (o->slot >= 0)
        pc_slots_release(o->slots, o->slot); /* never lent: free again */
    else
        free(o->bulk);
    free(o->tail);
    free(o);
}

/* Under h->mu: unlinks the queued records `drop` selects and frees them. */
void pc_xh_queue_drop_locked(xh_host *h, bool (*drop)(const xh_out *, const pc_hdr *),
                             const pc_hdr *key)
{
    xh_out **pp = &h->qhead, *last = NULL;
    while (*pp) {
        xh_out *o = *pp;
        if (drop(o, key)) {
            *pp = o->next;
            pc_xh_out_free(o);
        } else {
            last = o;
            pp = &o->next;
        }
    }
    h->qtail = last;
}

/* An older periodic image of the same VT incarnation. */
static bool s_is_older_image(const xh_out *o, const pc_hdr *k)
{
    return (o->hdr.type == PC_X_IMAGE || o->hdr.type == PC_X_IMAGE_SLOT) && o->hdr.vt == k->vt &&
           o->hdr.epoch == k->epoch;
}

/* A record of VT k->vt (of any VT if 0) of an epoch below k->epoch. */
bool pc_xh_is_canceled(const xh_out *o, const pc_hdr *k)
{
    return o->hdr.vt && (!k->vt || o->hdr.vt == k->vt) && o->hdr.epoch < k->epoch;
}

/* Under h->mu: appends a record for the sender (a periodic image drops
 * the older one of its VT still queued). A NULL or failed record is
 * dropped with a note. */
void pc_xh_queue_locked(xh_host *h, xh_out *o)
{
    if (!o || o->head.err) {
        fprintf(stderr, "levpeer executor: no memory for a %s record; dropped\n",
                o ? pc_type_name(o->hdr.type) : "reply");
        if (o)
            pc_xh_out_free(o);
        return;
    }
    if (o->hdr.type == PC_X_IMAGE || o->hdr.type == PC_X_IMAGE_SLOT)
        pc_xh_queue_drop_locked(h, s_is_older_image, &o->hdr);
    o->next = NULL;
    if (h->qtail)
        h->qtail->next = o;
    else
        h->qhead = o;
    h->qtail = o;
    pthread_cond_signal(&h->out_cv);
}

void pc_xh_queue(xh_host *h, xh_out *o)
{
    pthread_mutex_lock(&h->mu);
    pc_xh_queue_locked(h, o);
    pthread_mutex_unlock(&h->mu);
}

/* Writes one record unless a fault handler owns the channel; with `try`,
 * only if the write can start at once (pc_chan_try_send: 0 if not). */
static int s_write(xh_host *h, pc_hdr hdr, const struct iovec *parts, int n, bool try)
{
    atomic_fetch_add(&s_sending, 1);
    int rc = atomic_load(&s_crashed) ? LEV_EPEER
             : try                   ? pc_chan_try_send(h->chan, hdr, parts, n)
                                     : pc_chan_send(h->chan, hdr, parts, n);
    atomic_fetch_sub(&s_sending, 1);
    return rc;
}

/* Lends the slot of an X_IMAGE_SLOT record to the daemon and writes the
 * record, the slot's memfd along the first time. */
static int s_send_slot(xh_host *h, xh_out *o)
{
    pc_slot_lend l;
    pc_slots_lend(o->slots, o->slot, &l);
    o->slot = -1; /* the daemon's until it gives it back */
    uint8_t head[PC_SLOT_LEND_LEN];
    pc_slot_lend_encode(&l, head);
    struct iovec part = {.iov_base = head, .iov_len = sizeof head};
    atomic_fetch_add(&s_sending, 1);
    int rc = atomic_load(&s_crashed) ? LEV_EPEER
             : l.fd >= 0             ? pc_chan_send_fd(h->chan, o->hdr, &part, 1, l.fd)
                                     : pc_chan_send(h->chan, o->hdr, &part, 1);
    atomic_fetch_sub(&s_sending, 1);
    return rc;
}

/* Writes a queued record. */
static int s_send(xh_host *h, xh_out *o)
{
    if (o->slot >= 0)
        return s_send_slot(h, o);
    struct iovec parts[3] = {{.iov_base = o->head.data, .iov_len = o->head.len},
                             {.iov_base = o->bulk, .iov_len = o->bulk_len},
                             {.iov_base = o->tail, .iov_len = o->tail_len}};
    return s_write(h, o->hdr, parts, 3, false);
}

/* The sender thread: writes queued records in order until told to stop
 * and the queue is empty. Not registered with the collector: it touches
 * only malloc'd memory. */
void *pc_xh_sender_main(void *arg)
{
    xh_host *h = arg;
    pthread_mutex_lock(&h->mu);
    for (;;) {
        while ((!h->qhead && !h->qstop) || h->writing)
            pthread_cond_wait(&h->out_cv, &h->mu);
        xh_out *o = h->qhead;
        if (!o)
            break;
        h->qhead = o->next;
        if (!h->qhead)
            h->qtail = NULL;
        bool failed = h->send_failed;
        h->writing = true;
        pthread_mutex_unlock(&h->mu);
        int rc = failed ? LEV_EPEER : s_send(h, o);
        pc_xh_out_free(o);
        pthread_mutex_lock(&h->mu);
        h->writing = false;
        if (rc)
            h->send_failed = true;
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

/* Queues a record with i32 err and s detail (MODULE_OK, FAILED, STOPPED
 * without an image). */
void pc_xh_queue_err(xh_host *h, uint16_t type, uint64_t vt, uint32_t epoch, uint64_t seq, int err,
                     const char *detail)
{
    xh_out *o = pc_xh_out_new(type, vt, epoch, seq);
    if (o) {
        pc_put_i32(&o->head, err);
        pc_put_str(&o->head, detail);
        if (type == PC_X_STOPPED)
            pc_put_blob(&o->head, NULL, 0);
    }
    pc_xh_queue(h, o);
}
/* ===================================================================
 * Executor callbacks (on the VTs' workers)
 * =================================================================== */

/* A record of a VT ending: i32 err, s detail, then a blob whose bytes
 * (malloc'd, taken) travel as the bulk. */
static xh_out *s_out_end(uint16_t type, const xh_vtrec *r, int err, const char *detail,
                         uint8_t *bytes, size_t len)
{
    xh_out *o = pc_xh_out_new(type, r->id, r->epoch, r->next_in);
    if (!o) {
        free(bytes);
        return NULL;
    }
    pc_put_i32(&o->head, err);
    pc_put_str(&o->head, detail);
    pc_put_u32(&o->head, (uint32_t)len);
    o->bulk = bytes;
    o->bulk_len = len;
    return o;
}

void pc_xh_on_done(rt_vt *vt, void *ud)
{
    xh_host *h = ud;
    xh_vtrec *r = vt->host;
    if (h->direct) /* its determinants before its result (pc_xh_on_output) */
        pc_xh_cx_flush(h, true);
    pthread_mutex_lock(&h->mu);
    if (!r->forget) {
        xh_out *o;
        if (vt->state == RT_VT_STOPPED) {
            /* captured and stopped in one step: its image is its end */
            o = r->stop_out;
            r->stop_out = NULL;
        } else {
            int err = vt->state == RT_VT_DONE ? 0 : vt->err ? vt->err : LEV_EFAILED;
            const char *detail = !err ? "" : vt->errdetail ? vt->errdetail : lev_strerror(err);
            if (err && r->fail_err) /* canceled here for a limit */
                err = r->fail_err, detail = r->fail_detail;
            o = s_out_end(PC_X_DONE, r, err, detail, vt->result, vt->result_len);
            vt->result = NULL; /* taken: the record frees it */
            vt->result_len = 0;
            if (o) { /* held: s_reap sends it once the outputs before it are taken */
                r->end = o;
                o = NULL;
            }
        }
        if (o)
            pc_xh_queue_locked(h, o);
    }
    r->reap_next = h->reap;
    h->reap = r;
    pthread_mutex_unlock(&h->mu);
    uint64_t one = 1;
    while (write(h->wake_fd, &one, sizeof one) < 0 && errno == EINTR)
        ;
}

/* Gives back an image buffer: to its slot, or to malloc. */
static void s_img_free(xh_host *h, uint8_t *img)
{
    int i = pc_slots_find(h->slots, img);
    if (i >= 0)
        pc_slots_release(h->slots, i);
    else
        free(img);
}

static uint8_t *s_slot_alloc(size_t len, void *ud)
{
    return pc_slots_alloc(((xh_host *)ud)->slots, len);
}

static void s_slot_release(uint8_t *img, void *ud) { s_img_free(ud, img); }

rt_img_alloc pc_xh_image_alloc(xh_host *h)
{
    return (rt_img_alloc){
        .alloc = h->slots ? s_slot_alloc : NULL, .release = s_slot_release, .ud = h};
}

/* The image in its envelope, with the VT's channel and causal states
 * (envelope.h), a copy (malloc'd); gives img back. Sets *next_in to the
 * input position the states stand at (or below). NULL on exhaustion. */
static uint8_t *s_envelope(xh_host *h, rt_vt *vt, uint8_t *img, size_t len, size_t *elen,
                           uint64_t *next_in)
{
    uint8_t *tail = NULL;
    size_t tlen = 0;
    uint8_t *env = NULL;
    if (pc_xh_state_tail(h, vt, &tail, &tlen, next_in) == 0)
        env = pc_env_make(tail, tlen, img, len, elen);
    free(tail);
    s_img_free(h, img);
    return env;
}

/* The record of an image, with no copy of it: an image in a slot becomes
 * its envelope in place (X_IMAGE_SLOT, or X_STOPPED_SLOT for a stop); a
 * periodic one from malloc goes between a head that holds the envelope's
 * first bytes and a tail, the channel state (X_IMAGE). slot: img's
 * (pc_slots_find). Gives img back on failure (NULL). */
static xh_out *s_image_out(xh_host *h, rt_vt *vt, uint8_t *img, size_t len, int slot,
                           uint64_t *next_in)
{
    xh_vtrec *r = vt->host;
    uint8_t *chan = NULL; /* the envelope's tail */
    size_t clen = 0;
    bool stop = vt->capture_why == RT_WANT_STOP;
    uint16_t type = slot < 0 ? PC_X_IMAGE : stop ? PC_X_STOPPED_SLOT : PC_X_IMAGE_SLOT;
    bool ok = pc_xh_state_tail(h, vt, &chan, &clen, next_in) == 0;
    xh_out *o = ok ? pc_xh_out_new(type, r->id, r->epoch, *next_in) : NULL;
    ok = o && clen <= UINT32_MAX && len <= UINT32_MAX - PC_ENV_HEAD - clen;
    if (ok && slot >= 0) {
        ok = pc_slots_finish(h->slots, slot, len, chan, clen) == 0; /* frees the slot if not */
        img = NULL;
        if (ok) {
            o->slots = h->slots;
            o->slot = slot;
        }
    } else if (ok) {
        pc_put_u32(&o->head, (uint32_t)(PC_ENV_HEAD + clen + len));
        pc_put_u32(&o->head, PC_ENV_MAGIC);
        pc_put_u32(&o->head, (uint32_t)clen);
        o->bulk = img;
        o->bulk_len = len;
        o->tail = chan;
        o->tail_len = clen;
        img = chan = NULL;
        ok = !o->head.err;
    }
    free(chan);
    if (img)
        s_img_free(h, img);
    if (!ok && o) {
        pc_xh_out_free(o);
        o = NULL;
    }
    return o;
}

/* The STOPPED record of a stop's image from malloc: a copy in its
 * envelope (gives img back; NULL on exhaustion). */
static xh_out *s_stopped_out(xh_host *h, rt_vt *vt, uint8_t *img, size_t len, uint64_t *next_in)
{
    xh_vtrec *r = vt->host;
    size_t elen = 0;
    uint8_t *env = s_envelope(h, vt, img, len, &elen, next_in);
    xh_out *o = env ? pc_xh_out_new(PC_X_STOPPED, r->id, r->epoch, *next_in) : NULL;
    if (!o) {
        free(env);
        return NULL;
    }
    pc_put_i32(&o->head, 0);
    pc_put_str(&o->head, "");
    pc_put_u32(&o->head, (uint32_t)elen);
    o->bulk = env;
    o->bulk_len = elen;
    return o;
}

/* A VT whose state outgrew the VC's limit fails with LEV_ERANGE, which its
 * client sees: its image goes nowhere, and it is canceled with that
 * error for its DONE. True if so (img given back). */
static bool s_over_limit(xh_host *h, rt_vt *vt, uint8_t *img, size_t len)
{
    xh_vtrec *r = vt->host;
    if (!h->lim_state || len <= h->lim_state)
        return false;
    s_img_free(h, img);
    bool first = false;
    pthread_mutex_lock(&h->mu);
    if (!r->fail_err) {
        first = true;
        r->fail_err = LEV_ERANGE;
        snprintf(r->fail_detail, sizeof r->fail_detail,
                 "its state (a checkpoint image of %zu bytes) is above the VC's limit of %llu "
                 "bytes per VT (levpeer --max-vt-memory)",
                 len, (unsigned long long)h->lim_state);
    }
    pthread_mutex_unlock(&h->mu);
    if (first) {
        fprintf(stderr, "levpeer executor: virtual thread %llu fails: %s\n",
                (unsigned long long)r->id, r->fail_detail);
        if (vt->capture_why != RT_WANT_STOP) /* a stop ends it anyway */
            rt_exec_cancel(vt);
    }
    return true;
}

void pc_xh_on_image(rt_vt *vt, uint8_t *img, size_t len, void *ud)
{
    xh_host *h = ud;
    xh_vtrec *r = vt->host;
    uint64_t next_in = 0;
    bool stop = vt->capture_why == RT_WANT_STOP;
    if (s_over_limit(h, vt, img, len)) {
        if (stop) { /* it ends with the stop: its end is its error */
            xh_out *o = s_out_end(PC_X_DONE, r, r->fail_err, r->fail_detail, NULL, 0);
            pthread_mutex_lock(&h->mu);
            if (r->stop_out)
                pc_xh_out_free(r->stop_out);
            r->stop_out = o;
            pthread_mutex_unlock(&h->mu);
        }
        return;
    }
    int slot = pc_slots_find(h->slots, img);
    xh_out *o = stop && slot < 0 ? s_stopped_out(h, vt, img, len, &next_in)
                                 : s_image_out(h, vt, img, len, slot, &next_in);
    if (!o || o->head.err) {
        fprintf(stderr, "levpeer executor: no memory for the image of virtual thread %llu\n",
                (unsigned long long)r->id);
        if (o)
            pc_xh_out_free(o);
        return;
    }
    pthread_mutex_lock(&h->mu);
    r->next_in = next_in;
    if (r->forget) {
        pc_xh_out_free(o);
    } else if (stop) {
        /* the image of capture-and-stop: on_done follows with RT_VT_STOPPED */
        if (r->stop_out)
            pc_xh_out_free(r->stop_out);
        r->stop_out = o;
    } else {
        pc_xh_queue_locked(h, o);
    }
    pthread_mutex_unlock(&h->mu);
}

/* The head of an X_OUT record for output `out` ("u8 kind, u64 to, u64
 * ref, u8 keep, s name", then the u32 length of its data, which follows
 * it on the wire), into buf (S_OUT_HEAD bytes; a name is at most
 * LEV_NAME_MAX bytes, as the runtime checks). Its length. */
#define S_OUT_HEAD (1 + 8 + 8 + 1 + 4 + LEV_NAME_MAX + 4)
static size_t s_out_head(const rt_out *out, uint8_t *buf)
{
    size_t nl = out->name ? strnlen(out->name, LEV_NAME_MAX) : 0, at = 0;
    buf[at++] = out->kind;
    rt_le64_put(buf + at, out->to);
    rt_le64_put(buf + at + 8, out->ref);
    at += 16;
    buf[at++] = out->keep;
    rt_le32_put(buf + at, (uint32_t)nl);
    memcpy(buf + at + 4, out->name ? out->name : "", nl);
    at += 4 + nl;
    rt_le32_put(buf + at, (uint32_t)out->len);
    return at + 4;
}

/* An output of a VT (vtchan.h): to the daemon, which passes it to the
 * deployer. Past the image of a STOP it belongs to the copy resumed
 * elsewhere. When nothing is queued and no thread writes, the VT's own
 * thread writes it, from the VT's buffer, if the socket takes it now
 * (no hand-off to the sender thread, no copy); otherwise it is queued
 * ahead of anything queued while it was tried, keeping the order. */
void pc_xh_on_output(rt_vt *vt, const rt_out *out, void *ud)
{
    xh_host *h = ud;
    xh_vtrec *r = vt->host;
    /* what it sends after a commit waits for the commit's acknowledgement,
     * so that a receiver that then reads the variable sees it */
    if (h->direct && (out->kind == RT_OUT_UNLOCK || out->kind == RT_OUT_PUT))
        pc_xh_direct_hold(h, r->id, out->seq);
    /* with direct messages the deployer has no use for the positions a
     * VT consumed (they are the executors'), and a receive that empties
     * the stream would send one per message */
    if (h->direct && out->kind == RT_OUT_CONSUMED)
        return;
    /* with direct messages an output must not reach the deployer before
     * the determinants of the inputs it depends on: they go up first, on
     * the same channel (else a recovery could order those inputs
     * otherwise than the output saw them) */
    if (h->direct)
        pc_xh_cx_flush(h, true);
    pthread_mutex_lock(&h->mu);
    if (r->forget || r->stop_out) {
        pthread_mutex_unlock(&h->mu);
        return;
    }
    uint8_t head[S_OUT_HEAD];
    size_t hlen = s_out_head(out, head);
    bool tried = false;
    if (!h->qhead && !h->writing && !h->send_failed && out->len <= UINT32_MAX) {
        h->writing = tried = true;
        pthread_mutex_unlock(&h->mu);
        struct iovec parts[2] = {{.iov_base = head, .iov_len = hlen},
                                 {.iov_base = (void *)out->data, .iov_len = out->len}};
        int rc = s_write(h, pc_hdr_make(PC_X_OUT, 0, r->id, r->epoch, out->seq), parts, 2, true);
        pthread_mutex_lock(&h->mu);
        h->writing = false;
        pthread_cond_signal(&h->out_cv); /* what was queued meanwhile goes now */
        if (rc < 0)
            h->send_failed = true;
        if (rc != 0) {
            pthread_mutex_unlock(&h->mu);
            return;
        }
    }
    xh_out *o = pc_xh_out_new(PC_X_OUT, r->id, r->epoch, out->seq);
    if (o && out->len > UINT32_MAX)
        o->head.err = LEV_ERANGE; /* (the runtime bounds a message far below) */
    else if (o) {
        pc_put_raw(&o->head, head, hlen);
        pc_put_raw(&o->head, out->data, out->len);
    }
    if (tried && o && !o->head.err) { /* ahead of what came meanwhile */
        o->next = h->qhead;
        h->qhead = o;
        if (!h->qtail)
            h->qtail = o;
        pthread_cond_signal(&h->out_cv);
    } else {
        pc_xh_queue_locked(h, o);
    }
    pthread_mutex_unlock(&h->mu);
}

void pc_xh_on_capture_error(rt_vt *vt, int err, const char *detail, void *ud)
{
    xh_host *h = ud;
    xh_vtrec *r = vt->host;
    bool print = false;
    pthread_mutex_lock(&h->mu);
    if (vt->capture_why == RT_WANT_STOP && !r->forget) {
        /* The stop failed and the VT goes on here: the daemon hears so at
         * once and forgets this copy (it resumes the VT from its newest
         * held image, and what this copy still does is of an old epoch). */
        pc_xh_queue_locked(h, s_out_end(PC_X_STOPPED, r, err, detail ? detail : "", NULL, 0));
        r->forget = true;
    } else if (!r->warned) {
        r->warned = print = true;
    }
    pthread_mutex_unlock(&h->mu);
    if (print)
        fprintf(stderr,
                "levpeer executor: checkpoint of virtual thread %llu failed: %s (%s); it goes "
                "on, later failures are not shown\n",
                (unsigned long long)r->id, lev_strerror(err), detail && *detail ? detail : "-");
}
