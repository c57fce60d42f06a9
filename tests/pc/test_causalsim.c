/* test_causalsim.c - direct messages between executors with causal
 * logging, proven in the deterministic simulation (causalsim.h): the peer
 * controller's engine (peercontroller/causal.c) in every worker, a model
 * deployer, faults alone and in combination, each scenario over a fixed
 * list of seeds. A
 * failure prints its seed and the command that replays it with a trace of
 * every event:
 *
 *   CAUSALSIM_SEED=<seed> test_causalsim t_<scenario>
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "causalsim.h"

static uint64_t s_only_seed; /* CAUSALSIM_SEED: run that seed alone, traced */
static bool s_have_seed;

/* Runs `seeds` seeds of a scenario from `first` and fails on the first
 * that breaks an invariant; returns the totals over the seeds. */
static cs_report s_seeds(const char *name, cs_opts o, uint64_t first, int seeds)
{
    cs_report r, sum = {0};
    if (s_have_seed) {
        o.seed = s_only_seed;
        o.trace = 1;
        bool ok = cs_run(&o, &r);
        fprintf(stderr, "%s seed %llu: %s %s (%llu ms simulated)\n", name,
                (unsigned long long)o.seed, ok ? "ok" : "VIOLATION", r.why,
                (unsigned long long)r.sim_ms);
        assert_true(ok);
        return r;
    }
    for (int i = 0; i < seeds; i++) {
        o.seed = first + (uint64_t)i;
        if (!cs_run(&o, &r)) {
            fprintf(stderr,
                    "%s: seed %llu: %s\n  replay: CAUSALSIM_SEED=%llu test_causalsim t_%s\n", name,
                    (unsigned long long)o.seed, r.why, (unsigned long long)o.seed, name);
            fail();
        }
        sum.sim_ms += r.sim_ms;
        sum.direct += r.direct;
        sum.dets += r.dets;
        sum.piggyback += r.piggyback;
        sum.barriers += r.barriers;
        sum.resumes += r.resumes;
        sum.replayed += r.replayed;
        sum.fenced += r.fenced;
        sum.images += r.images;
        if (r.max_log > sum.max_log)
            sum.max_log = r.max_log;
        if (r.max_held > sum.max_held)
            sum.max_held = r.max_held;
    }
    fprintf(
        stderr,
        "%s: %d seeds, %.1f simulated s, %llu direct messages, %.2f determinants carried "
        "per message, %llu barriers, %llu VTs resumed, %llu inputs replayed at fixed "
        "positions, %llu messages fenced, largest sender log %llu, most determinants held %llu\n",
        name, seeds, (double)sum.sim_ms / 1000.0, (unsigned long long)sum.direct,
        sum.direct ? (double)sum.piggyback / (double)sum.direct : 0.0,
        (unsigned long long)sum.barriers, (unsigned long long)sum.resumes,
        (unsigned long long)sum.replayed, (unsigned long long)sum.fenced,
        (unsigned long long)sum.max_log, (unsigned long long)sum.max_held);
    return sum;
}

static cs_opts s_base(unsigned kinds, int faults)
{
    return (cs_opts){.workers = 4,
                     .vts = 6,
                     .tokens = 3,
                     .hops = 40,
                     .ckpt = 5,
                     .kinds = kinds,
                     .faults = faults};
}

/* No fault: every token is reported once, no recovery runs, and the
 * deployer never sees a message's content, only its determinant. */
static void t_fault_free(void **state)
{
    (void)state;
    cs_report r = s_seeds("fault_free", s_base(0, 0), 1, 200);
    assert_true(r.direct > 0);
    assert_int_equal(r.barriers, 0);
    assert_int_equal(r.resumes, 0);
    /* at most one determinant per message consumed (the tokens' and the
     * STOPs); fewer, as those an image covers are not needed */
    cs_opts o = s_base(0, 0);
    uint64_t consumed = 200 * (uint64_t)(o.vts * o.tokens * (o.hops + 1) + o.vts);
    assert_true(r.dets <= consumed && r.dets > consumed / 2);
    /* the watermarks keep what a worker holds bounded: a run consumes
     * 756 messages, and a worker never held more than 200 determinants */
    assert_true(r.max_held > 0 && r.max_held < 200);
}

/* One worker crashes for good, or comes back empty. */
static void t_crash(void **state)
{
    (void)state;
    cs_report r = s_seeds("crash", s_base(CS_F_CRASH | CS_F_RESTART, 1), 1000, 300);
    assert_true(r.resumes > 0);
    assert_true(r.replayed > 0);
}

/* A worker stops: briefly, or long enough to be taken for dead, so that
 * its VTs run twice and the old incarnations must be fenced. */
static void t_stall(void **state)
{
    (void)state;
    cs_report r = s_seeds("stall", s_base(CS_F_PAUSE | CS_F_STALL, 1), 2000, 300);
    assert_true(r.fenced > 0);
}

/* A stall taken for a crash, then a crash of the same worker or another. */
static void t_stall_crash(void **state)
{
    (void)state;
    s_seeds("stall_crash", s_base(CS_F_STALL_CRASH, 1), 3000, 300);
}

/* Two workers die at nearly the same time: a message's sender and its
 * receiver can be lost together. */
static void t_two_crashes(void **state)
{
    (void)state;
    s_seeds("two_crashes", s_base(CS_F_TWO, 1), 4000, 300);
}

/* A second worker dies while the first one's VTs are recovered. */
static void t_during_recovery(void **state)
{
    (void)state;
    s_seeds("during_recovery", s_base(CS_F_DURING, 1), 5000, 300);
}

/* A worker's link to the deployer slows down, then another worker dies:
 * the determinants the slow one holds reach the deployer late, and the
 * barrier must wait for them. */
static void t_slow_link(void **state)
{
    (void)state;
    s_seeds("slow_link", s_base(CS_F_SLOW, 1), 5500, 200);
    /* without images, whose determinants reach the deployer another way */
    cs_opts o = s_base(CS_F_SLOW, 1);
    o.ckpt = 1000;
    s_seeds("slow_link_no_images", o, 5700, 200);
}

/* Everything together, more often, on more workers and VTs. */
static void t_mixed(void **state)
{
    (void)state;
    cs_opts o = s_base(CS_F_CRASH | CS_F_RESTART | CS_F_STALL | CS_F_PAUSE | CS_F_STALL_CRASH |
                           CS_F_TWO | CS_F_DURING | CS_F_SLOW,
                       4);
    o.workers = 6;
    o.vts = 8;
    o.ckpt = 3;
    cs_report r = s_seeds("mixed", o, 6000, 300);
    assert_true(r.max_held < 200); /* bounded through recoveries too */
}

/* Each part of the protocol left out in turn: some seed must break an
 * invariant, or the invariants would not see what that part prevents. */
static void t_parts_needed(void **state)
{
    (void)state;
    /* Without images, the determinants a slow link holds up reach the
     * deployer by no other way than before the barrier's answer. */
    static const struct {
        int part, ckpt;
        const char *name;
    } parts[] = {{CS_BREAK_PIGGYBACK, 5, "determinants on messages"},
                 {CS_BREAK_BARRIER, 1000, "the recovery barrier"},
                 {CS_BREAK_FENCE, 5, "fencing"},
                 {CS_BREAK_SENDER_LOG, 5, "the sender log in images"},
                 {CS_BREAK_IMAGE_DETS, 5, "the determinants in images"}};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        cs_opts o = s_base(CS_F_CRASH | CS_F_RESTART | CS_F_STALL | CS_F_STALL_CRASH | CS_F_TWO |
                               CS_F_DURING | CS_F_SLOW,
                           3);
        o.broken = parts[i].part;
        o.ckpt = parts[i].ckpt;
        int broke = 0, seed = 0;
        cs_report r;
        for (; seed < 400 && !broke; seed++) {
            o.seed = 7000 + (uint64_t)seed;
            broke += !cs_run(&o, &r);
        }
        fprintf(stderr, "without %s: seed %llu breaks: %s\n", parts[i].name,
                (unsigned long long)o.seed, broke ? r.why : "(none in 400 seeds)");
        assert_true(broke);
    }
}

int main(int argc, char **argv)
{
    const char *seed = getenv("CAUSALSIM_SEED");
    if (seed && *seed) {
        s_only_seed = strtoull(seed, NULL, 0);
        s_have_seed = true;
    }
    const struct CMUnitTest all[] = {
        cmocka_unit_test(t_fault_free),   cmocka_unit_test(t_crash),
        cmocka_unit_test(t_stall),        cmocka_unit_test(t_stall_crash),
        cmocka_unit_test(t_two_crashes),  cmocka_unit_test(t_during_recovery),
        cmocka_unit_test(t_slow_link),    cmocka_unit_test(t_mixed),
        cmocka_unit_test(t_parts_needed),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(all, NULL, NULL);
}
