/* test_oom.c - allocation failure: with the GC heap capped, allocation,
 * restore and capture fail with LEV_ENOMEM and a detail, the process and
 * the VT it holds survive, and everything works again once memory is back.
 *
 * A runner of its own: the heap cap is process-wide.
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

#include "image.h"
#include "rt.h"
#include "vt.h"

enum { T_TASK = LEV_T_USER };
enum { NARR = 64, ARR_WORDS = 32768 }; /* 64 arrays of 256 KiB: 16 MiB */

struct task_frame {
    lev_task_frame t;
    uint64_t **arrays;
};

static int s_task_run(lev_ctx *vt, void *frame)
{
    (void)vt;
    (void)frame;
    return LEV_RUN_UNWIND; /* never runs here: frames are filled by hand */
}

static const lev_field_desc s_task_fields[] = {
    {"arg", offsetof(struct task_frame, t.arg), LEV_K_PTR, 1, 0},
    {"len", offsetof(struct task_frame, t.len), LEV_K_B8, 1, 0},
    {"arrays", offsetof(struct task_frame, arrays), LEV_K_PTR, 1, 0},
};
static const lev_type_desc s_types[] = {
    {"frame oom_task", sizeof(struct task_frame), 3, s_task_fields, _Alignof(struct task_frame)},
};
static const lev_fn_desc s_fns[] = {
    {"oom_task", NULL, s_task_run, T_TASK, LEV_FN_TASK},
};
static const lev_module_desc s_desc = {LEV_ABI_VERSION, "oom", 1, s_types, 1, s_fns, 0, NULL};

/* Sum of every word the VT holds, to compare a restored copy. */
static uint64_t s_digest(rt_vt *vt)
{
    struct task_frame *fr = rt_vt_bottom(vt);
    uint64_t sum = 0;
    for (int i = 0; i < NARR; i++)
        for (int j = 0; j < ARR_WORDS; j += 97)
            sum = sum * 31 + fr->arrays[i][j];
    return sum;
}

static void t_capped_heap(void **state)
{
    (void)state;
    lev_module *m;
    assert_int_equal(lev_module_register(&s_desc, &m), 0);
    rt_vt *vt;
    long zero = 0;
    assert_int_equal(rt_vt_new(m, 0, &zero, sizeof zero, &vt), 0);
    struct task_frame *fr = rt_vt_bottom(vt);
    fr->arrays = lev_alloc(m, LEV_T_PTR, NARR);
    assert_non_null(fr->arrays);
    for (int i = 0; i < NARR; i++) {
        fr->arrays[i] = lev_alloc(m, LEV_T_U64, ARR_WORDS);
        assert_non_null(fr->arrays[i]);
        for (int j = 0; j < ARR_WORDS; j++)
            fr->arrays[i][j] = (uint64_t)i * 1000003u + (uint64_t)j;
    }
    uint64_t digest = s_digest(vt);
    uint8_t *img;
    size_t len;
    assert_int_equal(rt_capture(vt, &img, &len), 0);

    /* Cap the heap just above what is in use: a second copy cannot fit. */
    GC_gcollect();
    GC_set_max_heap_size(GC_get_heap_size() + (2u << 20));

    assert_null(lev_alloc(m, LEV_T_U64, 8u << 20));
    rt_vt *copy = NULL;
    rt_err_clear();
    assert_int_equal(rt_restore(m, img, len, &copy), LEV_ENOMEM);
    assert_null(copy);
    assert_true(strlen(lev_errdetail()) > 0);
    /* A failed restore left nothing half-built that stays reachable. */
    GC_gcollect();

    /* The original VT is intact and can still be captured. */
    assert_int_equal(s_digest(vt), digest);
    uint8_t *img2;
    size_t len2;
    assert_int_equal(rt_capture(vt, &img2, &len2), 0);
    assert_int_equal(len2, len);
    free(img2);

    /* Memory back: the same image restores to the same contents. */
    GC_set_max_heap_size(0);
    assert_int_equal(rt_restore(m, img, len, &copy), 0);
    assert_int_equal(s_digest(copy), digest);
    rt_vt_destroy(&copy);
    rt_vt_destroy(&vt);
    free(img);
}

int main(void)
{
    rt_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_capped_heap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
