/* call_and_or.c - a checkpointable call in the right operand of && and of
 * ||: it runs only when the left operand allows, so it cannot be hoisted
 * before the expression. */
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
    if (argc > 1 && step(3) > 2)
        puts("and");
    if (argc > 1 || step(4) > 2)
        puts("or");
    return 0;
}
