/* macro_stmt.c - a for statement and a return written by macros inside a
 * checkpointable function. */
#include <stdio.h>

#include "lev_task.h"

#define RETURN(v) return (v)
#define UPTO(i, n) for (i = 0; i < (n); i++)

static int sum(int n)
{
    int s = 0, i;
    lev_checkpoint();
    UPTO(i, n)
        s += i;
    RETURN(s);
}

int main(void)
{
    printf("%d\n", sum(4));
    return 0;
}
