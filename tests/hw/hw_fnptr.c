/* hw_fnptr.c - hand-written task module that follows the frame
 * ABI as levpp's output does, in its simplest form (frames pushed on
 * entry, one unwind block per body; levpp adds run/resume pairs, lazy
 * frames and an unwind block per site): function pointers that cross safe points.
 *
 * Source it stands for:
 *
 *   static long op_add(long a, long b) { return a + b; }   (also sub, mul, xor)
 *
 *   LEV_TASK void hw_fnptr_task(const void *arg, size_t len) {
 *       long n = *(const long *)arg, acc = 1;
 *       hw_op *table = malloc(4 * sizeof *table), cur;
 *       table[0] = op_add; table[1] = op_sub; table[2] = op_mul; table[3] = op_xor;
 *       void *vfn = (void *)op_xor;
 *       struct hw_opcell *ring = NULL, *last = NULL;     three cells in a ring
 *       for (int j = 0; j < 3; j++) { ...f = table[(j + 1) % 4], k = j + 2... }
 *       for (long i = 0; i < n; i++) {
 *           lev_checkpoint();
 *           cur = table[i % 4];
 *           acc = cur(acc, ring->k);
 *           acc = ring->f(acc, i) % 1000003;
 *           if (i % 5 == 0) acc = ((hw_op)vfn)(acc, 0x55);
 *           ring = ring->next;
 *       }
 *       result = acc;
 *   }
 */
#include "hw_fnptr.h"

#include <stddef.h>
#include <string.h>

enum { T_TASK = LEV_T_USER, T_OPCELL };

static lev_module *s_mod;

static long op_add(long a, long b) { return a + b; }
static long op_sub(long a, long b) { return a - b; }
static long op_mul(long a, long b) { return (a % 100003) * (b % 100003); }
static long op_xor(long a, long b) { return a ^ b; }

static int hw_fnptr_task__run(lev_ctx *vt, void *frame)
{
    struct hw_fnptr_task__frame *fr = frame;
    struct hw_opcell *c, *last;
    switch (fr->t.h.pc) {
    case 0:
        break;
    case 1:
        goto resume_1;
    default:
        lev_vt_fail(vt, LEV_EFAILED, "hw_fnptr_task: bad resume point");
        return LEV_RUN_EXIT;
    }
    if (fr->t.len != sizeof fr->n) {
        lev_vt_fail(vt, LEV_EINVAL, "hw_fnptr_task: argument is not a long");
        return LEV_RUN_EXIT;
    }
    memcpy(&fr->n, fr->t.arg, sizeof fr->n);
    fr->acc = 1;
    fr->table = lev_alloc(s_mod, LEV_T_FNPTR, HW_FNPTR_OPS);
    if (!fr->table)
        goto nomem;
    fr->table[0] = op_add;
    fr->table[1] = op_sub;
    fr->table[2] = op_mul;
    fr->table[3] = op_xor;
    fr->vfn = (void *)op_xor;
    fr->ring = NULL;
    last = NULL;
    for (int j = 0; j < HW_FNPTR_RING; j++) {
        c = lev_alloc(s_mod, T_OPCELL, 1);
        if (!c)
            goto nomem;
        c->f = fr->table[(j + 1) % HW_FNPTR_OPS];
        c->k = j + 2;
        if (last)
            last->next = c;
        else
            fr->ring = c;
        last = c;
    }
    last->next = fr->ring;
    for (fr->i = 0; fr->i < fr->n; fr->i++) {
        if (lev_poll(vt) && lev_safepoint(vt, LEV_SP_CHECKPOINT)) {
            fr->t.h.pc = 1;
            return LEV_RUN_UNWIND;
        }
    resume_1:
        fr->cur = fr->table[fr->i % HW_FNPTR_OPS];
        fr->acc = fr->cur(fr->acc, fr->ring->k);
        fr->acc = fr->ring->f(fr->acc, fr->i) % 1000003;
        if (fr->i % 5 == 0)
            fr->acc = ((hw_op)fr->vfn)(fr->acc, 0x55);
        fr->ring = fr->ring->next;
    }
    fr->result = fr->acc;
    return LEV_RUN_DONE;
nomem:
    lev_vt_fail(vt, LEV_ENOMEM, "hw_fnptr_task: no memory");
    return LEV_RUN_EXIT;
}

/* ===================================================================
 * Descriptors
 * =================================================================== */

#define S_NF(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))
#define S_F(st, f, kind, count, type)                                                              \
    {                                                                                              \
#f, offsetof(st, f), kind, count, type                                                     \
    }

static const lev_field_desc task__fields[] = {
    {"arg", offsetof(struct hw_fnptr_task__frame, t.arg), LEV_K_PTR, 1, 0},
    {"len", offsetof(struct hw_fnptr_task__frame, t.len), LEV_K_B8, 1, 0},
    S_F(struct hw_fnptr_task__frame, n, LEV_K_B8, 1, 0),
    S_F(struct hw_fnptr_task__frame, i, LEV_K_B8, 1, 0),
    S_F(struct hw_fnptr_task__frame, acc, LEV_K_B8, 1, 0),
    S_F(struct hw_fnptr_task__frame, cur, LEV_K_FNPTR, 1, 0),
    S_F(struct hw_fnptr_task__frame, vfn, LEV_K_PTR, 1, 0),
    S_F(struct hw_fnptr_task__frame, table, LEV_K_PTR, 1, 0),
    S_F(struct hw_fnptr_task__frame, ring, LEV_K_PTR, 1, 0),
    S_F(struct hw_fnptr_task__frame, result, LEV_K_B8, 1, 0),
};
static const lev_field_desc opcell__fields[] = {
    S_F(struct hw_opcell, f, LEV_K_FNPTR, 1, 0),
    S_F(struct hw_opcell, k, LEV_K_B8, 1, 0),
    S_F(struct hw_opcell, next, LEV_K_PTR, 1, 0),
};

static const lev_type_desc s_types[] = {
    {"frame hw_fnptr_task", sizeof(struct hw_fnptr_task__frame), S_NF(task__fields), task__fields,
     _Alignof(struct hw_fnptr_task__frame)},
    {"struct hw_opcell", sizeof(struct hw_opcell), S_NF(opcell__fields), opcell__fields,
     _Alignof(struct hw_opcell)},
};

#define S_NATIVE(f) ((void (*)(void))(f))

static const lev_fn_desc s_fns[HW_FNPTR_NFNS] = {
    [HW_FNPTR_FN_ADD] = {"op_add", S_NATIVE(op_add), NULL, 0, 0},
    [HW_FNPTR_FN_SUB] = {"op_sub", S_NATIVE(op_sub), NULL, 0, 0},
    [HW_FNPTR_FN_MUL] = {"op_mul", S_NATIVE(op_mul), NULL, 0, 0},
    [HW_FNPTR_FN_XOR] = {"op_xor", S_NATIVE(op_xor), NULL, 0, 0},
    [HW_FNPTR_FN_TASK] = {"hw_fnptr_task", NULL, hw_fnptr_task__run, T_TASK, LEV_FN_TASK},
};

const lev_module_desc hw_fnptr_desc = {
    LEV_ABI_VERSION, "hw_fnptr", S_NF(s_types), s_types, HW_FNPTR_NFNS, s_fns, 0, NULL,
};

const lev_module *hw_fnptr_module(void)
{
    if (!s_mod && lev_module_register(&hw_fnptr_desc, &s_mod) != 0)
        return NULL;
    return s_mod;
}

hw_op hw_fnptr_op(int fn)
{
    static const hw_op ops[HW_FNPTR_OPS] = {op_add, op_sub, op_mul, op_xor};
    return fn >= 0 && fn < HW_FNPTR_OPS ? ops[fn] : NULL;
}

/* ===================================================================
 * Reference
 * =================================================================== */

long hw_fnptr_ref(long n)
{
    const hw_op table[HW_FNPTR_OPS] = {op_add, op_sub, op_mul, op_xor};
    long acc = 1;
    int r = 0;
    for (long i = 0; i < n; i++) {
        acc = table[i % HW_FNPTR_OPS](acc, r + 2);
        acc = table[(r + 1) % HW_FNPTR_OPS](acc, i) % 1000003;
        if (i % 5 == 0)
            acc = op_xor(acc, 0x55);
        r = (r + 1) % HW_FNPTR_RING;
    }
    return acc;
}
