/* pc_tasks.h - what the peer controller's tests share with their task
 * sources (pc_tasks.c): the argument of pc_gated, and the computation
 * whose checksum the tasks return, so that a test computes the fault-free
 * value natively. */
#ifndef PC_TASKS_H
#define PC_TASKS_H

#include <stdint.h>

/* The seed of pc_spin's and pc_gated's computation. */
#define PC_SPIN_SEED 0x243F6A8885A308D3ull

/* The argument of pc_gated: pc_spin's, and the path of the gate file. */
typedef struct pc_gate_arg {
    long steps, step_work;
    char gate[256]; /* NUL-terminated */
} pc_gate_arg;

/* n rounds of integer mixing of x. */
uint64_t pc_mix(uint64_t x, long n);

/* `steps` steps of step_work rounds each, reporting the step number every
 * eighth of the way (and folding in the heap chunks, if any). */
uint64_t pc_steps(uint64_t x, long steps, long step_work, long **chunks, long nchunks);

#endif
