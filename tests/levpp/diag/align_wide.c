/* Alignments of more than 16 bytes computed from a pointer's value, as
 * zstd's workspace aligns its tables to 64: a VT's objects keep only their
 * address modulo 16 when it moves, so the alignment would not hold after
 * a move. The padding offsets a pointer (a helper's result), a size left
 * is stored in memory (a remainder by a power of two the caller passes),
 * and a mask that no call fixes. A bucket chosen by the low bits is a
 * bucket (a table hashed by address). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct ws {
    unsigned char *base;
    size_t left;
};

static size_t bytes_to_align(const void *p, size_t align)
{
    size_t const mask = align - 1;
    return (align - ((size_t)p & mask)) & mask;
}

static void shrink(struct ws *w, size_t align)
{
    w->left -= (uintptr_t)w->base % align;
}

static struct ws *g_table[64];

int main(int argc, char **argv)
{
    (void)argv;
    struct ws w = {malloc(1000), 1000};
    if (!w.base)
        return 1;
    unsigned char *tables = w.base + bytes_to_align(w.base, 64);
    shrink(&w, 128);
    size_t mask = (size_t)argc * 32 - 1;
    unsigned char *rows = w.base + ((size_t)w.base & mask);
    g_table[(uintptr_t)&w & 63] = &w;
    printf("%d %d %zu\n", tables != NULL, rows != NULL, w.left);
    return 0;
}
