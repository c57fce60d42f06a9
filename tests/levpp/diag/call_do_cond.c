/* call_do_cond.c - a checkpointable call in the condition of do-while. */
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
    int i = 0;
    do
        i++;
    while (step(i) < 10);
    printf("%d\n", i);
    return 0;
}
