/* test_vec.c - the project's growable array (runtime/vec.h): the first
 * room, growth that keeps the elements, no reallocation while there is
 * room, and LEV_ENOMEM, the array unchanged, when the sizes overflow.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <setjmp.h>

#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lev_errors.h"
#include "vec.h"

typedef struct pair {
    uint64_t a, b;
} pair;

/* From nothing: room for at least 8 elements and 64 bytes. */
static void t_first(void **state)
{
    (void)state;
    pair *v = NULL;
    size_t cap = 0;
    assert_int_equal(RT_VEC_RESERVE(v, cap, 0, 1), 0);
    assert_non_null(v);
    assert_true(cap >= 8);
    free(v);

    uint8_t *b = NULL;
    cap = 0;
    assert_int_equal(RT_VEC_RESERVE(b, cap, 0, 3), 0);
    assert_true(cap >= 64);
    free(b);

    b = NULL;
    cap = 0;
    assert_int_equal(RT_VEC_RESERVE(b, cap, 0, 1000), 0);
    assert_true(cap >= 1000);
    free(b);
}

/* Appending one at a time keeps every element; a reserve with room left
 * does not move the array. */
static void t_grow(void **state)
{
    (void)state;
    pair *v = NULL;
    size_t n = 0, cap = 0;
    for (uint64_t i = 0; i < 10000; i++) {
        assert_int_equal(RT_VEC_RESERVE(v, cap, n, 1), 0);
        assert_true(cap > n);
        v[n++] = (pair){i, ~i};
    }
    for (uint64_t i = 0; i < n; i++) {
        assert_int_equal(v[i].a, i);
        assert_int_equal(v[i].b, ~i);
    }
    const pair *at = v;
    size_t had = cap;
    assert_int_equal(RT_VEC_RESERVE(v, cap, n, cap - n), 0);
    assert_int_equal(RT_VEC_RESERVE(v, cap, n, 0), 0);
    assert_ptr_equal(v, at);
    assert_int_equal(cap, had);
    /* room for many at once: at least that many, and at least double */
    assert_int_equal(RT_VEC_RESERVE(v, cap, n, 3 * cap), 0);
    assert_true(cap >= n + 3 * had);
    assert_int_equal(v[n - 1].a, n - 1);
    free(v);
}

/* Sizes that overflow give LEV_ENOMEM and leave the array as it was. */
static void t_overflow(void **state)
{
    (void)state;
    pair *v = NULL;
    size_t cap = 0;
    assert_int_equal(RT_VEC_RESERVE(v, cap, 0, 4), 0);
    v[0] = (pair){7, 8};
    const pair *at = v;
    size_t had = cap;
    assert_int_equal(RT_VEC_RESERVE(v, cap, 1, SIZE_MAX), LEV_ENOMEM);
    assert_int_equal(RT_VEC_RESERVE(v, cap, SIZE_MAX, 1), LEV_ENOMEM);
    assert_int_equal(RT_VEC_RESERVE(v, cap, 1, SIZE_MAX / sizeof *v), LEV_ENOMEM);
    assert_int_equal(rt_vec_reserve(&v, &cap, 1, 1, 0), 0); /* room already */
    assert_int_equal(rt_vec_reserve(&v, &cap, 1, cap, 0), LEV_ENOMEM);
    assert_ptr_equal(v, at);
    assert_int_equal(cap, had);
    assert_int_equal(v[0].a, 7);
    assert_int_equal(v[0].b, 8);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_first),
        cmocka_unit_test(t_grow),
        cmocka_unit_test(t_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
