/* variadic.c - variadic functions that reach no safe point, called from
 * checkpointable code: a sum with a loop over its arguments (a loop
 * alone does not make a variadic function checkpointable, so it does not
 * poll), a formatter over vsnprintf with va_copy, a logger that passes
 * its va_list on, and one that calls a function whose only stops are
 * loop polls (called natively from there).
 */
/* levpp-test: resume 0 */
#include <stdarg.h>
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

static long sum(int n, ...)
{
    va_list ap;
    va_start(ap, n);
    long s = 0;
    for (int i = 0; i < n; i++)
        s += va_arg(ap, int);
    va_end(ap);
    return s;
}

/* The length it would need, then the text, from one va_list copied. */
static size_t format(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int need = vsnprintf(NULL, 0, fmt, ap);
    vsnprintf(buf, cap, fmt, again);
    va_end(again);
    va_end(ap);
    return need < 0 ? 0 : (size_t)need;
}

/* Checkpointable only for its loop's polls. */
static int count_char(const char *s, char c)
{
    int n = 0;
    for (; *s; s++)
        n += *s == c;
    return n;
}

static int count_all(char c, int n, ...)
{
    va_list ap;
    va_start(ap, n);
    int total = 0;
    for (int i = 0; i < n; i++)
        total += count_char(va_arg(ap, const char *), c);
    va_end(ap);
    return total;
}

static void vlog(const char *tag, const char *fmt, va_list ap)
{
    printf("[%s] ", tag);
    vprintf(fmt, ap);
    putchar('\n');
}

static void logf_(const char *tag, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(tag, fmt, ap);
    va_end(ap);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 8;
    char buf[64];
    for (int r = 0; rounds == 0 || r < rounds; r++) {
        long s = sum(4, r, r * 2, r * 3, 7) + sum(1, r);
        lev_checkpoint();
        size_t n = format(buf, sizeof buf, "%d:%ld:%s", r, s, r % 2 ? "odd" : "even");
        lev_checkpoint();
        logf_("round", "%d sum %ld text %s (%zu) %d", r, s, buf, n,
              count_all('e', 3, buf, "even", "eleven") + count_char(buf, 'o'));
    }
    return 0;
}
