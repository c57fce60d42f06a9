/* macro_arg_twice.c - a call of a checkpointable function in the argument
 * of a macro that evaluates its argument twice: levpp would run the call
 * once and read its result twice. */
#include <stdio.h>

#define SQUARE(x) ((x) * (x))

static int step(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i;
    return s;
}

int main(void)
{
    printf("%d\n", SQUARE(step(4)));
    return 0;
}
