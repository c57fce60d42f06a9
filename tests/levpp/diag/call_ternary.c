/* call_ternary.c - checkpointable calls in the branches of ?:. */
#include <stdio.h>

static int step(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i;
    return s;
}

int main(int argc, char **argv)
{
    (void)argv;
    int a = argc > 1 ? step(3) : 0;
    int b = argc > 1 ? 0 : step(4);
    printf("%d %d\n", a, b);
    return 0;
}
