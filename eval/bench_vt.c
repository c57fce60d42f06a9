/* bench_vt.c - what an idle VT costs in memory, and what a VT switch at a
 * safe point costs in time.
 *
 *   idle    N VTs (100,000 by default), each created with a small entry
 *           frame and suspended at a blocking safe point: growth of the GC
 *           heap and of the resident set, divided by N, and what one VT is
 *           made of.
 *   switch  one OS thread round-robins over K VTs, each yielding at a safe
 *           point in a loop (rt_vt_step, clearing want between steps):
 *           the floor of a switch, one unwind and one rewind of D frames.
 *   exec    the same VTs through the executor (executor.h) with one worker.
 *
 * Usage: bench_vt [idle|switch|exec|all] [REPS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GC_THREADS
#include <gc/gc.h>

#include "arena.h"
#include "bench.h"
#include "executor.h"
#include "rt.h"
#include "vt.h"

/* ===================================================================
 * The task module
 * =================================================================== */

enum { FN_IDLE, FN_SPIN, FN_NEST, NFN };
enum { T_IDLEFR = LEV_T_USER, T_SPINFR, T_NESTFR, NTYPES_END };

/* An idle task: one long of its own besides the task prefix. */
struct idle_frame {
    lev_task_frame t;
    long state;
};

/* A task that yields `*arg` times, at a depth of `depth` frames. */
struct spin_frame {
    lev_task_frame t;
    long n;     /* yields to do */
    long depth; /* frames on the stack while it yields (>= 1) */
    long i;
    long r;
};

struct nest_frame {
    lev_frame h;
    long n;
    long depth;
    long i;
    long r;
};

static int s_idle_run(lev_ctx *vt, void *frame);
static int s_spin_run(lev_ctx *vt, void *frame);

static const lev_field_desc s_idle_fields[] = {
    {"arg", offsetof(struct idle_frame, t.arg), LEV_K_PTR, 1, 0},
    {"len", offsetof(struct idle_frame, t.len), LEV_K_B8, 1, 0},
    {"state", offsetof(struct idle_frame, state), LEV_K_B8, 1, 0}};
static const lev_field_desc s_spin_fields[] = {
    {"arg", offsetof(struct spin_frame, t.arg), LEV_K_PTR, 1, 0},
    {"len", offsetof(struct spin_frame, t.len), LEV_K_B8, 1, 0},
    {"n", offsetof(struct spin_frame, n), LEV_K_B8, 1, 0},
    {"depth", offsetof(struct spin_frame, depth), LEV_K_B8, 1, 0},
    {"i", offsetof(struct spin_frame, i), LEV_K_B8, 1, 0},
    {"r", offsetof(struct spin_frame, r), LEV_K_B8, 1, 0}};
static const lev_field_desc s_nest_fields[] = {
    {"n", offsetof(struct nest_frame, n), LEV_K_B8, 1, 0},
    {"depth", offsetof(struct nest_frame, depth), LEV_K_B8, 1, 0},
    {"i", offsetof(struct nest_frame, i), LEV_K_B8, 1, 0},
    {"r", offsetof(struct nest_frame, r), LEV_K_B8, 1, 0}};
static const lev_type_desc s_types[] = {
    {"frame idle", sizeof(struct idle_frame), 3, s_idle_fields, _Alignof(struct idle_frame)},
    {"frame spin", sizeof(struct spin_frame), 6, s_spin_fields, _Alignof(struct spin_frame)},
    {"frame nest", sizeof(struct nest_frame), 4, s_nest_fields, _Alignof(struct nest_frame)}};
static const lev_fn_desc s_fns[] = {{"idle", NULL, s_idle_run, T_IDLEFR, LEV_FN_TASK},
                                    {"spin", NULL, s_spin_run, T_SPINFR, LEV_FN_TASK},
                                    {"nest", NULL, NULL, T_NESTFR, 0}};
static const lev_module_desc s_mdesc = {
    LEV_ABI_VERSION, "bench_vt", NTYPES_END - LEV_T_USER, s_types, NFN, s_fns, 0, NULL};
static lev_module *M;

/* Waits at a blocking safe point until woken, then ends. */
static int s_idle_run(lev_ctx *vt, void *frame)
{
    struct idle_frame *fr = frame;
    switch (fr->t.h.pc) {
    case 0:
        break;
    case 1:
        goto R1;
    default:
        lev_vt_fail(vt, LEV_EFAILED, "bad pc");
        return LEV_RUN_EXIT;
    }
    fr->state = 1;
    if (lev_safepoint(vt, LEV_SP_BLOCK)) {
        fr->t.h.pc = 1;
        return LEV_RUN_UNWIND;
    }
R1:
    fr->state = 2;
    return LEV_RUN_DONE;
}

/* The innermost level: yields n times; the others call the next level.
 * Written as levpp writes a body: locals in C, spilled on unwind. */
static int s_nest_run(lev_ctx *vt, struct nest_frame *fr, long *ret)
{
    long i, n;
    int r;
    struct nest_frame *cf;
    switch (fr->h.pc) {
    case 0:
        n = fr->n;
        break;
    case 1:
        goto R1;
    case 2:
        n = fr->n;
        i = fr->i;
        goto R2;
    default:
        lev_vt_fail(vt, LEV_EFAILED, "bad pc");
        return LEV_RUN_EXIT;
    }
    if (fr->depth > 1) {
        cf = lev_frame_push(vt, sizeof *cf, FN_NEST);
        cf->n = n;
        cf->depth = fr->depth - 1;
        if (0) {
        R1:
            cf = lev_frame_callee(vt, fr, sizeof *fr);
        }
        if ((r = s_nest_run(vt, cf, &fr->r))) {
            if (r == LEV_RUN_UNWIND)
                fr->h.pc = 1;
            return r;
        }
        lev_frame_pop(vt, cf);
        *ret = fr->r;
        return LEV_RUN_DONE;
    }
    for (i = 0; i < n; i++) {
        if (lev_safepoint(vt, LEV_SP_YIELD)) {
            fr->h.pc = 2;
            fr->i = i;
            return LEV_RUN_UNWIND;
        }
    R2:;
    }
    *ret = i;
    return LEV_RUN_DONE;
}

static int s_spin_run(lev_ctx *vt, void *frame)
{
    struct spin_frame *fr = frame;
    struct nest_frame *cf;
    long i, n;
    int r;
    switch (fr->t.h.pc) {
    case 0:
        fr->n = *(const long *)fr->t.arg;
        n = fr->n;
        break;
    case 1:
        goto R1;
    case 2:
        n = fr->n;
        i = fr->i;
        goto R2;
    default:
        lev_vt_fail(vt, LEV_EFAILED, "bad pc");
        return LEV_RUN_EXIT;
    }
    if (fr->depth > 1) {
        cf = lev_frame_push(vt, sizeof *cf, FN_NEST);
        cf->n = n;
        cf->depth = fr->depth - 1;
        if (0) {
        R1:
            cf = lev_frame_callee(vt, fr, sizeof *fr);
        }
        if ((r = s_nest_run(vt, cf, &fr->r))) {
            if (r == LEV_RUN_UNWIND)
                fr->t.h.pc = 1;
            return r;
        }
        lev_frame_pop(vt, cf);
        return LEV_RUN_DONE;
    }
    for (i = 0; i < n; i++) {
        if (lev_safepoint(vt, LEV_SP_YIELD)) {
            fr->t.h.pc = 2;
            fr->i = i;
            return LEV_RUN_UNWIND;
        }
    R2:;
    }
    fr->r = i;
    return LEV_RUN_DONE;
}

/* ===================================================================
 * Idle VTs: memory
 * =================================================================== */

static void s_bench_idle(long nvt)
{
    rt_vt **vts = malloc((size_t)nvt * sizeof *vts);
    if (!vts) {
        fprintf(stderr, "bench_vt: out of memory\n");
        exit(1);
    }
    memset(vts, 0, (size_t)nvt * sizeof *vts); /* resident before the baseline */
    GC_gcollect();
    size_t heap0 = GC_get_heap_size(), use0 = GC_get_memory_use(), rss0 = bench_rss();
    double t0 = bench_now();
    for (long i = 0; i < nvt; i++) {
        BENCH_CHECK(rt_vt_new(M, FN_IDLE, &i, sizeof i, &vts[i]), "rt_vt_new");
        if (rt_vt_step(vts[i]) != LEV_RUN_UNWIND || !(vts[i]->want & RT_WANT_BLOCK)) {
            fprintf(stderr, "bench_vt: VT %ld did not block\n", i);
            exit(1);
        }
    }
    double t1 = bench_now();
    GC_gcollect();
    size_t heap1 = GC_get_heap_size(), use1 = GC_get_memory_use(), rss1 = bench_rss();

    rt_vt *v = vts[0];
    struct idle_frame *fr = rt_vt_bottom(v);
    size_t vt_sz = GC_size(v), chunk_sz = GC_size(v->arena.first);
    size_t arg_sz = GC_size(GC_base((void *)fr->t.arg));
    size_t frame_sz = LEV_FRAME_SIZE(sizeof *fr);
    double n = (double)nvt;
    printf("vt.idle: %ld VTs created and blocked in %.1f ms (%.0f ns each)\n", nvt, (t1 - t0) * 1e3,
           (t1 - t0) * 1e9 / n);
    printf("vt.idle: per VT: GC memory in use %.0f B, GC heap %.0f B, RSS %.0f B\n",
           (double)(use1 - use0) / n, (double)((long)heap1 - (long)heap0) / n,
           (double)((long)rss1 - (long)rss0) / n);
    printf("vt.idle: one VT is: rt_vt %zu B (sizeof %zu) + frame chunk %zu B (header %zu, "
           "capacity %zu, frame %zu used) + argument copy %zu B (GC_size of each)\n",
           vt_sz, sizeof(rt_vt), chunk_sz, sizeof(rt_chunk), v->arena.first->cap, frame_sz, arg_sz);
    size_t own = frame_sz;
    double beyond = (double)(use1 - use0) / n - (double)own;
    printf("TARGET vt.idle memory beyond the VT's frames <= 1024 B: %.0f B (GC use) / %.0f B "
           "(RSS): %s\n",
           beyond, (double)((long)rss1 - (long)rss0) / n - (double)own,
           beyond <= 1024 ? "met" : "MISSED");
    fflush(stdout);
    for (long i = 0; i < nvt; i++)
        rt_vt_destroy(&vts[i]);
    free(vts);
}

/* ===================================================================
 * Switches
 * =================================================================== */

static rt_vt **s_spinners(long k, long depth, long yields)
{
    rt_vt **vts = malloc((size_t)k * sizeof *vts);
    for (long i = 0; i < k; i++) {
        BENCH_CHECK(rt_vt_new(M, FN_SPIN, &yields, sizeof yields, &vts[i]), "rt_vt_new");
        struct spin_frame *fr = rt_vt_bottom(vts[i]);
        fr->depth = depth;
    }
    return vts;
}

static void s_free_spinners(rt_vt **vts, long k)
{
    for (long i = 0; i < k; i++)
        rt_vt_destroy(&vts[i]);
    free(vts);
}

/* ns per switch: one thread steps K VTs round-robin, `total` steps. */
static double s_raw_once(long k, long depth, long total)
{
    long rounds = total / k;
    rt_vt **vts = s_spinners(k, depth, rounds + 1);
    /* First step of each VT: start it and push its frames. */
    for (long i = 0; i < k; i++) {
        rt_vt_step(vts[i]);
        vts[i]->want = 0;
    }
    double t0 = bench_now();
    for (long r = 0; r < rounds; r++)
        for (long i = 0; i < k; i++) {
            rt_vt *v = vts[i];
            if (rt_vt_step(v) != LEV_RUN_UNWIND) {
                fprintf(stderr, "bench_vt: spinner ended early\n");
                exit(1);
            }
            v->want = 0;
        }
    double t = bench_now() - t0;
    s_free_spinners(vts, k);
    return t * 1e9 / (double)(rounds * k);
}

static void s_bench_switch(int reps)
{
    static const long ks[] = {1, 100, 10000};
    static const long depths[] = {1, 4};
    const long total = 2000000;
    double *v = calloc((size_t)reps, sizeof *v);
    double worst_best = 0;
    for (size_t d = 0; d < sizeof depths / sizeof *depths; d++)
        for (size_t j = 0; j < sizeof ks / sizeof *ks; j++) {
            for (int r = 0; r < reps; r++)
                v[r] = s_raw_once(ks[j], depths[d], total);
            double best, med;
            bench_stats(v, reps, &best, &med);
            printf("vt.switch raw: K=%-6ld depth %ld: best %6.1f ns  median %6.1f ns per switch\n",
                   ks[j], depths[d], best, med);
            if (depths[d] == 1 && best > worst_best)
                worst_best = best;
            fflush(stdout);
        }
    printf("TARGET vt.switch raw (depth 1, every K) <= 100 ns: worst best-of-%d %.1f ns: %s\n",
           reps, worst_best, worst_best <= 100 ? "met" : "MISSED");
    free(v);
}

/* Through the executor: one worker, no preemption, no checkpoints. */
static double s_exec_once(long k, long depth, long total, uint64_t *switches)
{
    rt_exec *ex;
    rt_exec_opts o = {0};
    o.workers = 1;
    o.slice_ms = -1;
    o.checkpoint_ms = 0;
    BENCH_CHECK(rt_exec_new(&ex, &o), "rt_exec_new");
    long yields = total / k;
    rt_vt **vts = s_spinners(k, depth, yields);
    double t0 = bench_now();
    for (long i = 0; i < k; i++)
        BENCH_CHECK(rt_exec_spawn(ex, vts[i]), "rt_exec_spawn");
    for (long i = 0; i < k; i++)
        BENCH_CHECK(rt_exec_wait(ex, vts[i], -1), "rt_exec_wait");
    double t = bench_now() - t0;
    rt_exec_stats st;
    rt_exec_stats_get(ex, &st);
    rt_exec_destroy(&ex);
    for (long i = 0; i < k; i++)
        if (vts[i]->state != RT_VT_DONE) {
            fprintf(stderr, "bench_vt: VT %ld did not end (state %d)\n", i, vts[i]->state);
            exit(1);
        }
    s_free_spinners(vts, k);
    *switches = st.switches;
    return t * 1e9 / (double)(st.switches ? st.switches : 1);
}

static void s_bench_exec(int reps)
{
    static const long ks[] = {1, 100, 10000};
    const long total = 1000000;
    double *v = calloc((size_t)reps, sizeof *v);
    double worst_best = 0;
    for (size_t j = 0; j < sizeof ks / sizeof *ks; j++) {
        uint64_t sw = 0;
        for (int r = 0; r < reps; r++)
            v[r] = s_exec_once(ks[j], 1, total, &sw);
        double best, med;
        bench_stats(v, reps, &best, &med);
        printf("vt.switch exec (1 worker): K=%-6ld depth 1: best %6.1f ns  median %6.1f ns per "
               "switch (%llu switches per run)\n",
               ks[j], best, med, (unsigned long long)sw);
        if (best > worst_best)
            worst_best = best;
        fflush(stdout);
    }
    printf("TARGET vt.switch exec (depth 1, every K) <= 100 ns: worst best-of-%d %.1f ns: %s\n",
           reps, worst_best, worst_best <= 100 ? "met" : "MISSED");
    free(v);
}

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "all";
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    if (reps < 1)
        reps = 1;
    rt_init();
    BENCH_CHECK(lev_module_register(&s_mdesc, &M), "lev_module_register");
    int all = strcmp(which, "all") == 0;
    if (all || strcmp(which, "idle") == 0)
        s_bench_idle(argc > 3 ? atol(argv[3]) : 100000);
    if (all || strcmp(which, "switch") == 0)
        s_bench_switch(reps);
    if (all || strcmp(which, "exec") == 0)
        s_bench_exec(reps);
    return 0;
}
