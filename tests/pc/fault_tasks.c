/* fault_tasks.c - the task sources of the multi-process fault tests
 * (test_fault.c): VTs that count primes round by round while passing a
 * value around a ring and adding to a locked global counter, then wait at
 * their client's gate; a VT that waits in a receive from another; and one
 * that crashes its executor once its client says so. Every result is a
 * pure function of what the client sends, however often a VT is captured,
 * lost, resumed or moved. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fault_tasks.h"
#include "lev_task.h"

void fault_slice(const fault_cfg *c, int64_t r, int64_t *lo, int64_t *hi)
{
    int64_t parts = c->n * c->rounds, k = r * c->n + c->me;
    *lo = c->below / parts * k;
    *hi = k + 1 == parts ? c->below : c->below / parts * (k + 1);
}

int64_t fault_primes(int64_t lo, int64_t hi)
{
    int64_t count = 0;
    for (int64_t v = lo < 2 ? 2 : lo; v < hi; v++) {
        int prime = v == 2 || v % 2;
        for (int64_t d = 3; prime && d * d <= v; d += 2)
            prime = v % d != 0;
        count += prime;
    }
    return count;
}

int64_t fault_token(int64_t r, int64_t me) { return r * 1000 + me + 1; }

/* Receives one message from the client into buf (len bytes exactly);
 * false if the call failed or what came has another length. */
static int fault_from_client(void *out, size_t want)
{
    uint64_t from = LEV_CLIENT;
    void *buf = NULL;
    size_t n = 0;
    int ok = lev_recv(&from, &buf, &n, -1) == 0 && n == want;
    if (ok && want)
        memcpy(out, buf, want);
    free(buf);
    return ok;
}

/* Adds one to the global "counter" under its lock; 0 or the failed code. */
static int fault_count_one(void)
{
    void *v = NULL;
    size_t n = 0;
    int rc = lev_global_lock("counter", &v, &n);
    if (rc)
        return rc;
    int64_t c = 0;
    if (n == sizeof c)
        memcpy(&c, v, sizeof c);
    free(v);
    c++;
    return lev_global_unlock("counter", &c, sizeof c);
}

/* Argument: none; its fault_cfg comes from the client. Each round counts
 * the primes of its slice, adds one to the counter (cfg.lock), sends
 * fault_token(r, me) to the next place and receives the previous place's
 * (cfg.ring); reports the rounds done every quarter; then waits for one
 * more message from its client (the gate) and returns fault_res. */
LEV_TASK void pc_fault_work(const void *arg, size_t len)
{
    (void)arg;
    (void)len;
    fault_cfg c;
    fault_res res;
    memset(&res, 0, sizeof res);
    if (!fault_from_client(&c, sizeof c) || c.n < 1 || c.n > FAULT_MAXVT || c.me < 0 ||
        c.me >= c.n || c.rounds < 1) {
        res.err = -1000;
        lev_return(&res, sizeof res);
        return;
    }
    uint64_t next = c.ids[(c.me + 1) % c.n], prev = c.ids[(c.me + c.n - 1) % c.n];
    int64_t quarter = c.rounds >= 4 ? c.rounds / 4 : 1;
    for (int64_t r = 0; r < c.rounds && !res.err; r++) {
        int64_t lo, hi;
        fault_slice(&c, r, &lo, &hi);
        res.primes += fault_primes(lo, hi);
        if (c.lock)
            res.err = fault_count_one();
        if (c.ring && c.n > 1 && !res.err) {
            int64_t tok = fault_token(r, c.me);
            res.err = lev_send(next, &tok, sizeof tok);
            uint64_t from = prev;
            void *buf = NULL;
            size_t n = 0;
            if (!res.err)
                res.err = lev_recv(&from, &buf, &n, -1);
            if (!res.err && n == sizeof tok) {
                memcpy(&tok, buf, sizeof tok);
                res.bad |= tok != fault_token(r, (c.me + c.n - 1) % c.n);
                res.ring += tok;
            } else if (!res.err) {
                res.bad = 1;
            }
            free(buf);
        }
        if ((r + 1) % quarter == 0) {
            int64_t done = r + 1;
            lev_report(&done, sizeof done);
        }
    }
    char gate;
    if (!res.err && !fault_from_client(&gate, 1))
        res.err = -1001;
    lev_return(&res, sizeof res);
}

/* Argument: uint64_t x, the VT it waits for. Receives from x three times:
 * its message ("hi", then reported), then what x's end brings, twice.
 * Returns fault_wait_res. */
LEV_TASK void pc_fault_wait(const void *arg, size_t len)
{
    fault_wait_res res;
    memset(&res, 0, sizeof res);
    uint64_t x = 0;
    if (len == sizeof x)
        memcpy(&x, arg, sizeof x);
    int32_t *rc[3] = {&res.first, &res.second, &res.third};
    for (int i = 0; i < 3; i++) {
        uint64_t from = x;
        void *buf = NULL;
        size_t n = 0;
        *rc[i] = lev_recv(&from, &buf, &n, -1);
        res.from[i] = from;
        if (i == 0) {
            res.text_ok = *rc[i] == 0 && n == 3 && !memcmp(buf, "hi", 3);
            lev_report(rc[i], sizeof *rc[i]);
        }
        free(buf);
    }
    lev_return(&res, sizeof res);
}

/* An address in the first page above NULL, where nothing is ever mapped
 * (as pc_tasks.c's pc_hole), hidden from the compiler. */
static volatile uintptr_t fault_hole = 4096;

/* Argument: uint64_t w, the VT that waits for it. Sends w "hi" and waits
 * for its client's message: "c", and it crashes its executor (every time
 * it runs again from its image, until the peer's crash limit fails it);
 * anything else, and it returns lev_send's code. */
LEV_TASK void pc_fault_crash(const void *arg, size_t len)
{
    uint64_t w = 0;
    if (len == sizeof w)
        memcpy(&w, arg, sizeof w);
    int64_t v = lev_send(w, "hi", 3);
    char go;
    if (fault_from_client(&go, 1) && go == 'c')
        v = *(volatile int64_t *)fault_hole;
    lev_return(&v, sizeof v);
}
