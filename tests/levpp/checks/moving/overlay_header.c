/* overlay_header.c - a header struct with a pointer laid over the first
 * element of an array allocated as another struct, whose field at that
 * offset is an integer (a document header over its values, as a JSON
 * library lays one out): the allocation is typed by its cast, so the
 * header's pointer sits in an integer field of the image's type. Carried
 * as a number it would point into the old memory after a restore; under
 * torture the capture must find the address there and fail.
 * moving-expects: holds in its integer field tag the value */
#include <stdint.h>
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

struct val {
    uint64_t tag;
    const char *str;
};
struct doc {
    struct val *root;
    size_t n;
};

static long walk(struct doc *d)
{
    long s = 0;
    for (size_t i = 0; i < d->n; i++) {
        lev_checkpoint();
        s += (long)d->root[i].tag + d->root[i].str[0];
    }
    return s;
}

int main(void)
{
    struct val *vals = (struct val *)malloc(17 * sizeof(struct val));
    if (!vals)
        return 2;
    struct doc *d = (struct doc *)vals;
    d->root = vals + 1;
    d->n = 16;
    for (int i = 1; i < 17; i++) {
        vals[i].tag = (uint64_t)i;
        vals[i].str = "x";
    }
    printf("%ld\n", walk(d));
    return 0;
}
