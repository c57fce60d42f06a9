/* hw_hash.h - hand-written task module: a chained hash table on the VT
 * heap whose buckets are an array of pointers (LEV_T_PTR), grown by
 * rehashing into a new bucket array while both are live.
 */
#ifndef HW_HASH_H
#define HW_HASH_H

#include <stdint.h>

#include "lev_abi.h"

enum { HW_HASH_FN_TASK, HW_HASH_NFNS };

struct hw_hent {
    uint64_t key;
    long val;
    struct hw_hent *next;
};

struct hw_htab {
    uint32_t nb;    /* buckets */
    uint32_t count; /* entries */
    struct hw_hent **buckets;
};

/* LEV_TASK void hw_hash_task(const long *n) */
struct hw_hash_task__frame {
    lev_task_frame t;
    long n;
    long i;
    uint64_t seed;
    uint64_t key;
    struct hw_htab *tab;
    struct hw_hent **old; /* bucket array being rehashed */
    uint32_t old_nb;
    uint32_t b;            /* bucket index while rehashing */
    struct hw_hent **slot; /* &buckets[k] or &entry->next */
    long result;
};

extern const lev_module_desc hw_hash_desc;

/* Registers the module on first use; NULL (lev_errdetail says why) on failure. */
const lev_module *hw_hash_module(void);

/* Plain C reference of the task's result. */
long hw_hash_ref(long n);

#endif
