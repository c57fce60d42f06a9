/* hw_fib.c - hand-written task module that follows the frame
 * ABI as levpp's output does, in its simplest form (frames pushed on
 * entry, one unwind block per body; levpp adds run/resume pairs, lazy
 * frames and an unwind block per site): direct recursion (fib), mutual recursion
 * (is_even/is_odd, also used for deep recursion) and their task entries.
 *
 * Source it stands for:
 *
 *   long fib(long n) {
 *       lev_checkpoint();
 *       if (n < 2) return n;
 *       long a = fib(n - 1);
 *       lev_checkpoint();
 *       return a + fib(n - 2);
 *   }
 *   int is_even(long n, long every) {
 *       if (n % every == 0) lev_checkpoint();
 *       return n == 0 ? 1 : is_odd(n - 1, every);
 *   }
 *   int is_odd(long n, long every) {
 *       if (n % every == 0) lev_checkpoint();
 *       return n == 0 ? 0 : is_even(n - 1, every);
 *   }
 */
#include "hw_fib.h"

#include <stddef.h>
#include <string.h>

enum { T_FIB = LEV_T_USER, T_IS_EVEN, T_IS_ODD, T_FIB_TASK, T_PARITY_TASK };

static lev_module *s_mod;

/* ===================================================================
 * Frames
 * =================================================================== */

struct fib__frame {
    lev_frame h;
    long n;
    long a; /* fib(n - 1): live across the second call */
    long r; /* result slot of the callee */
};

struct is_even__frame {
    lev_frame h;
    long n;
    long every;
    int r;
};

struct is_odd__frame {
    lev_frame h;
    long n;
    long every;
    int r;
};

static int fib__run(lev_ctx *vt, struct fib__frame *fr, long *ret);
static int is_even__run(lev_ctx *vt, struct is_even__frame *fr, int *ret);
static int is_odd__run(lev_ctx *vt, struct is_odd__frame *fr, int *ret);

/* ===================================================================
 * Bodies
 * =================================================================== */

static int fib__run(lev_ctx *vt, struct fib__frame *fr, long *ret)
{
    long n, a;
    struct fib__frame *cf;
    int rc;
    switch (fr->h.pc) {
    case 0:
        n = fr->n;
        break;
    case 1:
        n = fr->n;
        goto resume_1;
    case 2:
        n = fr->n;
        goto resume_2;
    case 3:
        n = fr->n;
        a = fr->a;
        goto resume_3;
    case 4:
        a = fr->a;
        goto resume_4;
    default:
        lev_vt_fail(vt, LEV_EFAILED, "fib: bad resume point");
        return LEV_RUN_EXIT;
    }
    if (lev_poll(vt) && lev_safepoint(vt, LEV_SP_CHECKPOINT)) {
        fr->h.pc = 1;
        fr->n = n;
        return LEV_RUN_UNWIND;
    }
resume_1:
    if (n < 2) {
        *ret = n;
        return LEV_RUN_DONE;
    }
    cf = lev_frame_push(vt, sizeof *cf, HW_FIB_FN_FIB);
    if (!cf) {
        lev_vt_fail(vt, LEV_ENOMEM, "fib: no frame");
        return LEV_RUN_EXIT;
    }
    cf->n = n - 1;
    if (0) {
    resume_2:
        cf = lev_frame_callee(vt, fr, sizeof *fr);
    }
    rc = fib__run(vt, cf, &fr->r);
    if (rc != LEV_RUN_DONE) {
        if (rc == LEV_RUN_UNWIND) {
            fr->h.pc = 2;
            fr->n = n;
        } else {
            lev_frame_pop(vt, cf);
        }
        return rc;
    }
    lev_frame_pop(vt, cf);
    a = fr->r;
    if (lev_poll(vt) && lev_safepoint(vt, LEV_SP_CHECKPOINT)) {
        fr->h.pc = 3;
        fr->n = n;
        fr->a = a;
        return LEV_RUN_UNWIND;
    }
resume_3:
    cf = lev_frame_push(vt, sizeof *cf, HW_FIB_FN_FIB);
    if (!cf) {
        lev_vt_fail(vt, LEV_ENOMEM, "fib: no frame");
        return LEV_RUN_EXIT;
    }
    cf->n = n - 2;
    if (0) {
    resume_4:
        cf = lev_frame_callee(vt, fr, sizeof *fr);
    }
    rc = fib__run(vt, cf, &fr->r);
    if (rc != LEV_RUN_DONE) {
        if (rc == LEV_RUN_UNWIND) {
            fr->h.pc = 4;
            fr->a = a;
        } else {
            lev_frame_pop(vt, cf);
        }
        return rc;
    }
    lev_frame_pop(vt, cf);
    *ret = a + fr->r;
    return LEV_RUN_DONE;
}

static int is_even__run(lev_ctx *vt, struct is_even__frame *fr, int *ret)
{
    long n, every;
    struct is_odd__frame *cf;
    int rc;
    switch (fr->h.pc) {
    case 0:
        n = fr->n;
        every = fr->every;
        break;
    case 1:
        n = fr->n;
        every = fr->every;
        goto resume_1;
    case 2:
        goto resume_2;
    default:
        lev_vt_fail(vt, LEV_EFAILED, "is_even: bad resume point");
        return LEV_RUN_EXIT;
    }
    if (n % every == 0) {
        if (lev_poll(vt) && lev_safepoint(vt, LEV_SP_CHECKPOINT)) {
            fr->h.pc = 1;
            fr->n = n;
            fr->every = every;
            return LEV_RUN_UNWIND;
        }
    }
resume_1:
    if (n == 0) {
        *ret = 1;
        return LEV_RUN_DONE;
    }
    cf = lev_frame_push(vt, sizeof *cf, HW_FIB_FN_IS_ODD);
    if (!cf) {
        lev_vt_fail(vt, LEV_ENOMEM, "is_even: no frame");
        return LEV_RUN_EXIT;
    }
    cf->n = n - 1;
    cf->every = every;
    if (0) {
    resume_2:
        cf = lev_frame_callee(vt, fr, sizeof *fr);
    }
    rc = is_odd__run(vt, cf, &fr->r);
    if (rc != LEV_RUN_DONE) {
        if (rc == LEV_RUN_UNWIND)
            fr->h.pc = 2;
        else
            lev_frame_pop(vt, cf);
        return rc;
    }
    lev_frame_pop(vt, cf);
    *ret = fr->r;
    return LEV_RUN_DONE;
}

static int is_odd__run(lev_ctx *vt, struct is_odd__frame *fr, int *ret)
{
    long n, every;
    struct is_even__frame *cf;
    int rc;
    switch (fr->h.pc) {
    case 0:
        n = fr->n;
        every = fr->every;
        break;
    case 1:
        n = fr->n;
        every = fr->every;
        goto resume_1;
    case 2:
        goto resume_2;
    default:
        lev_vt_fail(vt, LEV_EFAILED, "is_odd: bad resume point");
        return LEV_RUN_EXIT;
    }
    if (n % every == 0) {
        if (lev_poll(vt) && lev_safepoint(vt, LEV_SP_CHECKPOINT)) {
            fr->h.pc = 1;
            fr->n = n;
            fr->every = every;
            return LEV_RUN_UNWIND;
        }
    }
resume_1:
    if (n == 0) {
        *ret = 0;
        return LEV_RUN_DONE;
    }
    cf = lev_frame_push(vt, sizeof *cf, HW_FIB_FN_IS_EVEN);
    if (!cf) {
        lev_vt_fail(vt, LEV_ENOMEM, "is_odd: no frame");
        return LEV_RUN_EXIT;
    }
    cf->n = n - 1;
    cf->every = every;
    if (0) {
    resume_2:
        cf = lev_frame_callee(vt, fr, sizeof *fr);
    }
    rc = is_even__run(vt, cf, &fr->r);
    if (rc != LEV_RUN_DONE) {
        if (rc == LEV_RUN_UNWIND)
            fr->h.pc = 2;
        else
            lev_frame_pop(vt, cf);
        return rc;
    }
    lev_frame_pop(vt, cf);
    *ret = fr->r;
    return LEV_RUN_DONE;
}

/* LEV_TASK void hw_fib_task(const void *arg, size_t len) */
static int hw_fib_task__run(lev_ctx *vt, void *frame)
{
    struct hw_fib_task__frame *fr = frame;
    struct fib__frame *cf;
    int rc;
    switch (fr->t.h.pc) {
    case 0:
        break;
    case 1:
        goto resume_1;
    default:
        lev_vt_fail(vt, LEV_EFAILED, "hw_fib_task: bad resume point");
        return LEV_RUN_EXIT;
    }
    if (fr->t.len != sizeof fr->n) {
        lev_vt_fail(vt, LEV_EINVAL, "hw_fib_task: argument is not a long");
        return LEV_RUN_EXIT;
    }
    memcpy(&fr->n, fr->t.arg, sizeof fr->n);
    cf = lev_frame_push(vt, sizeof *cf, HW_FIB_FN_FIB);
    if (!cf) {
        lev_vt_fail(vt, LEV_ENOMEM, "hw_fib_task: no frame");
        return LEV_RUN_EXIT;
    }
    cf->n = fr->n;
    if (0) {
    resume_1:
        cf = lev_frame_callee(vt, fr, sizeof *fr);
    }
    rc = fib__run(vt, cf, &fr->r);
    if (rc != LEV_RUN_DONE) {
        if (rc == LEV_RUN_UNWIND)
            fr->t.h.pc = 1;
        else
            lev_frame_pop(vt, cf);
        return rc;
    }
    lev_frame_pop(vt, cf);
    fr->result = fr->r;
    return LEV_RUN_DONE;
}

/* LEV_TASK void hw_parity_task(const void *arg, size_t len) */
static int hw_parity_task__run(lev_ctx *vt, void *frame)
{
    struct hw_parity_task__frame *fr = frame;
    struct is_even__frame *cf;
    hw_parity_arg a;
    int rc;
    switch (fr->t.h.pc) {
    case 0:
        break;
    case 1:
        goto resume_1;
    default:
        lev_vt_fail(vt, LEV_EFAILED, "hw_parity_task: bad resume point");
        return LEV_RUN_EXIT;
    }
    if (fr->t.len != sizeof a) {
        lev_vt_fail(vt, LEV_EINVAL, "hw_parity_task: bad argument");
        return LEV_RUN_EXIT;
    }
    memcpy(&a, fr->t.arg, sizeof a);
    fr->n = a.n;
    fr->every = a.every > 0 ? a.every : 1;
    cf = lev_frame_push(vt, sizeof *cf, HW_FIB_FN_IS_EVEN);
    if (!cf) {
        lev_vt_fail(vt, LEV_ENOMEM, "hw_parity_task: no frame");
        return LEV_RUN_EXIT;
    }
    cf->n = fr->n;
    cf->every = fr->every;
    if (0) {
    resume_1:
        cf = lev_frame_callee(vt, fr, sizeof *fr);
    }
    rc = is_even__run(vt, cf, &fr->r);
    if (rc != LEV_RUN_DONE) {
        if (rc == LEV_RUN_UNWIND)
            fr->t.h.pc = 1;
        else
            lev_frame_pop(vt, cf);
        return rc;
    }
    lev_frame_pop(vt, cf);
    fr->result = fr->r;
    return LEV_RUN_DONE;
}

/* ===================================================================
 * Descriptors
 * =================================================================== */

static const lev_field_desc fib__fields[] = {
    {"n", offsetof(struct fib__frame, n), LEV_K_B8, 1, 0},
    {"a", offsetof(struct fib__frame, a), LEV_K_B8, 1, 0},
    {"r", offsetof(struct fib__frame, r), LEV_K_B8, 1, 0},
};
static const lev_field_desc is_even__fields[] = {
    {"n", offsetof(struct is_even__frame, n), LEV_K_B8, 1, 0},
    {"every", offsetof(struct is_even__frame, every), LEV_K_B8, 1, 0},
    {"r", offsetof(struct is_even__frame, r), LEV_K_B4, 1, 0},
};
static const lev_field_desc is_odd__fields[] = {
    {"n", offsetof(struct is_odd__frame, n), LEV_K_B8, 1, 0},
    {"every", offsetof(struct is_odd__frame, every), LEV_K_B8, 1, 0},
    {"r", offsetof(struct is_odd__frame, r), LEV_K_B4, 1, 0},
};
static const lev_field_desc hw_fib_task__fields[] = {
    {"arg", offsetof(struct hw_fib_task__frame, t.arg), LEV_K_PTR, 1, 0},
    {"len", offsetof(struct hw_fib_task__frame, t.len), LEV_K_B8, 1, 0},
    {"n", offsetof(struct hw_fib_task__frame, n), LEV_K_B8, 1, 0},
    {"r", offsetof(struct hw_fib_task__frame, r), LEV_K_B8, 1, 0},
    {"result", offsetof(struct hw_fib_task__frame, result), LEV_K_B8, 1, 0},
};
static const lev_field_desc hw_parity_task__fields[] = {
    {"arg", offsetof(struct hw_parity_task__frame, t.arg), LEV_K_PTR, 1, 0},
    {"len", offsetof(struct hw_parity_task__frame, t.len), LEV_K_B8, 1, 0},
    {"n", offsetof(struct hw_parity_task__frame, n), LEV_K_B8, 1, 0},
    {"every", offsetof(struct hw_parity_task__frame, every), LEV_K_B8, 1, 0},
    {"r", offsetof(struct hw_parity_task__frame, r), LEV_K_B4, 1, 0},
    {"result", offsetof(struct hw_parity_task__frame, result), LEV_K_B4, 1, 0},
};

#define S_NF(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))

static const lev_type_desc s_types[] = {
    {"frame fib", sizeof(struct fib__frame), S_NF(fib__fields), fib__fields,
     _Alignof(struct fib__frame)},
    {"frame is_even", sizeof(struct is_even__frame), S_NF(is_even__fields), is_even__fields,
     _Alignof(struct is_even__frame)},
    {"frame is_odd", sizeof(struct is_odd__frame), S_NF(is_odd__fields), is_odd__fields,
     _Alignof(struct is_odd__frame)},
    {"frame hw_fib_task", sizeof(struct hw_fib_task__frame), S_NF(hw_fib_task__fields),
     hw_fib_task__fields, _Alignof(struct hw_fib_task__frame)},
    {"frame hw_parity_task", sizeof(struct hw_parity_task__frame), S_NF(hw_parity_task__fields),
     hw_parity_task__fields, _Alignof(struct hw_parity_task__frame)},
};

static const lev_fn_desc s_fns[HW_FIB_NFNS] = {
    [HW_FIB_FN_FIB] = {"fib", NULL, NULL, T_FIB, 0},
    [HW_FIB_FN_IS_EVEN] = {"is_even", NULL, NULL, T_IS_EVEN, 0},
    [HW_FIB_FN_IS_ODD] = {"is_odd", NULL, NULL, T_IS_ODD, 0},
    [HW_FIB_FN_FIB_TASK] = {"hw_fib_task", NULL, hw_fib_task__run, T_FIB_TASK, LEV_FN_TASK},
    [HW_FIB_FN_PARITY_TASK] = {"hw_parity_task", NULL, hw_parity_task__run, T_PARITY_TASK,
                               LEV_FN_TASK},
};

const lev_module_desc hw_fib_desc = {
    LEV_ABI_VERSION, "hw_fib", S_NF(s_types), s_types, HW_FIB_NFNS, s_fns, 0, NULL,
};

const lev_module *hw_fib_module(void)
{
    if (!s_mod && lev_module_register(&hw_fib_desc, &s_mod) != 0)
        return NULL;
    return s_mod;
}

/* ===================================================================
 * References
 * =================================================================== */

long hw_fib_ref(long n)
{
    long a = 0, b = 1;
    for (long i = 0; i < n; i++) {
        long t = a + b;
        a = b;
        b = t;
    }
    return a;
}

long hw_fib_calls(long n)
{
    /* calls(n) = 1 + calls(n-1) + calls(n-2), calls(0) = calls(1) = 1 */
    long c0 = 1, c1 = 1;
    if (n < 2)
        return 1;
    for (long i = 2; i <= n; i++) {
        long c = 1 + c1 + c0;
        c0 = c1;
        c1 = c;
    }
    return c1;
}
