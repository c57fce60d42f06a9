/* hw_locals.c - hand-written task module that follows the frame
 * ABI as levpp's output does, in its simplest form (frames pushed on
 * entry, one unwind block per body; levpp adds run/resume pairs, lazy
 * frames and an unwind block per site): locals whose address is taken live in the frame,
 * and pointers to them survive every safe point.
 *
 * Source it stands for:
 *
 *   struct hw_cell { long *target; long bias; };
 *
 *   long bump(long *target, const long *src, long k) {
 *       long local = *src * k + 1;
 *       long *plocal = &local;
 *       lev_checkpoint();
 *       *target += *plocal;
 *       return *plocal;
 *   }
 *
 *   LEV_TASK void hw_locals_task(const void *arg, size_t len) {
 *       long n = *(const long *)arg, acc = 0, arr[8], *pacc = &acc, *pel;
 *       long *pend = arr + 8;
 *       struct hw_cell *cell = malloc(sizeof *cell);   (zeroed by lev_alloc)
 *       cell->target = &arr[0];
 *       for (long k = 0; k < 8; k++) arr[k] = k;
 *       for (long i = 0; i < n; i++) {
 *           lev_checkpoint();
 *           pel = &arr[i % 8];
 *           *pel += i;
 *           long r = bump(pacc, pel, i % 5);
 *           cell->target = pel;
 *           cell->bias += r % 7;
 *           long sum = 0;
 *           for (long *p = arr; p != pend; p++) { lev_checkpoint(); sum += *p; }
 *           *cell->target ^= sum & 3;
 *       }
 *       result = acc * 31 + cell->bias + sum over k of arr[k] * (k + 1);
 *   }
 *
 * i, sum and p are never address-taken: they stay in C locals and are
 * spilled to the frame only when the body unwinds.
 */
#include "hw_locals.h"

#include <stddef.h>
#include <string.h>

enum { T_BUMP = LEV_T_USER, T_TASK, T_CELL };

static lev_module *s_mod;

static long s_result(const long *arr, long acc, long bias)
{
    long res = acc * 31 + bias;
    for (long k = 0; k < HW_LOCALS_ARR; k++)
        res += arr[k] * (k + 1);
    return res;
}

/* ===================================================================
 * Bodies
 * =================================================================== */

static int bump__run(lev_ctx *vt, struct hw_bump__frame *fr, long *ret)
{
    switch (fr->h.pc) {
    case 0:
        break;
    case 1:
        goto resume_1;
    default:
        lev_vt_fail(vt, LEV_EFAILED, "bump: bad resume point");
        return LEV_RUN_EXIT;
    }
    fr->local = *fr->src * fr->k + 1;
    fr->plocal = &fr->local;
    if (lev_poll(vt) && lev_safepoint(vt, LEV_SP_CHECKPOINT)) {
        fr->h.pc = 1;
        return LEV_RUN_UNWIND;
    }
resume_1:
    *fr->target += *fr->plocal;
    *ret = *fr->plocal;
    return LEV_RUN_DONE;
}

static int hw_locals_task__run(lev_ctx *vt, void *frame)
{
    struct hw_locals_task__frame *fr = frame;
    struct hw_bump__frame *cf;
    long i, sum, *p;
    int rc;
    switch (fr->t.h.pc) {
    case 0:
        break;
    case 1:
        i = fr->i;
        goto resume_1;
    case 2:
        i = fr->i;
        goto resume_2;
    case 3:
        i = fr->i;
        sum = fr->sum;
        p = fr->p;
        goto resume_3;
    default:
        lev_vt_fail(vt, LEV_EFAILED, "hw_locals_task: bad resume point");
        return LEV_RUN_EXIT;
    }
    if (fr->t.len != sizeof fr->n) {
        lev_vt_fail(vt, LEV_EINVAL, "hw_locals_task: argument is not a long");
        return LEV_RUN_EXIT;
    }
    memcpy(&fr->n, fr->t.arg, sizeof fr->n);
    fr->acc = 0;
    fr->pacc = &fr->acc;
    fr->pend = fr->arr + HW_LOCALS_ARR;
    fr->cell = lev_alloc(s_mod, T_CELL, 1);
    if (!fr->cell) {
        lev_vt_fail(vt, LEV_ENOMEM, "hw_locals_task: no memory");
        return LEV_RUN_EXIT;
    }
    fr->cell->target = &fr->arr[0];
    for (long k = 0; k < HW_LOCALS_ARR; k++)
        fr->arr[k] = k;
    for (i = 0; i < fr->n; i++) {
        if (lev_poll(vt) && lev_safepoint(vt, LEV_SP_CHECKPOINT)) {
            fr->t.h.pc = 1;
            fr->i = i;
            return LEV_RUN_UNWIND;
        }
    resume_1:
        fr->pel = &fr->arr[i % HW_LOCALS_ARR];
        *fr->pel += i;
        cf = lev_frame_push(vt, sizeof *cf, HW_LOCALS_FN_BUMP);
        if (!cf) {
            lev_vt_fail(vt, LEV_ENOMEM, "hw_locals_task: no frame");
            return LEV_RUN_EXIT;
        }
        cf->target = fr->pacc;
        cf->src = fr->pel;
        cf->k = i % 5;
        if (0) {
        resume_2:
            cf = lev_frame_callee(vt, fr, sizeof *fr);
        }
        rc = bump__run(vt, cf, &fr->r);
        if (rc != LEV_RUN_DONE) {
            if (rc == LEV_RUN_UNWIND) {
                fr->t.h.pc = 2;
                fr->i = i;
            } else {
                lev_frame_pop(vt, cf);
            }
            return rc;
        }
        lev_frame_pop(vt, cf);
        fr->cell->target = fr->pel;
        fr->cell->bias += fr->r % 7;
        sum = 0;
        for (p = fr->arr; p != fr->pend; p++) {
            if (lev_poll(vt) && lev_safepoint(vt, LEV_SP_CHECKPOINT)) {
                fr->t.h.pc = 3;
                fr->i = i;
                fr->sum = sum;
                fr->p = p;
                return LEV_RUN_UNWIND;
            }
        resume_3:
            sum += *p;
        }
        *fr->cell->target ^= sum & 3;
    }
    fr->result = s_result(fr->arr, fr->acc, fr->cell->bias);
    return LEV_RUN_DONE;
}

/* ===================================================================
 * Descriptors
 * =================================================================== */

#define S_NF(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))
#define S_F(st, f, kind, count, type)                                                              \
    {                                                                                              \
#f, offsetof(st, f), kind, count, type                                                     \
    }

static const lev_field_desc bump__fields[] = {
    S_F(struct hw_bump__frame, target, LEV_K_PTR, 1, 0),
    S_F(struct hw_bump__frame, src, LEV_K_PTR, 1, 0),
    S_F(struct hw_bump__frame, k, LEV_K_B8, 1, 0),
    S_F(struct hw_bump__frame, local, LEV_K_B8, 1, 0),
    S_F(struct hw_bump__frame, plocal, LEV_K_PTR, 1, 0),
};
static const lev_field_desc task__fields[] = {
    {"arg", offsetof(struct hw_locals_task__frame, t.arg), LEV_K_PTR, 1, 0},
    {"len", offsetof(struct hw_locals_task__frame, t.len), LEV_K_B8, 1, 0},
    S_F(struct hw_locals_task__frame, n, LEV_K_B8, 1, 0),
    S_F(struct hw_locals_task__frame, i, LEV_K_B8, 1, 0),
    S_F(struct hw_locals_task__frame, acc, LEV_K_B8, 1, 0),
    S_F(struct hw_locals_task__frame, arr, LEV_K_B8, HW_LOCALS_ARR, 0),
    S_F(struct hw_locals_task__frame, pacc, LEV_K_PTR, 1, 0),
    S_F(struct hw_locals_task__frame, pel, LEV_K_PTR, 1, 0),
    S_F(struct hw_locals_task__frame, pend, LEV_K_PTR, 1, 0),
    S_F(struct hw_locals_task__frame, p, LEV_K_PTR, 1, 0),
    S_F(struct hw_locals_task__frame, sum, LEV_K_B8, 1, 0),
    S_F(struct hw_locals_task__frame, cell, LEV_K_PTR, 1, 0),
    S_F(struct hw_locals_task__frame, r, LEV_K_B8, 1, 0),
    S_F(struct hw_locals_task__frame, result, LEV_K_B8, 1, 0),
};
static const lev_field_desc cell__fields[] = {
    S_F(struct hw_cell, target, LEV_K_PTR, 1, 0),
    S_F(struct hw_cell, bias, LEV_K_B8, 1, 0),
};

static const lev_type_desc s_types[] = {
    {"frame bump", sizeof(struct hw_bump__frame), S_NF(bump__fields), bump__fields,
     _Alignof(struct hw_bump__frame)},
    {"frame hw_locals_task", sizeof(struct hw_locals_task__frame), S_NF(task__fields), task__fields,
     _Alignof(struct hw_locals_task__frame)},
    {"struct hw_cell", sizeof(struct hw_cell), S_NF(cell__fields), cell__fields,
     _Alignof(struct hw_cell)},
};

static const lev_fn_desc s_fns[HW_LOCALS_NFNS] = {
    [HW_LOCALS_FN_BUMP] = {"bump", NULL, NULL, T_BUMP, 0},
    [HW_LOCALS_FN_TASK] = {"hw_locals_task", NULL, hw_locals_task__run, T_TASK, LEV_FN_TASK},
};

const lev_module_desc hw_locals_desc = {
    LEV_ABI_VERSION, "hw_locals", S_NF(s_types), s_types, HW_LOCALS_NFNS, s_fns, 0, NULL,
};

const lev_module *hw_locals_module(void)
{
    if (!s_mod && lev_module_register(&hw_locals_desc, &s_mod) != 0)
        return NULL;
    return s_mod;
}

/* ===================================================================
 * Reference
 * =================================================================== */

long hw_locals_ref(long n)
{
    long acc = 0, arr[HW_LOCALS_ARR], bias = 0;
    long *target = &arr[0];
    for (long k = 0; k < HW_LOCALS_ARR; k++)
        arr[k] = k;
    for (long i = 0; i < n; i++) {
        long *pel = &arr[i % HW_LOCALS_ARR];
        *pel += i;
        long local = *pel * (i % 5) + 1;
        acc += local;
        target = pel;
        bias += local % 7;
        long sum = 0;
        for (long *p = arr; p != arr + HW_LOCALS_ARR; p++)
            sum += *p;
        *target ^= sum & 3;
    }
    return s_result(arr, acc, bias);
}
