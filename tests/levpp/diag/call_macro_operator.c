/* call_macro_operator.c - && written by a macro whose operand calls a
 * checkpointable function: the operator would have to be lowered inside
 * the macro's expansion. */
#include <stdio.h>

#define BOTH(a, b) ((a) && (b))

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
    if (BOTH(argc > 0, step(3) > 2))
        puts("both");
    return 0;
}
