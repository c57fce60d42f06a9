/* damaged.c - a longjmp to a jmp_buf whose marker was overwritten after
 * the setjmp: the check word no longer holds, and the runtime aborts. */
/* jumps-expects: the jmp_buf holds a damaged marker */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf s_env;

static void jumper(int n)
{
    for (int i = 0; i < n; i++)
        if (i == n - 1)
            longjmp(s_env, 3);
}

int main(void)
{
    volatile int jumped = 0;
    if (setjmp(s_env)) {
        jumped = 1;
        printf("jumped\n");
        return 1;
    }
    ((volatile unsigned char *)s_env)[9] ^= 0x40;
    jumper(5 + jumped);
    printf("not reached\n");
    return 0;
}
