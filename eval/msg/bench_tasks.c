/* bench_tasks.c - the tasks of bench_msg and bench_reads: a ping-pong
 * and a stream between two VTs, VTs contending for one global variable's
 * lock, and a VT reading one.
 * Each times itself (a clock read breaks piecewise determinism, which a
 * benchmark that is not interrupted does not need) and returns the
 * elapsed nanoseconds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_msg.h"
#include "lev_task.h"

static int64_t bm_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Receives the bm_cfg from the client; false if it is not one. */
static int bm_cfg_get(bm_cfg *c)
{
    uint64_t from = LEV_CLIENT;
    void *buf = NULL;
    size_t n = 0;
    int ok = lev_recv(&from, &buf, &n, -1) == 0 && n == sizeof *c;
    if (ok)
        memcpy(c, buf, sizeof *c);
    free(buf);
    return ok && c->size <= (1 << 20);
}

/* Role 0 sends `size` bytes and waits for them back, `warm + n` times,
 * timing the last n; role 1 echoes. Returns the time (role 0), or -1. */
LEV_TASK void bm_pingpong(const void *arg, size_t len)
{
    (void)arg;
    (void)len;
    bm_cfg c;
    int64_t t = -1;
    if (!bm_cfg_get(&c)) {
        lev_return(&t, sizeof t);
        return;
    }
    char *msg = calloc(1, c.size ? c.size : 1);
    int64_t t0 = 0;
    for (long i = 0; i < c.warm + c.n; i++) {
        if (i == c.warm)
            t0 = bm_ns();
        uint64_t from = c.peer;
        void *buf = NULL;
        size_t n = 0;
        if (c.role == 0 && lev_send(c.peer, msg, c.size))
            break;
        if (lev_recv(&from, &buf, &n, -1))
            break;
        free(buf);
        if (c.role == 1 && lev_send(c.peer, msg, c.size))
            break;
        if (i == c.warm + c.n - 1)
            t = bm_ns() - t0;
    }
    free(msg);
    lev_return(&t, sizeof t);
}

/* Role 0 sends `warm + n` messages of `size` bytes, then waits for one
 * byte back; role 1 takes them and answers after the last. Returns role
 * 0's time from its first timed send to the answer. */
LEV_TASK void bm_stream(const void *arg, size_t len)
{
    (void)arg;
    (void)len;
    bm_cfg c;
    int64_t t = -1;
    if (!bm_cfg_get(&c)) {
        lev_return(&t, sizeof t);
        return;
    }
    char *msg = calloc(1, c.size ? c.size : 1);
    int64_t t0 = bm_ns();
    long i = 0;
    for (; i < c.warm + c.n; i++) {
        if (c.role == 0 && i == c.warm)
            t0 = bm_ns();
        if (c.role == 0) {
            if (lev_send(c.peer, msg, c.size))
                break;
        } else {
            uint64_t from = c.peer;
            void *buf = NULL;
            size_t n = 0;
            if (lev_recv(&from, &buf, &n, -1))
                break;
            free(buf);
        }
    }
    uint64_t from = c.peer;
    void *buf = NULL;
    size_t n = 0;
    if (i == c.warm + c.n &&
        (c.role == 1 ? lev_send(c.peer, "k", 1) : lev_recv(&from, &buf, &n, -1)) == 0)
        t = bm_ns() - t0;
    free(buf);
    free(msg);
    lev_return(&t, sizeof t);
}

/* Argument: long n. n locked increments of the global "bench". Returns
 * the elapsed time. */
LEV_TASK void bm_lock(const void *arg, size_t len)
{
    long times = len == sizeof(long) ? *(const long *)arg : 0;
    int64_t t0 = bm_ns(), t = -1;
    long i = 0;
    for (; i < times; i++) {
        void *v = NULL;
        size_t n = 0;
        if (lev_global_lock("bench", &v, &n))
            break;
        long x = 0;
        if (n == sizeof x)
            memcpy(&x, v, sizeof x);
        free(v);
        x++;
        if (lev_global_unlock("bench", &x, sizeof x))
            break;
    }
    if (i == times)
        t = bm_ns() - t0;
    lev_return(&t, sizeof t);
}

/* Argument: long n, long warm. Reads the global "rb" warm + n times,
 * timing the last n. Returns the elapsed time, or -1 when a read failed
 * or brought no value. */
LEV_TASK void bm_read(const void *arg, size_t len)
{
    long a[2] = {0, 0};
    if (len == sizeof a)
        memcpy(a, arg, sizeof a);
    int64_t t0 = 0, t = -1;
    long i = 0;
    for (; i < a[0] + a[1]; i++) {
        if (i == a[1])
            t0 = bm_ns();
        void *v = NULL;
        size_t n = 0;
        int rc = lev_global_read("rb", &v, &n);
        free(v);
        if (rc || !n)
            break;
    }
    if (i == a[0] + a[1])
        t = bm_ns() - t0;
    lev_return(&t, sizeof t);
}
