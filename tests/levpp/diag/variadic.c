/* variadic.c - a variadic function that reaches a safe point (it calls a
 * checkpointable function), so its '...' arguments would have to be in
 * an image. */
#include <stdarg.h>
#include <stdio.h>

#include "leverage.h"

static int step(int x)
{
    lev_checkpoint();
    return x + 1;
}

static int sum(int n, ...)
{
    va_list ap;
    va_start(ap, n);
    int s = 0;
    for (int i = 0; i < n; i++)
        s += step(va_arg(ap, int));
    va_end(ap);
    return s;
}

int main(void)
{
    printf("%d\n", sum(3, 1, 2, 3));
    return 0;
}
