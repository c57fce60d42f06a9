/* align_helpers.c - alignment computed from a pointer's value, as zstd's
 * HUF_alignUpWorkspace does: the bytes to the next multiple of `align`
 * (`(size_t)p & (align - 1)`, `(size_t)p % align`), through a const local
 * mask, where every call passes `align` a constant of at most 16 (the
 * alignment every object keeps when a VT moves, so the numbers are the
 * same wherever the workspace is). The aligned pointers and the sizes left
 * live across safe points; the workspace is carved anew in each round.
 * usage: align_helpers [N [ROUNDS]]   (default 64 3; ROUNDS 0: until killed)
 * Exit status: the total modulo 100. */
/* levpp-test: resume 200 0 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The bytes to add to ws to align it to `align` (a power of two), and the
 * aligned pointer, or NULL when the workspace is too small. */
static void *align_up(void *ws, size_t *size, size_t align)
{
    size_t const mask = align - 1;
    size_t const rem = (size_t)ws & mask;
    size_t const add = (align - rem) & mask;
    unsigned char *const aligned = (unsigned char *)ws + add;
    if (*size < add) {
        *size = 0;
        return NULL;
    }
    *size -= add;
    return aligned;
}

/* The same with a remainder, the alignment an argument of the caller's. */
static size_t pad_to(const void *p, size_t align)
{
    uintptr_t const r = (uintptr_t)p % align;
    return r ? align - r : 0;
}

struct carved {
    int *ints;
    double *reals;
    long long *wide;
    size_t left;
};

/* Carves three arrays of n elements out of one workspace. */
static int carve(unsigned char *ws, size_t size, size_t n, struct carved *c)
{
    c->ints = align_up(ws, &size, _Alignof(int));
    if (!c->ints || size < n * sizeof(int))
        return -1;
    size -= n * sizeof(int);
    unsigned char *next = (unsigned char *)(c->ints + n);
    c->reals = align_up(next, &size, _Alignof(double));
    if (!c->reals || size < n * sizeof(double))
        return -1;
    size -= n * sizeof(double);
    next = (unsigned char *)(c->reals + n);
    size_t pad = pad_to(next, 16);
    if (size < pad + n * sizeof(long long))
        return -1;
    c->wide = (long long *)(next + pad);
    c->left = size - pad - n * sizeof(long long);
    return 0;
}

static long fill_and_sum(struct carved *c, size_t n, int round)
{
    for (size_t i = 0; i < n; i++) {
        c->ints[i] = (int)(i * 3 + (size_t)round);
        c->reals[i] = (double)i / 4.0;
        c->wide[i] = (long long)i * 1000003LL;
    }
    long s = 0;
    for (size_t i = 0; i < n; i++)
        s += c->ints[i] + (long)c->reals[i] + (long)(c->wide[i] % 97);
    return s;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)atol(argv[1]) : 64;
    int rounds = argc > 2 ? atoi(argv[2]) : 3;
    if (n < 1 || n > 100000 || rounds < 0)
        return 99;
    size_t size = 3 + n * (sizeof(int) + sizeof(double) + sizeof(long long)) + 64;
    long total = 0;
    for (int r = 0; rounds == 0 || r < rounds; r++) {
        /* an odd start, so that every alignment has something to add */
        unsigned char *buf = malloc(size + 3);
        if (!buf)
            return 98;
        struct carved c;
        if (carve(buf + 1 + r % 3, size - 1, n, &c)) {
            free(buf);
            return 97;
        }
        long s = fill_and_sum(&c, n, r);
        int ok = ((uintptr_t)c.ints % _Alignof(int)) == 0 &&
                 ((uintptr_t)c.reals % _Alignof(double)) == 0 && ((uintptr_t)c.wide % 16) == 0;
        printf("round %d: sum %ld left %zu aligned %d\n", r, s, c.left, ok);
        fflush(stdout);
        total += s;
        free(buf);
    }
    printf("total %ld\n", total);
    return (int)(total % 100);
}
