/* no_marker.c - a longjmp of checkpointable code to a jmp_buf that no
 * setjmp set: the runtime aborts rather than jump. */
/* jumps-expects: the jmp_buf was not set by setjmp in checkpointable code */
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

static jmp_buf s_env;

static int fail_after(int n)
{
    int s = 0;
    while (s < n)
        s += 2;
    longjmp(s_env, s);
}

int main(void)
{
    memset(s_env, 0, sizeof s_env);
    fail_after(7);
    printf("not reached\n");
    return 0;
}
