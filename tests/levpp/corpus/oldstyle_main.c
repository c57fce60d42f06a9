/* oldstyle_main.c - `int main()`, the most common first line of a C
 * program, with a helper defined `()` too and called through a
 * declaration without a prototype.
 * Exit status: 0 when the table sums as expected, else 1. */
#include <stdio.h>

static int s_table[64];

static int fill();

int main()
{
    int n = fill();
    long sum = 0;
    for (int i = 0; i < n; i++)
        sum += s_table[i];
    printf("%d entries, sum %ld\n", n, sum);
    return sum == 64L * 63 / 2 * 3 ? 0 : 1;
}

static int fill()
{
    int n = 0;
    while (n < 64) {
        s_table[n] = 3 * n;
        n++;
    }
    return n;
}
