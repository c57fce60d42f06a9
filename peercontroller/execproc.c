/* execproc.c - the executors of a worker in the real world (execproc.h):
 * one per remote VC, a process `levpeer --executor --fd N` (or a thread
 * in an embedded peer) over an executor channel (chan.h). The worker
 * (worker.c) reaches them only through the peer's env (pc_env: start,
 * send, stop); this file starts and kills them, and its part of the
 * network thread's poll reads their records and hands them, and their
 * deaths, back to the worker.
 */
#define GC_THREADS
#include "execproc.h"

#include <fcntl.h>
#include <gc/gc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chan.h"
#include "exechost.h"
#include "imgslot.h"
#include "lev_errors.h"
#include "log.h"

typedef struct pc_exec {
    struct pc_exec *next;
    pc_chan *chan;
    pc_slotmaps *maps; /* the images it lends in shared memory */
    pid_t pid;         /* a process, or 0 (a thread) */
    bool stopped;      /* stopped or dead: freed at the next poll */
} pc_exec;

struct pc_execs {
    pc_peer *p;
    pc_exec *list;
};

int pc_execs_new(pc_execs **out, pc_peer *p)
{
    pc_execs *e = calloc(1, sizeof *e);
    if (!e)
        return LEV_ENOMEM;
    e->p = p;
    *out = e;
    return 0;
}

/* Closes an executor's channel (an executor ends when it reads the end
 * of its channel); kills and reaps a process. Returns the signal that
 * ended it, or 0. */
static int s_close(pc_exec *x)
{
    int sig = 0;
    pc_chan_destroy(&x->chan);
    pc_slotmaps_destroy(&x->maps);
    if (x->pid > 0) {
        int status = 0;
        kill(x->pid, SIGKILL);
        if (waitpid(x->pid, &status, 0) == x->pid && WIFSIGNALED(status))
            sig = WTERMSIG(status);
    }
    x->pid = 0;
    x->stopped = true;
    return sig;
}

static void s_sweep(pc_execs *e)
{
    for (pc_exec **pp = &e->list; *pp;) {
        pc_exec *x = *pp;
        if (x->stopped) {
            *pp = x->next;
            free(x);
        } else {
            pp = &x->next;
        }
    }
}

void pc_execs_destroy(pc_execs **e_p)
{
    pc_execs *e = e_p ? *e_p : NULL;
    if (!e)
        return;
    for (pc_exec *x = e->list; x; x = x->next)
        if (!x->stopped)
            s_close(x);
    s_sweep(e);
    free(e);
    *e_p = NULL;
}

static void *s_thread(void *arg)
{
    int fd = (int)(intptr_t)arg;
    pc_exechost_run(fd, false);
    return NULL;
}

int pc_execs_start(pc_execs *e, void **handle, int *pid)
{
    pc_exec *x = calloc(1, sizeof *x);
    if (!x)
        return LEV_ENOMEM;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
        free(x);
        return LEV_EIO;
    }
    const pc_peer_opts *o = &e->p->o;
    if (o->embedded) {
        pthread_t t;
        if (GC_pthread_create(&t, NULL, s_thread, (void *)(intptr_t)sv[1])) {
            close(sv[0]);
            close(sv[1]);
            free(x);
            return LEV_ENOMEM;
        }
        pthread_detach(t);
    } else {
        const char *prog = o->executor_program ? o->executor_program : "/proc/self/exe";
        char fdnum[16];
        snprintf(fdnum, sizeof fdnum, "%d", sv[1]);
        pid_t child = fork();
        if (child < 0) {
            close(sv[0]);
            close(sv[1]);
            free(x);
            return LEV_EIO;
        }
        if (child == 0) {
            int fl = fcntl(sv[1], F_GETFD);
            fcntl(sv[1], F_SETFD, fl & ~FD_CLOEXEC);
            execl(prog, "levpeer", "--executor", "--fd", fdnum, (char *)NULL);
            _exit(127);
        }
        close(sv[1]);
        x->pid = child;
    }
    x->chan = pc_chan_new(sv[0], o->max_msg);
    x->maps = pc_slotmaps_new();
    if (!x->chan || !x->maps) {
        s_close(x);
        free(x);
        return LEV_ENOMEM;
    }
    x->next = e->list;
    e->list = x;
    *handle = x;
    *pid = (int)x->pid;
    return 0;
}

int pc_execs_send(pc_execs *e, void *handle, pc_hdr h, const struct iovec *iov, int n)
{
    (void)e;
    pc_exec *x = handle;
    return x->stopped ? LEV_EPEER : pc_chan_send_later(x->chan, h, iov, n);
}

int pc_execs_send_fd(pc_execs *e, void *handle, pc_hdr h, const struct iovec *iov, int n, int fd)
{
    (void)e;
    pc_exec *x = handle;
    return x->stopped ? LEV_EPEER : pc_chan_send_fd(x->chan, h, iov, n, fd);
}

/* Gives x back the slots whose images the worker no longer holds. */
static void s_slots_back(pc_exec *x)
{
    uint32_t ids[PC_SLOTS_MAX];
    int n = pc_slotmaps_returned(x->maps, ids, PC_SLOTS_MAX);
    for (int i = 0; i < n; i++) {
        uint8_t b[4];
        rt_le32_put(b, ids[i]);
        struct iovec part = {.iov_base = b, .iov_len = sizeof b};
        (void)pc_chan_send_later(x->chan, pc_hdr_make(PC_X_SLOT_FREE, 0, 0, 0, 0), &part, 1);
    }
}

void pc_execs_flush(pc_execs *e)
{
    for (pc_exec *x = e ? e->list : NULL; x; x = x->next)
        if (!x->stopped) {
            s_slots_back(x);
            (void)pc_chan_flush(x->chan); /* a failure shows as the channel's end */
        }
}

/* An image x lent in shared memory (X_IMAGE_SLOT, X_STOPPED_SLOT; payload
 * taken): to the worker as a buffer over the slot, or refused with the
 * reason. */
static void s_image_slot(pc_execs *e, pc_exec *x, const pc_hdr *h, uint8_t *payload)
{
    const char *why = NULL;
    /* its memfd came with the record's first byte when the record says so */
    int fd = pc_slot_lend_has_fd(payload, h->len) ? pc_chan_take_fd(x->chan) : -1;
    pc_buf *image = pc_slotmaps_take(x->maps, payload, h->len, fd, &why);
    free(payload);
    pc_worker_exec_image(e->p->wk, x, h, image, why);
}

void pc_execs_stop(pc_execs *e, void *handle)
{
    (void)e;
    pc_exec *x = handle;
    if (!x->stopped)
        s_close(x);
}

int pc_execs_poll_items(pc_execs *e, zmq_pollitem_t *items, int cap)
{
    s_sweep(e);
    int n = 0;
    for (pc_exec *x = e->list; x && n < cap; x = x->next)
        items[n++] = (zmq_pollitem_t){.fd = pc_chan_fd(x->chan), .events = ZMQ_POLLIN};
    return n;
}

void pc_execs_on_ready(pc_execs *e, const zmq_pollitem_t *items, int n)
{
    for (int i = 0; i < n; i++) {
        if (!items[i].revents)
            continue;
        pc_exec *x = e->list;
        while (x && (x->stopped || pc_chan_fd(x->chan) != items[i].fd))
            x = x->next;
        /* the worker may stop x from inside a record: checked each time */
        for (int k = 0; x && !x->stopped && k < 64; k++) {
            pc_hdr h;
            uint8_t *payload = NULL;
            const char *why = NULL;
            int rc = pc_chan_recv(x->chan, &h, &payload, 0, &why);
            if (rc == 0)
                break;
            if (rc < 0) {
                char reason[128];
                snprintf(reason, sizeof reason, "%s", why ? why : "channel closed");
                int sig = s_close(x);
                pc_worker_exec_ended(e->p->wk, x, reason, sig);
                break;
            }
            if (h.type == PC_X_IMAGE_SLOT || h.type == PC_X_STOPPED_SLOT)
                s_image_slot(e, x, &h, payload);
            else
                pc_worker_exec_record(e->p->wk, x, &h, payload);
        }
    }
}
