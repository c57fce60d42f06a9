/* netq.c - delay, jitter and loss of a network namespace's packets for
 * the tests of tests/net/, where the kernel has no tc netem: it takes
 * the packets an iptables NFQUEUE rule queues (queue N of the namespace
 * it runs in) and gives each its verdict after a delay drawn uniformly
 * from [delay - jitter, delay + jitter] ms (so packets may overtake each
 * other, as netem's jitter does), or drops it with probability loss %.
 * A seed makes the draws replay. Prints "ready" on standard output once
 * it is bound; on SIGTERM or SIGINT it lets every packet it holds go and
 * exits 0.
 *
 *   netq [--queue N] [--delay MS] [--jitter MS] [--loss PERCENT] [--seed S]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A packet held until its time. */
typedef struct held {
    uint64_t due_ns;
    uint32_t id;
} held;

static struct {
    held *heap; /* a min-heap by due time */
    size_t n, cap;
    uint64_t rng;
    double delay_ms, jitter_ms, loss;
    uint64_t seen, dropped;
} g;

static volatile sig_atomic_t s_stop;

static void s_on_signal(int sig)
{
    (void)sig;
    s_stop = 1;
}

static uint64_t s_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* A uniform draw in [0, 1) (xorshift64*). */
static double s_uniform(void)
{
    g.rng ^= g.rng >> 12;
    g.rng ^= g.rng << 25;
    g.rng ^= g.rng >> 27;
    return (double)((g.rng * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

static void s_push(held h)
{
    if (g.n == g.cap) {
        g.cap = g.cap ? 2 * g.cap : 1024;
        g.heap = realloc(g.heap, g.cap * sizeof *g.heap);
        if (!g.heap) {
            fprintf(stderr, "netq: out of memory\n");
            exit(1);
        }
    }
    size_t i = g.n++;
    while (i && g.heap[(i - 1) / 2].due_ns > h.due_ns) {
        g.heap[i] = g.heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    g.heap[i] = h;
}

static held s_pop(void)
{
    held top = g.heap[0], last = g.heap[--g.n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= g.n)
            break;
        if (c + 1 < g.n && g.heap[c + 1].due_ns < g.heap[c].due_ns)
            c++;
        if (g.heap[c].due_ns >= last.due_ns)
            break;
        g.heap[i] = g.heap[c];
        i = c;
    }
    if (g.n)
        g.heap[i] = last;
    return top;
}

static int s_on_packet(struct nfq_q_handle *qh, struct nfgenmsg *msg, struct nfq_data *nfa,
                       void *data)
{
    (void)msg;
    (void)data;
    struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);
    if (!ph)
        return 0;
    uint32_t id = ntohl(ph->packet_id);
    g.seen++;
    if (g.loss > 0 && s_uniform() * 100.0 < g.loss) {
        g.dropped++;
        return nfq_set_verdict(qh, id, NF_DROP, 0, NULL);
    }
    double ms = g.delay_ms + (2.0 * s_uniform() - 1.0) * g.jitter_ms;
    if (ms <= 0)
        return nfq_set_verdict(qh, id, NF_ACCEPT, 0, NULL);
    s_push((held){.due_ns = s_now_ns() + (uint64_t)(ms * 1e6), .id = id});
    return 0;
}

static double s_num(const char *flag, const char *v, double min, double max)
{
    char *end;
    double d = v ? strtod(v, &end) : 0;
    if (!v || end == v || *end || d < min || d > max) {
        fprintf(stderr, "netq: %s takes a number from %g to %g\n", flag, min, max);
        exit(2);
    }
    return d;
}

int main(int argc, char **argv)
{
    int queue = 0;
    g.rng = 0x9E3779B97F4A7C15ull;
    for (int i = 1; i < argc; i += 2) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--queue"))
            queue = (int)s_num(argv[i], v, 0, 65535);
        else if (!strcmp(argv[i], "--delay"))
            g.delay_ms = s_num(argv[i], v, 0, 10000);
        else if (!strcmp(argv[i], "--jitter"))
            g.jitter_ms = s_num(argv[i], v, 0, 10000);
        else if (!strcmp(argv[i], "--loss"))
            g.loss = s_num(argv[i], v, 0, 100);
        else if (!strcmp(argv[i], "--seed"))
            g.rng = (uint64_t)s_num(argv[i], v, 1, 1e15);
        else {
            fprintf(stderr, "usage: netq [--queue N] [--delay MS] [--jitter MS] "
                            "[--loss PERCENT] [--seed S]\n");
            return 2;
        }
    }
    struct nfq_handle *h = nfq_open();
    struct nfq_q_handle *qh = h ? nfq_create_queue(h, (uint16_t)queue, s_on_packet, NULL) : NULL;
    if (!qh || nfq_set_mode(qh, NFQNL_COPY_META, 0) < 0) {
        fprintf(stderr, "netq: cannot bind queue %d: %s\n", queue, strerror(errno));
        return 1;
    }
    nfq_set_queue_maxlen(qh, 1 << 16);
    nfnl_rcvbufsiz(nfq_nfnlh(h), 8 << 20);
    signal(SIGTERM, s_on_signal);
    signal(SIGINT, s_on_signal);
    printf("ready\n");
    fflush(stdout);
    int fd = nfq_fd(h);
    static char buf[65536];
    while (!s_stop) {
        uint64_t now = s_now_ns();
        while (g.n && g.heap[0].due_ns <= now)
            nfq_set_verdict(qh, s_pop().id, NF_ACCEPT, 0, NULL);
        int wait = g.n ? (int)((g.heap[0].due_ns - now) / 1000000u) + 1 : 1000;
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (poll(&pf, 1, wait) <= 0)
            continue;
        ssize_t r = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (r > 0)
            nfq_handle_packet(h, buf, (int)r);
        else if (r < 0 && errno != EAGAIN && errno != EINTR && errno != ENOBUFS)
            break;
    }
    while (g.n) /* what it holds goes on */
        nfq_set_verdict(qh, s_pop().id, NF_ACCEPT, 0, NULL);
    fprintf(stderr, "netq: %llu packets, %llu dropped\n", (unsigned long long)g.seen,
            (unsigned long long)g.dropped);
    nfq_destroy_queue(qh);
    nfq_close(h);
    free(g.heap);
    return 0;
}
