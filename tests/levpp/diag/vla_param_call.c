/* vla_param_call.c - dimensions of a parameter's array type that call a
 * checkpointable function, directly or through a pointer: levpp evaluates
 * them at the head of the body, where no call can be resumed. */
#include <stdio.h>

static int width(int n)
{
    int w = 0;
    for (int i = 0; i < n; i++)
        w += 2;
    return w;
}

static int (*s_width)(int) = width;

static int first_sum(int n, int (*rows)[width(n)])
{
    int s = 0;
    for (int j = 0; j < 2 * n; j++)
        s += rows[0][j];
    return s;
}

static int last_sum(int n, int (*rows)[s_width(n)])
{
    int s = 0;
    for (int j = 0; j < 2 * n; j++)
        s += rows[1][j];
    return s;
}

int main(void)
{
    int grid[2][4] = {{1, 2, 3, 4}, {5, 6, 7, 8}};
    printf("%d %d\n", first_sum(2, grid), last_sum(2, grid));
    return 0;
}
