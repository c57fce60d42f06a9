/* force_inline.c - checkpointable functions declared always_inline, as
 * lz4's LZ4_FORCE_INLINE helpers are (the attribute through a macro, and
 * written out): their fresh entries are always_inline too, and they keep
 * working when a poll inside them unwinds.
 */
/* levpp-test: resume 0 */
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

#define FORCE_INLINE static inline __attribute__((always_inline))

/* The common prefix of a and b, at most n bytes (loops: polls). */
FORCE_INLINE unsigned common(const unsigned char *a, const unsigned char *b, unsigned n)
{
    unsigned i = 0;
    while (i < n && a[i] == b[i])
        i++;
    return i;
}

static inline __attribute__((__always_inline__)) unsigned long mix(unsigned long h, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        h = h * 31u + i;
    return h;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 6;
    enum { N = 1 << 16 };
    unsigned char *a = malloc(N), *b = malloc(N);
    if (!a || !b)
        return 1;
    for (unsigned i = 0; i < N; i++)
        a[i] = b[i] = (unsigned char)(i * 7);
    unsigned long h = 5381;
    for (int r = 0; rounds == 0 || r < rounds; r++) {
        b[(unsigned)(r * 9973) % N] ^= 1;
        unsigned c = common(a, b, N);
        h = mix(h ^ c, 1000u + (unsigned)r);
        lev_checkpoint();
        printf("round %d: %u %lu\n", r, c, h % 1000003);
        fflush(stdout);
        b[(unsigned)(r * 9973) % N] ^= 1;
    }
    free(a);
    free(b);
    return 0;
}
