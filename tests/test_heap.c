/* test_heap.c - the VT heap: zeroed typed allocation, objects that survive
 * a collection when the only reference is in a frame or in another heap
 * object (and only then), lev_free and lev_realloc of VT objects and of
 * the C library's memory, reuse of freed small objects, lev_strdup,
 * lev_alloc_size, and overflow.
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

#include "heap.h"
#include "hw/hw_drive.h"
#include "hw/hw_layout.h"
#include "hw/hw_list.h"
#include "image.h"
#include "vt.h"

#if defined(__SANITIZE_ADDRESS__)
/* From the AddressSanitizer runtime (sanitizer/allocator_interface.h,
 * which not every compiler installs). */
size_t __sanitizer_get_current_allocated_bytes(void);
#else
#include <malloc.h>
#endif

/* Bytes of the C library's heap in use. */
static size_t S_MALLOC_IN_USE(void)
{
#if defined(__SANITIZE_ADDRESS__)
    return __sanitizer_get_current_allocated_bytes();
#else
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
#endif
}

static const lev_module *s_mod(void)
{
    const lev_module *m = hw_layout_module();
    if (!m)
        fail_msg("hw_layout: %s", lev_errdetail());
    return m;
}

static const lev_module *s_list_mod(void)
{
    const lev_module *m = hw_list_module();
    if (!m)
        fail_msg("hw_list: %s", lev_errdetail());
    return m;
}

/* A type whose GC bitmap takes more than one word: its pointer sits past
 * the first 64 words of the object. */
struct s_big {
    long pad[80];
    struct s_big *p;
    long tail;
};

static const lev_field_desc s_big_fields[] = {
    {"pad", offsetof(struct s_big, pad), LEV_K_B8, 80, 0},
    {"p", offsetof(struct s_big, p), LEV_K_PTR, 1, 0},
    {"tail", offsetof(struct s_big, tail), LEV_K_B8, 1, 0},
};
static const lev_type_desc s_big_types[] = {
    {"struct s_big", sizeof(struct s_big), 3, s_big_fields, _Alignof(struct s_big)},
};
static const lev_module_desc s_big_desc = {
    LEV_ABI_VERSION, "heap_big", 1, s_big_types, 0, NULL, 0, NULL};
#define T_BIG LEV_T_USER

static const lev_module *s_big_mod(void)
{
    lev_module *m = NULL;
    if (lev_module_register(&s_big_desc, &m) != 0)
        fail_msg("heap_big: %s", lev_errdetail());
    return m;
}

static int s_all_zero(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return 0;
    return 1;
}

/* ===================================================================
 * Allocation
 * =================================================================== */

/* Every kind of object comes back zeroed, also when its memory was just
 * freed dirty, and lev_alloc_size reports the requested size. */
static void t_alloc_zeroes(void **state)
{
    (void)state;
    const lev_module *m = s_mod();
    static const struct {
        uint32_t type;
        size_t count;
        size_t elem;
    } cases[] = {
        {LEV_T_BYTES, 1, 1},
        {LEV_T_BYTES, 100, 1},
        {LEV_T_BYTES, 70000, 1},
        {LEV_T_U16, 33, 2},
        {LEV_T_U32, 1000, 4},
        {LEV_T_U64, 3, 8},
        {LEV_T_PTR, 1, sizeof(void *)},
        {LEV_T_PTR, 50, sizeof(void *)},
        {LEV_T_FNPTR, 4, sizeof(void (*)(void))},
        {HW_LAYOUT_T_SCALARS, 1, sizeof(struct hw_scalars)},
        {HW_LAYOUT_T_SHAPE, 1, sizeof(struct hw_shape)},
        {HW_LAYOUT_T_SHAPE, 9, sizeof(struct hw_shape)},
        {HW_LAYOUT_T_F64, 600, sizeof(double)},
    };
    for (int round = 0; round < 3; round++) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            size_t n = cases[i].count * cases[i].elem;
            unsigned char *p = lev_alloc(m, cases[i].type, cases[i].count);
            assert_non_null(p);
            assert_int_equal(lev_alloc_size(m, p), n);
            if (!s_all_zero(p, n))
                fail_msg("round %d: object of type %u x %zu is not zeroed", round, cases[i].type,
                         cases[i].count);
            memset(p, 0xC3, n); /* dirty, then free: the next round reuses it */
            lev_free(p);
        }
    }
}

/* count * size overflow, counts past the 32-bit limit, unknown types and
 * a missing module: NULL, never a short object. */
static void t_alloc_overflow(void **state)
{
    (void)state;
    const lev_module *m = s_mod();
    assert_null(lev_alloc(m, LEV_T_U64, SIZE_MAX / 4));
    assert_null(lev_alloc(m, LEV_T_U64, (SIZE_MAX / 8) + 2)); /* wraps to a small size */
    assert_null(lev_alloc(m, HW_LAYOUT_T_SHAPE, SIZE_MAX / sizeof(struct hw_shape) + 1));
    assert_null(lev_alloc(m, LEV_T_BYTES, (size_t)UINT32_MAX + 1));
    assert_null(lev_alloc(m, LEV_T_U32, ((size_t)1 << 62) + 1)); /* * 4 wraps to 4 */
    assert_null(lev_alloc(m, HW_LAYOUT_T_SHAPE, (size_t)UINT32_MAX / 100));
    assert_null(lev_alloc(m, HW_LAYOUT_NTYPES_END, 1));
    assert_null(lev_alloc(m, LEV_T_UNTYPED + 1, 1)); /* a reserved built-in id */
    assert_null(lev_alloc(m, 0xFFFFFFFFu, 1));
    assert_null(lev_alloc(NULL, LEV_T_BYTES, 1));
    void *p = lev_alloc(m, LEV_T_U64, 4);
    assert_non_null(p);
    assert_null(lev_realloc(m, p, LEV_T_U64, SIZE_MAX / 4));
    assert_int_equal(lev_alloc_size(m, p), 32); /* the old object is untouched */
    lev_free(p);
}

/* lev_alloc_size: requested bytes of an object, 0 for anything else. */
static void t_alloc_size(void **state)
{
    (void)state;
    const lev_module *m = s_mod();
    struct hw_shape *s = lev_alloc(m, HW_LAYOUT_T_SHAPE, 7);
    assert_non_null(s);
    assert_int_equal(lev_alloc_size(m, s), 7 * sizeof *s);
    assert_int_equal(lev_alloc_size(m, &s[1]), 0); /* interior */
    assert_int_equal(lev_alloc_size(m, NULL), 0);
    char *lib = malloc(16);
    assert_non_null(lib);
    assert_int_equal(lev_alloc_size(m, lib), 0);
    free(lib);
    char local[8];
    assert_int_equal(lev_alloc_size(m, local), 0);
    void *gc = GC_MALLOC(32); /* a GC block that is no VT object */
    assert_non_null(gc);
    memset(gc, 0, 32);
    assert_int_equal(lev_alloc_size(m, gc), 0);
    void *zero = lev_alloc(m, LEV_T_U64, 0);
    assert_non_null(zero);
    assert_int_equal(lev_alloc_size(m, zero), 0);
    lev_free(zero);
    lev_free(s);
}

static void t_strdup(void **state)
{
    (void)state;
    const lev_module *m = s_mod();
    char *d = lev_strdup(m, "leverage");
    assert_non_null(d);
    assert_string_equal(d, "leverage");
    assert_int_equal(lev_alloc_size(m, d), 9);
    char *e = lev_strdup(m, "");
    assert_non_null(e);
    assert_string_equal(e, "");
    assert_int_equal(lev_alloc_size(m, e), 1);
    char big[5000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    char *f = lev_strdup(m, big);
    assert_non_null(f);
    assert_string_equal(f, big);
    assert_ptr_not_equal(f, big);
    lev_free(d);
    lev_free(e);
    lev_free(f);
}

/* ===================================================================
 * Collection
 * =================================================================== */

/* Disappearing links record whether a collection reclaimed an object
 * without holding a reference to it. */
enum { S_NLINKS = 64 };
static GC_hidden_pointer s_links[S_NLINKS];

static void s_watch(int i, void *obj)
{
    s_links[i] = GC_HIDE_POINTER(GC_base(obj));
    assert_int_equal(GC_general_register_disappearing_link((void **)&s_links[i], GC_base(obj)),
                     GC_SUCCESS);
}

static int s_alive(int i) { return s_links[i] != 0; }

/* Overwrites the stack below the caller, so that stale copies of pointers
 * in dead frames do not keep objects alive (the collector scans stacks
 * conservatively). */
static __attribute__((noinline)) void s_clear_stack(void)
{
    volatile char junk[16384];
    memset((char *)junk, 0, sizeof junk);
}

static void s_collect(void)
{
    s_clear_stack();
    GC_gcollect();
    GC_gcollect();
}

struct s_roots {
    struct hw_list_task__frame *frame;
    struct hw_node *heap_only; /* reached only through a heap object */
};

/* Builds, in a frame that returns before the collection, a list whose head
 * only the VT frame holds, a chain of typed objects, an array of pointers
 * and an object reached only through an interior pointer; and objects that
 * nothing references (they must go). Links 0.. watch the kept objects,
 * links 32.. the garbage. */
static __attribute__((noinline)) void s_build(rt_vt *vt, int *nkept, int *ngarbage)
{
    const lev_module *m = s_list_mod();
    struct hw_list_task__frame *f = rt_vt_bottom(vt);
    int k = 0, g = 32;
    /* A list of 8 typed nodes hanging from a frame field. */
    for (int i = 0; i < 8; i++) {
        struct hw_node *n = lev_alloc(m, HW_LIST_T_NODE, 1);
        assert_non_null(n);
        n->v = 1000 + i;
        n->next = f->head;
        f->head = n;
        s_watch(k++, n);
    }
    /* An array of pointers (LEV_T_PTR) in a frame field, to nodes. */
    void **arr = lev_alloc(m, LEV_T_PTR, 5);
    assert_non_null(arr);
    for (int i = 0; i < 5; i++) {
        struct hw_node *n = lev_alloc(m, HW_LIST_T_NODE, 1);
        assert_non_null(n);
        n->v = 2000 + i;
        arr[i] = n;
        s_watch(k++, n);
    }
    f->cur = (struct hw_node *)(void *)arr; /* any data pointer slot will do */
    s_watch(k++, arr);
    /* A node reached only through an interior pointer (&node->next). */
    struct hw_node *in = lev_alloc(m, HW_LIST_T_NODE, 1);
    assert_non_null(in);
    in->v = 3000;
    f->tail = &in->next;
    s_watch(k++, in);
    /* Typed objects with a multi-word bitmap: frame -> big -> big. */
    struct s_big *b1 = lev_alloc(s_big_mod(), T_BIG, 1), *b2 = lev_alloc(s_big_mod(), T_BIG, 1);
    assert_non_null(b1);
    assert_non_null(b2);
    b1->p = b2;
    b1->tail = 41;
    b2->tail = 42;
    f->prev = (struct hw_node *)(void *)b1;
    s_watch(k++, b1);
    s_watch(k++, b2);
    /* Garbage: the same kinds of objects, referenced by nothing. */
    for (int i = 0; i < 24; i++) {
        void *p = i % 3 == 0   ? lev_alloc(m, HW_LIST_T_NODE, 1)
                  : i % 3 == 1 ? lev_alloc(m, LEV_T_PTR, 5)
                               : lev_alloc(m, LEV_T_BYTES, 100);
        assert_non_null(p);
        s_watch(g++, p);
    }
    *nkept = k;
    *ngarbage = g - 32;
}

/* Objects whose only reference is a frame field or a field of another heap
 * object survive full collections with their contents; unreferenced ones
 * are reclaimed (so the test can tell the difference). */
static void t_gc_keeps_reachable_objects(void **state)
{
    (void)state;
    const lev_module *m = s_list_mod();
    rt_vt *vt;
    void *frame;
    assert_int_equal(rt_vt_alloc(m, HW_LIST_FN_TASK, &vt, &frame), 0);
    int nkept = 0, ngarbage = 0;
    s_build(vt, &nkept, &ngarbage);
    s_collect();
    /* Churn: reused memory would overwrite anything wrongly reclaimed. */
    for (int i = 0; i < 2000; i++) {
        long *p = lev_alloc(m, HW_LIST_T_NODE, 1);
        assert_non_null(p);
        p[0] = -1;
        p[1] = -1;
    }
    s_collect();
    for (int i = 0; i < nkept; i++)
        if (!s_alive(i))
            fail_msg("reachable object %d was reclaimed", i);
    int gone = 0;
    for (int i = 32; i < 32 + ngarbage; i++)
        gone += !s_alive(i);
    if (gone < ngarbage / 2)
        fail_msg("only %d of %d unreachable objects were reclaimed", gone, ngarbage);

    struct hw_list_task__frame *f = rt_vt_bottom(vt);
    long v = 1007;
    for (struct hw_node *n = f->head; n; n = n->next, v--)
        assert_int_equal(n->v, v);
    assert_int_equal(v, 999);
    void **arr = (void **)(void *)f->cur;
    for (int i = 0; i < 5; i++)
        assert_int_equal(((struct hw_node *)arr[i])->v, 2000 + i);
    struct hw_node *in = (struct hw_node *)((char *)f->tail - offsetof(struct hw_node, next));
    assert_int_equal(in->v, 3000);
    struct s_big *b1 = (struct s_big *)(void *)f->prev;
    assert_int_equal(b1->tail, 41);
    assert_int_equal(b1->p->tail, 42);

    /* Once the frame lets go, they are reclaimed too. */
    f->head = NULL;
    f->cur = NULL;
    f->tail = NULL;
    f->prev = NULL;
    s_collect();
    int freed = 0;
    for (int i = 0; i < nkept; i++)
        freed += !s_alive(i);
    if (freed < nkept / 2)
        fail_msg("only %d of %d released objects were reclaimed", freed, nkept);
    for (int i = 0; i < S_NLINKS; i++)
        if (s_links[i])
            GC_unregister_disappearing_link((void **)&s_links[i]);
    rt_vt_destroy(&vt);
}

/* A restored VT's objects are kept by its frames alone as well. */
static void t_gc_keeps_restored_objects(void **state)
{
    (void)state;
    const lev_module *m = s_list_mod();
    long n = 30;
    rt_vt *vt;
    assert_int_equal(rt_vt_new(m, HW_LIST_FN_TASK, &n, sizeof n, &vt), 0);
    for (int k = 0; k < 31; k++) { /* the list is built; first safe point of the reversal */
        hw_force_unwind(vt);
        assert_int_equal(rt_vt_step(vt), LEV_RUN_UNWIND);
        vt->want = 0;
    }
    uint8_t *img;
    size_t len;
    assert_int_equal(rt_capture(vt, &img, &len), 0);
    rt_vt_destroy(&vt);
    assert_int_equal(hw_restore_copy(m, img, len, &vt), 0);
    free(img);
    s_collect();
    for (int i = 0; i < 3000; i++)
        assert_non_null(lev_alloc(m, LEV_T_BYTES, 48));
    s_collect();
    hw_stats st = {0};
    assert_int_equal(hw_run_straight(vt, &st), LEV_RUN_DONE);
    assert_int_equal(((struct hw_list_task__frame *)rt_vt_bottom(vt))->result, hw_list_ref(n));
    rt_vt_destroy(&vt);
}

/* ===================================================================
 * Free and realloc
 * =================================================================== */

/* lev_free returns a VT object's memory to the collector at once (a large
 * object shows in the free byte count), frees the C library's memory, and
 * ignores NULL and pointers into an object. */
/* Allocates 16 objects watched by links 48..63 and frees them (the first
 * also through an interior pointer and twice); nothing refers to them
 * once this returns. */
static __attribute__((noinline)) void s_alloc_and_free(const lev_module *m, size_t big)
{
    for (int i = 48; i < 64; i++) {
        uint8_t *p = lev_alloc(m, LEV_T_BYTES, big);
        assert_non_null(p);
        memset(p, 1, big);
        s_watch(i, p);
        if (i == 48) {
            lev_free(p + 10); /* interior: ignored */
            assert_int_equal(lev_alloc_size(m, p), big);
            assert_int_equal(p[big - 1], 1);
        }
        lev_free(p);
        assert_int_equal(lev_alloc_size(m, p), 0); /* no longer a live object */
        lev_free(p);                               /* a second free is ignored */
    }
}

static void t_free(void **state)
{
    (void)state;
    const lev_module *m = s_mod();
    size_t big = (size_t)1 << 20;
    lev_free(NULL);
    s_alloc_and_free(m, big);
    s_collect();
    /* The collector reclaims freed objects; a stale copy of a pointer in
     * a register or a dead stack slot may keep one or two (the stack is
     * scanned conservatively). */
    int alive = 0;
    for (int i = 48; i < 64; i++) {
        alive += s_alive(i);
        GC_unregister_disappearing_link((void **)&s_links[i]);
    }
    if (alive > 4)
        fail_msg("%d of 16 freed objects survived a collection", alive);

    /* Memory of the C library goes back to it. */
    size_t in_use = S_MALLOC_IN_USE();
    char *lib = malloc(big);
    assert_non_null(lib);
    memset(lib, 2, big);
    assert_true(S_MALLOC_IN_USE() >= in_use + big);
    lev_free(lib);
    assert_true(S_MALLOC_IN_USE() < in_use + big);

    /* And a small typed object. */
    struct hw_shape *s = lev_alloc(m, HW_LAYOUT_T_SHAPE, 1);
    assert_non_null(s);
    lev_free(s);
    assert_int_equal(lev_alloc_size(m, s), 0);
}

/* Frees 8 nodes that alone point to others, and an atomic buffer, out of
 * the caller's frame (no stale copies of the pointers stay there); links
 * 48.. watch the freed nodes, 56.. those they pointed to. */
static __attribute__((noinline)) void s_free_pairs(const lev_module *m, uintptr_t *last,
                                                   uintptr_t *buf)
{
    for (int i = 0; i < 8; i++) {
        struct hw_node *a = lev_alloc(m, HW_LIST_T_NODE, 1), *b = lev_alloc(m, HW_LIST_T_NODE, 1);
        assert_non_null(a);
        assert_non_null(b);
        a->v = 5;
        a->next = b;
        s_watch(48 + i, a);
        s_watch(56 + i, b);
        lev_free(a);
        assert_int_equal(lev_alloc_size(m, a), 0);
        *last = (uintptr_t)a;
    }
    char *s = lev_alloc(m, LEV_T_BYTES, 40);
    assert_non_null(s);
    memset(s, 0xC3, 40);
    lev_free(s);
    *buf = (uintptr_t)s;
}

/* A small object the program frees waits, still a freed object, for the
 * next allocation of its size and kind on the thread, which gets it back
 * cleared; meanwhile the collector keeps it, and it keeps nothing alive. */
static void t_free_recycles(void **state)
{
    (void)state;
    const lev_module *m = s_list_mod();
    uintptr_t last, buf;
    s_free_pairs(m, &last, &buf);
    s_collect();
    int kept = 0, pointed = 0;
    for (int i = 0; i < 8; i++) {
        kept += s_alive(48 + i);    /* kept for reuse */
        pointed += s_alive(56 + i); /* cleared when freed: they point nowhere */
        GC_unregister_disappearing_link((void **)&s_links[48 + i]);
        GC_unregister_disappearing_link((void **)&s_links[56 + i]);
    }
    assert_int_equal(kept, 8);
    /* A stale copy of a pointer in a register or a dead stack slot may
     * keep one or two (the stack is scanned conservatively). */
    if (pointed > 2)
        fail_msg("%d of 8 objects that only freed objects pointed to survived", pointed);

    struct hw_node *c = lev_alloc(m, HW_LIST_T_NODE, 1);
    assert_int_equal((uintptr_t)c, last);
    assert_true(s_all_zero(c, sizeof *c));
    assert_int_equal(lev_alloc_size(m, c), sizeof *c);
    char *t = lev_alloc(m, LEV_T_BYTES, 40);
    assert_int_equal((uintptr_t)t, buf);
    assert_true(s_all_zero(t, 40));
    assert_int_equal(lev_alloc_size(m, t), 40);
    lev_free(c);
    lev_free(t);

    /* A large object is taken back by an allocation of about its size. */
    enum { BIG = 70000 };
    char *big = lev_alloc(m, LEV_T_BYTES, BIG);
    assert_non_null(big);
    memset(big, 0xC3, BIG);
    lev_free(big);
    char *again = lev_alloc(m, LEV_T_BYTES, BIG - 100);
    assert_ptr_equal(again, big);
    assert_true(s_all_zero(again, BIG - 100));
    assert_int_equal(lev_alloc_size(m, again), BIG - 100);
    lev_free(again);
}

/* The allocation and free fast paths (an object of a size class taken
 * from and given back to the thread's bins): many objects of one class
 * freed (their bin grows past its first array) come back, each once, to
 * as many allocations of that class; scanned ones cleared, each with its
 * new header; freed ones are marked so until then, and a second free is
 * ignored. malloc through a hint (lev_malloc_hinted) takes the hint's
 * type for a whole number of elements and clears only what may hold
 * pointers; calloc clears everything. */
enum { S_FAST_N = 200 };

static int s_ptr_cmp(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

static void t_alloc_free_fast(void **state)
{
    (void)state;
    const lev_module *m = s_list_mod();
    static uintptr_t freed[S_FAST_N], got[S_FAST_N];
    for (int i = 0; i < S_FAST_N; i++) {
        struct hw_node *n = lev_alloc(m, HW_LIST_T_NODE, 1);
        assert_non_null(n);
        n->v = -1;
        n->next = n;
        freed[i] = (uintptr_t)n;
    }
    for (int i = 0; i < S_FAST_N; i++) {
        lev_free((void *)freed[i]);
        assert_int_equal(lev_alloc_size(m, (void *)freed[i]), 0);
        lev_free((void *)freed[i]); /* ignored */
    }
    for (int i = 0; i < S_FAST_N; i++) {
        struct hw_node *n = lev_alloc(m, HW_LIST_T_NODE, 1);
        assert_non_null(n);
        assert_true(s_all_zero(n, sizeof *n));
        assert_int_equal(lev_alloc_size(m, n), sizeof *n);
        got[i] = (uintptr_t)n;
    }
    qsort(freed, S_FAST_N, sizeof *freed, s_ptr_cmp);
    qsort(got, S_FAST_N, sizeof *got, s_ptr_cmp);
    assert_memory_equal(freed, got, sizeof freed);
    for (int i = 0; i < S_FAST_N; i++)
        lev_free((void *)got[i]);

    /* Hinted malloc of bytes: the freed buffer back, with its new size. */
    char *b = lev_alloc(m, LEV_T_BYTES, 24);
    assert_non_null(b);
    lev_free(b);
    lev_alloc_hint old = lev_hint_set(m, LEV_T_BYTES);
    char *b2 = lev_malloc_hinted(20);
    lev_hint_restore(old);
    assert_ptr_equal(b2, b);
    assert_int_equal(lev_alloc_size(m, b2), 20);
    memset(b2, 0xC3, 20);
    lev_free(b2);
    old = lev_hint_set(m, LEV_T_BYTES);
    char *b3 = lev_calloc_hinted(5, 4);
    lev_hint_restore(old);
    assert_ptr_equal(b3, b);
    assert_true(s_all_zero(b3, 20));
    lev_free(b3);

    /* Hinted malloc of nodes: typed, cleared (it holds a pointer). */
    struct hw_node *d = lev_alloc(m, HW_LIST_T_NODE, 2);
    assert_non_null(d);
    d[1].next = d;
    lev_free(d);
    old = lev_hint_set(m, HW_LIST_T_NODE);
    assert_int_equal(lev_hint_set(m, HW_LIST_T_NODE).type, HW_LIST_T_NODE);
    struct hw_node *d2 = lev_malloc_hinted(2 * sizeof *d2);
    lev_hint_restore(old);
    assert_ptr_equal(d2, d);
    assert_true(s_all_zero(d2, 2 * sizeof *d2));
    assert_int_equal(lev_alloc_size(m, d2), 2 * sizeof *d2);
    lev_free(d2);
}

/* A frame field left pointing at a freed object (legal C while it is not
 * used) does not fail the capture: it comes back as a non-NULL pointer
 * while the live objects around it keep their contents. */
static void t_dangling_pointer_captured(void **state)
{
    (void)state;
    const lev_module *m = s_list_mod();
    rt_vt *vt;
    long n = 3;
    assert_int_equal(rt_vt_new(m, HW_LIST_FN_TASK, &n, sizeof n, &vt), 0);
    struct hw_list_task__frame *fr = rt_vt_bottom(vt);
    fr->head = lev_alloc(m, HW_LIST_T_NODE, 1);
    fr->prev = lev_alloc(m, HW_LIST_T_NODE, 1);
    assert_non_null(fr->head);
    assert_non_null(fr->prev);
    fr->head->v = 41;
    fr->head->next = fr->prev; /* a heap object dangles too */
    lev_free(fr->prev);
    uint8_t *img;
    size_t len;
    assert_int_equal(rt_capture(vt, &img, &len), 0);
    rt_vt *copy;
    assert_int_equal(rt_restore(m, img, len, &copy), 0);
    struct hw_list_task__frame *cf = rt_vt_bottom(copy);
    assert_non_null(cf->prev);
    assert_non_null(cf->head);
    assert_int_equal(cf->head->v, 41);
    assert_ptr_equal(cf->head->next, cf->prev);
    assert_int_equal(lev_alloc_size(m, cf->prev), 0); /* not a live object */
    free(img);
    rt_vt_destroy(&copy);
    rt_vt_destroy(&vt);
}

/* Captures vt and restores the image into a new VT. */
static rt_vt *s_roundtrip(const lev_module *m, rt_vt *vt)
{
    uint8_t *img;
    size_t len;
    assert_int_equal(rt_capture(vt, &img, &len), 0);
    rt_vt *copy;
    assert_int_equal(rt_restore(m, img, len, &copy), 0);
    free(img);
    return copy;
}

/* Restore puts the nodes of a list in slabs (one GC object for many VT
 * objects): each is still a VT object of its own for lev_alloc_size,
 * lev_free and the next capture, which finds interior, one-past-end and
 * dangling pointers into slab objects as it does for single objects. */
static void t_restored_slab_objects(void **state)
{
    (void)state;
    const lev_module *m = s_list_mod();
    enum { N = 3000 }; /* more than one 64 KiB slab */
    rt_vt *vt;
    void *frame;
    assert_int_equal(rt_vt_alloc(m, HW_LIST_FN_TASK, &vt, &frame), 0);
    struct hw_list_task__frame *f = frame;
    struct hw_node *nodes[N];
    for (long i = N - 1; i >= 0; i--) {
        nodes[i] = lev_alloc(m, HW_LIST_T_NODE, 1);
        assert_non_null(nodes[i]);
        nodes[i]->v = i;
        nodes[i]->next = f->head;
        f->head = nodes[i];
    }
    f->tail = &nodes[N / 2]->next; /* interior */
    f->cur = nodes[N - 1] + 1;     /* one past the last node's end */
    f->prev = nodes[7] + 1;        /* one past a node's end, inside a slab */
    rt_vt *a = s_roundtrip(m, vt);
    struct hw_list_task__frame *fa = rt_vt_bottom(a);
    struct hw_node *p = fa->head, *mid = NULL, *last = NULL, *n7 = NULL;
    for (long i = 0; i < N; i++, p = p->next) {
        assert_non_null(p);
        assert_int_equal(p->v, i);
        assert_int_equal(lev_alloc_size(m, p), sizeof *p);
        mid = i == N / 2 ? p : mid;
        n7 = i == 7 ? p : n7;
        last = p;
    }
    assert_null(p);
    assert_true(GC_base(n7) != (char *)n7 - sizeof(rt_objhdr)); /* in a slab */
    assert_ptr_equal(fa->tail, &mid->next);
    assert_ptr_equal(fa->cur, last + 1);
    assert_ptr_equal(fa->prev, n7 + 1);
    assert_ptr_equal(rt_heap_find(&mid->next), (char *)mid - sizeof(rt_objhdr));
    assert_ptr_equal(rt_heap_find(n7 + 1), (char *)n7 - sizeof(rt_objhdr));
    lev_free(&mid->next); /* interior: ignored */
    assert_int_equal(lev_alloc_size(m, mid), sizeof *mid);

    /* Unlink and free node 8 and leave the frame pointing at it: the
     * second round trip captures a dangling pointer into a slab, and
     * pointers into slab objects through the page cache. */
    struct hw_node *n8 = n7->next;
    n7->next = n8->next;
    fa->cur = n8;
    lev_free(n8);
    assert_int_equal(lev_alloc_size(m, n8), 0);
    rt_vt *b = s_roundtrip(m, a);
    struct hw_list_task__frame *fb = rt_vt_bottom(b);
    long count = 0;
    for (p = fb->head; p; p = p->next, count++)
        assert_int_equal(p->v, count < 8 ? count : count + 1);
    assert_int_equal(count, N - 1);
    assert_int_equal(((struct hw_node *)((char *)fb->tail - offsetof(struct hw_node, next)))->v,
                     N / 2);
    assert_int_equal((fb->prev - 1)->v, 7);
    assert_non_null(fb->cur);
    assert_int_equal(lev_alloc_size(m, fb->cur), 0);
    rt_vt_destroy(&b);
    rt_vt_destroy(&a);
    rt_vt_destroy(&vt);
}

/* lev_realloc: from NULL, growing, shrinking, to another type, and from the
 * C library's memory, keeping the contents; the old object is freed. */
static void t_realloc(void **state)
{
    (void)state;
    const lev_module *m = s_mod();
    uint32_t *a = lev_realloc(m, NULL, LEV_T_U32, 10);
    assert_non_null(a);
    assert_int_equal(lev_alloc_size(m, a), 40);
    assert_true(s_all_zero(a, 40));
    for (uint32_t i = 0; i < 10; i++)
        a[i] = i * 7 + 1;

    uint32_t *b = lev_realloc(m, a, LEV_T_U32, 5000); /* grows into a large object */
    assert_non_null(b);
    assert_int_equal(lev_alloc_size(m, b), 20000);
    for (uint32_t i = 0; i < 10; i++)
        assert_int_equal(b[i], i * 7 + 1);
    assert_true(s_all_zero(b + 10, 20000 - 40));
    for (uint32_t i = 0; i < 5000; i++)
        b[i] = i ^ 0x5A5A;

    uint32_t *c = lev_realloc(m, b, LEV_T_U32, 3); /* shrinks */
    assert_non_null(c);
    assert_int_equal(lev_alloc_size(m, c), 12);
    for (uint32_t i = 0; i < 3; i++)
        assert_int_equal(c[i], i ^ 0x5A5A);

    uint8_t *d = lev_realloc(m, c, LEV_T_BYTES, 12); /* same bytes, another type */
    assert_non_null(d);
    assert_int_equal(lev_alloc_size(m, d), 12);
    uint32_t w;
    memcpy(&w, d + 4, 4);
    assert_int_equal(w, 1 ^ 0x5A5A);

    /* From the C library's memory, growing and shrinking. */
    char *lib = malloc(100);
    assert_non_null(lib);
    for (int i = 0; i < 100; i++)
        lib[i] = (char)(i + 1);
    char *e = lev_realloc(m, lib, LEV_T_BYTES, 300);
    assert_non_null(e);
    assert_int_equal(lev_alloc_size(m, e), 300);
    for (int i = 0; i < 100; i++)
        assert_int_equal(e[i], (char)(i + 1));
    lib = malloc(100);
    assert_non_null(lib);
    memset(lib, 9, 100);
    char *f = lev_realloc(m, lib, LEV_T_BYTES, 10);
    assert_non_null(f);
    assert_int_equal(lev_alloc_size(m, f), 10);
    assert_memory_equal(f, "\x09\x09\x09\x09\x09\x09\x09\x09\x09\x09", 10);

    /* An array of structs keeps its pointers. */
    struct hw_shape *s = lev_alloc(m, HW_LAYOUT_T_SHAPE, 2);
    assert_non_null(s);
    s[1].next = &s[0];
    s[0].kind = 77;
    struct hw_shape *s2 = lev_realloc(m, s, HW_LAYOUT_T_SHAPE, 4);
    assert_non_null(s2);
    assert_int_equal(s2[0].kind, 77);
    assert_ptr_equal(s2[1].next, s); /* copied as is: it still points to the old block */

    /* Not a VT object's start, or an unknown type: NULL, nothing freed. */
    assert_null(lev_realloc(m, &s2[1], HW_LAYOUT_T_SHAPE, 8));
    assert_int_equal(lev_alloc_size(m, s2), 4 * sizeof *s2);
    assert_null(lev_realloc(m, s2, HW_LAYOUT_NTYPES_END, 8));
    assert_int_equal(lev_alloc_size(m, s2), 4 * sizeof *s2);
    lev_free(s2);
    lev_free(d);
    lev_free(e);
    lev_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_alloc_zeroes),
        cmocka_unit_test(t_alloc_overflow),
        cmocka_unit_test(t_alloc_size),
        cmocka_unit_test(t_strdup),
        cmocka_unit_test(t_gc_keeps_reachable_objects),
        cmocka_unit_test(t_gc_keeps_restored_objects),
        cmocka_unit_test(t_free),
        cmocka_unit_test(t_free_recycles),
        cmocka_unit_test(t_alloc_free_fast),
        cmocka_unit_test(t_realloc),
        cmocka_unit_test(t_dangling_pointer_captured),
        cmocka_unit_test(t_restored_slab_objects),
    };
    return cmocka_run_group_tests_name("heap", tests, NULL, NULL);
}
