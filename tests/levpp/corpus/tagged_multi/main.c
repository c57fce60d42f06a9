/* main.c - a tagged union declared in a header, written in another file
 * (fill.c), held in a heap array and in a static, read here across safe
 * points. */
/* levpp-test: resume 0 */
#include <stdio.h>
#include <stdlib.h>

#include "cell.h"

#if defined(__has_include)
#if __has_include("leverage.h")
#include "leverage.h"
#define HAVE_LEVERAGE 1
#endif
#endif
#ifndef HAVE_LEVERAGE
static int lev_checkpoint(void) { return 0; }
#endif

static struct cell g_cells[5];
static const char g_text[] = "static names";

static unsigned long weigh(const struct cell *c, int depth)
{
    switch (c->kind) {
    case CELL_NUM:
        return (unsigned long)c->as.num;
    case CELL_NAME:
        return (unsigned char)c->as.name[0];
    case CELL_NEXT:
        return depth > 3 ? 1 : 3 * weigh(c->as.next, depth + 1);
    default:
        return 0;
    }
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 6;
    char *text = malloc(16);
    struct cell *heap = malloc(9 * sizeof *heap);
    if (!text || !heap)
        return 1;
    for (int i = 0; i < 15; i++)
        text[i] = (char)('a' + i);
    text[15] = 0;
    for (int r = 0; rounds == 0 || r < rounds; r++) {
        cells_fill(heap, 9, text, r);
        cells_fill(g_cells, 5, g_text, r + 1);
        lev_checkpoint();
        unsigned long x = 0;
        for (int i = 0; i < 9; i++)
            x = x * 7 + weigh(&heap[i], 0);
        for (int i = 0; i < 5; i++)
            x = x * 7 + weigh(&g_cells[i], 0);
        printf("round %d: %lu\n", r, x % 1000003);
        fflush(stdout);
    }
    free(heap);
    free(text);
    return 0;
}
