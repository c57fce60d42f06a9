/* more.c - a second input that includes helpers.h too: each input has
 * its own copy of the helpers, and its own hints; it uses some of them
 * (as lz4hc.c, which includes lz4.c). */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "helpers.h"

unsigned long more_sum(const unsigned char *buf, unsigned n);

/* polls in its loop: checkpointable */
unsigned long more_sum(const unsigned char *buf, unsigned n)
{
    unsigned long s = 0;
    for (unsigned i = 0; i + 1 < n; i += 2)
        s += rd_le16(buf + i) * (unsigned)is_le() + sq(i) + counter(i);
    return s;
}
