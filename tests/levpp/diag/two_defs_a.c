/* two_defs_a.c - defines helper(), as two_defs_b.c does. */
#include <stdio.h>

int helper(int n);

int helper(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i;
    return s;
}

int main(void)
{
    printf("%d\n", helper(3));
    return 0;
}
