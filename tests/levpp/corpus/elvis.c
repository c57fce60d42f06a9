/* elvis.c - GNU `a ?: b` with calls of checkpointable functions in either
 * operand: the first operand runs once, the second only when the first is
 * zero; values of pointer type, unused values, nested and in conditions.
 * Exit status: the number of calls of sq() modulo 100. */
#include <stdio.h>

#if defined(__has_include)
#if __has_include("leverage.h")
#include "leverage.h"
#define HAVE_LEVERAGE 1
#endif
#endif
#ifndef HAVE_LEVERAGE
static int lev_checkpoint(void) { return 0; }
#endif

static int g_sq, g_side;
static char g_word[] = "word";

static int sq(int n)
{
    int r = 0;
    for (int i = 0; i < n; i++)
        r += n;
    g_sq++;
    return r;
}

static int zero_or(int n)
{
    lev_checkpoint();
    g_side++;
    return n % 3 ? 0 : n;
}

static char *maybe(int n)
{
    for (int i = 0; i < 1; i++)
        lev_checkpoint();
    return n % 2 ? g_word : NULL;
}

int main(void)
{
    int acc = 0;
    for (int n = 0; n < 7; n++) {
        int before = g_sq, side = g_side;
        int a = zero_or(n) ?: sq(n);
        int b = (n % 2) ?: sq(n + 1);
        int c = zero_or(n) ?: zero_or(n + 1) ?: sq(2);
        char *s = maybe(n) ?: "none";
        zero_or(n) ?: sq(1);
        if (zero_or(n + 2) ?: sq(n) > 10)
            acc += 1;
        acc += (n ?: sq(3)) + (sq(n) ?: 7);
        printf("%d: a %d b %d c %d %s sq %d side %d acc %d\n", n, a, b, c, s, g_sq - before,
               g_side - side, acc);
        fflush(stdout);
    }
    return g_sq % 100;
}
