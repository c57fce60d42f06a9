/* asm_stmt_expr.c - asm goto inside a statement expression of a
 * checkpointable function. */
#include <stdio.h>

static int total(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += ({
            __asm__ goto("" : : : : out);
            i;
        });
out:
    return s;
}

int main(void)
{
    printf("%d\n", total(4));
    return 0;
}
