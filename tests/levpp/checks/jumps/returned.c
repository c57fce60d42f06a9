/* returned.c - a longjmp to a setjmp whose function has returned (C
 * leaves it undefined): the runtime aborts naming the function. */
/* jumps-expects: the function that called setjmp (setter) has returned */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf s_env;

static int setter(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i;
    if (setjmp(s_env))
        return -1;
    return s;
}

static void jumper(int n)
{
    for (int i = 0; i < n; i++)
        if (i == n - 1)
            longjmp(s_env, 3);
}

int main(void)
{
    printf("%d\n", setter(10));
    fflush(stdout);
    jumper(5);
    return 0;
}
