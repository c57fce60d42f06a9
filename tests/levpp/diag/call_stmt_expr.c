/* call_stmt_expr.c - a checkpointable call inside a GNU statement
 * expression. */
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
    int v = ({
        int t = 2;
        step(t) + 1;
    });
    printf("%d\n", v);
    return 0;
}
