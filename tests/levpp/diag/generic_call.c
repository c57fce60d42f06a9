/* generic_call.c - a _Generic selection whose associations call
 * checkpointable functions: only the selected one is evaluated. */
#include <stdio.h>

static int twice_int(int n)
{
    int s = 0;
    for (int i = 0; i < 2; i++)
        s += n;
    return s;
}

static double twice_double(double x)
{
    double s = 0;
    for (int i = 0; i < 2; i++)
        s += x;
    return s;
}

int main(void)
{
    int n = 21;
    printf("%d\n", _Generic(n, int: twice_int(n), default: 0));
    printf("%f\n", twice_double(1.5));
    return 0;
}
