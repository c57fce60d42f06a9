/* hw_statics.c - hand-written task module that follows the frame
 * ABI as levpp's output does, in its simplest form (frames pushed on
 * entry, one unwind block per body; levpp adds run/resume pairs, lazy
 * frames and an unwind block per site): statics. A string literal gets a generated symbol
 * and is registered as a static that does not travel (pointers to it come
 * back to the same address); `counter` and `head` are registered with
 * LEV_S_TRAVELS, so their values are part of every image.
 *
 * Source it stands for:
 *
 *   static const long primes[8] = {2, 3, 5, 7, 11, 13, 17, 19};
 *   static long counter;
 *   static struct hw_snode *head;
 *
 *   LEV_TASK void hw_statics_task(const void *arg, size_t len) {
 *       long n = *(const long *)arg;
 *       const char *msg = "leverage: statics travel" + 10;
 *       const long *pp = primes, *pend = primes + 8;
 *       long *pctr = &counter;
 *       counter = 0; head = NULL;
 *       for (long i = 0; i < n; i++) {
 *           lev_checkpoint();
 *           *pctr += *pp + msg[i % 7];
 *           struct hw_snode *nd = malloc(sizeof *nd);
 *           nd->v = counter; nd->next = head; head = nd;
 *           if (++pp == pend) pp = primes;
 *       }
 *       long res = counter * 7 + (msg - "leverage...");
 *       for (struct hw_snode *p = head; p; p = p->next) res = res * 3 % 1000003 + p->v;
 *       result = res;
 *   }
 */
#include "hw_statics.h"

#include <stddef.h>
#include <string.h>

enum { T_TASK = LEV_T_USER, T_SNODE };

static lev_module *s_mod;

static const char lev__str0[] = "leverage: statics travel";
static const long primes[8] = {2, 3, 5, 7, 11, 13, 17, 19};
static long counter;
static struct hw_snode *head;

static long s_finish(long ctr, const struct hw_snode *p, long msg_off)
{
    long res = ctr * 7 + msg_off;
    for (; p; p = p->next)
        res = res * 3 % 1000003 + p->v;
    return res;
}

static int hw_statics_task__run(lev_ctx *vt, void *frame)
{
    struct hw_statics_task__frame *fr = frame;
    struct hw_snode *nd;
    switch (fr->t.h.pc) {
    case 0:
        break;
    case 1:
        goto resume_1;
    default:
        lev_vt_fail(vt, LEV_EFAILED, "hw_statics_task: bad resume point");
        return LEV_RUN_EXIT;
    }
    if (fr->t.len != sizeof fr->n) {
        lev_vt_fail(vt, LEV_EINVAL, "hw_statics_task: argument is not a long");
        return LEV_RUN_EXIT;
    }
    memcpy(&fr->n, fr->t.arg, sizeof fr->n);
    fr->msg = lev__str0 + HW_STATICS_MSG_OFF;
    fr->pp = primes;
    fr->pend = primes + 8;
    fr->pctr = &counter;
    counter = 0;
    head = NULL;
    for (fr->i = 0; fr->i < fr->n; fr->i++) {
        if (lev_poll(vt) && lev_safepoint(vt, LEV_SP_CHECKPOINT)) {
            fr->t.h.pc = 1;
            return LEV_RUN_UNWIND;
        }
    resume_1:
        *fr->pctr += *fr->pp + fr->msg[fr->i % 7];
        nd = lev_alloc(s_mod, T_SNODE, 1);
        if (!nd) {
            lev_vt_fail(vt, LEV_ENOMEM, "hw_statics_task: no memory");
            return LEV_RUN_EXIT;
        }
        nd->v = counter;
        nd->next = head;
        head = nd;
        if (++fr->pp == fr->pend)
            fr->pp = primes;
    }
    fr->result = s_finish(counter, head, fr->msg - lev__str0);
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
    {"arg", offsetof(struct hw_statics_task__frame, t.arg), LEV_K_PTR, 1, 0},
    {"len", offsetof(struct hw_statics_task__frame, t.len), LEV_K_B8, 1, 0},
    S_F(struct hw_statics_task__frame, n, LEV_K_B8, 1, 0),
    S_F(struct hw_statics_task__frame, i, LEV_K_B8, 1, 0),
    S_F(struct hw_statics_task__frame, msg, LEV_K_PTR, 1, 0),
    S_F(struct hw_statics_task__frame, pp, LEV_K_PTR, 1, 0),
    S_F(struct hw_statics_task__frame, pend, LEV_K_PTR, 1, 0),
    S_F(struct hw_statics_task__frame, pctr, LEV_K_PTR, 1, 0),
    S_F(struct hw_statics_task__frame, result, LEV_K_B8, 1, 0),
};
static const lev_field_desc snode__fields[] = {
    S_F(struct hw_snode, v, LEV_K_B8, 1, 0),
    S_F(struct hw_snode, next, LEV_K_PTR, 1, 0),
};

static const lev_type_desc s_types[] = {
    {"frame hw_statics_task", sizeof(struct hw_statics_task__frame), S_NF(task__fields),
     task__fields, _Alignof(struct hw_statics_task__frame)},
    {"struct hw_snode", sizeof(struct hw_snode), S_NF(snode__fields), snode__fields,
     _Alignof(struct hw_snode)},
};

static const lev_fn_desc s_fns[HW_STATICS_NFNS] = {
    [HW_STATICS_FN_TASK] = {"hw_statics_task", NULL, hw_statics_task__run, T_TASK, LEV_FN_TASK},
};

static const lev_static_desc s_statics[HW_STATICS_NSTATICS] = {
    [HW_STATICS_S_STR0] = {"lev__str0", (void *)lev__str0, LEV_T_BYTES, sizeof lev__str0, 0},
    [HW_STATICS_S_PRIMES] = {"primes", (void *)primes, LEV_T_U64, 8, 0},
    [HW_STATICS_S_COUNTER] = {"counter", &counter, LEV_T_U64, 1, LEV_S_TRAVELS},
    [HW_STATICS_S_HEAD] = {"head", &head, LEV_T_PTR, 1, LEV_S_TRAVELS},
};

const lev_module_desc hw_statics_desc = {
    LEV_ABI_VERSION, "hw_statics", S_NF(s_types),       s_types,
    HW_STATICS_NFNS, s_fns,        HW_STATICS_NSTATICS, s_statics,
};

const lev_module *hw_statics_module(void)
{
    if (!s_mod && lev_module_register(&hw_statics_desc, &s_mod) != 0)
        return NULL;
    return s_mod;
}

const char *hw_statics_literal(void) { return lev__str0; }
const long *hw_statics_primes(void) { return primes; }
long *hw_statics_counter(void) { return &counter; }
struct hw_snode **hw_statics_head(void) { return &head; }

/* ===================================================================
 * Reference
 * =================================================================== */

long hw_statics_ref(long n)
{
    enum { S_MAX = 4096 };
    static struct hw_snode nodes[S_MAX];
    const char *msg = lev__str0 + HW_STATICS_MSG_OFF;
    struct hw_snode *h = NULL;
    long ctr = 0;
    for (long i = 0; i < n && i < S_MAX; i++) {
        ctr += primes[i % 8] + msg[i % 7];
        nodes[i] = (struct hw_snode){ctr, h};
        h = &nodes[i];
    }
    return s_finish(ctr, h, HW_STATICS_MSG_OFF);
}
