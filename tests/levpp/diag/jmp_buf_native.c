/* jmp_buf_native.c - a jmp_buf handed to a function outside the inputs
 * by a checkpointable function: that code would longjmp with the C
 * library's longjmp to a buffer that holds no machine state. */
#include <setjmp.h>
#include <stdio.h>

extern void run_guarded(jmp_buf env, int n);

int main(void)
{
    jmp_buf env;
    int total = 0;
    for (int i = 0; i < 3; i++)
        total += i;
    if (setjmp(env) == 0)
        run_guarded(env, total);
    printf("%d\n", total);
    return 0;
}
