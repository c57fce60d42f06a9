/* test_main.c - the whole-program runner, lev_main_run, in process: main's
 * return value becomes the status, argv reaches main as VT heap objects, a
 * checkpoint file is written and a later run resumes from it (state, argv
 * and environment of the image), and every way a start or resume can fail
 * gives status 2 and a message that names the cause.
 *
 * The multi-process path (SIGKILL, then resume in a new process) is
 * covered by resume_test.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "executor.h"
#include "heap.h"
#include "image.h"
#include "lev_task.h"
#include "vt.h"

/* ===================================================================
 * What the programs tell the tests
 * =================================================================== */

static char g_ck_path[PATH_MAX]; /* main stops once this file exists */
static int64_t g_first_i = -1;   /* first loop index this run executed */
static int64_t g_last_i = -1;
static char g_tag[64]; /* TEST_MAIN_TAG as main saw it */
static int g_argc_seen;
static char g_argv_seen[4][32];
static int g_argv_null_ended, g_argv_on_heap;

static void s_note(int64_t i)
{
    if (g_first_i < 0)
        g_first_i = i;
    g_last_i = i;
}

static int s_stop_now(void) { return access(g_ck_path, F_OK) == 0; }

/* ===================================================================
 * Task code (as generated for --main-task)
 * =================================================================== */

enum { FN_LOOP_MAIN, FN_ARGS_MAIN, FN_FAIL_MAIN, FN_TASK, NFNS };
enum { T_LOOP = LEV_T_USER, T_ARGS, T_FAIL, T_TASK };

static lev_module *g_mod;

/* int main(void): acc += i for i = 0, 1, ... until i >= 10 and the
 * checkpoint file exists, with a checkpoint safe point per round; returns
 * acc % 97. acc lives on the heap. */
struct loop_main__frame {
    lev_main_frame m;
    int64_t i;
    int64_t *acc;
};

static int loop_main__run(lev_ctx *vt, void *frame)
{
    struct loop_main__frame *fr = frame;
    switch (fr->m.h.pc) {
    case 0:
        break;
    case 1:
        goto resume_1;
    default:
        lev_vt_fail(vt, LEV_EFAILED, "loop_main: bad resume point");
        return LEV_RUN_EXIT;
    }
    if (!(fr->acc = lev_alloc(g_mod, LEV_T_U64, 1))) {
        lev_vt_fail(vt, LEV_ENOMEM, "loop_main");
        return LEV_RUN_EXIT;
    }
    for (fr->i = 0;; fr->i++) {
        s_note(fr->i);
        *fr->acc += fr->i;
        if (fr->i >= 10 && s_stop_now())
            break;
        if (lev_safepoint(vt, LEV_SP_CHECKPOINT)) {
            fr->m.h.pc = 1;
            return LEV_RUN_UNWIND;
        }
    resume_1:;
    }
    const char *tag = getenv("TEST_MAIN_TAG");
    snprintf(g_tag, sizeof g_tag, "%s", tag ? tag : "-");
    fr->m.ret = (int)(*fr->acc % 97);
    return LEV_RUN_DONE;
}

/* int main(int argc, char **argv): looks at argv, returns 42. */
struct args_main__frame {
    lev_main_frame m;
};

static int args_main__run(lev_ctx *vt, void *frame)
{
    (void)vt;
    struct args_main__frame *fr = frame;
    g_argc_seen = fr->m.argc;
    for (int i = 0; i < fr->m.argc && i < 4; i++)
        snprintf(g_argv_seen[i], sizeof g_argv_seen[i], "%s", fr->m.argv[i]);
    g_argv_null_ended = fr->m.argv[fr->m.argc] == NULL;
    g_argv_on_heap = rt_heap_find(fr->m.argv) != NULL && rt_heap_find(fr->m.argv[0]) != NULL;
    fr->m.ret = 42;
    return LEV_RUN_DONE;
}

/* int main(void): fails. */
static int fail_main__run(lev_ctx *vt, void *frame)
{
    (void)frame;
    lev_vt_fail(vt, LEV_ERANGE, "fail_main gives up");
    return LEV_RUN_EXIT;
}

/* LEV_TASK task(): not a main. */
static int task__run(lev_ctx *vt, void *frame)
{
    (void)vt;
    (void)frame;
    return LEV_RUN_DONE;
}

#define F(type, field, kind)                                                                       \
    {                                                                                              \
#field, (uint32_t)offsetof(type, field), kind, 1, 0                                        \
    }
#define MAIN_F(type) F(type, m.argc, LEV_K_B4), F(type, m.argv, LEV_K_PTR), F(type, m.ret, LEV_K_B4)
#define NF(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))

static const lev_field_desc f_loop[] = {MAIN_F(struct loop_main__frame),
                                        F(struct loop_main__frame, i, LEV_K_B8),
                                        F(struct loop_main__frame, acc, LEV_K_PTR)};
static const lev_field_desc f_args[] = {MAIN_F(struct args_main__frame)};
static const lev_field_desc f_task[] = {F(lev_task_frame, arg, LEV_K_PTR),
                                        F(lev_task_frame, len, LEV_K_B8)};

static const lev_type_desc s_types[] = {
    {"frame loop_main", sizeof(struct loop_main__frame), NF(f_loop), f_loop,
     _Alignof(struct loop_main__frame)},
    {"frame args_main", sizeof(struct args_main__frame), NF(f_args), f_args,
     _Alignof(struct args_main__frame)},
    {"frame fail_main", sizeof(lev_main_frame), NF(f_args), f_args, _Alignof(lev_main_frame)},
    {"frame task", sizeof(lev_task_frame), NF(f_task), f_task, _Alignof(lev_task_frame)},
};

static const lev_fn_desc s_fns[NFNS] = {
    [FN_LOOP_MAIN] = {"loop_main", NULL, loop_main__run, T_LOOP, LEV_FN_MAIN},
    [FN_ARGS_MAIN] = {"args_main", NULL, args_main__run, T_ARGS, LEV_FN_MAIN},
    [FN_FAIL_MAIN] = {"fail_main", NULL, fail_main__run, T_FAIL, LEV_FN_MAIN},
    [FN_TASK] = {"task", NULL, task__run, T_TASK, LEV_FN_TASK},
};

static const lev_module_desc s_desc = {LEV_ABI_VERSION, "test_main", NF(s_types), s_types, NFNS,
                                       s_fns,           0,           NULL};
/* The same code under another identity. */
static const lev_module_desc s_other = {
    LEV_ABI_VERSION, "test_main_other", NF(s_types), s_types, NFNS, s_fns, 0, NULL};

/* ===================================================================
 * Helpers
 * =================================================================== */

static char g_dir[512]; /* scratch directory of this run */

static void s_path(char *out, const char *name) { snprintf(out, PATH_MAX, "%s/%s", g_dir, name); }

/* Runs lev_main_run with stderr captured into err. */
static int s_run(const lev_module_desc *d, uint32_t fn, int argc, char **argv, char *err,
                 size_t errsz)
{
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    fflush(stderr);
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    g_first_i = g_last_i = -1;
    int rc = lev_main_run(d, fn, argc, argv);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ssize_t n = pread(fileno(tmp), err, errsz - 1, 0);
    err[n > 0 ? n : 0] = '\0';
    fclose(tmp);
    return rc;
}

static void s_clear_env(void)
{
    unsetenv("LEV_CHECKPOINT_FILE");
    unsetenv("LEV_CHECKPOINT_MS");
    unsetenv("LEV_RESUME");
    unsetenv("TEST_MAIN_TAG");
}

static int s_setup(void **state)
{
    (void)state;
    s_clear_env();
    g_ck_path[0] = '\0';
    return 0;
}

static void s_write(const char *path, const void *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* Expects a resume from `file` with module d to fail with status 2 and a
 * message naming the file and containing `what`. */
static void s_expect_resume_error(const lev_module_desc *d, const char *file, const char *what)
{
    setenv("LEV_RESUME", file, 1);
    char err[2048];
    char *argv[] = {"prog", NULL};
    assert_int_equal(s_run(d, FN_LOOP_MAIN, 1, argv, err, sizeof err), 2);
    assert_int_equal(g_first_i, -1); /* main did not run */
    if (!strstr(err, file) || !strstr(err, what))
        fail_msg("resume from %s: expected '%s' in: %s", file, what, err);
    unsetenv("LEV_RESUME");
}

/* ===================================================================
 * Tests
 * =================================================================== */

static void test_status_and_argv(void **state)
{
    (void)state;
    char *argv[] = {"prog", "alpha", "beta gamma", NULL};
    char err[1024];
    assert_int_equal(s_run(&s_desc, FN_ARGS_MAIN, 3, argv, err, sizeof err), 42);
    assert_string_equal(err, "");
    assert_int_equal(g_argc_seen, 3);
    assert_string_equal(g_argv_seen[0], "prog");
    assert_string_equal(g_argv_seen[1], "alpha");
    assert_string_equal(g_argv_seen[2], "beta gamma");
    assert_true(g_argv_null_ended);
    assert_true(g_argv_on_heap);
}

static void test_start_errors(void **state)
{
    (void)state;
    char *argv[] = {"prog", NULL};
    char err[1024];
    assert_int_equal(s_run(&s_desc, FN_TASK, 1, argv, err, sizeof err), 2);
    assert_non_null(strstr(err, "not a main task entry"));
    assert_int_equal(s_run(&s_desc, NFNS + 3, 1, argv, err, sizeof err), 2);
    assert_int_equal(s_run(NULL, 0, 1, argv, err, sizeof err), 2);
    assert_int_equal(s_run(&s_desc, FN_FAIL_MAIN, 1, argv, err, sizeof err), 2);
    assert_non_null(strstr(err, "main failed"));
    assert_non_null(strstr(err, "fail_main gives up"));
    setenv("LEV_CHECKPOINT_MS", "-5", 1);
    assert_int_equal(s_run(&s_desc, FN_ARGS_MAIN, 1, argv, err, sizeof err), 2);
    assert_non_null(strstr(err, "LEV_CHECKPOINT_MS"));
}

/* Run 1 writes checkpoints and stops once the file exists; run 2 resumes
 * from the file: it goes on from the image's loop index with the image's
 * heap, argv and environment, and returns what that state gives. */
static void test_checkpoint_and_resume(void **state)
{
    (void)state;
    s_path(g_ck_path, "loop.img");
    unlink(g_ck_path);
    setenv("LEV_CHECKPOINT_FILE", g_ck_path, 1);
    setenv("LEV_CHECKPOINT_MS", "5", 1);
    setenv("TEST_MAIN_TAG", "one", 1);
    char *argv[] = {"prog", "x", NULL};
    char err[1024];
    int r1 = s_run(&s_desc, FN_LOOP_MAIN, 2, argv, err, sizeof err);
    assert_string_equal(err, "");
    int64_t end1 = g_last_i;
    assert_true(end1 >= 10);
    assert_int_equal(r1, (int)((end1 * (end1 + 1) / 2) % 97));
    assert_string_equal(g_tag, "one");
    char tmp[PATH_MAX + 8];
    snprintf(tmp, sizeof tmp, "%s.tmp", g_ck_path);
    assert_int_equal(access(tmp, F_OK), -1); /* renamed into place */

    s_clear_env();
    setenv("LEV_RESUME", g_ck_path, 1);
    setenv("TEST_MAIN_TAG", "two", 1);
    char *argv2[] = {"other", NULL};
    int r2 = s_run(&s_desc, FN_LOOP_MAIN, 1, argv2, err, sizeof err);
    assert_string_equal(err, "");
    assert_true(g_first_i > 0);     /* went on, did not start over */
    assert_true(g_first_i <= end1); /* from an image run 1 wrote */
    assert_int_equal(r2, (int)((g_last_i * (g_last_i + 1) / 2) % 97));
    assert_string_equal(g_tag, "one"); /* the image's environment */
    s_clear_env();
}

static void test_resume_errors(void **state)
{
    (void)state;
    char path[PATH_MAX];
    s_path(path, "missing.img");
    s_expect_resume_error(&s_desc, path, "No such file");

    s_path(path, "empty.img");
    s_write(path, "", 0);
    s_expect_resume_error(&s_desc, path, "damaged");

    s_path(path, "text.img");
    s_write(path, "not an image at all\n", 20);
    s_expect_resume_error(&s_desc, path, "damaged");

    /* A real image: of a task, not of main; then of another module. */
    lev_module *m;
    assert_int_equal(lev_module_register(&s_desc, &m), 0);
    rt_vt *vt;
    assert_int_equal(rt_vt_new(m, FN_TASK, "a", 1, &vt), 0);
    uint8_t *img;
    size_t len;
    assert_int_equal(rt_capture(vt, &img, &len), 0);
    rt_vt_destroy(&vt);
    s_path(path, "task.img");
    s_write(path, img, len);
    s_expect_resume_error(&s_desc, path, "not main");
    s_expect_resume_error(&s_other, path, "does not match");

    /* Damaged copies of it. */
    s_path(path, "half.img");
    s_write(path, img, len / 2);
    s_expect_resume_error(&s_desc, path, "damaged");
    img[len - 1] ^= 0x40;
    s_path(path, "flipped.img");
    s_write(path, img, len);
    s_expect_resume_error(&s_desc, path, "damaged");
    free(img);
}

static int s_group_setup(void **state)
{
    (void)state;
    const char *t = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/test_main_XXXXXX", t && *t ? t : P_tmpdir);
    return mkdtemp(g_dir) ? 0 : -1;
}

static int s_group_teardown(void **state)
{
    (void)state;
    static const char *names[] = {"loop.img", "loop.img.tmp", "missing.img", "empty.img",
                                  "text.img", "task.img",     "half.img",    "flipped.img"};
    char path[PATH_MAX];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        s_path(path, names[i]);
        unlink(path);
    }
    rmdir(g_dir);
    return 0;
}

int main(void)
{
    /* Generated code registers its module (lev_alloc needs it); doing so
     * again in lev_main_run returns the same module. */
    if (lev_module_register(&s_desc, &g_mod)) {
        fprintf(stderr, "test_main: cannot register the module: %s\n", lev_errdetail());
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_status_and_argv, s_setup),
        cmocka_unit_test_setup(test_start_errors, s_setup),
        cmocka_unit_test_setup(test_checkpoint_and_resume, s_setup),
        cmocka_unit_test_setup(test_resume_errors, s_setup),
    };
    return cmocka_run_group_tests(tests, s_group_setup, s_group_teardown);
}
