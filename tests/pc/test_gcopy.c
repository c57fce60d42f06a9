/* test_gcopy.c - a worker's copies of global values (gcopy.c): a value
 * kept is found by its BLAKE2b-256 and length and by nothing else; the
 * same value kept twice is one copy; past the bound the least recently
 * used copy goes (a lookup counts as a use); an empty value or one over
 * the bound is not kept; a copy handed out outlives the set.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gcopy.h"
#include "modmgr.h"

/* The copy of v[0..n), which must be there with those bytes. */
static void s_has(pc_gcopies *g, const void *v, size_t n, bool want)
{
    uint8_t h[PC_HASH_LEN];
    pc_module_hash(v, n, h);
    pc_buf *b = pc_gcopies_get(g, h, n);
    if (!want) {
        assert_null(b);
        return;
    }
    assert_non_null(b);
    assert_int_equal(pc_buf_len(b), n);
    assert_memory_equal(pc_buf_data(b), v, n);
    pc_buf_drop(&b);
}

static void t_copies(void **state)
{
    (void)state;
    enum { K = 1000 };
    static uint8_t a[K], b[K], c[K];
    memset(a, 'a', K);
    memset(b, 'b', K);
    memset(c, 'c', K);
    pc_gcopies *g = pc_gcopies_new(2 * K); /* room for two */
    assert_non_null(g);
    pc_gcopies_put(g, a, K);
    pc_gcopies_put(g, a, K); /* the same value: one copy */
    assert_int_equal(pc_gcopies_count(g), 1);
    assert_int_equal(pc_gcopies_bytes(g), K);
    s_has(g, a, K, true);
    s_has(g, a, K - 1, false); /* another value */
    uint8_t h[PC_HASH_LEN];
    pc_module_hash(a, K, h);
    assert_null(pc_gcopies_get(g, h, K - 1)); /* its hash, another length */
    pc_gcopies_put(g, b, K);
    s_has(g, a, K, true); /* a used after b: b is the older */
    pc_gcopies_put(g, c, K);
    assert_int_equal(pc_gcopies_count(g), 2);
    s_has(g, b, K, false);
    s_has(g, a, K, true);
    s_has(g, c, K, true);
    pc_gcopies_put(g, a, 0); /* empty: not kept */
    static uint8_t big[3 * K];
    pc_gcopies_put(g, big, sizeof big); /* over the bound: not kept */
    assert_int_equal(pc_gcopies_count(g), 2);
    pc_module_hash(c, K, h);
    pc_buf *kept = pc_gcopies_get(g, h, K);
    pc_gcopies_destroy(&g);
    assert_null(g);
    assert_memory_equal(pc_buf_data(kept), c, K); /* outlives the set */
    pc_buf_drop(&kept);
    assert_null(pc_gcopies_get(NULL, h, K));
    pc_gcopies_put(NULL, a, K);
    pc_gcopies_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(t_copies)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
