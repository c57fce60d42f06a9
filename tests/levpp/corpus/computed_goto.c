/* computed_goto.c - GNU labels as values in checkpointable functions: a
 * bytecode interpreter dispatching through a static table of label
 * addresses (as Lua's jump table), with a checkpoint inside an opcode,
 * and a local table whose entry (a label address) is held in a variable
 * across a safe point. Label addresses become offsets in a static of the
 * function's own, so the VT can move; the output must not change.
 */
/* levpp-test: resume 0 */
#include <stdio.h>
#include <stdlib.h>

#if defined(__has_include)
#if __has_include("leverage.h")
#include "leverage.h"
#define HAVE_LEVERAGE 1
#endif
#endif
#ifndef HAVE_LEVERAGE
static int lev_checkpoint(void) { return 0; }
#endif

enum { OP_INC, OP_DBL, OP_MOD, OP_CHK, OP_JMP, OP_END };

static long run(const unsigned char *code, long acc)
{
    static void *const ops[] = {&&op_inc, &&op_dbl, &&op_mod, &&op_chk, &&op_jmp, &&op_end};
    int pc = 0, loops = 0;
#define DISPATCH() goto *ops[code[pc++]]
    DISPATCH();
op_inc:
    acc++;
    DISPATCH();
op_dbl:
    acc *= 2;
    DISPATCH();
op_mod:
    acc %= 1000003;
    DISPATCH();
op_chk:
    lev_checkpoint();
    DISPATCH();
op_jmp:
    if (++loops < 50) {
        pc = 0;
        DISPATCH();
    }
    DISPATCH();
op_end:
    return acc;
}

/* A label address kept in a variable across safe points. */
static int pick(int r)
{
    void *const table[] = {&&even, &&odd};
    void *target = table[r % 2];
    int hits = 0;
    for (int i = 0; i < 3; i++) {
        lev_checkpoint();
        hits += i;
    }
    goto *target;
even:
    return hits * 2;
odd:
    return hits * 3;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 8;
    static const unsigned char prog[] = {OP_INC, OP_DBL, OP_CHK, OP_INC, OP_MOD, OP_JMP, OP_END};
    long acc = 1;
    for (int r = 0; rounds == 0 || r < rounds; r++) {
        acc = run(prog, acc) % 1000003;
        printf("round %d: %ld %d\n", r, acc, pick(r));
        fflush(stdout);
    }
    return 0;
}
