/* a/util.c - the same names as in the other util.c: a static
 * function, file-scope statics and a static local, with another
 * util.h. */
#include <stdlib.h>
#include <string.h>

#include "util.h"

static long total;
static long *history;
static int nhistory;

/* Checkpointable: its loop polls; the history buffer lives across it. */
static long step(long x)
{
    static long calls;
    calls++;
    long s = 0;
    for (long i = 0; i < 5000; i++)
        s += (x + i) % UTIL_SCALE;
    return s + calls;
}

long a_round(int round)
{
    long *h = realloc(history, (size_t)(nhistory + 1) * sizeof(long));
    if (!h)
        abort();
    history = h;
    long v = step(round) * (long)strlen(UTIL_NAME);
    history[nhistory++] = v;
    total += v;
    return v;
}

long a_total(void)
{
    long s = 0;
    for (int i = 0; i < nhistory; i++)
        s += history[i];
    return s == total ? total : -1;
}
