/* vla_shape.c - variably modified types levpp cannot capture: a pointer
 * to an array whose inner dimension is variable, an array of pointers to
 * VLAs, a pointer to a pointer to a VLA, and a VLA whose dimension comes
 * from a typedef. */
#include <stdio.h>

static int shapes(int n, int m)
{
    int grid[n][m];
    int (*inner)[4][m] = NULL;
    int (*rows[2])[m] = {NULL, NULL};
    int (**pp)[m] = NULL;
    typedef int line[m];
    line l;
    int s = 0;
    for (int i = 0; i < n; i++)
        s += grid[i][0] = i;
    l[0] = s;
    return l[0] + (inner != NULL) + (rows[0] != NULL) + (pp != NULL);
}

int main(void)
{
    printf("%d\n", shapes(3, 4));
    return 0;
}
