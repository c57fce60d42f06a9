/* unbraced_tight.c - unbraced statements holding checkpointable calls,
 * written with no space between tokens: a loop body right after the `)`
 * of its head, a statement right after the `;` of the one before, the
 * value of a statement expression right after its last statement. What
 * levpp inserts at the edges of a statement (a loop's poll, the code of
 * its calls, the braces it adds) then touches the operand that begins or
 * ends it, and must stay out of that operand where levpp copies it into
 * the lowered code (gen_unbraced's programs cover the positions and forms
 * with the usual spacing).
 * usage: unbraced_tight [PASSES]   (default 3; 0: until killed)
 * Exit status: the number of calls of f() modulo 100.
 */
/* levpp-test: resume 0 */
#include <stdio.h>
#include <stdlib.h>

static int g_calls;

/* Checkpointable (its loop polls). */
static int f(int x)
{
    int r = x;
    for (int q = 0; q < 2; q++)
        r = r * 3 + q;
    g_calls++;
    return r % 11;
}

/* One pass: prints one line per statement, flushed. */
static void pass(int k)
{
    int a = 1, b = 2, i, n = 0;
    // clang-format off
    for(i=0;i<3;i++)a+=f(i+k),a%=7;
    printf("%d for: a %d calls %d\n", k, a, g_calls);
    while(n<3)b=f(n++),a++;
    printf("%d while: a %d b %d calls %d\n", k, a, b, g_calls);
    do a=({int t=f(a);t+1;}),b++;while(n++<5);
    printf("%d do: a %d b %d calls %d\n", k, a, b, g_calls);
    if(k&1)a=({f(1);b;}),b=f(b);else b=f(2),a--;
    printf("%d if: a %d b %d calls %d\n", k, a, b, g_calls);
    a=({f(1);a+({int u=f(b);u;});});
    printf("%d nested: a %d calls %d\n", k, a, g_calls);
    switch(k%3)case 0:a=f(a)?:f(b),b++;
    printf("%d switch: a %d b %d calls %d\n", k, a, b, g_calls);
    for(i=0;i<2;i++)if(i)b=f(b)?f(a):f(k),a++;else(void)(a&&f(b)),b--;
    printf("%d for if: a %d b %d calls %d\n", k, a, b, g_calls);
    for(i=0;i<3;i+=1+(f(i)&1))b+=f(a)||f(b);
    printf("%d for inc: a %d b %d calls %d\n", k, a, b, g_calls);
    // clang-format on
}

int main(int argc, char **argv)
{
    long passes = argc > 1 ? atol(argv[1]) : 3;
    for (long r = 0; passes <= 0 || r < passes; r++)
        pass((int)(r % 1000));
    printf("calls %d\n", g_calls);
    return g_calls % 100;
}
