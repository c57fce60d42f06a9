/* expr.c - calls of checkpointable functions inside arithmetic: the
 * classic `return fib(n - 1) + fib(n - 2)`, compound assignment, an array
 * index and a switch on a call.
 * Exit status: fib(15) modulo 100 (10). */
#include <stdio.h>

static int fib(int n)
{
    for (int k = 0; k < 1; k++)
        if (n < 2)
            return n;
    return fib(n - 1) + fib(n - 2);
}

static int weight(int n)
{
    int w = 0;
    while (n) {
        w += n & 1;
        n >>= 1;
    }
    return w;
}

int main(void)
{
    int hist[8] = {0};
    long total = 0;
    for (int n = 0; n < 40; n++) {
        hist[weight(n)]++;
        total += weight(n) * 3;
        switch (weight(n)) {
        case 0:
            printf("zero at %d\n", n);
            break;
        case 5:
            printf("five bits at %d\n", n);
            break;
        default:
            break;
        }
    }
    printf("hist %d %d %d %d %d %d, total %ld\n", hist[0], hist[1], hist[2], hist[3], hist[4],
           hist[5], total);
    int f = fib(15);
    printf("fib(15) = %d\n", f);
    return f % 100;
}
