/* hw_tree.c - hand-written task module that follows the frame
 * ABI as levpp's output does, in its simplest form (frames pushed on
 * entry, one unwind block per body; levpp adds run/resume pairs, lazy
 * frames and an unwind block per site): a binary search tree on the VT heap.
 *
 * Source it stands for:
 *
 *   long walk(struct hw_tnode *t, long depth) {
 *       if (!t) return 0;
 *       lev_checkpoint();
 *       long l = walk(t->kid[0], depth + 1);
 *       return l + walk(t->kid[1], depth + 1) + t->key * t->count * (depth + 1);
 *   }
 *
 *   LEV_TASK void hw_tree_task(const void *arg, size_t len) {
 *       long n = *(const long *)arg;
 *       struct hw_tnode *root = NULL;
 *       unsigned long seed = 12345;
 *       for (long i = 0; i < n; i++) {
 *           seed = seed * 6364136223846793005ul + 1442695040888963407ul;
 *           long key = (long)((seed >> 33) % 1000);
 *           struct hw_tnode **link = &root;
 *           while (*link) {
 *               lev_checkpoint();
 *               if ((*link)->key == key) break;
 *               link = &(*link)->kid[key > (*link)->key];
 *           }
 *           if (*link) (*link)->count++;
 *           else { *link = calloc(1, sizeof **link); (*link)->key = key; (*link)->count = 1; }
 *       }
 *       result = walk(root, 0);
 *   }
 */
#include "hw_tree.h"

#include <stddef.h>
#include <string.h>

enum { T_WALK = LEV_T_USER, T_TASK, T_TNODE };

static lev_module *s_mod;

static unsigned long s_next(unsigned long seed)
{
    return seed * 6364136223846793005ul + 1442695040888963407ul;
}

static int walk__run(lev_ctx *vt, struct hw_walk__frame *fr, long *ret)
{
    struct hw_walk__frame *cf;
    int rc;
    switch (fr->h.pc) {
    case 0:
        break;
    case 1:
        goto resume_1;
    case 2:
        goto resume_2;
    case 3:
        goto resume_3;
    default:
        lev_vt_fail(vt, LEV_EFAILED, "walk: bad resume point");
        return LEV_RUN_EXIT;
    }
    if (!fr->t) {
        *ret = 0;
        return LEV_RUN_DONE;
    }
    if (lev_poll(vt) && lev_safepoint(vt, LEV_SP_CHECKPOINT)) {
        fr->h.pc = 1;
        return LEV_RUN_UNWIND;
    }
resume_1:
    cf = lev_frame_push(vt, sizeof *cf, HW_TREE_FN_WALK);
    if (!cf) {
        lev_vt_fail(vt, LEV_ENOMEM, "walk: no frame");
        return LEV_RUN_EXIT;
    }
    cf->t = fr->t->kid[0];
    cf->depth = fr->depth + 1;
    if (0) {
    resume_2:
        cf = lev_frame_callee(vt, fr, sizeof *fr);
    }
    rc = walk__run(vt, cf, &fr->r);
    if (rc != LEV_RUN_DONE) {
        if (rc == LEV_RUN_UNWIND)
            fr->h.pc = 2;
        else
            lev_frame_pop(vt, cf);
        return rc;
    }
    lev_frame_pop(vt, cf);
    fr->l = fr->r;
    cf = lev_frame_push(vt, sizeof *cf, HW_TREE_FN_WALK);
    if (!cf) {
        lev_vt_fail(vt, LEV_ENOMEM, "walk: no frame");
        return LEV_RUN_EXIT;
    }
    cf->t = fr->t->kid[1];
    cf->depth = fr->depth + 1;
    if (0) {
    resume_3:
        cf = lev_frame_callee(vt, fr, sizeof *fr);
    }
    rc = walk__run(vt, cf, &fr->r);
    if (rc != LEV_RUN_DONE) {
        if (rc == LEV_RUN_UNWIND)
            fr->h.pc = 3;
        else
            lev_frame_pop(vt, cf);
        return rc;
    }
    lev_frame_pop(vt, cf);
    *ret = fr->l + fr->r + fr->t->key * fr->t->count * (fr->depth + 1);
    return LEV_RUN_DONE;
}

static int hw_tree_task__run(lev_ctx *vt, void *frame)
{
    struct hw_tree_task__frame *fr = frame;
    struct hw_walk__frame *cf;
    struct hw_tnode *nd;
    int rc;
    switch (fr->t.h.pc) {
    case 0:
        break;
    case 1:
        goto resume_1;
    case 2:
        goto resume_2;
    default:
        lev_vt_fail(vt, LEV_EFAILED, "hw_tree_task: bad resume point");
        return LEV_RUN_EXIT;
    }
    if (fr->t.len != sizeof fr->n) {
        lev_vt_fail(vt, LEV_EINVAL, "hw_tree_task: argument is not a long");
        return LEV_RUN_EXIT;
    }
    memcpy(&fr->n, fr->t.arg, sizeof fr->n);
    fr->root = NULL;
    fr->seed = 12345;
    for (fr->i = 0; fr->i < fr->n; fr->i++) {
        fr->seed = s_next(fr->seed);
        fr->key = (long)((fr->seed >> 33) % 1000);
        fr->link = &fr->root;
        while (*fr->link) {
            if (lev_poll(vt) && lev_safepoint(vt, LEV_SP_CHECKPOINT)) {
                fr->t.h.pc = 1;
                return LEV_RUN_UNWIND;
            }
        resume_1:
            if ((*fr->link)->key == fr->key)
                break;
            fr->link = &(*fr->link)->kid[fr->key > (*fr->link)->key];
        }
        if (*fr->link) {
            (*fr->link)->count++;
        } else {
            nd = lev_alloc(s_mod, T_TNODE, 1);
            if (!nd) {
                lev_vt_fail(vt, LEV_ENOMEM, "hw_tree_task: no memory");
                return LEV_RUN_EXIT;
            }
            nd->key = fr->key;
            nd->count = 1;
            *fr->link = nd;
        }
    }
    fr->link = NULL;
    cf = lev_frame_push(vt, sizeof *cf, HW_TREE_FN_WALK);
    if (!cf) {
        lev_vt_fail(vt, LEV_ENOMEM, "hw_tree_task: no frame");
        return LEV_RUN_EXIT;
    }
    cf->t = fr->root;
    cf->depth = 0;
    if (0) {
    resume_2:
        cf = lev_frame_callee(vt, fr, sizeof *fr);
    }
    rc = walk__run(vt, cf, &fr->r);
    if (rc != LEV_RUN_DONE) {
        if (rc == LEV_RUN_UNWIND)
            fr->t.h.pc = 2;
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

#define S_NF(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))
#define S_F(st, f, kind, count, type)                                                              \
    {                                                                                              \
#f, offsetof(st, f), kind, count, type                                                     \
    }

static const lev_field_desc walk__fields[] = {
    S_F(struct hw_walk__frame, t, LEV_K_PTR, 1, 0),
    S_F(struct hw_walk__frame, depth, LEV_K_B8, 1, 0),
    S_F(struct hw_walk__frame, l, LEV_K_B8, 1, 0),
    S_F(struct hw_walk__frame, r, LEV_K_B8, 1, 0),
};
static const lev_field_desc task__fields[] = {
    {"arg", offsetof(struct hw_tree_task__frame, t.arg), LEV_K_PTR, 1, 0},
    {"len", offsetof(struct hw_tree_task__frame, t.len), LEV_K_B8, 1, 0},
    S_F(struct hw_tree_task__frame, n, LEV_K_B8, 1, 0),
    S_F(struct hw_tree_task__frame, i, LEV_K_B8, 1, 0),
    S_F(struct hw_tree_task__frame, seed, LEV_K_B8, 1, 0),
    S_F(struct hw_tree_task__frame, key, LEV_K_B8, 1, 0),
    S_F(struct hw_tree_task__frame, root, LEV_K_PTR, 1, 0),
    S_F(struct hw_tree_task__frame, link, LEV_K_PTR, 1, 0),
    S_F(struct hw_tree_task__frame, r, LEV_K_B8, 1, 0),
    S_F(struct hw_tree_task__frame, result, LEV_K_B8, 1, 0),
};
static const lev_field_desc tnode__fields[] = {
    S_F(struct hw_tnode, key, LEV_K_B8, 1, 0),
    S_F(struct hw_tnode, count, LEV_K_B8, 1, 0),
    S_F(struct hw_tnode, kid, LEV_K_PTR, 2, 0),
};

static const lev_type_desc s_types[] = {
    {"frame walk", sizeof(struct hw_walk__frame), S_NF(walk__fields), walk__fields,
     _Alignof(struct hw_walk__frame)},
    {"frame hw_tree_task", sizeof(struct hw_tree_task__frame), S_NF(task__fields), task__fields,
     _Alignof(struct hw_tree_task__frame)},
    {"struct hw_tnode", sizeof(struct hw_tnode), S_NF(tnode__fields), tnode__fields,
     _Alignof(struct hw_tnode)},
};

static const lev_fn_desc s_fns[HW_TREE_NFNS] = {
    [HW_TREE_FN_WALK] = {"walk", NULL, NULL, T_WALK, 0},
    [HW_TREE_FN_TASK] = {"hw_tree_task", NULL, hw_tree_task__run, T_TASK, LEV_FN_TASK},
};

const lev_module_desc hw_tree_desc = {
    LEV_ABI_VERSION, "hw_tree", S_NF(s_types), s_types, HW_TREE_NFNS, s_fns, 0, NULL,
};

const lev_module *hw_tree_module(void)
{
    if (!s_mod && lev_module_register(&hw_tree_desc, &s_mod) != 0)
        return NULL;
    return s_mod;
}

/* ===================================================================
 * Reference: the same tree in an array-backed BST
 * =================================================================== */

enum { S_REF_MAX = 4096 };

typedef struct s_ref_node {
    long key, count;
    int kid[2];
} s_ref_node;

static long s_ref_walk(const s_ref_node *t, int i, long depth)
{
    if (i < 0)
        return 0;
    return s_ref_walk(t, t[i].kid[0], depth + 1) + s_ref_walk(t, t[i].kid[1], depth + 1) +
           t[i].key * t[i].count * (depth + 1);
}

long hw_tree_ref(long n)
{
    static s_ref_node t[S_REF_MAX];
    int used = 0, root = -1;
    unsigned long seed = 12345;
    for (long i = 0; i < n && used < S_REF_MAX; i++) {
        seed = s_next(seed);
        long key = (long)((seed >> 33) % 1000);
        int *link = &root;
        while (*link >= 0 && t[*link].key != key)
            link = &t[*link].kid[key > t[*link].key];
        if (*link >= 0) {
            t[*link].count++;
        } else {
            t[used] = (s_ref_node){key, 1, {-1, -1}};
            *link = used++;
        }
    }
    return s_ref_walk(t, root, 0);
}
