/* macro_loop_decl.c - a loop whose head a macro writes, declaring its own
 * counter, with a body that calls a checkpointable function: the counter
 * would have to move to the frame, inside the macro's text. */
#include <stdio.h>

#define REPEAT(n) for (int rep_i = 0; rep_i < (n); rep_i++)

static int step(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i;
    return s;
}

int main(void)
{
    int total = 0;
    REPEAT(3)
        total += step(rep_i);
    printf("%d\n", total);
    return 0;
}
