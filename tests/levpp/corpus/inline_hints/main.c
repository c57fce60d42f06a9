/* inline_hints - checkpointable loops that call small static helpers of
 * an included file (helpers.h, which more.c includes too): levpp redeclares them `static inline`
 * after the input's text where its bodies multiply their calls, which
 * must leave every one of them working as written.
 * Usage: inline_hints [ROUNDS]; one line per round (ROUNDS 0: until
 * killed). Exit status: 0. */
/* levpp-test: resume 0 */
#include <stdio.h>
#include <stdlib.h>

#include "helpers.h"

unsigned long more_sum(const unsigned char *buf, unsigned n);

static unsigned (*const square)(unsigned) = sq;

/* polls in its loop: checkpointable; calls every helper */
static unsigned long round_sum(const unsigned char *buf, unsigned n, int r)
{
    unsigned long s = 0;
    for (unsigned i = 0; i + 1 < n; i++) {
        s += rd_le16(buf + i) + (unsigned)kr_add((int)i, r) + fact(i % 8);
        s += (unsigned)declared_first((int)i) + twice(i) + (unsigned)vsum(3, (int)i, r, 1);
        s += square(i & 15);
    }
    return s + counter((unsigned)r);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 6;
    unsigned char buf[200];
    for (unsigned i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)(i * 7 + 3);
    for (int r = 0; rounds == 0 || r < rounds; r++) {
        printf("round %d: %lu %lu\n", r, round_sum(buf, sizeof buf, r), more_sum(buf, sizeof buf));
        fflush(stdout);
    }
    return 0;
}
