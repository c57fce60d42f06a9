/* hidden_heap.c - a heap pointer hidden in an integer across a safe
 * point (copied with memcpy into an element of a heap array of long: levpp
 * refuses the conversions it sees, not this copy), then followed: no
 * image carries it, so after a move it points at nothing. A plain run
 * prints the sum; torture (LEV_TORTURE) must not. Each round first
 * allocates more than the collector's allowance between two collections,
 * so that one is due when the VT is restored. */
#include <stdint.h>
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

struct node {
    struct node *next;
    long v;
};

int main(void)
{
    long *slots = malloc(2 * sizeof *slots);
    struct node *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    if (!slots || !a || !b)
        return 2;
    b->next = NULL;
    b->v = 7;
    a->next = b;
    a->v = 1;
    long sum = 0;
    for (int i = 0; i < 20; i++) {
        for (int k = 0; k < 96; k++) {
            char *junk = malloc(65536 * sizeof(char));
            if (!junk)
                return 2;
            junk[k] = (char)k;
            free(junk);
        }
        memcpy(&slots[0], &a, sizeof a); /* the copy levpp cannot see */
        lev_checkpoint();
        struct node *h = (struct node *)(uintptr_t)slots[0];
        sum += h->next->v + h->v;
    }
    printf("%ld\n", sum);
    return 0;
}
