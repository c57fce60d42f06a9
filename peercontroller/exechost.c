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
#include <poll.h>
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

#include "chan.h"
#include "envelope.h"
#include "executor.h"
#include "image.h"
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

/* A VT of this executor. The main thread owns the record; the callbacks
 * reach it through vt->host. */
typedef struct s_vtrec {
    struct s_vtrec *live_next; /* in h->live (main thread only) */
    struct s_vtrec *reap_next; /* in h->reap (under h->mu) */
    rt_vt *vt;
    uint64_t id;
    uint32_t epoch;
    uint64_t next_in; /* input position of its newest image (the VT's worker only) */
    uint64_t oldest;  /* its oldest unacknowledged output at the last look (main thread) */
    bool heard;       /* an input or acknowledgement reached it (main thread) */
    bool draining;    /* ended, its DONE held until its outputs are acknowledged (main thread) */
    /* under h->mu */
    bool stopping;     /* STOP received */
    bool forget;       /* CANCEL received: nothing more goes out */
    uint8_t *stop_img; /* image taken for the STOP (malloc'd) */
    size_t stop_len;
    struct s_out *end; /* its DONE, queued once its outbox is empty (s_reap) */
    bool warned;       /* a failed periodic checkpoint was printed */
} s_vtrec;

/* A record queued for the sender: a structured head, then bulk bytes (an
 * image or a result, malloc'd) as they are. */
typedef struct s_out {
    struct s_out *next;
    pc_hdr hdr;
    pc_wbuf head;
    uint8_t *bulk;
    size_t bulk_len;
    uint8_t *tail; /* bytes after the bulk (malloc'd), or NULL */
    size_t tail_len;
} s_out;

typedef struct s_host {
    pc_chan *chan;
    rt_exec *ex; /* made at the first RUN or RESUME */
    int checkpoint_ms, threads;
    const lev_module **mods; /* loaded through MODULE, oldest first */
    int nmods;
    size_t capmods;
    s_vtrec *live; /* VTs running here (main thread) */
    int nvts;      /* VTs not reaped yet, canceled ones included (main thread) */
    int wake_fd;   /* eventfd: a VT ended, reap it */

    pthread_mutex_t mu;
    pthread_cond_t out_cv;
    s_out *qhead, *qtail; /* records to send */
    bool qstop;           /* the sender drains the queue and ends */
    bool writing;         /* a thread writes a record on the channel */
    bool send_failed;
    s_vtrec *reap;    /* VTs that ended, for the main thread */
    rt_ch_host chost; /* the VTs' channels go out through s_on_output */
    pthread_t sender;
    bool sender_started;
} s_host;

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
static void s_install_fault_handlers(int fd)
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

/* ===================================================================
 * Sending
 * =================================================================== */

/* A new record to send with an empty head (NULL on exhaustion). */
static s_out *s_out_new(uint16_t type, uint64_t vt, uint32_t epoch, uint64_t seq)
{
    s_out *o = calloc(1, sizeof *o);
    if (o) {
        o->hdr = pc_hdr_make(type, 0, vt, epoch, seq);
        pc_wbuf_init(&o->head);
    }
    return o;
}

static void s_out_free(s_out *o)
{
    pc_wbuf_free(&o->head);
    free(o->bulk);
    free(o->tail);
    free(o);
}

/* Under h->mu: unlinks the queued records `drop` selects and frees them. */
static void s_queue_drop_locked(s_host *h, bool (*drop)(const s_out *, const pc_hdr *),
                                const pc_hdr *key)
{
    s_out **pp = &h->qhead, *last = NULL;
    while (*pp) {
        s_out *o = *pp;
        if (drop(o, key)) {
            *pp = o->next;
            s_out_free(o);
        } else {
            last = o;
            pp = &o->next;
        }
    }
    h->qtail = last;
}

/* An older periodic image of the same VT incarnation. */
static bool s_is_older_image(const s_out *o, const pc_hdr *k)
{
    return o->hdr.type == PC_X_IMAGE && o->hdr.vt == k->vt && o->hdr.epoch == k->epoch;
}

/* A record of VT k->vt (of any VT if 0) of an epoch below k->epoch. */
static bool s_is_canceled(const s_out *o, const pc_hdr *k)
{
    return o->hdr.vt && (!k->vt || o->hdr.vt == k->vt) && o->hdr.epoch < k->epoch;
}

/* Under h->mu: appends a record for the sender (a periodic image drops
 * the older one of its VT still queued). A NULL or failed record is
 * dropped with a note. */
static void s_queue_locked(s_host *h, s_out *o)
{
    if (!o || o->head.err) {
        fprintf(stderr, "levpeer executor: no memory for a %s record; dropped\n",
                o ? pc_type_name(o->hdr.type) : "reply");
        if (o)
            s_out_free(o);
        return;
    }
    if (o->hdr.type == PC_X_IMAGE)
        s_queue_drop_locked(h, s_is_older_image, &o->hdr);
    o->next = NULL;
    if (h->qtail)
        h->qtail->next = o;
    else
        h->qhead = o;
    h->qtail = o;
    pthread_cond_signal(&h->out_cv);
}

static void s_queue(s_host *h, s_out *o)
{
    pthread_mutex_lock(&h->mu);
    s_queue_locked(h, o);
    pthread_mutex_unlock(&h->mu);
}

/* Writes one record unless a fault handler owns the channel; with `try`,
 * only if the write can start at once (pc_chan_try_send: 0 if not). */
static int s_write(s_host *h, pc_hdr hdr, const struct iovec *parts, int n, bool try)
{
    atomic_fetch_add(&s_sending, 1);
    int rc = atomic_load(&s_crashed) ? LEV_EPEER
             : try                   ? pc_chan_try_send(h->chan, hdr, parts, n)
                                     : pc_chan_send(h->chan, hdr, parts, n);
    atomic_fetch_sub(&s_sending, 1);
    return rc;
}

/* Writes a queued record. */
static int s_send(s_host *h, const s_out *o)
{
    struct iovec parts[3] = {{.iov_base = o->head.data, .iov_len = o->head.len},
                             {.iov_base = o->bulk, .iov_len = o->bulk_len},
                             {.iov_base = o->tail, .iov_len = o->tail_len}};
    return s_write(h, o->hdr, parts, 3, false);
}

/* The sender thread: writes queued records in order until told to stop
 * and the queue is empty. Not registered with the collector: it touches
 * only malloc'd memory. */
static void *s_sender_main(void *arg)
{
    s_host *h = arg;
    pthread_mutex_lock(&h->mu);
    for (;;) {
        while ((!h->qhead && !h->qstop) || h->writing)
            pthread_cond_wait(&h->out_cv, &h->mu);
        s_out *o = h->qhead;
        if (!o)
            break;
        h->qhead = o->next;
        if (!h->qhead)
            h->qtail = NULL;
        bool failed = h->send_failed;
        h->writing = true;
        pthread_mutex_unlock(&h->mu);
        int rc = failed ? LEV_EPEER : s_send(h, o);
        s_out_free(o);
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
static void s_queue_err(s_host *h, uint16_t type, uint64_t vt, uint32_t epoch, uint64_t seq,
                        int err, const char *detail)
{
    s_out *o = s_out_new(type, vt, epoch, seq);
    if (o) {
        pc_put_i32(&o->head, err);
        pc_put_str(&o->head, detail);
        if (type == PC_X_STOPPED)
            pc_put_blob(&o->head, NULL, 0);
    }
    s_queue(h, o);
}

/* Queues FAILED for a VT that did not start, with the thread's error
 * detail, and returns err. */
static int s_failed(s_host *h, const pc_hdr *req, int err)
{
    const char *d = lev_errdetail();
    s_queue_err(h, PC_X_FAILED, req->vt, req->epoch, req->seq, err,
                d && *d ? d : lev_strerror(err));
    return err;
}

/* ===================================================================
 * Executor callbacks (on the VTs' workers)
 * =================================================================== */

/* A record of a VT ending: i32 err, s detail, then a blob whose bytes
 * (malloc'd, taken) travel as the bulk. */
static s_out *s_out_end(uint16_t type, const s_vtrec *r, int err, const char *detail,
                        uint8_t *bytes, size_t len)
{
    s_out *o = s_out_new(type, r->id, r->epoch, r->next_in);
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

static void s_on_done(rt_vt *vt, void *ud)
{
    s_host *h = ud;
    s_vtrec *r = vt->host;
    pthread_mutex_lock(&h->mu);
    if (!r->forget) {
        s_out *o;
        if (vt->state == RT_VT_STOPPED) {
            /* captured and stopped in one step: its image is its end */
            o = s_out_end(PC_X_STOPPED, r, 0, "", r->stop_img, r->stop_len);
            r->stop_img = NULL;
        } else {
            int err = vt->state == RT_VT_DONE ? 0 : vt->err ? vt->err : LEV_EFAILED;
            const char *detail = !err ? "" : vt->errdetail ? vt->errdetail : lev_strerror(err);
            o = s_out_end(PC_X_DONE, r, err, detail, vt->result, vt->result_len);
            vt->result = NULL; /* taken: the record frees it */
            vt->result_len = 0;
            if (o) { /* held: s_reap sends it once the outputs before it are taken */
                r->end = o;
                o = NULL;
            }
        }
        if (o)
            s_queue_locked(h, o);
    }
    r->reap_next = h->reap;
    h->reap = r;
    pthread_mutex_unlock(&h->mu);
    uint64_t one = 1;
    while (write(h->wake_fd, &one, sizeof one) < 0 && errno == EINTR)
        ;
}

/* The image in its envelope, with the VT's channel state (envelope.h);
 * frees img. Sets *next_in to the input position the state stands at (or
 * below). NULL on exhaustion. */
static uint8_t *s_envelope(rt_vt *vt, uint8_t *img, size_t len, size_t *elen, uint64_t *next_in)
{
    *next_in = rt_ch_next_in(vt); /* before the save: never above what it holds */
    uint8_t *chan = NULL;
    size_t clen = 0;
    uint8_t *env = NULL;
    if (rt_ch_save(vt, &chan, &clen) == 0)
        env = pc_env_make(chan, clen, img, len, elen);
    free(chan);
    free(img);
    return env;
}

static void s_on_image(rt_vt *vt, uint8_t *img, size_t len, void *ud)
{
    s_host *h = ud;
    s_vtrec *r = vt->host;
    uint64_t next_in = 0;
    s_out *o = NULL;
    if (vt->capture_why == RT_WANT_STOP) {
        img = s_envelope(vt, img, len, &len, &next_in);
    } else {
        /* a periodic image goes as it is, between a head that holds the
         * envelope's first bytes and a tail, the channel state: no copy */
        next_in = rt_ch_next_in(vt); /* before the save: never above what it holds */
        uint8_t *chan = NULL;
        size_t clen = 0;
        o = s_out_new(PC_X_IMAGE, r->id, r->epoch, next_in);
        if (o && rt_ch_save(vt, &chan, &clen) == 0 && clen <= UINT32_MAX &&
            len <= UINT32_MAX - PC_ENV_HEAD - clen) {
            pc_put_u32(&o->head, (uint32_t)(PC_ENV_HEAD + clen + len));
            pc_put_u32(&o->head, PC_ENV_MAGIC);
            pc_put_u32(&o->head, (uint32_t)clen);
            o->bulk = img;
            o->bulk_len = len;
            o->tail = chan;
            o->tail_len = clen;
            chan = NULL;
        } else {
            if (o)
                s_out_free(o);
            o = NULL;
            free(img);
        }
        free(chan);
        img = o && !o->head.err ? o->bulk : NULL;
    }
    if (!img) {
        fprintf(stderr, "levpeer executor: no memory for the image of virtual thread %llu\n",
                (unsigned long long)r->id);
        if (o)
            s_out_free(o);
        return;
    }
    pthread_mutex_lock(&h->mu);
    r->next_in = next_in;
    if (r->forget) {
        if (o)
            s_out_free(o);
        else
            free(img);
    } else if (!o) {
        /* the image of capture-and-stop: on_done follows with RT_VT_STOPPED */
        free(r->stop_img);
        r->stop_img = img;
        r->stop_len = len;
    } else {
        s_queue_locked(h, o);
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
static void s_on_output(rt_vt *vt, const rt_out *out, void *ud)
{
    s_host *h = ud;
    s_vtrec *r = vt->host;
    pthread_mutex_lock(&h->mu);
    if (r->forget || r->stop_img) {
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
    s_out *o = s_out_new(PC_X_OUT, r->id, r->epoch, out->seq);
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
        s_queue_locked(h, o);
    }
    pthread_mutex_unlock(&h->mu);
}

static void s_on_capture_error(rt_vt *vt, int err, const char *detail, void *ud)
{
    s_host *h = ud;
    s_vtrec *r = vt->host;
    bool print = false;
    pthread_mutex_lock(&h->mu);
    if (vt->capture_why == RT_WANT_STOP && !r->forget) {
        /* The stop failed and the VT goes on here: the daemon hears so at
         * once and forgets this copy (it resumes the VT from its newest
         * held image, and what this copy still does is of an old epoch). */
        s_queue_locked(h, s_out_end(PC_X_STOPPED, r, err, detail ? detail : "", NULL, 0));
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

/* ===================================================================
 * VTs
 * =================================================================== */

/* The executor, made at first use with the configured options. */
static int s_exec(s_host *h, rt_exec **out)
{
    if (!h->ex) {
        rt_exec_opts o = {.workers = h->threads,
                          .checkpoint_ms = h->checkpoint_ms,
                          .on_done = s_on_done,
                          .on_image = s_on_image,
                          .on_capture_error = s_on_capture_error,
                          .chan = &h->chost,
                          .ud = h};
        int rc = rt_exec_new(&h->ex, &o);
        if (rc)
            return rc;
    }
    *out = h->ex;
    return 0;
}

static s_vtrec *s_live_find(s_host *h, uint64_t id)
{
    for (s_vtrec *r = h->live; r; r = r->live_next)
        if (r->id == id)
            return r;
    return NULL;
}

static void s_live_unlink(s_host *h, const s_vtrec *r)
{
    for (s_vtrec **pp = &h->live; *pp; pp = &(*pp)->live_next)
        if (*pp == r) {
            *pp = r->live_next;
            return;
        }
}

static void s_vtrec_free(s_vtrec *r)
{
    free(r->stop_img);
    if (r->end)
        s_out_free(r->end);
    free(r);
}

/* Gives a new VT its identity and a record, and spawns it; on failure the
 * VT is destroyed and FAILED queued. The caller checked the id. */
static int s_start(s_host *h, const pc_hdr *req, rt_vt *vt)
{
    rt_exec *ex = NULL;
    int rc = s_exec(h, &ex);
    s_vtrec *r = rc ? NULL : calloc(1, sizeof *r);
    if (!rc && !r)
        rc = rt_err(LEV_ENOMEM, "no memory for a virtual thread's record");
    if (!rc)
        rc = rt_vt_set_identity(vt, req->vt, req->epoch);
    if (!rc) {
        r->vt = vt;
        r->id = req->vt;
        r->epoch = req->epoch;
        vt->host = r;
        /* its inputs from where it stands, then what it had not had
         * acknowledged (the deployer drops what it has) */
        s_out *o = s_out_new(PC_X_RESYNC, r->id, r->epoch, rt_ch_next_in(vt));
        s_queue(h, o);
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
static void s_finish(s_host *h, s_vtrec *r)
{
    s_live_unlink(h, r);
    pthread_mutex_lock(&h->mu);
    if (r->end && !r->forget) {
        s_queue_locked(h, r->end);
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
static bool s_drains(s_host *h, s_vtrec *r)
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
static void s_reap(s_host *h)
{
    pthread_mutex_lock(&h->mu);
    s_vtrec *list = h->reap;
    h->reap = NULL;
    pthread_mutex_unlock(&h->mu);
    while (list) {
        s_vtrec *r = list;
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
static int s_id_free(s_host *h, const pc_hdr *req)
{
    s_reap(h);
    if (req->vt <= 1)
        return s_failed(
            h, req,
            rt_err(LEV_EINVAL, "virtual thread id %llu is reserved", (unsigned long long)req->vt));
    s_vtrec *r = s_live_find(h, req->vt);
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
    return 0;
}

/* ===================================================================
 * Requests
 * =================================================================== */

static void s_config(s_host *h, pc_rbuf *rb)
{
    int ck = pc_get_i32(rb), threads = pc_get_i32(rb);
    if (!pc_rbuf_done(rb)) {
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
}

/* Checks and loads a module; 0 or an error with its detail. */
static int s_load_module(s_host *h, pc_rbuf *rb)
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

static void s_module(s_host *h, const pc_hdr *req, pc_rbuf *rb)
{
    int rc = s_load_module(h, rb);
    s_queue_err(h, PC_X_MODULE_OK, 0, 0, req->seq, rc, rc ? lev_errdetail() : "");
}

static void s_run(s_host *h, const pc_hdr *req, pc_rbuf *rb)
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
            s_start(h, req, vt);
    }
    free(task);
}

static void s_resume(s_host *h, const pc_hdr *req, pc_rbuf *rb)
{
    const void *env;
    size_t envlen;
    pc_get_blob(rb, &env, &envlen);
    if (!pc_rbuf_done(rb)) {
        s_failed(h, req, rt_err(LEV_EINVAL, "malformed RESUME: %s", pc_rbuf_why(rb)));
        return;
    }
    const uint8_t *chan, *img;
    size_t clen, len;
    const char *bad = NULL;
    if (!pc_env_split(env, envlen, &chan, &clen, &img, &len, &bad)) {
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
        s_start(h, req, vt);
}

/* Sends a VT's outbox again (one that ended has left the runtime's
 * executor: its outbox goes through this host's channel directly). */
static void s_resend(s_host *h, s_vtrec *r)
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
static void s_stale_outboxes(s_host *h)
{
    for (s_vtrec *r = h->live; r; r = r->live_next) {
        if (!r->heard && !r->draining)
            s_queue(h, s_out_new(PC_X_RESYNC, r->id, r->epoch, rt_ch_next_in(r->vt)));
        uint64_t o = rt_ch_oldest_out(r->vt);
        if (o && o == r->oldest)
            s_resend(h, r);
        r->oldest = o;
    }
}

/* A VT's input (X_IN) or acknowledgement (X_ACK) from its deployer. */
static void s_chan_in(s_host *h, const pc_hdr *req, pc_rbuf *rb)
{
    s_vtrec *r = s_live_find(h, req->vt);
    if (!r || r->epoch != req->epoch)
        return; /* an older incarnation's, or it ended */
    bool ack = req->type == PC_X_ACK;
    uint8_t resend = 0; /* X_ACK: u8 resend (1: an output after seq was lost), or no payload */
    rt_in in = {.d = req->seq};
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
        pc_get_blob(rb, &in.data, &in.len);
    }
    if (!pc_rbuf_done(rb)) {
        fprintf(stderr, "levpeer executor: malformed %s for virtual thread %llu: %s\n",
                ack ? "acknowledgement" : "input", (unsigned long long)req->vt, pc_rbuf_why(rb));
        return;
    }
    r->heard = true;
    if (ack) {
        rt_ch_ack(r->vt, req->seq);
        if (r->draining && !rt_ch_oldest_out(r->vt))
            s_finish(h, r); /* its outputs taken: its DONE goes now */
        else if (resend)
            s_resend(h, r);
        return;
    }
    if (r->draining)
        return; /* it ended: an input it can no longer take */
    int rc = rt_ch_deliver(r->vt, &in);
    if (rc == LEV_ERANGE) /* a gap: ask again from where it stands */
        s_queue(h, s_out_new(PC_X_RESYNC, r->id, r->epoch, rt_ch_next_in(r->vt)));
    else if (rc < 0)
        fprintf(stderr, "levpeer executor: input %llu of virtual thread %llu refused: %s (%s)\n",
                (unsigned long long)req->seq, (unsigned long long)req->vt, lev_strerror(rc),
                lev_errdetail());
}

/* STOP of one VT (r NULL: it is not here). */
static void s_stop_one(s_host *h, const pc_hdr *req, s_vtrec *r)
{
    if (!r) {
        s_queue_err(h, PC_X_STOPPED, req->vt, req->epoch, req->seq, LEV_ENOVT,
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

static void s_stop(s_host *h, const pc_hdr *req)
{
    if (req->vt) {
        s_stop_one(h, req, s_live_find(h, req->vt));
        return;
    }
    for (s_vtrec *r = h->live; r; r = r->live_next)
        s_stop_one(h, req, r);
}

static void s_cancel(s_host *h, const pc_hdr *req)
{
    for (s_vtrec **pp = &h->live; *pp;) {
        s_vtrec *r = *pp;
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
    s_queue_drop_locked(h, s_is_canceled, req);
    pthread_mutex_unlock(&h->mu);
}

/* Acts on one request from the daemon. */
static void s_handle(s_host *h, const pc_hdr *req, const uint8_t *payload)
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
    default:
        fprintf(stderr, "levpeer executor: unexpected %s record; ignored\n",
                pc_type_name(req->type));
    }
}

/* ===================================================================
 * Main loop
 * =================================================================== */

/* Serves the channel until it closes; 0, or 1 when it broke. */
static int s_serve(s_host *h)
{
    struct pollfd p[2] = {{.fd = pc_chan_fd(h->chan), .events = POLLIN},
                          {.fd = h->wake_fd, .events = POLLIN}};
    struct timespec last;
    clock_gettime(CLOCK_MONOTONIC, &last);
    for (;;) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long since = (now.tv_sec - last.tv_sec) * 1000 + (now.tv_nsec - last.tv_nsec) / 1000000;
        if (since >= S_STALE_MS) {
            s_stale_outboxes(h);
            last = now;
            since = 0;
        }
        if (poll(p, 2, (int)(S_STALE_MS - since)) < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "levpeer executor: poll: %s\n", strerror(errno));
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
            if (r == 0)
                break;
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
static void s_shutdown(s_host *h)
{
    rt_exec_destroy(&h->ex); /* cancels what runs; their DONE cannot be sent */
    s_reap(h);
    for (s_vtrec *r = h->live, *next; r; r = next) {
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
    for (s_out *o = h->qhead, *next; o; o = next) {
        next = o->next;
        s_out_free(o);
    }
    /* VTs whose executor gave up on them (native code that never reached
     * a safe point) stay allocated: their workers may still use them. */
    if (h->wake_fd >= 0)
        close(h->wake_fd);
    pc_chan_destroy(&h->chan);
    free(h->mods);
    pthread_cond_destroy(&h->out_cv);
    pthread_mutex_destroy(&h->mu);
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
    s_host h = {.wake_fd = -1};
    h.chost = (rt_ch_host){.out = s_on_output, .ud = &h};
    pthread_mutex_init(&h.mu, NULL);
    pthread_cond_init(&h.out_cv, NULL);
    h.chan = pc_chan_new(fd, 0);
    h.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    int rc = 1;
    if (!h.chan || h.wake_fd < 0) {
        fprintf(stderr, "levpeer executor: cannot set up its channel: %s\n", strerror(errno));
    } else if (pthread_create(&h.sender, NULL, s_sender_main, &h) != 0) {
        fprintf(stderr, "levpeer executor: cannot start its sender thread\n");
    } else {
        h.sender_started = true;
        if (own_process)
            s_install_fault_handlers(fd);
        s_out *ready = s_out_new(PC_X_READY, 0, 0, 0);
        if (ready)
            pc_put_i32(&ready->head, (int32_t)getpid());
        s_queue(&h, ready);
        rc = s_serve(&h);
    }
    s_shutdown(&h);
    return rc;
}
