/* args.c - calls of checkpointable functions as arguments of other calls,
 * nested, and in the arguments of printf.
 * Exit status: gcd of the two largest values modulo 100. */
#include <stdio.h>

static long gcd(long a, long b)
{
    while (b) {
        long t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static long lcm_upto(int n)
{
    long l = 1;
    for (int i = 2; i <= n; i++)
        l = l / gcd(l, i) * i;
    return l;
}

static long max3(long a, long b, long c)
{
    return a > b ? (a > c ? a : c) : (b > c ? b : c);
}

int main(void)
{
    printf("gcd(84, 36) = %ld\n", gcd(84, 36));
    printf("lcm 1..15 = %ld\n", lcm_upto(15));
    long m = max3(gcd(1071, 462), lcm_upto(6), gcd(gcd(120, 84), 90));
    printf("max3 = %ld\n", m);
    long g = gcd(lcm_upto(10), lcm_upto(8) + 12);
    printf("nested = %ld\n", g);
    return (int)(g % 100);
}
