/* executor.h - the executor: a pool of OS worker threads that run virtual
 * threads, their run queues, a timer that cuts long time slices and asks
 * for the checkpoints that fall due (of parked VTs too), and what a worker
 * does when a VT unwinds (torture cycle, capture, yield, park, cancel,
 * capture-and-stop for migration).
 *
 * Internal (not installed).
 *
 * Lifecycle and ownership
 * -----------------------
 * The caller owns every VT it spawns: rt_exec_spawn() only schedules it.
 * Once rt_exec_wait() has returned 0 the executor no longer touches the VT
 * and the caller may rt_vt_destroy() it. A VT must not be destroyed while
 * it is spawned and has not ended. rt_exec_destroy() cancels the VTs still
 * running and waits for them (bounded); the VTs themselves stay the
 * caller's.
 *
 * Host callbacks run on worker threads, never under an executor lock:
 *   on_report  synchronously from lev_report(); the buffer lives until the
 *              callback returns.
 *   on_done    once per VT, after it ended (DONE, FAILED or STOPPED, see
 *              vt->state, vt->err, vt->result) and before rt_exec_wait()
 *              returns for it; it must not destroy the VT.
 *   on_image   with a new image of a suspended VT (periodic checkpoint,
 *              rt_exec_request_capture() or rt_exec_capture_stop()); the
 *              callback owns `img` and frees it with free(), or gives it
 *              back to image_alloc's host when it lent it. Without
 *              on_image the image is dropped. vt->capture_why says what it
 *              is for: RT_WANT_STOP for the image of a stop (on_done with
 *              RT_VT_STOPPED follows), else RT_WANT_CAPTURE.
 *   on_capture_error
 *              a capture failed (e.g. LEV_ECAPTURE: a pointer to memory the
 *              runtime does not own is live). The VT is NOT failed: it goes
 *              on, and its newest good image stays the newest; for a stop
 *              (vt->capture_why == RT_WANT_STOP) the VT is not stopped.
 *              Without this callback the first failure of each VT is
 *              printed once on stderr and later ones only counted
 *              (rt_exec_stats).
 * A VT's callbacks never run at the same time as each other: the one
 * worker that holds the VT runs them, in the order of the events.
 *
 * Failure contract: in torture mode (LEV_TORTURE) a VT whose capture or
 * restore fails is failed with that error, because its state was (or would
 * be) poisoned; a failed checkpoint never fails a VT.
 *
 * Blocking: a VT that unwinds with RT_WANT_BLOCK is parked until
 * rt_exec_wake(). A wake that arrives while the VT is not parked is kept
 * (one pending wake, like a binary semaphore) and consumed by the next
 * park, so it is never lost. Wakes may be spurious (a pending wake is
 * consumed by a later park that it was not meant for): a blocking safe
 * point re-checks its condition when resumed.
 *
 * Captures of a parked VT (a periodic checkpoint that falls due, a
 * capture request, a capture-and-stop) do not wake it: a worker captures
 * it where it is parked, its state staying RT_VT_BLOCKED, and parks it
 * again; its blocking condition is not re-run. A wake that arrives
 * meanwhile is kept and makes it run once the capture is done.
 *
 * Timed parks: a VT that parks while it waits in a receive with a
 * deadline (rt_ch_deadline) is woken by the timer when the deadline
 * passes (within a tick), unless a wake came first.
 *
 * Channels: a VT that may not be captured (rt_ch_capture_ok false: it
 * holds a lock, or has a grant it has not taken) has its checkpoints,
 * capture requests and stops put off (vt->deferred) until it may: they
 * are taken at its next safe point after that, or where it is parked.
 *
 * Identity: a VT's id and epoch (rt_vt_set_identity, before it is
 * spawned) are what its images carry; the executor never changes them.
 */
#ifndef EXECUTOR_H
#define EXECUTOR_H

#include <stddef.h>
#include <stdint.h>

#include "image.h"
#include "vt.h"
#include "vtchan.h"

/* An idle worker's wait, given by the host: while no VT is ready, one
 * worker at a time waits in wait(ud) instead of sleeping, for example
 * reading a socket and delivering what comes (rt_ch_deliver, which makes
 * a parked VT ready), so that an input reaches its VT without a thread
 * handing it to another. wait returns when it delivered something, or
 * soon after wake(ud), which the executor calls from any thread when a
 * VT becomes ready elsewhere or the executor stops; a wake that comes
 * before wait started must not be lost (an eventfd it polls does that).
 * wait is called under no executor lock; wake may be, so it must only
 * signal (and never call the executor). */
typedef struct rt_exec_idle {
    void (*wait)(void *ud);
    void (*wake)(void *ud);
    void *ud;
} rt_exec_idle;

typedef struct rt_exec_opts {
    int workers;       /* OS worker threads; 0: one per online core */
    int slice_ms;      /* time slice before preemption, cut only while another VT
                        * waits; 0: 10; <0: never preempt */
    int checkpoint_ms; /* capture every VT this often (at a safe point, or where it
                        * is parked, within a quarter interval); <=0: never */
    int shutdown_ms;   /* bound of rt_exec_destroy's wait for VTs; 0: 5000 */
    void (*on_report)(rt_vt *vt, const void *buf, size_t len, void *ud);
    void (*on_done)(rt_vt *vt, void *ud);
    void (*on_image)(rt_vt *vt, uint8_t *img, size_t len, void *ud);
    /* Where images are written (with on_image only; alloc NULL: malloc),
     * so that a host can hand them on without a copy (rt_capture_into). */
    rt_img_alloc image_alloc;
    void (*on_capture_error)(rt_vt *vt, int err, const char *detail, void *ud);
    void *ud; /* passed to every callback */
    /* The host of its VTs' channels (vtchan.h), copied; NULL: the VTs
     * have none (their channel calls return LEV_EUNSUPPORTED) and
     * reports go to on_report. With one, lev_report is an RT_OUT_REPORT
     * output instead. */
    const rt_ch_host *chan;
    rt_exec_idle idle; /* wait NULL: idle workers sleep */
} rt_exec_opts;

typedef struct rt_exec_stats {
    uint64_t runs;           /* times a worker took a VT to run it (or to visit it parked) */
    uint64_t switches;       /* VT requeued at a safe point (yield, preempt, capture) */
    uint64_t preempts;       /* time slices cut by the timer */
    uint64_t parks;          /* VTs parked by a blocking safe point (not again after a visit) */
    uint64_t steals;         /* VTs taken from another worker's queue */
    uint64_t captures;       /* images produced (handed to on_image or dropped) */
    uint64_t capture_errors; /* failed captures (checkpoints, requests, stops) */
    uint64_t tortures;       /* torture cycles (capture, poison, restore elsewhere) */
    uint64_t ticks;          /* rounds of the timer (two per time slice) */
} rt_exec_stats;

/* Creates an executor and starts its workers (registered with the GC) and
 * its timer; o may be NULL (defaults). Call it from a thread the GC knows
 * (the main thread or a worker). Returns 0, LEV_EINVAL or LEV_ENOMEM.
 * Caller owns *out and ends it with rt_exec_destroy. */
int rt_exec_new(rt_exec **out, const rt_exec_opts *o);

/* Cancels the VTs still spawned, waits for them at most opts.shutdown_ms,
 * stops the threads and frees the executor; accepts NULL and sets *ex_p to
 * NULL. Not to be called from a worker (a VT or a callback), nor while
 * another thread wakes, cancels or captures one of its VTs. If a VT does not stop in time (native
 * code that never reaches a safe point), it says so on stderr and leaves the executor allocated and
 * its threads detached rather than free memory they still use. */
void rt_exec_destroy(rt_exec **ex_p);

/* Schedules a VT that has not ended. LEV_EBUSY if it is already spawned,
 * LEV_ECANCELED if the executor is shutting down, LEV_EINVAL if it ended
 * (DONE, FAILED or STOPPED: a stopped VT goes on only from its image). */
int rt_exec_spawn(rt_exec *ex, rt_vt *vt);

/* Blocks the calling OS thread until the spawned VT has ended and the
 * executor is done with it (timeout_ms < 0: no limit). 0 or LEV_ETIMEDOUT;
 * LEV_EINVAL for a VT that was never spawned. Not for use inside a VT. */
int rt_exec_wait(rt_exec *ex, rt_vt *vt, int timeout_ms);

/* Makes a parked VT runnable, or records one pending wake for a VT that has
 * not parked yet. Any thread, VTs included. LEV_ENOVT if the VT has ended. */
int rt_exec_wake(rt_vt *vt);

/* Ends a VT with LEV_ECANCELED: a running VT at its next safe point, a
 * queued or parked one when a worker next takes it, without running it
 * again. LEV_ENOVT if the VT has already ended. */
int rt_exec_cancel(rt_vt *vt);

/* Asks for an image of the VT, delivered through on_image: a running VT
 * is captured at its next safe point, a queued one before it runs again,
 * a parked one by a worker that does not wake it. LEV_ENOVT if the VT has
 * already ended. */
int rt_exec_request_capture(rt_vt *vt);

/* Captures the VT and ends it in the same step, for a migration: a
 * running VT at its next safe point, a queued or parked one when a worker
 * next takes it (a parked one is not woken). Nothing runs in the VT
 * between the capture and the end, so no wake or message it would have
 * consumed is lost: the image goes to on_image (vt->capture_why ==
 * RT_WANT_STOP), the VT ends with state RT_VT_STOPPED (vt->err 0, its
 * frames kept), on_done is called and rt_exec_wait() returns for it. If
 * the capture fails, on_capture_error is called (capture_why
 * RT_WANT_STOP) and the VT is not stopped: it goes on (parked, if it
 * was). A cancel that is pending when the worker acts wins over the stop,
 * and a VT that ends before its next safe point ends as it would (DONE or
 * FAILED, no image). Any thread, VTs and callbacks included. 0 once
 * asked; LEV_ENOVT if the VT has ended (or was never spawned). */
int rt_exec_capture_stop(rt_vt *vt);

/* The channel host of the executor's VTs (its own copy, limits of 0
 * replaced by the defaults), or NULL. */
const rt_ch_host *rt_exec_chan(const rt_exec *ex);

/* Called on the VT's own thread when it may be captured again
 * (rt_ch_capture_ok): the captures put off meanwhile are taken at its
 * next safe point. */
void rt_exec_capture_ready(rt_vt *vt);

/* Counters since rt_exec_new (approximate while workers run). */
void rt_exec_stats_get(rt_exec *ex, rt_exec_stats *st);

/* Hands a copy of a report of the calling VT to the host's on_report
 * (lev_report's implementation). 0, or LEV_ENOMEM; a VT that runs outside
 * an executor, or an executor without on_report, drops the report. */
int rt_exec_report(rt_vt *vt, const void *buf, size_t len);

#endif
