/* block.c - a task that uses the blocking Leverage calls in every kind of
 * place levpp supports a checkpointable call: a statement of its own, an
 * assignment, a declaration's initialiser, an if condition, a while
 * condition with a side effect in an argument, an && and a ?: operand, a
 * helper function (checkpointable through the call graph), the return of
 * a lazy function, a for loop. The driver's try functions block a number
 * of times before each call completes, and count how often each argument
 * expression runs (once per call). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "block.h"
#include "lev_task.h"

/* Receives one message holding a long and returns it (-1 on an error). */
static long s_recv_long(void)
{
    uint64_t from = 0;
    void *buf = NULL;
    size_t len = 0;
    long v = -1;
    int rc = lev_recv(block_note(BN_RECV_FROM, &from), &buf, &len, block_timeout(-1));
    if (rc == 0 && len == sizeof v)
        memcpy(&v, buf, sizeof v);
    free(buf);
    return v;
}

/* Sends *p to `to`: a function whose state fits in C locals, so it runs
 * without a frame until it unwinds (lazy) and keeps the call's arguments
 * in the frame it spills then. */
static int s_send_lazy(uint64_t to, const long *p) { return lev_send(to, p, sizeof *p); }

/* Adds `add` to global "counter" under its lock; the lock's status. */
static int s_add(long add)
{
    void *val = NULL;
    size_t vlen = 0;
    int r;
    r = lev_global_lock("counter", block_note(BN_LOCK_NAME, &val), &vlen);
    if (r)
        return r;
    long c = 0;
    if (val && vlen == sizeof c)
        memcpy(&c, val, sizeof c);
    free(val);
    c += add;
    return lev_global_unlock("counter", &c, sizeof c);
}

LEV_TASK void block_run(const void *arg, size_t len)
{
    long n = len == sizeof(long) ? *(const long *)arg : 0;
    struct block_result res = {0};
    uint64_t peer = 7;
    /* a statement of its own, in a for loop; a ?: operand; a return of
     * a lazy function */
    for (long k = 1; k <= n; k++) {
        long v = k * 10;
        if (k == 1)
            lev_send(*(uint64_t *)block_note(BN_SEND_TO, &peer), &v, sizeof v);
        else if (k % 2)
            res.sent +=
                k > 0 ? lev_send(*(uint64_t *)block_note(BN_SEND_TO, &peer), &v, sizeof v) == 0
                      : -100;
        else
            res.sent += s_send_lazy(*(uint64_t *)block_note(BN_SEND_TO, &peer), &v) == 0;
    }
    /* an && operand */
    long extra = 1000;
    if (n > 0 && lev_send(*(uint64_t *)block_note(BN_SEND_TO, &peer), &extra, sizeof extra) == 0)
        res.helper = s_recv_long(); /* the first message, 10 */
    /* a while condition, a post-increment in an argument */
    void *bufs[64] = {0};
    size_t mlen = 0;
    uint64_t from = 0;
    int i = 0, rc = 0;
    while (i < 64 && (rc = lev_recv(block_note(BN_RECV_FROM, &from), &bufs[i++], &mlen,
                                    block_timeout(50))) == 0) {
        long v = 0;
        if (mlen == sizeof v && from == BLOCK_SENDER)
            memcpy(&v, bufs[i - 1], sizeof v);
        res.sum += v;
        res.nrecv++;
        free(bufs[i - 1]);
        bufs[i - 1] = NULL;
    }
    res.last_rc = rc;
    res.iplus = i;
    /* an assignment, through a helper */
    for (long k = 1; k <= 3; k++)
        if (s_add(k) != 0)
            res.counter = -1000;
    /* an if condition */
    void *snap = NULL;
    size_t slen = 0;
    if (lev_global_read("counter", block_note(BN_READ_NAME, &snap), &slen) == 0 &&
        slen == sizeof res.snapshot)
        memcpy(&res.snapshot, snap, sizeof res.snapshot);
    free(snap);
    if (res.counter == 0)
        res.counter = res.snapshot;
    lev_return(&res, sizeof res);
}
