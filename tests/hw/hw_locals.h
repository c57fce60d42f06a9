/* hw_locals.h - hand-written task module whose frames hold pointers to
 * their own locals, to an element and one past the end of a local array,
 * and into their caller's frame; a heap object points back into the frame.
 */
#ifndef HW_LOCALS_H
#define HW_LOCALS_H

#include "lev_abi.h"

enum { HW_LOCALS_FN_BUMP, HW_LOCALS_FN_TASK, HW_LOCALS_NFNS };

#define HW_LOCALS_ARR 8

/* Heap object that points into the task's frame. */
struct hw_cell {
    long *target; /* an element of the task frame's arr */
    long bias;
};

/* long bump(long *target, const long *src, long k): a callee whose
 * parameters point into its caller's frame and whose plocal points to its
 * own local across a safe point. */
struct hw_bump__frame {
    lev_frame h;
    long *target;
    const long *src;
    long k;
    long local;
    long *plocal; /* &local */
};

/* LEV_TASK void hw_locals_task(const long *n) */
struct hw_locals_task__frame {
    lev_task_frame t;
    long n;
    long i;
    long acc;
    long arr[HW_LOCALS_ARR];
    long *pacc; /* &acc */
    long *pel;  /* &arr[i % 8] */
    long *pend; /* arr + 8, one past the end */
    long *p;    /* cursor over arr, spilled at a safe point */
    long sum;
    struct hw_cell *cell;
    long r; /* result slot of bump */
    long result;
};

extern const lev_module_desc hw_locals_desc;

/* Registers the module on first use; NULL (lev_errdetail says why) on failure. */
const lev_module *hw_locals_module(void);

/* Plain C reference of the task's result. */
long hw_locals_ref(long n);

#endif
