/* static_write.c - a task module whose checkpointable code writes a
 * file-scope variable and a static local. In a task module these are
 * shared by every VT of a worker and do not move with a VT, so levpp
 * warns where checkpointable code writes one (and still succeeds);
 * reading one (s_limit) needs no warning. */
#include <stddef.h>

#include "lev_task.h"

static int s_calls;
static const int s_limit = 3;

static int next_ticket(void)
{
    static int ticket;
    lev_checkpoint();
    return ++ticket;
}

LEV_TASK void job(const void *arg, size_t len)
{
    (void)arg;
    (void)len;
    for (int i = 0; i < s_limit; i++) {
        s_calls++;
        next_ticket();
    }
}
