/* entry_call.c - a task entry called directly from another one: entries
 * are started by the runtime, each with a frame of its own. */
#include <stddef.h>

#include "lev_task.h"

LEV_TASK void inner(const void *arg, size_t len)
{
    (void)arg;
    (void)len;
    lev_checkpoint();
}

LEV_TASK void outer(const void *arg, size_t len)
{
    lev_checkpoint();
    inner(arg, len);
}
