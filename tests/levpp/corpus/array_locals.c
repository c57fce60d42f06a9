/* array_locals.c - small local arrays whose references only reach their
 * elements (subscripts, sizeof, C library calls that keep no pointer to
 * them), which run in C locals of the body and are copied to the frame
 * when it unwinds: a board saved and restored with memcpy around a
 * checkpoint (as a chess engine's copy_board), a name built with
 * snprintf, an array of pointers that must move with the images; and,
 * kept in the frame, arrays whose pointer escapes (strchr into one,
 * memcpy's result kept, an element's address).
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

static unsigned long long board[12];
static int side;

static int make_move(int move)
{
    unsigned long long copy[12];
    int side_copy = side;
    memcpy(copy, board, sizeof copy);
    for (int i = 0; i < 12; i++)
        board[i] ^= (unsigned long long)(move + i) << (i % 7);
    side ^= 1;
    lev_checkpoint();
    int legal = (board[move % 12] & 1) == 0;
    if (!legal) {
        memcpy(board, copy, sizeof board);
        side = side_copy;
    }
    return legal;
}

static size_t label(int r, char *out, size_t cap)
{
    char name[24];
    snprintf(name, sizeof name, "r%03d-%s", r, r % 2 ? "odd" : "even");
    lev_checkpoint();
    size_t n = strlen(name);
    if (n >= cap)
        n = cap - 1;
    memcpy(out, name, n);
    out[n] = '\0';
    return n;
}

static long pointers(long *heap, int r)
{
    long *slots[4] = {heap, heap + 1, heap + 2, heap + 3};
    long s = 0;
    for (int i = 0; i < 4; i++) {
        lev_checkpoint();
        *slots[(i + r) % 4] += i;
        s += *slots[i];
    }
    return s;
}

static int escapes(int r)
{
    char text[16];
    snprintf(text, sizeof text, "a:b:%d", r);
    char *colon = strchr(text, ':'); /* a pointer into text: text stays in the frame */
    lev_checkpoint();
    int nums[4] = {r, r + 1, r + 2, r + 3};
    int *second = &nums[1];
    lev_checkpoint();
    return (int)(colon - text) + *second;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 8;
    long *heap = calloc(4, sizeof *heap);
    if (!heap)
        return 1;
    char out[16];
    for (int r = 0; rounds == 0 || r < rounds; r++) {
        int legal = 0;
        for (int m = 0; m < 20; m++)
            legal += make_move(r * 20 + m);
        size_t n = label(r, out, sizeof out);
        long s = pointers(heap, r);
        printf("round %d: legal %d side %d board %llu %s %zu %ld %d\n", r, legal, side,
               board[r % 12] % 1000003, out, n, s, escapes(r));
        fflush(stdout);
    }
    free(heap);
    return 0;
}
