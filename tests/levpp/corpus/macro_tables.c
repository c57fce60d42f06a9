/* macro_tables.c - file-scope initializers written by macros: a table of
 * error strings made by an X-macro (as lz4's LZ4F_errorStrings), a
 * pointer initialised by an object-like macro, and a table of structs
 * holding strings and function pointers from a macro. Every string
 * travels with the images.
 */
/* levpp-test: resume 0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include("leverage.h")
#include "leverage.h"
#define HAVE_LEVERAGE 1
#endif
#endif
#ifndef HAVE_LEVERAGE
static int lev_checkpoint(void) { return 0; }
#endif

#define LIST_ERRORS(X) X(OK_NoError) X(ERROR_generic) X(ERROR_maxBlockSize_invalid) X(ERROR_io)
#define GENERATE_STRING(e) #e,
static const char *error_strings[] = {LIST_ERRORS(GENERATE_STRING)};

#define BANNER "macro tables"
static const char *banner = BANNER;

static long add(long a, long b) { return a + b; }
static long mul(long a, long b) { return a * b; }

struct op {
    const char *name;
    long (*fn)(long, long);
};
#define OP(f)                                                                                      \
    {                                                                                              \
#f, f                                                                                      \
    }
static const struct op ops[] = {OP(add), OP(mul)};

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 8;
    long acc = 1;
    for (int r = 0; rounds == 0 || r < rounds; r++) {
        const char *e = error_strings[r % 4];
        const struct op *o = &ops[r % 2];
        lev_checkpoint();
        acc = o->fn(acc, r + 1) % 1000003;
        printf("%s %d: %s %zu %s %ld\n", banner, r, e, strlen(e), o->name, acc);
        fflush(stdout);
    }
    return 0;
}
