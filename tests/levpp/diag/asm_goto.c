/* asm_goto.c - asm goto in a checkpointable function: its jumps to C
 * labels would leave the frame's program counter behind. */
#include <stdio.h>

static int check(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++) {
        __asm__ goto("" : : : : done);
        s += i;
    }
done:
    return s;
}

int main(void)
{
    printf("%d\n", check(4));
    return 0;
}
