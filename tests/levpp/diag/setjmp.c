/* setjmp.c - setjmp in a checkpointable function (it loops): a resumed
 * frame could not return through it again. */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf s_env;

static int attempt(int n)
{
    volatile int tries = 0;
    while (tries < n) {
        if (setjmp(s_env) == 0)
            tries++;
        else
            break;
    }
    return tries;
}

int main(void)
{
    int t = attempt(3);
    printf("%d\n", t);
    return 0;
}
