/* line_error.c - for the #line check: levpp's output, built with
 * -Werror=pointer-arith, must fail to compile with errors on this file's
 * lines. Each line that must carry an error holds the marker
 * `levpp-line-error` (arithmetic on a void pointer, a GNU extension that
 * levpp accepts and that flag makes an error). The macros make levpp
 * expand the bodies they are used in: the lines must stay where they are.
 */
#include <stdio.h>

#include "lev_task.h"

#define ADD(a, b) ((a) + (b))
#define TWICE(x)                                                                                   \
    do {                                                                                           \
        x;                                                                                         \
        x;                                                                                         \
    } while (0)

static int step(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++) {
        lev_checkpoint();
        s = ADD(s, i);
#ifdef NEVER
        s = -1;
#endif
        (void)((void *)&s + 1); /* levpp-line-error */
    }
    return s;
}

int main(void)
{
    int t = step(3), u = 0;
    TWICE(u++);
    printf("%d\n", t);
    (void)((void *)&t + 1); /* levpp-line-error */
    return t == 3 && u == 2 ? 0 : 1;
}
