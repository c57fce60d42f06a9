/* pc_test.h - helpers the peer controller's test runners share: waiting
 * for the next record of a channel within a bound, and reading a file. */
#ifndef PC_TEST_H
#define PC_TEST_H

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>

#include "chan.h"

/* Waits (poll, at most limit_ms) for the next record on c and returns
 * pc_chan_recv's answer: 1, or LEV_EPEER with *why. Fails the test when
 * nothing comes in time. */
static inline int pc_test_recv(pc_chan *c, pc_hdr *h, uint8_t **payload, const char **why,
                               int limit_ms)
{
    for (;;) {
        int r = pc_chan_recv(c, h, payload, 0, why);
        if (r != 0)
            return r;
        struct pollfd p = {.fd = pc_chan_fd(c), .events = POLLIN};
        int n = poll(&p, 1, limit_ms);
        if (n == 0)
            fail_msg("no record within %d ms", limit_ms);
        assert_true(n > 0 || errno == EINTR);
    }
}

/* Reads a whole file into a malloc'd buffer; fails the test if it cannot. */
static inline uint8_t *pc_test_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n >= 0);
    rewind(f);
    uint8_t *b = malloc(n ? (size_t)n : 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

#endif
