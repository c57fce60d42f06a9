/* hidden_frame.c - the address of a local array (which lives in the
 * frame) hidden in an integer across two safe points (copied with memcpy
 * into an element of a heap array of long: levpp refuses the conversions
 * it sees, not this copy), then followed: no image carries it, so after a
 * move it points at nothing. A plain run prints the sum; torture
 * (LEV_TORTURE) must not. */
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
    long v;
};

int main(void)
{
    long *slots = malloc(sizeof *slots);
    struct node *n = malloc(sizeof *n);
    if (!slots || !n)
        return 2;
    n->v = 5;
    struct node *refs[2] = {n, n};
    long sum = 0;
    for (int i = 0; i < 20; i++) {
        struct node **ref = &refs[1];
        memcpy(&slots[0], &ref, sizeof ref); /* the copy levpp cannot see */
        lev_checkpoint();
        lev_checkpoint();
        struct node **r = (struct node **)(uintptr_t)slots[0];
        sum += (*r)->v;
    }
    printf("%ld\n", sum);
    return 0;
}
