/* portprobe.c - confirming the crash of a suspected peer by connecting to
 * its port (portprobe.h): the probes in flight, their sockets and
 * timeouts, and the refusals they report.
 */
#define _GNU_SOURCE
#include "portprobe.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lev_errors.h"
#include "log.h"
#include "wire.h"

typedef struct s_probe {
    int fd;       /* -1: a free slot */
    bool refused; /* refused at once: reported at the next tick */
    uint64_t instance, deadline;
    char endpoint[PC_ENDPOINT_MAX];
} s_probe;

struct pc_portprobe {
    s_probe p[PC_PORTPROBE_MAX];
    pc_portprobe_refused_fn fn;
    void *ud;
};

int pc_portprobe_new(pc_portprobe **out, pc_portprobe_refused_fn fn, void *ud)
{
    pc_portprobe *pp = calloc(1, sizeof *pp);
    if (!pp)
        return LEV_ENOMEM;
    for (int i = 0; i < PC_PORTPROBE_MAX; i++)
        pp->p[i].fd = -1;
    pp->fn = fn;
    pp->ud = ud;
    *out = pp;
    return 0;
}

static void s_end(s_probe *p)
{
    if (p->fd >= 0)
        close(p->fd);
    p->fd = -1;
    p->refused = false;
}

void pc_portprobe_destroy(pc_portprobe **pp)
{
    if (!*pp)
        return;
    for (int i = 0; i < PC_PORTPROBE_MAX; i++)
        s_end(&(*pp)->p[i]);
    free(*pp);
    *pp = NULL;
}

/* The socket address of "tcp://ADDRESS:PORT" with a numeric IPv4 or IPv6
 * (bracketed or not) address; false for anything else. */
static bool s_addr(const char *endpoint, struct sockaddr_storage *sa, socklen_t *len)
{
    if (strncmp(endpoint, "tcp://", 6))
        return false;
    const char *host = endpoint + 6, *colon = strrchr(host, ':');
    if (!colon || colon == host)
        return false;
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end || port <= 0 || port > 65535)
        return false;
    char h[64];
    size_t hl = (size_t)(colon - host);
    if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
        host++;
        hl -= 2;
    }
    if (hl >= sizeof h)
        return false;
    memcpy(h, host, hl);
    h[hl] = 0;
    memset(sa, 0, sizeof *sa);
    struct sockaddr_in *v4 = (struct sockaddr_in *)sa;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)sa;
    if (inet_pton(AF_INET, h, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        *len = sizeof *v4;
        return true;
    }
    if (inet_pton(AF_INET6, h, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        *len = sizeof *v6;
        return true;
    }
    return false;
}

void pc_portprobe_start(pc_portprobe *pp, const char *endpoint, uint64_t instance, uint64_t now_ms)
{
    s_probe *free_slot = NULL;
    for (int i = 0; i < PC_PORTPROBE_MAX; i++) {
        s_probe *p = &pp->p[i];
        if (p->fd < 0 && !p->refused) {
            if (!free_slot)
                free_slot = p;
        } else if (!strcmp(p->endpoint, endpoint)) {
            return; /* one runs already */
        }
    }
    struct sockaddr_storage sa;
    socklen_t len;
    if (!free_slot || !s_addr(endpoint, &sa, &len))
        return;
    int fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return;
    s_probe *p = free_slot;
    pc_ep_copy(p->endpoint, endpoint);
    p->instance = instance;
    p->deadline = now_ms + PC_PORTPROBE_TIMEOUT_MS;
    p->fd = fd;
    if (connect(fd, (struct sockaddr *)&sa, len) == 0) {
        s_end(p); /* accepted: something listens there */
    } else if (errno == ECONNREFUSED) {
        close(fd);
        p->fd = -1;
        p->refused = true; /* reported from the next tick, not from here */
    } else if (errno != EINPROGRESS) {
        s_end(p); /* unreachable, or no resources: no evidence */
    }
}

int pc_portprobe_poll_items(const pc_portprobe *pp, zmq_pollitem_t *items, int cap)
{
    int n = 0;
    for (int i = 0; i < PC_PORTPROBE_MAX && n < cap; i++)
        if (pp->p[i].fd >= 0)
            items[n++] = (zmq_pollitem_t){.fd = pp->p[i].fd, .events = ZMQ_POLLOUT};
    return n;
}

/* A refusal, reported; the slot freed first (the callback may start
 * probes). */
static void s_report(pc_portprobe *pp, s_probe *p)
{
    char ep[PC_ENDPOINT_MAX];
    pc_ep_copy(ep, p->endpoint);
    uint64_t instance = p->instance;
    s_end(p);
    pc_log(PC_LOG_INFO, "peer %s: connection refused: its process is gone", ep);
    pp->fn(pp->ud, ep, instance);
}

void pc_portprobe_on_ready(pc_portprobe *pp, const zmq_pollitem_t *items, int n)
{
    for (int k = 0; k < n; k++) {
        if (!items[k].revents)
            continue;
        for (int i = 0; i < PC_PORTPROBE_MAX; i++) {
            s_probe *p = &pp->p[i];
            if (p->fd != items[k].fd)
                continue;
            int err = 0;
            socklen_t el = sizeof err;
            if (getsockopt(p->fd, SOL_SOCKET, SO_ERROR, &err, &el))
                err = errno;
            struct sockaddr_storage peer;
            socklen_t pl = sizeof peer;
            if (err == ECONNREFUSED)
                s_report(pp, p);
            else if (err || getpeername(p->fd, (struct sockaddr *)&peer, &pl) == 0)
                s_end(p); /* accepted, or no evidence */
            /* else still connecting (an event of an earlier socket on this fd) */
            break;
        }
    }
}

uint64_t pc_portprobe_tick(pc_portprobe *pp, uint64_t now_ms)
{
    uint64_t next = UINT64_MAX;
    for (int i = 0; i < PC_PORTPROBE_MAX; i++) {
        s_probe *p = &pp->p[i];
        if (p->refused) {
            s_report(pp, p);
        } else if (p->fd >= 0 && now_ms >= p->deadline) {
            s_end(p); /* no answer: no evidence */
        } else if (p->fd >= 0 && p->deadline < next) {
            next = p->deadline;
        }
    }
    return next;
}
