/* driver.c - time to a safe point: loop nests without calls (nests.c,
 * through levpp) run as VTs on an executor that takes a checkpoint every
 * 50 ms. Whatever the nest's shape, an image must follow each request
 * within 100 ms: the runtime's own measure of the time from a poll
 * request to the safe point that honours it, in the worker's CPU time,
 * must stay below 20 ms (a capture of these small VTs takes well under a
 * millisecond), and the images must come at least one per 200 ms of the
 * worker's CPU time on average (the checkpoint timer runs on wall time,
 * so a loaded machine only makes them more frequent per CPU second; the
 * margin covers a timer thread that waits for a core). The widest gap
 * between images is printed, not asserted: it also holds the delays of
 * the timer. Results must equal the native code's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "executor.h"
#include "module.h"
#include "nests.h"
#include "rt.h"
#include "ttsp.h"
#include "vt.h"

#define S_CK_MS 50
#define S_RATE_NS 200000000ull /* most worker CPU time per image, on average */
#define S_TTSP_NS 20000000ull  /* most worker CPU time from request to safe point */
#define S_MAX_IMAGES 4096

typedef struct s_log {
    uint64_t cpu[S_MAX_IMAGES + 1]; /* worker CPU time at each image, then at the end */
    unsigned n;
    uint64_t end;
} s_log;

static uint64_t s_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Runs on the worker: the CPU time it has spent so far. */
static void s_on_image(rt_vt *vt, uint8_t *img, size_t len, void *ud)
{
    (void)vt;
    (void)len;
    s_log *l = ud;
    if (l->n < S_MAX_IMAGES)
        l->cpu[l->n++] = s_cpu_now();
    free(img);
}

static void s_on_done(rt_vt *vt, void *ud)
{
    (void)vt;
    ((s_log *)ud)->end = s_cpu_now();
}

/* Runs task `name` with `a` on a fresh one-worker executor and checks its
 * result against `ref` and the gaps between its images. */
static void s_run(const char *name, struct nest_arg a, long ref)
{
    const lev_module *m;
    uint32_t fn;
    assert_int_equal(rt_task_find(name, &m, &fn), 0);
    static s_log l;
    memset(&l, 0, sizeof l);
    rt_ttsp_reset();
    rt_exec_opts o = {.workers = 1,
                      .checkpoint_ms = S_CK_MS,
                      .on_image = s_on_image,
                      .on_done = s_on_done,
                      .ud = &l};
    rt_exec *ex;
    assert_int_equal(rt_exec_new(&ex, &o), 0);
    rt_vt *vt;
    assert_int_equal(rt_vt_new(m, fn, &a, sizeof a, &vt), 0);
    assert_int_equal(rt_exec_spawn(ex, vt), 0);
    assert_int_equal(rt_exec_wait(ex, vt, -1), 0);
    rt_exec_destroy(&ex);
    assert_int_equal(vt->state, RT_VT_DONE);
    assert_int_equal(vt->result_len, sizeof ref);
    long got;
    memcpy(&got, vt->result, sizeof got);
    assert_int_equal(got, ref);
    rt_vt_destroy(&vt);

    /* gaps in worker CPU time: from the worker's start to the first
     * image, between images, from the last image to the end */
    uint64_t prev = 0, worst = 0;
    for (unsigned i = 0; i <= l.n; i++) {
        uint64_t t = i < l.n ? l.cpu[i] : l.end;
        if (t > prev && t - prev > worst)
            worst = t - prev;
        prev = t > prev ? t : prev;
    }
    rt_ttsp_stats st;
    rt_ttsp_get(&st);
    print_message("%s: %u images in %.0f ms of worker CPU, widest gap %.1f ms; time to safe "
                  "point (CPU) max %.3f ms p99 %.3f ms over %llu requests\n",
                  name, l.n, (double)l.end / 1e6, (double)worst / 1e6, (double)st.cpu_max_ns / 1e6,
                  (double)st.cpu_p99_ns / 1e6, (unsigned long long)st.cpu_count);
    assert_true(l.n >= l.end / S_RATE_NS);
    if (l.end >= 2ull * S_CK_MS * 1000000ull) /* long enough that a capture was due */
        assert_true(st.cpu_count >= 1);
    assert_true(st.cpu_max_ns <= S_TTSP_NS);
}

static void t_ring(void **state)
{
    (void)state;
    struct nest_arg a = {200, 1000000};
    s_run("nest_ring", a, nest_ring_ref(&a));
}

static void t_deep(void **state)
{
    (void)state;
    struct nest_arg a = {200, 1000000};
    s_run("nest_deep", a, nest_deep_ref(&a));
}

static void t_list(void **state)
{
    (void)state;
    struct nest_arg a = {10000, 10000}; /* a small heap: a capture's own time counts */
    s_run("nest_list", a, nest_list_ref(&a));
}

static void t_counted3(void **state)
{
    (void)state;
    struct nest_arg a = {600, 1000000};
    s_run("nest_counted3", a, nest_counted3_ref(&a));
}

static void t_macro(void **state)
{
    (void)state;
    struct nest_arg a = {600, 1000000};
    s_run("nest_macro", a, nest_macro_ref(&a));
}

static void t_const(void **state)
{
    (void)state;
    struct nest_arg a = {600, 1000000};
    s_run("nest_const", a, nest_const_ref(&a));
}

static void t_scan(void **state)
{
    (void)state;
    struct nest_arg a = {300, 1000000};
    s_run("nest_scan", a, nest_scan_ref(&a));
}

int main(void)
{
    rt_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_ring),     cmocka_unit_test(t_deep),  cmocka_unit_test(t_list),
        cmocka_unit_test(t_counted3), cmocka_unit_test(t_macro), cmocka_unit_test(t_const),
        cmocka_unit_test(t_scan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
