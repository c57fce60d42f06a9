/* return_in_operand.c - lev_return inside a conditional operand: it ends
 * the virtual thread, so it must be a statement of its own. */
#include <stddef.h>

#include "lev_task.h"

static int step(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i;
    return s;
}

LEV_TASK void task(const void *arg, size_t len)
{
    int r = step((int)len);
    int done = arg ? (lev_return(&r, sizeof r), 1) : 0;
    (void)done;
}
