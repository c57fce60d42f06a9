/* decl_macro.c - a local declared by a macro in a checkpointable
 * function. levpp keeps it a C local of the resumable body instead of
 * moving it into the frame, and reports nothing: after a resume at the
 * checkpoint in the loop, s has lost its value (the program prints 6
 * natively and other numbers under LEV_TORTURE). It must be refused like
 * the other statements written by macros (or moved into the frame). */
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
