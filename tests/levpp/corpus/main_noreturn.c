/* main_noreturn.c - a main that ends without `return` (it returns 0, as
 * C99 says of main), declared first by a prototype of its own. */
#include <stdio.h>

int main(void);

static int sum_to(int n)
{
    int s = 0;
    for (int i = 1; i <= n; i++)
        s += i;
    return s;
}

int main(void)
{
    for (int i = 0; i < 5; i++)
        printf("%d %d\n", i, sum_to(i * 100));
}
