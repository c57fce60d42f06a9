/* noproto_args.c - a call, through a declaration without a prototype,
 * with more arguments than the definition has parameters: undefined in C,
 * and no resumable body can take them. */
#include <stdio.h>

int twice();

int main()
{
    printf("%d\n", twice(4, 5));
    return 0;
}

int twice(x)
    int x;
{
    int r = 0;
    for (int i = 0; i < 2; i++)
        r += x;
    return r;
}
