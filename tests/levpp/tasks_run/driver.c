/* driver.c - runs the VTs of a levpp-generated task module (tasks_a.c and
 * tasks_b.c, transformed in one levpp run and linked in) on the executor:
 * the tasks are found by name among the registered modules, and their
 * results must equal plain C references. The same runner is registered
 * again under LEV_TORTURE, where every safe point captures, wipes and
 * restores the VT.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "executor.h"
#include "module.h"
#include "rt.h"
#include "vt.h"

/* Plain C reference of collatz_max. */
static void s_collatz_ref(long lim, long out[2])
{
    long best = 0, arg_best = 0;
    for (long i = 1; i < lim; i++) {
        long x = i, n = 0;
        while (x != 1) {
            x = x % 2 ? 3 * x + 1 : x / 2;
            n++;
        }
        if (n > best) {
            best = n;
            arg_best = i;
        }
    }
    out[0] = arg_best;
    out[1] = best;
}

enum { S_NVT = 6 };

static void t_tasks_on_executor(void **state)
{
    (void)state;
    const lev_module *m1, *m2;
    uint32_t fn_list, fn_collatz;
    assert_int_equal(rt_task_find("list_sum", &m1, &fn_list), 0);
    assert_int_equal(rt_task_find("collatz_max", &m2, &fn_collatz), 0);
    assert_ptr_equal(m1, m2); /* one module for both files */
    assert_int_equal(rt_task_find("no_such_task", &m1, &fn_list) == LEV_EMODULE, 1);
    assert_int_equal(rt_task_find("list_sum", &m1, &fn_list), 0);

    rt_exec_opts o = {.workers = 2};
    rt_exec *ex;
    assert_int_equal(rt_exec_new(&ex, &o), 0);
    rt_vt *vts[S_NVT];
    long args[S_NVT];
    for (int i = 0; i < S_NVT; i++) {
        args[i] = i % 2 ? 300 + 250 * i : 200 + 300 * i;
        uint32_t fn = i % 2 ? fn_collatz : fn_list;
        assert_int_equal(rt_vt_new(m1, fn, &args[i], sizeof args[i], &vts[i]), 0);
        assert_int_equal(rt_exec_spawn(ex, vts[i]), 0);
    }
    for (int i = 0; i < S_NVT; i++) {
        assert_int_equal(rt_exec_wait(ex, vts[i], 120000), 0);
        assert_int_equal(vts[i]->state, RT_VT_DONE);
        if (i % 2) {
            long ref[2];
            s_collatz_ref(args[i], ref);
            assert_int_equal(vts[i]->result_len, sizeof ref);
            assert_memory_equal(vts[i]->result, ref, sizeof ref);
        } else {
            long n = args[i];
            long ref = 3 * n * (n + 1) / 2;
            assert_int_equal(vts[i]->result_len, sizeof ref);
            assert_memory_equal(vts[i]->result, &ref, sizeof ref);
        }
    }
    rt_exec_destroy(&ex);
    for (int i = 0; i < S_NVT; i++)
        rt_vt_destroy(&vts[i]);
}

/* lev_yield() in task code is a safe point that hands the worker over:
 * two yielding VTs on one worker switch at every yield, and each goes on
 * after each of its yields. */
static void t_yield(void **state)
{
    (void)state;
    const lev_module *m;
    uint32_t fn;
    assert_int_equal(rt_task_find("yield_n", &m, &fn), 0);
    rt_exec_opts o = {.workers = 1};
    rt_exec *ex;
    assert_int_equal(rt_exec_new(&ex, &o), 0);
    long n = 50;
    rt_vt *vts[2];
    for (int i = 0; i < 2; i++) {
        assert_int_equal(rt_vt_new(m, fn, &n, sizeof n, &vts[i]), 0);
        assert_int_equal(rt_exec_spawn(ex, vts[i]), 0);
    }
    for (int i = 0; i < 2; i++) {
        assert_int_equal(rt_exec_wait(ex, vts[i], 120000), 0);
        assert_int_equal(vts[i]->state, RT_VT_DONE);
        assert_int_equal(vts[i]->result_len, sizeof n);
        assert_memory_equal(vts[i]->result, &n, sizeof n);
    }
    rt_exec_stats st;
    rt_exec_stats_get(ex, &st);
    assert_true(st.switches >= 2 * (uint64_t)n);
    rt_exec_destroy(&ex);
    for (int i = 0; i < 2; i++)
        rt_vt_destroy(&vts[i]);
}

int main(void)
{
    rt_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_tasks_on_executor),
        cmocka_unit_test(t_yield),
    };
    return cmocka_run_group_tests_name("levpp task module", tests, NULL, NULL);
}
