/* line_error.c - for the #line check: built with -DBREAK, levpp's output
 * must fail to compile with errors on this file's lines. Each line that
 * must carry an error holds the marker `levpp-line-error`; levpp itself
 * parses the file without BREAK. */
#include <stdio.h>

#include "lev_task.h"

static int step(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++) {
        lev_checkpoint();
        s += i;
#ifdef BREAK
        (void)("inside a loop, after a safe point" * 2); /* levpp-line-error */
#endif
    }
    return s;
}

int main(void)
{
    int t = step(3);
    printf("%d\n", t);
#ifdef BREAK
    (void)("after a checkpointable call" * 2); /* levpp-line-error */
#endif
    return t == 3 ? 0 : 1;
}
