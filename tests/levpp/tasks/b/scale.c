/* b/scale.c - a task source with the same base name as the other
 * scale.c of the leverage_add_tasks test, and a static function and
 * static variable of the same names: two outputs, two functions. */
#include "scale.h"
#include "tasks.h"

static long calls;

static long step(long x)
{
    long s = 0;
    for (long i = 0; i < x; i++)
        s += SCALE_FACTOR;
    return s;
}

long tasks_scale_b(long x)
{
    calls++;
    return step(x) * calls;
}
