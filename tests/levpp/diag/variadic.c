/* variadic.c - a checkpointable function with a variable argument list. */
#include <stdarg.h>
#include <stdio.h>

static int sum(int n, ...)
{
    va_list ap;
    va_start(ap, n);
    int s = 0;
    for (int i = 0; i < n; i++)
        s += va_arg(ap, int);
    va_end(ap);
    return s;
}

int main(void)
{
    printf("%d\n", sum(3, 1, 2, 3));
    return 0;
}
