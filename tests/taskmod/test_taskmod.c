/* test_taskmod.c - task modules as files. Built twice with
 * leverage_add_tasks over tm_tasks.c: EMBED (TM_MODE_EMBED) and PATH
 * (TM_MODE_PATH). The program finds the module it carries, loads it from
 * its bytes (once: loading again reuses it) and runs its task on the
 * executor to the right result. Before that it feeds the loader bad
 * input, while no module is loaded yet: bytes that are no ELF
 * file, truncated or damaged ones, an object for another machine, an
 * executable, shared objects without a Leverage module, with one the
 * runtime refuses or with two, and a module of another hash; each is refused with LEV_EMODULE and a
 * detail naming the problem, and leaves no object loaded, no descriptor open and no module
 * registered. The PATH build first opens the module file itself, as a
 * program may, and the loader must then find the module it registered.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "executor.h"
#include "module.h"
#include "rt.h"
#include "taskmod.h"
#include "vt.h"

#if !defined(TM_MODE_EMBED) && !defined(TM_MODE_PATH)
#error "define TM_MODE_EMBED or TM_MODE_PATH"
#endif

/* ===================================================================
 * Helpers
 * =================================================================== */

/* Reads a whole file; the caller frees the buffer. Fails the test if the
 * file cannot be read. */
static uint8_t *s_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n > 0);
    rewind(f);
    uint8_t *b = malloc((size_t)n);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

static int s_count_object(struct dl_phdr_info *info, size_t size, void *ud)
{
    (void)size;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    if (strstr(name, "/proc/self/fd/") || strstr(name, "lev-task-module") ||
        strstr(name, "libleverage"))
        ++*(int *)ud;
    return 0;
}

/* Number of task modules (loaded from a memfd or a private temporary
 * file) and copies of libleverage loaded in the process. The system
 * libraries that libleverage's own dependencies bring in are not
 * counted: glibc never unloads some of them (libstdc++ and what it
 * needs), whatever the module loader does. */
static int s_objects(void)
{
    int n = 0;
    dl_iterate_phdr(s_count_object, &n);
    return n;
}

/* Number of open file descriptors of the process. */
static int s_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e = readdir(d); e; e = readdir(d))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* The module this program carries; fails the test if there is none. */
static const rt_taskmod_carried *s_carried(void)
{
    const rt_taskmod_carried *c = NULL;
    assert_int_equal(rt_taskmod_carried_get(&c), 0);
    assert_non_null(c);
    return c;
}

/* ===================================================================
 * The carried module
 * =================================================================== */

/* The carried bytes are the module file as built, embedded in the
 * program's image (EMBED) or read from the recorded path (PATH). */
static void t_carried(void **state)
{
    (void)state;
    const rt_taskmod_carried *c = s_carried();
    size_t len;
    uint8_t *file = s_slurp(LEV_TASK_MODULE_PATH, &len);
    assert_int_equal(c->len, len);
    assert_memory_equal(c->bytes, file, len);
    assert_true(c->digest == rt_taskmod_digest(file, len));
    free(file);
    assert_ptr_equal(s_carried(), c); /* found once */

    Dl_info in_bytes, in_main;
    int (*self)(void) = s_objects;
    void *self_p;
    memcpy(&self_p, &self, sizeof self_p);
    assert_true(dladdr(self_p, &in_main));
#ifdef TM_MODE_EMBED
    assert_null(c->path);
    assert_true(dladdr(c->bytes, &in_bytes));
    assert_ptr_equal(in_bytes.dli_fbase, in_main.dli_fbase); /* in the program's image */
#else
    assert_non_null(c->path);
    assert_string_equal(c->path, LEV_TASK_MODULE_PATH);
    assert_true(!dladdr(c->bytes, &in_bytes) || in_bytes.dli_fbase != in_main.dli_fbase);
#endif
}

/* ===================================================================
 * Bad input
 * =================================================================== */

/* Loading b must fail with LEV_EMODULE and a detail containing `what`. */
static void s_refused(const void *b, size_t len, uint64_t digest, uint64_t hash, const char *what)
{
    const lev_module *m = NULL;
    int rc = rt_taskmod_load(b, len, digest, hash, &m);
    if (rc != LEV_EMODULE || !strstr(lev_errdetail(), what))
        fail_msg("expected LEV_EMODULE with \"%s\", got %d: %s", what, rc, lev_errdetail());
    assert_null(m);
}

static void t_bad_input(void **state)
{
    (void)state;
    const rt_taskmod_carried *c = s_carried();
    const lev_module *m;
    uint32_t fn;
    int objects = s_objects(), fds = s_fds();

    const lev_module *none = NULL;
    assert_int_equal(rt_taskmod_load(NULL, 10, 0, 0, &none), LEV_EINVAL);
    assert_int_equal(rt_taskmod_load(c->bytes, 0, 0, 0, &none), LEV_EINVAL);
    assert_int_equal(rt_taskmod_load(c->bytes, c->len, 0, 0, NULL), LEV_EINVAL);

    static const char text[] = "#!/bin/sh\necho this is no shared object\n";
    s_refused(text, sizeof text, 0, 0, "not an ELF file");
    s_refused(c->bytes, 20, 0, 0, "truncated");
    s_refused(c->bytes, c->len / 2, 0, 0, "truncated");

    uint8_t *copy = malloc(c->len);
    assert_non_null(copy);
    memcpy(copy, c->bytes, c->len);
    copy[c->len / 2] ^= 0x40;
    s_refused(copy, c->len, c->digest, 0, "damaged");
    memcpy(copy, c->bytes, c->len);

    ElfW(Ehdr) eh;
    memcpy(&eh, copy, sizeof eh);
    eh.e_machine = eh.e_machine == EM_AARCH64 ? EM_X86_64 : EM_AARCH64;
    memcpy(copy, &eh, sizeof eh);
    s_refused(copy, c->len, 0, 0, "another machine");
    free(copy);

    size_t len;
    uint8_t *so = s_slurp(TM_PLAIN_PATH, &len);
    s_refused(so, len, 0, 0, "registers no Leverage task module");
    free(so);
    so = s_slurp(TM_BAD_ABI_PATH, &len);
    s_refused(so, len, 0, 0, "its registration failed");
    assert_non_null(strstr(lev_errdetail(), "frame ABI"));
    free(so);
    so = s_slurp(TM_TWO_MODULES_PATH, &len);
    s_refused(so, len, 0, 0, "registers 2 Leverage modules");
    free(so);
    uint8_t *exe = s_slurp("/proc/self/exe", &len);
    s_refused(exe, len, 0, 0, "cannot load the task module");
    free(exe);

    /* The right bytes of the wrong module: loaded, checked, unloaded. */
    s_refused(c->bytes, c->len, c->digest, 0x1234567890abcdefull, "expected 1234567890abcdef");
    assert_int_equal(rt_task_find("tm_sum_squares", &m, &fn), LEV_EMODULE);

    assert_int_equal(s_objects(), objects);
    assert_int_equal(s_fds(), fds);
}

/* ===================================================================
 * Loading and reuse
 * =================================================================== */

static void t_load_reuse(void **state)
{
    (void)state;
    const rt_taskmod_carried *c = s_carried();
    const lev_module *m = NULL, *again = NULL, *found = NULL;
    uint32_t fn;
    int objects = s_objects();
#ifdef TM_MODE_PATH
    /* The program opened the module file itself first: its constructor
     * registered the module, and loading by path finds that one. */
    void *own = dlopen(LEV_TASK_MODULE_PATH, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(own);
    assert_int_equal(rt_task_find("tm_sum_squares", &found, &fn), 0);
    objects = s_objects();
    assert_int_equal(rt_taskmod_load_carried(&m), 0);
    assert_ptr_equal(m, found);
    assert_int_equal(s_objects(), objects);
#else
    assert_int_equal(rt_taskmod_load_carried(&m), 0);
    assert_non_null(m);
    assert_true(s_objects() > objects); /* the module (and libleverage.so, its dependency) */
    assert_int_equal(rt_task_find("tm_sum_squares", &found, &fn), 0);
    assert_ptr_equal(found, m);
#endif
    uint64_t hash = lev_module_hash(m);
    assert_true(hash != 0);
    objects = s_objects();

    /* The public entry point gives the same module. */
    uint64_t pub = 0;
    assert_int_equal(lev_task_module_load(&pub), 0);
    assert_true(pub == hash);
    assert_int_equal(lev_task_module_load(NULL), 0);

    /* The same bytes elsewhere in memory, by digest or by hash. */
    uint8_t *copy = malloc(c->len + 16);
    assert_non_null(copy);
    memcpy(copy, c->bytes, c->len);
    assert_int_equal(rt_taskmod_load(copy, c->len, c->digest, 0, &again), 0);
    assert_ptr_equal(again, m);
    assert_int_equal(rt_taskmod_load(copy, c->len, 0, hash, &again), 0);
    assert_ptr_equal(again, m);
    again = NULL;
    assert_int_equal(rt_taskmod_load(copy, c->len, 0, hash ^ 1, &again), LEV_EMODULE);
    assert_non_null(strstr(lev_errdetail(), "expected"));
    assert_null(again);
    assert_int_equal(s_objects(), objects);

    /* Other bytes (trailing bytes the loader ignores), same module: loaded,
     * found equal to the registered one, and unloaded again; once through
     * a memfd, once through a temporary file. */
    memset(copy + c->len, 0x5a, 16);
    assert_int_equal(rt_taskmod_load(copy, c->len + 8, 0, 0, &again), 0);
    assert_ptr_equal(again, m);
    rt_taskmod_use_tmpfile(true);
    assert_int_equal(rt_taskmod_load(copy, c->len + 16, 0, hash, &again), 0);
    rt_taskmod_use_tmpfile(false);
    assert_ptr_equal(again, m);
    assert_int_equal(s_objects(), objects);
    assert_int_equal(rt_task_find("tm_sum_squares", &found, &fn), 0);
    assert_ptr_equal(found, m);
    free(copy);
}

/* ===================================================================
 * Running a task of the loaded module
 * =================================================================== */

enum { S_NVT = 4 };

static void t_run(void **state)
{
    (void)state;
    const lev_module *m, *loaded;
    uint32_t fn;
    assert_int_equal(rt_taskmod_load_carried(&loaded), 0);
    assert_int_equal(rt_task_find("tm_sum_squares", &m, &fn), 0);
    assert_ptr_equal(m, loaded);

    rt_exec_opts o = {.workers = 2};
    rt_exec *ex;
    assert_int_equal(rt_exec_new(&ex, &o), 0);
    rt_vt *vts[S_NVT];
    long args[S_NVT];
    for (int i = 0; i < S_NVT; i++) {
        args[i] = 50 + 100 * i;
        assert_int_equal(rt_vt_new(m, fn, &args[i], sizeof args[i], &vts[i]), 0);
        assert_int_equal(rt_exec_spawn(ex, vts[i]), 0);
    }
    for (int i = 0; i < S_NVT; i++) {
        assert_int_equal(rt_exec_wait(ex, vts[i], 60000), 0);
        assert_int_equal(vts[i]->state, RT_VT_DONE);
        long n = args[i], want = (n - 1) * n * (2 * n - 1) / 6;
        assert_int_equal(vts[i]->result_len, sizeof want);
        assert_memory_equal(vts[i]->result, &want, sizeof want);
    }
    rt_exec_stats st;
    rt_exec_stats_get(ex, &st);
    if (rt_torture_every())
        assert_true(st.tortures > 0); /* captured, wiped and restored on the way */
    rt_exec_destroy(&ex);
    for (int i = 0; i < S_NVT; i++)
        rt_vt_destroy(&vts[i]);
}

int main(void)
{
    rt_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_carried),
        cmocka_unit_test(t_bad_input), /* before anything is loaded */
        cmocka_unit_test(t_load_reuse),
        cmocka_unit_test(t_run),
    };
#ifdef TM_MODE_EMBED
    const char *name = "task module, embedded";
#else
    const char *name = "task module, by path";
#endif
    return cmocka_run_group_tests_name(name, tests, NULL, NULL);
}
