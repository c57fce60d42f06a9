/* test_libc.c - the C library calls that levpp rewrites onto travelling
 * state: lev_rand_r/lev_srand_r give exactly the C library's rand() and
 * random() sequence for every seed (unseeded as seed 1, seed 0 as 1,
 * seeds past INT_MAX), a copy of the state continues the sequence (what a
 * capture and restore do), a damaged state starts over instead of going
 * out of bounds, and lev_strtok_r splits like strtok and lets go of the
 * buffer once it is used up.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lev_task.h"

/* The state holds 32-bit integers only, no padding: described by levpp
 * as r[31], f, b, seeded (LEV_K_B4 each). */
_Static_assert(sizeof(lev_rand_state) == 34 * sizeof(int32_t), "lev_rand_state layout");
_Static_assert(offsetof(lev_rand_state, lev_seeded) == 33 * sizeof(int32_t),
               "lev_rand_state layout");

enum { N_UNSEEDED = 1000 };
static int s_unseeded[N_UNSEEDED]; /* rand() before any srand, taken first in main */

/* n outputs of glibc's rand() after srand(seed) against lev_rand_r. */
static void s_same(unsigned seed, int n)
{
    lev_rand_state st;
    memset(&st, 0xa5, sizeof st);
    lev_srand_r(&st, seed);
    srand(seed);
    for (int i = 0; i < n; i++) {
        int want = rand(), got = lev_rand_r(&st);
        if (want != got)
            fail_msg("seed %u, output %d: rand() %d, lev_rand_r %d", seed, i, want, got);
    }
}

static void t_unseeded(void **state)
{
    (void)state;
    lev_rand_state st = {0};
    for (int i = 0; i < N_UNSEEDED; i++)
        assert_int_equal(lev_rand_r(&st), s_unseeded[i]);
    s_same(1, N_UNSEEDED);
    /* seed 0 is seed 1 */
    lev_rand_state z = {0}, one = {0};
    lev_srand_r(&z, 0);
    lev_srand_r(&one, 1);
    for (int i = 0; i < 100; i++)
        assert_int_equal(lev_rand_r(&z), lev_rand_r(&one));
}

static void t_many_seeds(void **state)
{
    (void)state;
    static const unsigned edge[] = {0u,          1u,           2u,          3u,
                                    42u,         127773u,      127774u,     16807u,
                                    2147483646u, 2147483647u,  2147483648u, 2147483649u,
                                    4000000000u, UINT_MAX - 1, UINT_MAX};
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
        s_same(edge[i], 2000);
    /* seeds spread over the whole range, and all small ones */
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 5000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s_same((unsigned)x, 64);
    }
    for (unsigned s = 0; s < 3000; s++)
        s_same(s, 40);
    /* long runs: the taps wrap around r[] many times */
    s_same(1, 200000);
    s_same(20240607u, 200000);
    s_same(3141592653u, 200000);
}

/* random()/srandom() are the same generator, and share the state with
 * rand()/srand(). */
static void t_random(void **state)
{
    (void)state;
    lev_rand_state st = {0};
    lev_srand_r(&st, 777);
    srandom(777);
    for (int i = 0; i < 1000; i++) {
        long want = i % 3 ? random() : rand();
        assert_int_equal((long)lev_rand_r(&st), want);
    }
    srand(99);
    lev_srand_r(&st, 99);
    for (int i = 0; i < 1000; i++)
        assert_int_equal((long)lev_rand_r(&st), random());
}

/* The state is plain data: a byte copy taken mid-sequence (what an image
 * holds) goes on exactly as the original. */
static void t_copy_continues(void **state)
{
    (void)state;
    lev_rand_state a = {0};
    lev_srand_r(&a, 5150);
    srand(5150);
    for (int i = 0; i < 777; i++)
        assert_int_equal(lev_rand_r(&a), rand());
    unsigned char bytes[sizeof a];
    memcpy(bytes, &a, sizeof a);
    lev_rand_state b;
    memcpy(&b, bytes, sizeof b);
    for (int i = 0; i < 5000; i++) {
        int want = rand();
        assert_int_equal(lev_rand_r(&a), want);
        assert_int_equal(lev_rand_r(&b), want);
    }
}

/* Indices out of range (a damaged image) never index out of r[]: the
 * state starts over as seeded with 1. */
static void t_damaged(void **state)
{
    (void)state;
    lev_rand_state one = {0}, bad;
    lev_srand_r(&bad, 8);
    bad.lev_f = 31;
    bad.lev_b = 0xffffffffu;
    for (int i = 0; i < 100; i++)
        assert_int_equal(lev_rand_r(&bad), lev_rand_r(&one));
    lev_srand_r(&bad, 8);
    bad.lev_b = 1000;
    lev_rand_state one2 = {0};
    assert_int_equal(lev_rand_r(&bad), lev_rand_r(&one2));
}

static void t_strtok(void **state)
{
    (void)state;
    char a[] = "  the quick,,brown fox ", b[] = "  the quick,,brown fox ";
    char *save = NULL;
    char *want = strtok(a, " ,"), *got = lev_strtok_r(b, " ,", &save);
    int n = 0;
    while (want) {
        assert_non_null(got);
        assert_string_equal(want, got);
        assert_int_equal(want - a, got - b);
        want = strtok(NULL, " ,");
        got = lev_strtok_r(NULL, " ,", &save);
        n++;
    }
    assert_null(got);
    assert_int_equal(n, 4);
    /* the save pointer points into the caller's buffer, nowhere else */
    char c[] = "x;y";
    save = NULL;
    assert_string_equal(lev_strtok_r(c, ";", &save), "x");
    assert_true(save >= c && save <= c + sizeof c);
    assert_string_equal(lev_strtok_r(NULL, ";", &save), "y");
    /* used up: no pointer left into the buffer, and NULL from now on */
    assert_null(save);
    assert_null(lev_strtok_r(NULL, ";", &save));
    assert_null(lev_strtok_r(NULL, ";", &save));
    char d[] = "a, ";
    save = NULL;
    assert_string_equal(lev_strtok_r(d, ", ", &save), "a");
    assert_ptr_equal(save, d + 2); /* another delim could still make " " a token */
    assert_null(lev_strtok_r(NULL, ", ", &save));
    assert_null(save);
}

int main(void)
{
    for (int i = 0; i < N_UNSEEDED; i++)
        s_unseeded[i] = rand();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_unseeded), cmocka_unit_test(t_many_seeds),
        cmocka_unit_test(t_random),   cmocka_unit_test(t_copy_continues),
        cmocka_unit_test(t_damaged),  cmocka_unit_test(t_strtok),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
