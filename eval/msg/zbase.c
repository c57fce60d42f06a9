/* zbase.c - plain libzmq between two processes, the baseline of the
 * message benchmarks (zbase.h).
 */
#include "zbase.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <zmq.h>

#include "bench.h"

/* The child: echoes each message (ping-pong), or counts `n` messages and
 * answers once (stream), as the parent drives, until told to quit. */
static void s_child(int fd)
{
    void *ctx = zmq_ctx_new();
    void *r = zmq_socket(ctx, ZMQ_ROUTER);
    if (zmq_bind(r, "tcp://127.0.0.1:*"))
        _exit(1);
    char bound[128];
    size_t bl = sizeof bound;
    zmq_getsockopt(r, ZMQ_LAST_ENDPOINT, bound, &bl);
    if (write(fd, bound, strlen(bound) + 1) < 0)
        _exit(1);
    for (;;) {
        zmq_msg_t id, m;
        zmq_msg_init(&id);
        zmq_msg_init(&m);
        if (zmq_msg_recv(&id, r, 0) < 0 || zmq_msg_recv(&m, r, 0) < 0)
            _exit(1);
        /* first byte: 'p' echo, 's' count only, 'e' answer the stream, 'q' quit */
        char kind = zmq_msg_size(&m) ? *(char *)zmq_msg_data(&m) : 'q';
        if (kind == 'q')
            break;
        if (kind == 'p' || kind == 'e') {
            zmq_msg_send(&id, r, ZMQ_SNDMORE);
            zmq_msg_send(&m, r, 0);
        } else {
            zmq_msg_close(&id);
            zmq_msg_close(&m);
        }
    }
    zmq_close(r);
    zmq_ctx_term(ctx);
    _exit(0);
}

int zb_up(zb_pair *z)
{
    int fds[2];
    if (pipe(fds))
        return -1;
    z->child = fork();
    if (z->child == 0) {
        close(fds[0]);
        s_child(fds[1]);
    }
    close(fds[1]);
    char ep[128];
    ssize_t n = read(fds[0], ep, sizeof ep);
    close(fds[0]);
    if (n <= 0)
        return -1;
    z->ctx = zmq_ctx_new();
    z->d = zmq_socket(z->ctx, ZMQ_DEALER);
    return zmq_connect(z->d, ep) ? -1 : 0;
}

void zb_down(zb_pair *z)
{
    zmq_send(z->d, "q", 1, 0);
    zmq_close(z->d);
    zmq_ctx_term(z->ctx);
    waitpid(z->child, NULL, 0);
}

/* Seconds for n round trips of size bytes. */
double zb_pingpong(zb_pair *z, long n, long warm, size_t size)
{
    char *buf = calloc(1, size + 1);
    buf[0] = 'p';
    double t0 = 0;
    for (long i = 0; i < warm + n; i++) {
        if (i == warm)
            t0 = bench_now();
        zmq_send(z->d, buf, size, 0);
        zmq_recv(z->d, buf, size, 0);
        buf[0] = 'p';
    }
    double t = bench_now() - t0;
    free(buf);
    return t;
}

/* Seconds for a stream of n messages of size bytes and one answer. */
double zb_stream(zb_pair *z, long n, size_t size)
{
    char *buf = calloc(1, size + 1);
    buf[0] = 's';
    double t0 = bench_now();
    for (long i = 0; i < n; i++)
        zmq_send(z->d, buf, size, 0);
    buf[0] = 'e';
    zmq_send(z->d, buf, 1, 0);
    zmq_recv(z->d, buf, size, 0);
    double t = bench_now() - t0;
    free(buf);
    return t;
}
