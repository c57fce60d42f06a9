/* macro_call.c - a call of a checkpointable function written inside a
 * macro: levpp rewrites call sites and cannot rewrite inside an expansion. */
#include <stdio.h>

#define SUM(n) sum_to(n)

static int sum_to(int n)
{
    int s = 0;
    for (int i = 1; i <= n; i++)
        s += i;
    return s;
}

int main(void)
{
    int t = SUM(10);
    printf("%d\n", t);
    return 0;
}
