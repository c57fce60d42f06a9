/* lev_return_expr.c - lev_return used as a value instead of a statement
 * of its own. */
#include <stddef.h>

#include "lev_task.h"

static int finish(int v)
{
    lev_checkpoint();
    int rc = lev_return(&v, sizeof v);
    return rc;
}

LEV_TASK void job(const void *arg, size_t len)
{
    (void)arg;
    (void)len;
    finish(3);
}
