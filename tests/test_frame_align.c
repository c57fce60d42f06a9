/* test_frame_align.c - frames whose types need more alignment than
 * LEV_FRAME_ALIGN (a local of an _Alignas(64) struct, a 32-byte vector, a
 * page-aligned buffer) keep it wherever the runtime lays them: pushed
 * over frames of other sizes and across chunks, popped and pushed again,
 * spilled while unwinding and laid on the arena, and restored from an
 * image into a new VT and into the same one. The walks, the callee lookup
 * and the image see exactly the frames pushed, in order, gaps skipped, and
 * every frame keeps its contents.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define GC_THREADS
#include <gc/gc.h>

#include "arena.h"
#include "image.h"
#include "rt.h"
#include "vt.h"

/* ===================================================================
 * The module: a task whose own frame is 64-byte aligned, and frames of
 * 16, 32, 64 and 4096 bytes of alignment
 * =================================================================== */

struct task_frame {
    lev_task_frame t;
    _Alignas(64) uint64_t v[8];
};
struct small_frame {
    lev_frame h;
    uint64_t v[1];
};
struct a32_frame {
    lev_frame h;
    _Alignas(32) uint64_t v[4];
};
struct a64_frame {
    lev_frame h;
    _Alignas(64) uint64_t v[9];
};
struct page_frame {
    lev_frame h;
    _Alignas(4096) uint64_t v[2];
};

enum { FN_TASK, FN_SMALL, FN_A32, FN_A64, FN_PAGE, NFNS };

/* Each function's frame: size, alignment, and its words v[0..n). */
static const struct {
    size_t size, align, off;
    unsigned n;
} s_shape[NFNS] = {
#define S_SHAPE(T)                                                                                 \
    {                                                                                              \
        sizeof(T), _Alignof(T), offsetof(T, v), sizeof((T *)0)->v / 8                              \
    }
    S_SHAPE(struct task_frame), S_SHAPE(struct small_frame), S_SHAPE(struct a32_frame),
    S_SHAPE(struct a64_frame),  S_SHAPE(struct page_frame),
#undef S_SHAPE
};

static int s_task_run(lev_ctx *vt, void *frame)
{
    (void)vt;
    (void)frame;
    return LEV_RUN_UNWIND; /* never runs here: frames are filled by hand */
}

#define S_V(T)                                                                                     \
    {                                                                                              \
        "v", offsetof(T, v), LEV_K_B8, sizeof((T *)0)->v / 8, 0                                    \
    }
static const lev_field_desc s_task_f[] = {
    {"arg", offsetof(struct task_frame, t.arg), LEV_K_PTR, 1, 0},
    {"len", offsetof(struct task_frame, t.len), LEV_K_B8, 1, 0},
    S_V(struct task_frame),
};
static const lev_field_desc s_small_f[] = {S_V(struct small_frame)};
static const lev_field_desc s_a32_f[] = {S_V(struct a32_frame)};
static const lev_field_desc s_a64_f[] = {S_V(struct a64_frame)};
static const lev_field_desc s_page_f[] = {S_V(struct page_frame)};
#undef S_V

#define S_NF(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))
#define S_TYPE(T, f)                                                                               \
    {                                                                                              \
#T, sizeof(T), S_NF(f), f, _Alignof(T)                                                     \
    }
static const lev_type_desc s_types[] = {
    S_TYPE(struct task_frame, s_task_f), S_TYPE(struct small_frame, s_small_f),
    S_TYPE(struct a32_frame, s_a32_f),   S_TYPE(struct a64_frame, s_a64_f),
    S_TYPE(struct page_frame, s_page_f),
};
#undef S_TYPE
static const lev_fn_desc s_fns[NFNS] = {
    [FN_TASK] = {"align_task", NULL, s_task_run, LEV_T_USER + 0, LEV_FN_TASK},
    [FN_SMALL] = {"small", NULL, NULL, LEV_T_USER + 1, 0},
    [FN_A32] = {"a32", NULL, NULL, LEV_T_USER + 2, 0},
    [FN_A64] = {"a64", NULL, NULL, LEV_T_USER + 3, 0},
    [FN_PAGE] = {"page", NULL, NULL, LEV_T_USER + 4, 0},
};
static const lev_module_desc s_desc = {
    LEV_ABI_VERSION, "frame_align", S_NF(s_types), s_types, NFNS, s_fns, 0, NULL};

static const lev_module *s_mod(void)
{
    lev_module *m = NULL;
    if (lev_module_register(&s_desc, &m) != 0)
        fail_msg("frame_align: %s", lev_errdetail());
    return m;
}

/* ===================================================================
 * Helpers
 * =================================================================== */

/* Calls in the order they are pushed: every alignment after every other,
 * a recursion of 64-byte frames, and page-aligned frames often enough
 * that the frames cross chunks. */
static const uint32_t s_calls[] = {FN_SMALL, FN_A64,   FN_SMALL, FN_A32, FN_PAGE, FN_A64,
                                   FN_A64,   FN_SMALL, FN_PAGE,  FN_A32, FN_A32,  FN_SMALL};
enum { S_ROUNDS = 12, S_NCALLS = (int)(sizeof s_calls / sizeof s_calls[0]) * S_ROUNDS };

static uint32_t s_call(int i) { return s_calls[i % (int)(sizeof s_calls / sizeof s_calls[0])]; }

static uint64_t *s_words(void *frame, uint32_t fn)
{
    return (uint64_t *)((char *)frame + s_shape[fn].off);
}

static void s_fill(void *frame, uint32_t fn, int seq)
{
    for (unsigned k = 0; k < s_shape[fn].n; k++)
        s_words(frame, fn)[k] = (uint64_t)seq * 1000u + k;
}

/* The frame is where its type needs it and holds what s_fill wrote. */
static void s_check(const void *frame, uint32_t fn, int seq)
{
    if ((uintptr_t)frame % s_shape[fn].align != 0)
        fail_msg("frame %d (%s) at %p: not aligned to %zu", seq, s_fns[fn].name, frame,
                 s_shape[fn].align);
    assert_int_equal(((const lev_frame *)frame)->fn, fn);
    for (unsigned k = 0; k < s_shape[fn].n; k++)
        assert_int_equal(s_words((void *)frame, fn)[k], (uint64_t)seq * 1000u + k);
}

typedef struct s_seen {
    void *frame[S_NCALLS + 1];
    int n;
} s_seen;

static int s_seen_cb(void *frame, size_t size, void *ud)
{
    (void)size;
    s_seen *s = ud;
    if (s->n > S_NCALLS)
        return 1;
    s->frame[s->n++] = frame;
    return 0;
}

/* The VT's frames are the task's (seq 0) and the first `n` calls (seq
 * 1..n), in order, each aligned and intact, each the callee of the one
 * below it. */
static void s_check_frames(rt_vt *vt, int n)
{
    s_seen s = {0};
    assert_int_equal(rt_arena_walk(&vt->ctx, &vt->arena, vt->mod, s_seen_cb, &s), 0);
    assert_int_equal(s.n, n + 1);
    s_check(s.frame[0], FN_TASK, 0);
    for (int i = 0; i < n; i++) {
        s_check(s.frame[i + 1], s_call(i), i + 1);
        uint32_t below = i ? s_call(i - 1) : FN_TASK;
        assert_ptr_equal(lev_frame_callee(&vt->ctx, s.frame[i], s_shape[below].size),
                         s.frame[i + 1]);
    }
}

static rt_vt *s_new_vt(void)
{
    rt_vt *vt;
    long zero = 0;
    assert_int_equal(rt_vt_new(s_mod(), FN_TASK, &zero, sizeof zero, &vt), 0);
    s_fill(rt_vt_bottom(vt), FN_TASK, 0);
    s_check(rt_vt_bottom(vt), FN_TASK, 0);
    return vt;
}

/* Pushes the calls as a function's body does; returns their frames. */
static void s_push_all(rt_vt *vt, void **frames)
{
    for (int i = 0; i < S_NCALLS; i++) {
        uint32_t fn = s_call(i);
        void *f = lev_frame_push_aligned(&vt->ctx, s_shape[fn].size, s_shape[fn].align, fn);
        assert_non_null(f);
        assert_int_equal(((lev_frame *)f)->pc, 0);
        s_fill(f, fn, i + 1);
        s_check(f, fn, i + 1);
        frames[i] = f;
    }
}

/* ===================================================================
 * Tests
 * =================================================================== */

/* Pushed over frames of every other size, across chunks; popped down to
 * the task's frame and pushed again on the same chunks. */
static void t_pushed_frames_aligned(void **state)
{
    (void)state;
    rt_vt *vt = s_new_vt();
    void *frames[S_NCALLS];
    for (int round = 0; round < 2; round++) {
        s_push_all(vt, frames);
        s_check_frames(vt, S_NCALLS);
        for (int i = S_NCALLS - 1; i >= 0; i--) {
            lev_frame_pop(&vt->ctx, frames[i]);
            if (i % 7 == 0)
                s_check_frames(vt, i);
        }
        s_check_frames(vt, 0);
    }
    rt_vt_destroy(&vt);
}

/* Restored from an image, as a new VT and into the same VT after its
 * frames were wiped: the frames are laid aligned as this module says
 * (the image does not carry alignment), the task's at the bottom too. */
static void t_restored_frames_aligned(void **state)
{
    (void)state;
    rt_vt *vt = s_new_vt();
    void *frames[S_NCALLS];
    s_push_all(vt, frames);
    uint8_t *img;
    size_t len;
    assert_int_equal(rt_capture(vt, &img, &len), 0);
    rt_image_info info;
    assert_int_equal(rt_image_info_get(img, len, &info), 0);
    assert_int_equal(info.nframes, S_NCALLS + 1); /* gaps are no frames */

    rt_vt *copy = NULL;
    assert_int_equal(rt_restore(vt->mod, img, len, &copy), 0);
    s_check_frames(copy, S_NCALLS);
    /* a restored VT pushes and pops as any other */
    void *f =
        lev_frame_push_aligned(&copy->ctx, s_shape[FN_PAGE].size, s_shape[FN_PAGE].align, FN_PAGE);
    assert_non_null(f);
    assert_int_equal((uintptr_t)f % s_shape[FN_PAGE].align, 0);
    lev_frame_pop(&copy->ctx, f);
    s_check_frames(copy, S_NCALLS);
    rt_vt_destroy(&copy);

    rt_arena_scribble(&vt->ctx, &vt->arena);
    assert_int_equal(rt_restore_into(vt, img, len), 0);
    s_check_frames(vt, S_NCALLS);
    free(img);
    rt_vt_destroy(&vt);
}

/* Spilled while unwinding, innermost first (enough of them that the
 * spill buffer grows, moving the ones already written): each is aligned
 * when its body fills it, and they are laid aligned, in call order. */
static void t_spilled_frames_aligned(void **state)
{
    (void)state;
    rt_vt *vt = s_new_vt();
    for (int i = S_NCALLS - 1; i >= 0; i--) {
        uint32_t fn = s_call(i);
        void *f = lev_frame_spill(&vt->ctx, s_shape[fn].size, fn);
        assert_non_null(f);
        assert_int_equal(((lev_frame *)f)->pc, 0);
        for (unsigned k = 0; k < s_shape[fn].n; k++)
            assert_int_equal(s_words(f, fn)[k], 0); /* zeroed */
        s_fill(f, fn, i + 1);
        s_check(f, fn, i + 1);
    }
    assert_int_equal(rt_arena_lay_spilled(&vt->ctx, &vt->arena, 1), 0);
    s_check_frames(vt, S_NCALLS);
    rt_vt_destroy(&vt);
}

/* A descriptor whose alignment is not a power of two is refused. */
static void t_bad_alignment_refused(void **state)
{
    (void)state;
    static const lev_type_desc bad[] = {{"odd", 48, 1, s_small_f, 48}};
    static const lev_module_desc d = {LEV_ABI_VERSION, "frame_align_bad", 1, bad, 0, NULL, 0, NULL};
    lev_module *m = NULL;
    rt_err_clear();
    assert_int_equal(lev_module_register(&d, &m), LEV_EINVAL);
    assert_non_null(strstr(lev_errdetail(), "power of two"));
}

int main(void)
{
    rt_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_pushed_frames_aligned),
        cmocka_unit_test(t_restored_frames_aligned),
        cmocka_unit_test(t_spilled_frames_aligned),
        cmocka_unit_test(t_bad_alignment_refused),
    };
    return cmocka_run_group_tests_name("frame_align", tests, NULL, NULL);
}
