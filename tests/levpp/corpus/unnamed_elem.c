/* unnamed_elem.c - a struct member that is an array of an unnamed struct
 * (`struct { const char *init; ptrdiff_t len; } capture[N];`, as Lua's
 * pattern matcher keeps its captures): the element type has no name to
 * spell, so levpp spells it by the member's type. Held in a frame and on
 * the heap, its pointers across checkpoints.
 */
/* levpp-test: resume 0 */
#include <stddef.h>
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

typedef struct match_state {
    const char *src;
    int level;
    struct {
        const char *init;
        ptrdiff_t len;
    } capture[4][2];
} match_state;

static int depth(const match_state *ms)
{
    lev_checkpoint();
    return ms->level;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 10;
    static const char text[] = "leverage moves threads";
    match_state ms = {.src = text};
    match_state *h = malloc(2 * sizeof *h);
    if (!h)
        return 1;
    for (int i = 0; rounds == 0 || i < rounds; i++) {
        ms.capture[i % 4][1].init = text + i % 20;
        ms.capture[i % 4][1].len = i;
        ms.level = i % 4;
        h[i % 2] = ms;
        int d = depth(&ms);
        const match_state *o = &h[i % 2];
        printf("%d: %d %.3s %ld %.3s\n", i, d, ms.capture[d][1].init, (long)ms.capture[d][1].len,
               o->capture[d][1].init);
        fflush(stdout);
        lev_checkpoint();
    }
    free(h);
    return 0;
}
