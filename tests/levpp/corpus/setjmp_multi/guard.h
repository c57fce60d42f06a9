/* guard.h - the error handler of the setjmp_multi program, shared by its
 * two files. */
#ifndef GUARD_H
#define GUARD_H

#include <setjmp.h>

typedef struct guard {
    jmp_buf env;
    struct guard *outer;
} guard;

extern guard *g_top;

/* parser.c: parses a list of numbers, failing on a bad one (longjmp). */
long parse_sum(const char *s);

/* main.c: jumps to the innermost guard with code. */
void fail(int code);

#endif
