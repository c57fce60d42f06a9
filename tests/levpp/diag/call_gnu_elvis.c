/* call_gnu_elvis.c - a checkpointable call in the second operand of GNU
 * `a ?: b`: it runs only when the first is zero, and levpp does not lower
 * this form yet. */
#include <stdio.h>

static int step(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i;
    return s;
}

int main(int argc, char **argv)
{
    (void)argv;
    int v = (argc - 1) ?: step(3);
    printf("%d\n", v);
    return 0;
}
