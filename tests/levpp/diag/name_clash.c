/* name_clash.c - a program's own definition of a function of the
 * Leverage API (the safe point lev_checkpoint, which lev_task.h declares
 * in levpp's output), and a name levpp writes for a checkpointable
 * function (step__run). */
#include <stdio.h>

static int lev_checkpoint(void) { return 0; }

int step__run = 4;

static int step(int x)
{
    lev_checkpoint();
    return x + step__run;
}

int main(void)
{
    printf("%d\n", step(1));
    return 0;
}
