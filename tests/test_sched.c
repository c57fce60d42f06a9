/* test_sched.c - the executor: many VTs to completion, yield fairness,
 * block and wake (a wake before the park included), cancel, preemption of
 * a VT stuck in a polling loop, captures on request and on a period,
 * capture failures, checkpoints of parked VTs (not woken), capture-and-
 * stop of running, queued and parked VTs and one that fails, identity set
 * by the caller (with the streams a restored VT carries), torture mode on
 * the executor, shutdown, and the task calls (lev_self, lev_report,
 * lev_return).
 *
 * Task code is written by hand as levpp generates it. Every wait has a
 * time limit; conditions are polled, never assumed after a sleep.
 *
 * `test_sched --torture-child` runs the torture workload and prints its
 * results; the torture test runs it in a child with LEV_TORTURE=1.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "clock.h"
#include "executor.h"
#include "image.h"
#include "lev_task.h"
#include "rt.h"
#include "vt.h"

extern char **environ;

#define LIMIT_MS 20000 /* generous bound for anything that must happen */

/* ===================================================================
 * Shared state the tasks and the tests observe
 * =================================================================== */

#define NSLOTS 64
static atomic_int g_flag[NSLOTS];       /* set by a test or a task */
static atomic_llong g_progress[NSLOTS]; /* iterations of a spinning task */
static atomic_int g_log_n;              /* yield fairness log */
static int g_log[1 << 16];
static rt_vt *g_peer[2]; /* ping-pong partners */
static atomic_int g_turn;
static lev_module *g_mod;

static void s_reset(void)
{
    for (int i = 0; i < NSLOTS; i++) {
        atomic_store(&g_flag[i], 0);
        atomic_store(&g_progress[i], 0);
    }
    atomic_store(&g_log_n, 0);
    atomic_store(&g_turn, 0);
    g_peer[0] = g_peer[1] = NULL;
}

/* Native helpers the tasks call (they reach no safe point). */
static void s_log(int idx)
{
    int i = atomic_fetch_add(&g_log_n, 1);
    if (i < (int)(sizeof g_log / sizeof g_log[0]))
        g_log[i] = idx;
}

/* ===================================================================
 * Task code (as generated)
 * =================================================================== */

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
enum {
    T_CELL = LEV_T_USER,
    T_FIB_TASK,
    T_FIB,
    T_LOG_TASK,
    T_BLOCK_TASK,
    T_SPIN_TASK,
    T_SET_TASK,
    T_BADPTR_TASK,
    T_PING_TASK,
    T_STEPS_TASK,
    T_LIST_TASK,
    T_GARBAGE_TASK,
    T_SELF_TASK,
    T_HASH_TASK,
    T_MEM_TASK
};

/* Every task takes two int32s. */
typedef struct targ {
    int32_t a, b;
} targ;

static targ s_arg(void *frame)
{
    targ a;
    memcpy(&a, ((lev_task_frame *)frame)->arg, sizeof a);
    return a;
}

static int s_exit_fail(lev_ctx *vt, int err, const char *what)
{
    lev_vt_fail(vt, err, what);
    return LEV_RUN_EXIT;
}

static int s_return(int64_t v)
{
    lev_return(&v, sizeof v);
    return LEV_RUN_EXIT;
}

/* Calls a checkpointable callee whose frame is cf and pops that frame when
 * it returns; passes UNWIND and EXIT up (the caller pops, as levpp does). */
#define CALL(vt, cf, call)                                                                         \
    do {                                                                                           \
        int r_ = (call);                                                                           \
        if (r_ != LEV_RUN_DONE) {                                                                  \
            if (r_ == LEV_RUN_EXIT)                                                                \
                lev_frame_pop(vt, cf);                                                             \
            return r_;                                                                             \
        }                                                                                          \
        lev_frame_pop(vt, cf);                                                                     \
    } while (0)

/* A safe point of `kind` with resume point `n`; the spill is done before. */
#define SAFEPOINT(vt, hdr, kind, n)                                                                \
    do {                                                                                           \
        (hdr).pc = (n);                                                                            \
        if (lev_safepoint(vt, kind))                                                               \
            return LEV_RUN_UNWIND;                                                                 \
        resume_##n:;                                                                               \
    } while (0)
#define POLL(vt, hdr, n)                                                                           \
    do {                                                                                           \
        (hdr).pc = (n);                                                                            \
        if (lev_poll(vt) && lev_safepoint(vt, LEV_SP_POLL))                                        \
            return LEV_RUN_UNWIND;                                                                 \
        resume_##n:;                                                                               \
    } while (0)

/* --- fib(n, y): a frame per call; yields where n == y, polls elsewhere */

struct fib__frame {
    lev_frame h;
    int64_t n, y, a, b;
};

static int fib__run(lev_ctx *vt, struct fib__frame *fr, int64_t *ret)
{
    struct fib__frame *cf;
    switch (fr->h.pc) {
    case 0:
        break;
    case 1:
        goto resume_1;
    case 2:
        goto resume_2;
    case 3:
        cf = lev_frame_callee(vt, fr, sizeof *fr);
        goto call_3;
    case 4:
        cf = lev_frame_callee(vt, fr, sizeof *fr);
        goto call_4;
    default:
        return s_exit_fail(vt, LEV_EFAILED, "fib: bad pc");
    }
    if (fr->n == fr->y)
        SAFEPOINT(vt, fr->h, LEV_SP_YIELD, 1);
    else
        POLL(vt, fr->h, 2);
    if (fr->n < 2) {
        *ret = fr->n;
        return LEV_RUN_DONE;
    }
    if (!(cf = lev_frame_push(vt, sizeof *cf, FN_FIB)))
        return s_exit_fail(vt, LEV_ENOMEM, "fib");
    cf->n = fr->n - 1;
    cf->y = fr->y;
    fr->h.pc = 3;
call_3:
    CALL(vt, cf, fib__run(vt, cf, &fr->a));
    if (!(cf = lev_frame_push(vt, sizeof *cf, FN_FIB)))
        return s_exit_fail(vt, LEV_ENOMEM, "fib");
    cf->n = fr->n - 2;
    cf->y = fr->y;
    fr->h.pc = 4;
call_4:
    CALL(vt, cf, fib__run(vt, cf, &fr->b));
    *ret = fr->a + fr->b;
    return LEV_RUN_DONE;
}

/* fib_task(n, y) */
struct fib_task__frame {
    lev_task_frame t;
    int64_t res;
};

static int fib_task__run(lev_ctx *vt, void *frame)
{
    struct fib_task__frame *fr = frame;
    struct fib__frame *cf;
    switch (fr->t.h.pc) {
    case 0:
        break;
    case 1:
        cf = lev_frame_callee(vt, fr, sizeof *fr);
        goto call_1;
    default:
        return s_exit_fail(vt, LEV_EFAILED, "fib_task: bad pc");
    }
    if (!(cf = lev_frame_push(vt, sizeof *cf, FN_FIB)))
        return s_exit_fail(vt, LEV_ENOMEM, "fib_task");
    cf->n = s_arg(fr).a;
    cf->y = s_arg(fr).b;
    fr->t.h.pc = 1;
call_1:
    CALL(vt, cf, fib__run(vt, cf, &fr->res));
    return s_return(fr->res);
}

/* log_task(idx, rounds): logs idx and yields, `rounds` times */
struct log_task__frame {
    lev_task_frame t;
    int64_t left;
};

static int log_task__run(lev_ctx *vt, void *frame)
{
    struct log_task__frame *fr = frame;
    switch (fr->t.h.pc) {
    case 0:
        break;
    case 1:
        goto resume_1;
    default:
        return s_exit_fail(vt, LEV_EFAILED, "log_task: bad pc");
    }
    for (fr->left = s_arg(fr).b; fr->left > 0; fr->left--) {
        s_log(s_arg(fr).a);
        SAFEPOINT(vt, fr->t.h, LEV_SP_YIELD, 1);
    }
    return LEV_RUN_DONE;
}

/* block_task(slot, mode): mode 0 blocks until g_flag[slot]; mode 1
 * reports its slot, then blocks once. Returns how often it blocked. */
struct block_task__frame {
    lev_task_frame t;
    int64_t blocks;
};

static int block_task__run(lev_ctx *vt, void *frame)
{
    struct block_task__frame *fr = frame;
    switch (fr->t.h.pc) {
    case 0:
        break;
    case 1:
        goto resume_1;
    case 2:
        goto resume_2;
    default:
        return s_exit_fail(vt, LEV_EFAILED, "block_task: bad pc");
    }
    if (s_arg(fr).b == 1) {
        int32_t slot = s_arg(fr).a;
        lev_report(&slot, sizeof slot);
        fr->blocks++;
        SAFEPOINT(vt, fr->t.h, LEV_SP_BLOCK, 1);
        return s_return(fr->blocks);
    }
    while (!atomic_load(&g_flag[s_arg(fr).a])) {
        fr->blocks++;
        SAFEPOINT(vt, fr->t.h, LEV_SP_BLOCK, 2);
    }
    return s_return(fr->blocks);
}

/* spin_task(slot): polls until g_flag[slot], counting in g_progress */
struct spin_task__frame {
    lev_task_frame t;
    int64_t iters;
};

static int spin_task__run(lev_ctx *vt, void *frame)
{
    struct spin_task__frame *fr = frame;
    switch (fr->t.h.pc) {
    case 0:
        break;
    case 1:
        goto resume_1;
    default:
        return s_exit_fail(vt, LEV_EFAILED, "spin_task: bad pc");
    }
    while (!atomic_load(&g_flag[s_arg(fr).a])) {
        atomic_fetch_add(&g_progress[s_arg(fr).a], 1);
        fr->iters++;
        POLL(vt, fr->t.h, 1);
    }
    return s_return(fr->iters);
}

/* set_task(slot): sets g_flag[slot] */
struct set_task__frame {
    lev_task_frame t;
};

static int set_task__run(lev_ctx *vt, void *frame)
{
    (void)vt;
    atomic_store(&g_flag[s_arg(frame).a], 1);
    return LEV_RUN_DONE;
}

/* badptr_task(slot): spins like spin_task with a pointer to malloc'd
 * memory live in its frame, so it cannot be captured; returns 42. */
struct badptr_task__frame {
    lev_task_frame t;
    char *raw;
};

static int badptr_task__run(lev_ctx *vt, void *frame)
{
    struct badptr_task__frame *fr = frame;
    switch (fr->t.h.pc) {
    case 0:
        break;
    case 1:
        goto resume_1;
    default:
        return s_exit_fail(vt, LEV_EFAILED, "badptr_task: bad pc");
    }
    fr->raw = malloc(16);
    while (!atomic_load(&g_flag[s_arg(fr).a])) {
        atomic_fetch_add(&g_progress[s_arg(fr).a], 1);
        POLL(vt, fr->t.h, 1);
    }
    free(fr->raw);
    fr->raw = NULL;
    return s_return(42);
}

/* ping_task(me, rounds): two VTs take turns through g_turn, each waking
 * the other from inside a VT. */
struct ping_task__frame {
    lev_task_frame t;
    int64_t left;
};

static int ping_task__run(lev_ctx *vt, void *frame)
{
    struct ping_task__frame *fr = frame;
    switch (fr->t.h.pc) {
    case 0:
        break;
    case 1:
        goto resume_1;
    default:
        return s_exit_fail(vt, LEV_EFAILED, "ping_task: bad pc");
    }
    for (fr->left = s_arg(fr).b; fr->left > 0; fr->left--) {
        while (atomic_load(&g_turn) % 2 != s_arg(fr).a)
            SAFEPOINT(vt, fr->t.h, LEV_SP_BLOCK, 1);
        atomic_fetch_add(&g_turn, 1);
        rt_exec_wake(g_peer[1 - s_arg(fr).a]);
    }
    return s_return(s_arg(fr).b);
}

/* steps_task(n, report_at): a heap array filled one yield per step; the
 * loop counter is a C local spilled on unwind. Reports at step report_at. */
struct steps_task__frame {
    lev_task_frame t;
    int64_t i;
    int64_t *hist;
};

static int steps_task__run(lev_ctx *vt, void *frame)
{
    struct steps_task__frame *fr = frame;
    int64_t i;
    switch (fr->t.h.pc) {
    case 0:
        break;
    case 1:
        i = fr->i;
        goto resume_1;
    default:
        return s_exit_fail(vt, LEV_EFAILED, "steps_task: bad pc");
    }
    if (!(fr->hist = lev_alloc(g_mod, LEV_T_U64, (size_t)s_arg(fr).a)))
        return s_exit_fail(vt, LEV_ENOMEM, "steps_task");
    for (i = 0; i < s_arg(fr).a; i++) {
        fr->hist[i] = (int64_t)((uint64_t)(i ? fr->hist[i - 1] : 7) * 31u + (uint64_t)i);
        if (i == s_arg(fr).b)
            lev_report(&i, sizeof i);
        fr->i = i;
        SAFEPOINT(vt, fr->t.h, LEV_SP_YIELD, 1);
    }
    return s_return(fr->hist[s_arg(fr).a - 1]);
}

/* list_task(n, every): builds a heap list with a poll every `every` cells
 * (0: every cell), then sums it into `total` through a pointer to it
 * (address taken: in the frame), yielding every `every` cells (0: 16). */
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

static int list_task__run(lev_ctx *vt, void *frame)
{
    struct list_task__frame *fr = frame;
    switch (fr->t.h.pc) {
    case 0:
        break;
    case 1:
        goto resume_1;
    case 2:
        goto resume_2;
    default:
        return s_exit_fail(vt, LEV_EFAILED, "list_task: bad pc");
    }
    for (fr->i = 0; fr->i < s_arg(fr).a; fr->i++) {
        struct cell *c = lev_alloc(g_mod, T_CELL, 1);
        if (!c)
            return s_exit_fail(vt, LEV_ENOMEM, "list_task");
        c->v = fr->i * fr->i % 1009;
        c->next = fr->head;
        fr->head = c;
        if (fr->i % (s_arg(fr).b ? s_arg(fr).b : 1) == 0)
            POLL(vt, fr->t.h, 1);
    }
    fr->ptotal = &fr->total;
    for (fr->c = fr->head, fr->i = 0; fr->c; fr->c = fr->c->next, fr->i++) {
        *fr->ptotal += fr->c->v;
        if (fr->i % (s_arg(fr).b ? s_arg(fr).b : 16) == 0)
            SAFEPOINT(vt, fr->t.h, LEV_SP_YIELD, 2);
    }
    return s_return(fr->total);
}

/* garbage_task(n): allocates n 1 KiB objects it drops at once, a poll
 * every 64: pressure on the GC while other VTs are captured and wiped. */
struct garbage_task__frame {
    lev_task_frame t;
    int64_t i;
};

static int garbage_task__run(lev_ctx *vt, void *frame)
{
    struct garbage_task__frame *fr = frame;
    switch (fr->t.h.pc) {
    case 0:
        break;
    case 1:
        goto resume_1;
    default:
        return s_exit_fail(vt, LEV_EFAILED, "garbage_task: bad pc");
    }
    for (fr->i = 0; fr->i < s_arg(fr).a; fr->i++) {
        char *p = lev_alloc(g_mod, LEV_T_BYTES, 1024);
        if (!p)
            return s_exit_fail(vt, LEV_ENOMEM, "garbage_task");
        p[fr->i % 1024] = 1;
        if (fr->i % 64 == 0)
            POLL(vt, fr->t.h, 1);
    }
    return s_return(fr->i);
}

/* self_task(): reports lev_self() and returns it */
struct self_task__frame {
    lev_task_frame t;
};

static int self_task__run(lev_ctx *vt, void *frame)
{
    (void)vt;
    (void)frame;
    uint64_t id = lev_self();
    lev_report(&id, sizeof id);
    return s_return((int64_t)id);
}

/* hash_task(slot, n): an FNV-1a hash of the steps 0..n-1, a poll and a
 * count in g_progress[slot] per step; at step n/2 it polls until
 * g_flag[slot], so it cannot end before the test lets it. */
struct hash_task__frame {
    lev_task_frame t;
    int64_t i;
    uint64_t h;
};

static uint64_t s_fnv_step(uint64_t h, uint64_t v) { return (h ^ v) * 1099511628211u; }
#define S_FNV_SEED 14695981039346656037u

static int hash_task__run(lev_ctx *vt, void *frame)
{
    struct hash_task__frame *fr = frame;
    switch (fr->t.h.pc) {
    case 0:
        break;
    case 1:
        goto resume_1;
    case 2:
        goto resume_2;
    default:
        return s_exit_fail(vt, LEV_EFAILED, "hash_task: bad pc");
    }
    fr->h = S_FNV_SEED;
    for (fr->i = 0; fr->i < s_arg(fr).b; fr->i++) {
        fr->h = s_fnv_step(fr->h, (uint64_t)fr->i);
        atomic_fetch_add(&g_progress[s_arg(fr).a], 1);
        POLL(vt, fr->t.h, 1);
        while (fr->i == s_arg(fr).b / 2 && !atomic_load(&g_flag[s_arg(fr).a]))
            POLL(vt, fr->t.h, 2);
    }
    return s_return((int64_t)fr->h);
}

/* mem_task(n): writes "0,1,...,n-1," into a memory stream, a yield and a
 * report per number; returns the FNV-1a hash of what the stream holds
 * once closed. */
struct mem_task__frame {
    lev_task_frame t;
    int64_t i;
    FILE *fp;
    char *buf;
    size_t size;
};

static uint64_t s_fnv(const char *p, size_t n)
{
    uint64_t h = S_FNV_SEED;
    for (size_t k = 0; k < n; k++)
        h = s_fnv_step(h, (unsigned char)p[k]);
    return h;
}

static int mem_task__run(lev_ctx *vt, void *frame)
{
    struct mem_task__frame *fr = frame;
    switch (fr->t.h.pc) {
    case 0:
        break;
    case 1:
        goto resume_1;
    default:
        return s_exit_fail(vt, LEV_EFAILED, "mem_task: bad pc");
    }
    if (!(fr->fp = lev_open_memstream(g_mod, &fr->buf, &fr->size)))
        return s_exit_fail(vt, LEV_ENOMEM, "mem_task: open_memstream");
    for (fr->i = 0; fr->i < s_arg(fr).a; fr->i++) {
        fprintf(fr->fp, "%" PRId64 ",", fr->i);
        lev_report(&fr->i, sizeof fr->i);
        SAFEPOINT(vt, fr->t.h, LEV_SP_YIELD, 1);
    }
    if (lev_fclose(fr->fp) != 0)
        return s_exit_fail(vt, LEV_EIO, "mem_task: fclose");
    fr->fp = NULL;
    return s_return((int64_t)s_fnv(fr->buf, fr->size));
}

/* --- descriptors --------------------------------------------------- */

#define F(type, field, kind)                                                                       \
    {                                                                                              \
#field, (uint32_t)offsetof(type, field), kind, 1, 0                                        \
    }
#define TASK_F(type)                                                                               \
    {"arg", (uint32_t)offsetof(type, t.arg), LEV_K_PTR, 1, 0},                                     \
    {                                                                                              \
        "len", (uint32_t)offsetof(type, t.len), LEV_K_B8, 1, 0                                     \
    }
#define NF(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))

static const lev_field_desc f_cell[] = {F(struct cell, v, LEV_K_B8),
                                        F(struct cell, next, LEV_K_PTR)};
static const lev_field_desc f_fib_task[] = {TASK_F(struct fib_task__frame),
                                            F(struct fib_task__frame, res, LEV_K_B8)};
static const lev_field_desc f_fib[] = {
    F(struct fib__frame, n, LEV_K_B8), F(struct fib__frame, y, LEV_K_B8),
    F(struct fib__frame, a, LEV_K_B8), F(struct fib__frame, b, LEV_K_B8)};
static const lev_field_desc f_log_task[] = {TASK_F(struct log_task__frame),
                                            F(struct log_task__frame, left, LEV_K_B8)};
static const lev_field_desc f_block_task[] = {TASK_F(struct block_task__frame),
                                              F(struct block_task__frame, blocks, LEV_K_B8)};
static const lev_field_desc f_spin_task[] = {TASK_F(struct spin_task__frame),
                                             F(struct spin_task__frame, iters, LEV_K_B8)};
static const lev_field_desc f_set_task[] = {TASK_F(struct set_task__frame)};
static const lev_field_desc f_badptr_task[] = {TASK_F(struct badptr_task__frame),
                                               F(struct badptr_task__frame, raw, LEV_K_PTR)};
static const lev_field_desc f_ping_task[] = {TASK_F(struct ping_task__frame),
                                             F(struct ping_task__frame, left, LEV_K_B8)};
static const lev_field_desc f_steps_task[] = {TASK_F(struct steps_task__frame),
                                              F(struct steps_task__frame, i, LEV_K_B8),
                                              F(struct steps_task__frame, hist, LEV_K_PTR)};
static const lev_field_desc f_list_task[] = {TASK_F(struct list_task__frame),
                                             F(struct list_task__frame, i, LEV_K_B8),
                                             F(struct list_task__frame, head, LEV_K_PTR),
                                             F(struct list_task__frame, c, LEV_K_PTR),
                                             F(struct list_task__frame, total, LEV_K_B8),
                                             F(struct list_task__frame, ptotal, LEV_K_PTR)};
static const lev_field_desc f_garbage_task[] = {TASK_F(struct garbage_task__frame),
                                                F(struct garbage_task__frame, i, LEV_K_B8)};
static const lev_field_desc f_self_task[] = {TASK_F(struct self_task__frame)};
static const lev_field_desc f_hash_task[] = {TASK_F(struct hash_task__frame),
                                             F(struct hash_task__frame, i, LEV_K_B8),
                                             F(struct hash_task__frame, h, LEV_K_B8)};
static const lev_field_desc f_mem_task[] = {
    TASK_F(struct mem_task__frame), F(struct mem_task__frame, i, LEV_K_B8),
    F(struct mem_task__frame, fp, LEV_K_PTR), F(struct mem_task__frame, buf, LEV_K_PTR),
    F(struct mem_task__frame, size, LEV_K_B8)};

#define TYPE(type, f)                                                                              \
    {                                                                                              \
#type, (uint32_t)sizeof(type), NF(f), f, _Alignof(type)                                    \
    }
static const lev_type_desc s_types[] = {
    TYPE(struct cell, f_cell),
    TYPE(struct fib_task__frame, f_fib_task),
    TYPE(struct fib__frame, f_fib),
    TYPE(struct log_task__frame, f_log_task),
    TYPE(struct block_task__frame, f_block_task),
    TYPE(struct spin_task__frame, f_spin_task),
    TYPE(struct set_task__frame, f_set_task),
    TYPE(struct badptr_task__frame, f_badptr_task),
    TYPE(struct ping_task__frame, f_ping_task),
    TYPE(struct steps_task__frame, f_steps_task),
    TYPE(struct list_task__frame, f_list_task),
    TYPE(struct garbage_task__frame, f_garbage_task),
    TYPE(struct self_task__frame, f_self_task),
    TYPE(struct hash_task__frame, f_hash_task),
    TYPE(struct mem_task__frame, f_mem_task),
};

#define TASK(name, ty)                                                                             \
    {                                                                                              \
#name, NULL, name##__run, ty, LEV_FN_TASK                                                  \
    }
static const lev_fn_desc s_fns[NFNS] = {
    [FN_FIB_TASK] = TASK(fib_task, T_FIB_TASK),
    [FN_FIB] = {"fib", NULL, NULL, T_FIB, 0},
    [FN_LOG_TASK] = TASK(log_task, T_LOG_TASK),
    [FN_BLOCK_TASK] = TASK(block_task, T_BLOCK_TASK),
    [FN_SPIN_TASK] = TASK(spin_task, T_SPIN_TASK),
    [FN_SET_TASK] = TASK(set_task, T_SET_TASK),
    [FN_BADPTR_TASK] = TASK(badptr_task, T_BADPTR_TASK),
    [FN_PING_TASK] = TASK(ping_task, T_PING_TASK),
    [FN_STEPS_TASK] = TASK(steps_task, T_STEPS_TASK),
    [FN_LIST_TASK] = TASK(list_task, T_LIST_TASK),
    [FN_GARBAGE_TASK] = TASK(garbage_task, T_GARBAGE_TASK),
    [FN_SELF_TASK] = TASK(self_task, T_SELF_TASK),
    [FN_HASH_TASK] = TASK(hash_task, T_HASH_TASK),
    [FN_MEM_TASK] = TASK(mem_task, T_MEM_TASK),
};

static const lev_module_desc s_desc = {
    LEV_ABI_VERSION, "test_sched", NF(s_types), s_types, NFNS, s_fns, 0, NULL};

/* ===================================================================
 * Helpers
 * =================================================================== */

static int64_t s_fib(int64_t n) { return n < 2 ? n : s_fib(n - 1) + s_fib(n - 2); }

static int64_t s_steps(int64_t n)
{
    int64_t h = 7;
    for (int64_t i = 0; i < n; i++)
        h = (int64_t)((uint64_t)(i ? h : 7) * 31u + (uint64_t)i);
    return h;
}

static int64_t s_hash(int64_t n)
{
    uint64_t h = S_FNV_SEED;
    for (int64_t i = 0; i < n; i++)
        h = s_fnv_step(h, (uint64_t)i);
    return (int64_t)h;
}

/* What mem_task(n) returns. */
static int64_t s_mem(int64_t n)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    for (int64_t i = 0; i < n; i++)
        fprintf(f, "%" PRId64 ",", i);
    fclose(f);
    int64_t h = (int64_t)s_fnv(buf, size);
    free(buf);
    return h;
}

static int64_t s_list(int64_t n)
{
    int64_t t = 0;
    for (int64_t i = 0; i < n; i++)
        t += i * i % 1009;
    return t;
}

static void s_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Polls cond(arg) every millisecond for at most LIMIT_MS; its last value. */
static bool s_until(bool (*cond)(void *), void *arg)
{
    uint64_t end = rt_now_ns() + (uint64_t)LIMIT_MS * 1000000u;
    while (!cond(arg)) {
        if (rt_now_ns() > end)
            return false;
        s_sleep_ms(1);
    }
    return true;
}

static bool s_progress_pos(void *slot) { return atomic_load(&g_progress[*(int *)slot]) > 0; }

static rt_vt *s_new(uint32_t fn, int32_t a, int32_t b)
{
    targ t = {a, b};
    rt_vt *vt = NULL;
    assert_int_equal(rt_vt_new(g_mod, fn, &t, sizeof t, &vt), 0);
    return vt;
}

static rt_vt *s_spawn(rt_exec *ex, uint32_t fn, int32_t a, int32_t b)
{
    rt_vt *vt = s_new(fn, a, b);
    assert_int_equal(rt_exec_spawn(ex, vt), 0);
    return vt;
}

static int64_t s_result(rt_vt *vt)
{
    if (vt->state != RT_VT_DONE)
        fail_msg("VT %" PRIu64 " did not end well: state %d, %s (%s)", vt->id, vt->state,
                 lev_strerror(vt->err), vt->errdetail ? vt->errdetail : "");
    if (vt->result_len != sizeof(int64_t))
        fail_msg("VT %" PRIu64 " returned %zu bytes", vt->id, vt->result_len);
    int64_t v;
    memcpy(&v, vt->result, sizeof v);
    return v;
}

static void s_wait_ok(rt_exec *ex, rt_vt *vt)
{
    assert_int_equal(rt_exec_wait(ex, vt, LIMIT_MS), 0);
}

static void s_canceled(rt_exec *ex, rt_vt *vt)
{
    s_wait_ok(ex, vt);
    assert_int_equal(vt->state, RT_VT_FAILED);
    assert_int_equal(vt->err, LEV_ECANCELED);
}

static rt_exec *s_exec(int workers, int slice_ms)
{
    rt_exec_opts o = {.workers = workers, .slice_ms = slice_ms};
    rt_exec *ex = NULL;
    assert_int_equal(rt_exec_new(&ex, &o), 0);
    return ex;
}

static int s_setup(void **state)
{
    (void)state;
    s_reset();
    return 0;
}

/* ===================================================================
 * Tests
 * =================================================================== */

static void test_many_vts(void **state)
{
    (void)state;
    enum { N = 400 };
    rt_exec *ex = s_exec(4, 0);
    static rt_vt *vts[N];
    for (int i = 0; i < N; i++)
        vts[i] = s_spawn(ex, FN_FIB_TASK, 8 + i % 9, 5 + i % 3);
    for (int i = 0; i < N; i++) {
        s_wait_ok(ex, vts[i]);
        assert_int_equal(s_result(vts[i]), s_fib(8 + i % 9));
    }
    rt_exec_stats st;
    rt_exec_stats_get(ex, &st);
    assert_true(st.switches > 0);
    rt_exec_destroy(&ex);
    assert_null(ex);
    rt_exec_destroy(&ex); /* harmless */
    for (int i = 0; i < N; i++)
        rt_vt_destroy(&vts[i]);
}

static void test_mixed_tasks_two_workers(void **state)
{
    (void)state;
    rt_exec *ex = s_exec(2, 0);
    rt_vt *a = s_spawn(ex, FN_STEPS_TASK, 500, -1);
    rt_vt *b = s_spawn(ex, FN_LIST_TASK, 700, 0);
    rt_vt *c = s_spawn(ex, FN_FIB_TASK, 16, 4);
    s_wait_ok(ex, a);
    s_wait_ok(ex, b);
    s_wait_ok(ex, c);
    assert_int_equal(s_result(a), s_steps(500));
    assert_int_equal(s_result(b), s_list(700));
    assert_int_equal(s_result(c), s_fib(16));
    rt_exec_destroy(&ex);
    rt_vt_destroy(&a);
    rt_vt_destroy(&b);
    rt_vt_destroy(&c);
}

/* On one worker, once every VT has run, yields go round robin: between two
 * turns of a VT no other VT has two. */
static void test_yield_fairness(void **state)
{
    (void)state;
    enum { N = 16, ROUNDS = 200 };
    rt_exec *ex = s_exec(1, -1);
    rt_vt *vts[N];
    for (int i = 0; i < N; i++)
        vts[i] = s_spawn(ex, FN_LOG_TASK, i, ROUNDS);
    for (int i = 0; i < N; i++)
        s_wait_ok(ex, vts[i]);
    int n = atomic_load(&g_log_n);
    assert_int_equal(n, N * ROUNDS);
    int start = 0, seen = 0;
    bool was[N] = {0};
    while (seen < N) {
        if (!was[g_log[start]]) {
            was[g_log[start]] = true;
            seen++;
        }
        start++;
    }
    static int since[N][N]; /* since[x][y]: turns of y since x's last */
    memset(since, 0, sizeof since);
    bool active[N] = {0};
    for (int p = start; p < n; p++) {
        int x = g_log[p];
        if (active[x])
            for (int y = 0; y < N; y++)
                if (since[x][y] > 1)
                    fail_msg("VT %d had %d turns between two of VT %d (log position %d)", y,
                             since[x][y], x, p);
        active[x] = true;
        memset(since[x], 0, sizeof since[x]);
        for (int y = 0; y < N; y++)
            since[y][x]++;
    }
    rt_exec_destroy(&ex);
    for (int i = 0; i < N; i++)
        rt_vt_destroy(&vts[i]);
}

static bool s_parked(void *ex)
{
    rt_exec_stats st;
    rt_exec_stats_get(ex, &st);
    return st.parks >= 1;
}

static void test_block_wake(void **state)
{
    (void)state;
    rt_exec *ex = s_exec(2, 0);
    rt_vt *vt = s_spawn(ex, FN_BLOCK_TASK, 3, 0);
    assert_true(s_until(s_parked, ex));
    assert_int_equal(rt_exec_wait(ex, vt, 0), LEV_ETIMEDOUT);
    atomic_store(&g_flag[3], 1);
    assert_int_equal(rt_exec_wake(vt), 0);
    s_wait_ok(ex, vt);
    assert_true(s_result(vt) >= 1);
    assert_int_equal(rt_exec_wake(vt), LEV_ENOVT); /* ended */
    rt_exec_destroy(&ex);
    rt_vt_destroy(&vt);
}

/* The host's idle wait (rt_exec_opts.idle), as an executor that reads
 * its socket while idle: an eventfd stands for the socket and for
 * wake(); a frame that "arrives" names the VT it wakes. */
typedef struct s_idle {
    int efd;
    atomic_int inside, most, calls, wakes;
    rt_vt *_Atomic deliver; /* a frame for this VT is there */
} s_idle;

static void s_idle_wait(void *ud)
{
    s_idle *h = ud;
    int in = atomic_fetch_add(&h->inside, 1) + 1;
    if (in > atomic_load(&h->most))
        atomic_store(&h->most, in);
    atomic_fetch_add(&h->calls, 1);
    struct pollfd p = {.fd = h->efd, .events = POLLIN};
    if (poll(&p, 1, -1) > 0) {
        uint64_t n;
        if (read(h->efd, &n, sizeof n) < 0)
            n = 0;
    }
    rt_vt *vt = atomic_exchange(&h->deliver, NULL);
    if (vt) { /* the input is delivered here, on this worker */
        atomic_store(&g_flag[3], 1);
        assert_int_equal(rt_exec_wake(vt), 0);
    }
    atomic_fetch_sub(&h->inside, 1);
}

static void s_idle_wake(void *ud)
{
    s_idle *h = ud;
    atomic_fetch_add(&h->wakes, 1);
    uint64_t one = 1;
    assert_true(write(h->efd, &one, sizeof one) == sizeof one);
}

static bool s_idling(void *ud) { return atomic_load(&((s_idle *)ud)->inside) == 1; }

/* One idle worker at a time waits in the host's wait; an input it
 * delivers there runs its VT, work that comes from elsewhere wakes it,
 * and so does the executor's end. */
static void test_idle_wait(void **state)
{
    (void)state;
    static s_idle h;
    memset(&h, 0, sizeof h);
    h.efd = eventfd(0, EFD_CLOEXEC);
    assert_true(h.efd >= 0);
    rt_exec_opts o = {.workers = 3, .idle = {.wait = s_idle_wait, .wake = s_idle_wake, .ud = &h}};
    rt_exec *ex;
    assert_int_equal(rt_exec_new(&ex, &o), 0);
    assert_true(s_until(s_idling, &h));
    /* a VT parks; its input comes through the idle wait */
    rt_vt *vt = s_spawn(ex, FN_BLOCK_TASK, 3, 0);
    assert_true(s_until(s_parked, ex));
    assert_true(s_until(s_idling, &h));
    atomic_store(&h.deliver, vt);
    uint64_t one = 1;
    assert_true(write(h.efd, &one, sizeof one) == sizeof one); /* a frame arrives */
    s_wait_ok(ex, vt);
    assert_true(s_result(vt) >= 1);
    rt_vt_destroy(&vt);
    assert_true(s_until(s_idling, &h));
    rt_exec_destroy(&ex);                      /* wakes the worker in the wait, or it would hang */
    assert_int_equal(atomic_load(&h.most), 1); /* of three idle workers */
    assert_int_equal(atomic_load(&h.inside), 0);
    /* one worker, in the wait: work spawned from elsewhere must wake it */
    o.workers = 1;
    assert_int_equal(rt_exec_new(&ex, &o), 0);
    for (int i = 0; i < 8; i++) {
        assert_true(s_until(s_idling, &h));
        int wakes = atomic_load(&h.wakes);
        rt_vt *more = s_spawn(ex, FN_FIB_TASK, 15, 0);
        s_wait_ok(ex, more);
        rt_vt_destroy(&more);
        assert_true(atomic_load(&h.wakes) > wakes);
    }
    rt_exec_destroy(&ex);
    assert_int_equal(atomic_load(&h.inside), 0);
    close(h.efd);
}

/* The report callback runs on the VT's worker before the VT parks: a wake
 * sent from it arrives before the park and must not be lost. */
static void s_wake_on_report(rt_vt *vt, const void *buf, size_t len, void *ud)
{
    (void)buf;
    (void)len;
    (void)ud;
    assert_int_equal(rt_exec_wake(vt), 0);
}

static void test_wake_before_park(void **state)
{
    (void)state;
    rt_exec_opts o = {.workers = 2, .on_report = s_wake_on_report};
    rt_exec *ex;
    assert_int_equal(rt_exec_new(&ex, &o), 0);
    enum { N = 50 };
    rt_vt *vts[N];
    for (int i = 0; i < N; i++)
        vts[i] = s_spawn(ex, FN_BLOCK_TASK, 0, 1);
    for (int i = 0; i < N; i++) {
        s_wait_ok(ex, vts[i]);
        assert_int_equal(s_result(vts[i]), 1);
    }
    rt_exec_destroy(&ex);
    for (int i = 0; i < N; i++)
        rt_vt_destroy(&vts[i]);
}

/* Two VTs on two workers wake each other thousands of times: wakes race
 * with parks all the time. */
static void test_ping_pong(void **state)
{
    (void)state;
    enum { ROUNDS = 3000 };
    rt_exec *ex = s_exec(2, 0);
    g_peer[0] = s_new(FN_PING_TASK, 0, ROUNDS);
    g_peer[1] = s_new(FN_PING_TASK, 1, ROUNDS);
    assert_int_equal(rt_exec_spawn(ex, g_peer[0]), 0);
    assert_int_equal(rt_exec_spawn(ex, g_peer[1]), 0);
    s_wait_ok(ex, g_peer[0]);
    s_wait_ok(ex, g_peer[1]);
    assert_int_equal(atomic_load(&g_turn), 2 * ROUNDS);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&g_peer[0]);
    rt_vt_destroy(&g_peer[1]);
}

static void test_cancel(void **state)
{
    (void)state;
    rt_exec *ex = s_exec(2, 0);
    int slot = 5;
    rt_vt *spin = s_spawn(ex, FN_SPIN_TASK, slot, 0);
    rt_vt *parked = s_spawn(ex, FN_BLOCK_TASK, 6, 0);
    assert_true(s_until(s_progress_pos, &slot));
    assert_true(s_until(s_parked, ex));
    assert_int_equal(rt_exec_cancel(spin), 0);
    assert_int_equal(rt_exec_cancel(parked), 0);
    s_canceled(ex, spin);
    s_canceled(ex, parked);
    assert_int_equal(rt_exec_cancel(spin), LEV_ENOVT);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&spin);
    rt_vt_destroy(&parked);
}

/* A VT canceled while it waits in the queue ends without running. */
static void test_cancel_queued(void **state)
{
    (void)state;
    rt_exec *ex = s_exec(1, 0);
    int slot = 1;
    rt_vt *spin = s_spawn(ex, FN_SPIN_TASK, slot, 0);
    assert_true(s_until(s_progress_pos, &slot));
    rt_vt *queued = s_spawn(ex, FN_SPIN_TASK, 2, 0);
    assert_int_equal(rt_exec_cancel(queued), 0);
    s_canceled(ex, queued);
    assert_int_equal(atomic_load(&g_progress[2]), 0);
    assert_int_equal(rt_exec_wait(ex, spin, 0), LEV_ETIMEDOUT); /* still running */
    atomic_store(&g_flag[slot], 1);
    s_wait_ok(ex, spin);
    assert_true(s_result(spin) > 0);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&spin);
    rt_vt_destroy(&queued);
}

typedef struct s_ticks_past {
    rt_exec *ex;
    uint64_t until;
} s_ticks_past;

static bool s_ticks_passed(void *arg)
{
    s_ticks_past *t = arg;
    rt_exec_stats st;
    rt_exec_stats_get(t->ex, &st);
    return st.ticks >= t->until;
}

/* A VT alone on its worker, with nothing waiting, runs on for many time
 * slices without being cut (a cut would only unwind and resume it); once
 * another VT waits, its slice is cut and the other runs. The slices are
 * counted in the timer's own rounds, not in time: a loaded machine may
 * delay the timer, never make it skip a round. */
static void test_no_preemption_alone(void **state)
{
    (void)state;
    rt_exec *ex = s_exec(1, 2);
    int slot = 5;
    rt_vt *spin = s_spawn(ex, FN_SPIN_TASK, slot, 0);
    assert_true(s_until(s_progress_pos, &slot));
    rt_exec_stats st;
    rt_exec_stats_get(ex, &st);
    s_ticks_past ten_slices = {ex, st.ticks + 20}; /* two rounds a slice */
    assert_true(s_until(s_ticks_passed, &ten_slices));
    rt_exec_stats_get(ex, &st);
    assert_int_equal(st.preempts, 0);
    rt_vt *set = s_spawn(ex, FN_SET_TASK, slot, 0);
    s_wait_ok(ex, set);
    s_wait_ok(ex, spin);
    rt_exec_stats_get(ex, &st);
    assert_true(st.preempts >= 1);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&spin);
    rt_vt_destroy(&set);
}

/* One worker: a VT spins in a polling loop until a flag that only another
 * VT sets. Only the timer's preemption lets that one run. */
static void test_preemption(void **state)
{
    (void)state;
    rt_exec *ex = s_exec(1, 5);
    int slot = 7;
    rt_vt *spin = s_spawn(ex, FN_SPIN_TASK, slot, 0);
    assert_true(s_until(s_progress_pos, &slot));
    rt_vt *set = s_spawn(ex, FN_SET_TASK, slot, 0);
    s_wait_ok(ex, set);
    s_wait_ok(ex, spin);
    assert_true(s_result(spin) > 0);
    rt_exec_stats st;
    rt_exec_stats_get(ex, &st);
    assert_true(st.preempts >= 1);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&spin);
    rt_vt_destroy(&set);
}

/* Two spinners on one worker both make progress. */
static bool s_both_progress(void *arg)
{
    (void)arg;
    return atomic_load(&g_progress[10]) > 1000 && atomic_load(&g_progress[11]) > 1000 &&
           atomic_load(&g_flag[12]) == 0;
}

static void test_preemption_shares_worker(void **state)
{
    (void)state;
    rt_exec *ex = s_exec(1, 2);
    rt_vt *a = s_spawn(ex, FN_SPIN_TASK, 10, 0);
    rt_vt *b = s_spawn(ex, FN_SPIN_TASK, 11, 0);
    assert_true(s_until(s_both_progress, NULL));
    atomic_store(&g_flag[10], 1);
    atomic_store(&g_flag[11], 1);
    s_wait_ok(ex, a);
    s_wait_ok(ex, b);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&a);
    rt_vt_destroy(&b);
}

static void test_wait_timeout_and_errors(void **state)
{
    (void)state;
    rt_exec *ex = s_exec(1, 0);
    rt_vt *spin = s_spawn(ex, FN_SPIN_TASK, 4, 0);
    uint64_t t0 = rt_now_ns();
    assert_int_equal(rt_exec_wait(ex, spin, 20), LEV_ETIMEDOUT);
    assert_true(rt_now_ns() - t0 >= 15000000u);
    assert_int_equal(rt_exec_spawn(ex, spin), LEV_EBUSY);
    rt_vt *never = s_new(FN_SPIN_TASK, 4, 0);
    assert_int_equal(rt_exec_wait(ex, never, 0), LEV_EINVAL);
    assert_int_equal(rt_exec_wake(never), LEV_ENOVT);
    assert_int_equal(rt_exec_spawn(NULL, never), LEV_EINVAL);
    atomic_store(&g_flag[4], 1);
    s_wait_ok(ex, spin);
    assert_int_equal(rt_exec_spawn(ex, spin), LEV_EINVAL); /* ended */
    rt_exec_destroy(&ex);
    rt_vt_destroy(&spin);
    rt_vt_destroy(&never);
}

/* --- captures ------------------------------------------------------ */

typedef struct s_images {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* broadcast at every image, error and end */
    int n;
    uint8_t *first;
    size_t first_len;
    int errors;
    int last_err;
    int64_t capture_at; /* report value that asks for a capture */
    int stops;          /* images for a stop (capture_why RT_WANT_STOP) */
    int stop_errors;    /* failed captures for a stop */
    int done;           /* on_done calls */
    int wake_at;        /* at this image: g_flag[wake_slot] set, the VT woken (0: never) */
    int wake_slot;
    int wake_rc; /* what that rt_exec_wake returned */
} s_images;

#define S_IMAGES_INIT .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER

static void s_keep_image(rt_vt *vt, uint8_t *img, size_t len, void *ud)
{
    s_images *im = ud;
    pthread_mutex_lock(&im->mu);
    int n = ++im->n;
    if (vt->capture_why == RT_WANT_STOP)
        im->stops++;
    if (!im->first) {
        im->first = img;
        im->first_len = len;
        img = NULL;
    }
    bool wake = im->wake_at && n == im->wake_at;
    pthread_mutex_unlock(&im->mu);
    free(img);
    if (wake) { /* a wake that arrives while the VT is being captured */
        atomic_store(&g_flag[im->wake_slot], 1);
        int rc = rt_exec_wake(vt);
        pthread_mutex_lock(&im->mu);
        im->wake_rc = rc;
        pthread_mutex_unlock(&im->mu);
    }
    pthread_cond_broadcast(&im->cv);
}

static void s_count_error(rt_vt *vt, int err, const char *detail, void *ud)
{
    (void)detail;
    s_images *im = ud;
    pthread_mutex_lock(&im->mu);
    im->errors++;
    im->last_err = err;
    if (vt->capture_why == RT_WANT_STOP)
        im->stop_errors++;
    pthread_mutex_unlock(&im->mu);
    pthread_cond_broadcast(&im->cv);
}

static void s_count_done(rt_vt *vt, void *ud)
{
    (void)vt;
    s_images *im = ud;
    pthread_mutex_lock(&im->mu);
    im->done++;
    pthread_mutex_unlock(&im->mu);
    pthread_cond_broadcast(&im->cv);
}

/* Waits on im->cv until *count (a field of im) reaches n, at most
 * LIMIT_MS; whether it did. */
static bool s_wait_count(s_images *im, const int *count, int n)
{
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += LIMIT_MS / 1000;
    pthread_mutex_lock(&im->mu);
    int rc = 0;
    while (*count < n && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&im->cv, &im->mu, &dl);
    bool ok = *count >= n;
    pthread_mutex_unlock(&im->mu);
    return ok;
}

static void s_capture_on_report(rt_vt *vt, const void *buf, size_t len, void *ud)
{
    s_images *im = ud;
    int64_t v;
    if (len == sizeof v && (memcpy(&v, buf, sizeof v), v == im->capture_at))
        assert_int_equal(rt_exec_request_capture(vt), 0);
}

/* An executor whose callbacks count into im. */
static rt_exec *s_exec_im(int workers, int slice_ms, int checkpoint_ms, s_images *im)
{
    rt_exec_opts o = {.workers = workers,
                      .slice_ms = slice_ms,
                      .checkpoint_ms = checkpoint_ms,
                      .on_report = s_capture_on_report,
                      .on_done = s_count_done,
                      .on_image = s_keep_image,
                      .on_capture_error = s_count_error,
                      .ud = im};
    rt_exec *ex = NULL;
    assert_int_equal(rt_exec_new(&ex, &o), 0);
    return ex;
}

static bool s_images_n(void *ud)
{
    s_images *im = ud;
    pthread_mutex_lock(&im->mu);
    bool ok = im->n >= 2;
    pthread_mutex_unlock(&im->mu);
    return ok;
}

static bool s_errors_1(void *ud)
{
    s_images *im = ud;
    pthread_mutex_lock(&im->mu);
    bool ok = im->errors >= 1;
    pthread_mutex_unlock(&im->mu);
    return ok;
}

/* A capture requested mid-way; a restored copy finishes like the original. */
static void test_capture_request_and_restore(void **state)
{
    (void)state;
    s_images im = {S_IMAGES_INIT, .capture_at = 300};
    rt_exec *ex = s_exec_im(2, 0, 0, &im);
    rt_vt *vt = s_spawn(ex, FN_STEPS_TASK, 1000, 300);
    s_wait_ok(ex, vt);
    assert_int_equal(s_result(vt), s_steps(1000));
    assert_int_equal(im.n, 1);
    rt_image_info info;
    assert_int_equal(rt_image_info_get(im.first, im.first_len, &info), 0);
    assert_int_equal(info.vt_id, vt->id);
    assert_int_equal(info.module_hash, lev_module_hash(g_mod));
    rt_vt *copy;
    assert_int_equal(rt_restore(g_mod, im.first, im.first_len, &copy), 0);
    struct steps_task__frame *fr = rt_vt_bottom(copy);
    assert_true(fr->i >= 300 && fr->i < 1000); /* it resumes mid-way */
    assert_int_equal(rt_exec_spawn(ex, copy), 0);
    s_wait_ok(ex, copy);
    assert_int_equal(s_result(copy), s_steps(1000));
    rt_exec_destroy(&ex);
    free(im.first);
    rt_vt_destroy(&vt);
    rt_vt_destroy(&copy);
}

static void test_periodic_checkpoints(void **state)
{
    (void)state;
    s_images im = {S_IMAGES_INIT, .capture_at = -1};
    rt_exec *ex = s_exec_im(1, 0, 2, &im);
    rt_vt *spin = s_spawn(ex, FN_SPIN_TASK, 8, 0);
    assert_true(s_until(s_images_n, &im));
    atomic_store(&g_flag[8], 1);
    s_wait_ok(ex, spin);
    rt_exec_stats st;
    rt_exec_stats_get(ex, &st);
    assert_true(st.captures >= 2);
    rt_image_info info;
    assert_int_equal(rt_image_info_get(im.first, im.first_len, &info), 0);
    assert_int_equal(info.vt_id, spin->id);
    rt_exec_destroy(&ex);
    free(im.first);
    rt_vt_destroy(&spin);
}

/* A checkpoint that cannot be taken is reported and the VT goes on. */
static void test_capture_failure_goes_on(void **state)
{
    (void)state;
    s_images im = {S_IMAGES_INIT, .capture_at = -1};
    rt_exec *ex = s_exec_im(1, 0, 0, &im);
    int slot = 9;
    rt_vt *vt = s_spawn(ex, FN_BADPTR_TASK, slot, 0);
    assert_true(s_until(s_progress_pos, &slot));
    assert_int_equal(rt_exec_request_capture(vt), 0);
    assert_true(s_until(s_errors_1, &im));
    assert_int_equal(im.last_err, LEV_ECAPTURE);
    assert_int_equal(im.n, 0);
    atomic_store(&g_flag[slot], 1);
    s_wait_ok(ex, vt);
    assert_int_equal(s_result(vt), 42);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&vt);
}

static bool s_errors_3(void *ex)
{
    rt_exec_stats st;
    rt_exec_stats_get(ex, &st);
    return st.capture_errors >= 3;
}

/* Without a host callback, the first failure of a VT goes to stderr once. */
static void test_capture_failure_logged_once(void **state)
{
    (void)state;
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    int fd = fileno(tmp);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    rt_exec *ex = s_exec(1, 0);
    int slot = 13;
    rt_vt *vt = s_spawn(ex, FN_BADPTR_TASK, slot, 0);
    assert_true(s_until(s_progress_pos, &slot));
    for (int i = 0; i < 3; i++) {
        rt_exec_stats st;
        rt_exec_stats_get(ex, &st);
        uint64_t before = st.capture_errors;
        assert_int_equal(rt_exec_request_capture(vt), 0);
        uint64_t end = rt_now_ns() + (uint64_t)LIMIT_MS * 1000000u;
        do {
            s_sleep_ms(1);
            rt_exec_stats_get(ex, &st);
        } while (st.capture_errors == before && rt_now_ns() < end);
    }
    assert_true(s_errors_3(ex));
    atomic_store(&g_flag[slot], 1);
    s_wait_ok(ex, vt);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char buf[4096] = {0};
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    fclose(tmp);
    assert_true(n > 0);
    int lines = 0;
    for (char *p = buf; (p = strstr(p, "checkpoint of virtual thread")) != NULL; p++)
        lines++;
    assert_int_equal(lines, 1);
    assert_non_null(strstr(buf, "cannot be captured"));
    assert_int_equal(s_result(vt), 42);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&vt);
}

/* --- checkpoints of parked VTs, capture-and-stop -------------------- */

typedef struct s_at {
    int slot;
    long long at;
} s_at;

static bool s_progress_past(void *arg)
{
    s_at *a = arg;
    return atomic_load(&g_progress[a->slot]) > a->at;
}

/* A VT parked for many checkpoint intervals is captured where it is
 * parked, again and again, without being woken (it blocks once in all);
 * a wake that arrives while it is being captured is not lost. */
static void test_checkpoint_parked(void **state)
{
    (void)state;
    int slot = 35;
    s_images im = {S_IMAGES_INIT, .capture_at = -1, .wake_slot = slot};
    rt_exec *ex = s_exec_im(2, 0, 5, &im);
    rt_vt *vt = s_spawn(ex, FN_BLOCK_TASK, slot, 0);
    assert_true(s_wait_count(&im, &im.n, 3)); /* three intervals, parked */
    assert_int_equal(atomic_load(&g_flag[slot]), 0);
    assert_int_equal(rt_exec_wait(ex, vt, 0), LEV_ETIMEDOUT); /* still parked */
    rt_exec_stats st;
    rt_exec_stats_get(ex, &st);
    assert_int_equal(st.parks, 1);
    assert_true(st.captures >= 3);
    assert_int_equal(st.capture_errors, 0);

    /* Each image is of the VT where it parked: blocked once, pc 2. */
    rt_image_info info;
    assert_int_equal(rt_image_info_get(im.first, im.first_len, &info), 0);
    assert_true(info.vt_id == vt->id);
    rt_vt *copy;
    assert_int_equal(rt_restore(g_mod, im.first, im.first_len, &copy), 0);
    struct block_task__frame *fr = rt_vt_bottom(copy);
    assert_int_equal(fr->blocks, 1);
    assert_int_equal(fr->t.h.pc, 2);
    rt_vt_destroy(&copy);

    /* The next image's callback sets the flag and wakes the VT while it
     * is being captured: it runs once the capture is done, and ends. */
    pthread_mutex_lock(&im.mu);
    im.wake_at = im.n + 1;
    pthread_mutex_unlock(&im.mu);
    s_wait_ok(ex, vt);
    assert_int_equal(im.wake_rc, 0);
    assert_int_equal(s_result(vt), 1); /* never woken by a checkpoint */
    rt_exec_stats_get(ex, &st);
    assert_int_equal(st.parks, 1);
    assert_int_equal(im.stops, 0);
    rt_exec_destroy(&ex);
    free(im.first);
    rt_vt_destroy(&vt);
}

/* A running VT stopped at a safe point: exactly one image, state STOPPED,
 * and its image, restored, ends with the result of an uninterrupted run. */
static void test_capture_stop_running(void **state)
{
    (void)state;
    enum { N = 200000 };
    s_images im = {S_IMAGES_INIT, .capture_at = -1};
    rt_exec *ex = s_exec_im(2, 0, 0, &im);
    s_at half = {30, N / 2};
    rt_vt *vt = s_spawn(ex, FN_HASH_TASK, half.slot, N);
    assert_true(s_until(s_progress_past, &half)); /* polling half-way */
    assert_int_equal(rt_exec_capture_stop(vt), 0);
    s_wait_ok(ex, vt);
    assert_int_equal(vt->state, RT_VT_STOPPED);
    assert_int_equal(vt->err, 0);
    assert_int_equal(im.n, 1);
    assert_int_equal(im.stops, 1);
    assert_int_equal(im.done, 1);
    assert_int_equal(im.errors, 0);
    rt_exec_stats st;
    rt_exec_stats_get(ex, &st);
    assert_int_equal(st.captures, 1);
    /* Ended: no more requests, no respawn. */
    assert_int_equal(rt_exec_capture_stop(vt), LEV_ENOVT);
    assert_int_equal(rt_exec_wake(vt), LEV_ENOVT);
    assert_int_equal(rt_exec_spawn(ex, vt), LEV_EINVAL);
    assert_int_equal(rt_exec_capture_stop(NULL), LEV_EINVAL);

    rt_image_info info;
    assert_int_equal(rt_image_info_get(im.first, im.first_len, &info), 0);
    assert_true(info.vt_id == vt->id);
    assert_int_equal(info.epoch, vt->epoch);
    rt_vt *copy;
    assert_int_equal(rt_restore(g_mod, im.first, im.first_len, &copy), 0);
    struct hash_task__frame *fr = rt_vt_bottom(copy);
    assert_int_equal(fr->i, N / 2); /* where it waited */
    atomic_store(&g_flag[half.slot], 1);
    assert_int_equal(rt_exec_spawn(ex, copy), 0);
    s_wait_ok(ex, copy);
    assert_int_equal(s_result(copy), s_hash(N));
    rt_vt *whole = s_spawn(ex, FN_HASH_TASK, half.slot, N); /* uninterrupted */
    s_wait_ok(ex, whole);
    assert_int_equal(s_result(whole), s_hash(N));
    rt_exec_destroy(&ex);
    free(im.first);
    rt_vt_destroy(&vt);
    rt_vt_destroy(&copy);
    rt_vt_destroy(&whole);
}

/* A parked VT: captured without a wake (a capture request, then a stop);
 * a wake that comes right after the stop does not run it. */
static void test_capture_stop_parked(void **state)
{
    (void)state;
    s_images im = {S_IMAGES_INIT, .capture_at = -1};
    rt_exec *ex = s_exec_im(1, 0, 0, &im);
    int slot = 31;
    rt_vt *vt = s_spawn(ex, FN_BLOCK_TASK, slot, 0);
    assert_true(s_until(s_parked, ex));
    assert_int_equal(rt_exec_request_capture(vt), 0);
    assert_true(s_wait_count(&im, &im.n, 1));
    assert_int_equal(rt_exec_wait(ex, vt, 0), LEV_ETIMEDOUT); /* parked again */
    assert_int_equal(rt_exec_capture_stop(vt), 0);
    atomic_store(&g_flag[slot], 1);
    int rc = rt_exec_wake(vt); /* too late: the stop comes first */
    assert_true(rc == 0 || rc == LEV_ENOVT);
    s_wait_ok(ex, vt);
    assert_int_equal(vt->state, RT_VT_STOPPED);
    assert_int_equal(im.n, 2);
    assert_int_equal(im.stops, 1);
    assert_int_equal(im.done, 1);
    rt_exec_stats st;
    rt_exec_stats_get(ex, &st);
    assert_int_equal(st.parks, 1);
    struct block_task__frame *fr = rt_vt_bottom(vt);
    assert_int_equal(fr->blocks, 1); /* its condition was not run again */

    /* Its image goes on where it parked; the flag is set now. */
    rt_vt *copy;
    assert_int_equal(rt_restore(g_mod, im.first, im.first_len, &copy), 0);
    assert_int_equal(rt_exec_spawn(ex, copy), 0);
    s_wait_ok(ex, copy);
    assert_int_equal(s_result(copy), 1);
    rt_exec_destroy(&ex);
    free(im.first);
    rt_vt_destroy(&vt);
    rt_vt_destroy(&copy);
}

/* A queued VT that never ran is stopped when the worker takes it: its
 * image is of its start, and runs to the right result. */
static void test_capture_stop_queued(void **state)
{
    (void)state;
    enum { N = 1000 };
    s_images im = {S_IMAGES_INIT, .capture_at = -1};
    rt_exec *ex = s_exec_im(1, -1, 0, &im); /* one worker, no preemption */
    int spin = 32, slot = 33;
    rt_vt *sp = s_spawn(ex, FN_SPIN_TASK, spin, 0);
    assert_true(s_until(s_progress_pos, &spin)); /* holds the only worker */
    rt_vt *vt = s_spawn(ex, FN_HASH_TASK, slot, N);
    assert_int_equal(rt_exec_capture_stop(vt), 0);
    atomic_store(&g_flag[spin], 1);
    s_wait_ok(ex, sp);
    s_wait_ok(ex, vt);
    assert_int_equal(vt->state, RT_VT_STOPPED);
    assert_int_equal(atomic_load(&g_progress[slot]), 0); /* it never ran */
    assert_int_equal(im.n, 1);
    assert_int_equal(im.stops, 1);
    assert_int_equal(im.done, 2);
    rt_vt *copy;
    assert_int_equal(rt_restore(g_mod, im.first, im.first_len, &copy), 0);
    assert_int_equal(((lev_frame *)rt_vt_bottom(copy))->pc, 0);
    atomic_store(&g_flag[slot], 1);
    assert_int_equal(rt_exec_spawn(ex, copy), 0);
    s_wait_ok(ex, copy);
    assert_int_equal(s_result(copy), s_hash(N));
    rt_exec_destroy(&ex);
    free(im.first);
    rt_vt_destroy(&sp);
    rt_vt_destroy(&vt);
    rt_vt_destroy(&copy);
}

/* A stop whose capture fails (a pointer to malloc'd memory is live) is
 * reported and the VT goes on to its end. */
static void test_capture_stop_fails(void **state)
{
    (void)state;
    s_images im = {S_IMAGES_INIT, .capture_at = -1};
    rt_exec *ex = s_exec_im(1, 0, 0, &im);
    s_at at = {34, 0};
    rt_vt *vt = s_spawn(ex, FN_BADPTR_TASK, at.slot, 0);
    assert_true(s_until(s_progress_past, &at));
    assert_int_equal(rt_exec_capture_stop(vt), 0);
    assert_true(s_wait_count(&im, &im.stop_errors, 1));
    assert_int_equal(im.last_err, LEV_ECAPTURE);
    assert_int_equal(im.n, 0);
    at.at = atomic_load(&g_progress[at.slot]) + 1000;
    assert_true(s_until(s_progress_past, &at)); /* it goes on running */
    assert_int_equal(rt_exec_wait(ex, vt, 0), LEV_ETIMEDOUT);
    atomic_store(&g_flag[at.slot], 1);
    s_wait_ok(ex, vt);
    assert_int_equal(s_result(vt), 42);
    assert_int_equal(im.done, 1);
    assert_int_equal(im.stops, 0);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&vt);
}

/* --- identity set by the caller ---------------------------------------- */

static uint64_t g_reported_self;
static void s_keep_self(rt_vt *vt, const void *buf, size_t len, void *ud)
{
    (void)vt;
    (void)ud;
    assert_int_equal(len, sizeof g_reported_self);
    memcpy(&g_reported_self, buf, sizeof g_reported_self);
}

/* lev_self() and images give the id set before the spawn; a spawned VT's
 * identity is not set. */
static void test_identity_set(void **state)
{
    (void)state;
    rt_exec_opts o = {.workers = 1, .on_report = s_keep_self};
    rt_exec *ex;
    assert_int_equal(rt_exec_new(&ex, &o), 0);
    rt_vt *vt = s_new(FN_SELF_TASK, 0, 0);
    const uint64_t id = 0xFEDCBA9876543210ull;
    assert_int_equal(rt_vt_set_identity(vt, id, 3), 0);
    assert_int_equal(rt_exec_spawn(ex, vt), 0);
    s_wait_ok(ex, vt);
    assert_int_equal(s_result(vt), (int64_t)id);
    assert_true(g_reported_self == id);
    assert_int_equal(vt->epoch, 3);
    assert_int_equal(rt_vt_set_identity(vt, id, 4), LEV_EINVAL); /* ended */

    int slot = 36;
    rt_vt *parked = s_spawn(ex, FN_BLOCK_TASK, slot, 0);
    uint64_t before = parked->id;
    assert_int_equal(rt_vt_set_identity(parked, 1234, 2), LEV_EINVAL); /* spawned */
    assert_non_null(strstr(lev_errdetail(), "spawned"));
    assert_true(parked->id == before);
    atomic_store(&g_flag[slot], 1);
    assert_int_equal(rt_exec_wake(parked), 0);
    s_wait_ok(ex, parked);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&vt);
    rt_vt_destroy(&parked);
}

/* A VT restored from an image and given another id keeps the memory
 * stream the image brought back: the next image holds what it wrote
 * (streams go with the VT, not with its id), and the final text is
 * whole. */
static void test_identity_streams(void **state)
{
    (void)state;
    enum { N = 200 };
    s_images a = {S_IMAGES_INIT, .capture_at = 50};
    rt_exec *ex = s_exec_im(1, 0, 0, &a);
    rt_vt *vt = s_spawn(ex, FN_MEM_TASK, N, 0);
    s_wait_ok(ex, vt);
    assert_int_equal(s_result(vt), s_mem(N));
    assert_int_equal(a.n, 1);
    rt_exec_destroy(&ex);

    rt_vt *copy;
    assert_int_equal(rt_restore(g_mod, a.first, a.first_len, &copy), 0);
    assert_true(copy->id == vt->id);
    assert_int_equal(rt_vt_set_identity(copy, 9000001, 2), 0);
    s_images b = {S_IMAGES_INIT, .capture_at = 120};
    ex = s_exec_im(1, 0, 0, &b);
    assert_int_equal(rt_exec_spawn(ex, copy), 0);
    s_wait_ok(ex, copy);
    assert_int_equal(s_result(copy), s_mem(N));
    assert_int_equal(b.n, 1);
    rt_image_info info;
    assert_int_equal(rt_image_info_get(b.first, b.first_len, &info), 0);
    assert_true(info.vt_id == 9000001);
    assert_int_equal(info.epoch, 2);

    rt_vt *again;
    assert_int_equal(rt_restore(g_mod, b.first, b.first_len, &again), 0);
    assert_true(again->id == 9000001);
    assert_int_equal(again->epoch, 2);
    assert_int_equal(((struct mem_task__frame *)rt_vt_bottom(again))->i, 120);
    assert_int_equal(rt_exec_spawn(ex, again), 0);
    s_wait_ok(ex, again);
    assert_int_equal(s_result(again), s_mem(N));
    rt_exec_destroy(&ex);
    free(a.first);
    free(b.first);
    rt_vt_destroy(&vt);
    rt_vt_destroy(&copy);
    rt_vt_destroy(&again);
}

/* --- torture ------------------------------------------------------- */

/* The torture workload: results, one per line. */
static void s_workload(FILE *out)
{
    rt_exec *ex = s_exec(2, 0);
    rt_vt *vts[10];
    int k = 0;
    for (int i = 0; i < 4; i++)
        vts[k++] = s_spawn(ex, FN_FIB_TASK, 12 + i, 6);
    vts[k++] = s_spawn(ex, FN_STEPS_TASK, 300, -1);
    vts[k++] = s_spawn(ex, FN_LIST_TASK, 400, 0);
    /* A big heap graph with few safe points, wiped while the other
     * worker makes the GC collect. */
    vts[k++] = s_spawn(ex, FN_GARBAGE_TASK, 300000, 0);
    vts[k++] = s_spawn(ex, FN_LIST_TASK, 30000, 1000);
    vts[k++] = s_spawn(ex, FN_FIB_TASK, 17, -1);
    for (int i = 0; i < k; i++) {
        s_wait_ok(ex, vts[i]);
        fprintf(out, "vt %d: %" PRId64 "\n", i, s_result(vts[i]));
        rt_vt_destroy(&vts[i]);
    }
    rt_exec_stats st;
    rt_exec_stats_get(ex, &st);
    fprintf(out, "torture cycles: %s\n", st.tortures ? "some" : "none");
    rt_exec_destroy(&ex);
}

static void test_torture_identical(void **state)
{
    (void)state;
    char *mine = NULL;
    size_t mine_len = 0;
    FILE *f = open_memstream(&mine, &mine_len);
    s_workload(f);
    fclose(f);
    if (rt_torture_every() == 0)
        assert_non_null(strstr(mine, "torture cycles: none"));

    /* The same in a child with LEV_TORTURE=1. */
    int p[2];
    assert_int_equal(pipe(p), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addclose(&fa, p[0]);
    size_t nenv = 0;
    while (environ[nenv])
        nenv++;
    char **env = calloc(nenv + 2, sizeof *env);
    size_t k = 0;
    for (size_t i = 0; i < nenv; i++)
        if (strncmp(environ[i], "LEV_TORTURE=", 12) != 0)
            env[k++] = environ[i];
    env[k++] = "LEV_TORTURE=1";
    char *argv[] = {"test_sched", "--torture-child", NULL};
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, env), 0);
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    close(p[1]);
    char out[8192];
    size_t got = 0;
    ssize_t n;
    while (got < sizeof out - 1 && (n = read(p[0], out + got, sizeof out - 1 - got)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        assert_true(n > 0);
        got += (size_t)n;
    }
    out[got] = '\0';
    close(p[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("the torture child %s %d; its output:\n%s",
                 WIFEXITED(status) ? "exited with" : "died of signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), out);
    /* Same results; the child did torture. */
    char *cut = strstr(mine, "torture cycles:");
    assert_non_null(cut);
    size_t nres = (size_t)(cut - mine);
    assert_true(got > nres);
    if (memcmp(out, mine, nres) != 0)
        fail_msg("results differ under torture:\n--- native\n%s--- torture\n%s", mine, out);
    assert_non_null(strstr(out, "torture cycles: some"));
    free(mine);
}

/* --- shutdown, task calls, many VTs -------------------------------- */

static void test_destroy_cancels(void **state)
{
    (void)state;
    rt_exec *ex = s_exec(1, 0);
    int slot = 20;
    rt_vt *spin = s_spawn(ex, FN_SPIN_TASK, slot, 0);
    assert_true(s_until(s_progress_pos, &slot));
    rt_vt *parked = s_spawn(ex, FN_BLOCK_TASK, 21, 0);
    assert_true(s_until(s_parked, ex));
    rt_vt *queued = s_spawn(ex, FN_SPIN_TASK, 22, 0);
    /* the spinners never end by themselves: a destroy that waited for
     * them instead of cancelling would not return (ctest's limit) */
    rt_exec_destroy(&ex);
    rt_vt *all[] = {spin, parked, queued};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(all[i]->state, RT_VT_FAILED);
        assert_int_equal(all[i]->err, LEV_ECANCELED);
        rt_vt_destroy(&all[i]);
    }
}

static void test_task_calls(void **state)
{
    (void)state;
    assert_int_equal(lev_self(), 0);
    assert_int_equal(lev_report("x", 1), LEV_ENOVT);
    assert_int_equal(lev_return("x", 1), LEV_ENOVT);
    assert_int_equal(lev_checkpoint(), 0);
    rt_exec_opts o = {.workers = 1, .on_report = s_keep_self};
    rt_exec *ex;
    assert_int_equal(rt_exec_new(&ex, &o), 0);
    rt_vt *vt = s_spawn(ex, FN_SELF_TASK, 0, 0);
    s_wait_ok(ex, vt);
    assert_int_equal(s_result(vt), (int64_t)vt->id);
    assert_int_equal(g_reported_self, vt->id);
    assert_true(vt->id >= 2);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&vt);
}

/* Many VTs yielding in turn on one worker all end, each yield a switch.
 * (What a switch costs is measured in eval/bench_vt.c, not here.) */
static void test_many_yielders(void **state)
{
    (void)state;
    enum { N = 500, ROUNDS = 2000 };
    rt_exec *ex = s_exec(1, 0);
    static rt_vt *vts[N];
    for (int i = 0; i < N; i++)
        vts[i] = s_new(FN_LOG_TASK, 0, ROUNDS);
    for (int i = 0; i < N; i++)
        assert_int_equal(rt_exec_spawn(ex, vts[i]), 0);
    for (int i = 0; i < N; i++)
        s_wait_ok(ex, vts[i]);
    rt_exec_stats st;
    rt_exec_stats_get(ex, &st);
    assert_true(st.switches >= (uint64_t)N * ROUNDS - N);
    rt_exec_destroy(&ex);
    for (int i = 0; i < N; i++)
        rt_vt_destroy(&vts[i]);
}

int main(int argc, char **argv)
{
    rt_init();
    if (lev_module_register(&s_desc, &g_mod)) {
        fprintf(stderr, "test_sched: cannot register the test module: %s\n", lev_errdetail());
        return 1;
    }
    if (argc > 1 && strcmp(argv[1], "--torture-child") == 0) {
        s_workload(stdout);
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_many_vts, s_setup),
        cmocka_unit_test_setup(test_mixed_tasks_two_workers, s_setup),
        cmocka_unit_test_setup(test_yield_fairness, s_setup),
        cmocka_unit_test_setup(test_block_wake, s_setup),
        cmocka_unit_test_setup(test_wake_before_park, s_setup),
        cmocka_unit_test_setup(test_idle_wait, s_setup),
        cmocka_unit_test_setup(test_ping_pong, s_setup),
        cmocka_unit_test_setup(test_cancel, s_setup),
        cmocka_unit_test_setup(test_cancel_queued, s_setup),
        cmocka_unit_test_setup(test_preemption, s_setup),
        cmocka_unit_test_setup(test_preemption_shares_worker, s_setup),
        cmocka_unit_test_setup(test_no_preemption_alone, s_setup),
        cmocka_unit_test_setup(test_wait_timeout_and_errors, s_setup),
        cmocka_unit_test_setup(test_capture_request_and_restore, s_setup),
        cmocka_unit_test_setup(test_periodic_checkpoints, s_setup),
        cmocka_unit_test_setup(test_capture_failure_goes_on, s_setup),
        cmocka_unit_test_setup(test_capture_failure_logged_once, s_setup),
        cmocka_unit_test_setup(test_checkpoint_parked, s_setup),
        cmocka_unit_test_setup(test_capture_stop_running, s_setup),
        cmocka_unit_test_setup(test_capture_stop_parked, s_setup),
        cmocka_unit_test_setup(test_capture_stop_queued, s_setup),
        cmocka_unit_test_setup(test_capture_stop_fails, s_setup),
        cmocka_unit_test_setup(test_identity_set, s_setup),
        cmocka_unit_test_setup(test_identity_streams, s_setup),
        cmocka_unit_test_setup(test_torture_identical, s_setup),
        cmocka_unit_test_setup(test_destroy_cancels, s_setup),
        cmocka_unit_test_setup(test_task_calls, s_setup),
        cmocka_unit_test_setup(test_many_yielders, s_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
