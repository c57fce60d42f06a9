/* logical.c - calls of checkpointable functions as operands of && and
 * ||, whose short-circuit must be kept: the right operand runs only
 * when the left one does not decide.
 * Exit status: the number of calls of is_square (evaluated lazily). */
#include <stdio.h>

static int g_square_calls;

static int is_square(int n)
{
    int r = 0;
    g_square_calls++;
    while (r * r < n)
        r++;
    return r * r == n;
}

static int digit_sum(int n)
{
    int s = 0;
    for (; n; n /= 10)
        s += n % 10;
    return s;
}

int main(void)
{
    int both = 0, either = 0;
    for (int n = 1; n <= 60; n++) {
        if (n % 2 == 0 && is_square(n))
            both++;
        if (n % 5 == 0 || is_square(n) || digit_sum(n) == 9)
            either++;
    }
    int flag = is_square(49) && digit_sum(49) > 12;
    printf("even squares %d, either %d, flag %d, calls %d\n", both, either, flag, g_square_calls);
    return g_square_calls;
}
