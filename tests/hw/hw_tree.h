/* hw_tree.h - hand-written task module: a binary search tree on the VT
 * heap, grown through a pointer-to-link cursor and summed by a recursive
 * checkpointable walk.
 */
#ifndef HW_TREE_H
#define HW_TREE_H

#include "lev_abi.h"

enum { HW_TREE_FN_WALK, HW_TREE_FN_TASK, HW_TREE_NFNS };

struct hw_tnode {
    long key;
    long count;
    struct hw_tnode *kid[2];
};

/* long walk(struct hw_tnode *t, long depth) */
struct hw_walk__frame {
    lev_frame h;
    struct hw_tnode *t;
    long depth;
    long l;
    long r; /* result slot of the callee */
};

/* LEV_TASK void hw_tree_task(const long *n) */
struct hw_tree_task__frame {
    lev_task_frame t;
    long n;
    long i;
    unsigned long seed;
    long key;
    struct hw_tnode *root;
    struct hw_tnode **link; /* &root, then &node->kid[k] */
    long r;
    long result;
};

extern const lev_module_desc hw_tree_desc;

/* Registers the module on first use; NULL (lev_errdetail says why) on failure. */
const lev_module *hw_tree_module(void);

/* Plain C reference of the task's result. */
long hw_tree_ref(long n);

#endif
