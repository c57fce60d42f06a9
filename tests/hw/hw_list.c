/* hw_list.c - hand-written task module that follows the frame
 * ABI as levpp's output does, in its simplest form (frames pushed on
 * entry, one unwind block per body; levpp adds run/resume pairs, lazy
 * frames and an unwind block per site): a linked list on the VT heap.
 *
 * Source it stands for:
 *
 *   LEV_TASK void hw_list_task(const void *arg, size_t len) {
 *       long n = *(const long *)arg;
 *       struct hw_node *head = NULL, **tail = &head, *cur, *prev;
 *       for (long i = 0; i < n; i++) {               build, appending
 *           lev_checkpoint();
 *           struct hw_node *nd = malloc(sizeof *nd);
 *           nd->v = (i * 7) % 13 + i;
 *           *tail = nd;
 *           tail = &nd->next;
 *       }
 *       prev = NULL; cur = head;                      reverse in place
 *       while (cur) {
 *           lev_checkpoint();
 *           struct hw_node *nx = cur->next;
 *           cur->next = prev; prev = cur; cur = nx;
 *       }
 *       head = prev;
 *       tail = &head;                                 drop multiples of 3
 *       while (*tail) {
 *           lev_checkpoint();
 *           struct hw_node *c = *tail;
 *           if (c->v % 3 == 0) { *tail = c->next; free(c); }
 *           else tail = &c->next;
 *       }
 *       long sum = 0, i = 0;                          weighted sum
 *       for (cur = head; cur; cur = cur->next) { lev_checkpoint(); sum += cur->v * ++i; }
 *       result = sum;
 *   }
 */
#include "hw_list.h"

#include <stddef.h>
#include <string.h>

enum { T_TASK = HW_LIST_T_TASK, T_NODE = HW_LIST_T_NODE };

static lev_module *s_mod;

static int hw_list_task__run(lev_ctx *vt, void *frame)
{
    struct hw_list_task__frame *fr = frame;
    struct hw_node *nd, *nx, *c;
    long i;
    switch (fr->t.h.pc) {
    case 0:
        break;
    case 1:
        i = fr->i;
        goto resume_1;
    case 2:
        goto resume_2;
    case 3:
        goto resume_3;
    case 4:
        i = fr->i;
        goto resume_4;
    default:
        lev_vt_fail(vt, LEV_EFAILED, "hw_list_task: bad resume point");
        return LEV_RUN_EXIT;
    }
    if (fr->t.len != sizeof fr->n) {
        lev_vt_fail(vt, LEV_EINVAL, "hw_list_task: argument is not a long");
        return LEV_RUN_EXIT;
    }
    memcpy(&fr->n, fr->t.arg, sizeof fr->n);
    fr->head = NULL;
    fr->tail = &fr->head;
    for (i = 0; i < fr->n; i++) {
        if (lev_poll(vt) && lev_safepoint(vt, LEV_SP_CHECKPOINT)) {
            fr->t.h.pc = 1;
            fr->i = i;
            return LEV_RUN_UNWIND;
        }
    resume_1:
        nd = lev_alloc(s_mod, T_NODE, 1);
        if (!nd) {
            lev_vt_fail(vt, LEV_ENOMEM, "hw_list_task: no memory");
            return LEV_RUN_EXIT;
        }
        nd->v = (i * 7) % 13 + i;
        *fr->tail = nd;
        fr->tail = &nd->next;
    }

    fr->prev = NULL;
    fr->cur = fr->head;
    while (fr->cur) {
        if (lev_poll(vt) && lev_safepoint(vt, LEV_SP_CHECKPOINT)) {
            fr->t.h.pc = 2;
            return LEV_RUN_UNWIND;
        }
    resume_2:
        nx = fr->cur->next;
        fr->cur->next = fr->prev;
        fr->prev = fr->cur;
        fr->cur = nx;
    }
    fr->head = fr->prev;
    fr->prev = NULL; /* dead from here on: a stale copy would dangle once its node is freed */

    fr->tail = &fr->head;
    while (*fr->tail) {
        if (lev_poll(vt) && lev_safepoint(vt, LEV_SP_CHECKPOINT)) {
            fr->t.h.pc = 3;
            return LEV_RUN_UNWIND;
        }
    resume_3:
        c = *fr->tail;
        if (c->v % 3 == 0) {
            *fr->tail = c->next;
            lev_free(c);
        } else {
            fr->tail = &c->next;
        }
    }

    fr->sum = 0;
    i = 0;
    for (fr->cur = fr->head; fr->cur; fr->cur = fr->cur->next) {
        if (lev_poll(vt) && lev_safepoint(vt, LEV_SP_CHECKPOINT)) {
            fr->t.h.pc = 4;
            fr->i = i;
            return LEV_RUN_UNWIND;
        }
    resume_4:
        fr->sum += fr->cur->v * ++i;
    }
    fr->result = fr->sum;
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

static const lev_field_desc task__fields[] = {
    {"arg", offsetof(struct hw_list_task__frame, t.arg), LEV_K_PTR, 1, 0},
    {"len", offsetof(struct hw_list_task__frame, t.len), LEV_K_B8, 1, 0},
    S_F(struct hw_list_task__frame, n, LEV_K_B8, 1, 0),
    S_F(struct hw_list_task__frame, i, LEV_K_B8, 1, 0),
    S_F(struct hw_list_task__frame, head, LEV_K_PTR, 1, 0),
    S_F(struct hw_list_task__frame, tail, LEV_K_PTR, 1, 0),
    S_F(struct hw_list_task__frame, cur, LEV_K_PTR, 1, 0),
    S_F(struct hw_list_task__frame, prev, LEV_K_PTR, 1, 0),
    S_F(struct hw_list_task__frame, sum, LEV_K_B8, 1, 0),
    S_F(struct hw_list_task__frame, result, LEV_K_B8, 1, 0),
};
static const lev_field_desc node__fields[] = {
    S_F(struct hw_node, v, LEV_K_B8, 1, 0),
    S_F(struct hw_node, next, LEV_K_PTR, 1, 0),
};

static const lev_type_desc s_types[] = {
    {"frame hw_list_task", sizeof(struct hw_list_task__frame), S_NF(task__fields), task__fields,
     _Alignof(struct hw_list_task__frame)},
    {"struct hw_node", sizeof(struct hw_node), S_NF(node__fields), node__fields,
     _Alignof(struct hw_node)},
};

static const lev_fn_desc s_fns[HW_LIST_NFNS] = {
    [HW_LIST_FN_TASK] = {"hw_list_task", NULL, hw_list_task__run, T_TASK, LEV_FN_TASK},
};

const lev_module_desc hw_list_desc = {
    LEV_ABI_VERSION, "hw_list", S_NF(s_types), s_types, HW_LIST_NFNS, s_fns, 0, NULL,
};

const lev_module *hw_list_module(void)
{
    if (!s_mod && lev_module_register(&hw_list_desc, &s_mod) != 0)
        return NULL;
    return s_mod;
}

/* ===================================================================
 * Reference
 * =================================================================== */

long hw_list_ref(long n)
{
    /* The list reversed and filtered is the values in reverse order
     * without the multiples of 3. */
    long sum = 0, pos = 0;
    for (long i = n - 1; i >= 0; i--) {
        long v = (i * 7) % 13 + i;
        if (v % 3 != 0)
            sum += v * ++pos;
    }
    return sum;
}
