/* comma_macro_end.c - a comma operator whose right operand calls a
 * checkpointable function and whose left operand ends with a macro
 * argument: levpp looks for the comma after the left operand's text. */
#include <stdio.h>

#define TWICE(n) 2 * n

static int sum_to(int n)
{
    int s = 0;
    for (int i = 1; i <= n; i++)
        s += i;
    return s;
}

int main(int argc, char **argv)
{
    (void)argv;
    int t = (argc += TWICE(argc), sum_to(argc));
    printf("%d\n", t);
    return 0;
}
