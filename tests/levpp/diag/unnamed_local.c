/* unnamed_local.c - a local whose struct type has no name, in a
 * checkpointable function: its frame field has no type to be named by. */
#include <stdio.h>

static int walk(int n)
{
    struct { int x, y; } p = {1, 1};
    for (int i = 0; i < n; i++)
        p.x += p.y;
    return p.x;
}

int main(void)
{
    printf("%d\n", walk(2));
    return 0;
}
