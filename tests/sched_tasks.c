/* sched_tasks.c - the task module of the executor tests, written by hand
 * as levpp generates it: fib (a frame per call), yielding, blocking,
 * spinning, ping-pong, stepping, list-building, garbage-making, hashing and
 * stream-writing tasks, their descriptors, and the helpers of
 * sched_tasks.h.
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
#include "sched_tasks.h"

/* ===================================================================
 * Shared state the tasks and the tests observe
 * =================================================================== */

atomic_int g_flag[NSLOTS];       /* set by a test or a task */
atomic_llong g_progress[NSLOTS]; /* iterations of a spinning task */
atomic_int g_log_n;              /* yield fairness log */
int g_log[1 << 16];
rt_vt *g_peer[2]; /* ping-pong partners */
atomic_int g_turn;
lev_module *g_mod;

void sched_reset(void)
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

static int set_task__run(lev_ctx *vt, void *frame)
{
    (void)vt;
    atomic_store(&g_flag[s_arg(frame).a], 1);
    return LEV_RUN_DONE;
}

/* badptr_task(slot): spins like spin_task with a pointer to malloc'd
 * memory live in its frame, so it cannot be captured; returns 42. */

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

int64_t sched_fib(int64_t n) { return n < 2 ? n : sched_fib(n - 1) + sched_fib(n - 2); }

int64_t sched_steps(int64_t n)
{
    int64_t h = 7;
    for (int64_t i = 0; i < n; i++)
        h = (int64_t)((uint64_t)(i ? h : 7) * 31u + (uint64_t)i);
    return h;
}

int64_t sched_hash(int64_t n)
{
    uint64_t h = S_FNV_SEED;
    for (int64_t i = 0; i < n; i++)
        h = s_fnv_step(h, (uint64_t)i);
    return (int64_t)h;
}

/* What mem_task(n) returns. */
int64_t sched_mem(int64_t n)
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

int64_t sched_list(int64_t n)
{
    int64_t t = 0;
    for (int64_t i = 0; i < n; i++)
        t += i * i % 1009;
    return t;
}

void sched_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Polls cond(arg) every millisecond for at most LIMIT_MS; its last value. */
bool sched_until(bool (*cond)(void *), void *arg)
{
    uint64_t end = rt_now_ns() + (uint64_t)LIMIT_MS * 1000000u;
    while (!cond(arg)) {
        if (rt_now_ns() > end)
            return false;
        sched_sleep_ms(1);
    }
    return true;
}

bool sched_parked(void *ex)
{
    rt_exec_stats st;
    rt_exec_stats_get(ex, &st);
    return st.parks >= 1;
}

bool sched_progress_pos(void *slot) { return atomic_load(&g_progress[*(int *)slot]) > 0; }

rt_vt *sched_new(uint32_t fn, int32_t a, int32_t b)
{
    targ t = {a, b};
    rt_vt *vt = NULL;
    assert_int_equal(rt_vt_new(g_mod, fn, &t, sizeof t, &vt), 0);
    return vt;
}

rt_vt *sched_spawn(rt_exec *ex, uint32_t fn, int32_t a, int32_t b)
{
    rt_vt *vt = sched_new(fn, a, b);
    assert_int_equal(rt_exec_spawn(ex, vt), 0);
    return vt;
}

int64_t sched_result(rt_vt *vt)
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

void sched_wait_ok(rt_exec *ex, rt_vt *vt) { assert_int_equal(rt_exec_wait(ex, vt, LIMIT_MS), 0); }

void sched_canceled(rt_exec *ex, rt_vt *vt)
{
    sched_wait_ok(ex, vt);
    assert_int_equal(vt->state, RT_VT_FAILED);
    assert_int_equal(vt->err, LEV_ECANCELED);
}

rt_exec *sched_exec(int workers, int slice_ms)
{
    rt_exec_opts o = {.workers = workers, .slice_ms = slice_ms};
    rt_exec *ex = NULL;
    assert_int_equal(rt_exec_new(&ex, &o), 0);
    return ex;
}

int sched_setup(void **state)
{
    (void)state;
    sched_reset();
    return 0;
}
/* --- identity reports ------------------------------------------------ */

uint64_t g_reported_self;
void sched_keep_self(rt_vt *vt, const void *buf, size_t len, void *ud)
{
    (void)vt;
    (void)ud;
    assert_int_equal(len, sizeof g_reported_self);
    memcpy(&g_reported_self, buf, sizeof g_reported_self);
}

int sched_tasks_init(const char *prog)
{
    rt_init();
    if (lev_module_register(&s_desc, &g_mod)) {
        fprintf(stderr, "%s: cannot register the test module: %s\n", prog, lev_errdetail());
        return -1;
    }
    return 0;
}
