/* ttsp.h - time to safe point (ttsp.c): how long a VT runs from a poll
 * request to the safe point that honours it, in wall and CPU time, kept
 * in per-thread histograms.
 *
 * Internal (not installed). Depends on nothing of the runtime but the
 * clock; a VT embeds its rt_ttsp (vt.h).
 */
#ifndef TTSP_H
#define TTSP_H

#include <stdint.h>
#include <time.h>

/* The stamps of one VT: its pending request, and the CPU clock of the
 * thread running it. */
typedef struct rt_ttsp {
    uint64_t wall;   /* monotonic ns of the pending request, 0: none */
    uint64_t cpu;    /* the running thread's CPU ns then, 0: unknown */
    clockid_t clock; /* CPU clock of the thread running the VT */
    int running;     /* clock is valid */
} rt_ttsp;

/* Safe points that honoured a timed poll request, and the time each took
 * from the request, in wall time and in the running thread's CPU time
 * (quantiles are bucket bounds, within 25%; maxima exact). */
typedef struct rt_ttsp_stats {
    uint64_t count;
    uint64_t wall_max_ns, wall_p99_ns, wall_p50_ns;
    uint64_t cpu_count; /* of count, those whose CPU time was known */
    uint64_t cpu_max_ns, cpu_p99_ns, cpu_p50_ns;
} rt_ttsp_stats;

/* Stamps a poll request of a VT (call it before setting the poll word); a
 * request already pending keeps its stamp. Any thread. */
void rt_ttsp_request(rt_ttsp *t);

/* The calling thread starts running a VT whose poll word is *poll: a
 * request pending now is timed from now. */
void rt_ttsp_run_start(rt_ttsp *t, const volatile uint32_t *poll);

/* The calling thread stops running the VT. */
void rt_ttsp_run_end(rt_ttsp *t);

/* At a safe point of the VT (its slow path): records the time since the
 * pending request, if any. */
void rt_ttsp_honour(rt_ttsp *t);

/* Sums the histograms of all threads; rt_ttsp_reset clears them (call it
 * while no VT runs). */
void rt_ttsp_get(rt_ttsp_stats *st);
void rt_ttsp_reset(void);

/* Whether LEV_TTSP_REPORT is set (read once; if so, a summary is printed
 * on stderr at exit: "lev-ttsp: count N wall_max_ns ..."). */
int rt_ttsp_report(void);

#endif
