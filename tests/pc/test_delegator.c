/* test_delegator.c - the virtual thread delegator (delegator.c) and the
 * address resolver (resolver.c): placement proportional to measured
 * capacity, load from other VCs, the preference for a worker that holds a
 * VT's image; VT ids to hosts and epochs through growth and removals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "delegator.h"
#include "lev_errors.h"
#include "resolver.h"

/* Places n VTs one after the other and counts them per candidate. */
static void s_place(pc_place_cand *c, int nc, int n, int *count)
{
    memset(count, 0, (size_t)nc * sizeof *count);
    for (int i = 0; i < n; i++) {
        int k = pc_delegate(c, nc);
        assert_true(k >= 0 && k < nc);
        c[k].assigned++;
        count[k]++;
    }
}

/* A peer twice as fast (or with twice the cores) gets twice the VTs. */
static void t_proportional(void **state)
{
    (void)state;
    pc_place_cand c[3] = {
        {.cores = 1, .rate = 2000}, {.cores = 1, .rate = 1000}, {.cores = 2, .rate = 1000}};
    int count[3];
    s_place(c, 3, 100, count);
    assert_int_equal(count[0], 40);
    assert_int_equal(count[1], 20);
    assert_int_equal(count[2], 40);
}

/* VTs of other VCs (the gossiped load) count; a peer offering no cores
 * gets nothing; no candidate: -1. */
static void t_load_and_none(void **state)
{
    (void)state;
    pc_place_cand c[3] = {{.cores = 1, .rate = 1000, .load = 6},
                          {.cores = 1, .rate = 1000},
                          {.cores = 0, .rate = 9999}};
    int count[3];
    s_place(c, 3, 8, count);
    /* the idle one first, until both would finish together */
    assert_int_equal(count[0], 2);
    assert_int_equal(count[1], 6);
    assert_int_equal(count[2], 0);
    assert_int_equal(pc_delegate(c, 0), -1);
    pc_place_cand idle = {.cores = 0};
    assert_int_equal(pc_delegate(&idle, 1), -1);
}

/* A holder of the image is preferred unless it would finish much later. */
static void t_holder(void **state)
{
    (void)state;
    pc_place_cand c[2] = {{.cores = 1, .rate = 1000, .assigned = 2},
                          {.cores = 1, .rate = 1000, .assigned = 1, .holds_image = false}};
    c[0].holds_image = true;
    assert_int_equal(pc_delegate(c, 2), 0); /* 3 vs 2: within twice */
    c[0].assigned = 9;
    assert_int_equal(pc_delegate(c, 2), 1); /* 10 vs 2: too busy */
}

static void t_resolver(void **state)
{
    (void)state;
    pc_resolver *r = NULL;
    assert_int_equal(pc_resolver_new(&r), 0);
    char ep[64];
    for (uint64_t vt = 2; vt < 2000; vt++) {
        snprintf(ep, sizeof ep, "tcp://10.0.0.%u:7000", (unsigned)(vt % 7));
        assert_int_equal(pc_resolver_set(r, vt, ep, (uint32_t)(vt % 3 + 1)), 0);
    }
    for (uint64_t vt = 2; vt < 2000; vt += 2)
        pc_resolver_forget(r, vt);
    for (uint64_t vt = 2; vt < 2000; vt++) {
        uint32_t epoch = 0;
        const char *at = pc_resolver_get(r, vt, &epoch);
        if (vt % 2 == 0) {
            assert_null(at);
            continue;
        }
        snprintf(ep, sizeof ep, "tcp://10.0.0.%u:7000", (unsigned)(vt % 7));
        assert_non_null(at);
        assert_string_equal(at, ep);
        assert_int_equal(epoch, vt % 3 + 1);
    }
    assert_int_equal(pc_resolver_set(r, 0, "tcp://x:1", 1), LEV_EINVAL);
    assert_null(pc_resolver_get(r, 0, NULL));
    pc_resolver_set(r, 3, "tcp://10.9.9.9:1", 7); /* moved: a new epoch elsewhere */
    uint32_t e = 0;
    assert_string_equal(pc_resolver_get(r, 3, &e), "tcp://10.9.9.9:1");
    assert_int_equal(e, 7);
    pc_resolver_destroy(&r);
    pc_resolver_destroy(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_proportional),
        cmocka_unit_test(t_load_and_none),
        cmocka_unit_test(t_holder),
        cmocka_unit_test(t_resolver),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
