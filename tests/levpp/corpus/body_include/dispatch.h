/* dispatch.h - included inside the body of run() in main.c, as Lua's
 * lvm.c includes ljumptab.h: it replaces the dispatch macros that main.c
 * defined with computed gotos through a static table of label addresses,
 * which the rest of the body then uses. */

#undef DISPATCH
#undef CASE
#undef NEXT

#define DISPATCH(o) goto *optab[o];
#define CASE(l) L_##l:
#define NEXT DISPATCH(code[pc++])

static const void *const optab[NUM_OPS] = {
#if 0
the order of the opcodes of main.c
#endif
    &&L_OP_INC, &&L_OP_DBL, &&L_OP_MOD, &&L_OP_CHK, &&L_OP_JMP, &&L_OP_END};
