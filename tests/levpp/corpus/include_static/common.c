/* common.c - helpers that main.c also compiles, by including this file
 * (as a library's second file includes its first for its helpers): with
 * COMMON_STATIC_ONLY defined, only the static functions, so that the
 * program holds two definitions of each, one per file.
 * The static ones are checkpointable (loops) or plain (no loop); a
 * pointer to one of them is held across safe points. */
#include <stddef.h>

/* plain: no loop, called from checkpointable code of both files */
static unsigned rd16(const unsigned char *p) { return (unsigned)p[0] | (unsigned)p[1] << 8; }

/* checkpointable: the length of the common prefix of a and b, at most n */
static long count_same(const unsigned char *a, const unsigned char *b, long n)
{
    long i = 0;
    while (i + 1 < n && rd16(a + i) == rd16(b + i))
        i += 2;
    while (i < n && a[i] == b[i])
        i++;
    return i;
}

#ifndef COMMON_STATIC_ONLY
/* The sum of the common prefixes of buf with itself shifted by 1..shifts. */
long common_total(const unsigned char *buf, long n, int shifts)
{
    long t = 0;
    for (int s = 1; s <= shifts && s < n; s++)
        t += count_same(buf, buf + s, n - s);
    return t;
}
#endif
