/* lagrelay.c - a TCP relay that makes loopback look like a LAN or a WAN:
 * it accepts connections on one address and relays each to a target,
 * holding every byte back by a one-way delay and pacing each direction
 * of each connection to a bandwidth. The evaluation puts one in front of
 * each levpeer (the peer advertises the relay's address), so that every
 * message between peers crosses one relay: the delay is one way, a round
 * trip costs two. It stands in for netem where the kernel has none.
 *
 *   lagrelay --listen HOST:PORT (--to HOST:PORT | --to-file FILE)
 *            [--delay-ms D] [--rate-mbit R]
 *
 * Port 0 listens on any free port. Prints "tcp://HOST:PORT" (where it
 * listens) on standard output once it listens. With --to-file, the target
 * is read from FILE (tcp://HOST:PORT) at the first connection after it
 * appears: the relay can start before what it relays to, whose port is
 * known only once it runs. Bytes are released
 * in order at max(arrival + delay, when the link is free again); a
 * direction holding more than 16 MiB stops reading its source until it
 * drains. A connection to the target that fails closes the accepted one
 * (the peer's transport connects again). One thread, epoll.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define S_CHUNK 65536
#define S_HOLD_MAX (16u << 20) /* bytes held per direction before reading pauses */
#define S_EVENTS 64

/* Bytes read at one time, released at `at` (ns). */
typedef struct chunk {
    struct chunk *next;
    uint64_t at;
    size_t len, off;
    uint8_t data[];
} chunk;

/* One direction of a relayed connection: from `in` to `out`. */
typedef struct pipe_ {
    int in, out;
    chunk *head, *tail;
    size_t held;
    uint64_t free_at; /* when the paced link is free again (ns) */
    int eof;          /* in closed: shut out down once drained */
    int done;
} pipe_;

typedef struct conn {
    struct conn *next;
    pipe_ up, down; /* accepted -> target, target -> accepted */
    int a, t;       /* the two sockets */
    int dead;
} conn;

static uint64_t s_delay_ns, s_ns_per_byte_x1000; /* pacing: ns per 1000 bytes */
static conn *s_conns;
static int s_ep;

static uint64_t s_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void s_die(const char *what)
{
    fprintf(stderr, "lagrelay: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* HOST:PORT (or tcp://HOST:PORT, numeric IPv4) into sa; 0 or -1. */
static int s_addr(const char *s, struct sockaddr_in *sa)
{
    if (!strncmp(s, "tcp://", 6))
        s += 6;
    const char *colon = strrchr(s, ':');
    char host[64];
    if (!colon || (size_t)(colon - s) >= sizeof host)
        return -1;
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = '\0';
    char *end;
    long port = strtol(colon + 1, &end, 10);
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    sa->sin_port = htons((uint16_t)port);
    return *end || colon[1] == '\0' || port < 0 || port > 65535 ||
                   inet_pton(AF_INET, host, &sa->sin_addr) != 1
               ? -1
               : 0;
}

static void s_nonblock(int fd)
{
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* The epoll interest of socket fd of connection c: read while its
 * outgoing direction holds little, write while the other direction has
 * bytes due. */
static void s_watch(conn *c, int fd, int add)
{
    pipe_ *from = fd == c->a ? &c->up : &c->down, *to = fd == c->a ? &c->down : &c->up;
    struct epoll_event ev = {0};
    ev.data.u64 = (uint64_t)(uintptr_t)c | (fd == c->t);
    if (!from->eof && from->held < S_HOLD_MAX)
        ev.events |= EPOLLIN;
    if (to->head && to->head->at <= s_now())
        ev.events |= EPOLLOUT;
    epoll_ctl(s_ep, add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &ev);
}

/* Reads what `p->in` has into timed chunks; 0, or -1 on an error. */
static int s_read(pipe_ *p)
{
    for (;;) {
        chunk *k = malloc(sizeof *k + S_CHUNK);
        if (!k)
            return -1;
        ssize_t n = read(p->in, k->data, S_CHUNK);
        if (n <= 0) {
            free(k);
            if (n == 0) {
                p->eof = 1;
                return 0;
            }
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
        }
        uint64_t now = s_now();
        uint64_t start = p->free_at > now ? p->free_at : now;
        p->free_at = start + (uint64_t)n * s_ns_per_byte_x1000 / 1000;
        *k = (chunk){.at = p->free_at + s_delay_ns, .len = (size_t)n};
        if (p->tail)
            p->tail->next = k;
        else
            p->head = k;
        p->tail = k;
        p->held += (size_t)n;
        if (p->held >= S_HOLD_MAX)
            return 0;
    }
}

/* Writes the chunks that are due; 0, or -1 on an error. */
static int s_write(pipe_ *p, uint64_t now)
{
    while (p->head && p->head->at <= now) {
        chunk *k = p->head;
        ssize_t n = write(p->out, k->data + k->off, k->len - k->off);
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
        k->off += (size_t)n;
        p->held -= (size_t)n;
        if (k->off < k->len)
            return 0;
        p->head = k->next;
        if (!p->head)
            p->tail = NULL;
        free(k);
    }
    if (!p->head && p->eof && !p->done) {
        shutdown(p->out, SHUT_WR);
        p->done = 1;
    }
    return 0;
}

static void s_pipe_free(pipe_ *p)
{
    while (p->head) {
        chunk *k = p->head;
        p->head = k->next;
        free(k);
    }
}

static struct sockaddr_in s_to;
static int s_to_known;
static const char *s_to_file;

/* The target, once known (read from --to-file until it is); 0 or -1. */
static int s_target(void)
{
    if (s_to_known)
        return 0;
    FILE *f = fopen(s_to_file, "r");
    char line[128] = "";
    if (!f)
        return -1;
    if (!fgets(line, sizeof line, f))
        line[0] = '\0';
    fclose(f);
    line[strcspn(line, "\r\n")] = '\0';
    s_to_known = s_addr(line, &s_to) == 0 && s_to.sin_port;
    return s_to_known ? 0 : -1;
}

static void s_accept(int lfd)
{
    for (;;) {
        int a = accept(lfd, NULL, NULL);
        if (a < 0)
            return;
        if (s_target()) {
            close(a); /* nothing to relay to yet: the client retries */
            continue;
        }
        const struct sockaddr_in *to = &s_to;
        int t = socket(AF_INET, SOCK_STREAM, 0);
        if (t < 0 || connect(t, (const struct sockaddr *)to, sizeof *to) < 0) {
            close(a);
            if (t >= 0)
                close(t);
            continue; /* the target is not there (yet): the client retries */
        }
        conn *c = calloc(1, sizeof *c);
        if (!c) {
            close(a);
            close(t);
            continue;
        }
        s_nonblock(a);
        s_nonblock(t);
        c->a = a;
        c->t = t;
        c->up = (pipe_){.in = a, .out = t};
        c->down = (pipe_){.in = t, .out = a};
        c->next = s_conns;
        s_conns = c;
        s_watch(c, a, 1);
        s_watch(c, t, 1);
    }
}

/* Ms until the earliest chunk held is due (-1: none). */
static int s_timeout(uint64_t now)
{
    uint64_t best = UINT64_MAX;
    for (conn *c = s_conns; c; c = c->next) {
        if (c->up.head && c->up.head->at < best)
            best = c->up.head->at;
        if (c->down.head && c->down.head->at < best)
            best = c->down.head->at;
    }
    if (best == UINT64_MAX)
        return -1;
    return best <= now ? 0 : (int)((best - now + 999999) / 1000000);
}

static void s_reap(void)
{
    for (conn **pp = &s_conns; *pp;) {
        conn *c = *pp;
        if (!c->dead && !(c->up.done && c->down.done)) {
            pp = &c->next;
            continue;
        }
        *pp = c->next;
        close(c->a);
        close(c->t);
        s_pipe_free(&c->up);
        s_pipe_free(&c->down);
        free(c);
    }
}

int main(int argc, char **argv)
{
    const char *listen_at = NULL, *to_at = NULL;
    struct sockaddr_in la;
    double delay_ms = 0, rate_mbit = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--listen"))
            listen_at = argv[i + 1];
        else if (!strcmp(argv[i], "--to"))
            to_at = argv[i + 1];
        else if (!strcmp(argv[i], "--to-file"))
            s_to_file = argv[i + 1];
        else if (!strcmp(argv[i], "--delay-ms"))
            delay_ms = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--rate-mbit"))
            rate_mbit = atof(argv[i + 1]);
        else
            break;
    }
    if (to_at)
        s_to_known = s_addr(to_at, &s_to) == 0 && s_to.sin_port;
    if (argc % 2 == 0 || !listen_at || s_addr(listen_at, &la) || !(s_to_known || s_to_file) ||
        (to_at && s_to_file) || delay_ms < 0 || rate_mbit < 0) {
        fprintf(stderr, "usage: lagrelay --listen HOST:PORT (--to HOST:PORT | --to-file FILE) "
                        "[--delay-ms D] [--rate-mbit R]   (numeric IPv4 addresses)\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    s_delay_ns = (uint64_t)(delay_ms * 1e6);
    s_ns_per_byte_x1000 = rate_mbit > 0 ? (uint64_t)(8e3 * 1e3 / rate_mbit) : 0;
    int lfd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    if (lfd < 0)
        s_die("socket");
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(lfd, (struct sockaddr *)&la, sizeof la) < 0 || listen(lfd, 64) < 0)
        s_die(listen_at);
    fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) | O_NONBLOCK);
    if ((s_ep = epoll_create1(0)) < 0)
        s_die("epoll");
    struct epoll_event lev = {.events = EPOLLIN, .data.u64 = 0};
    epoll_ctl(s_ep, EPOLL_CTL_ADD, lfd, &lev);
    socklen_t sl = sizeof la;
    char host[INET_ADDRSTRLEN];
    if (getsockname(lfd, (struct sockaddr *)&la, &sl) < 0 ||
        !inet_ntop(AF_INET, &la.sin_addr, host, sizeof host))
        s_die("getsockname");
    printf("tcp://%s:%u\n", host, (unsigned)ntohs(la.sin_port));
    fflush(stdout);
    struct epoll_event evs[S_EVENTS];
    for (;;) {
        int n = epoll_wait(s_ep, evs, S_EVENTS, s_timeout(s_now()));
        if (n < 0 && errno != EINTR)
            s_die("epoll_wait");
        for (int i = 0; i < n; i++) {
            if (!evs[i].data.u64) {
                s_accept(lfd);
                continue;
            }
            conn *c = (conn *)(uintptr_t)(evs[i].data.u64 & ~(uint64_t)1);
            int fd = evs[i].data.u64 & 1 ? c->t : c->a;
            pipe_ *from = fd == c->a ? &c->up : &c->down;
            if ((evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !from->eof && s_read(from))
                c->dead = 1;
            else if ((evs[i].events & (EPOLLHUP | EPOLLERR)) && from->eof)
                c->dead = 1; /* closed both ways, or reset: what is held is dropped */
        }
        uint64_t now = s_now();
        for (conn *c = s_conns; c; c = c->next) {
            if (c->dead)
                continue;
            if (s_write(&c->up, now) || s_write(&c->down, now)) {
                c->dead = 1;
                continue;
            }
            s_watch(c, c->a, 0);
            s_watch(c, c->t, 0);
        }
        s_reap();
    }
}
