/* libc_state.c - C library calls whose state stays inside the C library
 * (the 48-bit generator's seed, a quick-exit handler) are refused in a
 * --main-task program: no image could carry them to another process
 * (atexit is rewritten onto a travelling static: corpus exit_handlers). The
 * rand inside a macro defined in a header is expanded and renamed like
 * any other (no error). */
#include <stdio.h>
#include <stdlib.h>

#include "libc_state.h"

static void bye(void)
{
    puts("bye");
}

int main(void)
{
    srand48(42);
    double sum = 0;
    for (int i = 0; i < 10; i++)
        sum += drand48();
    at_quick_exit(bye);
    printf("%.3f %d\n", sum, ROLL());
    return 0;
}
