/* tasks_probe.c - second task source of the leverage_add_tasks test:
 * calls into the others through the shared header. TASKS_PROBE_BASE comes
 * from the application target's compile definitions. */
#include "tasks.h"

int tasks_probe(void)
{
    return TASKS_PROBE_BASE + (int)(tasks_sum_to(4) + tasks_scale_a(1) + tasks_scale_b(1));
}
