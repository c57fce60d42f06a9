/* hw_fnptr.h - hand-written task module: function pointers held in a
 * frame, in a heap array of function pointers, in the fields of a circular
 * list of heap objects, and as a data pointer (void *).
 */
#ifndef HW_FNPTR_H
#define HW_FNPTR_H

#include "lev_abi.h"

typedef long (*hw_op)(long, long);

/* Function ids: the operations are plain C functions (no frame) listed
 * with their native address, so function pointers to them travel. */
enum {
    HW_FNPTR_FN_ADD,
    HW_FNPTR_FN_SUB,
    HW_FNPTR_FN_MUL,
    HW_FNPTR_FN_XOR,
    HW_FNPTR_FN_TASK,
    HW_FNPTR_NFNS
};

struct hw_opcell {
    hw_op f;
    long k;
    struct hw_opcell *next; /* the cells form a ring */
};

#define HW_FNPTR_OPS 4
#define HW_FNPTR_RING 3

/* LEV_TASK void hw_fnptr_task(const long *n) */
struct hw_fnptr_task__frame {
    lev_task_frame t;
    long n;
    long i;
    long acc;
    hw_op cur;              /* function pointer in a frame */
    void *vfn;              /* a function's address in a data pointer */
    hw_op *table;           /* heap array of function pointers */
    struct hw_opcell *ring; /* heap objects holding function pointers */
    long result;
};

extern const lev_module_desc hw_fnptr_desc;

/* Registers the module on first use; NULL (lev_errdetail says why) on failure. */
const lev_module *hw_fnptr_module(void);

/* The operations, as the module lists them. */
hw_op hw_fnptr_op(int fn);

/* Plain C reference of the task's result. */
long hw_fnptr_ref(long n);

#endif
