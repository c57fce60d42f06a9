/* client_tasks.c - the task module that the client API's test runner
 * carries, so that lev_vc_open has a module to ship. The fake peers of
 * the test never run it; the tasks they pretend to run are named in
 * test_client.c. */
#include <stddef.h>

#include "lev_task.h"

/* Reports its argument, then returns it. */
LEV_TASK void cl_echo(const void *arg, size_t len)
{
    lev_report(arg, len);
    lev_return(arg, len);
}
