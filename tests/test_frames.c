/* test_frames.c - hand-written frames (tests/hw/, written as levpp output
 * would be) run by the runtime: straight through, in a torture loop that
 * captures, wipes and restores the VT at every safe point, and migrated to
 * a new VT restored from an image; results must equal the plain C
 * reference and the straight run.
 *
 * Unwinds are forced in-process as tests/hw/hw_drive.h explains (poll and
 * want set by the driver), so the tests do not depend on LEV_TORTURE; they
 * also pass with it set.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define GC_THREADS
#include <gc/gc.h>

#include "arena.h"
#include "hw/hw_drive.h"
#include "hw/hw_fib.h"
#include "hw/hw_fnptr.h"
#include "hw/hw_hash.h"
#include "hw/hw_list.h"
#include "hw/hw_locals.h"
#include "hw/hw_statics.h"
#include "hw/hw_tree.h"
#include "image.h"
#include "vt.h"

/* ===================================================================
 * Cases: one task of one module, its argument and its reference result
 * =================================================================== */

typedef struct fcase {
    const lev_module *(*module)(void);
    uint32_t fn;
    long n;              /* argument (a long), or parity's n */
    long every;          /* parity only */
    long (*ref)(long n); /* plain C result */
    long (*result)(rt_vt *vt);
    long (*sp)(long n); /* number of safe points taken, or NULL if not computed */
    unsigned gc_every;  /* torture: collect every this many cycles */
} fcase;

#define S_RESULT(name, frame_type)                                                                 \
    static long name(rt_vt *vt) { return (long)((frame_type *)rt_vt_bottom(vt))->result; }

S_RESULT(s_res_fib, struct hw_fib_task__frame)
S_RESULT(s_res_parity, struct hw_parity_task__frame)
S_RESULT(s_res_locals, struct hw_locals_task__frame)
S_RESULT(s_res_list, struct hw_list_task__frame)
S_RESULT(s_res_tree, struct hw_tree_task__frame)
S_RESULT(s_res_hash, struct hw_hash_task__frame)
S_RESULT(s_res_fnptr, struct hw_fnptr_task__frame)
S_RESULT(s_res_statics, struct hw_statics_task__frame)

static long s_ref_parity(long n) { return n % 2 == 0; }

static long s_sp_fib(long n)
{
    long calls = hw_fib_calls(n);
    return calls + (calls - 1) / 2; /* one per call, one more per call that recurses */
}
static long s_sp_locals(long n) { return n * (2 + HW_LOCALS_ARR); }
static long s_sp_n(long n) { return n; }
static long s_sp_list(long n)
{
    long kept = 0;
    for (long i = 0; i < n; i++)
        kept += ((i * 7) % 13 + i) % 3 != 0;
    return 3 * n + kept;
}

static const fcase c_fib = {.module = hw_fib_module,
                            .fn = HW_FIB_FN_FIB_TASK,
                            .n = 12,
                            .ref = hw_fib_ref,
                            .result = s_res_fib,
                            .sp = s_sp_fib,
                            .gc_every = 64};
static const fcase c_parity = {.module = hw_fib_module,
                               .fn = HW_FIB_FN_PARITY_TASK,
                               .n = 301,
                               .every = 1,
                               .ref = s_ref_parity,
                               .result = s_res_parity,
                               .gc_every = 64};
static const fcase c_locals = {.module = hw_locals_module,
                               .fn = HW_LOCALS_FN_TASK,
                               .n = 30,
                               .ref = hw_locals_ref,
                               .result = s_res_locals,
                               .sp = s_sp_locals,
                               .gc_every = 64};
static const fcase c_list = {.module = hw_list_module,
                             .fn = HW_LIST_FN_TASK,
                             .n = 120,
                             .ref = hw_list_ref,
                             .result = s_res_list,
                             .sp = s_sp_list,
                             .gc_every = 64};
static const fcase c_tree = {.module = hw_tree_module,
                             .fn = HW_TREE_FN_TASK,
                             .n = 90,
                             .ref = hw_tree_ref,
                             .result = s_res_tree,
                             .gc_every = 64};
static const fcase c_hash = {.module = hw_hash_module,
                             .fn = HW_HASH_FN_TASK,
                             .n = 150,
                             .ref = hw_hash_ref,
                             .result = s_res_hash,
                             .gc_every = 64};
static const fcase c_fnptr = {.module = hw_fnptr_module,
                              .fn = HW_FNPTR_FN_TASK,
                              .n = 60,
                              .ref = hw_fnptr_ref,
                              .result = s_res_fnptr,
                              .sp = s_sp_n,
                              .gc_every = 16};
static const fcase c_statics = {.module = hw_statics_module,
                                .fn = HW_STATICS_FN_TASK,
                                .n = 50,
                                .ref = hw_statics_ref,
                                .result = s_res_statics,
                                .sp = s_sp_n,
                                .gc_every = 16};

static const lev_module *s_mod_of(const fcase *c)
{
    const lev_module *m = c->module();
    if (!m)
        fail_msg("module registration failed: %s", lev_errdetail());
    return m;
}

static rt_vt *s_new(const fcase *c)
{
    const lev_module *m = s_mod_of(c);
    rt_vt *vt = NULL;
    int rc;
    if (c->fn == HW_FIB_FN_PARITY_TASK && m == hw_fib_module()) {
        hw_parity_arg a = {c->n, c->every};
        rc = rt_vt_new(m, c->fn, &a, sizeof a, &vt);
    } else {
        rc = rt_vt_new(m, c->fn, &c->n, sizeof c->n, &vt);
    }
    if (rc)
        fail_msg("rt_vt_new: %s: %s", lev_strerror(rc), lev_errdetail());
    return vt;
}

static void s_check_done(const fcase *c, rt_vt *vt, int r)
{
    if (r < 0)
        fail_msg("run failed: %s: %s", lev_strerror(r), lev_errdetail());
    assert_int_equal(r, LEV_RUN_DONE);
    assert_int_equal(vt->state, RT_VT_DONE);
    assert_int_equal(vt->err, 0);
    assert_int_equal(c->result(vt), c->ref(c->n));
}

/* ===================================================================
 * The three ways to run a case
 * =================================================================== */

/* (i) Straight through: no safe point unwinds unless LEV_TORTURE is set. */
static void t_straight(void **state)
{
    const fcase *c = *state;
    rt_vt *vt = s_new(c);
    hw_stats st = {0};
    s_check_done(c, vt, hw_run_straight(vt, &st));
    if (!rt_torture_every())
        assert_int_equal(st.unwinds, 0);
    rt_vt_destroy(&vt);
    assert_null(vt);
}

/* (ii) Torture: every safe point unwinds; the VT is captured, its heap and
 * frames wiped, and restored in place from the image before it goes on. */
static void t_torture(void **state)
{
    const fcase *c = *state;
    rt_vt *vt = s_new(c);
    uint64_t id = vt->id;
    hw_stats st = {0};
    s_check_done(c, vt, hw_run_torture(vt, &st, c->gc_every));
    assert_true(st.cycles > 0);
    assert_int_equal(st.cycles, st.unwinds);
    if (c->sp)
        assert_int_equal(st.cycles, c->sp(c->n));
    assert_int_equal(vt->id, id);
    rt_vt_destroy(&vt);
}

/* Counts the safe points of a run by unwinding at each and resuming with
 * no capture at all (the pure unwind/resume path). */
static unsigned s_count_safe_points(const fcase *c)
{
    rt_vt *vt = s_new(c);
    unsigned n = 0;
    for (;;) {
        hw_force_unwind(vt);
        int r = rt_vt_step(vt);
        vt->want = 0;
        if (r != LEV_RUN_UNWIND) {
            s_check_done(c, vt, r);
            break;
        }
        assert_true(++n < HW_MAX_STEPS);
    }
    rt_vt_destroy(&vt);
    return n;
}

/* (iii) Migration: captured at a safe point, destroyed, restored as a new
 * VT (same id) and finished there; at up to 25 safe points spread over the
 * run, the first and the last included. */
static void t_migrate(void **state)
{
    const fcase *c = *state;
    unsigned total = s_count_safe_points(c);
    assert_true(total > 0);
    if (c->sp)
        assert_int_equal(total, c->sp(c->n));
    unsigned npts = total < 25 ? total : 25;
    for (unsigned k = 0; k < npts; k++) {
        unsigned at = npts == 1 ? 1 : 1 + (unsigned)((uint64_t)(total - 1) * k / (npts - 1));
        rt_vt *vt = s_new(c);
        uint64_t id = vt->id;
        hw_stats st = {0};
        int r = hw_run_migrate(&vt, at, &st);
        if (st.migrations != 1)
            fail_msg("the VT did not reach safe point %u of %u", at, total);
        s_check_done(c, vt, r);
        assert_int_equal(vt->id, id);
        rt_vt_destroy(&vt);
    }
}

/* ===================================================================
 * Pointers into frames, checked after every restore
 * =================================================================== */

static int s_in_arr(const long *p, const struct hw_locals_task__frame *f, int end_ok)
{
    return p >= f->arr && (p < f->arr + HW_LOCALS_ARR || (end_ok && p == f->arr + HW_LOCALS_ARR));
}

/* After each restore (before the VT resumes) every pointer into a frame
 * must point into the new frames, at the same local. */
static void t_locals_pointers_follow_frames(void **state)
{
    (void)state;
    const lev_module *m = s_mod_of(&c_locals);
    rt_vt *vt = s_new(&c_locals);
    hw_stats st = {0};
    unsigned seen_callee = 0, seen_cursor = 0, moved = 0;
    for (;;) {
        hw_force_unwind(vt);
        int r = rt_vt_step(vt);
        vt->want = 0;
        if (r != LEV_RUN_UNWIND) {
            s_check_done(&c_locals, vt, r);
            break;
        }
        void *before = rt_vt_bottom(vt);
        assert_int_equal(hw_cycle(vt, &st), 0);
        struct hw_locals_task__frame *f = rt_vt_bottom(vt);
        moved += (void *)f != before;
        assert_int_equal(f->t.h.fn, HW_LOCALS_FN_TASK);
        assert_ptr_equal(f->pacc, &f->acc);
        assert_ptr_equal(f->pend, f->arr + HW_LOCALS_ARR);
        if (f->i > 0 || f->t.h.pc != 1) /* pel is set in the first iteration */
            assert_true(s_in_arr(f->pel, f, 0));
        assert_true(s_in_arr(f->cell->target, f, 0));
        assert_int_equal(lev_alloc_size(m, f->cell), sizeof(struct hw_cell));
        if (f->t.h.pc == 3) {
            assert_true(s_in_arr(f->p, f, 0));
            seen_cursor++;
        }
        if (f->t.h.pc == 2) {
            struct hw_bump__frame *b = lev_frame_callee(&vt->ctx, f, sizeof *f);
            assert_non_null(b);
            assert_int_equal(b->h.fn, HW_LOCALS_FN_BUMP);
            assert_int_equal(b->h.pc, 1);
            assert_ptr_equal(b->plocal, &b->local);
            assert_ptr_equal(b->target, &f->acc);
            assert_ptr_equal(b->src, f->pel);
            seen_callee++;
        }
    }
    assert_true(seen_callee > 0);
    assert_true(seen_cursor > 0);
    assert_true(moved > 0); /* the frames did move, so the pointers were rewritten */
    rt_vt_destroy(&vt);
}

/* A function pointer in a frame, in a heap array of function pointers, in
 * heap objects and in a data pointer comes back as the same function. */
static void t_fnptr_values_after_restore(void **state)
{
    (void)state;
    rt_vt *vt = s_new(&c_fnptr);
    hw_stats st = {0};
    for (int k = 0; k < 7; k++) {
        hw_force_unwind(vt);
        assert_int_equal(rt_vt_step(vt), LEV_RUN_UNWIND);
        vt->want = 0;
        assert_int_equal(hw_cycle(vt, &st), 0);
    }
    struct hw_fnptr_task__frame *f = rt_vt_bottom(vt);
    for (int i = 0; i < HW_FNPTR_OPS; i++)
        assert_true(f->table[i] == hw_fnptr_op(i));
    assert_true(f->cur == hw_fnptr_op((int)((f->i - 1) % HW_FNPTR_OPS)));
    assert_true(f->vfn == (void *)hw_fnptr_op(HW_FNPTR_FN_XOR));
    const struct hw_opcell *c = f->ring;
    for (int j = 0; j < HW_FNPTR_RING; j++) {
        int found = 0;
        for (int i = 0; i < HW_FNPTR_OPS; i++)
            found |= c->f == hw_fnptr_op(i);
        assert_true(found);
        c = c->next;
    }
    assert_ptr_equal(c, f->ring); /* the ring is still a ring */
    s_check_done(&c_fnptr, vt, hw_run_straight(vt, &st));
    rt_vt_destroy(&vt);
}

/* ===================================================================
 * Statics
 * =================================================================== */

/* Runs a statics VT to its k-th safe point. */
static rt_vt *s_statics_at(unsigned k)
{
    rt_vt *vt = s_new(&c_statics);
    for (unsigned i = 0; i < k; i++) {
        hw_force_unwind(vt);
        assert_int_equal(rt_vt_step(vt), LEV_RUN_UNWIND);
        vt->want = 0;
    }
    return vt;
}

/* Pointers to statics that do not travel (a string literal, a constant
 * table, one past its end) come back pointing to the same addresses. */
static void t_statics_fixed_addresses(void **state)
{
    (void)state;
    const lev_module *m = s_mod_of(&c_statics);
    rt_vt *vt = s_statics_at(13);
    uint8_t *img;
    size_t len;
    assert_int_equal(rt_capture(vt, &img, &len), 0);
    rt_vt_destroy(&vt);
    rt_vt *nvt = NULL;
    assert_int_equal(hw_restore_copy(m, img, len, &nvt), 0);
    free(img);
    struct hw_statics_task__frame *f = rt_vt_bottom(nvt);
    assert_ptr_equal(f->msg, hw_statics_literal() + HW_STATICS_MSG_OFF);
    assert_ptr_equal(f->pp, hw_statics_primes() + (13 - 1) % 8); /* advanced in 12 iterations */
    assert_ptr_equal(f->pend, hw_statics_primes() + 8);
    assert_ptr_equal(f->pctr, hw_statics_counter());
    assert_string_equal(hw_statics_literal(), "leverage: statics travel");
    hw_stats st = {0};
    s_check_done(&c_statics, nvt, hw_run_straight(nvt, &st));
    rt_vt_destroy(&nvt);
}

/* A travelling static's value (and the heap list its pointer holds) is
 * part of the image: changed after the capture, it comes back from it,
 * whether restored in place or as a new VT. */
static void t_statics_travelling_restored(void **state)
{
    (void)state;
    const lev_module *m = s_mod_of(&c_statics);
    for (int into = 0; into < 2; into++) {
        rt_vt *vt = s_statics_at(9);
        long *ctr = hw_statics_counter();
        struct hw_snode **head = hw_statics_head();
        long c0 = *ctr;
        assert_true(c0 > 0);
        uint8_t *img;
        size_t len;
        assert_int_equal(rt_capture(vt, &img, &len), 0);
        rt_image_info info;
        assert_int_equal(rt_image_info_get(img, len, &info), 0);
        /* one frame, the argument, two travelling statics, 8 list nodes */
        assert_int_equal(info.nframes, 1);
        assert_int_equal(info.nobjects, 1 + 1 + 2 + 8);
        rt_image_scribble_reachable(vt);
        *ctr = -1;
        *head = NULL;
        if (into) {
            assert_int_equal(hw_restore_into_copy(vt, img, len), 0);
        } else {
            rt_vt_destroy(&vt);
            assert_int_equal(hw_restore_copy(m, img, len, &vt), 0);
        }
        free(img);
        assert_int_equal(*ctr, c0);
        long n = 0, last = c0;
        for (const struct hw_snode *p = *head; p; p = p->next, n++) {
            assert_true(p->v <= last);
            last = p->v;
        }
        assert_int_equal(n, 8);
        assert_int_equal((*head)->v, c0);
        hw_stats st = {0};
        s_check_done(&c_statics, vt, hw_run_straight(vt, &st));
        rt_vt_destroy(&vt);
    }
}

/* Whether the n bytes at p hold RT_POISON, as rt_poison writes it. */
static bool s_poisoned(const void *p, size_t n)
{
    const uint64_t w = RT_POISON;
    for (size_t k = 0; k < n; k++)
        if (((const unsigned char *)p)[k] != ((const unsigned char *)&w)[k % 8])
            return false;
    return true;
}

/* What the torture cycle wipes: every heap object and travelling static
 * the VT reaches (then the frames), and nothing else (the string literal
 * and the constant table stay); after the restore the VT finishes. */
static void t_wipe_reaches_heap_and_statics(void **state)
{
    (void)state;
    rt_vt *vt = s_statics_at(9);
    struct hw_statics_task__frame *f = rt_vt_bottom(vt);
    uint8_t *img;
    size_t len;
    assert_int_equal(rt_capture(vt, &img, &len), 0);
    struct hw_snode *nodes[8] = {0};
    int n = 0;
    for (struct hw_snode *p = *hw_statics_head(); p && n < 8; p = p->next)
        nodes[n++] = p;
    assert_int_equal(n, 8);
    const unsigned char *arg = f->t.arg;
    static const long primes[8] = {2, 3, 5, 7, 11, 13, 17, 19};
    const char *msg = f->msg;

    rt_image_scribble_reachable(vt);
    for (int i = 0; i < n; i++)
        assert_true(s_poisoned(nodes[i], sizeof *nodes[i]));
    assert_true(s_poisoned(arg, sizeof(long)));
    assert_true((unsigned long)*hw_statics_counter() == RT_POISON);
    assert_true((uintptr_t)*hw_statics_head() == (uintptr_t)RT_POISON);
    assert_string_equal(hw_statics_literal(), "leverage: statics travel");
    assert_memory_equal(hw_statics_primes(), primes, sizeof primes);
    assert_ptr_equal(f->msg, msg); /* the frames are the next step's */
    assert_int_equal(f->i, 8);

    rt_arena_scribble(&vt->ctx, &vt->arena);
    assert_true(s_poisoned(f, sizeof *f));

    assert_int_equal(hw_restore_into_copy(vt, img, len), 0);
    free(img);
    hw_stats st = {0};
    s_check_done(&c_statics, vt, hw_run_straight(vt, &st));
    rt_vt_destroy(&vt);
}

/* The torture cycle moves the VT: after rt_image_torture every heap
 * object and the frame are at addresses where none of the VT was in the
 * cycles before (a small VT keeps several generations of old memory), the
 * old ones read as poison and stay allocated (a collection does not reuse
 * them); travelling statics stay in place. The old memory a VT keeps is
 * bounded however many cycles it goes through. */
static void t_torture_moves_and_quarantines(void **state)
{
    (void)state;
    rt_vt *vt = s_statics_at(9);
    enum { N = 8, GENS = 2 };
    const void *old[GENS][N + 2]; /* the nodes, the argument, the frame */
    size_t sizes[N + 2];
    long *ctr = hw_statics_counter();
    for (int g = 0; g < GENS; g++) {
        int n = 0;
        for (struct hw_snode *p = *hw_statics_head(); p && n < N; p = p->next) {
            sizes[n] = sizeof *p;
            old[g][n++] = p;
        }
        assert_int_equal(n, N);
        struct hw_statics_task__frame *f = rt_vt_bottom(vt);
        sizes[N] = sizeof(long);
        old[g][N] = f->t.arg;
        sizes[N + 1] = sizeof *f;
        old[g][N + 1] = f;
        long c0 = *ctr;
        assert_int_equal(rt_image_torture(vt, NULL), 0);
        GC_gcollect();
        assert_ptr_equal(hw_statics_counter(), ctr); /* restored in place */
        assert_int_equal(*ctr, c0);
        /* Everything moved away from every copy of the last two cycles;
         * all of those still hold poison. */
        f = rt_vt_bottom(vt);
        const void *now[N + 2];
        n = 0;
        for (struct hw_snode *p = *hw_statics_head(); p && n < N; p = p->next)
            now[n++] = p;
        now[N] = f->t.arg;
        now[N + 1] = f;
        for (int h = 0; h <= g; h++)
            for (int i = 0; i < N + 2; i++) {
                assert_true(s_poisoned(old[h][i], sizes[i]));
                for (int j = 0; j < N + 2; j++)
                    assert_ptr_not_equal(now[j], old[h][i]);
            }
    }
    hw_stats st = {0};
    for (int k = 0; k < 30; k++) { /* the task has 50 safe points */
        hw_force_unwind(vt);
        assert_int_equal(rt_vt_step(vt), LEV_RUN_UNWIND);
        vt->want = 0;
        assert_int_equal(hw_cycle(vt, &st), 0);
    }
    unsigned gens = 0;
    for (const rt_moved *m = vt->moved; m; m = m->older)
        gens++;
    assert_true(gens >= 1 && gens <= 8);
    s_check_done(&c_statics, vt, hw_run_straight(vt, &st));
    rt_vt_destroy(&vt);
}

/* ===================================================================
 * Deep recursion
 * =================================================================== */

/* is_even/is_odd 10,000 levels deep: the frames span many arena chunks;
 * captured at the bottom, restored in place and as a new VT, both finish. */
typedef struct s_walked {
    uint32_t fn[8], pc[8];
    int n;
} s_walked;

static int s_walk_cb(void *frame, size_t size, void *ud)
{
    (void)size;
    s_walked *w = ud;
    if (w->n < 8) {
        w->fn[w->n] = ((lev_frame *)frame)->fn;
        w->pc[w->n] = ((lev_frame *)frame)->pc;
    }
    w->n++;
    return 0;
}

/* Frames spilled while unwinding (innermost first) are laid on the arena
 * above the pushed ones in call order, zeroed but for what the body
 * wrote; a failed VT's spilled frames are dropped. */
static void t_spilled_frames_laid_in_call_order(void **state)
{
    (void)state;
    rt_vt *vt = s_new(&c_parity);
    const uint32_t fns[3] = {HW_FIB_FN_IS_ODD, HW_FIB_FN_IS_EVEN, HW_FIB_FN_FIB};
    for (int i = 0; i < 3; i++) { /* innermost first, as an unwind writes them */
        lev_frame *f = lev_frame_spill(&vt->ctx, rt_frame_size(vt->mod, fns[i]), fns[i]);
        assert_non_null(f);
        assert_int_equal(f->fn, fns[i]);
        assert_int_equal(f->pc, 0);
        f->pc = (uint32_t)(10 + i);
    }
    assert_true(vt->arena.spill_len > 0);
    assert_int_equal(rt_arena_lay_spilled(&vt->ctx, &vt->arena, 1), 0);
    assert_int_equal(vt->arena.spill_len, 0);
    s_walked w = {0};
    assert_int_equal(rt_arena_walk(&vt->ctx, &vt->arena, vt->mod, s_walk_cb, &w), 0);
    assert_int_equal(w.n, 4); /* the task's frame, then the outermost spilled one */
    assert_int_equal(w.fn[0], HW_FIB_FN_PARITY_TASK);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(w.fn[1 + i], fns[2 - i]);
        assert_int_equal(w.pc[1 + i], 12 - i);
    }
    /* The callee of each frame is the next one up. */
    void *bottom = rt_vt_bottom(vt);
    lev_frame *c1 =
        lev_frame_callee(&vt->ctx, bottom, rt_frame_size(vt->mod, HW_FIB_FN_PARITY_TASK));
    assert_non_null(c1);
    assert_int_equal(c1->fn, HW_FIB_FN_FIB);
    /* Not laid: dropped. */
    assert_non_null(
        lev_frame_spill(&vt->ctx, rt_frame_size(vt->mod, HW_FIB_FN_FIB), HW_FIB_FN_FIB));
    assert_int_equal(rt_arena_lay_spilled(&vt->ctx, &vt->arena, 0), 0);
    assert_int_equal(vt->arena.spill_len, 0);
    w = (s_walked){0};
    assert_int_equal(rt_arena_walk(&vt->ctx, &vt->arena, vt->mod, s_walk_cb, &w), 0);
    assert_int_equal(w.n, 4);
    rt_vt_destroy(&vt);
}

static void t_deep_recursion(void **state)
{
    (void)state;
    const fcase deep = {.module = hw_fib_module,
                        .fn = HW_FIB_FN_PARITY_TASK,
                        .n = 10000,
                        .every = 2500,
                        .ref = s_ref_parity,
                        .result = s_res_parity};
    const lev_module *m = s_mod_of(&deep);
    rt_vt *vt = s_new(&deep);
    hw_stats st = {0};
    /* safe points at n = 10000, 7500, 5000, 2500, 0: the fifth is the deepest */
    for (int k = 0; k < 5; k++) {
        hw_force_unwind(vt);
        assert_int_equal(rt_vt_step(vt), LEV_RUN_UNWIND);
        vt->want = 0;
        if (k < 4)
            assert_int_equal(hw_cycle(vt, &st), 0);
    }
    assert_true(hw_arena_chunks(vt) > 1);
    uint8_t *img;
    size_t len;
    assert_int_equal(rt_capture(vt, &img, &len), 0);
    rt_image_info info;
    assert_int_equal(rt_image_info_get(img, len, &info), 0);
    assert_int_equal(info.nframes, 10002);  /* the task and is_even/is_odd for n = 10000..0 */
    assert_int_equal(info.nobjects, 10003); /* and the argument */

    /* In place, after wiping. */
    rt_image_scribble_reachable(vt);
    rt_arena_scribble(&vt->ctx, &vt->arena);
    assert_int_equal(hw_restore_into_copy(vt, img, len), 0);
    s_check_done(&deep, vt, hw_run_straight(vt, &st));
    rt_vt_destroy(&vt);

    /* As a new VT. */
    assert_int_equal(hw_restore_copy(m, img, len, &vt), 0);
    free(img);
    GC_gcollect();
    s_check_done(&deep, vt, hw_run_straight(vt, &st));
    rt_vt_destroy(&vt);

    /* The whole run under torture, and migrated at the bottom. */
    vt = s_new(&deep);
    st = (hw_stats){0};
    s_check_done(&deep, vt, hw_run_torture(vt, &st, 0));
    assert_int_equal(st.cycles, 5);
    rt_vt_destroy(&vt);
    vt = s_new(&deep);
    st = (hw_stats){0};
    s_check_done(&deep, vt, hw_run_migrate(&vt, 5, &st));
    assert_int_equal(st.migrations, 1);
    rt_vt_destroy(&vt);
}

/* ===================================================================
 * Runner
 * =================================================================== */

#define S_CASE(name, fn, c)                                                                        \
    {                                                                                              \
        name, fn, NULL, NULL, (void *)&(c)                                                         \
    }
#define S_THREE(stem, c)                                                                           \
    S_CASE(stem "_straight", t_straight, c), S_CASE(stem "_torture", t_torture, c),                \
        S_CASE(stem "_migrate", t_migrate, c)

int main(void)
{
    const struct CMUnitTest tests[] = {
        S_THREE("fib_recursion", c_fib),
        S_THREE("mutual_recursion", c_parity),
        S_THREE("own_locals", c_locals),
        S_THREE("heap_list", c_list),
        S_THREE("heap_tree", c_tree),
        S_THREE("heap_hash_table", c_hash),
        S_THREE("function_pointers", c_fnptr),
        S_THREE("statics", c_statics),
        cmocka_unit_test(t_locals_pointers_follow_frames),
        cmocka_unit_test(t_fnptr_values_after_restore),
        cmocka_unit_test(t_statics_fixed_addresses),
        cmocka_unit_test(t_statics_travelling_restored),
        cmocka_unit_test(t_wipe_reaches_heap_and_statics),
        cmocka_unit_test(t_torture_moves_and_quarantines),
        cmocka_unit_test(t_deep_recursion),
        cmocka_unit_test(t_spilled_frames_laid_in_call_order),
    };
    return cmocka_run_group_tests_name("frames", tests, NULL, NULL);
}
