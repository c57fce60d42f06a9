/* call_for_inc.c - a checkpointable call in the increment of a for loop. */
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
    int total = 0;
    for (int i = 0; i < 10; i += step(2))
        total += i;
    printf("%d\n", total);
    return 0;
}
