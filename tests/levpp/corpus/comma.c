/* comma.c - calls of checkpointable functions right of a comma operator:
 * the left operand, with its side effects, runs first and once.
 * Exit status: the last value computed modulo 100. */
#include <stdio.h>

static int g_calls;

static int twice(int n)
{
    int r = 0;
    for (int i = 0; i < 2; i++)
        r += n;
    g_calls++;
    return r;
}

static void tick(void)
{
    for (int i = 0; i < 1; i++)
        g_calls += 100;
}

int main(void)
{
    int a = 0, b, c = 0;
    for (int n = 1; n <= 5; n++) {
        /* the left operand's effect is seen by the call */
        a = (b = n, twice(b));
        printf("%d: a %d b %d\n", n, a, b);
        c = (c++, c += 2, twice(c));
        printf("%d: c %d\n", n, c);
        /* a comma statement, a void call on the left, nested */
        b = 0, c = twice(n);
        int d = (tick(), twice(n) + (b++, twice(b)));
        printf("%d: b %d c %d d %d calls %d\n", n, b, c, d, g_calls);
        /* a call on the left and on the right */
        int e = (twice(n), twice(n + 1));
        printf("%d: e %d\n", n, e);
        if ((a = n * 2, twice(a)) > 10)
            printf("%d: big\n", n);
    }
    printf("calls %d\n", g_calls);
    return (a + c) % 100;
}
