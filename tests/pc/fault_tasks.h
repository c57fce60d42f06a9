/* fault_tasks.h - what the multi-process fault tests (test_fault.c) share
 * with their task sources (fault_tasks.c): the configuration a client
 * sends each VT, the result a VT returns, and the prime count both sides
 * compute, so that the client knows every exact result natively. */
#ifndef PC_FAULT_TASKS_H
#define PC_FAULT_TASKS_H

#include <stdint.h>

#define FAULT_MAXVT 16

/* What the client sends each VT of pc_fault_work (a message from
 * LEV_CLIENT): the ids of all, its own place, the rounds, the range whose
 * primes the VTs count between them. */
typedef struct fault_cfg {
    uint64_t ids[FAULT_MAXVT];
    int64_t n, me, rounds;
    int64_t below; /* the primes below this are counted */
    int32_t ring;  /* 1: each round passes a value to the next place */
    int32_t lock;  /* 1: each round adds one to the global "counter" under its lock */
} fault_cfg;

/* What pc_fault_work returns. */
typedef struct fault_res {
    int64_t primes; /* primes of its share of [0, below) */
    int64_t ring;   /* sum of the values received from the previous place */
    int32_t err;    /* 0, or the code of the first call that failed */
    int32_t bad;    /* 1: a value received was not the one sent */
} fault_res;

/* The values of [0, below) that place `me` of n counts in round r of
 * `rounds`: the slices are interleaved so that every place and round
 * costs about the same. Sets *lo and *hi. */
void fault_slice(const fault_cfg *c, int64_t r, int64_t *lo, int64_t *hi);

/* The primes in [lo, hi), by trial division. */
int64_t fault_primes(int64_t lo, int64_t hi);

/* The value place `me` passes to the next place in round r. */
int64_t fault_token(int64_t r, int64_t me);

/* What pc_fault_wait returns: its receives from the VT it waits for. */
typedef struct fault_wait_res {
    int32_t first, second, third; /* the message, the end, the end again */
    int32_t text_ok;              /* 1: the first was the message sent */
    uint64_t from[3];             /* *from after each */
} fault_wait_res;

#endif
