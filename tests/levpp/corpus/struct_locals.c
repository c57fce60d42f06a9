/* struct_locals.c - small structs of scalars and pointers, which run in
 * C locals of the body like scalars: a struct parameter and local copied
 * across safe points, a struct returned by a checkpointable function (as
 * lz4's LZ4HC_match_t), a struct whose member's address is taken (which
 * stays in the frame), and a struct holding pointers that must move with
 * the images.
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

typedef struct {
    int off, len, back;
} match_t;

struct cursor {
    const char *at;
    long *count;
    double weight;
};

/* Returns a struct; loops, so it is checkpointable. */
static match_t best_match(const char *text, int n, char c)
{
    match_t m = {-1, 0, 0};
    for (int i = 0; i < n; i++) {
        int len = 0;
        while (i + len < n && text[i + len] == c)
            len++;
        if (len > m.len) {
            m.off = i;
            m.len = len;
            m.back = i > 0;
        }
    }
    return m;
}

static long advance(struct cursor cur, int steps)
{
    long s = 0;
    for (int i = 0; i < steps && cur.at[i]; i++) {
        (*cur.count)++;
        lev_checkpoint();
        s += cur.at[i] * (long)cur.weight;
    }
    long *taken = &cur.count[0]; /* a pointer in the struct, not into it */
    double *w = &cur.weight;     /* a member's address: cur stays in the frame */
    lev_checkpoint();
    return s + *taken + (long)*w;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 8;
    static const char text[] = "abbcccddddeeeeeffffff aaaaaaa bb";
    long *count = malloc(sizeof *count);
    if (!count)
        return 1;
    *count = 0;
    struct cursor base = {text, count, 2.0};
    for (int r = 0; rounds == 0 || r < rounds; r++) {
        match_t m = best_match(text, (int)sizeof text - 1, "abcdef"[r % 6]);
        struct cursor c = base;
        c.at += r % 5;
        c.weight += r;
        lev_checkpoint();
        long s = advance(c, 6);
        match_t copy = m;
        lev_checkpoint();
        printf("round %d: match %d %d %d sum %ld count %ld at %c\n", r, copy.off, copy.len,
               copy.back, s, *c.count, *c.at);
        fflush(stdout);
    }
    free(count);
    return 0;
}
