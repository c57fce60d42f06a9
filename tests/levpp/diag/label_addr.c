/* label_addr.c - a table of label addresses (GNU labels as values) local
 * to a checkpointable function: a label's address cannot follow a VT. */
#include <stdio.h>

static int run(const unsigned char *code, int n)
{
    const void *ops[] = {&&op_inc, &&op_end};
    int acc = 0, pc = 0;
    while (pc < n) {
        goto *ops[code[pc++]];
    op_inc:
        acc++;
        continue;
    op_end:
        break;
    }
    return acc;
}

int main(void)
{
    static const unsigned char prog[] = {0, 0, 0, 1};
    printf("%d\n", run(prog, 4));
    return 0;
}
