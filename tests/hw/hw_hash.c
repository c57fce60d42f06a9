/* hw_hash.c - hand-written task module that follows the frame
 * ABI as levpp's output does, in its simplest form (frames pushed on
 * entry, one unwind block per body; levpp adds run/resume pairs, lazy
 * frames and an unwind block per site): a chained hash table with an array of bucket
 * pointers.
 *
 * Source it stands for:
 *
 *   LEV_TASK void hw_hash_task(const void *arg, size_t len) {
 *       long n = *(const long *)arg;
 *       struct hw_htab *tab = calloc(1, sizeof *tab);
 *       tab->nb = 4;
 *       tab->buckets = calloc(tab->nb, sizeof(struct hw_hent *));
 *       uint64_t seed = 7;
 *       for (long i = 0; i < n; i++) {
 *           lev_checkpoint();
 *           seed = seed * 2862933555777941757u + 3037000493u;
 *           uint64_t key = (seed >> 40) % 97;
 *           struct hw_hent **slot = &tab->buckets[key % tab->nb];
 *           while (*slot && (*slot)->key != key) slot = &(*slot)->next;
 *           if (*slot) (*slot)->val += i;
 *           else { *slot = calloc(1, sizeof **slot); (*slot)->key = key;
 *                  (*slot)->val = i; tab->count++; }
 *           if (tab->count > 2 * tab->nb) {                       rehash
 *               struct hw_hent **old = tab->buckets;
 *               uint32_t old_nb = tab->nb;
 *               tab->nb *= 2;
 *               tab->buckets = calloc(tab->nb, sizeof(struct hw_hent *));
 *               for (uint32_t b = 0; b < old_nb; b++) {
 *                   lev_checkpoint();
 *                   while (old[b]) { struct hw_hent *e = old[b]; old[b] = e->next;
 *                       e->next = tab->buckets[e->key % tab->nb];
 *                       tab->buckets[e->key % tab->nb] = e; }
 *               }
 *               free(old);
 *           }
 *       }
 *       long res = 0;                                               look up every key
 *       for (uint64_t k = 0; k < 97; k++) {
 *           lev_checkpoint();
 *           struct hw_hent *e = tab->buckets[k % tab->nb];
 *           while (e && e->key != k) e = e->next;
 *           res = res * 31 % 1000000007 + (e ? e->val + 1 : 0);
 *       }
 *       result = res * 1000 + tab->nb;
 *   }
 */
#include "hw_hash.h"

#include <stddef.h>
#include <string.h>

enum { T_TASK = LEV_T_USER, T_HENT, T_HTAB };

#define S_KEYS 97u

static lev_module *s_mod;

static uint64_t s_next(uint64_t seed) { return seed * 2862933555777941757ull + 3037000493ull; }

static int hw_hash_task__run(lev_ctx *vt, void *frame)
{
    struct hw_hash_task__frame *fr = frame;
    struct hw_hent *e;
    long res;
    switch (fr->t.h.pc) {
    case 0:
        break;
    case 1:
        goto resume_1;
    case 2:
        goto resume_2;
    case 3:
        res = fr->result;
        goto resume_3;
    default:
        lev_vt_fail(vt, LEV_EFAILED, "hw_hash_task: bad resume point");
        return LEV_RUN_EXIT;
    }
    if (fr->t.len != sizeof fr->n) {
        lev_vt_fail(vt, LEV_EINVAL, "hw_hash_task: argument is not a long");
        return LEV_RUN_EXIT;
    }
    memcpy(&fr->n, fr->t.arg, sizeof fr->n);
    fr->tab = lev_alloc(s_mod, T_HTAB, 1);
    if (!fr->tab)
        goto nomem;
    fr->tab->nb = 4;
    fr->tab->buckets = lev_alloc(s_mod, LEV_T_PTR, fr->tab->nb);
    if (!fr->tab->buckets)
        goto nomem;
    fr->seed = 7;
    for (fr->i = 0; fr->i < fr->n; fr->i++) {
        if (lev_poll(vt) && lev_safepoint(vt, LEV_SP_CHECKPOINT)) {
            fr->t.h.pc = 1;
            return LEV_RUN_UNWIND;
        }
    resume_1:
        fr->seed = s_next(fr->seed);
        fr->key = (fr->seed >> 40) % S_KEYS;
        fr->slot = &fr->tab->buckets[fr->key % fr->tab->nb];
        while (*fr->slot && (*fr->slot)->key != fr->key)
            fr->slot = &(*fr->slot)->next;
        if (*fr->slot) {
            (*fr->slot)->val += fr->i;
        } else {
            e = lev_alloc(s_mod, T_HENT, 1);
            if (!e)
                goto nomem;
            e->key = fr->key;
            e->val = fr->i;
            *fr->slot = e;
            fr->tab->count++;
        }
        fr->slot = NULL;
        if (fr->tab->count > 2 * fr->tab->nb) {
            fr->old = fr->tab->buckets;
            fr->old_nb = fr->tab->nb;
            fr->tab->nb *= 2;
            fr->tab->buckets = lev_alloc(s_mod, LEV_T_PTR, fr->tab->nb);
            if (!fr->tab->buckets)
                goto nomem;
            for (fr->b = 0; fr->b < fr->old_nb; fr->b++) {
                if (lev_poll(vt) && lev_safepoint(vt, LEV_SP_CHECKPOINT)) {
                    fr->t.h.pc = 2;
                    return LEV_RUN_UNWIND;
                }
            resume_2:
                while (fr->old[fr->b]) {
                    e = fr->old[fr->b];
                    fr->old[fr->b] = e->next;
                    e->next = fr->tab->buckets[e->key % fr->tab->nb];
                    fr->tab->buckets[e->key % fr->tab->nb] = e;
                }
            }
            lev_free(fr->old);
            fr->old = NULL;
        }
    }
    res = 0;
    for (fr->key = 0; fr->key < S_KEYS; fr->key++) {
        if (lev_poll(vt) && lev_safepoint(vt, LEV_SP_CHECKPOINT)) {
            fr->t.h.pc = 3;
            fr->result = res;
            return LEV_RUN_UNWIND;
        }
    resume_3:
        e = fr->tab->buckets[fr->key % fr->tab->nb];
        while (e && e->key != fr->key)
            e = e->next;
        res = res * 31 % 1000000007 + (e ? e->val + 1 : 0);
    }
    fr->result = res * 1000 + fr->tab->nb;
    return LEV_RUN_DONE;
nomem:
    lev_vt_fail(vt, LEV_ENOMEM, "hw_hash_task: no memory");
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
    {"arg", offsetof(struct hw_hash_task__frame, t.arg), LEV_K_PTR, 1, 0},
    {"len", offsetof(struct hw_hash_task__frame, t.len), LEV_K_B8, 1, 0},
    S_F(struct hw_hash_task__frame, n, LEV_K_B8, 1, 0),
    S_F(struct hw_hash_task__frame, i, LEV_K_B8, 1, 0),
    S_F(struct hw_hash_task__frame, seed, LEV_K_B8, 1, 0),
    S_F(struct hw_hash_task__frame, key, LEV_K_B8, 1, 0),
    S_F(struct hw_hash_task__frame, tab, LEV_K_PTR, 1, 0),
    S_F(struct hw_hash_task__frame, old, LEV_K_PTR, 1, 0),
    S_F(struct hw_hash_task__frame, old_nb, LEV_K_B4, 1, 0),
    S_F(struct hw_hash_task__frame, b, LEV_K_B4, 1, 0),
    S_F(struct hw_hash_task__frame, slot, LEV_K_PTR, 1, 0),
    S_F(struct hw_hash_task__frame, result, LEV_K_B8, 1, 0),
};
static const lev_field_desc hent__fields[] = {
    S_F(struct hw_hent, key, LEV_K_B8, 1, 0),
    S_F(struct hw_hent, val, LEV_K_B8, 1, 0),
    S_F(struct hw_hent, next, LEV_K_PTR, 1, 0),
};
static const lev_field_desc htab__fields[] = {
    S_F(struct hw_htab, nb, LEV_K_B4, 1, 0),
    S_F(struct hw_htab, count, LEV_K_B4, 1, 0),
    S_F(struct hw_htab, buckets, LEV_K_PTR, 1, 0),
};

static const lev_type_desc s_types[] = {
    {"frame hw_hash_task", sizeof(struct hw_hash_task__frame), S_NF(task__fields), task__fields,
     _Alignof(struct hw_hash_task__frame)},
    {"struct hw_hent", sizeof(struct hw_hent), S_NF(hent__fields), hent__fields,
     _Alignof(struct hw_hent)},
    {"struct hw_htab", sizeof(struct hw_htab), S_NF(htab__fields), htab__fields,
     _Alignof(struct hw_htab)},
};

static const lev_fn_desc s_fns[HW_HASH_NFNS] = {
    [HW_HASH_FN_TASK] = {"hw_hash_task", NULL, hw_hash_task__run, T_TASK, LEV_FN_TASK},
};

const lev_module_desc hw_hash_desc = {
    LEV_ABI_VERSION, "hw_hash", S_NF(s_types), s_types, HW_HASH_NFNS, s_fns, 0, NULL,
};

const lev_module *hw_hash_module(void)
{
    if (!s_mod && lev_module_register(&hw_hash_desc, &s_mod) != 0)
        return NULL;
    return s_mod;
}

/* ===================================================================
 * Reference: the same values in a direct-mapped table
 * =================================================================== */

long hw_hash_ref(long n)
{
    long val[S_KEYS] = {0};
    int present[S_KEYS] = {0};
    uint32_t nb = 4, count = 0;
    uint64_t seed = 7;
    for (long i = 0; i < n; i++) {
        seed = s_next(seed);
        uint64_t key = (seed >> 40) % S_KEYS;
        if (present[key]) {
            val[key] += i;
        } else {
            present[key] = 1;
            val[key] = i;
            count++;
        }
        if (count > 2 * nb)
            nb *= 2;
    }
    long res = 0;
    for (uint64_t k = 0; k < S_KEYS; k++)
        res = res * 31 % 1000000007 + (present[k] ? val[k] + 1 : 0);
    return res * 1000 + nb;
}
