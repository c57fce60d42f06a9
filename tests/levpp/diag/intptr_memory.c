/* intptr_memory.c - pointers converted to integers and stored in memory,
 * where neither the collector nor an image sees them as pointers: into a
 * heap array of long (an interpreter's stack), through a helper that
 * returns the converted pointer, through a helper that stores its
 * parameter, and into a struct member through a pointer (an XOR list). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct xnode {
    uintptr_t link;
    int v;
};

static long to_int(char *p)
{
    long bits = (long)p;
    return bits;
}

static void store(long *slot, long v)
{
    *slot = v;
}

int main()
{
    long *stack = malloc(8 * sizeof *stack);
    char *s = malloc(16);
    struct xnode *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    if (!stack || !s || !a || !b)
        return 1;
    stack[0] = (long)s;
    stack[1] = to_int(s) + 8;
    store(&stack[2], (long)s);
    a->link = (uintptr_t)a ^ (uintptr_t)b;
    printf("%d\n", (int)(stack[0] == stack[1] - 8));
    return 0;
}
