/* main.c - `#include` inside function bodies: run() includes dispatch.h,
 * which redefines its dispatch macros (#undef, #define) and declares a
 * static table of label addresses, as Lua's interpreter does with its
 * jump table; scaled() includes scale.h, whose macro the rest of its body
 * and the function after it use. levpp expands those bodies as the
 * compiler sees them, the header's text on the line of its #include;
 * both functions reach checkpoints.
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

enum { OP_INC, OP_DBL, OP_MOD, OP_CHK, OP_JMP, OP_END, NUM_OPS };

#define DISPATCH(o) switch (o)
#define CASE(l) case l:
#define NEXT break

#ifndef USE_TABLE
#define USE_TABLE 1
#endif

static long run(const unsigned char *code, long acc)
{
    int pc = 0, loops = 0;
#if USE_TABLE
#include "dispatch.h"
#endif
    NEXT;
    CASE(OP_INC)
    acc++;
    NEXT;
    CASE(OP_DBL)
    acc *= 2;
    NEXT;
    CASE(OP_MOD)
    acc %= 1000003;
    NEXT;
    CASE(OP_CHK)
    lev_checkpoint();
    NEXT;
    CASE(OP_JMP)
    if (++loops < 3)
        pc = 0;
    NEXT;
    CASE(OP_END)
    return acc;
}

static long scaled(long x)
{
    long s = 0;
#include "scale.h"

    for (int i = 0; i < 4; i++) {
        s += SCALE(x + i);
        lev_checkpoint();
    }
    return s;
}

long bias_of(long x); /* bias.c */

/* BIAS as scale.h defined it */
static long after(long x) { return BIAS(bias_of(x)); }

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 10;
    static const unsigned char prog[] = {OP_INC, OP_DBL, OP_CHK, OP_MOD,
                                         OP_INC, OP_JMP, OP_CHK, OP_END};
    long acc = 1;
    for (int i = 0; rounds == 0 || i < rounds; i++) {
        acc = run(prog, acc);
        long s = scaled(i);
        printf("%d: acc %ld scaled %ld after %ld\n", i, acc, s, after(i));
        fflush(stdout);
        lev_checkpoint();
    }
    return 0;
}
