/* tasks.h - what the two task sources of the leverage_add_tasks test
 * share. */
#ifndef TASKS_H
#define TASKS_H

#include <stddef.h>

#include "leverage.h"

/* Sum of 1..n, with a loop: checkpointable when an entry reaches it. */
long tasks_sum_to(long n);

/* x times the factor of a/scale.c and of b/scale.c, through a static
 * function of each named step. */
long tasks_scale_a(long x);
long tasks_scale_b(long x);

/* Visible from the module, so the application can look it up. */
LEV_API int tasks_probe(void);

#endif
