/* call_comma.c - a checkpointable call right of a comma operator. */
#include <stdio.h>

static int step(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i;
    return s;
}

int main(void)
{
    int a, b;
    a = (b = 1, step(3));
    printf("%d %d\n", a, b);
    return 0;
}
