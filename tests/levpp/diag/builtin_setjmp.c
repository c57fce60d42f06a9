/* builtin_setjmp.c - GCC's __builtin_setjmp in a checkpointable function
 * (it loops): its buffer is an array of machine addresses. */
#include <stdio.h>

static void *s_buf[5];

static int attempt(int n)
{
    int tries = 0;
    for (int i = 0; i < n; i++)
        tries += i;
    if (__builtin_setjmp(s_buf) == 0)
        tries++;
    return tries;
}

int main(void)
{
    printf("%d\n", attempt(3));
    return 0;
}
