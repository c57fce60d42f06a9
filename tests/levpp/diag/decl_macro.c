/* decl_macro.c - a local declared by a macro in a checkpointable
 * function. Kept as a C local it would lose its value across the
 * checkpoint in the loop, so levpp refuses the declaration. */
#include <stdio.h>

#include "lev_task.h"

#define DECL_ZERO(name) int name = 0

static int sum(int n)
{
    DECL_ZERO(s);
    for (int i = 0; i < n; i++) {
        lev_checkpoint();
        s += i;
    }
    return s;
}

int main(void)
{
    printf("%d\n", sum(4));
    return 0;
}
