/* runtime_sample.c - the virtual-thread runtime on its own, with task code
 * written by hand against the frame ABI in its simplest form: one frame
 * struct and one resumable body per checkpointable function, a
 * hand-written module descriptor, safe points in loops and on every call.
 * (levpp's output follows the same ABI and adds run/resume pairs, lazy
 * frames and an unwind block per site.)
 *
 * It runs a batch of VTs on an executor and prints their results, captures
 * a running VT and finishes a restored copy of it, and rolls a VT back in
 * place to an earlier image. The output is deterministic.
 *
 * usage: lev_sample_runtime            run the demo
 *        lev_sample_runtime --bench    measure a VT switch at a safe point
 */
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "executor.h"
#include "image.h"
#include "lev_task.h"
#include "rt.h"
#include "vt.h"

/* ===================================================================
 * Task code (as generated)
 *
 * A caller pushes its callee's frame, fills the parameters, sets its own
 * resume point and calls the body; when the body returns LEV_RUN_DONE or
 * LEV_RUN_EXIT the caller pops that frame (a body never pops its own, so
 * the runtime's entry frame stays in place). On LEV_RUN_UNWIND the caller
 * returns at once, its state already in its frame. Resuming, a body
 * switches on its pc and re-issues the call with the callee's frame found
 * by lev_frame_callee().
 * =================================================================== */

/* Function ids (index in s_fns). */
enum {
    FN_FIB_TASK,
    FN_FIB,
    FN_TREE_TASK,
    FN_BUILD,
    FN_SUM,
    FN_ADD_TO,
    FN_STEPS_TASK,
    FN_SPIN_TASK,
    NFNS
};
/* Type ids. */
enum {
    T_NODE = LEV_T_USER,
    T_FIB_TASK,
    T_FIB,
    T_TREE_TASK,
    T_BUILD,
    T_SUM,
    T_STEPS_TASK,
    T_SPIN_TASK
};

static lev_module *s_mod;

struct node {
    int64_t val;
    struct node *l, *r;
};

/* A plain function: it reaches no safe point, so levpp leaves it alone. */
static void add_to(int64_t *acc, int64_t v) { *acc += v; }

/* Fails the VT; the body returns LEV_RUN_EXIT and each caller pops the
 * frame of its callee and returns LEV_RUN_EXIT too. */
static int s_oom(lev_ctx *vt)
{
    lev_vt_fail(vt, LEV_ENOMEM, "out of memory");
    return LEV_RUN_EXIT;
}

static int s_bad_pc(lev_ctx *vt)
{
    lev_vt_fail(vt, LEV_EFAILED, "bad resume point");
    return LEV_RUN_EXIT;
}

/* --- int64_t fib(int64_t n): a frame per call, a poll on entry ------- */

struct fib__frame {
    lev_frame h;
    int64_t n;
    int64_t a; /* result slot of fib(n - 1) */
    int64_t b; /* result slot of fib(n - 2) */
};

static int fib__run(lev_ctx *vt, struct fib__frame *fr, int64_t *ret)
{
    struct fib__frame *cf;
    int r;
    switch (fr->h.pc) {
    case 0:
        break;
    case 1:
        goto resume_1;
    case 2:
        cf = lev_frame_callee(vt, fr, sizeof *fr);
        goto call_2;
    case 3:
        cf = lev_frame_callee(vt, fr, sizeof *fr);
        goto call_3;
    default:
        return s_bad_pc(vt);
    }
    if (lev_poll(vt) && lev_safepoint(vt, LEV_SP_POLL)) {
        fr->h.pc = 1;
        return LEV_RUN_UNWIND;
    }
resume_1:
    if (fr->n < 2) {
        *ret = fr->n;
        return LEV_RUN_DONE;
    }
    if (!(cf = lev_frame_push(vt, sizeof *cf, FN_FIB)))
        return s_oom(vt);
    cf->n = fr->n - 1;
    fr->h.pc = 2;
call_2:
    if ((r = fib__run(vt, cf, &fr->a)) != LEV_RUN_DONE) {
        if (r == LEV_RUN_EXIT)
            lev_frame_pop(vt, cf);
        return r;
    }
    lev_frame_pop(vt, cf);
    if (!(cf = lev_frame_push(vt, sizeof *cf, FN_FIB)))
        return s_oom(vt);
    cf->n = fr->n - 2;
    fr->h.pc = 3;
call_3:
    if ((r = fib__run(vt, cf, &fr->b)) != LEV_RUN_DONE) {
        if (r == LEV_RUN_EXIT)
            lev_frame_pop(vt, cf);
        return r;
    }
    lev_frame_pop(vt, cf);
    *ret = fr->a + fr->b;
    return LEV_RUN_DONE;
}

/* --- LEV_TASK fib_task(arg: int32_t n): lev_return(fib(n)) ----------- */

struct fib_task__frame {
    lev_task_frame t;
    int64_t res; /* result slot of fib() */
};

static int fib_task__run(lev_ctx *vt, void *frame)
{
    struct fib_task__frame *fr = frame;
    struct fib__frame *cf;
    int r;
    switch (fr->t.h.pc) {
    case 0:
        break;
    case 1:
        cf = lev_frame_callee(vt, fr, sizeof *fr);
        goto call_1;
    default:
        return s_bad_pc(vt);
    }
    if (!(cf = lev_frame_push(vt, sizeof *cf, FN_FIB)))
        return s_oom(vt);
    int32_t n;
    memcpy(&n, fr->t.arg, sizeof n);
    cf->n = n;
    lev_report(&n, sizeof n); /* tells the host it started */
    fr->t.h.pc = 1;
call_1:
    if ((r = fib__run(vt, cf, &fr->res)) != LEV_RUN_DONE) {
        if (r == LEV_RUN_EXIT)
            lev_frame_pop(vt, cf);
        return r;
    }
    lev_frame_pop(vt, cf);
    lev_return(&fr->res, sizeof fr->res);
    return LEV_RUN_EXIT;
}

/* --- struct node *build(int depth, uint64_t seed): heap objects ------ */

struct build__frame {
    lev_frame h;
    int64_t depth;
    uint64_t seed;
    struct node *nd; /* local that lives across the calls */
};

static int build__run(lev_ctx *vt, struct build__frame *fr, struct node **ret)
{
    struct build__frame *cf;
    int r;
    switch (fr->h.pc) {
    case 0:
        break;
    case 1:
        goto resume_1;
    case 2:
        cf = lev_frame_callee(vt, fr, sizeof *fr);
        goto call_2;
    case 3:
        cf = lev_frame_callee(vt, fr, sizeof *fr);
        goto call_3;
    default:
        return s_bad_pc(vt);
    }
    if (lev_poll(vt) && lev_safepoint(vt, LEV_SP_POLL)) {
        fr->h.pc = 1;
        return LEV_RUN_UNWIND;
    }
resume_1:
    if (!(fr->nd = lev_alloc(s_mod, T_NODE, 1)))
        return s_oom(vt);
    fr->nd->val = (int64_t)(fr->seed % 1000u);
    if (fr->depth > 0) {
        if (!(cf = lev_frame_push(vt, sizeof *cf, FN_BUILD)))
            return s_oom(vt);
        cf->depth = fr->depth - 1;
        cf->seed = fr->seed * 6364136223846793005u + 1442695040888963407u;
        fr->h.pc = 2;
    call_2:
        if ((r = build__run(vt, cf, &fr->nd->l)) != LEV_RUN_DONE) {
            if (r == LEV_RUN_EXIT)
                lev_frame_pop(vt, cf);
            return r;
        }
        lev_frame_pop(vt, cf);
        if (!(cf = lev_frame_push(vt, sizeof *cf, FN_BUILD)))
            return s_oom(vt);
        cf->depth = fr->depth - 1;
        cf->seed = fr->seed * 2862933555777941757u + 3037000493u;
        fr->h.pc = 3;
    call_3:
        if ((r = build__run(vt, cf, &fr->nd->r)) != LEV_RUN_DONE) {
            if (r == LEV_RUN_EXIT)
                lev_frame_pop(vt, cf);
            return r;
        }
        lev_frame_pop(vt, cf);
    }
    *ret = fr->nd;
    return LEV_RUN_DONE;
}

/* --- void sum(struct node *nd, int64_t *acc): a pointer into the
 * caller's frame lives across safe points; a yield every 64 nodes ------ */

struct sum__frame {
    lev_frame h;
    struct node *nd;
    int64_t *acc;
};

static int sum__run(lev_ctx *vt, struct sum__frame *fr, void *ret)
{
    (void)ret;
    struct sum__frame *cf;
    int r;
    switch (fr->h.pc) {
    case 0:
        break;
    case 1:
        goto resume_1;
    case 2:
        cf = lev_frame_callee(vt, fr, sizeof *fr);
        goto call_2;
    case 3:
        cf = lev_frame_callee(vt, fr, sizeof *fr);
        goto call_3;
    default:
        return s_bad_pc(vt);
    }
    add_to(fr->acc, fr->nd->val);
    if ((fr->nd->val & 63) == 0) {
        fr->h.pc = 1;
        if (lev_safepoint(vt, LEV_SP_YIELD))
            return LEV_RUN_UNWIND;
    }
resume_1:
    if (fr->nd->l) {
        if (!(cf = lev_frame_push(vt, sizeof *cf, FN_SUM)))
            return s_oom(vt);
        cf->nd = fr->nd->l;
        cf->acc = fr->acc;
        fr->h.pc = 2;
    call_2:
        if ((r = sum__run(vt, cf, NULL)) != LEV_RUN_DONE) {
            if (r == LEV_RUN_EXIT)
                lev_frame_pop(vt, cf);
            return r;
        }
        lev_frame_pop(vt, cf);
    }
    if (fr->nd->r) {
        if (!(cf = lev_frame_push(vt, sizeof *cf, FN_SUM)))
            return s_oom(vt);
        cf->nd = fr->nd->r;
        cf->acc = fr->acc;
        fr->h.pc = 3;
    call_3:
        if ((r = sum__run(vt, cf, NULL)) != LEV_RUN_DONE) {
            if (r == LEV_RUN_EXIT)
                lev_frame_pop(vt, cf);
            return r;
        }
        lev_frame_pop(vt, cf);
    }
    return LEV_RUN_DONE;
}

/* --- LEV_TASK tree_task(arg: int32_t depth, seed): builds a tree and
 * sums it into `total`, a local whose address is taken --------------- */

struct tree_arg {
    int32_t depth;
    int32_t seed;
};

struct tree_task__frame {
    lev_task_frame t;
    struct node *root; /* result slot of build() */
    int64_t total;     /* address taken: lives in the frame */
};

static int tree_task__run(lev_ctx *vt, void *frame)
{
    struct tree_task__frame *fr = frame;
    struct build__frame *bf;
    struct sum__frame *sf;
    int r;
    switch (fr->t.h.pc) {
    case 0:
        break;
    case 1:
        bf = lev_frame_callee(vt, fr, sizeof *fr);
        goto call_1;
    case 2:
        goto resume_2;
    case 3:
        sf = lev_frame_callee(vt, fr, sizeof *fr);
        goto call_3;
    default:
        return s_bad_pc(vt);
    }
    struct tree_arg a;
    memcpy(&a, fr->t.arg, sizeof a);
    if (!(bf = lev_frame_push(vt, sizeof *bf, FN_BUILD)))
        return s_oom(vt);
    bf->depth = a.depth;
    bf->seed = (uint64_t)a.seed;
    fr->t.h.pc = 1;
call_1:
    if ((r = build__run(vt, bf, &fr->root)) != LEV_RUN_DONE) {
        if (r == LEV_RUN_EXIT)
            lev_frame_pop(vt, bf);
        return r;
    }
    lev_frame_pop(vt, bf);
    fr->t.h.pc = 2;
    if (lev_safepoint(vt, LEV_SP_CHECKPOINT))
        return LEV_RUN_UNWIND;
resume_2:
    fr->total = 0;
    if (!(sf = lev_frame_push(vt, sizeof *sf, FN_SUM)))
        return s_oom(vt);
    sf->nd = fr->root;
    sf->acc = &fr->total;
    fr->t.h.pc = 3;
call_3:
    if ((r = sum__run(vt, sf, NULL)) != LEV_RUN_DONE) {
        if (r == LEV_RUN_EXIT)
            lev_frame_pop(vt, sf);
        return r;
    }
    lev_frame_pop(vt, sf);
    lev_return(&fr->total, sizeof fr->total);
    return LEV_RUN_EXIT;
}

/* --- LEV_TASK steps_task(arg: int32_t n): fills a heap array one step
 * per time slice; `i` stays a C local, spilled only when it unwinds ---- */

struct steps_task__frame {
    lev_task_frame t;
    int64_t n;
    int64_t i;     /* the loop counter, spilled when the body unwinds */
    int64_t *hist; /* heap array of n values */
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
        return s_bad_pc(vt);
    }
    int32_t n;
    memcpy(&n, fr->t.arg, sizeof n);
    fr->n = n;
    if (!(fr->hist = lev_alloc(s_mod, LEV_T_U64, (size_t)n)))
        return s_oom(vt);
    for (i = 0; i < fr->n; i++) {
        fr->hist[i] = (int64_t)((uint64_t)(i ? fr->hist[i - 1] : 7) * 31u + (uint64_t)i);
        fr->i = i;
        fr->t.h.pc = 1;
        if (lev_safepoint(vt, LEV_SP_YIELD))
            return LEV_RUN_UNWIND;
    resume_1:;
    }
    lev_return(&fr->hist[fr->n - 1], sizeof(int64_t));
    return LEV_RUN_EXIT;
}

/* --- LEV_TASK spin_task(arg: int32_t rounds): yields `rounds` times
 * (the benchmark) -------------------------------------------------------- */

struct spin_task__frame {
    lev_task_frame t;
    int64_t left;
};

static int spin_task__run(lev_ctx *vt, void *frame)
{
    struct spin_task__frame *fr = frame;
    int64_t left;
    switch (fr->t.h.pc) {
    case 0:
        break;
    case 1:
        left = fr->left;
        goto resume_1;
    default:
        return s_bad_pc(vt);
    }
    int32_t n;
    memcpy(&n, fr->t.arg, sizeof n);
    for (left = n; left > 0; left--) {
        fr->left = left;
        fr->t.h.pc = 1;
        if (lev_safepoint(vt, LEV_SP_YIELD))
            return LEV_RUN_UNWIND;
    resume_1:;
    }
    return LEV_RUN_DONE;
}

/* ===================================================================
 * Module descriptor (as generated)
 * =================================================================== */

#define F(type, field, kind, elem)                                                                 \
    {                                                                                              \
#field, (uint32_t)offsetof(type, field), kind, 1, elem                                     \
    }
#define TASK_FIELDS(type)                                                                          \
    {"arg", (uint32_t)offsetof(type, t.arg), LEV_K_PTR, 1, 0},                                     \
    {                                                                                              \
        "len", (uint32_t)offsetof(type, t.len), LEV_K_B8, 1, 0                                     \
    }

static const lev_field_desc s_node_f[] = {F(struct node, val, LEV_K_B8, 0),
                                          F(struct node, l, LEV_K_PTR, 0),
                                          F(struct node, r, LEV_K_PTR, 0)};
static const lev_field_desc s_fib_task_f[] = {TASK_FIELDS(struct fib_task__frame),
                                              F(struct fib_task__frame, res, LEV_K_B8, 0)};
static const lev_field_desc s_fib_f[] = {F(struct fib__frame, n, LEV_K_B8, 0),
                                         F(struct fib__frame, a, LEV_K_B8, 0),
                                         F(struct fib__frame, b, LEV_K_B8, 0)};
static const lev_field_desc s_tree_task_f[] = {TASK_FIELDS(struct tree_task__frame),
                                               F(struct tree_task__frame, root, LEV_K_PTR, 0),
                                               F(struct tree_task__frame, total, LEV_K_B8, 0)};
static const lev_field_desc s_build_f[] = {F(struct build__frame, depth, LEV_K_B8, 0),
                                           F(struct build__frame, seed, LEV_K_B8, 0),
                                           F(struct build__frame, nd, LEV_K_PTR, 0)};
static const lev_field_desc s_sum_f[] = {F(struct sum__frame, nd, LEV_K_PTR, 0),
                                         F(struct sum__frame, acc, LEV_K_PTR, 0)};
static const lev_field_desc s_steps_task_f[] = {
    TASK_FIELDS(struct steps_task__frame), F(struct steps_task__frame, n, LEV_K_B8, 0),
    F(struct steps_task__frame, i, LEV_K_B8, 0), F(struct steps_task__frame, hist, LEV_K_PTR, 0)};
static const lev_field_desc s_spin_task_f[] = {TASK_FIELDS(struct spin_task__frame),
                                               F(struct spin_task__frame, left, LEV_K_B8, 0)};

#define NF(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))
#define TYPE(name, type, fields)                                                                   \
    {                                                                                              \
        name, (uint32_t)sizeof(type), NF(fields), fields, _Alignof(type)                           \
    }

static const lev_type_desc s_types[] = {
    TYPE("struct node", struct node, s_node_f),
    TYPE("frame fib_task", struct fib_task__frame, s_fib_task_f),
    TYPE("frame fib", struct fib__frame, s_fib_f),
    TYPE("frame tree_task", struct tree_task__frame, s_tree_task_f),
    TYPE("frame build", struct build__frame, s_build_f),
    TYPE("frame sum", struct sum__frame, s_sum_f),
    TYPE("frame steps_task", struct steps_task__frame, s_steps_task_f),
    TYPE("frame spin_task", struct spin_task__frame, s_spin_task_f),
};

static const lev_fn_desc s_fns[NFNS] = {
    [FN_FIB_TASK] = {"fib_task", NULL, fib_task__run, T_FIB_TASK, LEV_FN_TASK},
    [FN_FIB] = {"fib", NULL, NULL, T_FIB, 0},
    [FN_TREE_TASK] = {"tree_task", NULL, tree_task__run, T_TREE_TASK, LEV_FN_TASK},
    [FN_BUILD] = {"build", NULL, NULL, T_BUILD, 0},
    [FN_SUM] = {"sum", NULL, NULL, T_SUM, 0},
    [FN_ADD_TO] = {"add_to", (void (*)(void))add_to, NULL, 0, 0},
    [FN_STEPS_TASK] = {"steps_task", NULL, steps_task__run, T_STEPS_TASK, LEV_FN_TASK},
    [FN_SPIN_TASK] = {"spin_task", NULL, spin_task__run, T_SPIN_TASK, LEV_FN_TASK},
};

static const lev_module_desc s_desc = {LEV_ABI_VERSION,
                                       "sample_runtime",
                                       sizeof s_types / sizeof s_types[0],
                                       s_types,
                                       NFNS,
                                       s_fns,
                                       0,
                                       NULL};

/* ===================================================================
 * Host side
 * =================================================================== */

/* The host: asks for an image of the VT that reports `capture_n` as it
 * starts, and keeps the first image it is given. */
typedef struct s_host {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int32_t capture_n;
    uint8_t *img;
    size_t len;
} s_host;

static void s_on_report(rt_vt *vt, const void *buf, size_t len, void *ud)
{
    s_host *h = ud;
    int32_t n;
    if (len == sizeof n && (memcpy(&n, buf, sizeof n), n == h->capture_n))
        rt_exec_request_capture(vt); /* taken at its next safe point */
}

static void s_on_image(rt_vt *vt, uint8_t *img, size_t len, void *ud)
{
    (void)vt;
    s_host *h = ud;
    pthread_mutex_lock(&h->mu);
    if (!h->img) {
        h->img = img;
        h->len = len;
        img = NULL;
        pthread_cond_broadcast(&h->cv);
    }
    pthread_mutex_unlock(&h->mu);
    free(img);
}

static void s_die(const char *what, int rc)
{
    fprintf(stderr, "lev_sample_runtime: %s: %s (%s)\n", what, lev_strerror(rc), lev_errdetail());
    exit(1);
}

static rt_vt *s_new(uint32_t fn, const void *arg, size_t len)
{
    rt_vt *vt;
    int rc = rt_vt_new(s_mod, fn, arg, len, &vt);
    if (rc)
        s_die("rt_vt_new", rc);
    return vt;
}

static int64_t s_result(rt_vt *vt)
{
    int64_t v = 0;
    if (vt->state != RT_VT_DONE || vt->result_len != sizeof v) {
        fprintf(stderr, "lev_sample_runtime: VT %" PRIu64 " failed: %s (%s)\n", vt->id,
                lev_strerror(vt->err), vt->errdetail ? vt->errdetail : "");
        exit(1);
    }
    memcpy(&v, vt->result, sizeof v);
    return v;
}

/* What the tasks compute, natively, to check them against. */
static int64_t s_fib(int64_t n) { return n < 2 ? n : s_fib(n - 1) + s_fib(n - 2); }

static int64_t s_tree(int depth, uint64_t seed)
{
    int64_t v = (int64_t)(seed % 1000u);
    if (depth > 0) {
        v += s_tree(depth - 1, seed * 6364136223846793005u + 1442695040888963407u);
        v += s_tree(depth - 1, seed * 2862933555777941757u + 3037000493u);
    }
    return v;
}

static int64_t s_steps(int n)
{
    int64_t h = 7;
    for (int64_t i = 0; i < n; i++)
        h = (int64_t)((uint64_t)(i ? h : 7) * 31u + (uint64_t)i);
    return h;
}

/* Part 1: a batch of VTs on the executor. */
static int s_batch(rt_exec *ex)
{
    enum { NFIB = 6, NTREE = 6 };
    rt_vt *vts[NFIB + NTREE];
    for (int i = 0; i < NFIB; i++) {
        int32_t n = 18 + i;
        vts[i] = s_new(FN_FIB_TASK, &n, sizeof n);
    }
    for (int i = 0; i < NTREE; i++) {
        struct tree_arg a = {8 + i, 1000 + i};
        vts[NFIB + i] = s_new(FN_TREE_TASK, &a, sizeof a);
    }
    for (int i = 0; i < NFIB + NTREE; i++) {
        int rc = rt_exec_spawn(ex, vts[i]);
        if (rc)
            s_die("rt_exec_spawn", rc);
    }
    int bad = 0;
    for (int i = 0; i < NFIB + NTREE; i++) {
        int rc = rt_exec_wait(ex, vts[i], -1);
        if (rc)
            s_die("rt_exec_wait", rc);
        int64_t got = s_result(vts[i]), want;
        if (i < NFIB) {
            want = s_fib(18 + i);
            printf("fib(%d) = %" PRId64 "\n", 18 + i, got);
        } else {
            int k = i - NFIB;
            want = s_tree(8 + k, (uint64_t)1000 + (uint64_t)k);
            printf("tree(depth %d, seed %d): %d nodes, sum %" PRId64 "\n", 8 + k, 1000 + k,
                   (1 << (9 + k)) - 1, got);
        }
        bad += got != want;
        rt_vt_destroy(&vts[i]);
    }
    return bad ? -1 : NFIB + NTREE;
}

/* Part 2: capture a running VT, finish it, and finish a restored copy. */
static int s_capture_copy(rt_exec *ex, s_host *h)
{
    int32_t n = 27;
    rt_vt *vt = s_new(FN_FIB_TASK, &n, sizeof n);
    h->capture_n = n;
    int rc = rt_exec_spawn(ex, vt);
    if (rc)
        s_die("rt_exec_spawn", rc);
    pthread_mutex_lock(&h->mu);
    while (!h->img)
        pthread_cond_wait(&h->cv, &h->mu);
    pthread_mutex_unlock(&h->mu);
    rt_image_info info;
    if ((rc = rt_image_info_get(h->img, h->len, &info)))
        s_die("rt_image_info_get", rc);
    rt_vt *copy;
    if ((rc = rt_restore(s_mod, h->img, h->len, &copy)))
        s_die("rt_restore", rc);
    if ((rc = rt_exec_spawn(ex, copy)) || (rc = rt_exec_wait(ex, copy, -1)) ||
        (rc = rt_exec_wait(ex, vt, -1)))
        s_die("running the copy", rc);
    int64_t a = s_result(vt), b = s_result(copy);
    printf("captured fib(27) while it ran (image of %s); original = %" PRId64
           ", restored copy = %" PRId64 "\n",
           info.vt_id == vt->id ? "that VT" : "ANOTHER VT", a, b);
    rt_vt_destroy(&vt);
    rt_vt_destroy(&copy);
    return a == b && a == s_fib(27) ? 0 : -1;
}

/* Steps a VT by hand (no executor) through `k` of its yields. */
static void s_step_n(rt_vt *vt, int k)
{
    for (int i = 0; i < k && vt->state != RT_VT_DONE; i++) {
        rt_vt_step(vt);
        vt->want = 0; /* the executor's part: act on the yield */
    }
}

/* Part 3: capture after step 10, run to step 25, restore in place: the VT
 * goes on after step 10 and ends with the result of an undisturbed run. */
static int s_rollback(void)
{
    int32_t n = 40;
    rt_vt *vt = s_new(FN_STEPS_TASK, &n, sizeof n);
    struct steps_task__frame *fr;
    s_step_n(vt, 10);
    fr = rt_vt_bottom(vt);
    int64_t at_capture = fr->i + 1; /* steps done */
    uint8_t *img;
    size_t len;
    int rc = rt_capture(vt, &img, &len);
    if (rc)
        s_die("rt_capture", rc);
    s_step_n(vt, 15);
    fr = rt_vt_bottom(vt);
    int64_t before = fr->i + 1;
    if ((rc = rt_restore_into(vt, img, len)))
        s_die("rt_restore_into", rc);
    free(img);
    fr = rt_vt_bottom(vt);
    int64_t after = fr->i + 1;
    while (vt->state != RT_VT_DONE && vt->state != RT_VT_FAILED)
        s_step_n(vt, 1);
    int64_t got = s_result(vt);
    printf("rolled back in place from step %" PRId64 " to step %" PRId64 " (captured at %" PRId64
           "); result %s an undisturbed run\n",
           before, after, at_capture, got == s_steps(n) ? "matches" : "DIFFERS FROM");
    rt_vt_destroy(&vt);
    return got == s_steps(n) && after == at_capture ? 0 : -1;
}

/* --bench: one worker, many VTs that only yield. */
static int s_bench(void)
{
    enum { NVT = 1000, ROUNDS = 5000 };
    rt_exec *ex;
    rt_exec_opts o = {.workers = 1};
    int rc = rt_exec_new(&ex, &o);
    if (rc)
        s_die("rt_exec_new", rc);
    static rt_vt *vts[NVT];
    int32_t rounds = ROUNDS;
    for (int i = 0; i < NVT; i++)
        vts[i] = s_new(FN_SPIN_TASK, &rounds, sizeof rounds);
    uint64_t t0 = rt_now_ns();
    for (int i = 0; i < NVT; i++)
        if ((rc = rt_exec_spawn(ex, vts[i])))
            s_die("rt_exec_spawn", rc);
    for (int i = 0; i < NVT; i++)
        rt_exec_wait(ex, vts[i], -1);
    uint64_t t1 = rt_now_ns();
    rt_exec_stats st;
    rt_exec_stats_get(ex, &st);
    printf("%d VTs x %d yields on one worker: %.1f ns per switch (%" PRIu64 " switches, %" PRIu64
           " preemptions)\n",
           NVT, ROUNDS, (double)(t1 - t0) / (double)st.switches, st.switches, st.preempts);
    rt_exec_destroy(&ex);
    for (int i = 0; i < NVT; i++)
        rt_vt_destroy(&vts[i]);
    return 0;
}

int main(int argc, char **argv)
{
    rt_init();
    int rc = lev_module_register(&s_desc, &s_mod);
    if (rc)
        s_die("lev_module_register", rc);
    if (argc > 1 && strcmp(argv[1], "--bench") == 0)
        return s_bench();

    s_host h = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .capture_n = -1};
    rt_exec_opts o = {.workers = 2, .on_report = s_on_report, .on_image = s_on_image, .ud = &h};
    rt_exec *ex;
    if ((rc = rt_exec_new(&ex, &o)))
        s_die("rt_exec_new", rc);
    int nvt = s_batch(ex);
    int copy = s_capture_copy(ex, &h);
    rt_exec_destroy(&ex);
    free(h.img);
    int back = s_rollback();
    bool ok = nvt > 0 && copy == 0 && back == 0;
    printf("summary: %s: %d virtual threads on 2 workers, 1 capture finished by a restored copy, "
           "1 rollback in place\n",
           ok ? "ok" : "FAILED", nvt > 0 ? nvt + 3 : 0);
    return ok ? 0 : 1;
}
