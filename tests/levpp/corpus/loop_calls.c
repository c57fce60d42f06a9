/* loop_calls.c - calls of checkpointable functions in for increments and
 * do-while conditions, with `continue` (which must still run the
 * increment or test the condition) and `break`, in nested loops and
 * through a switch.
 * Exit status: the number of calls of step() modulo 100. */
#include <stdio.h>

static int g_steps;

static int step(int n)
{
    int r = n;
    for (int i = 0; i < 1; i++)
        r = n + 1;
    g_steps++;
    return r;
}

static int below(int n, int lim)
{
    int k = 0;
    while (k < 1)
        k++;
    return n < lim;
}

int main(void)
{
    int sum = 0;
    /* increment with a call, continue and break */
    for (int i = 0; i < 20; i = step(i)) {
        if (i % 3 == 0)
            continue;
        if (i > 15)
            break;
        sum += i;
    }
    printf("for: sum %d steps %d\n", sum, g_steps);
    /* both condition and increment with calls; continue inside a switch */
    sum = 0;
    for (int i = 0; below(i, 12); i += step(0)) {
        switch (i % 4) {
        case 0:
            continue;
        case 1:
            sum += 10;
            break;
        default:
            sum += i;
            break;
        }
        sum++;
    }
    printf("for2: sum %d steps %d\n", sum, g_steps);
    /* a comma increment with a call; an inner loop's continue is its own */
    sum = 0;
    int j = 0;
    for (int i = 0; i < 6; i++, j = step(j)) {
        for (int k = 0; k < 4; k++) {
            if (k == 1)
                continue;
            sum += k;
        }
        if (i == 2)
            continue;
        sum += j;
    }
    printf("for3: sum %d j %d steps %d\n", sum, j, g_steps);
    /* do-while with a call in its condition, continue and break */
    int n = 0, odd = 0;
    do {
        n++;
        if (n % 2 == 0)
            continue;
        odd++;
        if (n > 30)
            break;
    } while (below(n, 25) && step(n) < 100);
    printf("do: n %d odd %d steps %d\n", n, odd, g_steps);
    /* a body of one statement, a continue as the body */
    n = 0;
    do
        n += 2;
    while (step(n) < 9);
    int m = 0;
    for (; m < 5; m = step(m))
        continue;
    printf("do2: n %d m %d steps %d\n", n, m, g_steps);
    /* a nested do-while whose condition calls, inside a for with a call */
    sum = 0;
    for (int i = 0; i < 3; i = step(i)) {
        int k = 0;
        do {
            if (k == 1) {
                k = step(k);
                continue;
            }
            sum += k * i;
            k++;
        } while (below(k, 4));
    }
    printf("nested: sum %d steps %d\n", sum, g_steps);
    return g_steps % 100;
}
