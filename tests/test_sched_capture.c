/* test_sched_capture.c - captures in the executor: on request and on a
 * period, capture failures, checkpoints of parked VTs (not woken),
 * capture-and-stop of running, queued and parked VTs and of one that
 * fails, identity set by the caller (with the streams a restored VT
 * carries), and torture mode on the executor. The tasks are in
 * sched_tasks.c.
 *
 * `test_sched_capture --torture-child` runs the torture workload and prints
 * its results; the torture test runs it in a child with LEV_TORTURE=1.
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

extern char **environ;

/* --- captures ------------------------------------------------------ */

typedef struct s_images {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* broadcast at every image, error and end */
    int n;
    uint8_t *first;
    size_t first_len;
    int errors;
    int last_err;
    int64_t capture_at; /* report value that asks for a capture */
    int stops;          /* images for a stop (capture_why RT_WANT_STOP) */
    int stop_errors;    /* failed captures for a stop */
    int done;           /* on_done calls */
    int wake_at;        /* at this image: g_flag[wake_slot] set, the VT woken (0: never) */
    int wake_slot;
    int wake_rc; /* what that rt_exec_wake returned */
} s_images;

#define S_IMAGES_INIT .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER

static void s_keep_image(rt_vt *vt, uint8_t *img, size_t len, void *ud)
{
    s_images *im = ud;
    pthread_mutex_lock(&im->mu);
    int n = ++im->n;
    if (vt->capture_why == RT_WANT_STOP)
        im->stops++;
    if (!im->first) {
        im->first = img;
        im->first_len = len;
        img = NULL;
    }
    bool wake = im->wake_at && n == im->wake_at;
    pthread_mutex_unlock(&im->mu);
    free(img);
    if (wake) { /* a wake that arrives while the VT is being captured */
        atomic_store(&g_flag[im->wake_slot], 1);
        int rc = rt_exec_wake(vt);
        pthread_mutex_lock(&im->mu);
        im->wake_rc = rc;
        pthread_mutex_unlock(&im->mu);
    }
    pthread_cond_broadcast(&im->cv);
}

static void s_count_error(rt_vt *vt, int err, const char *detail, void *ud)
{
    (void)detail;
    s_images *im = ud;
    pthread_mutex_lock(&im->mu);
    im->errors++;
    im->last_err = err;
    if (vt->capture_why == RT_WANT_STOP)
        im->stop_errors++;
    pthread_mutex_unlock(&im->mu);
    pthread_cond_broadcast(&im->cv);
}

static void s_count_done(rt_vt *vt, void *ud)
{
    (void)vt;
    s_images *im = ud;
    pthread_mutex_lock(&im->mu);
    im->done++;
    pthread_mutex_unlock(&im->mu);
    pthread_cond_broadcast(&im->cv);
}

/* Waits on im->cv until *count (a field of im) reaches n, at most
 * LIMIT_MS; whether it did. */
static bool s_wait_count(s_images *im, const int *count, int n)
{
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += LIMIT_MS / 1000;
    pthread_mutex_lock(&im->mu);
    int rc = 0;
    while (*count < n && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&im->cv, &im->mu, &dl);
    bool ok = *count >= n;
    pthread_mutex_unlock(&im->mu);
    return ok;
}

static void s_capture_on_report(rt_vt *vt, const void *buf, size_t len, void *ud)
{
    s_images *im = ud;
    int64_t v;
    if (len == sizeof v && (memcpy(&v, buf, sizeof v), v == im->capture_at))
        assert_int_equal(rt_exec_request_capture(vt), 0);
}

/* An executor whose callbacks count into im. */
static rt_exec *s_exec_im(int workers, int slice_ms, int checkpoint_ms, s_images *im)
{
    rt_exec_opts o = {.workers = workers,
                      .slice_ms = slice_ms,
                      .checkpoint_ms = checkpoint_ms,
                      .on_report = s_capture_on_report,
                      .on_done = s_count_done,
                      .on_image = s_keep_image,
                      .on_capture_error = s_count_error,
                      .ud = im};
    rt_exec *ex = NULL;
    assert_int_equal(rt_exec_new(&ex, &o), 0);
    return ex;
}

static bool s_images_n(void *ud)
{
    s_images *im = ud;
    pthread_mutex_lock(&im->mu);
    bool ok = im->n >= 2;
    pthread_mutex_unlock(&im->mu);
    return ok;
}

static bool s_errors_1(void *ud)
{
    s_images *im = ud;
    pthread_mutex_lock(&im->mu);
    bool ok = im->errors >= 1;
    pthread_mutex_unlock(&im->mu);
    return ok;
}

/* A capture requested mid-way; a restored copy finishes like the original. */
static void test_capture_request_and_restore(void **state)
{
    (void)state;
    s_images im = {S_IMAGES_INIT, .capture_at = 300};
    rt_exec *ex = s_exec_im(2, 0, 0, &im);
    rt_vt *vt = sched_spawn(ex, FN_STEPS_TASK, 1000, 300);
    sched_wait_ok(ex, vt);
    assert_int_equal(sched_result(vt), sched_steps(1000));
    assert_int_equal(im.n, 1);
    rt_image_info info;
    assert_int_equal(rt_image_info_get(im.first, im.first_len, &info), 0);
    assert_int_equal(info.vt_id, vt->id);
    assert_int_equal(info.module_hash, lev_module_hash(g_mod));
    rt_vt *copy;
    assert_int_equal(rt_restore(g_mod, im.first, im.first_len, &copy), 0);
    struct steps_task__frame *fr = rt_vt_bottom(copy);
    assert_true(fr->i >= 300 && fr->i < 1000); /* it resumes mid-way */
    assert_int_equal(rt_exec_spawn(ex, copy), 0);
    sched_wait_ok(ex, copy);
    assert_int_equal(sched_result(copy), sched_steps(1000));
    rt_exec_destroy(&ex);
    free(im.first);
    rt_vt_destroy(&vt);
    rt_vt_destroy(&copy);
}

static void test_periodic_checkpoints(void **state)
{
    (void)state;
    s_images im = {S_IMAGES_INIT, .capture_at = -1};
    rt_exec *ex = s_exec_im(1, 0, 2, &im);
    rt_vt *spin = sched_spawn(ex, FN_SPIN_TASK, 8, 0);
    assert_true(sched_until(s_images_n, &im));
    atomic_store(&g_flag[8], 1);
    sched_wait_ok(ex, spin);
    rt_exec_stats st;
    rt_exec_stats_get(ex, &st);
    assert_true(st.captures >= 2);
    rt_image_info info;
    assert_int_equal(rt_image_info_get(im.first, im.first_len, &info), 0);
    assert_int_equal(info.vt_id, spin->id);
    rt_exec_destroy(&ex);
    free(im.first);
    rt_vt_destroy(&spin);
}

/* A checkpoint that cannot be taken is reported and the VT goes on. */
static void test_capture_failure_goes_on(void **state)
{
    (void)state;
    s_images im = {S_IMAGES_INIT, .capture_at = -1};
    rt_exec *ex = s_exec_im(1, 0, 0, &im);
    int slot = 9;
    rt_vt *vt = sched_spawn(ex, FN_BADPTR_TASK, slot, 0);
    assert_true(sched_until(sched_progress_pos, &slot));
    assert_int_equal(rt_exec_request_capture(vt), 0);
    assert_true(sched_until(s_errors_1, &im));
    assert_int_equal(im.last_err, LEV_ECAPTURE);
    assert_int_equal(im.n, 0);
    atomic_store(&g_flag[slot], 1);
    sched_wait_ok(ex, vt);
    assert_int_equal(sched_result(vt), 42);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&vt);
}

static bool s_errors_3(void *ex)
{
    rt_exec_stats st;
    rt_exec_stats_get(ex, &st);
    return st.capture_errors >= 3;
}

/* Without a host callback, the first failure of a VT goes to stderr once. */
static void test_capture_failure_logged_once(void **state)
{
    (void)state;
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    int fd = fileno(tmp);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    rt_exec *ex = sched_exec(1, 0);
    int slot = 13;
    rt_vt *vt = sched_spawn(ex, FN_BADPTR_TASK, slot, 0);
    assert_true(sched_until(sched_progress_pos, &slot));
    for (int i = 0; i < 3; i++) {
        rt_exec_stats st;
        rt_exec_stats_get(ex, &st);
        uint64_t before = st.capture_errors;
        assert_int_equal(rt_exec_request_capture(vt), 0);
        uint64_t end = rt_now_ns() + (uint64_t)LIMIT_MS * 1000000u;
        do {
            sched_sleep_ms(1);
            rt_exec_stats_get(ex, &st);
        } while (st.capture_errors == before && rt_now_ns() < end);
    }
    assert_true(s_errors_3(ex));
    atomic_store(&g_flag[slot], 1);
    sched_wait_ok(ex, vt);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char buf[4096] = {0};
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    fclose(tmp);
    assert_true(n > 0);
    int lines = 0;
    for (char *p = buf; (p = strstr(p, "checkpoint of virtual thread")) != NULL; p++)
        lines++;
    assert_int_equal(lines, 1);
    assert_non_null(strstr(buf, "cannot be captured"));
    assert_int_equal(sched_result(vt), 42);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&vt);
}

/* --- checkpoints of parked VTs, capture-and-stop -------------------- */

typedef struct s_at {
    int slot;
    long long at;
} s_at;

static bool s_progress_past(void *arg)
{
    s_at *a = arg;
    return atomic_load(&g_progress[a->slot]) > a->at;
}

/* A VT parked for many checkpoint intervals is captured where it is
 * parked, again and again, without being woken (it blocks once in all);
 * a wake that arrives while it is being captured is not lost. */
static void test_checkpoint_parked(void **state)
{
    (void)state;
    int slot = 35;
    s_images im = {S_IMAGES_INIT, .capture_at = -1, .wake_slot = slot};
    rt_exec *ex = s_exec_im(2, 0, 5, &im);
    rt_vt *vt = sched_spawn(ex, FN_BLOCK_TASK, slot, 0);
    assert_true(s_wait_count(&im, &im.n, 3)); /* three intervals, parked */
    assert_int_equal(atomic_load(&g_flag[slot]), 0);
    assert_int_equal(rt_exec_wait(ex, vt, 0), LEV_ETIMEDOUT); /* still parked */
    rt_exec_stats st;
    rt_exec_stats_get(ex, &st);
    assert_int_equal(st.parks, 1);
    assert_true(st.captures >= 3);
    assert_int_equal(st.capture_errors, 0);

    /* Each image is of the VT where it parked: blocked once, pc 2. */
    rt_image_info info;
    assert_int_equal(rt_image_info_get(im.first, im.first_len, &info), 0);
    assert_true(info.vt_id == vt->id);
    rt_vt *copy;
    assert_int_equal(rt_restore(g_mod, im.first, im.first_len, &copy), 0);
    struct block_task__frame *fr = rt_vt_bottom(copy);
    assert_int_equal(fr->blocks, 1);
    assert_int_equal(fr->t.h.pc, 2);
    rt_vt_destroy(&copy);

    /* The next image's callback sets the flag and wakes the VT while it
     * is being captured: it runs once the capture is done, and ends. */
    pthread_mutex_lock(&im.mu);
    im.wake_at = im.n + 1;
    pthread_mutex_unlock(&im.mu);
    sched_wait_ok(ex, vt);
    assert_int_equal(im.wake_rc, 0);
    assert_int_equal(sched_result(vt), 1); /* never woken by a checkpoint */
    rt_exec_stats_get(ex, &st);
    assert_int_equal(st.parks, 1);
    assert_int_equal(im.stops, 0);
    rt_exec_destroy(&ex);
    free(im.first);
    rt_vt_destroy(&vt);
}

/* A running VT stopped at a safe point: exactly one image, state STOPPED,
 * and its image, restored, ends with the result of an uninterrupted run. */
static void test_capture_stop_running(void **state)
{
    (void)state;
    enum { N = 200000 };
    s_images im = {S_IMAGES_INIT, .capture_at = -1};
    rt_exec *ex = s_exec_im(2, 0, 0, &im);
    s_at half = {30, N / 2};
    rt_vt *vt = sched_spawn(ex, FN_HASH_TASK, half.slot, N);
    assert_true(sched_until(s_progress_past, &half)); /* polling half-way */
    assert_int_equal(rt_exec_capture_stop(vt), 0);
    sched_wait_ok(ex, vt);
    assert_int_equal(vt->state, RT_VT_STOPPED);
    assert_int_equal(vt->err, 0);
    assert_int_equal(im.n, 1);
    assert_int_equal(im.stops, 1);
    assert_int_equal(im.done, 1);
    assert_int_equal(im.errors, 0);
    rt_exec_stats st;
    rt_exec_stats_get(ex, &st);
    assert_int_equal(st.captures, 1);
    /* Ended: no more requests, no respawn. */
    assert_int_equal(rt_exec_capture_stop(vt), LEV_ENOVT);
    assert_int_equal(rt_exec_wake(vt), LEV_ENOVT);
    assert_int_equal(rt_exec_spawn(ex, vt), LEV_EINVAL);
    assert_int_equal(rt_exec_capture_stop(NULL), LEV_EINVAL);

    rt_image_info info;
    assert_int_equal(rt_image_info_get(im.first, im.first_len, &info), 0);
    assert_true(info.vt_id == vt->id);
    assert_int_equal(info.epoch, vt->epoch);
    rt_vt *copy;
    assert_int_equal(rt_restore(g_mod, im.first, im.first_len, &copy), 0);
    struct hash_task__frame *fr = rt_vt_bottom(copy);
    assert_int_equal(fr->i, N / 2); /* where it waited */
    atomic_store(&g_flag[half.slot], 1);
    assert_int_equal(rt_exec_spawn(ex, copy), 0);
    sched_wait_ok(ex, copy);
    assert_int_equal(sched_result(copy), sched_hash(N));
    rt_vt *whole = sched_spawn(ex, FN_HASH_TASK, half.slot, N); /* uninterrupted */
    sched_wait_ok(ex, whole);
    assert_int_equal(sched_result(whole), sched_hash(N));
    rt_exec_destroy(&ex);
    free(im.first);
    rt_vt_destroy(&vt);
    rt_vt_destroy(&copy);
    rt_vt_destroy(&whole);
}

/* A parked VT: captured without a wake (a capture request, then a stop);
 * a wake that comes right after the stop does not run it. */
static void test_capture_stop_parked(void **state)
{
    (void)state;
    s_images im = {S_IMAGES_INIT, .capture_at = -1};
    rt_exec *ex = s_exec_im(1, 0, 0, &im);
    int slot = 31;
    rt_vt *vt = sched_spawn(ex, FN_BLOCK_TASK, slot, 0);
    assert_true(sched_until(sched_parked, ex));
    assert_int_equal(rt_exec_request_capture(vt), 0);
    assert_true(s_wait_count(&im, &im.n, 1));
    assert_int_equal(rt_exec_wait(ex, vt, 0), LEV_ETIMEDOUT); /* parked again */
    assert_int_equal(rt_exec_capture_stop(vt), 0);
    atomic_store(&g_flag[slot], 1);
    int rc = rt_exec_wake(vt); /* too late: the stop comes first */
    assert_true(rc == 0 || rc == LEV_ENOVT);
    sched_wait_ok(ex, vt);
    assert_int_equal(vt->state, RT_VT_STOPPED);
    assert_int_equal(im.n, 2);
    assert_int_equal(im.stops, 1);
    assert_int_equal(im.done, 1);
    rt_exec_stats st;
    rt_exec_stats_get(ex, &st);
    assert_int_equal(st.parks, 1);
    struct block_task__frame *fr = rt_vt_bottom(vt);
    assert_int_equal(fr->blocks, 1); /* its condition was not run again */

    /* Its image goes on where it parked; the flag is set now. */
    rt_vt *copy;
    assert_int_equal(rt_restore(g_mod, im.first, im.first_len, &copy), 0);
    assert_int_equal(rt_exec_spawn(ex, copy), 0);
    sched_wait_ok(ex, copy);
    assert_int_equal(sched_result(copy), 1);
    rt_exec_destroy(&ex);
    free(im.first);
    rt_vt_destroy(&vt);
    rt_vt_destroy(&copy);
}

/* A queued VT that never ran is stopped when the worker takes it: its
 * image is of its start, and runs to the right result. */
static void test_capture_stop_queued(void **state)
{
    (void)state;
    enum { N = 1000 };
    s_images im = {S_IMAGES_INIT, .capture_at = -1};
    rt_exec *ex = s_exec_im(1, -1, 0, &im); /* one worker, no preemption */
    int spin = 32, slot = 33;
    rt_vt *sp = sched_spawn(ex, FN_SPIN_TASK, spin, 0);
    assert_true(sched_until(sched_progress_pos, &spin)); /* holds the only worker */
    rt_vt *vt = sched_spawn(ex, FN_HASH_TASK, slot, N);
    assert_int_equal(rt_exec_capture_stop(vt), 0);
    atomic_store(&g_flag[spin], 1);
    sched_wait_ok(ex, sp);
    sched_wait_ok(ex, vt);
    assert_int_equal(vt->state, RT_VT_STOPPED);
    assert_int_equal(atomic_load(&g_progress[slot]), 0); /* it never ran */
    assert_int_equal(im.n, 1);
    assert_int_equal(im.stops, 1);
    assert_int_equal(im.done, 2);
    rt_vt *copy;
    assert_int_equal(rt_restore(g_mod, im.first, im.first_len, &copy), 0);
    assert_int_equal(((lev_frame *)rt_vt_bottom(copy))->pc, 0);
    atomic_store(&g_flag[slot], 1);
    assert_int_equal(rt_exec_spawn(ex, copy), 0);
    sched_wait_ok(ex, copy);
    assert_int_equal(sched_result(copy), sched_hash(N));
    rt_exec_destroy(&ex);
    free(im.first);
    rt_vt_destroy(&sp);
    rt_vt_destroy(&vt);
    rt_vt_destroy(&copy);
}

/* A stop whose capture fails (a pointer to malloc'd memory is live) is
 * reported and the VT goes on to its end. */
static void test_capture_stop_fails(void **state)
{
    (void)state;
    s_images im = {S_IMAGES_INIT, .capture_at = -1};
    rt_exec *ex = s_exec_im(1, 0, 0, &im);
    s_at at = {34, 0};
    rt_vt *vt = sched_spawn(ex, FN_BADPTR_TASK, at.slot, 0);
    assert_true(sched_until(s_progress_past, &at));
    assert_int_equal(rt_exec_capture_stop(vt), 0);
    assert_true(s_wait_count(&im, &im.stop_errors, 1));
    assert_int_equal(im.last_err, LEV_ECAPTURE);
    assert_int_equal(im.n, 0);
    at.at = atomic_load(&g_progress[at.slot]) + 1000;
    assert_true(sched_until(s_progress_past, &at)); /* it goes on running */
    assert_int_equal(rt_exec_wait(ex, vt, 0), LEV_ETIMEDOUT);
    atomic_store(&g_flag[at.slot], 1);
    sched_wait_ok(ex, vt);
    assert_int_equal(sched_result(vt), 42);
    assert_int_equal(im.done, 1);
    assert_int_equal(im.stops, 0);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&vt);
}

/* lev_self() and images give the id set before the spawn; a spawned VT's
 * identity is not set. */
static void test_identity_set(void **state)
{
    (void)state;
    rt_exec_opts o = {.workers = 1, .on_report = sched_keep_self};
    rt_exec *ex;
    assert_int_equal(rt_exec_new(&ex, &o), 0);
    rt_vt *vt = sched_new(FN_SELF_TASK, 0, 0);
    const uint64_t id = 0xFEDCBA9876543210ull;
    assert_int_equal(rt_vt_set_identity(vt, id, 3), 0);
    assert_int_equal(rt_exec_spawn(ex, vt), 0);
    sched_wait_ok(ex, vt);
    assert_int_equal(sched_result(vt), (int64_t)id);
    assert_true(g_reported_self == id);
    assert_int_equal(vt->epoch, 3);
    assert_int_equal(rt_vt_set_identity(vt, id, 4), LEV_EINVAL); /* ended */

    int slot = 36;
    rt_vt *parked = sched_spawn(ex, FN_BLOCK_TASK, slot, 0);
    uint64_t before = parked->id;
    assert_int_equal(rt_vt_set_identity(parked, 1234, 2), LEV_EINVAL); /* spawned */
    assert_non_null(strstr(lev_errdetail(), "spawned"));
    assert_true(parked->id == before);
    atomic_store(&g_flag[slot], 1);
    assert_int_equal(rt_exec_wake(parked), 0);
    sched_wait_ok(ex, parked);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&vt);
    rt_vt_destroy(&parked);
}

/* A VT restored from an image and given another id keeps the memory
 * stream the image brought back: the next image holds what it wrote
 * (streams go with the VT, not with its id), and the final text is
 * whole. */
static void test_identity_streams(void **state)
{
    (void)state;
    enum { N = 200 };
    s_images a = {S_IMAGES_INIT, .capture_at = 50};
    rt_exec *ex = s_exec_im(1, 0, 0, &a);
    rt_vt *vt = sched_spawn(ex, FN_MEM_TASK, N, 0);
    sched_wait_ok(ex, vt);
    assert_int_equal(sched_result(vt), sched_mem(N));
    assert_int_equal(a.n, 1);
    rt_exec_destroy(&ex);

    rt_vt *copy;
    assert_int_equal(rt_restore(g_mod, a.first, a.first_len, &copy), 0);
    assert_true(copy->id == vt->id);
    assert_int_equal(rt_vt_set_identity(copy, 9000001, 2), 0);
    s_images b = {S_IMAGES_INIT, .capture_at = 120};
    ex = s_exec_im(1, 0, 0, &b);
    assert_int_equal(rt_exec_spawn(ex, copy), 0);
    sched_wait_ok(ex, copy);
    assert_int_equal(sched_result(copy), sched_mem(N));
    assert_int_equal(b.n, 1);
    rt_image_info info;
    assert_int_equal(rt_image_info_get(b.first, b.first_len, &info), 0);
    assert_true(info.vt_id == 9000001);
    assert_int_equal(info.epoch, 2);

    rt_vt *again;
    assert_int_equal(rt_restore(g_mod, b.first, b.first_len, &again), 0);
    assert_true(again->id == 9000001);
    assert_int_equal(again->epoch, 2);
    assert_int_equal(((struct mem_task__frame *)rt_vt_bottom(again))->i, 120);
    assert_int_equal(rt_exec_spawn(ex, again), 0);
    sched_wait_ok(ex, again);
    assert_int_equal(sched_result(again), sched_mem(N));
    rt_exec_destroy(&ex);
    free(a.first);
    free(b.first);
    rt_vt_destroy(&vt);
    rt_vt_destroy(&copy);
    rt_vt_destroy(&again);
}

/* --- torture ------------------------------------------------------- */

/* The torture workload: results, one per line. */
static void s_workload(FILE *out)
{
    rt_exec *ex = sched_exec(2, 0);
    rt_vt *vts[10];
    int k = 0;
    for (int i = 0; i < 4; i++)
        vts[k++] = sched_spawn(ex, FN_FIB_TASK, 12 + i, 6);
    vts[k++] = sched_spawn(ex, FN_STEPS_TASK, 300, -1);
    vts[k++] = sched_spawn(ex, FN_LIST_TASK, 400, 0);
    /* A big heap graph with few safe points, wiped while the other
     * worker makes the GC collect. */
    vts[k++] = sched_spawn(ex, FN_GARBAGE_TASK, 300000, 0);
    vts[k++] = sched_spawn(ex, FN_LIST_TASK, 30000, 1000);
    vts[k++] = sched_spawn(ex, FN_FIB_TASK, 17, -1);
    for (int i = 0; i < k; i++) {
        sched_wait_ok(ex, vts[i]);
        fprintf(out, "vt %d: %" PRId64 "\n", i, sched_result(vts[i]));
        rt_vt_destroy(&vts[i]);
    }
    rt_exec_stats st;
    rt_exec_stats_get(ex, &st);
    fprintf(out, "torture cycles: %s\n", st.tortures ? "some" : "none");
    rt_exec_destroy(&ex);
}

static void test_torture_identical(void **state)
{
    (void)state;
    char *mine = NULL;
    size_t mine_len = 0;
    FILE *f = open_memstream(&mine, &mine_len);
    s_workload(f);
    fclose(f);
    if (rt_torture_every() == 0)
        assert_non_null(strstr(mine, "torture cycles: none"));

    /* The same in a child with LEV_TORTURE=1. */
    int p[2];
    assert_int_equal(pipe(p), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addclose(&fa, p[0]);
    size_t nenv = 0;
    while (environ[nenv])
        nenv++;
    char **env = calloc(nenv + 2, sizeof *env);
    size_t k = 0;
    for (size_t i = 0; i < nenv; i++)
        if (strncmp(environ[i], "LEV_TORTURE=", 12) != 0)
            env[k++] = environ[i];
    env[k++] = "LEV_TORTURE=1";
    char *argv[] = {"test_sched_capture", "--torture-child", NULL};
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, env), 0);
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    close(p[1]);
    char out[8192];
    size_t got = 0;
    ssize_t n;
    while (got < sizeof out - 1 && (n = read(p[0], out + got, sizeof out - 1 - got)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        assert_true(n > 0);
        got += (size_t)n;
    }
    out[got] = '\0';
    close(p[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("the torture child %s %d; its output:\n%s",
                 WIFEXITED(status) ? "exited with" : "died of signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), out);
    /* Same results; the child did torture. */
    char *cut = strstr(mine, "torture cycles:");
    assert_non_null(cut);
    size_t nres = (size_t)(cut - mine);
    assert_true(got > nres);
    if (memcmp(out, mine, nres) != 0)
        fail_msg("results differ under torture:\n--- native\n%s--- torture\n%s", mine, out);
    assert_non_null(strstr(out, "torture cycles: some"));
    free(mine);
}

/* --- shutdown, task calls, many VTs -------------------------------- */

int main(int argc, char **argv)
{
    if (sched_tasks_init(argv[0]) != 0)
        return 1;
    if (argc > 1 && strcmp(argv[1], "--torture-child") == 0) {
        s_workload(stdout);
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_capture_request_and_restore, sched_setup),
        cmocka_unit_test_setup(test_periodic_checkpoints, sched_setup),
        cmocka_unit_test_setup(test_capture_failure_goes_on, sched_setup),
        cmocka_unit_test_setup(test_capture_failure_logged_once, sched_setup),
        cmocka_unit_test_setup(test_checkpoint_parked, sched_setup),
        cmocka_unit_test_setup(test_capture_stop_running, sched_setup),
        cmocka_unit_test_setup(test_capture_stop_parked, sched_setup),
        cmocka_unit_test_setup(test_capture_stop_queued, sched_setup),
        cmocka_unit_test_setup(test_capture_stop_fails, sched_setup),
        cmocka_unit_test_setup(test_identity_set, sched_setup),
        cmocka_unit_test_setup(test_identity_streams, sched_setup),
        cmocka_unit_test_setup(test_torture_identical, sched_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
