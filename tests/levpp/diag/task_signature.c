/* task_signature.c - a task entry with the wrong parameters. */
#include <stddef.h>

#include "lev_task.h"

LEV_TASK void job(int n)
{
    for (int i = 0; i < n; i++)
        lev_checkpoint();
}
