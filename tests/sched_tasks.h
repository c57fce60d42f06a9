/* sched_tasks.h - the hand-written task module the executor tests run
 * (test_sched, test_sched_capture): its tasks' frames, the state the tasks
 * and the tests share, and the helpers that spawn, wait for and check VTs.
 * The tasks are written by hand as levpp generates them (sched_tasks.c).
 */
#ifndef LEV_TESTS_SCHED_TASKS_H
#define LEV_TESTS_SCHED_TASKS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "executor.h"
#include "lev_task.h"
#include "vt.h"

/* Frames of the tasks (tests read them in captured copies). */

struct fib__frame {
    lev_frame h;
    int64_t n, y, a, b;
};

struct fib_task__frame {
    lev_task_frame t;
    int64_t res;
};

struct log_task__frame {
    lev_task_frame t;
    int64_t left;
};

struct block_task__frame {
    lev_task_frame t;
    int64_t blocks;
};

struct spin_task__frame {
    lev_task_frame t;
    int64_t iters;
};

struct set_task__frame {
    lev_task_frame t;
};

struct badptr_task__frame {
    lev_task_frame t;
    char *raw;
};

struct ping_task__frame {
    lev_task_frame t;
    int64_t left;
};

struct steps_task__frame {
    lev_task_frame t;
    int64_t i;
    int64_t *hist;
};

struct cell {
    int64_t v;
    struct cell *next;
};

struct list_task__frame {
    lev_task_frame t;
    int64_t i;
    struct cell *head, *c;
    int64_t total;
    int64_t *ptotal;
};

struct garbage_task__frame {
    lev_task_frame t;
    int64_t i;
};

struct self_task__frame {
    lev_task_frame t;
};

struct hash_task__frame {
    lev_task_frame t;
    int64_t i;
    uint64_t h;
};

struct mem_task__frame {
    lev_task_frame t;
    int64_t i;
    FILE *fp;
    char *buf;
    size_t size;
};

#define LIMIT_MS 20000 /* generous bound for anything that must happen */
#define NSLOTS 64
enum {
    FN_FIB_TASK,
    FN_FIB,
    FN_LOG_TASK,
    FN_BLOCK_TASK,
    FN_SPIN_TASK,
    FN_SET_TASK,
    FN_BADPTR_TASK,
    FN_PING_TASK,
    FN_STEPS_TASK,
    FN_LIST_TASK,
    FN_GARBAGE_TASK,
    FN_SELF_TASK,
    FN_HASH_TASK,
    FN_MEM_TASK,
    NFNS
};
/* Every task takes two int32s. */
typedef struct targ {
    int32_t a, b;
} targ;

/* Shared state the tasks and the tests observe. */
extern atomic_int g_flag[NSLOTS];       /* set by a test or a task */
extern atomic_llong g_progress[NSLOTS]; /* iterations of a spinning task */
extern atomic_int g_log_n;              /* yield fairness log */
extern int g_log[1 << 16];
extern rt_vt *g_peer[2]; /* ping-pong partners */
extern atomic_int g_turn;
extern lev_module *g_mod;        /* the module, once sched_tasks_init ran */
extern uint64_t g_reported_self; /* what sched_keep_self last received */

/* Initialises the runtime and registers the module; -1 (told on stderr,
 * prefixed with prog) when it cannot. */
int sched_tasks_init(const char *prog);
int sched_setup(void **state); /* cmocka setup: resets the shared state */
void sched_reset(void);

/* What each task returns for its arguments, computed natively. */
int64_t sched_fib(int64_t n);
int64_t sched_steps(int64_t n);
int64_t sched_hash(int64_t n);
int64_t sched_mem(int64_t n);
int64_t sched_list(int64_t n);

void sched_sleep_ms(int ms);
/* Polls cond(arg) every millisecond for at most LIMIT_MS; its last value. */
bool sched_until(bool (*cond)(void *), void *arg);
bool sched_progress_pos(void *slot); /* g_progress[*(int *)slot] > 0 */
bool sched_parked(void *ex);         /* the executor ex parked a VT */

rt_vt *sched_new(uint32_t fn, int32_t a, int32_t b);
rt_vt *sched_spawn(rt_exec *ex, uint32_t fn, int32_t a, int32_t b);
int64_t sched_result(rt_vt *vt); /* fails the test unless it ended well */
void sched_wait_ok(rt_exec *ex, rt_vt *vt);
void sched_canceled(rt_exec *ex, rt_vt *vt);
rt_exec *sched_exec(int workers, int slice_ms);
/* A report callback keeping the 8-byte id a self_task reports. */
void sched_keep_self(rt_vt *vt, const void *buf, size_t len, void *ud);

#endif
