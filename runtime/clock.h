/* clock.h - the runtime's monotonic clock, read by the safe point (is a
 * checkpoint due?), time to safe point and the executor's timer.
 *
 * Internal (not installed). Header only; depends on nothing of the runtime.
 */
#ifndef CLOCK_H
#define CLOCK_H

#include <stdint.h>
#include <time.h>

/* Monotonic clock in nanoseconds. */
static inline uint64_t rt_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
