/* main.c - the setjmp_multi program: setjmp here, longjmp in a function
 * of this file called from the parser of parser.c, which loops between
 * the two; handlers nested in a heap-linked chain. */
/* levpp-test: resume 0 */
#include <stdio.h>
#include <stdlib.h>

#include "guard.h"

guard *g_top;

void fail(int code)
{
    for (int i = 0; i < 3; i++)
        if (i == 2 && g_top)
            longjmp(g_top->env, code);
    abort();
}

static long guarded(const char *s, int *code)
{
    guard *g = malloc(sizeof *g);
    g->outer = g_top;
    g_top = g;
    long r = -1;
    int c = setjmp(g->env);
    if (c == 0)
        r = parse_sum(s);
    g_top = g->outer;
    free(g);
    *code = c;
    return r;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 8;
    if (rounds < 0)
        return 99;
    static const char *const inputs[] = {"1,2,3", "10,x,30", "7,8,", "42", "5,,6", "9,9,9,9"};
    for (int r = 0; rounds == 0 || r < rounds; r++) {
        int c1, c2;
        long a = guarded(inputs[r % 6], &c1);
        long b = guarded(inputs[(r + 1) % 6], &c2);
        printf("round %d: %ld (%d) %ld (%d)\n", r, a, c1, b, c2);
        fflush(stdout);
    }
    return 0;
}
