/* for_macro_head.c - the three parts of a for statement's head written by
 * one macro: levpp finds them by the head's semicolons. */
#include <stdio.h>

#define UPTO(i, n)                                                                                 \
    int i = 0;                                                                                     \
    i < (n);                                                                                       \
    i++

static int sum_to(int n)
{
    int s = 0;
    for (UPTO(i, n))
        s += i;
    return s;
}

int main(void)
{
    printf("%d\n", sum_to(5));
    return 0;
}
