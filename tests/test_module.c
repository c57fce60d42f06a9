/* test_module.c - task module registration: descriptor validation with
 * clear codes and details, the module hash (stable for the same tables,
 * different when a layout changes), registering twice, type flattening and
 * the lookup helpers, task lookup in any module and in one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "arena.h"
#include "hw/hw_fib.h"
#include "hw/hw_fnptr.h"
#include "hw/hw_layout.h"
#include "hw/hw_statics.h"
#include "module.h"
#include "rt.h"

/* ===================================================================
 * A small module whose tables the tests copy and break
 * =================================================================== */

struct node {
    long v;
    struct node *next;
    int tag;
};

struct pair {
    struct node a;
    struct node b[2];
};

struct task_frame {
    lev_task_frame t;
    struct node *head;
    long n;
};

struct leaf_frame {
    lev_frame h;
    long x;
};

enum { T_NODE = LEV_T_USER, T_PAIR, T_TASK, T_LEAF, NTYPES = 4 };
enum { FN_LEAF, FN_TASK, FN_HELPER, NFNS };

static int s_task_run(lev_ctx *vt, void *frame)
{
    (void)vt;
    (void)frame;
    return LEV_RUN_DONE;
}

static long s_helper(long x) { return x + 1; }

/* The gap keeps one past the end of s_buf from being another static. */
static struct {
    char buf[64];
    char gap[16];
} s_area;
#define s_buf s_area.buf
static long s_counter;

#define F(st, f, kind, count, type)                                                                \
    {                                                                                              \
#f, offsetof(st, f), kind, count, type                                                     \
    }

typedef struct tables {
    lev_field_desc node[3];
    lev_field_desc pair[2];
    lev_field_desc task[4];
    lev_field_desc leaf[1];
    lev_type_desc types[NTYPES];
    lev_fn_desc fns[NFNS];
    lev_static_desc statics[2];
    lev_module_desc desc;
} tables;

/* Fills t with a valid module; each test then breaks one thing. */
static void s_tables(tables *t, const char *name)
{
    memset(t, 0, sizeof *t);
    t->node[0] = (lev_field_desc)F(struct node, v, LEV_K_B8, 1, 0);
    t->node[1] = (lev_field_desc)F(struct node, next, LEV_K_PTR, 1, 0);
    t->node[2] = (lev_field_desc)F(struct node, tag, LEV_K_B4, 1, 0);
    t->pair[0] = (lev_field_desc)F(struct pair, a, LEV_K_REC, 1, T_NODE);
    t->pair[1] = (lev_field_desc)F(struct pair, b, LEV_K_REC, 2, T_NODE);
    t->task[0] = (lev_field_desc){"arg", offsetof(struct task_frame, t.arg), LEV_K_PTR, 1, 0};
    t->task[1] = (lev_field_desc){"len", offsetof(struct task_frame, t.len), LEV_K_B8, 1, 0};
    t->task[2] = (lev_field_desc)F(struct task_frame, head, LEV_K_PTR, 1, 0);
    t->task[3] = (lev_field_desc)F(struct task_frame, n, LEV_K_B8, 1, 0);
    t->leaf[0] = (lev_field_desc)F(struct leaf_frame, x, LEV_K_B8, 1, 0);
    t->types[0] =
        (lev_type_desc){"struct node", sizeof(struct node), 3, t->node, _Alignof(struct node)};
    t->types[1] =
        (lev_type_desc){"struct pair", sizeof(struct pair), 2, t->pair, _Alignof(struct pair)};
    t->types[2] = (lev_type_desc){"frame task", sizeof(struct task_frame), 4, t->task,
                                  _Alignof(struct task_frame)};
    t->types[3] = (lev_type_desc){"frame leaf", sizeof(struct leaf_frame), 1, t->leaf,
                                  _Alignof(struct leaf_frame)};
    t->fns[FN_LEAF] = (lev_fn_desc){"leaf", NULL, NULL, T_LEAF, 0};
    t->fns[FN_TASK] = (lev_fn_desc){"task", NULL, s_task_run, T_TASK, LEV_FN_TASK};
    t->fns[FN_HELPER] = (lev_fn_desc){"helper", (void (*)(void))s_helper, NULL, 0, 0};
    t->statics[0] = (lev_static_desc){"s_buf", s_buf, LEV_T_BYTES, sizeof s_buf, 0};
    t->statics[1] = (lev_static_desc){"s_counter", &s_counter, LEV_T_U64, 1, LEV_S_TRAVELS};
    t->desc =
        (lev_module_desc){LEV_ABI_VERSION, name, NTYPES, t->types, NFNS, t->fns, 2, t->statics};
}

/* Registers t (a fresh table, so never a cached module). */
static int s_register(tables *t, lev_module **m)
{
    *m = NULL;
    rt_err_clear();
    return lev_module_register(&t->desc, m);
}

/* Expects registration of t to fail with err and a detail holding every word. */
static void s_expect_fail(tables *t, int err, const char *const *words)
{
    lev_module *m;
    int rc = s_register(t, &m);
    if (rc != err)
        fail_msg("expected %d, got %d (%s)", err, rc, lev_errdetail());
    assert_null(m);
    const char *d = lev_errdetail();
    assert_true(d[0] != '\0');
    for (; *words; words++)
        if (!strstr(d, *words))
            fail_msg("detail \"%s\" does not mention \"%s\"", d, *words);
    /* A failed registration is not remembered: the same table fails again. */
    assert_int_equal(s_register(t, &m), err);
}

#define WORDS(...) ((const char *const[]){__VA_ARGS__, NULL})

static uint64_t s_hash_of(tables *t)
{
    lev_module *m;
    int rc = s_register(t, &m);
    if (rc)
        fail_msg("registration failed: %s", lev_errdetail());
    return lev_module_hash(m);
}

/* Tables are registered for the life of the process: keep them alive. */
static tables *s_keep(void)
{
    static tables pool[64];
    static size_t used;
    assert_true(used < sizeof pool / sizeof pool[0]);
    return &pool[used++];
}

/* ===================================================================
 * Registration and identity
 * =================================================================== */

static void t_register_twice_same_module(void **state)
{
    (void)state;
    lev_module *a = NULL, *b = NULL;
    assert_int_equal(lev_module_register(&hw_fib_desc, &a), 0);
    assert_int_equal(lev_module_register(&hw_fib_desc, &b), 0);
    assert_non_null(a);
    assert_ptr_equal(a, b);
    assert_ptr_equal(a, hw_fib_module());
    assert_true(lev_module_hash(a) != 0);
    assert_true(lev_module_hash(NULL) == 0);
    assert_int_equal(lev_module_register(NULL, &a), LEV_EINVAL);
    assert_int_equal(lev_module_register(&hw_fib_desc, NULL), LEV_EINVAL);
}

/* Two copies of the same tables are two modules with one hash. */
static void t_hash_stable_for_same_tables(void **state)
{
    (void)state;
    tables *x = s_keep(), *y = s_keep();
    s_tables(x, "m");
    s_tables(y, "m");
    lev_module *a, *b;
    assert_int_equal(s_register(x, &a), 0);
    assert_int_equal(s_register(y, &b), 0);
    assert_ptr_not_equal(a, b);
    assert_true(lev_module_hash(a) == lev_module_hash(b));
    /* Addresses differ between processes: they are not part of the identity. */
    tables *z = s_keep();
    s_tables(z, "m");
    z->fns[FN_HELPER].native = (void (*)(void))s_task_run;
    z->fns[FN_TASK].entry = (lev_entry_fn)s_task_run;
    z->statics[0].addr = s_buf + 1;
    assert_true(s_hash_of(z) == lev_module_hash(a));
}

/* Any change of names, layouts, functions or statics changes the hash. */
static void t_hash_changes_with_layout(void **state)
{
    (void)state;
    tables *base = s_keep();
    s_tables(base, "m");
    uint64_t h0 = s_hash_of(base);
    enum { NCHANGES = 12 };
    uint64_t seen[NCHANGES];
    for (int k = 0; k < NCHANGES; k++) {
        tables *t = s_keep();
        s_tables(t, "m");
        switch (k) {
        case 0: /* a field moves (tag into the padding after it) */
            t->node[2].offset += 2;
            break;
        case 1: /* a type grows (and the type holding it) */
            t->types[0].size += 8;
            t->pair[1].offset += 8;
            t->types[1].size += 3 * 8;
            break;
        case 2: /* a field changes kind */
            t->node[0].kind = LEV_K_PTR;
            break;
        case 3: /* an array changes length (and the frame grows with it) */
            t->leaf[0].count = 2;
            t->types[3].size += 8;
            break;
        case 4: /* a field is renamed */
            t->node[2].name = "tag2";
            break;
        case 5: /* a type is renamed */
            t->types[1].name = "struct pair2";
            break;
        case 6: /* a function's frame type changes */
            t->fns[FN_LEAF].frame_type = T_NODE;
            break;
        case 7: /* a function is renamed */
            t->fns[FN_HELPER].name = "helper2";
            break;
        case 8: /* a static's element count */
            t->statics[0].count = 32;
            break;
        case 9: /* a static starts or stops travelling */
            t->statics[1].flags = 0;
            break;
        case 10: /* the module's name */
            t->desc.name = "m2";
            break;
        case 11: /* a field leaves the table */
            t->types[0].nfields = 2;
            break;
        }
        seen[k] = s_hash_of(t);
        if (seen[k] == h0)
            fail_msg("change %d left the hash as it was", k);
        for (int j = 0; j < k; j++)
            assert_true(seen[j] != seen[k]);
    }
}

/* ===================================================================
 * Validation
 * =================================================================== */

static void t_abi_version_mismatch(void **state)
{
    (void)state;
    tables *t = s_keep();
    s_tables(t, "old");
    t->desc.abi_version = LEV_ABI_VERSION + 1;
    s_expect_fail(t, LEV_EMODULE, WORDS("old", "ABI"));
    t->desc.abi_version = 0;
    s_expect_fail(t, LEV_EMODULE, WORDS("ABI"));
}

static void t_field_outside_type(void **state)
{
    (void)state;
    tables *t = s_keep();
    s_tables(t, "m");
    t->node[2].offset = sizeof(struct node) - 2; /* a 4-byte field 2 bytes from the end */
    s_expect_fail(t, LEV_EINVAL, WORDS("struct node", "tag", "outside"));

    s_tables(t = s_keep(), "m");
    t->pair[1].count = 3; /* b[3] of struct node does not fit */
    s_expect_fail(t, LEV_EINVAL, WORDS("struct pair", "b", "outside"));

    s_tables(t = s_keep(), "m");
    t->node[0].offset = 0xFFFFFFF8u; /* no wrap-around */
    s_expect_fail(t, LEV_EINVAL, WORDS("v", "outside"));

    s_tables(t = s_keep(), "m");
    t->leaf[0].count = 0x20000001u; /* count * 8 wraps in 32 bits */
    s_expect_fail(t, LEV_EINVAL, WORDS("x", "outside"));
}

static void t_overlapping_fields(void **state)
{
    (void)state;
    tables *t = s_keep();
    s_tables(t, "m");
    t->node[2].offset = offsetof(struct node, next) + 4; /* inside next */
    s_expect_fail(t, LEV_EINVAL, WORDS("struct node", "overlaps"));

    s_tables(t = s_keep(), "m");
    t->pair[1].offset = offsetof(struct pair, a) + 8; /* nested records overlap */
    s_expect_fail(t, LEV_EINVAL, WORDS("struct pair", "overlaps"));

    s_tables(t = s_keep(), "m");
    t->node[1].offset = 0; /* a pointer and an integer at the same place: a union */
    s_expect_fail(t, LEV_EINVAL, WORDS("overlaps"));
}

static void t_unknown_kind(void **state)
{
    (void)state;
    static const uint32_t kinds[] = {0, LEV_K_TAG, LEV_K_TAG + 1, 0xFFFFFFFFu};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        tables *t = s_keep();
        s_tables(t, "m");
        t->node[2].kind = kinds[i];
        s_expect_fail(t, LEV_EINVAL, WORDS("struct node", "tag", "unknown kind"));
    }
}

static void t_unknown_nested_type(void **state)
{
    (void)state;
    tables *t = s_keep();
    s_tables(t, "m");
    t->pair[0].type = LEV_T_USER + NTYPES; /* past the table */
    s_expect_fail(t, LEV_EINVAL, WORDS("struct pair", "a", "unknown type"));

    s_tables(t = s_keep(), "m");
    t->pair[0].type = 0xFFFFFFFFu;
    s_expect_fail(t, LEV_EINVAL, WORDS("unknown type"));

    s_tables(t = s_keep(), "m");
    t->pair[0].type = LEV_T_USER - 1; /* a reserved built-in id */
    s_expect_fail(t, LEV_EINVAL, WORDS("unknown type"));
}

static void t_self_containing_type(void **state)
{
    (void)state;
    tables *t = s_keep();
    s_tables(t, "m");
    t->pair[1].type = T_PAIR; /* struct pair holds struct pair */
    t->pair[1].count = 1;
    s_expect_fail(t, LEV_EINVAL, WORDS("struct pair", "contains itself"));

    /* Through another type: node holds pair, pair holds node. */
    s_tables(t = s_keep(), "m");
    t->types[0].size = 256;
    t->node[2] = (lev_field_desc){"p", 64, LEV_K_REC, 1, T_PAIR};
    s_expect_fail(t, LEV_EINVAL, WORDS("contains itself"));
}

static void t_task_entry_without_body_or_frame(void **state)
{
    (void)state;
    tables *t = s_keep();
    s_tables(t, "m");
    t->fns[FN_TASK].entry = NULL;
    s_expect_fail(t, LEV_EINVAL, WORDS("task entry", "task"));

    s_tables(t = s_keep(), "m");
    t->fns[FN_TASK].frame_type = 0;
    s_expect_fail(t, LEV_EINVAL, WORDS("task entry", "task"));

    s_tables(t = s_keep(), "m");
    t->fns[FN_TASK].frame_type = T_LEAF; /* smaller than lev_task_frame */
    s_expect_fail(t, LEV_EINVAL, WORDS("task entry", "task"));

    s_tables(t = s_keep(), "m");
    t->fns[FN_TASK].flags = LEV_FN_MAIN; /* a main needs a lev_main_frame */
    t->fns[FN_TASK].frame_type = T_LEAF;
    s_expect_fail(t, LEV_EINVAL, WORDS("main entry", "task"));
}

static void t_other_invalid_descriptors(void **state)
{
    (void)state;
    tables *t = s_keep();
    s_tables(t, "m");
    t->types[0].size = 0;
    s_expect_fail(t, LEV_EINVAL, WORDS("struct node", "size 0"));

    s_tables(t = s_keep(), "m");
    t->node[0].count = 0;
    s_expect_fail(t, LEV_EINVAL, WORDS("struct node", "v", "count 0"));

    s_tables(t = s_keep(), "m");
    t->types[0].fields = NULL;
    s_expect_fail(t, LEV_EINVAL, WORDS("struct node", "field table"));

    s_tables(t = s_keep(), "m");
    t->desc.types = NULL;
    s_expect_fail(t, LEV_EINVAL, WORDS("missing"));

    s_tables(t = s_keep(), "m");
    t->fns[FN_LEAF].frame_type = LEV_T_USER + NTYPES;
    s_expect_fail(t, LEV_EINVAL, WORDS("leaf", "frame type"));

    s_tables(t = s_keep(), "m");
    t->types[3].size = 4; /* smaller than lev_frame */
    t->leaf[0] = (lev_field_desc){"x", 0, LEV_K_B4, 1, 0};
    s_expect_fail(t, LEV_EINVAL, WORDS("leaf", "header"));

    s_tables(t = s_keep(), "m");
    t->statics[0].addr = NULL;
    s_expect_fail(t, LEV_EINVAL, WORDS("s_buf"));

    s_tables(t = s_keep(), "m");
    t->statics[1].type = LEV_T_USER + NTYPES;
    s_expect_fail(t, LEV_EINVAL, WORDS("s_counter"));

    s_tables(t = s_keep(), "m");
    t->statics[1].count = 0;
    s_expect_fail(t, LEV_EINVAL, WORDS("s_counter"));
}

/* ===================================================================
 * Flattening and lookups
 * =================================================================== */

/* Nested records are flattened into runs in offset order, adjacent runs of
 * one kind merged; density and pointer presence are recorded. */
/* A field of count 0, last by offset, is the type's trailing array: its
 * objects count bytes, hold the head then whole elements, and the bytes
 * after them travel as bytes. */
static void t_trailing_array(void **state)
{
    (void)state;
    tables *t = s_keep();
    s_tables(t, "m");
    t->node[2].count = 0; /* int tag[] after v and next */
    lev_module *m;
    assert_int_equal(s_register(t, &m), 0);
    const rt_type *node = rt_module_type(m, T_NODE);
    assert_true(node->tail && node->has_ptrs && !node->dense && !node->packed);
    assert_int_equal(node->tail_off, offsetof(struct node, tag));
    assert_int_equal(node->tail_type, LEV_T_U32);
    assert_int_equal(node->nruns, 2);
    assert_int_equal(node->gc_descr, 0);
    assert_int_equal(rt_type_bytes(node, 42), 42);
    uint32_t roff, rem;
    uint32_t bytes = (uint32_t)offsetof(struct node, tag) + 6 * 4 + 2;
    assert_int_equal(rt_tail_elems(m, node, bytes, &roff, &rem), 6);
    assert_int_equal(roff, bytes - 2);
    assert_int_equal(rem, 2);
    uint64_t items[4];
    rt_type_items(m, node, bytes, items);
    assert_int_equal(items[0], 2);
    assert_int_equal(items[2], 6);
    assert_int_equal(items[3], 2); /* v and next */
    /* As an element of another type, its head only. */
    assert_int_equal(rt_module_type(m, T_PAIR)->nruns, 6);

    s_tables(t = s_keep(), "m");
    t->node[1].count = 0; /* next[] before tag */
    s_expect_fail(t, LEV_EINVAL, WORDS("struct node", "tag", "next", "count 0"));
}

static void t_type_flattening(void **state)
{
    (void)state;
    tables *t = s_keep();
    s_tables(t, "m");
    /* Declaration order need not be offset order. */
    lev_field_desc tmp = t->node[0];
    t->node[0] = t->node[2];
    t->node[2] = tmp;
    lev_module *m;
    assert_int_equal(s_register(t, &m), 0);

    const rt_type *node = rt_module_type(m, T_NODE);
    assert_non_null(node);
    assert_int_equal(node->size, sizeof(struct node));
    assert_int_equal(node->nruns, 3);
    assert_int_equal(node->runs[0].offset, 0);
    assert_int_equal(node->runs[0].kind, LEV_K_B8);
    assert_int_equal(node->runs[1].offset, offsetof(struct node, next));
    assert_int_equal(node->runs[1].kind, LEV_K_PTR);
    assert_int_equal(node->runs[2].kind, LEV_K_B4);
    assert_true(node->has_ptrs);
    assert_false(node->dense);

    const rt_type *pair = rt_module_type(m, T_PAIR);
    assert_non_null(pair);
    assert_int_equal(pair->nruns, 9); /* three nodes of three runs */
    for (uint32_t i = 0; i < pair->nruns; i++) {
        assert_int_equal(pair->runs[i].offset,
                         node->runs[i % 3].offset + (i / 3) * sizeof(struct node));
        assert_int_equal(pair->runs[i].kind, node->runs[i % 3].kind);
    }

    /* Dense: one packed scalar run covering the type. */
    const lev_module *lm = hw_layout_module();
    assert_non_null(lm);
    const rt_type *f64 = rt_module_type(lm, HW_LAYOUT_T_F64);
    assert_true(f64->dense);
    assert_int_equal(f64->dense_kind, LEV_K_B8);
    assert_false(rt_module_type(lm, HW_LAYOUT_T_SCALARS)->dense);
    assert_false(rt_module_type(lm, HW_LAYOUT_T_SCALARS)->has_ptrs);
    /* struct hw_point: x and y merge into one run of two 4-byte items. */
    const rt_type *pt = rt_module_type(lm, HW_LAYOUT_T_POINT);
    assert_int_equal(pt->nruns, 2);
    assert_int_equal(pt->runs[0].count, 2);
    assert_int_equal(pt->runs[0].stride, 4);

    /* Built-in types. */
    assert_true(rt_module_type(m, LEV_T_BYTES)->dense);
    assert_int_equal(rt_module_type(m, LEV_T_U16)->size, 2);
    assert_int_equal(rt_module_type(m, LEV_T_U32)->size, 4);
    assert_int_equal(rt_module_type(m, LEV_T_U64)->size, 8);
    assert_true(rt_module_type(m, LEV_T_PTR)->has_ptrs);
    assert_true(rt_module_type(m, LEV_T_FNPTR)->has_ptrs);
    const rt_type *ut = rt_module_type(m, LEV_T_UNTYPED);
    assert_true(ut && ut->conservative && !ut->has_ptrs && ut->size == 1);
    assert_null(rt_module_type(m, LEV_T_UNTYPED + 1)); /* reserved ids are no types */
    assert_null(rt_module_type(m, LEV_T_USER + NTYPES));
    assert_null(rt_module_type(m, 0xFFFFFFFFu));
}

/* rt_task_find_in looks in one module only: two modules that both have a
 * task "shared" (at different function ids) each give their own, a
 * function of the name that is not a task is none, and rt_task_find
 * (first module with such a task) stays as it was. */
static void t_task_find_in(void **state)
{
    (void)state;
    tables *ta = s_keep(), *tb = s_keep();
    s_tables(ta, "find_a");
    ta->fns[FN_TASK].name = "shared";
    ta->fns[FN_LEAF].name = "b_task"; /* not a task in a */
    s_tables(tb, "find_b");
    tb->fns[FN_LEAF] = (lev_fn_desc){"shared", NULL, s_task_run, T_TASK, LEV_FN_TASK};
    tb->fns[FN_TASK].name = "b_task";
    lev_module *a, *b;
    if (s_register(ta, &a) || s_register(tb, &b))
        fail_msg("registration failed: %s", lev_errdetail());
    assert_true(a != b);

    uint32_t fn = 99;
    assert_int_equal(rt_task_find_in(a, "shared", &fn), 0);
    assert_int_equal(fn, FN_TASK);
    assert_int_equal(rt_task_find_in(b, "shared", &fn), 0);
    assert_int_equal(fn, FN_LEAF);
    assert_int_equal(rt_task_find_in(b, "b_task", &fn), 0);
    assert_int_equal(fn, FN_TASK);

    fn = 99;
    rt_err_clear();
    assert_int_equal(rt_task_find_in(a, "b_task", &fn), LEV_EMODULE);
    assert_non_null(strstr(lev_errdetail(), "find_a"));
    assert_non_null(strstr(lev_errdetail(), "b_task"));
    assert_int_equal(rt_task_find_in(a, "helper", &fn), LEV_EMODULE);
    assert_int_equal(rt_task_find_in(a, "nope", &fn), LEV_EMODULE);
    assert_int_equal(fn, 99); /* untouched on failure */
    assert_int_equal(rt_task_find_in(NULL, "shared", &fn), LEV_EINVAL);
    assert_int_equal(rt_task_find_in(a, NULL, &fn), LEV_EINVAL);
    assert_int_equal(rt_task_find_in(a, "shared", NULL), LEV_EINVAL);

    /* rt_task_find: the first module with the task, whichever it is; a
     * non-task of the name is skipped. */
    const lev_module *fm = NULL;
    assert_int_equal(rt_task_find("shared", &fm, &fn), 0);
    assert_true(fm == a || fm == b);
    assert_int_equal(fn, fm == a ? FN_TASK : FN_LEAF);
    assert_int_equal(rt_task_find("b_task", &fm, &fn), 0);
    assert_true(fm == b);
    assert_int_equal(fn, FN_TASK);
}

static void t_lookups(void **state)
{
    (void)state;
    tables *t = s_keep();
    s_tables(t, "m");
    lev_module *m;
    assert_int_equal(s_register(t, &m), 0);

    /* Functions by address and by name. */
    assert_int_equal(rt_module_fn_by_addr(m, (const void *)(uintptr_t)s_helper), FN_HELPER);
    assert_int_equal(rt_module_fn_by_addr(m, NULL), -1);
    assert_int_equal(rt_module_fn_by_addr(m, (const void *)(uintptr_t)s_task_run), -1);
    assert_int_equal(rt_module_fn_by_name(m, "task"), FN_TASK);
    assert_int_equal(rt_module_fn_by_name(m, "leaf"), FN_LEAF);
    assert_int_equal(rt_module_fn_by_name(m, "nope"), -1);
    const lev_module *fm = hw_fnptr_module();
    assert_non_null(fm);
    for (int i = 0; i < HW_FNPTR_OPS; i++)
        assert_int_equal(rt_module_fn_by_addr(fm, (const void *)(uintptr_t)hw_fnptr_op(i)), i);

    /* Statics by address: start, interior, one past the end; not outside. */
    size_t off = 99;
    assert_int_equal(rt_module_static_by_addr(m, s_buf, &off), 0);
    assert_int_equal(off, 0);
    assert_int_equal(rt_module_static_by_addr(m, s_buf + 10, &off), 0);
    assert_int_equal(off, 10);
    assert_int_equal(rt_module_static_by_addr(m, s_buf + sizeof s_buf, &off), 0);
    assert_int_equal(off, sizeof s_buf);
    assert_int_equal(rt_module_static_by_addr(m, &s_counter, &off), 1);
    assert_int_equal(rt_module_static_size(m, 0), sizeof s_buf);
    assert_int_equal(rt_module_static_size(m, 1), sizeof s_counter);
    char local;
    assert_int_equal(rt_module_static_by_addr(m, &local, &off), -1);
    const lev_module *sm = hw_statics_module();
    assert_non_null(sm);
    assert_int_equal(rt_module_static_by_addr(sm, hw_statics_literal() + 3, &off),
                     HW_STATICS_S_STR0);
    assert_int_equal(off, 3);
    assert_int_equal(rt_module_static_by_addr(sm, hw_statics_counter(), &off),
                     HW_STATICS_S_COUNTER);

    /* Widths and frame sizes. */
    assert_int_equal(rt_kind_width(LEV_K_B1), 1);
    assert_int_equal(rt_kind_width(LEV_K_B2), 2);
    assert_int_equal(rt_kind_width(LEV_K_B4), 4);
    assert_int_equal(rt_kind_width(LEV_K_B8), 8);
    assert_int_equal(rt_kind_width(LEV_K_PTR), sizeof(void *));
    assert_int_equal(rt_kind_width(LEV_K_FNPTR), sizeof(void (*)(void)));
    assert_int_equal(rt_kind_width(LEV_K_REC), 0);
    assert_int_equal(rt_kind_width(0), 0);
    assert_int_equal(rt_frame_size(m, FN_TASK), LEV_FRAME_SIZE(sizeof(struct task_frame)));
    assert_int_equal(rt_frame_size(m, FN_LEAF), LEV_FRAME_SIZE(sizeof(struct leaf_frame)));
    assert_int_equal(rt_frame_size(m, FN_HELPER), 0);
    assert_int_equal(rt_frame_size(m, NFNS), 0);
}

/* A tagged union (LEV_K_TAGGED): a valid tag table registers; a tag of
 * no integer width, a tag value listed twice, a tag outside its struct
 * or overlapping the union, a pointer in a union narrower than one, and
 * a row naming a type that is no tag table are refused by name. */
struct tu_holder {
    int32_t tag;
    union {
        long n;
        char *p;
    } u;
};

typedef struct tu_tables {
    lev_field_desc holder[2];
    lev_field_desc table[3];
    lev_type_desc types[2];
    lev_module_desc desc;
} tu_tables;

static void s_tu_tables(tu_tables *t)
{
    memset(t, 0, sizeof *t);
    t->holder[0] = (lev_field_desc)F(struct tu_holder, tag, LEV_K_B4, 1, 0);
    t->holder[1] = (lev_field_desc)F(struct tu_holder, u, LEV_K_TAGGED, 1, LEV_T_USER + 1);
    t->table[0] = (lev_field_desc){"tag", (uint32_t)-8, LEV_K_TAG, 4, 0};
    t->table[1] = (lev_field_desc){"n", 1, LEV_K_B1, 1, 0};
    t->table[2] = (lev_field_desc){"p", 2, LEV_K_PTR, 1, 0};
    t->types[0] = (lev_type_desc){"struct tu_holder", sizeof(struct tu_holder), 2, t->holder,
                                  _Alignof(struct tu_holder)};
    t->types[1] = (lev_type_desc){"tag table of u", 8, 3, t->table, 0};
    t->desc = (lev_module_desc){LEV_ABI_VERSION, "m_tagged", 2, t->types, 0, NULL, 0, NULL};
}

static void s_tu_expect(tu_tables *t, int err, const char *word)
{
    lev_module *m = NULL;
    rt_err_clear();
    int rc = lev_module_register(&t->desc, &m);
    if (rc != err)
        fail_msg("expected %d, got %d (%s)", err, rc, lev_errdetail());
    if (word && !strstr(lev_errdetail(), word))
        fail_msg("detail \"%s\" does not mention \"%s\"", lev_errdetail(), word);
}

static void t_tagged_union_tables(void **state)
{
    (void)state;
    static tu_tables pool[9]; /* fresh tables each time, never a cached module */
    tu_tables *t = pool;
    s_tu_tables(t);
    s_tu_expect(t++, 0, NULL);
    s_tu_tables(t);
    t->table[0].count = 3;
    s_tu_expect(t++, LEV_EINVAL, "a tag of 3");
    s_tu_tables(t);
    t->table[2].offset = 1;
    s_tu_expect(t++, LEV_EINVAL, "twice");
    s_tu_tables(t);
    t->table[2].offset = 1;
    t->table[2].type = 1; /* 2^32 + 1: the same in a 4-byte tag */
    s_tu_expect(t++, LEV_EINVAL, "twice");
    s_tu_tables(t);
    t->table[0].offset = (uint32_t)-16;
    s_tu_expect(t++, LEV_EINVAL, "outside");
    s_tu_tables(t);
    t->table[0].offset = 0;
    s_tu_expect(t++, LEV_EINVAL, "outside");
    s_tu_tables(t);
    t->types[1].size = 4;
    s_tu_expect(t++, LEV_EINVAL, "a pointer in a union of 4 bytes");
    s_tu_tables(t);
    t->holder[1].type = LEV_T_USER;
    s_tu_expect(t++, LEV_EINVAL, NULL);
    s_tu_tables(t);
    t->table[0] = (lev_field_desc){"v", 0, LEV_K_B8, 1, 0}; /* an ordinary type */
    t->types[1].nfields = 1;
    s_tu_expect(t++, LEV_EINVAL, "no tag table");
    assert_true(t == pool + sizeof pool / sizeof pool[0]);
}

/* A type with no fields: the frame of a function with nothing live across
 * its safe points, or a struct of padding only. It registers, is a type,
 * and its objects and frames can be allocated. */
static void t_fieldless_type(void **state)
{
    (void)state;
    tables *t = s_keep();
    s_tables(t, "m");
    t->types[3].nfields = 0; /* frame leaf: just its lev_frame */
    t->types[3].fields = NULL;
    lev_module *m;
    int rc = s_register(t, &m);
    if (rc)
        fail_msg("a module with a fieldless frame did not register: %s", lev_errdetail());
    const rt_type *leaf = rt_module_type(m, T_LEAF);
    assert_non_null(leaf);
    assert_int_equal(leaf->size, sizeof(struct leaf_frame));
    assert_int_equal(rt_frame_size(m, FN_LEAF), LEV_FRAME_SIZE(sizeof(struct leaf_frame)));
    void *obj = lev_alloc(m, T_LEAF, 2);
    assert_non_null(obj);
    assert_int_equal(lev_alloc_size(m, obj), 2 * sizeof(struct leaf_frame));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_register_twice_same_module),
        cmocka_unit_test(t_hash_stable_for_same_tables),
        cmocka_unit_test(t_hash_changes_with_layout),
        cmocka_unit_test(t_abi_version_mismatch),
        cmocka_unit_test(t_field_outside_type),
        cmocka_unit_test(t_overlapping_fields),
        cmocka_unit_test(t_unknown_kind),
        cmocka_unit_test(t_unknown_nested_type),
        cmocka_unit_test(t_self_containing_type),
        cmocka_unit_test(t_task_entry_without_body_or_frame),
        cmocka_unit_test(t_other_invalid_descriptors),
        cmocka_unit_test(t_type_flattening),
        cmocka_unit_test(t_trailing_array),
        cmocka_unit_test(t_lookups),
        cmocka_unit_test(t_task_find_in),
        cmocka_unit_test(t_tagged_union_tables),
        cmocka_unit_test(t_fieldless_type), /* last: UBSan stops the runner on failure */
    };
    return cmocka_run_group_tests_name("module", tests, NULL, NULL);
}
