/* test_delegator.c - the virtual thread delegator (delegator.c) and the
 * address resolver (resolver.c): placement proportional to measured
 * capacity, load from other VCs, a free core before a shared one, the
 * preference for a worker that holds a VT's image on a near-tie only (the
 * VTs of a lost worker spread rather than stack on their holder), the
 * reason named with each decision, and rebalancing (off a shared core,
 * onto a newly active worker's core 1.5x as fast, settling); VT ids to hosts and epochs
 * through growth and removals. */
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

/* A holder of the image is preferred on a near-tie only: not when it
 * would share a core while another candidate has one free. */
static void t_holder(void **state)
{
    (void)state;
    pc_place_cand c[2] = {{.cores = 1, .rate = 1000, .holds_image = true},
                          {.cores = 1, .rate = 1000}};
    assert_int_equal(pc_delegate(c, 2), 0); /* both idle: a tie */
    c[1].rate = 1050;
    assert_int_equal(pc_delegate(c, 2), 0); /* within 10 % */
    c[1].rate = 1200;
    assert_int_equal(pc_delegate(c, 2), 1); /* clearly faster */
    c[1].rate = 1000;
    c[0].assigned = 1;
    assert_int_equal(pc_delegate(c, 2), 1); /* the holder's core is taken */
    c[0].assigned = 2;
    c[1].assigned = 1;
    assert_int_equal(pc_delegate(c, 2), 1); /* 3 to a core vs 2 */
    c[0].assigned = 1;
    assert_int_equal(pc_delegate(c, 2), 0); /* both share a core alike */
}

/* The VTs of a lost worker, whose images one peer holds, spread over the
 * idle workers instead of stacking on the holder (one core each). */
static void t_resume_spread(void **state)
{
    (void)state;
    pc_place_cand c[4] = {{.cores = 1, .rate = 1000, .holds_image = true},
                          {.cores = 1, .rate = 1010},
                          {.cores = 1, .rate = 990},
                          {.cores = 1, .rate = 1000}};
    int count[4];
    s_place(c, 4, 4, count);
    for (int i = 0; i < 4; i++)
        assert_int_equal(count[i], 1);
    /* a fifth shares a core: the holder is again as good as any */
    assert_int_equal(pc_delegate(c, 4), 0);
}

/* Over any sequence of placements on like workers (equal rates, 1 to 4
 * cores, some holding the image), no worker runs more VTs than cores
 * while another has a core free; VTs beyond the cores go by capacity. */
static void t_no_stacking(void **state)
{
    (void)state;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int round = 0; round < 200; round++) {
        pc_place_cand c[6];
        int n = 2 + (int)(round % 5);
        for (int i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            c[i] = (pc_place_cand){.cores = 1 + (uint32_t)(x % 4),
                                   .rate = 1000,
                                   .load = (uint32_t)((x >> 8) % 3),
                                   .holds_image = ((x >> 16) & 3) == 0};
        }
        for (int k = 0; k < 24; k++) {
            int pick = pc_delegate(c, n);
            assert_true(pick >= 0 && pick < n);
            uint32_t busy = c[pick].load > c[pick].assigned ? c[pick].load : c[pick].assigned;
            if (busy >= c[pick].cores)
                for (int i = 0; i < n; i++) {
                    uint32_t b = c[i].load > c[i].assigned ? c[i].load : c[i].assigned;
                    if (b < c[i].cores)
                        fail_msg("round %d: a VT shares a core of %d while %d has one free", round,
                                 pick, i);
                }
            c[pick].assigned++; /* as the deployer counts its placements */
        }
    }
}

/* Like peers measure rates a few per cent apart: VTs still spread one
 * per idle peer before any peer gets a second, whichever measured fastest;
 * a free core still beats a shared one however fast the shared one's
 * machine; and machines twice as fast still come first. */
static void t_like_rates(void **state)
{
    (void)state;
    enum { N = 24 };
    pc_place_cand c[N];
    for (int i = 0; i < N; i++)
        c[i] = (pc_place_cand){.cores = 2, .rate = 366000 + (uint32_t)(i * 15000 % 16000)};
    for (int k = 0; k < N; k++) {
        int pick = pc_delegate(c, N);
        assert_true(pick >= 0);
        if (c[pick].assigned)
            fail_msg("VT %d went to peer %d, which runs one already, while another is idle", k,
                     pick);
        c[pick].assigned++;
    }
    pc_place_cand d[2] = {{.cores = 1, .rate = 1000}, {.cores = 32, .rate = 1090, .load = 32}};
    assert_int_equal(pc_delegate(d, 2), 0);
    pc_place_cand e[2] = {{.cores = 2, .rate = 1000}, {.cores = 2, .rate = 2000, .load = 1}};
    assert_int_equal(pc_delegate(e, 2), 1);
}

/* A holder with many cores all busy shares one rather than leave the VT
 * a free core elsewhere, however near its finish time. */
static void t_holder_never_shares(void **state)
{
    (void)state;
    pc_place_cand c[2] = {{.cores = 1, .rate = 1000},
                          {.cores = 16, .rate = 1000, .assigned = 16, .holds_image = true}};
    pc_place_why why;
    assert_int_equal(pc_delegate_why(c, 2, &why), 0);
    assert_int_equal(why, PC_PLACE_FREE_CORE);
    c[1].assigned = 15; /* a core free on the holder too: it wins the tie */
    assert_int_equal(pc_delegate_why(c, 2, &why), 1);
    assert_int_equal(why, PC_PLACE_HOLDER);
}

/* Each decision names the rule that made it. */
static void t_why(void **state)
{
    (void)state;
    pc_place_why why = PC_PLACE_SPREAD;
    assert_int_equal(pc_delegate_why(NULL, 0, &why), -1);
    assert_int_equal(why, PC_PLACE_NONE);
    pc_place_cand one[2] = {{.cores = 1, .rate = 5}, {.cores = 0, .rate = 9}};
    assert_int_equal(pc_delegate_why(one, 2, &why), 0);
    assert_int_equal(why, PC_PLACE_ONLY);
    pc_place_cand c[2] = {{.cores = 1, .rate = 1000}, {.cores = 1, .rate = 3000}};
    assert_int_equal(pc_delegate_why(c, 2, &why), 1);
    assert_int_equal(why, PC_PLACE_SOONEST);
    pc_place_cand d[2] = {{.cores = 2, .rate = 1000, .assigned = 1}, {.cores = 2, .rate = 1040}};
    assert_int_equal(pc_delegate_why(d, 2, &why), 1);
    assert_int_equal(why, PC_PLACE_SPREAD);
    pc_place_cand e[2] = {{.cores = 1, .rate = 9000, .assigned = 1}, {.cores = 1, .rate = 1000}};
    assert_int_equal(pc_delegate_why(e, 2, &why), 1);
    assert_int_equal(why, PC_PLACE_FREE_CORE);
    for (int w = PC_PLACE_NONE; w <= PC_PLACE_FASTER; w++)
        assert_true(strlen(pc_place_why_text((pc_place_why)w)) > 0);
    assert_string_equal(pc_place_why_text(PC_PLACE_FREE_CORE), "a free core");
}

/* Rebalancing: a VT sharing a core moves to a free one; a VT alone on a
 * slow core moves to a free core at least 1.5x as fast, not to one only
 * a little faster; and after a move nothing moves back. */
static void t_rebalance(void **state)
{
    (void)state;
    pc_move m;
    pc_place_cand c[3] = {{.cores = 1, .rate = 1000, .assigned = 2},
                          {.cores = 1, .rate = 1000, .assigned = 1},
                          {.cores = 1, .rate = 500}};
    assert_true(pc_rebalance(c, 3, &m));
    assert_int_equal(m.from, 0);
    assert_int_equal(m.to, 2);
    assert_int_equal(m.why, PC_PLACE_UNSHARE);
    c[0].assigned--, c[2].assigned++;
    assert_false(pc_rebalance(c, 3, &m)); /* a slower core is no gain */
    /* a spare twice as fast becomes active */
    pc_place_cand f[3] = {{.cores = 1, .rate = 450, .assigned = 1},
                          {.cores = 1, .rate = 150, .assigned = 1},
                          {.cores = 1, .rate = 300, .fresh = true}};
    assert_true(pc_rebalance(f, 3, &m));
    assert_int_equal(m.from, 1); /* the slowest moves */
    assert_int_equal(m.to, 2);
    assert_int_equal(m.why, PC_PLACE_FASTER);
    f[1].assigned--, f[2].assigned++;
    assert_false(pc_rebalance(f, 3, &m)); /* 450 over 300 is under 1.5x */
    /* only a little faster: stays */
    pc_place_cand g[2] = {{.cores = 1, .rate = 1000, .assigned = 1},
                          {.cores = 1, .rate = 1400, .fresh = true}};
    assert_false(pc_rebalance(g, 2, &m));
    /* a core freed by a VT that ended (not fresh) draws no move: the VTs
     * left near the end of a job are finishing */
    pc_place_cand e[2] = {{.cores = 1, .rate = 250, .assigned = 1}, {.cores = 1, .rate = 450}};
    assert_false(pc_rebalance(e, 2, &m));
    e[1].fresh = true;
    assert_true(pc_rebalance(e, 2, &m));
    /* a free core busy with another VC's VTs is not free */
    pc_place_cand h[2] = {{.cores = 1, .rate = 100, .assigned = 1},
                          {.cores = 1, .rate = 1000, .load = 1, .fresh = true}};
    assert_false(pc_rebalance(h, 2, &m));
    assert_false(pc_rebalance(h, 0, &m));
    /* over random meshes, repeated moves end, and never onto a shared core */
    uint64_t x = 0x2545f4914f6cdd1dull;
    for (int round = 0; round < 300; round++) {
        pc_place_cand r[6];
        int n = 2 + (int)(round % 5);
        for (int i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            r[i] = (pc_place_cand){.cores = 1 + (uint32_t)(x % 3),
                                   .rate = 100 + (uint32_t)((x >> 8) % 1000),
                                   .assigned = (uint32_t)((x >> 20) % 4),
                                   .fresh = (x >> 30) & 1};
        }
        int moves = 0;
        while (pc_rebalance(r, n, &m)) {
            assert_true(m.from != m.to && r[m.from].assigned > 0);
            assert_true(r[m.to].assigned < r[m.to].cores);
            r[m.from].assigned--, r[m.to].assigned++;
            if (++moves > 24)
                fail_msg("round %d: rebalancing does not settle", round);
        }
    }
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
        cmocka_unit_test(t_resume_spread),
        cmocka_unit_test(t_no_stacking),
        cmocka_unit_test(t_like_rates),
        cmocka_unit_test(t_holder_never_shares),
        cmocka_unit_test(t_why),
        cmocka_unit_test(t_rebalance),
        cmocka_unit_test(t_resolver),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
