/* hw_list.h - hand-written task module: a singly linked list on the VT
 * heap, built through a pointer-to-pointer cursor, reversed, filtered with
 * lev_free and summed, with a safe point in every loop.
 */
#ifndef HW_LIST_H
#define HW_LIST_H

#include "lev_abi.h"

enum { HW_LIST_FN_TASK, HW_LIST_NFNS };

/* Type ids. */
enum { HW_LIST_T_TASK = LEV_T_USER, HW_LIST_T_NODE };

struct hw_node {
    long v;
    struct hw_node *next;
};

/* LEV_TASK void hw_list_task(const long *n) */
struct hw_list_task__frame {
    lev_task_frame t;
    long n;
    long i;
    struct hw_node *head;
    struct hw_node **tail; /* &head, then &node->next: into the frame, then into heap objects */
    struct hw_node *cur;
    struct hw_node *prev;
    long sum;
    long result;
};

extern const lev_module_desc hw_list_desc;

/* Registers the module on first use; NULL (lev_errdetail says why) on failure. */
const lev_module *hw_list_module(void);

/* Plain C reference of the task's result. */
long hw_list_ref(long n);

#endif
