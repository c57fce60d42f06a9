/* malformed.c - not valid C: an initializer with no expression. */
#include <stdio.h>

int main(void)
{
    int total = ;
    for (int i = 0; i < 3; i++)
        total += i;
    printf("%d\n", total);
    return 0;
}
