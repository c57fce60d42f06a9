/* chan.c - the executor channel (chan.h): wire records (a 40-byte header,
 * then hdr.len payload bytes) over one stream socket. Sending writes a
 * whole record under a mutex; receiving gathers a record incrementally.
 * Every system call is retried on EINTR: the collector's stop-the-world
 * signals interrupt them in threads it knows.
 */
#define _GNU_SOURCE
#include "chan.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lev_errors.h"
#include "vec.h"

#define S_DEFAULT_MAX ((size_t)1 << 30) /* 1 GiB */
#define S_CHUNK 65536u                  /* bytes of one read of headers and small payloads */
#define S_DIRECT 4096u /* a payload remainder at least this large is read in place */
#define S_IOV_STACK 16
#define S_LATER_MAX (256u << 10) /* bytes of records put off before they go at once */
#define S_FDS_MAX 8              /* descriptors received and not taken yet */

struct pc_chan {
    int fd;
    size_t max_len;
    pthread_mutex_t send_mu; /* keeps records whole; guards `later` */
    uint8_t *later;          /* whole records put off (pc_chan_send_later) */
    size_t nlater, caplater;

    /* receiving (one reader) */
    uint8_t *in; /* S_CHUNK bytes read ahead: headers, small payloads */
    size_t in_off, in_len;
    bool have_hdr; /* hdr decoded, its payload being gathered in pay */
    pc_hdr hdr;
    uint8_t *pay; /* malloc'd, hdr.len bytes */
    size_t pay_got;
    int fds[S_FDS_MAX]; /* descriptors received (SCM_RIGHTS), oldest first */
    int nfds;
    bool dead;       /* closed or damaged: every later recv fails */
    const char *why; /* why it is dead */
    char why_buf[160];
};

pc_chan *pc_chan_new(int fd, size_t max_len)
{
    pc_chan *c = calloc(1, sizeof *c);
    uint8_t *in = malloc(S_CHUNK);
    if (!c || !in || pthread_mutex_init(&c->send_mu, NULL)) {
        free(c);
        free(in);
        close(fd);
        return NULL;
    }
    c->fd = fd;
    c->max_len = max_len ? max_len : S_DEFAULT_MAX;
    c->in = in;
    return c;
}

void pc_chan_destroy(pc_chan **c_p)
{
    if (!c_p || !*c_p)
        return;
    pc_chan *c = *c_p;
    *c_p = NULL;
    close(c->fd);
    for (int i = 0; i < c->nfds; i++)
        close(c->fds[i]);
    pthread_mutex_destroy(&c->send_mu);
    free(c->later);
    free(c->in);
    free(c->pay);
    free(c);
}

int pc_chan_fd(const pc_chan *c) { return c->fd; }

/* ===================================================================
 * Sending
 * =================================================================== */

/* Waits until fd is ready for `events` (a descriptor the owner made
 * non-blocking); false on an error of poll itself. */
static bool s_wait_fd(int fd, short events)
{
    struct pollfd p = {.fd = fd, .events = events};
    for (;;) {
        int r = poll(&p, 1, -1);
        if (r > 0)
            return true;
        if (r < 0 && errno != EINTR)
            return false;
    }
}

/* Moves *iov (of *n) past `done` written bytes. */
static void s_iov_advance(struct iovec **iov, int *n, size_t done)
{
    while (*n > 0 && done >= (*iov)->iov_len) {
        done -= (*iov)->iov_len;
        (*iov)++;
        (*n)--;
    }
    if (*n > 0) {
        (*iov)->iov_base = (uint8_t *)(*iov)->iov_base + done;
        (*iov)->iov_len -= done;
    }
}

/* Writes every byte the iovecs hold (advancing them); with pass >= 0,
 * descriptor `pass` goes along with the first byte (SCM_RIGHTS). 0 or
 * LEV_EPEER. */
static int s_writev_all(int fd, struct iovec *iov, int n, int pass)
{
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    while (n > 0) {
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        if (pass >= 0) {
            memset(&ctl, 0, sizeof ctl);
            m.msg_control = ctl.buf;
            m.msg_controllen = sizeof ctl.buf;
            struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
            cm->cmsg_level = SOL_SOCKET;
            cm->cmsg_type = SCM_RIGHTS;
            cm->cmsg_len = CMSG_LEN(sizeof(int));
            memcpy(CMSG_DATA(cm), &pass, sizeof pass);
        }
        ssize_t w = sendmsg(fd, &m, MSG_NOSIGNAL);
        if (w > 0)
            pass = -1; /* it went with the first byte */
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if ((errno == EAGAIN || errno == EWOULDBLOCK) && s_wait_fd(fd, POLLOUT))
                continue;
            return LEV_EPEER;
        }
        s_iov_advance(&iov, &n, (size_t)w);
    }
    return 0;
}

/* Under send_mu: writes the records put off; 0 or LEV_EPEER. */
static int s_flush_locked(pc_chan *c)
{
    if (!c->nlater)
        return 0;
    struct iovec io = {.iov_base = c->later, .iov_len = c->nlater};
    c->nlater = 0;
    return s_writev_all(c->fd, &io, 1, -1);
}

/* Sends one record (pc_chan_send); with `try`, gives up (0) when another
 * thread is sending or the socket takes no byte now, and otherwise sends
 * it whole (1). */
static int s_send(pc_chan *c, pc_hdr h, const struct iovec *parts, int n, bool try, int pass)
{
    if (!c || n < 0 || (n && !parts) || n > 1000)
        return LEV_EINVAL;
    uint64_t total = 0;
    for (int i = 0; i < n; i++)
        total += parts[i].iov_len;
    if (total > UINT32_MAX)
        return LEV_ERANGE;
    h.len = (uint32_t)total;
    uint8_t head[PC_HDR_LEN];
    pc_hdr_encode(&h, head);

    struct iovec stack_iov[S_IOV_STACK];
    struct iovec *iov = stack_iov;
    if (n + 1 > S_IOV_STACK && !(iov = malloc(sizeof *iov * (size_t)(n + 1))))
        return LEV_ENOMEM;
    iov[0] = (struct iovec){.iov_base = head, .iov_len = PC_HDR_LEN};
    int k = 1;
    for (int i = 0; i < n; i++)
        if (parts[i].iov_len)
            iov[k++] = parts[i];
    int rc = 0;
    bool locked = true;
    if (!try) {
        pthread_mutex_lock(&c->send_mu);
        rc = s_flush_locked(c);
        rc = rc ? rc : s_writev_all(c->fd, iov, k, pass);
    } else if (pthread_mutex_trylock(&c->send_mu)) {
        locked = false; /* another thread sends: nothing sent */
    } else if (c->nlater) {
        rc = 0; /* records put off go first: the caller queues this one */
    } else {
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)k};
        ssize_t w;
        do
            w = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        while (w < 0 && errno == EINTR);
        if (w < 0) {
            rc = errno == EAGAIN || errno == EWOULDBLOCK ? 0 : LEV_EPEER;
        } else {
            /* taken in part: the rest follows at once, the record whole */
            struct iovec *at = iov;
            int left = k;
            s_iov_advance(&at, &left, (size_t)w);
            rc = left > 0 ? s_writev_all(c->fd, at, left, -1) : 0;
            rc = rc ? rc : 1;
        }
    }
    if (locked)
        pthread_mutex_unlock(&c->send_mu);
    if (iov != stack_iov)
        free(iov);
    return rc;
}

int pc_chan_send(pc_chan *c, pc_hdr h, const struct iovec *parts, int n)
{
    return s_send(c, h, parts, n, false, -1);
}

int pc_chan_send_fd(pc_chan *c, pc_hdr h, const struct iovec *parts, int n, int fd)
{
    return s_send(c, h, parts, n, false, fd);
}

int pc_chan_try_send(pc_chan *c, pc_hdr h, const struct iovec *parts, int n)
{
    return s_send(c, h, parts, n, true, -1);
}

int pc_chan_send_later(pc_chan *c, pc_hdr h, const struct iovec *parts, int n)
{
    if (!c || n < 0 || (n && !parts) || n > 1000)
        return LEV_EINVAL;
    uint64_t total = 0;
    for (int i = 0; i < n; i++)
        total += parts[i].iov_len;
    if (total > S_LATER_MAX / 4)
        return s_send(c, h, parts, n, false, -1); /* large: at once (after those put off) */
    h.len = (uint32_t)total;
    size_t need = PC_HDR_LEN + (size_t)total;
    pthread_mutex_lock(&c->send_mu);
    int rc = c->nlater + need > S_LATER_MAX ? s_flush_locked(c) : 0;
    if (!rc && RT_VEC_RESERVE(c->later, c->caplater, c->nlater, need))
        rc = s_flush_locked(c) ? LEV_EPEER : LEV_ENOMEM;
    if (!rc) {
        pc_hdr_encode(&h, c->later + c->nlater);
        size_t at = c->nlater + PC_HDR_LEN;
        for (int i = 0; i < n; i++) {
            if (parts[i].iov_len)
                memcpy(c->later + at, parts[i].iov_base, parts[i].iov_len);
            at += parts[i].iov_len;
        }
        c->nlater = at;
    }
    pthread_mutex_unlock(&c->send_mu);
    return rc;
}

int pc_chan_flush(pc_chan *c)
{
    if (!c)
        return LEV_EINVAL;
    pthread_mutex_lock(&c->send_mu);
    int rc = s_flush_locked(c);
    pthread_mutex_unlock(&c->send_mu);
    return rc;
}

int pc_chan_send_buf(pc_chan *c, pc_hdr h, const pc_wbuf *w)
{
    if (w && w->err)
        return w->err;
    struct iovec part = {.iov_base = w ? w->data : NULL, .iov_len = w ? w->len : 0};
    return pc_chan_send(c, h, &part, part.iov_len ? 1 : 0);
}

/* ===================================================================
 * Receiving
 * =================================================================== */

/* Marks the channel dead with a reason (a static string) and returns
 * LEV_EPEER. */
static int s_dead(pc_chan *c, const char *why)
{
    c->dead = true;
    c->why = why;
    return LEV_EPEER;
}

/* Queues the descriptors a received message brought (pc_chan_take_fd);
 * LEV_EPEER (the channel dead) when they pass S_FDS_MAX or were cut. */
static int s_keep_fds(pc_chan *c, struct msghdr *m)
{
    bool over = (m->msg_flags & MSG_CTRUNC) != 0;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(m); cm; cm = CMSG_NXTHDR(m, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
            continue;
        size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof fd);
            if (c->nfds < S_FDS_MAX) {
                c->fds[c->nfds++] = fd;
            } else {
                close(fd);
                over = true;
            }
        }
    }
    return over ? s_dead(c, "the other end passed more descriptors than records take") : 0;
}

int pc_chan_take_fd(pc_chan *c)
{
    if (!c || !c->nfds)
        return -1;
    int fd = c->fds[0];
    memmove(c->fds, c->fds + 1, sizeof(int) * (size_t)--c->nfds);
    return fd;
}

/* Reads at most n bytes into p. >0: bytes read; 0: nothing now (non-
 * blocking); LEV_EPEER: closed or failed (the channel is then dead). */
static int s_read(pc_chan *c, uint8_t *p, size_t n, int blocking)
{
    for (;;) {
        union {
            struct cmsghdr h;
            char buf[CMSG_SPACE(sizeof(int) * S_FDS_MAX)];
        } ctl;
        struct iovec io = {.iov_base = p, .iov_len = n};
        struct msghdr m = {
            .msg_iov = &io, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl};
        ssize_t r = recvmsg(c->fd, &m, MSG_CMSG_CLOEXEC | (blocking ? 0 : MSG_DONTWAIT));
        if (r >= 0 && s_keep_fds(c, &m))
            return LEV_EPEER;
        if (r > 0)
            return (int)r;
        /* a reset: it closed with records of ours unread, an end all the same */
        if (r == 0 || errno == ECONNRESET)
            return s_dead(c, c->have_hdr || c->in_len > c->in_off
                                 ? "the other end closed the channel in the middle of a record"
                                 : "the other end closed the channel");
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (!blocking)
                return 0;
            if (s_wait_fd(c->fd, POLLIN))
                continue;
        }
        snprintf(c->why_buf, sizeof c->why_buf, "reading the channel failed: %s", strerror(errno));
        return s_dead(c, c->why_buf);
    }
}

/* Decodes the header at the read-ahead position and starts its payload;
 * LEV_EPEER when it is bad or too long. */
static int s_take_header(pc_chan *c)
{
    const char *why = NULL;
    if (pc_hdr_decode(c->in + c->in_off, PC_HDR_LEN, &c->hdr, &why)) {
        snprintf(c->why_buf, sizeof c->why_buf, "damaged record on the channel: %s", why);
        return s_dead(c, c->why_buf);
    }
    c->in_off += PC_HDR_LEN;
    if (c->hdr.len > c->max_len) {
        snprintf(c->why_buf, sizeof c->why_buf,
                 "record %s of %u payload bytes passes the channel's limit of %zu",
                 pc_type_name(c->hdr.type), (unsigned)c->hdr.len, c->max_len);
        return s_dead(c, c->why_buf);
    }
    c->have_hdr = true;
    c->pay_got = 0;
    c->pay = NULL;
    if (c->hdr.len && !(c->pay = malloc(c->hdr.len))) {
        snprintf(c->why_buf, sizeof c->why_buf, "no memory for a record of %u payload bytes",
                 (unsigned)c->hdr.len);
        return s_dead(c, c->why_buf);
    }
    return 0;
}

/* Moves read-ahead bytes into the payload being gathered. */
static void s_take_ahead(pc_chan *c)
{
    size_t want = c->hdr.len - c->pay_got, have = c->in_len - c->in_off;
    size_t n = want < have ? want : have;
    if (!n)
        return; /* also: no payload buffer for an empty payload */
    memcpy(c->pay + c->pay_got, c->in + c->in_off, n);
    c->pay_got += n;
    c->in_off += n;
}

/* Makes room at the end of the read-ahead buffer (moving what is unread
 * to its start). */
static void s_compact(pc_chan *c)
{
    size_t left = c->in_len - c->in_off;
    if (c->in_off && left)
        memmove(c->in, c->in + c->in_off, left);
    c->in_off = 0;
    c->in_len = left;
}

int pc_chan_recv(pc_chan *c, pc_hdr *h, uint8_t **payload, int blocking, const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    *why = NULL;
    *payload = NULL;
    for (;;) {
        if (c->dead) {
            *why = c->why;
            return LEV_EPEER;
        }
        if (!c->have_hdr && c->in_len - c->in_off >= PC_HDR_LEN && s_take_header(c))
            continue;
        if (c->have_hdr) {
            s_take_ahead(c);
            if (c->pay_got == c->hdr.len) {
                *h = c->hdr;
                *payload = c->pay;
                c->pay = NULL;
                c->have_hdr = false;
                return 1;
            }
        }
        int r;
        size_t rest = c->have_hdr ? c->hdr.len - c->pay_got : 0;
        if (rest >= S_DIRECT) {
            /* A large remainder goes straight into the payload, never past it. */
            r = s_read(c, c->pay + c->pay_got, rest, blocking);
            if (r > 0)
                c->pay_got += (size_t)r;
        } else {
            s_compact(c);
            r = s_read(c, c->in + c->in_len, S_CHUNK - c->in_len, blocking);
            if (r > 0)
                c->in_len += (size_t)r;
        }
        if (r == 0)
            return 0;
    }
}
