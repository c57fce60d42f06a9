/* driver.c - runs task block_run of block.c, transformed by levpp, on the
 * executor against fake channels: the blocking calls' try forms below
 * return LEV_BLOCKED S_BLOCKS times before each call completes, so every
 * call stops at its LEV_SP_BLOCK safe point and is re-issued at its
 * resume point. The argument expressions of the calls count their
 * evaluations (block_note, block_timeout): once per call, never again on
 * a re-issue. Registered plainly and under LEV_TORTURE=1, where each
 * blocking safe point captures, wipes and restores the VT, so the
 * arguments kept in its frame must survive a move.
 *
 * The channel API is the runtime's to define: the generated module is
 * compiled with -Dlev_recv_try=block_recv_try, -Dlev_recv=block_recv and
 * so on (tests/CMakeLists.txt), so its calls reach the fakes below
 * whether or not the runtime linked in defines the real ones. A fake that blocks
 * wakes its VT first (rt_exec_wake): the executor keeps a wake that comes
 * before the park and consumes it there, so the VT unwinds, is parked and
 * runs again at once, without a second thread.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "block.h"
#include "executor.h"
#include "module.h"
#include "rt.h"
#include "vt.h"

enum { S_BLOCKS = 3, S_QMAX = 64, S_N = 5 };

/* The calls, for the counters. */
enum { S_SEND, S_RECV, S_LOCK, S_READ, S_NCALLS };

static struct {
    long notes[BN_N]; /* evaluations of each argument expression */
    int left;         /* LEV_BLOCKED still to return for the call in progress; -1: none */
    int call;         /* which call is in progress */
    long at_first[BN_N];
    long reeval;           /* argument evaluations seen during a re-issue */
    long tries[S_NCALLS];  /* try calls */
    long done[S_NCALLS];   /* completed calls */
    long q[S_QMAX];        /* messages sent, not yet received */
    unsigned qhead, qtail; /* q[qhead, qtail) */
    long counter;          /* the global "counter" */
    int counter_set, held;
    long errors; /* a try called with arguments the call did not write */
} g;

void *block_note(int what, void *p)
{
    if (what >= 0 && what < BN_N)
        g.notes[what]++;
    return p;
}

int block_timeout(int ms)
{
    g.notes[BN_RECV_TIMEOUT]++;
    return ms;
}

/* Whether try call `call` blocks now: the first try of a call starts it
 * (S_BLOCKS blocks to come); a try that blocks wakes the VT. Every try of
 * a call after its first must find the argument counters as the first
 * did. */
static int s_blocks(int call)
{
    g.tries[call]++;
    if (g.left < 0) {
        g.left = S_BLOCKS;
        g.call = call;
        memcpy(g.at_first, g.notes, sizeof g.at_first);
    } else if (g.call != call || memcmp(g.at_first, g.notes, sizeof g.notes)) {
        g.reeval++;
    }
    if (g.left > 0) {
        g.left--;
        rt_exec_wake(rt_vt_current());
        return 1;
    }
    g.left = -1;
    g.done[call]++;
    return 0;
}

/* A copy of len bytes of p on the running VT's heap (NULL for 0). */
static void *s_heap_copy(const void *p, size_t len)
{
    if (!len)
        return NULL;
    void *b = lev_alloc(rt_vt_current()->mod, LEV_T_BYTES, len);
    if (b)
        memcpy(b, p, len);
    return b;
}

int block_send_try(lev_ctx *vt, uint64_t to, const void *buf, size_t len);
int block_recv_try(lev_ctx *vt, uint64_t *from, void **buf, size_t *len, int timeout_ms);
int block_global_lock_try(lev_ctx *vt, const char *name, void **value, size_t *len);
int block_global_read_try(lev_ctx *vt, const char *name, void **value, size_t *len);
int block_global_unlock(const char *name, const void *value, size_t len);

int block_send_try(lev_ctx *vt, uint64_t to, const void *buf, size_t len)
{
    (void)vt;
    if (s_blocks(S_SEND))
        return LEV_BLOCKED;
    if (to != 7 || len != sizeof(long) || g.qtail == S_QMAX) {
        g.errors++;
        return LEV_EINVAL;
    }
    memcpy(&g.q[g.qtail++], buf, sizeof(long));
    return 0;
}

int block_recv_try(lev_ctx *vt, uint64_t *from, void **buf, size_t *len, int timeout_ms)
{
    (void)vt;
    if (s_blocks(S_RECV))
        return LEV_BLOCKED;
    if (timeout_ms != -1 && timeout_ms != 50)
        g.errors++;
    if (g.qhead == g.qtail)
        return LEV_ETIMEDOUT;
    *from = BLOCK_SENDER;
    *buf = s_heap_copy(&g.q[g.qhead++], sizeof(long));
    *len = sizeof(long);
    return *buf ? 0 : LEV_ENOMEM;
}

/* The fake global "counter": the lock and the read hand back a heap copy
 * of its value. */
static int s_global(const char *name, void **value, size_t *len)
{
    if (strcmp(name, "counter")) {
        g.errors++;
        return LEV_EINVAL;
    }
    *value = g.counter_set ? s_heap_copy(&g.counter, sizeof g.counter) : NULL;
    *len = g.counter_set ? sizeof g.counter : 0;
    return 0;
}

int block_global_lock_try(lev_ctx *vt, const char *name, void **value, size_t *len)
{
    (void)vt;
    if (s_blocks(S_LOCK))
        return LEV_BLOCKED;
    if (g.held)
        return LEV_EBUSY;
    g.held = 1;
    return s_global(name, value, len);
}

int block_global_read_try(lev_ctx *vt, const char *name, void **value, size_t *len)
{
    (void)vt;
    if (s_blocks(S_READ))
        return LEV_BLOCKED;
    return s_global(name, value, len);
}

int block_global_unlock(const char *name, const void *value, size_t len)
{
    if (!g.held || strcmp(name, "counter") || len != sizeof g.counter) {
        g.errors++;
        return LEV_EINVAL;
    }
    memcpy(&g.counter, value, sizeof g.counter);
    g.counter_set = 1;
    g.held = 0;
    return 0;
}

/* The plain forms, which only the native copies of the task's functions
 * call (levpp keeps them for callers it did not transform): never here. */
int block_send(uint64_t to, const void *buf, size_t len);
int block_recv(uint64_t *from, void **buf, size_t *len, int timeout_ms);
int block_global_lock(const char *name, void **value, size_t *len);
int block_global_read(const char *name, void **value, size_t *len);

int block_send(uint64_t to, const void *buf, size_t len)
{
    (void)to, (void)buf, (void)len;
    g.errors++;
    return LEV_EFAILED;
}

int block_recv(uint64_t *from, void **buf, size_t *len, int timeout_ms)
{
    (void)from, (void)buf, (void)len, (void)timeout_ms;
    g.errors++;
    return LEV_EFAILED;
}

int block_global_lock(const char *name, void **value, size_t *len)
{
    (void)name, (void)value, (void)len;
    g.errors++;
    return LEV_EFAILED;
}

int block_global_read(const char *name, void **value, size_t *len)
{
    (void)name, (void)value, (void)len;
    g.errors++;
    return LEV_EFAILED;
}

/* block_run's calls each block S_BLOCKS times, evaluate their arguments
 * once, and return what the fakes gave: the task's result says so. */
static void t_block_calls(void **state)
{
    (void)state;
    memset(&g, 0, sizeof g);
    g.left = -1;
    const lev_module *m;
    uint32_t fn;
    assert_int_equal(rt_task_find("block_run", &m, &fn), 0);
    rt_exec_opts o = {.workers = 1};
    rt_exec *ex;
    assert_int_equal(rt_exec_new(&ex, &o), 0);
    long n = S_N;
    rt_vt *vt;
    assert_int_equal(rt_vt_new(m, fn, &n, sizeof n, &vt), 0);
    assert_int_equal(rt_exec_spawn(ex, vt), 0);
    assert_int_equal(rt_exec_wait(ex, vt, 120000), 0);
    if (vt->state != RT_VT_DONE)
        fail_msg("the VT ended in state %d: %s", (int)vt->state,
                 vt->errdetail ? vt->errdetail : "");
    struct block_result r;
    assert_int_equal(vt->result_len, sizeof r);
    memcpy(&r, vt->result, sizeof r);

    /* what the task computed from the fakes' answers */
    assert_int_equal(r.sent, n - 1);
    assert_int_equal(r.helper, 10);                            /* the first message */
    assert_int_equal(r.nrecv, n);                              /* the other n */
    assert_int_equal(r.sum, 10 * n * (n + 1) / 2 - 10 + 1000); /* 20..10n and 1000 */
    assert_int_equal(r.last_rc, LEV_ETIMEDOUT);
    assert_int_equal(r.iplus, n + 1); /* i++ once per receive of the loop */
    assert_int_equal(r.counter, 6);   /* 1 + 2 + 3 under the lock */
    assert_int_equal(r.snapshot, 6);
    assert_int_equal(g.errors, 0);

    /* every call blocked S_BLOCKS times and was re-issued until done */
    long calls[S_NCALLS] = {[S_SEND] = n + 1, [S_RECV] = 1 + n + 1, [S_LOCK] = 3, [S_READ] = 1};
    for (int c = 0; c < S_NCALLS; c++) {
        assert_int_equal(g.done[c], calls[c]);
        assert_int_equal(g.tries[c], calls[c] * (S_BLOCKS + 1));
    }
    /* each argument expression ran once per call, never on a re-issue */
    assert_int_equal(g.reeval, 0);
    assert_int_equal(g.notes[BN_SEND_TO], calls[S_SEND]);
    assert_int_equal(g.notes[BN_RECV_FROM], calls[S_RECV]);
    assert_int_equal(g.notes[BN_RECV_TIMEOUT], calls[S_RECV]);
    assert_int_equal(g.notes[BN_LOCK_NAME], calls[S_LOCK]);
    assert_int_equal(g.notes[BN_READ_NAME], calls[S_READ]);

    /* under LEV_TORTURE=1 every blocking safe point moved the VT */
    rt_exec_stats st;
    rt_exec_stats_get(ex, &st);
    const char *torture = getenv("LEV_TORTURE");
    if (torture && !strcmp(torture, "1"))
        assert_true(st.tortures >= (uint64_t)(n + 1 + n + 2 + 3 + 1) * S_BLOCKS);
    rt_exec_destroy(&ex);
    rt_vt_destroy(&vt);
}

int main(void)
{
    rt_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_block_calls),
    };
    return cmocka_run_group_tests_name("levpp blocking calls", tests, NULL, NULL);
}
