/* loop_incr.c - calls of checkpointable functions in the increment and
 * the condition of for loops, and in the condition of a do-while.
 * Exit status: the number of steps taken by the last walk (5). */
#include <stdio.h>

static int next_prime(int n)
{
    for (int c = n + 1;; c++) {
        int d = 2;
        while (d * d <= c && c % d)
            d++;
        if (d * d > c)
            return c;
    }
}

static int below(int n, int limit)
{
    int k = 0;
    while (k < 1)
        k++;
    return n < limit;
}

int main(void)
{
    int steps = 0;
    for (int p = 2; below(p, 50); p = next_prime(p)) {
        printf("%d ", p);
        steps++;
    }
    printf("\n%d primes below 50\n", steps);
    int q = 100;
    steps = 0;
    do {
        q = next_prime(q);
        steps++;
    } while (next_prime(q) - q < 10 && steps < 20);
    printf("stopped at %d after %d steps\n", q, steps);
    return steps;
}
