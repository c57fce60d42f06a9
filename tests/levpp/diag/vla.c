/* vla.c - a variable-length array in a checkpointable function. */
#include <stdio.h>

static int sum(int n)
{
    int vals[n];
    int s = 0;
    for (int i = 0; i < n; i++) {
        vals[i] = i;
        s += vals[i];
    }
    return s;
}

int main(void)
{
    printf("%d\n", sum(5));
    return 0;
}
