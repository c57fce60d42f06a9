/* hw_statics.h - hand-written task module with statics: pointers into a
 * string literal and a constant table (statics that stay where they are),
 * and travelling statics (LEV_S_TRAVELS) whose values are part of every
 * image, one of them holding the head of a heap list.
 */
#ifndef HW_STATICS_H
#define HW_STATICS_H

#include "lev_abi.h"

enum { HW_STATICS_FN_TASK, HW_STATICS_NFNS };

/* Static symbol ids (indices in the module's static table). */
enum {
    HW_STATICS_S_STR0,    /* the string literal */
    HW_STATICS_S_PRIMES,  /* const long[8] */
    HW_STATICS_S_COUNTER, /* long, travels */
    HW_STATICS_S_HEAD,    /* struct hw_snode *, travels */
    HW_STATICS_NSTATICS
};

#define HW_STATICS_MSG_OFF 10 /* msg points this far into the literal */

struct hw_snode {
    long v;
    struct hw_snode *next;
};

/* LEV_TASK void hw_statics_task(const long *n) */
struct hw_statics_task__frame {
    lev_task_frame t;
    long n;
    long i;
    const char *msg;  /* into the string literal */
    const long *pp;   /* into the constant table */
    const long *pend; /* one past the end of the table */
    long *pctr;       /* &counter: a pointer to a travelling static */
    long result;
};

extern const lev_module_desc hw_statics_desc;

/* Registers the module on first use; NULL (lev_errdetail says why) on failure. */
const lev_module *hw_statics_module(void);

/* The statics, for tests that look at them from outside. */
const char *hw_statics_literal(void);
const long *hw_statics_primes(void);
long *hw_statics_counter(void);
struct hw_snode **hw_statics_head(void);

/* Plain C reference of the task's result. */
long hw_statics_ref(long n);

#endif
