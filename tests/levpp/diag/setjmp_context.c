/* setjmp_context.c - setjmp in a loop condition, which levpp cannot
 * evaluate before the statement (C allows setjmp only in a few contexts;
 * the others levpp supports are an if, a switch, a comparison, a `!` and
 * an assignment). */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf s_env;
static int s_n;

static void fail(void)
{
    if (++s_n < 3)
        longjmp(s_env, s_n);
}

int main(void)
{
    int seen = 0;
    while (setjmp(s_env) < 2) {
        seen++;
        fail();
    }
    printf("%d\n", seen);
    return 0;
}
