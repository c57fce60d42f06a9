/* test_image.c - checkpoint images: round trips that must be bit-exact
 * for every field kind and layout, what rt_image_info_get reports, the
 * identity (id and epoch) an image carries, image size, state that cannot be captured, and damaged,
 * truncated or foreign images, which must fail with the right code and a detail, never crash.
 *
 * Every decode reads from a malloc'd buffer of exactly the image's length,
 * so AddressSanitizer sees any read outside the image.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define GC_THREADS
#include <gc/gc.h>
#include <tpl.h>

#include "arena.h"
#include "hw/hw_drive.h"
#include "hw/hw_fib.h"
#include "hw/hw_layout.h"
#include "hw/hw_list.h"
#include "image.h"
#include "rt.h"
#include "vt.h"

/* ===================================================================
 * Helpers
 * =================================================================== */

static const lev_module *s_layout_mod(void)
{
    const lev_module *m = hw_layout_module();
    if (!m)
        fail_msg("hw_layout: %s", lev_errdetail());
    return m;
}

/* A layout VT stopped at its safe point, with its graph built. */
static rt_vt *s_layout_vt(long scale)
{
    rt_vt *vt = NULL;
    int rc = rt_vt_new(s_layout_mod(), HW_LAYOUT_FN_TASK, &scale, sizeof scale, &vt);
    if (rc)
        fail_msg("rt_vt_new: %s", lev_errdetail());
    hw_force_unwind(vt);
    assert_int_equal(rt_vt_step(vt), LEV_RUN_UNWIND);
    vt->want = 0;
    assert_int_equal(((lev_frame *)rt_vt_bottom(vt))->pc, 1);
    return vt;
}

static void s_capture(rt_vt *vt, uint8_t **img, size_t *len)
{
    int rc = rt_capture(vt, img, len);
    if (rc)
        fail_msg("rt_capture: %s: %s", lev_strerror(rc), lev_errdetail());
    assert_true(*len > 0);
}

/* A small image: hw_fib_task(3) at its first safe point inside fib. */
static void s_small_image(uint8_t **img, size_t *len)
{
    long n = 3;
    rt_vt *vt;
    assert_int_equal(rt_vt_new(hw_fib_module(), HW_FIB_FN_FIB_TASK, &n, sizeof n, &vt), 0);
    hw_force_unwind(vt);
    assert_int_equal(rt_vt_step(vt), LEV_RUN_UNWIND);
    vt->want = 0;
    s_capture(vt, img, len);
    rt_vt_destroy(&vt);
}

/* Restores from a malloc'd copy of exactly img[0..len); on success checks
 * and destroys the VT. Returns the code. */
static int s_try_restore(const lev_module *m, const uint8_t *img, size_t len)
{
    rt_vt *vt = NULL;
    rt_err_clear();
    int rc = hw_restore_copy(m, img, len, &vt);
    if (rc == 0) {
        assert_non_null(vt);
        rt_vt_destroy(&vt);
    } else {
        assert_null(vt);
        assert_true(lev_errdetail()[0] != '\0');
    }
    return rc;
}

/* rt_image_info_get from a malloc'd copy of exactly img[0..len). */
static int s_try_info(const uint8_t *img, size_t len, rt_image_info *info)
{
    uint8_t *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, img, len);
    rt_err_clear();
    int rc = rt_image_info_get(copy, len, info);
    free(copy);
    if (rc)
        assert_true(lev_errdetail()[0] != '\0');
    return rc;
}

static uint32_t s_rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Size of the image's header part (its own tpl image). */
static size_t s_header_len(const uint8_t *img) { return s_rd32(img + 4); }

/* Offset of the image magic ("LEVI", little-endian) in the header. */
static size_t s_magic_at(const uint8_t *img, size_t len)
{
    static const uint8_t magic[4] = {0x49, 0x56, 0x45, 0x4C};
    size_t hs = s_header_len(img);
    for (size_t i = 8; i + 4 <= hs && i + 4 <= len; i++)
        if (memcmp(img + i, magic, 4) == 0)
            return i;
    fail_msg("no image magic in the header");
    return 0;
}

static uint64_t s_bits64(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

static uint32_t s_bits32(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

#define WORDS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Deterministic generator for samples. */
static uint64_t s_rand(uint64_t *st)
{
    *st = *st * 6364136223846793005ull + 1442695040888963407ull;
    return *st >> 17;
}

/* ===================================================================
 * Round trips
 * =================================================================== */

/* Every scalar width, floats and doubles bit-exact (NaN payloads, -0.0,
 * denormals), structs in the frame, nested structs and arrays of structs on
 * the heap, bulk and small dense arrays: restored as a new VT and in place. */
static void t_roundtrip_every_field(void **state)
{
    (void)state;
    const lev_module *m = s_layout_mod();
    rt_vt *vt = s_layout_vt(1);
    struct hw_layout_task__frame *a = rt_vt_bottom(vt);
    uint8_t *img;
    size_t len;
    s_capture(vt, &img, &len);

    rt_vt *nvt = NULL;
    assert_int_equal(hw_restore_copy(m, img, len, &nvt), 0);
    struct hw_layout_task__frame *b = rt_vt_bottom(nvt);
    assert_ptr_not_equal(a, b);
    assert_ptr_not_equal(a->shapes, b->shapes);
    char why[128] = "";
    if (!hw_layout_equal(a, b, why, sizeof why))
        fail_msg("restored graph differs: %s", why);
    assert_true(hw_layout_digest(a) == hw_layout_digest(b));

    /* The awkward values themselves, on the restored side. */
    assert_int_equal(b->sc.u8, 0xFE);
    assert_int_equal(b->sc.i8, -7);
    assert_int_equal(b->sc.u16, 0xBEEF);
    assert_int_equal(b->sc.i16, -12345);
    assert_int_equal(b->sc.u32, 0xDEADBEEFu);
    assert_int_equal(b->sc.i32, -123456789);
    assert_int_equal(s_bits32(b->sc.f32), 0x80000000u); /* -0.0f */
    assert_true(b->sc.u64 == 0x0123456789ABCDEFull);
    assert_true(b->sc.i64 == INT64_MIN + 5);
    assert_true(s_bits64(b->sc.f64) == 0x7FF4000000000ABCull); /* signalling NaN payload */
    assert_memory_equal(b->sc.name, "abcd\xff", 5);
    assert_int_equal(b->sc.w[1], 0xFFFF);
    assert_int_equal(s_bits32(b->sc.fv[0]), 0x7F800123u);
    assert_int_equal(s_bits32(b->sc.fv[1]), 0xFFC00456u);
    assert_int_equal(s_bits32(b->sc.fv[2]), 0x00000001u);
    assert_true(s_bits64(b->sc.dv[0]) == 0x8000000000000000ull);
    assert_true(s_bits64(b->dbl[0]) == 0x7FF0000000000001ull);
    assert_true(s_bits64(b->dbl[1]) == 0x8000000000000000ull);
    assert_int_equal(s_bits32(b->flt[0]), 0xFF800001u);
    assert_true(s_bits64(b->shapes[0].pts[0].w) == 0x7FF8000000000000ull);

    /* Interior and one-past-the-end pointers land on the same places. */
    assert_ptr_equal(b->interior, &b->shapes[3].pts[2]);
    assert_ptr_equal(b->past, b->shapes + HW_LAYOUT_NSHAPES);
    assert_ptr_equal(b->big_end, b->big64 + lev_alloc_size(m, b->big64) / sizeof(uint64_t));
    assert_ptr_equal(b->shapes[9].pval, b->big_end);
    assert_ptr_equal(b->shapes[1].pval, &b->big64[37]);
    assert_ptr_equal(b->shapes[2].ppt, &b->shapes[7].pts[2]);
    assert_ptr_equal(b->shapes[HW_LAYOUT_NSHAPES - 1].next, b->one);
    assert_ptr_equal(b->one->ppt, &b->shapes[0].origin);
    assert_null(b->one->next);
    assert_true(b->hook == hw_layout_nop);

    /* Both finish with the same result. */
    hw_stats st = {0};
    assert_int_equal(hw_run_straight(vt, &st), LEV_RUN_DONE);
    assert_int_equal(hw_run_straight(nvt, &st), LEV_RUN_DONE);
    assert_int_equal(a->result, b->result);
    assert_true(a->result == (long)hw_layout_digest(b));
    rt_vt_destroy(&nvt);

    /* In place, after wiping: same graph, same result. */
    rt_vt_destroy(&vt);
    vt = s_layout_vt(1);
    uint64_t d0 = hw_layout_digest(rt_vt_bottom(vt));
    rt_vt *ref = NULL;
    assert_int_equal(hw_restore_copy(m, img, len, &ref), 0);
    free(img);
    s_capture(vt, &img, &len);
    rt_image_scribble_reachable(vt);
    rt_arena_scribble(&vt->ctx, &vt->arena);
    assert_int_equal(hw_restore_into_copy(vt, img, len), 0);
    free(img);
    assert_true(hw_layout_digest(rt_vt_bottom(vt)) == d0);
    if (!hw_layout_equal(rt_vt_bottom(ref), rt_vt_bottom(vt), why, sizeof why))
        fail_msg("restored in place differs: %s", why);
    rt_vt_destroy(&ref);
    rt_vt_destroy(&vt);
}

/* Dense arrays at and around the bulk threshold (4 KiB) of every element
 * width, reached through an array of pointers, round trip exactly. */
static void t_roundtrip_bulk_threshold(void **state)
{
    (void)state;
    const lev_module *m = s_layout_mod();
    static const struct {
        uint32_t type;
        size_t count;
    } arrs[] = {
        {LEV_T_BYTES, 4095}, {LEV_T_BYTES, 4096}, {LEV_T_BYTES, 4097}, {LEV_T_U16, 2047},
        {LEV_T_U16, 2048},   {LEV_T_U32, 1024},   {LEV_T_U32, 1023},   {LEV_T_U64, 512},
        {LEV_T_U64, 511},    {LEV_T_U64, 70000},  {LEV_T_BYTES, 1},    {LEV_T_U64, 0},
    };
    enum { N = sizeof arrs / sizeof arrs[0] };
    rt_vt *vt = s_layout_vt(1);
    struct hw_layout_task__frame *a = rt_vt_bottom(vt);
    void **ptrs = lev_alloc(m, LEV_T_PTR, N);
    assert_non_null(ptrs);
    uint64_t st = 99;
    for (size_t i = 0; i < N; i++) {
        ptrs[i] = lev_alloc(m, arrs[i].type, arrs[i].count);
        assert_non_null(ptrs[i]);
        size_t n = lev_alloc_size(m, ptrs[i]);
        for (size_t k = 0; k < n; k++)
            ((uint8_t *)ptrs[i])[k] = (uint8_t)s_rand(&st);
    }
    a->raw = ptrs;
    uint8_t *img;
    size_t len;
    s_capture(vt, &img, &len);
    rt_vt *nvt = NULL;
    assert_int_equal(hw_restore_copy(m, img, len, &nvt), 0);
    free(img);
    void **q = ((struct hw_layout_task__frame *)rt_vt_bottom(nvt))->raw;
    assert_int_equal(lev_alloc_size(m, q), N * sizeof(void *));
    for (size_t i = 0; i < N; i++) {
        assert_ptr_not_equal(q[i], ptrs[i]);
        size_t n = lev_alloc_size(m, ptrs[i]);
        assert_int_equal(lev_alloc_size(m, q[i]), n);
        assert_memory_equal(q[i], ptrs[i], n);
    }
    rt_vt_destroy(&nvt);
    a->raw = NULL;
    rt_vt_destroy(&vt);
}

/* rt_image_info_get reports what was captured; a restored VT keeps the id
 * and epoch. */
static void t_image_info(void **state)
{
    (void)state;
    const lev_module *m = s_layout_mod();
    rt_vt *vt = s_layout_vt(1);
    vt->epoch = 7;
    struct hw_layout_task__frame *a = rt_vt_bottom(vt);
    uint8_t *img;
    size_t len;
    s_capture(vt, &img, &len);
    rt_image_info info;
    memset(&info, 0xEE, sizeof info);
    assert_int_equal(s_try_info(img, len, &info), 0);
    assert_int_equal(info.version, RT_IMAGE_VERSION);
    assert_true(info.module_hash == lev_module_hash(m));
    assert_true(info.vt_id == vt->id);
    assert_int_equal(info.epoch, 7);
    assert_int_equal(info.nframes, 1);
    assert_int_equal(info.nobjects, 1 + hw_layout_heap_objects());
    assert_true(info.live_bytes == hw_layout_live_bytes(a));

    rt_vt *nvt = NULL;
    assert_int_equal(hw_restore_copy(m, img, len, &nvt), 0);
    assert_true(nvt->id == vt->id);
    assert_int_equal(nvt->epoch, 7);
    assert_int_equal(nvt->entry, HW_LAYOUT_FN_TASK);
    rt_vt_destroy(&nvt);
    free(img);

    /* Deeper: frames are counted, bottom to top. */
    long n = 10;
    assert_int_equal(rt_vt_new(hw_fib_module(), HW_FIB_FN_FIB_TASK, &n, sizeof n, &nvt), 0);
    hw_stats st = {0};
    for (int k = 0; k < 10; k++) { /* fib(10), fib(9), ... fib(1): entry safe points */
        hw_force_unwind(nvt);
        assert_int_equal(rt_vt_step(nvt), LEV_RUN_UNWIND);
        nvt->want = 0;
        assert_int_equal(hw_cycle(nvt, &st), 0);
    }
    s_capture(nvt, &img, &len);
    assert_int_equal(s_try_info(img, len, &info), 0);
    assert_int_equal(info.nframes, 1 + 10);
    assert_int_equal(info.nobjects, 1 + 10 + 1);
    assert_true(info.vt_id == nvt->id);
    free(img);
    rt_vt_destroy(&nvt);
    rt_vt_destroy(&vt);
}

/* Captures vt and checks that it and its image carry id and epoch; the
 * caller owns *img (NULL img: the image is freed). */
static void s_expect_identity(rt_vt *vt, uint64_t id, uint32_t epoch, uint8_t **img, size_t *len)
{
    assert_true(vt->id == id);
    assert_int_equal(vt->epoch, epoch);
    uint8_t *p;
    size_t n;
    s_capture(vt, &p, &n);
    rt_image_info info;
    assert_int_equal(s_try_info(p, n, &info), 0);
    assert_true(info.vt_id == id);
    assert_int_equal(info.epoch, epoch);
    if (img) {
        *img = p;
        *len = n;
    } else {
        free(p);
    }
}

/* rt_vt_set_identity: refused for reserved ids, epoch 0, a running or
 * ended VT; images taken afterwards carry the id and epoch set; a VT
 * restored from an image keeps the image's until set again, and a
 * torture cycle keeps them. */
static void t_identity(void **state)
{
    (void)state;
    const lev_module *m = s_layout_mod();
    rt_vt *vt = s_layout_vt(1);
    uint64_t id0 = vt->id;
    assert_true(id0 >= RT_VT_ID_MIN);
    assert_int_equal(vt->epoch, 1);
    assert_int_equal(rt_vt_set_identity(NULL, 5, 1), LEV_EINVAL);
    assert_int_equal(rt_vt_set_identity(vt, 0, 1), LEV_EINVAL); /* LEV_ANY */
    assert_int_equal(rt_vt_set_identity(vt, 1, 1), LEV_EINVAL); /* LEV_CLIENT */
    assert_non_null(strstr(lev_errdetail(), "reserved"));
    assert_int_equal(rt_vt_set_identity(vt, 5, 0), LEV_EINVAL);
    assert_non_null(strstr(lev_errdetail(), "epoch"));
    vt->state = RT_VT_RUNNING;
    assert_int_equal(rt_vt_set_identity(vt, 5, 1), LEV_EINVAL);
    vt->state = RT_VT_RUNNABLE;
    assert_true(vt->id == id0); /* nothing changed by a refusal */
    assert_int_equal(vt->epoch, 1);

    const uint64_t id = 0x0123456789ABCDEFull;
    assert_int_equal(rt_vt_set_identity(vt, id, 9), 0);
    uint8_t *img;
    size_t len;
    s_expect_identity(vt, id, 9, &img, &len);

    /* Restored: the image's identity, until set again. */
    rt_vt *nvt = NULL;
    assert_int_equal(hw_restore_copy(m, img, len, &nvt), 0);
    free(img);
    assert_true(nvt->id == id);
    assert_int_equal(nvt->epoch, 9);
    assert_true(nvt->key != vt->key);
    assert_int_equal(rt_vt_set_identity(nvt, id, 10), 0); /* a new incarnation */
    s_expect_identity(nvt, id, 10, NULL, NULL);
    assert_int_equal(rt_vt_set_identity(nvt, 77, 2), 0);
    hw_stats st = {0};
    assert_int_equal(hw_cycle(nvt, &st), 0); /* capture, poison, restore in place */
    s_expect_identity(nvt, 77, 2, NULL, NULL);

    /* Run to its end: an ended VT's identity is not set. */
    assert_int_equal(hw_run_straight(nvt, &st), LEV_RUN_DONE);
    assert_int_equal(nvt->state, RT_VT_DONE);
    assert_int_equal(rt_vt_set_identity(nvt, 78, 3), LEV_EINVAL);
    assert_true(nvt->id == 77);
    rt_vt_destroy(&nvt);
    rt_vt_destroy(&vt);
}

/* A VT holding large arrays: the image is at most 1.1 times its live bytes. */
static void t_image_size_bulk(void **state)
{
    (void)state;
    rt_vt *vt = s_layout_vt(64);
    struct hw_layout_task__frame *a = rt_vt_bottom(vt);
    uint64_t live = hw_layout_live_bytes(a);
    assert_true(live > 1000000);
    uint8_t *img;
    size_t len;
    s_capture(vt, &img, &len);
    rt_image_info info;
    assert_int_equal(s_try_info(img, len, &info), 0);
    assert_true(info.live_bytes == live);
    if (len * 10 > live * 11)
        fail_msg("image of %zu bytes for %llu live bytes", len, (unsigned long long)live);
    rt_vt *nvt = NULL;
    assert_int_equal(hw_restore_copy(s_layout_mod(), img, len, &nvt), 0);
    char why[128];
    if (!hw_layout_equal(a, rt_vt_bottom(nvt), why, sizeof why))
        fail_msg("restored graph differs: %s", why);
    free(img);
    rt_vt_destroy(&nvt);
    rt_vt_destroy(&vt);
}

/* ===================================================================
 * State that cannot be captured
 * =================================================================== */

/* Expects rt_capture to fail with LEV_ECAPTURE and a detail holding every
 * word; returns the number of missing words (printed). */
static int s_expect_ecapture(rt_vt *vt, const char *const *words)
{
    uint8_t *img = NULL;
    size_t len = 0;
    rt_err_clear();
    int rc = rt_capture(vt, &img, &len);
    if (rc != LEV_ECAPTURE) {
        print_error("rt_capture gave %d, not LEV_ECAPTURE\n", rc);
        free(rc == 0 ? img : NULL);
        return 1;
    }
    int missing = 0;
    const char *d = lev_errdetail();
    for (; *words; words++)
        if (!strstr(d, *words)) {
            print_error("detail \"%s\" does not name \"%s\"\n", d, *words);
            missing++;
        }
    return missing;
}

static void s_capture_ok(rt_vt *vt)
{
    uint8_t *img;
    size_t len;
    s_capture(vt, &img, &len);
    free(img);
}

static void s_test_function(void) {}

/* A frame variable pointing into the C library's heap or the test's stack,
 * a heap field pointing into the C library's heap, a pointer to a GC block
 * that is no VT object, and a function pointer outside the module: capture
 * fails with LEV_ECAPTURE and names the function (or type) and variable. */
static void t_capture_unencodable(void **state)
{
    (void)state;
    rt_vt *vt = s_layout_vt(1);
    struct hw_layout_task__frame *f = rt_vt_bottom(vt);

    int bad = 0;
    char *buf = malloc(64);
    assert_non_null(buf);
    f->raw = buf + 8;
    bad += s_expect_ecapture(vt, WORDS("hw_layout_task", "raw"));
    f->raw = NULL;
    free(buf);

    char stack_buf[32];
    f->raw = stack_buf;
    bad += s_expect_ecapture(vt, WORDS("hw_layout_task", "raw"));
    f->raw = NULL;

    void *gc_block = GC_MALLOC(64);
    assert_non_null(gc_block);
    memset(gc_block, 0, 64);
    f->raw = gc_block;
    bad += s_expect_ecapture(vt, WORDS("hw_layout_task", "raw"));
    f->raw = NULL;

    uint64_t *lib = malloc(16);
    assert_non_null(lib);
    uint64_t *saved = f->shapes[5].pval;
    f->shapes[5].pval = lib;
    bad += s_expect_ecapture(vt, WORDS("struct hw_shape", "pval"));
    f->shapes[5].pval = saved;
    free(lib);

    f->hook = s_test_function;
    bad += s_expect_ecapture(vt, WORDS("hw_layout_task", "hook"));
    f->hook = hw_layout_nop;
    assert_int_equal(bad, 0);

    /* Put right, it captures and finishes. */
    s_capture_ok(vt);
    hw_stats st = {0};
    assert_int_equal(hw_run_straight(vt, &st), LEV_RUN_DONE);
    rt_vt_destroy(&vt);
}

/* Bad arguments and a running VT. */
static void t_capture_restore_arguments(void **state)
{
    (void)state;
    rt_vt *vt = s_layout_vt(1);
    uint8_t *img;
    size_t len;
    assert_int_equal(rt_capture(NULL, &img, &len), LEV_EINVAL);
    assert_int_equal(rt_capture(vt, NULL, &len), LEV_EINVAL);
    assert_int_equal(rt_capture(vt, &img, NULL), LEV_EINVAL);
    vt->state = RT_VT_RUNNING;
    assert_int_equal(rt_capture(vt, &img, &len), LEV_EBUSY);
    vt->state = RT_VT_RUNNABLE;
    s_capture(vt, &img, &len);
    rt_vt *nvt = NULL;
    assert_int_equal(rt_restore(NULL, img, len, &nvt), LEV_EINVAL);
    assert_int_equal(rt_restore(s_layout_mod(), NULL, len, &nvt), LEV_EINVAL);
    assert_int_equal(rt_restore(s_layout_mod(), img, len, NULL), LEV_EINVAL);
    assert_int_equal(rt_restore_into(NULL, img, len), LEV_EINVAL);
    assert_int_equal(rt_image_info_get(img, len, NULL), LEV_EINVAL);
    free(img);
    rt_vt_destroy(&vt);
}

/* ===================================================================
 * Damaged, truncated and foreign images
 * =================================================================== */

/* Truncated at every length of a small image and a sample of lengths of a
 * large one: LEV_EIMAGE, from restore and from info. */
static void t_truncated(void **state)
{
    (void)state;
    uint8_t *img;
    size_t len;
    rt_image_info info;
    s_small_image(&img, &len);
    for (size_t n = 0; n < len; n++) {
        int rc = s_try_restore(hw_fib_module(), img, n);
        if (rc != LEV_EIMAGE)
            fail_msg("truncated to %zu of %zu bytes: %d (%s)", n, len, rc, lev_errdetail());
        assert_int_equal(s_try_info(img, n, &info), LEV_EIMAGE);
    }
    assert_int_equal(s_try_restore(hw_fib_module(), img, len), 0);
    free(img);

    rt_vt *vt = s_layout_vt(4);
    s_capture(vt, &img, &len);
    rt_vt_destroy(&vt);
    size_t hs = s_header_len(img);
    for (size_t n = 0; n < len; n += (n < hs + 64 || n + 64 > len) ? 1 : 997) {
        int rc = s_try_restore(s_layout_mod(), img, n);
        if (rc != LEV_EIMAGE)
            fail_msg("truncated to %zu of %zu bytes: %d (%s)", n, len, rc, lev_errdetail());
    }
    free(img);
}

/* A flipped image must fail with LEV_EIMAGE, or LEV_EVERSION when the bit
 * is in the header (its format no longer reads as this one's); prints and
 * counts anything else. */
static unsigned s_flip_wrong(int rc, size_t bit, size_t len, size_t hs, const char *what)
{
    if (rc == LEV_EIMAGE || (rc == LEV_EVERSION && bit / 8 < hs))
        return 0;
    print_error("%s: flip of bit %zu of byte %zu (of %zu) gave %d: %s\n", what, bit % 8, bit / 8,
                len, rc, rc ? lev_errdetail() : "accepted");
    return 1;
}

/* Every single-bit flip of a small image fails with LEV_EIMAGE (or
 * LEV_EVERSION for a header whose format no longer reads as this one's). */
static void t_bit_flips_small(void **state)
{
    (void)state;
    uint8_t *img;
    size_t len;
    s_small_image(&img, &len);
    size_t hs = s_header_len(img);
    uint8_t *bad = malloc(len);
    assert_non_null(bad);
    unsigned wrong = 0;
    for (size_t bit = 0; bit < len * 8; bit++) {
        memcpy(bad, img, len);
        bad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        int rc = s_try_restore(hw_fib_module(), bad, len);
        wrong += s_flip_wrong(rc, bit, len, hs, "rt_restore");
        rt_image_info info;
        rc = s_try_info(bad, len, &info);
        wrong += s_flip_wrong(rc, bit, len, hs, "rt_image_info_get");
    }
    free(bad);
    free(img);
    assert_int_equal(wrong, 0);
}

/* A broad deterministic sample of single-bit flips of a larger image
 * (every bit of its header, a spread over the rest, bulk parts included). */
static void t_bit_flips_large(void **state)
{
    (void)state;
    rt_vt *vt = s_layout_vt(1);
    uint8_t *img;
    size_t len;
    s_capture(vt, &img, &len);
    rt_vt_destroy(&vt);
    size_t hs = s_header_len(img);
    uint8_t *bad = malloc(len);
    assert_non_null(bad);
    uint64_t st = 2024;
    unsigned wrong = 0;
    size_t nflips = hs * 8 + 1500;
    for (size_t k = 0; k < nflips; k++) {
        size_t bit = k < hs * 8 ? k : (size_t)(s_rand(&st) % (len * 8));
        memcpy(bad, img, len);
        bad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        int rc = s_try_restore(s_layout_mod(), bad, len);
        wrong += s_flip_wrong(rc, bit, len, hs, "rt_restore");
    }
    free(bad);
    free(img);
    assert_int_equal(wrong, 0);
}

/* A zeroed header, a zeroed image, garbage bytes and trailing bytes. */
static void t_garbage(void **state)
{
    (void)state;
    const lev_module *m = hw_fib_module();
    uint8_t *img;
    size_t len;
    s_small_image(&img, &len);
    size_t hs = s_header_len(img);
    uint8_t *bad = malloc(len * 2 + 1);
    assert_non_null(bad);

    memcpy(bad, img, len);
    memset(bad, 0, hs);
    assert_int_equal(s_try_restore(m, bad, len), LEV_EIMAGE);
    memset(bad, 0, len);
    assert_int_equal(s_try_restore(m, bad, len), LEV_EIMAGE);

    /* Extra bytes after a good image, and two images back to back. */
    memcpy(bad, img, len);
    bad[len] = 0;
    assert_int_equal(s_try_restore(m, bad, len + 1), LEV_EIMAGE);
    memcpy(bad + len, img, len);
    assert_int_equal(s_try_restore(m, bad, len * 2), LEV_EIMAGE);

    /* Random bytes, and random bytes behind a plausible tpl prefix. */
    uint64_t st = 7;
    for (size_t n = 0; n <= 2 * len; n += 3) {
        for (int pass = 0; pass < 2; pass++) {
            for (size_t i = 0; i < n; i++)
                bad[i] = (uint8_t)s_rand(&st);
            if (pass && n >= 8) {
                memcpy(bad, "tpl", 4);
                uint32_t sz = (uint32_t)(n < hs ? n : hs);
                memcpy(bad + 4, &sz, 4);
            }
            int rc = s_try_restore(m, bad, n);
            assert_true(rc == LEV_EIMAGE || rc == LEV_EVERSION);
        }
    }

    /* A well-formed tpl image of another format is not an image. */
    void *other = NULL;
    size_t olen = 0;
    int x = 42;
    assert_int_equal(tpl_jot(TPL_MEM, &other, &olen, "i", &x), 0);
    int rc = s_try_restore(m, other, olen);
    assert_true(rc == LEV_EVERSION || rc == LEV_EIMAGE);
    free(other);
    free(bad);
    free(img);
}

/* The version field patched (nothing recomputed): LEV_EVERSION or
 * LEV_EIMAGE, never a restore. */
static void t_foreign_version(void **state)
{
    (void)state;
    uint8_t *img;
    size_t len;
    s_small_image(&img, &len);
    size_t at = s_magic_at(img, len) + 4;
    assert_int_equal(s_rd32(img + at), RT_IMAGE_VERSION);
    static const uint32_t versions[] = {0, RT_IMAGE_VERSION + 1, 0xFFFFFFFFu, 0x01000001u};
    uint8_t *bad = malloc(len);
    assert_non_null(bad);
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
        memcpy(bad, img, len);
        for (int k = 0; k < 4; k++)
            bad[at + (size_t)k] = (uint8_t)(versions[i] >> (8 * k));
        int rc = s_try_restore(hw_fib_module(), bad, len);
        assert_true(rc == LEV_EVERSION || rc == LEV_EIMAGE);
        rt_image_info info;
        rc = s_try_info(bad, len, &info);
        assert_true(rc == LEV_EVERSION || rc == LEV_EIMAGE);
    }
    free(bad);
    free(img);
}

/* An image taken under one module and restored under another with a
 * different layout (same module name) or another module: LEV_EMODULE. */
static void t_wrong_module(void **state)
{
    (void)state;
    lev_module *alt = NULL;
    assert_int_equal(lev_module_register(&hw_layout_desc_alt, &alt), 0);
    assert_true(lev_module_hash(alt) != lev_module_hash(s_layout_mod()));
    rt_vt *vt = s_layout_vt(1);
    uint8_t *img;
    size_t len;
    s_capture(vt, &img, &len);
    assert_int_equal(s_try_restore(alt, img, len), LEV_EMODULE);
    assert_non_null(strstr(lev_errdetail(), "hw_layout"));
    assert_int_equal(s_try_restore(hw_fib_module(), img, len), LEV_EMODULE);
    assert_int_equal(s_try_restore(s_layout_mod(), img, len), 0);
    free(img);
    rt_vt_destroy(&vt);
}

/* A failed restore_into leaves the VT as it was; an image of another VT is
 * refused. */
static void t_restore_into_failure_keeps_vt(void **state)
{
    (void)state;
    long n = 40;
    rt_vt *vt, *other;
    assert_int_equal(rt_vt_new(hw_list_module(), HW_LIST_FN_TASK, &n, sizeof n, &vt), 0);
    assert_int_equal(rt_vt_new(hw_list_module(), HW_LIST_FN_TASK, &n, sizeof n, &other), 0);
    for (int k = 0; k < 50; k++) {
        hw_force_unwind(vt);
        assert_int_equal(rt_vt_step(vt), LEV_RUN_UNWIND);
        vt->want = 0;
    }
    hw_force_unwind(other);
    assert_int_equal(rt_vt_step(other), LEV_RUN_UNWIND);
    other->want = 0;
    uint8_t *img, *oimg;
    size_t len, olen;
    s_capture(vt, &img, &len);
    s_capture(other, &oimg, &olen);
    void *bottom = rt_vt_bottom(vt);

    rt_err_clear();
    assert_int_equal(hw_restore_into_copy(vt, oimg, olen), LEV_EIMAGE);
    assert_non_null(strstr(lev_errdetail(), "VT"));
    assert_int_equal(hw_restore_into_copy(vt, img, len - 1), LEV_EIMAGE);
    img[len / 2] ^= 0x10;
    assert_int_equal(hw_restore_into_copy(vt, img, len), LEV_EIMAGE);
    img[len / 2] ^= 0x10;
    assert_ptr_equal(rt_vt_bottom(vt), bottom);

    hw_stats st = {0};
    assert_int_equal(hw_run_straight(vt, &st), LEV_RUN_DONE);
    assert_int_equal(((struct hw_list_task__frame *)rt_vt_bottom(vt))->result, hw_list_ref(n));
    free(img);
    free(oimg);
    rt_vt_destroy(&vt);
    rt_vt_destroy(&other);
}

/* ===================================================================
 * Minimal cases
 * =================================================================== */

/* The tpl flags byte of the header (byte 3): tpl sets only its
 * byte-order bit for this format, so any other bit is damage. */
static void t_header_flags_bit_flip(void **state)
{
    (void)state;
    uint8_t *img;
    size_t len;
    s_small_image(&img, &len);
    assert_memory_equal(img, "tpl", 3);
    for (int bit = 1; bit < 8; bit++) {
        img[3] ^= (uint8_t)(1u << bit);
        int rc = s_try_restore(hw_fib_module(), img, len);
        if (rc != LEV_EIMAGE)
            fail_msg("flags bit %d flipped: %d (%s)", bit, rc, rc ? lev_errdetail() : "accepted");
        img[3] ^= (uint8_t)(1u << bit);
    }
    free(img);
}

/* The detail names the variable that holds the bad pointer, also when
 * the variables before it are pointers too (head, tail, cur, prev). */
static void t_capture_detail_names_variable(void **state)
{
    (void)state;
    long n = 4;
    rt_vt *vt;
    assert_int_equal(rt_vt_new(hw_list_module(), HW_LIST_FN_TASK, &n, sizeof n, &vt), 0);
    hw_force_unwind(vt);
    assert_int_equal(rt_vt_step(vt), LEV_RUN_UNWIND);
    vt->want = 0;
    struct hw_list_task__frame *f = rt_vt_bottom(vt);
    char *lib = malloc(8);
    assert_non_null(lib);
    f->prev = (struct hw_node *)(void *)lib;
    assert_int_equal(s_expect_ecapture(vt, WORDS("hw_list_task", "variable prev")), 0);
    f->prev = NULL;
    free(lib);
    rt_vt_destroy(&vt);
}

/* ===================================================================
 * Tagged unions (LEV_K_TAGGED): the tag selects what the image carries
 * =================================================================== */

/* A frame holding a tagged union (tag 1: a data pointer, 2: a number, 3:
 * a function pointer; any other value is listed nowhere) and a heap
 * object it may point into. */
struct s_tu_cell {
    uint8_t tag;
    union {
        char *p;
        long n;
        void (*f)(void);
    } u;
};

struct s_tu_frame {
    lev_task_frame t;
    struct s_tu_cell cell;
    char *buf;
};

enum { S_TU_T_FRAME = LEV_T_USER, S_TU_T_CELL, S_TU_T_TABLE };
enum { S_TU_FN_TASK, S_TU_FN_LEAF, S_TU_NFNS };

static const lev_module *s_tu_mod;

static void s_tu_leaf(void) {}

static int s_tu_run(lev_ctx *vt, void *frame)
{
    struct s_tu_frame *fr = frame;
    if (fr->t.h.pc == 1)
        return LEV_RUN_DONE;
    fr->buf = lev_alloc(s_tu_mod, LEV_T_BYTES, 16);
    if (!fr->buf) {
        lev_vt_fail(vt, LEV_ENOMEM, "no memory");
        return LEV_RUN_EXIT;
    }
    fr->cell.tag = 1;
    fr->cell.u.p = fr->buf + 3;
    if (lev_poll(vt) && lev_safepoint(vt, LEV_SP_CHECKPOINT)) {
        fr->t.h.pc = 1;
        return LEV_RUN_UNWIND;
    }
    return LEV_RUN_DONE;
}

static const lev_field_desc s_tu_frame_f[] = {
    {"arg", offsetof(struct s_tu_frame, t.arg), LEV_K_PTR, 1, 0},
    {"len", offsetof(struct s_tu_frame, t.len), LEV_K_B8, 1, 0},
    {"cell", offsetof(struct s_tu_frame, cell), LEV_K_REC, 1, S_TU_T_CELL},
    {"buf", offsetof(struct s_tu_frame, buf), LEV_K_PTR, 1, 0},
};
static const lev_field_desc s_tu_cell_f[] = {
    {"tag", offsetof(struct s_tu_cell, tag), LEV_K_B1, 1, 0},
    {"u", offsetof(struct s_tu_cell, u), LEV_K_TAGGED, 1, S_TU_T_TABLE},
};
static const lev_field_desc s_tu_table_f[] = {
    {"tag", (uint32_t)(0 - (int32_t)offsetof(struct s_tu_cell, u)), LEV_K_TAG, 1, 0},
    {"p", 1, LEV_K_PTR, 1, 0},
    {"n", 2, LEV_K_B1, 1, 0},
    {"f", 3, LEV_K_FNPTR, 1, 0},
};
static const lev_type_desc s_tu_types[] = {
    {"frame s_tu_task", sizeof(struct s_tu_frame), 4, s_tu_frame_f, _Alignof(struct s_tu_frame)},
    {"struct s_tu_cell", sizeof(struct s_tu_cell), 2, s_tu_cell_f, _Alignof(struct s_tu_cell)},
    {"tag table of struct s_tu_cell.u", 8, 4, s_tu_table_f, 0},
};
static const lev_fn_desc s_tu_fns[S_TU_NFNS] = {
    [S_TU_FN_TASK] = {"s_tu_task", NULL, s_tu_run, S_TU_T_FRAME, LEV_FN_TASK},
    [S_TU_FN_LEAF] = {"s_tu_leaf", s_tu_leaf, NULL, 0, 0},
};
static const lev_module_desc s_tu_desc = {
    LEV_ABI_VERSION, "test_image_tagged", 3, s_tu_types, S_TU_NFNS, s_tu_fns, 0, NULL};

/* A VT of the module stopped at its safe point, the union holding a
 * pointer into its heap object. */
static rt_vt *s_tu_vt(void)
{
    lev_module *m;
    if (lev_module_register(&s_tu_desc, &m))
        fail_msg("register: %s", lev_errdetail());
    s_tu_mod = m;
    long arg = 0;
    rt_vt *vt = NULL;
    if (rt_vt_new(m, S_TU_FN_TASK, &arg, sizeof arg, &vt))
        fail_msg("rt_vt_new: %s", lev_errdetail());
    hw_force_unwind(vt);
    assert_int_equal(rt_vt_step(vt), LEV_RUN_UNWIND);
    vt->want = 0;
    return vt;
}

/* The restored frame of vt's image (*out: the new VT). */
static struct s_tu_frame *s_tu_roundtrip(rt_vt *vt, rt_vt **out)
{
    uint8_t *img;
    size_t len;
    s_capture(vt, &img, &len);
    assert_int_equal(hw_restore_copy(s_tu_mod, img, len, out), 0);
    free(img);
    return rt_vt_bottom(*out);
}

/* Each tag value carries its member: the pointer relocated into the
 * restored object, the number and the function as they were. */
static void t_tagged_union_roundtrip(void **state)
{
    (void)state;
    rt_vt *vt = s_tu_vt(), *nvt = NULL;
    struct s_tu_frame *a = rt_vt_bottom(vt);
    struct s_tu_frame *b = s_tu_roundtrip(vt, &nvt);
    assert_ptr_not_equal(a->buf, b->buf);
    assert_int_equal(b->cell.tag, 1);
    assert_ptr_equal(b->cell.u.p, b->buf + 3);
    rt_vt_destroy(&nvt);

    a->cell.tag = 2;
    a->cell.u.n = -123456789012345L;
    b = s_tu_roundtrip(vt, &nvt);
    assert_true(b->cell.u.n == -123456789012345L);
    rt_vt_destroy(&nvt);

    a->cell.tag = 3;
    a->cell.u.f = s_tu_leaf;
    b = s_tu_roundtrip(vt, &nvt);
    assert_ptr_equal((void *)(uintptr_t)b->cell.u.f, (void *)(uintptr_t)s_tu_leaf);
    rt_vt_destroy(&nvt);

    /* a tag value listed nowhere, holding bytes that are no address */
    a->cell.tag = 9;
    a->cell.u.n = 0x5A5A5A5A5A5AL;
    b = s_tu_roundtrip(vt, &nvt);
    assert_int_equal(b->cell.tag, 9);
    assert_true(b->cell.u.n == 0x5A5A5A5A5A5AL);
    rt_vt_destroy(&nvt);
    rt_vt_destroy(&vt);
}

/* A tag value listed nowhere over the address of a heap object, or of a
 * function: never guessed, the capture fails naming the variable, the
 * offset and the tag; a tag that selects the pointer captures. */
static void t_tagged_union_unknown_tag(void **state)
{
    (void)state;
    rt_vt *vt = s_tu_vt();
    struct s_tu_frame *a = rt_vt_bottom(vt);
    a->cell.tag = 7;
    int bad = s_expect_ecapture(
        vt, WORDS("s_tu_task", "variable u", "offset 0", "value 7", "'tag'", "a heap object"));
    a->cell.u.f = s_tu_leaf;
    bad += s_expect_ecapture(vt, WORDS("s_tu_task", "variable u", "a function"));
    assert_int_equal(bad, 0);
    a->cell.tag = 1;
    a->cell.u.p = a->buf;
    s_capture_ok(vt);
    rt_vt_destroy(&vt);
}

/* ===================================================================
 * Re-sealed images: damage past the checksum
 *
 * The checksum catches any damage to the body, so the decoder's own checks
 * are reached only by an image whose checksum was computed after the
 * damage. These helpers re-seal an image: they read its header (a tpl
 * image "uuUUuuuuU#": magic, version, module hash, VT id, epoch, entry,
 * objects, frames, then a table of lengths holding the body length and,
 * right after it, the checksum) and recompute the checksum as image_format.c
 * documents it. A test first checks that re-sealing an intact image gives
 * it back byte for byte, and is skipped if the format has moved on.
 * =================================================================== */

#define S_HDR_FMT "uuUUuuuuU#"
#define S_NLEN 16

typedef struct s_hdr {
    uint32_t magic, version;
    uint64_t module_hash, vt_id;
    uint32_t epoch, entry, nobj, nframes;
    uint64_t len[S_NLEN];
} s_hdr;

static inline uint64_t s_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int k = 7; k >= 0; k--)
        v = v << 8 | p[k];
    return v;
}

static inline uint64_t s_rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

#define S_P1 0x9E3779B185EBCA87ull
#define S_P2 0xC2B2AE3D27D4EB4Full

static uint64_t s_hash(const unsigned char *p, size_t n, uint64_t seed)
{
    uint64_t a = seed + S_P1, b = seed ^ S_P2, c = seed, d = seed - S_P1;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        a = s_rotl(a + s_le64(p + i) * S_P2, 31) * S_P1;
        b = s_rotl(b + s_le64(p + i + 8) * S_P2, 31) * S_P1;
        c = s_rotl(c + s_le64(p + i + 16) * S_P2, 31) * S_P1;
        d = s_rotl(d + s_le64(p + i + 24) * S_P2, 31) * S_P1;
    }
    uint64_t h = s_rotl(a, 1) + s_rotl(b, 7) + s_rotl(c, 12) + s_rotl(d, 18) + n;
    for (; i + 8 <= n; i += 8)
        h = s_rotl(h ^ (s_le64(p + i) * S_P2), 27) * S_P1;
    for (; i < n; i++)
        h = s_rotl(h ^ (p[i] * S_P1), 11) * S_P2;
    h ^= h >> 33;
    h *= S_P2;
    h ^= h >> 29;
    return h;
}

/* Reads the header; returns its size and the index of the checksum in the
 * length table, or 0 if the header is not of the expected shape. */
static size_t s_hdr_read(const uint8_t *img, size_t len, s_hdr *h, int *sum_at)
{
    size_t hs = s_header_len(img);
    if (hs > len)
        return 0;
    char *f = tpl_peek(TPL_MEM, img, hs);
    int same = f && strcmp(f, S_HDR_FMT) == 0;
    free(f);
    uint32_t nfx = 0, *fx = NULL;
    f = tpl_peek(TPL_MEM | TPL_FXLENS, img, hs, &nfx, &fx);
    same = same && f && nfx == 1 && fx[0] == S_NLEN;
    free(f);
    free(fx);
    if (!same)
        return 0;
    memset(h, 0, sizeof *h);
    tpl_node *tn = tpl_map(S_HDR_FMT, &h->magic, &h->version, &h->module_hash, &h->vt_id, &h->epoch,
                           &h->entry, &h->nobj, &h->nframes, h->len, S_NLEN);
    int ok = tn && tpl_load(tn, TPL_MEM, img, hs) == 0 && tpl_unpack(tn, 0) == 1;
    if (tn)
        tpl_free(tn);
    if (!ok)
        return 0;
    for (int i = 0; i + 1 < S_NLEN; i++)
        if (h->len[i] == len - hs) {
            *sum_at = i + 1;
            return hs;
        }
    return 0;
}

static void s_hdr_write(uint8_t *img, size_t hs, s_hdr *h)
{
    tpl_node *tn = tpl_map(S_HDR_FMT, &h->magic, &h->version, &h->module_hash, &h->vt_id, &h->epoch,
                           &h->entry, &h->nobj, &h->nframes, h->len, S_NLEN);
    assert_non_null(tn);
    assert_int_equal(tpl_pack(tn, 0), 0);
    assert_int_equal(tpl_dump(tn, TPL_MEM | TPL_PREALLOCD, img, hs), 0);
    tpl_free(tn);
}

static uint64_t s_checksum(const s_hdr *h, int sum_at, const uint8_t *body, size_t n)
{
    uint64_t v[6 + S_NLEN] = {h->magic, h->version, h->module_hash,
                              h->vt_id, h->epoch,   ((uint64_t)h->entry << 32) | h->nobj};
    v[5] ^= (uint64_t)h->nframes << 16;
    for (int i = 0; i < S_NLEN; i++)
        v[6 + i] = i == sum_at ? 0 : h->len[i];
    unsigned char buf[8 * (6 + S_NLEN)];
    for (size_t i = 0; i < 6 + S_NLEN; i++)
        for (int k = 0; k < 8; k++)
            buf[i * 8 + k] = (unsigned char)(v[i] >> (8 * k));
    return s_hash(body, n, s_hash(buf, sizeof buf, 0x4C4556));
}

/* Gives the image (whose header may have been edited in h) a checksum
 * that matches its body. */
static void s_reseal(uint8_t *img, size_t len, size_t hs, s_hdr *h, int sum_at)
{
    h->len[sum_at] = s_checksum(h, sum_at, img + hs, len - hs);
    s_hdr_write(img, hs, h);
}

/* Skips the test unless re-sealing reproduces an intact image exactly. */
static size_t s_reseal_usable(const uint8_t *img, size_t len, s_hdr *h, int *sum_at)
{
    size_t hs = s_hdr_read(img, len, h, sum_at);
    if (hs) {
        uint8_t *copy = malloc(len);
        assert_non_null(copy);
        memcpy(copy, img, len);
        s_hdr h2 = *h;
        s_reseal(copy, len, hs, &h2, *sum_at);
        int same = memcmp(copy, img, len) == 0;
        free(copy);
        if (same)
            return hs;
    }
    print_message("the image format no longer matches this test's re-sealing; skipped\n");
    skip();
    return 0;
}

/* Re-seals a damaged copy and restores it: any code, never a crash or a
 * read outside the image; a failure has a detail. */
static int s_try_resealed(const lev_module *m, uint8_t *img, size_t len, size_t hs, s_hdr *h,
                          int sum_at)
{
    s_reseal(img, len, hs, h, sum_at);
    int rc = s_try_restore(m, img, len);
    assert_true(rc <= 0);
    return rc;
}

/* Header fields and stream tables that lie (with a valid checksum): a
 * stream whose item count differs from its part's must fail cleanly. */
static void t_resealed_count_mismatch(void **state)
{
    (void)state;
    uint8_t *img;
    size_t len;
    s_small_image(&img, &len);
    s_hdr h;
    int sum_at;
    size_t hs = s_reseal_usable(img, len, &h, &sum_at);
    uint8_t *bad = malloc(len);
    assert_non_null(bad);
    /* The object table's item count (the first length) one group short. */
    memcpy(bad, img, len);
    s_hdr h2 = h;
    assert_true(h2.len[0] >= 8);
    h2.len[0] -= 4;
    assert_int_equal(s_try_resealed(hw_fib_module(), bad, len, hs, &h2, sum_at), LEV_EIMAGE);
    /* Every other non-empty stream one item short. */
    for (int i = 2; i + 1 < sum_at - 1; i += 2) {
        if (h.len[i] == 0)
            continue;
        memcpy(bad, img, len);
        h2 = h;
        h2.len[i]--;
        assert_int_equal(s_try_resealed(hw_fib_module(), bad, len, hs, &h2, sum_at), LEV_EIMAGE);
    }
    free(bad);
    free(img);
}

/* Single-bit damage past the checksum, everywhere in the body of a small
 * image and of a VT mid-way through a linked list, a sample over an image
 * with bulk objects, and edits of every header field: the decoder's own
 * checks must hold. */
static void s_fuzz_resealed(const lev_module *m, const uint8_t *img, size_t len, size_t step,
                            uint64_t seed, unsigned *nok, unsigned *nbad)
{
    s_hdr h;
    int sum_at;
    size_t hs = s_reseal_usable(img, len, &h, &sum_at);
    uint8_t *bad = malloc(len);
    assert_non_null(bad);
    uint64_t st = seed;
    for (size_t bit = hs * 8; bit < len * 8; bit += step) {
        size_t b = step == 1 ? bit : hs * 8 + (size_t)(s_rand(&st) % ((len - hs) * 8));
        memcpy(bad, img, len);
        bad[b / 8] ^= (uint8_t)(1u << (b % 8));
        s_hdr h2 = h;
        if (s_try_resealed(m, bad, len, hs, &h2, sum_at) == 0)
            ++*nok;
        else
            ++*nbad;
    }
    for (int k = 0; k < 1500; k++) {
        memcpy(bad, img, len);
        s_hdr h2 = h;
        int field = (int)(s_rand(&st) % (4 + S_NLEN));
        uint64_t mask = s_rand(&st) % 4 ? 1ull << (s_rand(&st) % 64) : s_rand(&st);
        switch (field) {
        case 0: /* small changes only: huge counts are t_resealed_object_count_bounded's */
            h2.nobj ^= (uint32_t)mask & 0xFFFFu;
            break;
        case 1:
            h2.nframes ^= (uint32_t)mask;
            break;
        case 2:
            h2.entry ^= (uint32_t)mask;
            break;
        case 3:
            h2.epoch ^= (uint32_t)mask;
            break;
        default:
            if (field - 4 == sum_at || field - 4 == sum_at - 1)
                continue;
            h2.len[field - 4] ^= mask;
        }
        if (s_try_resealed(m, bad, len, hs, &h2, sum_at) == 0)
            ++*nok;
        else
            ++*nbad;
    }
    free(bad);
}

/* An image that claims more objects than its object table lists fails
 * before memory in proportion to the claim is allocated: a few hundred
 * bytes must not make the process allocate tens of megabytes (or, with a
 * larger claim, gigabytes). */
static void t_resealed_object_count_bounded(void **state)
{
    (void)state;
    uint8_t *img;
    size_t len;
    s_small_image(&img, &len);
    s_hdr h;
    int sum_at;
    size_t hs = s_reseal_usable(img, len, &h, &sum_at);
    h.nobj += 1u << 22;
    size_t before = GC_get_heap_size();
    int rc = s_try_resealed(hw_fib_module(), img, len, hs, &h, sum_at);
    size_t grew = GC_get_heap_size() - before;
    free(img);
    assert_int_equal(rc, LEV_EIMAGE);
    if (grew > ((size_t)8 << 20))
        fail_msg("a %zu-byte image claiming %u objects grew the heap by %zu MiB", len, h.nobj,
                 grew >> 20);

    /* A bulk object whose element count in the object table (first part,
     * "u#": groups of kind|flags<<8, type, count, repeat) is inflated. */
    rt_vt *vt = s_layout_vt(1);
    s_capture(vt, &img, &len);
    rt_vt_destroy(&vt);
    hs = s_reseal_usable(img, len, &h, &sum_at);
    char *fmt = tpl_peek(TPL_MEM, img + hs, (size_t)s_rd32(img + hs + 4));
    int is_meta = fmt && strcmp(fmt, "u#") == 0;
    free(fmt);
    if (!is_meta)
        skip();
    uint8_t *words = img + hs + 15; /* "tpl", flags, size, "u#", one array length */
    uint32_t nwords = s_rd32(img + hs + 11), patched = 0;
    for (uint32_t g = 0; g + 4 <= nwords; g += 4) {
        if (s_rd32(words + 4 * g) == (2u | 1u << 8) && s_rd32(words + 4 * (g + 1)) == LEV_T_U64) {
            uint32_t count = 1u << 24; /* 128 MiB of u64 */
            memcpy(words + 4 * (g + 2), &count, 4);
            patched++;
        }
    }
    assert_int_equal(patched, 1);
    before = GC_get_heap_size();
    rc = s_try_resealed(s_layout_mod(), img, len, hs, &h, sum_at);
    grew = GC_get_heap_size() - before;
    free(img);
    assert_int_equal(rc, LEV_EIMAGE);
    if (grew > ((size_t)8 << 20))
        fail_msg("a %zu-byte image with an inflated bulk count grew the heap by %zu MiB", len,
                 grew >> 20);
}

static void t_resealed_fuzz(void **state)
{
    (void)state;
    unsigned nok = 0, nbad = 0;
    uint8_t *img;
    size_t len;
    s_small_image(&img, &len);
    s_fuzz_resealed(hw_fib_module(), img, len, 1, 1, &nok, &nbad);
    free(img);

    long n = 12;
    rt_vt *vt;
    assert_int_equal(rt_vt_new(hw_list_module(), HW_LIST_FN_TASK, &n, sizeof n, &vt), 0);
    for (int k = 0; k < 16; k++) {
        hw_force_unwind(vt);
        assert_int_equal(rt_vt_step(vt), LEV_RUN_UNWIND);
        vt->want = 0;
    }
    s_capture(vt, &img, &len);
    rt_vt_destroy(&vt);
    s_fuzz_resealed(hw_list_module(), img, len, 1, 2, &nok, &nbad);
    free(img);

    vt = s_layout_vt(1);
    s_capture(vt, &img, &len);
    rt_vt_destroy(&vt);
    s_fuzz_resealed(s_layout_mod(), img, len, 61, 3, &nok, &nbad);
    free(img);
    /* Most damage is caught; some (a flipped scalar) is a valid image. */
    assert_true(nbad > 0);
    assert_true(nok > 0);
}

/* ===================================================================
 * Runner
 * =================================================================== */

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_roundtrip_every_field),
        cmocka_unit_test(t_roundtrip_bulk_threshold),
        cmocka_unit_test(t_image_info),
        cmocka_unit_test(t_identity),
        cmocka_unit_test(t_image_size_bulk),
        cmocka_unit_test(t_capture_unencodable),
        cmocka_unit_test(t_capture_restore_arguments),
        cmocka_unit_test(t_truncated),
        cmocka_unit_test(t_bit_flips_small),
        cmocka_unit_test(t_bit_flips_large),
        cmocka_unit_test(t_garbage),
        cmocka_unit_test(t_foreign_version),
        cmocka_unit_test(t_wrong_module),
        cmocka_unit_test(t_restore_into_failure_keeps_vt),
        cmocka_unit_test(t_header_flags_bit_flip),
        cmocka_unit_test(t_capture_detail_names_variable),
        cmocka_unit_test(t_tagged_union_roundtrip),
        cmocka_unit_test(t_tagged_union_unknown_tag),
        cmocka_unit_test(t_resealed_object_count_bounded),
        /* Last: with AddressSanitizer, a failure here ends the runner. */
        cmocka_unit_test(t_resealed_count_mismatch),
        cmocka_unit_test(t_resealed_fuzz),
    };
    return cmocka_run_group_tests_name("image", tests, NULL, NULL);
}
