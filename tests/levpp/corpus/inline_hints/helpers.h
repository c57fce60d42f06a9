/* helpers.h - small static helpers that an included file defines, of
 * every shape levpp's inline hints meet: a load, a byte-order test, a
 * helper calling helpers, an old-style definition, a header static, a
 * recursive one, one declared before its definition, one that is
 * noinline, one that is variadic, one whose address is taken. */
#ifndef HELPERS_H
#define HELPERS_H
#include <stdarg.h>

static unsigned rd16(const unsigned char *p) { return (unsigned)p[0] | (unsigned)p[1] << 8; }

static int is_le(void)
{
    const union {
        unsigned u;
        unsigned char c[4];
    } one = {1};
    return one.c[0];
}

static unsigned rd_le16(const unsigned char *p)
{
    if (is_le())
        return rd16(p);
    return (unsigned)p[0] | (unsigned)p[1] << 8;
}

static int kr_add(a, b)
int a;
int b;
{
    return a + b;
}

/* A static of a header is one object in each input that includes it,
 * registered with that input's statics: it counts across rounds, and
 * travels. */
static unsigned counted;

static unsigned counter(unsigned x)
{
    counted++;
    return x + counted;
}

static unsigned fact(unsigned n) { return n < 2 ? 1 : n * fact(n - 1); }

static int declared_first(int x);

__attribute__((noinline)) static unsigned twice(unsigned x) { return 2 * x; }

static int vsum(int n, ...)
{
    va_list ap;
    va_start(ap, n);
    int s = 0;
    for (int i = 0; i < n; i++)
        s += va_arg(ap, int);
    va_end(ap);
    return s;
}

static unsigned sq(unsigned x) { return x * x; }

static int declared_first(int x) { return x ^ 0x55; }
#endif
