/* block_macro.c - blocking Leverage calls in macros of a body that keeps
 * its macros (it uses `grow`, a self-referential macro, which would expand
 * again when the output is built): a call in a macro argument evaluated
 * conditionally, one in an argument evaluated twice, one written in the
 * macro's body. levpp can only run a call before the statement, once. */
#include <stddef.h>
#include <stdint.h>

#include "lev_task.h"

static int grow = 1;
#define grow (grow + 1)
#define IF_READY(ok, e)                                                                            \
    do {                                                                                           \
        if (ok)                                                                                    \
            (void)(e);                                                                             \
    } while (0)
#define TWICE(x) ((x) + (x))
#define SEND_ONE(to) lev_send((to), "1", 1)

LEV_TASK void job(const void *arg, size_t len)
{
    void *buf = NULL;
    size_t n = 0;
    uint64_t from = 0;
    int r = grow;
    IF_READY(len > 0, lev_recv(&from, &buf, &n, -1));
    r += TWICE(lev_global_read("g", &buf, &n));
    r += SEND_ONE(from);
    (void)arg;
    lev_return(&r, sizeof r);
}
