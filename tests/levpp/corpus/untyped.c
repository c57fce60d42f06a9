/* untyped.c - memory whose element type levpp cannot tell, which becomes
 * an untyped object that images carry as bytes: malloc, calloc, realloc
 * and alloca into a void *, a wrapper that keeps memory for itself, a
 * returned variable assigned in a loop, a buffer filled through a read
 * callback, and a size that is no whole number of the cast's type. Each
 * lives across checkpoints and is read back after them.
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

static void *g_scratch;

/* A wrapper that keeps memory for itself besides what it returns. */
static void *keeps_scratch(size_t n)
{
    free(g_scratch);
    g_scratch = malloc(64);
    if (g_scratch)
        memset(g_scratch, 0x5a, 64);
    return malloc(n);
}

/* The returned variable is assigned in a loop. */
static void *retry(size_t n)
{
    void *p = NULL;
    for (int i = 0; i < 3 && !p; i++)
        p = malloc(n);
    return p;
}

typedef size_t (*read_fn)(void *opaque, void *dst, size_t n);

static size_t counter_read(void *opaque, void *dst, size_t n)
{
    unsigned *next = opaque;
    unsigned char *d = dst;
    for (size_t i = 0; i < n; i++)
        d[i] = (unsigned char)((*next)++ * 7u);
    return n;
}

static unsigned sum_bytes(const void *p, size_t n)
{
    const unsigned char *b = p;
    unsigned s = 0;
    for (size_t i = 0; i < n; i++)
        s = s * 31u + b[i];
    return s;
}

/* alloca into a void *, alive across the function's checkpoints. */
static unsigned stack_bytes(size_t len, unsigned seed)
{
    void *buf = alloca(len);
    for (size_t i = 0; i < len; i++)
        memset((char *)buf + i, (int)((seed + i) & 0xff), 1);
    lev_checkpoint();
    return sum_bytes(buf, len);
}

static unsigned one_round(unsigned round, read_fn rd, unsigned *src)
{
    size_t n = 40 + round % 17;
    void *a = calloc(n, 1);
    void *b = malloc(n + 3);
    if (!a || !b)
        return 0;
    rd(src, a, n);
    memcpy(b, a, n);
    memcpy((char *)b + n, "xyz", 3);
    lev_checkpoint();
    void *c = realloc(a, 2 * n);
    if (!c)
        return 0;
    memset((char *)c + n, (int)round, n);
    /* 10 bytes cast to int *: no whole number of ints */
    int *odd = (int *)malloc(10);
    int *k = keeps_scratch(sizeof(int) * 4);
    int *r = retry(sizeof(int) * 2);
    if (!odd || !k || !r)
        return 0;
    memset(odd, 1, 10);
    for (int i = 0; i < 4; i++)
        k[i] = (int)(round * 4 + (unsigned)i);
    r[0] = (int)round;
    r[1] = -(int)round;
    lev_checkpoint();
    unsigned s = sum_bytes(b, n + 3) ^ sum_bytes(c, 2 * n) ^ sum_bytes(odd, 10) ^
                 sum_bytes(k, sizeof(int) * 4) ^ sum_bytes(r, sizeof(int) * 2) ^
                 sum_bytes(g_scratch, 64) ^ stack_bytes(24 + round % 5, round);
    free(b);
    free(c);
    free(odd);
    free(k);
    free(r);
    return s;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 12;
    unsigned src = 1;
    for (int i = 0; rounds == 0 || i < rounds; i++) {
        printf("round %d: %08x\n", i, one_round((unsigned)i, counter_read, &src));
        fflush(stdout);
    }
    free(g_scratch);
    return 0;
}
