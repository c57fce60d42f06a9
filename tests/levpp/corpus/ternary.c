/* ternary.c - calls of checkpointable functions in the arms of ?: (only
 * one arm runs) and in its condition.
 * Exit status: the value chosen last (12). */
#include <stdio.h>

static int g_calls;

static int triangle(int n)
{
    int t = 0;
    for (int i = 1; i <= n; i++)
        t += i;
    g_calls++;
    return t;
}

static int factorial(int n)
{
    int f = 1;
    while (n > 1)
        f *= n--;
    g_calls++;
    return f;
}

int main(void)
{
    int last = 0;
    for (int n = 0; n < 8; n++) {
        int v = n % 2 ? triangle(n) : factorial(n);
        printf("%d -> %d\n", n, v);
        last = triangle(n) > 20 ? factorial(3) * 2 : n;
    }
    printf("calls %d\n", g_calls);
    return last;
}
