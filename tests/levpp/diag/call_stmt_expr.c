/* call_stmt_expr.c - a statement expression written in a macro argument
 * that calls a checkpointable function: its statements would have to be
 * rewritten inside the macro's expansion. */
#include <stdio.h>

#define TWICE(x) (2 * (x))

static int step(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i;
    return s;
}

int main(void)
{
    int v = TWICE(({
        int t = 2;
        step(t) + 1;
    }));
    printf("%d\n", v);
    return 0;
}
