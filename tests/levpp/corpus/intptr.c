/* intptr.c - pointers converted to integers in checkpointable code where
 * no integer keeps one across a safe point, which levpp allows: an
 * alignment test within one expression, low bits kept apart (an object
 * keeps its alignment when it moves), a converted value that is dead (or
 * written again) before the next safe point, a difference of two
 * converted pointers, and a truth value; and, stored in heap memory or
 * returned by helpers, the values of these that hold no pointer. A number
 * hashed from an address is refused (diag/addr_derived.c).
 * Exit status: the sum of the slots modulo 100 (not where they are: the
 * addresses differ between builds). */
#include <stdint.h>
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

#define NSLOTS 16

static double g_cells[8];
static int g_sum;

/* Helpers whose results hold no pointer: an offset, the low bits. */
static uintptr_t offset_in(const void *p, const void *base)
{
    return (uintptr_t)p - (uintptr_t)base;
}

static unsigned long misalign(const void *p) { return (uintptr_t)p & 7; }

static void put(long *slot, long v) { *slot = v; }

static int mix(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s ^= i * 31;
    return s;
}

int main(void)
{
    int slots[NSLOTS] = {0};
    long diff_total = 0;
    for (int round = 0; round < 4; round++) {
        for (int k = 0; k < 8; k++) {
            double *p = &g_cells[k];
            /* the conversion used within one expression */
            int aligned = ((uintptr_t)p & (sizeof(double) - 1)) == 0;
            /* only the low bits are kept */
            uintptr_t low = (uintptr_t)p & 7;
            /* the full value, dead before the next safe point */
            uintptr_t whole = (uintptr_t)p + 8;
            int odd = (int)(whole & 1);
            /* an offset between two pointers is no pointer */
            intptr_t off = (intptr_t)p - (intptr_t)&g_cells[0];
            /* a truth value holds no address */
            int nonnull = (uintptr_t)p != 0;
            lev_checkpoint();
            slots[(k * 7) % NSLOTS] += aligned + mix(k);
            diff_total += off / (intptr_t)sizeof(double) + (long)low + odd + nonnull;
            whole = 0; /* written again before any use */
            diff_total += (long)whole;
        }
        printf("round %d: diff %ld\n", round, diff_total);
        fflush(stdout);
    }
    for (int s = 0; s < NSLOTS; s++)
        g_sum += slots[s];
    long *heap = malloc(4 * sizeof *heap);
    if (!heap)
        return 2;
    heap[0] = (long)offset_in(&g_cells[5], g_cells);
    heap[1] = (long)misalign(&g_cells[2]);
    heap[2] = (long)((uintptr_t)&g_cells[3] & 7) + (long)((uintptr_t)g_cells % 8);
    put(&heap[3], (long)(&g_cells[7] - &g_cells[1]));
    lev_checkpoint();
    printf("heap %ld %ld %ld %ld\n", heap[0], heap[1], heap[2], heap[3]);
    free(heap);
    printf("slots sum %d\n", g_sum);
    return g_sum % 100;
}
