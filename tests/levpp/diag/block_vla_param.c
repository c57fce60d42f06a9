/* block_vla_param.c - a parameter's array dimension that calls a blocking
 * Leverage function: levpp evaluates it at the head of the body, where no
 * call can be resumed. */
#include <stddef.h>

#include "lev_task.h"

static int first(int n, char (*rows)[lev_global_read("width", NULL, NULL)])
{
    lev_yield();
    return rows[0][0] + n;
}

LEV_TASK void job(const void *arg, size_t len)
{
    char a[2][2] = {{1, 2}, {3, 4}};
    int r = first((int)len, a);
    (void)arg;
    lev_return(&r, sizeof r);
}
