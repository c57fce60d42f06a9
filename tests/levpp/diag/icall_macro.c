/* icall_macro.c - a call through a pointer that may reach a checkpointable
 * function, written inside a macro: levpp cannot rewrite inside an
 * expansion. */
#include <stdio.h>

static int sum_to(int n)
{
    int s = 0;
    for (int i = 1; i <= n; i++)
        s += i;
    return s;
}

static int (*s_op)(int) = sum_to;

#define RUN(n) s_op(n)

int main(void)
{
    int t = RUN(10);
    printf("%d\n", t);
    return 0;
}
