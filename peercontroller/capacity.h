/* capacity.h - what this machine offers the mesh (capacity.c): the CPUs
 * this process may run on (its affinity), the share of them its CPU quota
 * allows (cgroup v2 cpu.max, or v1 cpu.cfs_quota_us over cpu.cfs_period_us,
 * the smallest along the way up the hierarchy), and the processing rate
 * of one core, measured in CPU time so that a busy machine measures the
 * same as an idle one.
 *
 * A peer announces cores × rate as its capacity: a quota of 0.45 core on
 * a 2-CPU machine offers 1 core at 0.45 of the measured rate, a quota of
 * 1.5 cores offers 2 cores at 0.75 of it, so that the delegator weighs a
 * machine by what it may really use.
 */
#ifndef PC_CAPACITY_H
#define PC_CAPACITY_H

#include <stdint.h>

typedef struct pc_capacity {
    uint32_t cpus;  /* CPUs in this process's affinity mask (at least 1) */
    double quota;   /* cores the CPU quota allows (0: no quota) */
    uint32_t rate1; /* measured work units per second of one core, in thousands */
    uint32_t cores; /* cores offered: the CPUs, or the quota rounded up if fewer */
    uint32_t rate;  /* per offered core: rate1, scaled down by the quota's share */
} pc_capacity;

/* The CPU quota of this process in cores (0: none, or unreadable), read
 * below `root` ("" for the real system; tests pass a directory holding
 * proc/self/cgroup, proc/self/mountinfo and the cgroup files). */
double pc_cpu_quota(const char *root);

/* Work units per second of one core, in thousands: the best of several
 * short runs of an integer mix (a multiply, shifts, xors and a dependent
 * add, like a GA's inner loops), each timed in the thread's CPU time. */
uint32_t pc_measure_rate(void);

/* The rate per offered core for a one-core rate of rate1 (thousands of
 * units per second): rate1 scaled down by the quota's share of c's cores,
 * as pc_capacity_get does. */
uint32_t pc_capacity_rate(const pc_capacity *c, uint32_t rate1);

/* What to offer: cores (> 0: as configured; 0: from affinity and quota;
 * the quota applies either way) and rate (> 0: as configured, per core;
 * 0: pc_measure_rate, scaled by the quota's share). */
pc_capacity pc_capacity_get(int cores, int rate);

#endif
