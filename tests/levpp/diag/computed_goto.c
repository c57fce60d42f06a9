/* computed_goto.c - a computed goto (GNU labels as values) in a
 * checkpointable function: its targets cannot be resume points. */
#include <stdio.h>

static int run(const unsigned char *code, int n)
{
    static void *const ops[] = {&&op_inc, &&op_dbl, &&op_end};
    int acc = 0, pc = 0;
    while (pc < n) {
        goto *ops[code[pc++]];
    op_inc:
        acc++;
        continue;
    op_dbl:
        acc *= 2;
        continue;
    op_end:
        break;
    }
    return acc;
}

int main(void)
{
    static const unsigned char prog[] = {0, 1, 0, 1, 2};
    int acc = run(prog, 5);
    printf("%d\n", acc);
    return 0;
}
