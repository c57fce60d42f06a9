/* chaos_ring_tasks.c - the task of the soak's token ring (chaos_ring.c):
 * VTs in a ring pass a token that carries its hop number and a payload
 * derived from it; each VT checks every token it takes (sender, length,
 * value, every payload word), keeps the values in its heap and reports
 * its progress every few rounds. Everything it returns and reports is a
 * pure function of its configuration, however often it is captured,
 * lost, resumed or moved (chaos_ring.h says what). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "chaos_ring.h"
#include "lev_task.h"

/* Receives the cr_cfg its client sends; false if what came is not one. */
static int cr_get_cfg(cr_cfg *c)
{
    uint64_t from = LEV_CLIENT;
    void *buf = NULL;
    size_t n = 0;
    int ok = lev_recv(&from, &buf, &n, -1) == 0 && n == sizeof *c;
    if (ok)
        memcpy(c, buf, sizeof *c);
    free(buf);
    return ok && c->n > 1 && c->n <= CR_MAXVT && c->me >= 0 && c->me < c->n && c->rounds > 0 &&
           c->words >= 0 && c->words <= CR_MAXWORDS && c->report_every > 0;
}

/* Sends the token of value v to `to`; the call's code. */
static int cr_send(uint64_t to, long v, long words, uint64_t *msg)
{
    msg[0] = (uint64_t)v;
    for (long i = 0; i < words; i++)
        msg[1 + i] = cr_word(v, i);
    return lev_send(to, msg, (size_t)(words + 1) * sizeof *msg);
}

/* Whether buf[n] is a well-formed token; sets *v to its value. */
static int cr_check(const void *buf, size_t n, long words, long *v)
{
    if (n != (size_t)(words + 1) * sizeof(uint64_t))
        return 0;
    const uint64_t *w = buf;
    *v = (long)w[0];
    for (long i = 0; i < words; i++)
        if (w[1 + i] != cr_word(*v, i))
            return 0;
    return 1;
}

/* A VT of the ring (cr_cfg from the client). Returns a cr_result. */
LEV_TASK void chaos_ring(const void *arg, size_t len)
{
    (void)arg;
    (void)len;
    cr_result res;
    memset(&res, 0, sizeof res);
    cr_cfg c;
    if (!cr_get_cfg(&c)) {
        res.err = -1000;
        lev_return(&res, sizeof res);
        return;
    }
    uint64_t next = c.ids[(c.me + 1) % c.n], prev = c.ids[(c.me + c.n - 1) % c.n];
    uint64_t *msg = malloc((size_t)(c.words + 1) * sizeof *msg);
    long *seen = calloc((size_t)c.rounds, sizeof *seen); /* the values taken, in the heap */
    if (!msg || !seen) {
        res.err = -1001;
        free(msg);
        free(seen);
        lev_return(&res, sizeof res);
        return;
    }
    int rc = 0;
    if (c.me == 0)
        rc = cr_send(next, 1, c.words, msg);
    long r = 0;
    for (; r < c.rounds && !rc;) {
        uint64_t from = prev;
        void *buf = NULL;
        size_t n = 0;
        long v = 0, want = cr_value(c.n, r, c.me);
        rc = lev_recv(&from, &buf, &n, -1);
        if (rc)
            break;
        int ok = cr_check(buf, n, c.words, &v);
        free(buf);
        if (!ok) {
            res.bad++;
            continue;
        }
        if (v < want) { /* a value taken before: delivered twice */
            res.dups++;
            continue;
        }
        if (v > want) /* values skipped: lost on the way */
            res.gaps++;
        seen[r] = v;
        res.received++;
        res.last = v;
        r++;
        if (r % c.report_every == 0 || r == c.rounds) {
            cr_report rep = {(int32_t)c.me, (int32_t)r};
            lev_report(&rep, sizeof rep);
        }
        if (c.me != 0 || r < c.rounds)
            rc = cr_send(next, v + 1, c.words, msg);
    }
    if (rc) {
        res.err = rc;
        res.err_round = (int32_t)r;
    }
    for (long i = 0; i < res.received; i++)
        res.sum += cr_mix((uint64_t)seen[i]);
    free(seen);
    free(msg);
    lev_return(&res, sizeof res);
}
