/* hw_fib.h - hand-written task module: direct recursion (fib), mutual
 * recursion (is_even/is_odd) and deep recursion through them.
 */
#ifndef HW_FIB_H
#define HW_FIB_H

#include "lev_abi.h"

/* Function ids. */
enum {
    HW_FIB_FN_FIB,
    HW_FIB_FN_IS_EVEN,
    HW_FIB_FN_IS_ODD,
    HW_FIB_FN_FIB_TASK,
    HW_FIB_FN_PARITY_TASK,
    HW_FIB_NFNS
};

/* LEV_TASK void hw_fib_task(const long *n): result = fib(n); a safe point
 * on entry to every call of fib and one between its two recursive calls. */
struct hw_fib_task__frame {
    lev_task_frame t;
    long n;
    long r; /* result slot of fib */
    long result;
};

/* Argument of hw_parity_task. */
typedef struct hw_parity_arg {
    long n;
    long every; /* is_even/is_odd call lev_checkpoint() when n % every == 0 */
} hw_parity_arg;

/* LEV_TASK void hw_parity_task(const hw_parity_arg *a): result =
 * is_even(a->n), by mutual recursion n levels deep. */
struct hw_parity_task__frame {
    lev_task_frame t;
    long n;
    long every;
    int r; /* result slot of is_even */
    int result;
};

extern const lev_module_desc hw_fib_desc;

/* Registers the module on first use; NULL (lev_errdetail says why) on failure. */
const lev_module *hw_fib_module(void);

/* Plain C references. */
long hw_fib_ref(long n);
long hw_fib_calls(long n); /* number of calls of fib that fib(n) makes, itself included */

#endif
