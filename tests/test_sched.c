/* test_sched.c - the executor: many VTs to completion, yield fairness,
 * block and wake (a wake before the park included), cancel, preemption of
 * a VT stuck in a polling loop, waits and their errors, shutdown, the task
 * calls (lev_self, lev_report, lev_return) and many yielders. Captures are
 * in test_sched_capture.c; the tasks in sched_tasks.c.
 *
 * Every wait has a time limit; conditions are polled, never assumed after
 * a sleep.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "clock.h"
#include "executor.h"
#include "image.h"
#include "lev_task.h"
#include "rt.h"
#include "vt.h"

extern char **environ;
#include "sched_tasks.h"

/* ===================================================================
 * Tests
 * =================================================================== */

static void test_many_vts(void **state)
{
    (void)state;
    enum { N = 400 };
    rt_exec *ex = sched_exec(4, 0);
    static rt_vt *vts[N];
    for (int i = 0; i < N; i++)
        vts[i] = sched_spawn(ex, FN_FIB_TASK, 8 + i % 9, 5 + i % 3);
    for (int i = 0; i < N; i++) {
        sched_wait_ok(ex, vts[i]);
        assert_int_equal(sched_result(vts[i]), sched_fib(8 + i % 9));
    }
    rt_exec_stats st;
    rt_exec_stats_get(ex, &st);
    assert_true(st.switches > 0);
    rt_exec_destroy(&ex);
    assert_null(ex);
    rt_exec_destroy(&ex); /* harmless */
    for (int i = 0; i < N; i++)
        rt_vt_destroy(&vts[i]);
}

static void test_mixed_tasks_two_workers(void **state)
{
    (void)state;
    rt_exec *ex = sched_exec(2, 0);
    rt_vt *a = sched_spawn(ex, FN_STEPS_TASK, 500, -1);
    rt_vt *b = sched_spawn(ex, FN_LIST_TASK, 700, 0);
    rt_vt *c = sched_spawn(ex, FN_FIB_TASK, 16, 4);
    sched_wait_ok(ex, a);
    sched_wait_ok(ex, b);
    sched_wait_ok(ex, c);
    assert_int_equal(sched_result(a), sched_steps(500));
    assert_int_equal(sched_result(b), sched_list(700));
    assert_int_equal(sched_result(c), sched_fib(16));
    rt_exec_destroy(&ex);
    rt_vt_destroy(&a);
    rt_vt_destroy(&b);
    rt_vt_destroy(&c);
}

/* On one worker, once every VT has run, yields go round robin: between two
 * turns of a VT no other VT has two. */
static void test_yield_fairness(void **state)
{
    (void)state;
    enum { N = 16, ROUNDS = 200 };
    rt_exec *ex = sched_exec(1, -1);
    rt_vt *vts[N];
    for (int i = 0; i < N; i++)
        vts[i] = sched_spawn(ex, FN_LOG_TASK, i, ROUNDS);
    for (int i = 0; i < N; i++)
        sched_wait_ok(ex, vts[i]);
    int n = atomic_load(&g_log_n);
    assert_int_equal(n, N * ROUNDS);
    int start = 0, seen = 0;
    bool was[N] = {0};
    while (seen < N) {
        if (!was[g_log[start]]) {
            was[g_log[start]] = true;
            seen++;
        }
        start++;
    }
    static int since[N][N]; /* since[x][y]: turns of y since x's last */
    memset(since, 0, sizeof since);
    bool active[N] = {0};
    for (int p = start; p < n; p++) {
        int x = g_log[p];
        if (active[x])
            for (int y = 0; y < N; y++)
                if (since[x][y] > 1)
                    fail_msg("VT %d had %d turns between two of VT %d (log position %d)", y,
                             since[x][y], x, p);
        active[x] = true;
        memset(since[x], 0, sizeof since[x]);
        for (int y = 0; y < N; y++)
            since[y][x]++;
    }
    rt_exec_destroy(&ex);
    for (int i = 0; i < N; i++)
        rt_vt_destroy(&vts[i]);
}

static void test_block_wake(void **state)
{
    (void)state;
    rt_exec *ex = sched_exec(2, 0);
    rt_vt *vt = sched_spawn(ex, FN_BLOCK_TASK, 3, 0);
    assert_true(sched_until(sched_parked, ex));
    assert_int_equal(rt_exec_wait(ex, vt, 0), LEV_ETIMEDOUT);
    atomic_store(&g_flag[3], 1);
    assert_int_equal(rt_exec_wake(vt), 0);
    sched_wait_ok(ex, vt);
    assert_true(sched_result(vt) >= 1);
    assert_int_equal(rt_exec_wake(vt), LEV_ENOVT); /* ended */
    rt_exec_destroy(&ex);
    rt_vt_destroy(&vt);
}

/* The host's idle wait (rt_exec_opts.idle), as an executor that reads
 * its socket while idle: an eventfd stands for the socket and for
 * wake(); a frame that "arrives" names the VT it wakes. */
typedef struct s_idle {
    int efd;
    atomic_int inside, most, calls, wakes;
    rt_vt *_Atomic deliver; /* a frame for this VT is there */
} s_idle;

static void s_idle_wait(void *ud)
{
    s_idle *h = ud;
    int in = atomic_fetch_add(&h->inside, 1) + 1;
    if (in > atomic_load(&h->most))
        atomic_store(&h->most, in);
    atomic_fetch_add(&h->calls, 1);
    struct pollfd p = {.fd = h->efd, .events = POLLIN};
    if (poll(&p, 1, -1) > 0) {
        uint64_t n;
        if (read(h->efd, &n, sizeof n) < 0)
            n = 0;
    }
    rt_vt *vt = atomic_exchange(&h->deliver, NULL);
    if (vt) { /* the input is delivered here, on this worker */
        atomic_store(&g_flag[3], 1);
        assert_int_equal(rt_exec_wake(vt), 0);
    }
    atomic_fetch_sub(&h->inside, 1);
}

static void s_idle_wake(void *ud)
{
    s_idle *h = ud;
    atomic_fetch_add(&h->wakes, 1);
    uint64_t one = 1;
    assert_true(write(h->efd, &one, sizeof one) == sizeof one);
}

static bool s_idling(void *ud) { return atomic_load(&((s_idle *)ud)->inside) == 1; }

/* One idle worker at a time waits in the host's wait; an input it
 * delivers there runs its VT, work that comes from elsewhere wakes it,
 * and so does the executor's end. */
static void test_idle_wait(void **state)
{
    (void)state;
    static s_idle h;
    memset(&h, 0, sizeof h);
    h.efd = eventfd(0, EFD_CLOEXEC);
    assert_true(h.efd >= 0);
    rt_exec_opts o = {.workers = 3, .idle = {.wait = s_idle_wait, .wake = s_idle_wake, .ud = &h}};
    rt_exec *ex;
    assert_int_equal(rt_exec_new(&ex, &o), 0);
    assert_true(sched_until(s_idling, &h));
    /* a VT parks; its input comes through the idle wait */
    rt_vt *vt = sched_spawn(ex, FN_BLOCK_TASK, 3, 0);
    assert_true(sched_until(sched_parked, ex));
    assert_true(sched_until(s_idling, &h));
    atomic_store(&h.deliver, vt);
    uint64_t one = 1;
    assert_true(write(h.efd, &one, sizeof one) == sizeof one); /* a frame arrives */
    sched_wait_ok(ex, vt);
    assert_true(sched_result(vt) >= 1);
    rt_vt_destroy(&vt);
    assert_true(sched_until(s_idling, &h));
    rt_exec_destroy(&ex);                      /* wakes the worker in the wait, or it would hang */
    assert_int_equal(atomic_load(&h.most), 1); /* of three idle workers */
    assert_int_equal(atomic_load(&h.inside), 0);
    /* one worker, in the wait: work spawned from elsewhere must wake it */
    o.workers = 1;
    assert_int_equal(rt_exec_new(&ex, &o), 0);
    for (int i = 0; i < 8; i++) {
        assert_true(sched_until(s_idling, &h));
        int wakes = atomic_load(&h.wakes);
        rt_vt *more = sched_spawn(ex, FN_FIB_TASK, 15, 0);
        sched_wait_ok(ex, more);
        rt_vt_destroy(&more);
        assert_true(atomic_load(&h.wakes) > wakes);
    }
    rt_exec_destroy(&ex);
    assert_int_equal(atomic_load(&h.inside), 0);
    close(h.efd);
}

/* The report callback runs on the VT's worker before the VT parks: a wake
 * sent from it arrives before the park and must not be lost. */
static void s_wake_on_report(rt_vt *vt, const void *buf, size_t len, void *ud)
{
    (void)buf;
    (void)len;
    (void)ud;
    assert_int_equal(rt_exec_wake(vt), 0);
}

static void test_wake_before_park(void **state)
{
    (void)state;
    rt_exec_opts o = {.workers = 2, .on_report = s_wake_on_report};
    rt_exec *ex;
    assert_int_equal(rt_exec_new(&ex, &o), 0);
    enum { N = 50 };
    rt_vt *vts[N];
    for (int i = 0; i < N; i++)
        vts[i] = sched_spawn(ex, FN_BLOCK_TASK, 0, 1);
    for (int i = 0; i < N; i++) {
        sched_wait_ok(ex, vts[i]);
        assert_int_equal(sched_result(vts[i]), 1);
    }
    rt_exec_destroy(&ex);
    for (int i = 0; i < N; i++)
        rt_vt_destroy(&vts[i]);
}

/* Two VTs on two workers wake each other thousands of times: wakes race
 * with parks all the time. */
static void test_ping_pong(void **state)
{
    (void)state;
    enum { ROUNDS = 3000 };
    rt_exec *ex = sched_exec(2, 0);
    g_peer[0] = sched_new(FN_PING_TASK, 0, ROUNDS);
    g_peer[1] = sched_new(FN_PING_TASK, 1, ROUNDS);
    assert_int_equal(rt_exec_spawn(ex, g_peer[0]), 0);
    assert_int_equal(rt_exec_spawn(ex, g_peer[1]), 0);
    sched_wait_ok(ex, g_peer[0]);
    sched_wait_ok(ex, g_peer[1]);
    assert_int_equal(atomic_load(&g_turn), 2 * ROUNDS);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&g_peer[0]);
    rt_vt_destroy(&g_peer[1]);
}

static void test_cancel(void **state)
{
    (void)state;
    rt_exec *ex = sched_exec(2, 0);
    int slot = 5;
    rt_vt *spin = sched_spawn(ex, FN_SPIN_TASK, slot, 0);
    rt_vt *parked = sched_spawn(ex, FN_BLOCK_TASK, 6, 0);
    assert_true(sched_until(sched_progress_pos, &slot));
    assert_true(sched_until(sched_parked, ex));
    assert_int_equal(rt_exec_cancel(spin), 0);
    assert_int_equal(rt_exec_cancel(parked), 0);
    sched_canceled(ex, spin);
    sched_canceled(ex, parked);
    assert_int_equal(rt_exec_cancel(spin), LEV_ENOVT);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&spin);
    rt_vt_destroy(&parked);
}

/* A VT canceled while it waits in the queue ends without running. */
static void test_cancel_queued(void **state)
{
    (void)state;
    rt_exec *ex = sched_exec(1, 0);
    int slot = 1;
    rt_vt *spin = sched_spawn(ex, FN_SPIN_TASK, slot, 0);
    assert_true(sched_until(sched_progress_pos, &slot));
    rt_vt *queued = sched_spawn(ex, FN_SPIN_TASK, 2, 0);
    assert_int_equal(rt_exec_cancel(queued), 0);
    sched_canceled(ex, queued);
    assert_int_equal(atomic_load(&g_progress[2]), 0);
    assert_int_equal(rt_exec_wait(ex, spin, 0), LEV_ETIMEDOUT); /* still running */
    atomic_store(&g_flag[slot], 1);
    sched_wait_ok(ex, spin);
    assert_true(sched_result(spin) > 0);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&spin);
    rt_vt_destroy(&queued);
}

typedef struct s_ticks_past {
    rt_exec *ex;
    uint64_t until;
} s_ticks_past;

static bool s_ticks_passed(void *arg)
{
    s_ticks_past *t = arg;
    rt_exec_stats st;
    rt_exec_stats_get(t->ex, &st);
    return st.ticks >= t->until;
}

/* A VT alone on its worker, with nothing waiting, runs on for many time
 * slices without being cut (a cut would only unwind and resume it); once
 * another VT waits, its slice is cut and the other runs. The slices are
 * counted in the timer's own rounds, not in time: a loaded machine may
 * delay the timer, never make it skip a round. */
static void test_no_preemption_alone(void **state)
{
    (void)state;
    rt_exec *ex = sched_exec(1, 2);
    int slot = 5;
    rt_vt *spin = sched_spawn(ex, FN_SPIN_TASK, slot, 0);
    assert_true(sched_until(sched_progress_pos, &slot));
    rt_exec_stats st;
    rt_exec_stats_get(ex, &st);
    s_ticks_past ten_slices = {ex, st.ticks + 20}; /* two rounds a slice */
    assert_true(sched_until(s_ticks_passed, &ten_slices));
    rt_exec_stats_get(ex, &st);
    assert_int_equal(st.preempts, 0);
    rt_vt *set = sched_spawn(ex, FN_SET_TASK, slot, 0);
    sched_wait_ok(ex, set);
    sched_wait_ok(ex, spin);
    rt_exec_stats_get(ex, &st);
    assert_true(st.preempts >= 1);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&spin);
    rt_vt_destroy(&set);
}

/* One worker: a VT spins in a polling loop until a flag that only another
 * VT sets. Only the timer's preemption lets that one run. */
static void test_preemption(void **state)
{
    (void)state;
    rt_exec *ex = sched_exec(1, 5);
    int slot = 7;
    rt_vt *spin = sched_spawn(ex, FN_SPIN_TASK, slot, 0);
    assert_true(sched_until(sched_progress_pos, &slot));
    rt_vt *set = sched_spawn(ex, FN_SET_TASK, slot, 0);
    sched_wait_ok(ex, set);
    sched_wait_ok(ex, spin);
    assert_true(sched_result(spin) > 0);
    rt_exec_stats st;
    rt_exec_stats_get(ex, &st);
    assert_true(st.preempts >= 1);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&spin);
    rt_vt_destroy(&set);
}

/* Two spinners on one worker both make progress. */
static bool s_both_progress(void *arg)
{
    (void)arg;
    return atomic_load(&g_progress[10]) > 1000 && atomic_load(&g_progress[11]) > 1000 &&
           atomic_load(&g_flag[12]) == 0;
}

static void test_preemption_shares_worker(void **state)
{
    (void)state;
    rt_exec *ex = sched_exec(1, 2);
    rt_vt *a = sched_spawn(ex, FN_SPIN_TASK, 10, 0);
    rt_vt *b = sched_spawn(ex, FN_SPIN_TASK, 11, 0);
    assert_true(sched_until(s_both_progress, NULL));
    atomic_store(&g_flag[10], 1);
    atomic_store(&g_flag[11], 1);
    sched_wait_ok(ex, a);
    sched_wait_ok(ex, b);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&a);
    rt_vt_destroy(&b);
}

static void test_wait_timeout_and_errors(void **state)
{
    (void)state;
    rt_exec *ex = sched_exec(1, 0);
    rt_vt *spin = sched_spawn(ex, FN_SPIN_TASK, 4, 0);
    uint64_t t0 = rt_now_ns();
    assert_int_equal(rt_exec_wait(ex, spin, 20), LEV_ETIMEDOUT);
    assert_true(rt_now_ns() - t0 >= 15000000u);
    assert_int_equal(rt_exec_spawn(ex, spin), LEV_EBUSY);
    rt_vt *never = sched_new(FN_SPIN_TASK, 4, 0);
    assert_int_equal(rt_exec_wait(ex, never, 0), LEV_EINVAL);
    assert_int_equal(rt_exec_wake(never), LEV_ENOVT);
    assert_int_equal(rt_exec_spawn(NULL, never), LEV_EINVAL);
    atomic_store(&g_flag[4], 1);
    sched_wait_ok(ex, spin);
    assert_int_equal(rt_exec_spawn(ex, spin), LEV_EINVAL); /* ended */
    rt_exec_destroy(&ex);
    rt_vt_destroy(&spin);
    rt_vt_destroy(&never);
}

/* --- shutdown, task calls, many VTs -------------------------------- */

static void test_destroy_cancels(void **state)
{
    (void)state;
    rt_exec *ex = sched_exec(1, 0);
    int slot = 20;
    rt_vt *spin = sched_spawn(ex, FN_SPIN_TASK, slot, 0);
    assert_true(sched_until(sched_progress_pos, &slot));
    rt_vt *parked = sched_spawn(ex, FN_BLOCK_TASK, 21, 0);
    assert_true(sched_until(sched_parked, ex));
    rt_vt *queued = sched_spawn(ex, FN_SPIN_TASK, 22, 0);
    /* the spinners never end by themselves: a destroy that waited for
     * them instead of cancelling would not return (ctest's limit) */
    rt_exec_destroy(&ex);
    rt_vt *all[] = {spin, parked, queued};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(all[i]->state, RT_VT_FAILED);
        assert_int_equal(all[i]->err, LEV_ECANCELED);
        rt_vt_destroy(&all[i]);
    }
}

static void test_task_calls(void **state)
{
    (void)state;
    assert_int_equal(lev_self(), 0);
    assert_int_equal(lev_report("x", 1), LEV_ENOVT);
    assert_int_equal(lev_return("x", 1), LEV_ENOVT);
    assert_int_equal(lev_checkpoint(), 0);
    rt_exec_opts o = {.workers = 1, .on_report = sched_keep_self};
    rt_exec *ex;
    assert_int_equal(rt_exec_new(&ex, &o), 0);
    rt_vt *vt = sched_spawn(ex, FN_SELF_TASK, 0, 0);
    sched_wait_ok(ex, vt);
    assert_int_equal(sched_result(vt), (int64_t)vt->id);
    assert_int_equal(g_reported_self, vt->id);
    assert_true(vt->id >= 2);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&vt);
}

/* Many VTs yielding in turn on one worker all end, each yield a switch.
 * (What a switch costs is measured in eval/bench_vt.c, not here.) */
static void test_many_yielders(void **state)
{
    (void)state;
    enum { N = 500, ROUNDS = 2000 };
    rt_exec *ex = sched_exec(1, 0);
    static rt_vt *vts[N];
    for (int i = 0; i < N; i++)
        vts[i] = sched_new(FN_LOG_TASK, 0, ROUNDS);
    for (int i = 0; i < N; i++)
        assert_int_equal(rt_exec_spawn(ex, vts[i]), 0);
    for (int i = 0; i < N; i++)
        sched_wait_ok(ex, vts[i]);
    rt_exec_stats st;
    rt_exec_stats_get(ex, &st);
    assert_true(st.switches >= (uint64_t)N * ROUNDS - N);
    rt_exec_destroy(&ex);
    for (int i = 0; i < N; i++)
        rt_vt_destroy(&vts[i]);
}
int main(int argc, char **argv)
{
    (void)argc;
    if (sched_tasks_init(argv[0]) != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_many_vts, sched_setup),
        cmocka_unit_test_setup(test_mixed_tasks_two_workers, sched_setup),
        cmocka_unit_test_setup(test_yield_fairness, sched_setup),
        cmocka_unit_test_setup(test_block_wake, sched_setup),
        cmocka_unit_test_setup(test_wake_before_park, sched_setup),
        cmocka_unit_test_setup(test_idle_wait, sched_setup),
        cmocka_unit_test_setup(test_ping_pong, sched_setup),
        cmocka_unit_test_setup(test_cancel, sched_setup),
        cmocka_unit_test_setup(test_cancel_queued, sched_setup),
        cmocka_unit_test_setup(test_preemption, sched_setup),
        cmocka_unit_test_setup(test_preemption_shares_worker, sched_setup),
        cmocka_unit_test_setup(test_no_preemption_alone, sched_setup),
        cmocka_unit_test_setup(test_wait_timeout_and_errors, sched_setup),
        cmocka_unit_test_setup(test_destroy_cancels, sched_setup),
        cmocka_unit_test_setup(test_task_calls, sched_setup),
        cmocka_unit_test_setup(test_many_yielders, sched_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
