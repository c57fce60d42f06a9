/* addr_derived.c - numbers computed from addresses that outlive their
 * computation: they depend on where an object is, and a VT's objects are
 * elsewhere after it moves, so a table hashed by address would no longer
 * match its contents. A bucket chosen by a pointer's hash (through a
 * helper's return value), a hash kept in the object it was computed from,
 * a truncated address kept across a safe point, a hash passed to a helper
 * that stores it, and a pointer offset by a hash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "leverage.h"

struct node {
    struct node *next;
    unsigned long hash;
};

static struct node *g_table[64];
static unsigned g_last;

static unsigned bucket_of(const void *p)
{
    return (unsigned)(((uintptr_t)p >> 4) % 64);
}

static void remember(unsigned h)
{
    g_last = h;
}

int main(void)
{
    struct node *n = malloc(sizeof *n);
    if (!n)
        return 1;
    unsigned b = bucket_of(n);
    n->next = g_table[b];
    g_table[b] = n;
    n->hash = ((uintptr_t)n >> 3) * 2654435761u;
    unsigned low = (unsigned)(uintptr_t)n;
    lev_checkpoint();
    printf("%u\n", low % 3);
    remember((unsigned)((uintptr_t)n * 31));
    struct node **slot = g_table + ((uintptr_t)n >> 6) % 64;
    printf("%d %u\n", *slot != NULL, g_last % 2);
    return 0;
}
