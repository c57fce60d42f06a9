/* call_gnu_elvis.c - GNU `a ?: b` written by a macro whose second operand
 * calls a checkpointable function: the operator would have to be lowered
 * inside the macro's expansion. */
#include <stdio.h>

#define OR_ELSE(a, b) ((a) ?: (b))

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
    int v = OR_ELSE(argc - 1, step(3));
    printf("%d\n", v);
    return 0;
}
