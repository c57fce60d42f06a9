/* msg_tasks.c - the task sources of the message and global variable
 * tests: a token ring, an all-to-all exchange with checksums, a shared
 * counter, a VT that echoes its client's message, one whose first
 * receive times out, VTs that wait for others that fail or end, and
 * versioned puts of global variables. Every
 * result is a pure function of what the client
 * sends, however often a VT is captured, lost, restarted or moved. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lev_task.h"
#include "msg_tasks.h"
#include "pc_tasks.h"

long msg_words(long r, long s, long d) { return 8 + (r * 7 + s * 3 + d) % 120; }

uint64_t msg_word(long r, long s, long d, long i)
{
    return pc_mix((uint64_t)(r * 1000003 + s * 1009 + d * 17 + i), 3);
}

uint64_t msg_a2a_bad(int what, long r, long s, long got, uint64_t detail)
{
    return 0xBADull << 52 | (uint64_t)(what & 0xf) << 48 | (uint64_t)(r & 0xff) << 40 |
           (uint64_t)(s & 0xff) << 32 | (uint64_t)(got & 0xff) << 24 | (detail & 0xffffff);
}

const char *msg_a2a_bad_name(unsigned what)
{
    static const char *const names[] = {"?",       "configuration", "send",
                                        "receive", "sender place",  "sender id",
                                        "round",   "length",        "word"};
    return what < sizeof names / sizeof *names ? names[what] : "?";
}

uint64_t msg_a2a_expect(const msg_cfg *c)
{
    uint64_t sum = 0;
    for (long r = 0; r < c->rounds; r++)
        for (long s = 0; s < c->n; s++) {
            if (s == c->me)
                continue;
            for (long i = 0; i < msg_words(r, s, c->me); i++)
                sum += msg_word(r, s, c->me, i);
        }
    return sum + ((uint64_t)(c->rounds * (c->n - 1)) << 56);
}

/* Receives the msg_cfg its client sends; false if what came is not one. */
static int msg_get_cfg(msg_cfg *c)
{
    uint64_t from = LEV_CLIENT;
    void *buf = NULL;
    size_t n = 0;
    int ok = lev_recv(&from, &buf, &n, -1) == 0 && n == sizeof *c;
    if (ok)
        memcpy(c, buf, sizeof *c);
    free(buf);
    return ok && c->n > 1 && c->n <= MSG_MAXVT && c->me >= 0 && c->me < c->n;
}

/* At place 0, half way: reports the round, then waits for the client. */
static void msg_gate(const msg_cfg *c, long r)
{
    if (c->me != 0 || r != c->rounds / 2)
        return;
    lev_report(&r, sizeof r);
    uint64_t from = LEV_CLIENT;
    void *buf = NULL;
    size_t n = 0;
    lev_recv(&from, &buf, &n, -1);
    free(buf);
}

/* A VT of a token ring (msg_cfg from the client). The token is a long
 * that each VT adds one to as it passes; place 0 starts it at 0. Returns
 * the token as this VT last saw it: rounds * n at place 0, and
 * (rounds - 1) * n + me elsewhere; -1 on a failed call. */
LEV_TASK void pc_ring(const void *arg, size_t len)
{
    (void)arg;
    (void)len;
    msg_cfg c;
    long token = -1;
    if (!msg_get_cfg(&c)) {
        lev_return(&token, sizeof token);
        return;
    }
    uint64_t next = c.ids[(c.me + 1) % c.n], prev = c.ids[(c.me + c.n - 1) % c.n];
    token = 0;
    if (c.me == 0 && lev_send(next, &token, sizeof token))
        token = -1;
    for (long r = 0; r < c.rounds && token >= 0; r++) {
        msg_gate(&c, r);
        uint64_t from = prev;
        void *buf = NULL;
        size_t n = 0;
        if (lev_recv(&from, &buf, &n, -1) || n != sizeof token || from != prev) {
            free(buf);
            token = -1;
            break;
        }
        memcpy(&token, buf, sizeof token);
        free(buf);
        token++;
        if ((c.me != 0 || r != c.rounds - 1) && lev_send(next, &token, sizeof token))
            token = -1;
    }
    lev_return(&token, sizeof token);
}

/* A VT of an all-to-all exchange (msg_cfg from the client): each round it
 * sends every other VT a message of msg_words(r, me, d) words, then takes
 * n - 1 messages from any sender, checking that each sender's rounds come
 * in order and that every word is right. Returns msg_a2a_expect's value,
 * or, when a check failed, msg_a2a_bad's code for the first that did. */
LEV_TASK void pc_a2a(const void *arg, size_t len)
{
    (void)arg;
    (void)len;
    msg_cfg c;
    uint64_t sum = 0, bad = 0;
    long next_round[MSG_MAXVT] = {0};
    if (!msg_get_cfg(&c)) {
        bad = msg_a2a_bad(MSG_BAD_CFG, 0, 0, 0, 0);
        lev_return(&bad, sizeof bad);
        return;
    }
    long got = 0;
    for (long r = 0; r < c.rounds && !bad; r++) {
        msg_gate(&c, r);
        for (long d = 0; d < c.n; d++) {
            if (d == c.me)
                continue;
            long w = msg_words(r, c.me, d);
            uint64_t *m = malloc((size_t)(w + 2) * sizeof *m);
            m[0] = (uint64_t)r;
            m[1] = (uint64_t)c.me;
            for (long i = 0; i < w; i++)
                m[i + 2] = msg_word(r, c.me, d, i);
            int rc = lev_send(c.ids[d], m, (size_t)(w + 2) * sizeof *m);
            if (rc && !bad)
                bad = msg_a2a_bad(MSG_BAD_SEND, r, d, got, (uint64_t)-rc);
            free(m);
        }
        for (long k = 0; k < c.n - 1 && !bad; k++) {
            uint64_t from = LEV_ANY;
            void *buf = NULL;
            size_t n = 0;
            int rc = lev_recv(&from, &buf, &n, -1);
            const uint64_t *m = buf;
            long s = n >= 2 * sizeof *m ? (long)m[1] : -1;
            if (rc) {
                bad = msg_a2a_bad(MSG_BAD_RECV, r, 0, got, (uint64_t)-rc);
            } else if (s < 0 || s >= c.n || s == c.me) {
                bad = msg_a2a_bad(MSG_BAD_PLACE, r, 0, got, n);
            } else if (c.ids[s] != from) {
                bad = msg_a2a_bad(MSG_BAD_FROM, r, s, got, from);
            } else if ((long)m[0] != next_round[s]) {
                bad = msg_a2a_bad(MSG_BAD_ROUND, r, s, got, m[0]);
            } else if (n != (size_t)(msg_words(next_round[s], s, c.me) + 2) * sizeof *m) {
                bad = msg_a2a_bad(MSG_BAD_LENGTH, r, s, got, n);
            } else {
                for (long i = 0; i < msg_words(next_round[s], s, c.me) && !bad; i++) {
                    if (m[i + 2] != msg_word(next_round[s], s, c.me, i))
                        bad = msg_a2a_bad(MSG_BAD_WORD, r, s, got, (uint64_t)i);
                    sum += m[i + 2];
                }
                next_round[s]++;
                got++;
            }
            free(buf);
        }
    }
    uint64_t res = bad ? bad : sum + ((uint64_t)got << 56);
    lev_return(&res, sizeof res);
}

/* Argument: long times. Adds one to the global "counter" that many times,
 * each a locked read-modify-write. Returns times, or -1 on a failed call. */
LEV_TASK void pc_count(const void *arg, size_t len)
{
    long times = len == sizeof(long) ? *(const long *)arg : 0;
    for (long i = 0; i < times; i++) {
        void *v = NULL;
        size_t n = 0;
        if (lev_global_lock("counter", &v, &n) || (n != 0 && n != sizeof(long))) {
            times = -1;
            break;
        }
        long c = 0;
        if (n)
            memcpy(&c, v, sizeof c);
        free(v);
        c++;
        if (lev_global_unlock("counter", &c, sizeof c)) {
            times = -1;
            break;
        }
    }
    lev_return(&times, sizeof times);
}

uint64_t msg_big_word(uint64_t c, long i) { return c * 0x9E3779B97F4A7C15ull + (uint64_t)i * 31; }

/* Whether v (n bytes) is a whole "big" value; its count into *c. */
static int msg_big_ok(const void *v, size_t n, uint64_t *c)
{
    const uint64_t *w = v;
    if (n != MSG_BIG_WORDS * sizeof(uint64_t))
        return 0;
    *c = w[0];
    for (long i = 1; i < MSG_BIG_WORDS; i++)
        if (w[i] != msg_big_word(*c, i))
            return 0;
    return 1;
}

/* Argument: long times. That many times: reads the global "big" (16 KiB)
 * and checks it whole, then adds one to its count under its lock,
 * checking the value the grant brings and writing the whole value anew.
 * Returns times, or -1 on a failed call or a damaged value. */
LEV_TASK void pc_bigcount(const void *arg, size_t len)
{
    long times = len == sizeof(long) ? *(const long *)arg : 0;
    uint64_t *nv = malloc(MSG_BIG_WORDS * sizeof(uint64_t));
    for (long i = 0; nv && i < times; i++) {
        void *v = NULL;
        size_t n = 0;
        uint64_t c = 0;
        int ok = !lev_global_read("big", &v, &n) && msg_big_ok(v, n, &c);
        free(v);
        v = NULL;
        ok = ok && !lev_global_lock("big", &v, &n) && msg_big_ok(v, n, &c);
        free(v);
        if (!ok) {
            times = -1;
            break;
        }
        nv[0] = c + 1;
        for (long k = 1; k < MSG_BIG_WORDS; k++)
            nv[k] = msg_big_word(c + 1, k);
        if (lev_global_unlock("big", nv, MSG_BIG_WORDS * sizeof(uint64_t))) {
            times = -1;
            break;
        }
    }
    free(nv);
    lev_return(&times, sizeof times);
}

/* Waits for one message from its client and returns it. */
LEV_TASK void pc_echo(const void *arg, size_t len)
{
    (void)arg;
    (void)len;
    uint64_t from = LEV_CLIENT;
    void *buf = NULL;
    size_t n = 0;
    if (lev_recv(&from, &buf, &n, -1))
        n = 0;
    lev_return(buf, n);
    free(buf);
}

/* A receive from anyone that must time out (20 ms; nobody has sent
 * anything yet), reported; then a receive from the client without limit,
 * and a third, the gate, before it returns msg_timeout_res. */
LEV_TASK void pc_timeout(const void *arg, size_t len)
{
    (void)arg;
    (void)len;
    msg_timeout_res res;
    memset(&res, 0, sizeof res);
    uint64_t from = LEV_ANY;
    void *buf = NULL;
    size_t n = 0;
    res.first = lev_recv(&from, &buf, &n, 20);
    free(buf);
    buf = NULL;
    lev_report(&res.first, sizeof res.first);
    from = LEV_CLIENT;
    res.second = lev_recv(&from, &buf, &n, -1);
    res.from = from;
    if (res.second == 0 && n < sizeof res.text)
        memcpy(res.text, buf, n);
    free(buf);
    buf = NULL;
    from = LEV_CLIENT; /* the gate: a third message */
    lev_recv(&from, &buf, &n, -1);
    free(buf);
    lev_return(&res, sizeof res);
}

/* Sends to VT 99, which is not in the VC; its receive then returns
 * LEV_ENOVT from 99, and a second send to it LEV_ENOVT. Returns the
 * three codes (int32_t; the second -100 if *from was not 99). */
LEV_TASK void pc_bounce(const void *arg, size_t len)
{
    (void)arg;
    (void)len;
    int32_t r[3];
    r[0] = lev_send(99, "x", 1);
    uint64_t from = LEV_ANY;
    void *buf = NULL;
    size_t n = 0;
    r[1] = lev_recv(&from, &buf, &n, -1);
    free(buf);
    if (from != 99)
        r[1] = -100;
    r[2] = lev_send(99, "x", 1);
    lev_return(r, sizeof r);
}

/* One leg of a one-way stream between places 0 and 1: place 0 sends
 * `rounds` messages of 64 bytes numbered from 0 to place 1, which checks
 * their order. The messages sent or received in order; -1 on a fault. */
static long msg_stream_leg(const msg_cfg *c, uint64_t peer)
{
    long res = 0;
    for (long i = 0; i < c->rounds && res >= 0; i++) {
        long m[8] = {i};
        if (c->me == 0) {
            res = lev_send(peer, m, sizeof m) ? -1 : res + 1;
            continue;
        }
        uint64_t from = peer;
        void *buf = NULL;
        size_t n = 0;
        if (lev_recv(&from, &buf, &n, -1) || n != sizeof m || ((long *)buf)[0] != i)
            res = -1;
        else
            res++;
        free(buf);
    }
    return res;
}

/* A one-way stream (msg_cfg from the client, two places): place 0 sends
 * `rounds` messages of 64 bytes to place 1, which checks their order and
 * answers once at the end; the sender's window fills and waits for the
 * receiver (flow control). Returns the messages received in order
 * (place 1) or the answer's length (place 0); -1 on a failed call. */
LEV_TASK void pc_stream(const void *arg, size_t len)
{
    (void)arg;
    (void)len;
    msg_cfg c;
    long res = -1;
    if (!msg_get_cfg(&c)) {
        lev_return(&res, sizeof res);
        return;
    }
    uint64_t peer = c.ids[1 - c.me];
    res = msg_stream_leg(&c, peer);
    uint64_t from = peer;
    void *buf = NULL;
    size_t n = 0;
    if (res >= 0 && c.me == 1 && lev_send(peer, "k", 1))
        res = -1;
    if (res >= 0 && c.me == 0)
        res = lev_recv(&from, &buf, &n, -1) ? -1 : (long)n;
    free(buf);
    lev_return(&res, sizeof res);
}

/* A flood (msg_cfg from the client): place 0 sends place 1 `rounds`
 * messages numbered from 0 and returns how many went; place 1 takes none
 * before a message from the client (its gate), then takes them all,
 * checking their order, and returns how many came (-1 on a fault). */
LEV_TASK void pc_flood(const void *arg, size_t len)
{
    (void)arg;
    (void)len;
    msg_cfg c;
    long res = -1;
    if (!msg_get_cfg(&c)) {
        lev_return(&res, sizeof res);
        return;
    }
    uint64_t peer = c.ids[1 - c.me];
    if (c.me == 1) {
        uint64_t from = LEV_CLIENT;
        void *buf = NULL;
        size_t n = 0;
        int rc = lev_recv(&from, &buf, &n, -1);
        free(buf);
        if (rc) {
            lev_return(&res, sizeof res);
            return;
        }
    }
    res = msg_stream_leg(&c, peer);
    lev_return(&res, sizeof res);
}

/* Sends VT 99 a message one byte above the 16 MiB limit: the runtime
 * refuses it at once. Returns lev_send's code and whether its detail
 * names the limit (int32_t each). */
LEV_TASK void pc_oversize(const void *arg, size_t len)
{
    (void)arg;
    (void)len;
    size_t n = ((size_t)16 << 20) + 1;
    char *big = calloc(1, n);
    int32_t r[2] = {big ? lev_send(99, big, n) : 1, 0};
    r[1] = strstr(lev_errdetail(), "limit") != NULL;
    free(big);
    lev_return(r, sizeof r);
}

/* An address in the first page above NULL, where nothing is mapped (as
 * pc_tasks.c's pc_hole), hidden from the compiler. */
static volatile uintptr_t msg_hole = 4096;

/* Ends of VTs (msg_cfg from the client, three places), place 0: sends
 * "hello" to place 1, takes the lock of "end_lock", waits for its
 * client's gate holding the lock, then crashes its executor (the
 * deployer's --crash-limit 1 makes that a failure for good). */
LEV_TASK void pc_end_fail(const void *arg, size_t len)
{
    (void)arg;
    (void)len;
    msg_cfg c;
    long res = -1;
    void *v = NULL;
    size_t n = 0;
    if (!msg_get_cfg(&c) || lev_send(c.ids[1], "hello", 6) || lev_global_lock("end_lock", &v, &n)) {
        lev_return(&res, sizeof res);
        return;
    }
    free(v);
    uint64_t from = LEV_CLIENT;
    lev_recv(&from, &v, &n, -1);
    free(v);
    res = *(volatile long *)msg_hole;
    lev_return(&res, sizeof res);
}

/* Place 1: receives from place 0 (its "hello", reported; then, while
 * place 0 fails, the error of its end; then again), from place 2 ("bye",
 * then the end of its normal finish). Returns msg_end_res. */
LEV_TASK void pc_end_recv(const void *arg, size_t len)
{
    (void)arg;
    (void)len;
    msg_end_res r;
    memset(&r, 0, sizeof r);
    msg_cfg c;
    if (!msg_get_cfg(&c)) {
        lev_return(&r, sizeof r);
        return;
    }
    int32_t *rc[5] = {&r.hello, &r.failed, &r.failed_again, &r.bye, &r.ended};
    for (int i = 0; i < 5; i++) {
        uint64_t from = c.ids[i < 3 ? 0 : 2];
        void *buf = NULL;
        size_t n = 0;
        *rc[i] = lev_recv(&from, &buf, &n, -1);
        r.from[i] = from;
        if (*rc[i] == 0 && (n != (i ? 4u : 6u) || memcmp(buf, i ? "bye" : "hello", n)))
            *rc[i] = 1; /* not the message it should be */
        free(buf);
        if (i == 0)
            lev_report(rc[i], sizeof *rc[i]);
    }
    lev_return(&r, sizeof r);
}

/* Place 2: sends "bye" to place 1, then waits for the lock of "end_lock"
 * that place 0 holds when it fails; returns the value the lock gave (a
 * long; -1 on a failed call) after unlocking it unchanged. */
LEV_TASK void pc_end_lock(const void *arg, size_t len)
{
    (void)arg;
    (void)len;
    msg_cfg c;
    long res = -1;
    void *v = NULL;
    size_t n = 0;
    if (msg_get_cfg(&c) && !lev_send(c.ids[1], "bye", 4) && !lev_global_lock("end_lock", &v, &n)) {
        if (n == sizeof res)
            memcpy(&res, v, sizeof res);
        if (lev_global_unlock("end_lock", NULL, 0))
            res = -1;
    }
    free(v);
    lev_return(&res, sizeof res);
}

/* Argument: msg_put_arg. For i = 1..times: puts i into "put.s<slot>"
 * (version i) and i * nslots + slot into "put.max" (the same number as
 * its version, so puts of the VTs interleave and the highest wins); every
 * 25th time locks "put.s<slot>" and checks that it holds i (a VT's puts
 * reach the deployer before its lock). After the puts of round `gate` it
 * waits for a message from the client. Ends with a put of version 1 into
 * "put.max", which never applies. */
LEV_TASK void pc_put(const void *arg, size_t len)
{
    msg_put_res res = {0, 0, 0};
    msg_put_arg a;
    if (len != sizeof a) {
        res.bad_at = -1;
        lev_return(&res, sizeof res);
        return;
    }
    memcpy(&a, arg, sizeof a);
    char mine[32];
    snprintf(mine, sizeof mine, "put.s%ld", a.slot);
    for (long i = 1; i <= a.times && !res.bad_at; i++) {
        long mx = i * a.nslots + a.slot;
        if (lev_global_put(mine, &i, sizeof i, (uint64_t)i) ||
            lev_global_put("put.max", &mx, sizeof mx, (uint64_t)mx)) {
            res.bad_at = i;
            break;
        }
        if (i == a.gate) {
            uint64_t from = LEV_CLIENT;
            void *m = NULL;
            size_t n = 0;
            if (lev_recv(&from, &m, &n, -1))
                res.bad_at = i;
            free(m);
        }
        if (i % 25)
            continue;
        void *v = NULL;
        size_t n = 0;
        long got = -1;
        if (lev_global_lock(mine, &v, &n) || n != sizeof got) {
            res.bad_at = i;
        } else {
            memcpy(&got, v, sizeof got);
            if (got != i) {
                res.bad_at = i;
                res.got = got;
            }
        }
        free(v);
        if (lev_global_unlock(mine, NULL, 0))
            res.bad_at = i;
    }
    long zero = 0;
    if (!res.bad_at && lev_global_put("put.max", &zero, sizeof zero, 1))
        res.bad_at = a.times + 1;
    res.done = res.bad_at ? 0 : a.times;
    lev_return(&res, sizeof res);
}

/* Locks "put.w", waits for a message from the client, then
 * unlocks "put.w" leaving its value as it was. Returns 0, or the code of
 * the call that failed. */
LEV_TASK void pc_put_holder(const void *arg, size_t len)
{
    (void)arg;
    (void)len;
    void *v = NULL, *m = NULL;
    size_t n = 0;
    uint64_t from = LEV_CLIENT;
    int rc = lev_global_lock("put.w", &v, &n);
    free(v);
    if (!rc)
        rc = lev_recv(&from, &m, &n, -1);
    free(m);
    if (!rc)
        rc = lev_global_unlock("put.w", NULL, 0);
    int32_t r = rc;
    lev_return(&r, sizeof r);
}

/* Puts 77 into "put.w" (version 5), then makes the puts that are
 * refused. Returns their codes: that put, version 0, an empty name, a
 * value NULL with a length, and a put while holding "put.e". */
LEV_TASK void pc_put_once(const void *arg, size_t len)
{
    (void)arg;
    (void)len;
    long v77 = 77;
    int32_t r[5];
    r[0] = lev_global_put("put.w", &v77, sizeof v77, 5);
    r[1] = lev_global_put("put.w", &v77, sizeof v77, 0);
    r[2] = lev_global_put("", &v77, sizeof v77, 6);
    r[3] = lev_global_put("put.w", NULL, 8, 6);
    void *v = NULL;
    size_t n = 0;
    r[4] = lev_global_lock("put.e", &v, &n);
    free(v);
    if (!r[4]) {
        r[4] = lev_global_put("put.w", &v77, sizeof v77, 7);
        lev_global_unlock("put.e", NULL, 0);
    }
    lev_return(r, sizeof r);
}

/* Reads one long of global `name` into *v; false on a failed call or a
 * value that is not a long. */
static int msg_read_long(const char *name, long *v)
{
    void *p = NULL;
    size_t n = 0;
    int ok = !lev_global_read(name, &p, &n) && n == sizeof *v;
    if (ok)
        memcpy(v, p, sizeof *v);
    free(p);
    return ok;
}

/* Notes the first failed check of pc_reads. */
static void msg_read_bad(msg_read_res *res, long r, int what, long got, long want)
{
    if (res->bad_at)
        return;
    res->bad_at = r;
    res->what = what;
    res->got = got;
    res->want = want;
}

/* A VT of a ring whose reads are checked against what they promise
 * (msg_cfg from the client; docs/GLOBAL_READS.md). Each round: adds one
 * to "rd.ctr" under its lock, then reads it (its own write, and never
 * less than its previous read); puts the round in its own "rd.p<me>" and
 * reads it back; sends the round to the next place; takes the previous
 * place's round and reads its "rd.p" (never older than what the message
 * says was put before it was sent); reads "rd.cfg" (MSG_READ_CFG, set by
 * the client) three times. Returns a msg_read_res. */
LEV_TASK void pc_reads(const void *arg, size_t len)
{
    (void)arg;
    (void)len;
    msg_read_res res = {0, 0, 0, 0, 0};
    msg_cfg c;
    if (!msg_get_cfg(&c) || c.n < 2) {
        msg_read_bad(&res, -1, MSG_READ_CALL, 0, 0);
        lev_return(&res, sizeof res);
        return;
    }
    char mine[32], prev[32];
    long pp = (c.me + c.n - 1) % c.n;
    snprintf(mine, sizeof mine, "rd.p%ld", c.me);
    snprintf(prev, sizeof prev, "rd.p%ld", pp);
    long last = 0; /* its last read of "rd.ctr" */
    for (long r = 1; r <= c.rounds && !res.bad_at; r++) {
        void *p = NULL;
        size_t n = 0;
        long ctr = -1, v = -1;
        if (lev_global_lock("rd.ctr", &p, &n) || n != sizeof ctr) {
            free(p);
            msg_read_bad(&res, r, MSG_READ_CALL, 1, 0);
            break;
        }
        memcpy(&ctr, p, sizeof ctr);
        free(p);
        ctr++;
        if (lev_global_unlock("rd.ctr", &ctr, sizeof ctr) || !msg_read_long("rd.ctr", &v)) {
            msg_read_bad(&res, r, MSG_READ_CALL, 2, 0);
            break;
        }
        if (v < ctr)
            msg_read_bad(&res, r, MSG_READ_OWN, v, ctr);
        if (v < last)
            msg_read_bad(&res, r, MSG_READ_OLDER, v, last);
        last = v;
        if (lev_global_put(mine, &r, sizeof r, (uint64_t)r) || !msg_read_long(mine, &v)) {
            msg_read_bad(&res, r, MSG_READ_CALL, 3, 0);
            break;
        }
        if (v < r)
            msg_read_bad(&res, r, MSG_READ_OWN, v, r);
        uint64_t from = c.ids[pp];
        if (lev_send(c.ids[(c.me + 1) % c.n], &r, sizeof r) || lev_recv(&from, &p, &n, -1) ||
            n != sizeof v) {
            free(p);
            msg_read_bad(&res, r, MSG_READ_CALL, 4, 0);
            break;
        }
        long told = -1;
        memcpy(&told, p, sizeof told);
        free(p);
        if (!msg_read_long(prev, &v)) {
            msg_read_bad(&res, r, MSG_READ_CALL, 5, 0);
            break;
        }
        if (v < told)
            msg_read_bad(&res, r, MSG_READ_CAUSAL, v, told);
        for (int k = 0; k < 3; k++) {
            if (!msg_read_long("rd.cfg", &v))
                msg_read_bad(&res, r, MSG_READ_CALL, 6, 0);
            else if (v != MSG_READ_CFG)
                msg_read_bad(&res, r, MSG_READ_CFGV, v, MSG_READ_CFG);
        }
    }
    res.done = res.bad_at ? 0 : c.rounds;
    lev_return(&res, sizeof res);
}
