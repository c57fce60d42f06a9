/* unnamed_locals.c - locals of struct and union types that have no name,
 * in checkpointable functions: levpp tags each type (lev__unnamedN) and
 * moves it to file scope with the frame. A point with an initializer, an
 * array of records holding pointers, a union, a struct nested in one,
 * and a second variable declared through __typeof__.
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

static int walk(int n)
{
    struct {
        int x, y;
    } p = {1, 1};
    for (int i = 0; i < n; i++) {
        p.x += p.y;
        lev_checkpoint();
    }
    return p.x;
}

static long names(int r)
{
    static const char *const words[] = {"one", "two", "three", "four"};
    struct {
        const char *name;
        struct {
            int len, rank;
        } info;
    } rows[3];
    union {
        long whole;
        unsigned char bytes[8];
    } mix;
    mix.whole = 0;
    for (int i = 0; i < 3; i++) {
        rows[i].name = words[(r + i) % 4];
        rows[i].info.rank = i;
        rows[i].info.len = 0;
        while (rows[i].name[rows[i].info.len])
            rows[i].info.len++;
        lev_checkpoint();
        mix.bytes[i] = (unsigned char)rows[i].name[0];
    }
    __typeof__(rows[0]) best = rows[0];
    for (int i = 1; i < 3; i++)
        if (rows[i].info.len > best.info.len)
            best = rows[i];
    lev_checkpoint();
    return mix.whole % 100003 + best.info.len * 10 + best.info.rank + best.name[1];
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 8;
    for (int r = 0; rounds == 0 || r < rounds; r++) {
        printf("round %d: %d %ld\n", r, walk(r + 2), names(r));
        fflush(stdout);
    }
    return 0;
}
