/* main.c - calls the static helpers of common.c, which it includes, and
 * the extern function of common.c that uses the same helpers in that
 * file: the same static function defined in two inputs through an
 * include. A pointer to a static function of this file is held across
 * the safe points of every round.
 * Usage: include_static [ROUNDS]; prints one line per round (ROUNDS 0:
 * until killed).
 * Exit status: 0 if every round's checksum is the one computed at
 * round 1, else 1. */
/* levpp-test: resume 0 */
#include <stdio.h>
#include <stdlib.h>

#define COMMON_STATIC_ONLY
#include "common.c"

long common_total(const unsigned char *buf, long n, int shifts);

static long twice(long v) { return 2 * v; }
static long plus_one(long v) { return v + 1; }

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 20;
    unsigned char buf[600];
    for (int i = 0; i < 600; i++) /* long runs of one byte */
        buf[i] = (unsigned char)(i % 50 < 45 ? 'a' : 'b');
    long (*f)(long) = rounds % 2 ? twice : plus_one;
    long first = -1;
    int bad = 0;
    for (long r = 1; rounds == 0 || r <= rounds; r++) {
        long here = 0;
        for (int s = 1; s < 40; s++)
            here += count_same(buf, buf + s, 600 - s);
        long there = common_total(buf, 600, 39);
        long sum = f(here) + there;
        if (first < 0)
            first = sum;
        bad |= sum != first || here != there;
        printf("round %ld: %ld %ld %ld\n", r, here, there, sum);
        fflush(stdout);
    }
    return bad;
}
