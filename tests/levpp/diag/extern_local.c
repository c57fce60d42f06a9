/* extern_local.c - a block-scope extern declaration in a checkpointable
 * function. */
#include <stdio.h>

int g_total = 4;

static int scaled(int n)
{
    extern int g_total;
    int s = 0;
    for (int i = 0; i < n; i++)
        s += g_total;
    return s;
}

int main(void)
{
    printf("%d\n", scaled(3));
    return 0;
}
