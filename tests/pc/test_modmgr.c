/* test_modmgr.c - the module manager (modmgr.c), with the task module
 * built from pc_tasks.c: put and get by BLAKE2b hash in memory and on
 * disk, damaged bytes and a damaged cache file refused, a data directory
 * that cannot be made; the cache bounded by size (the least recently
 * used first, by its file's time) and by age, never evicting a module in
 * use, and a module larger than the cache refused; the architecture a
 * module was built for, read from its ELF header, and the check that
 * refuses another one.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "lev_errors.h"
#include "modmgr.h"
#include "pc_test.h"
#include "wire.h"

static uint8_t *g_mod; /* the module's bytes */
static size_t g_mod_len;
static uint8_t g_hash[PC_HASH_LEN];

static void t_modmgr_memory(void **state)
{
    (void)state;
    pc_modmgr *mm = NULL;
    assert_int_equal(pc_modmgr_new(&mm, NULL), 0);
    uint8_t other[PC_HASH_LEN];
    pc_module_hash("x", 1, other);
    assert_memory_not_equal(other, g_hash, PC_HASH_LEN);
    assert_false(pc_modmgr_has(mm, g_hash));
    const uint8_t *b;
    size_t n;
    assert_int_equal(pc_modmgr_get(mm, g_hash, &b, &n), LEV_EMODULE);
    assert_non_null(strstr(lev_errdetail(), "not cached"));

    uint8_t *bad = malloc(g_mod_len);
    memcpy(bad, g_mod, g_mod_len);
    bad[g_mod_len - 1] ^= 1;
    assert_int_equal(pc_modmgr_put(mm, g_hash, bad, g_mod_len), LEV_EMODULE);
    assert_non_null(strstr(lev_errdetail(), "damaged"));
    assert_int_equal(pc_modmgr_put(mm, g_hash, g_mod, g_mod_len - 1), LEV_EMODULE);
    assert_false(pc_modmgr_has(mm, g_hash));
    free(bad);

    assert_int_equal(pc_modmgr_put(mm, g_hash, g_mod, g_mod_len), 0);
    assert_int_equal(pc_modmgr_put(mm, g_hash, g_mod, g_mod_len), 0); /* again */
    assert_true(pc_modmgr_has(mm, g_hash));
    assert_int_equal(pc_modmgr_get(mm, g_hash, &b, &n), 0);
    assert_int_equal(n, g_mod_len);
    assert_memory_equal(b, g_mod, n);
    assert_ptr_not_equal(b, g_mod); /* its own copy */
    pc_modmgr_destroy(&mm);
    assert_null(mm);
    pc_modmgr_destroy(&mm);
}

/* Number of entries of a directory. */
static int s_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e = readdir(d); e; e = readdir(d))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void t_modmgr_disk(void **state)
{
    (void)state;
    char dir[512], mods[600], file[700], hex[2 * PC_HASH_LEN + 1];
    snprintf(dir, sizeof dir, "%s/modmgr.%d", PC_WORK_DIR, (int)getpid());
    mkdir(PC_WORK_DIR, 0777);
    snprintf(mods, sizeof mods, "%s/modules", dir);
    pc_module_hash_hex(g_hash, hex);
    snprintf(file, sizeof file, "%s/%s.so", mods, hex);
    unlink(file);

    pc_modmgr *mm = NULL;
    assert_int_equal(pc_modmgr_new(&mm, dir), 0);
    assert_int_equal(pc_modmgr_put(mm, g_hash, g_mod, g_mod_len), 0);
    pc_modmgr_destroy(&mm);
    assert_int_equal(s_entries(mods), 1); /* the file, no temporary left */
    size_t n;
    uint8_t *b = pc_test_slurp(file, &n);
    assert_int_equal(n, g_mod_len);
    assert_memory_equal(b, g_mod, n);
    free(b);

    /* A new manager finds it on disk. */
    assert_int_equal(pc_modmgr_new(&mm, dir), 0);
    const uint8_t *got;
    assert_true(pc_modmgr_has(mm, g_hash));
    assert_int_equal(pc_modmgr_get(mm, g_hash, &got, &n), 0);
    assert_int_equal(n, g_mod_len);
    assert_memory_equal(got, g_mod, n);
    pc_modmgr_destroy(&mm);

    /* A damaged file is refused and removed. */
    FILE *f = fopen(file, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, (long)g_mod_len / 3, SEEK_SET), 0);
    int c = fgetc(f);
    assert_int_equal(fseek(f, (long)g_mod_len / 3, SEEK_SET), 0);
    fputc(c ^ 0x20, f);
    fclose(f);
    assert_int_equal(pc_modmgr_new(&mm, dir), 0);
    assert_int_equal(pc_modmgr_get(mm, g_hash, &got, &n), LEV_EMODULE);
    assert_non_null(strstr(lev_errdetail(), "damaged"));
    assert_int_equal(access(file, F_OK), -1);
    assert_false(pc_modmgr_has(mm, g_hash));
    /* Stored again, it is whole. */
    assert_int_equal(pc_modmgr_put(mm, g_hash, g_mod, g_mod_len), 0);
    pc_modmgr_destroy(&mm);
    b = pc_test_slurp(file, &n);
    assert_memory_equal(b, g_mod, g_mod_len);
    free(b);
    unlink(file);
    rmdir(mods);
    rmdir(dir);

    /* A data directory that cannot be made. */
    assert_int_equal(pc_modmgr_new(&mm, "/proc/no/such/dir"), LEV_EIO);
    assert_null(mm);
}

/* Module i of the eviction test: 3000 bytes, its hash, its file. */
typedef struct s_blob {
    uint8_t bytes[3000], hash[PC_HASH_LEN];
    char file[700];
} s_blob;

/* Sets a file's times to `ago` seconds before now. */
static void s_age(const char *file, int ago)
{
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= ago;
    t[1] = t[0];
    assert_int_equal(utimensat(AT_FDCWD, file, t, 0), 0);
}

static void t_modmgr_evict(void **state)
{
    (void)state;
    char dir[512], mods[600], hex[2 * PC_HASH_LEN + 1];
    snprintf(dir, sizeof dir, "%s/modevict.%d", PC_WORK_DIR, (int)getpid());
    mkdir(PC_WORK_DIR, 0777);
    snprintf(mods, sizeof mods, "%s/modules", dir);
    static s_blob b[3];
    pc_modmgr *mm = NULL;
    assert_int_equal(pc_modmgr_new(&mm, dir), 0);
    for (int i = 0; i < 3; i++) {
        memset(b[i].bytes, 'a' + i, sizeof b[i].bytes);
        pc_module_hash(b[i].bytes, sizeof b[i].bytes, b[i].hash);
        pc_module_hash_hex(b[i].hash, hex);
        snprintf(b[i].file, sizeof b[i].file, "%s/%s.so", mods, hex);
        assert_int_equal(pc_modmgr_put(mm, b[i].hash, b[i].bytes, sizeof b[i].bytes), 0);
        s_age(b[i].file, 300 - 100 * i); /* used 300, 200 and 100 s ago */
    }
    pc_modmgr_destroy(&mm); /* a new manager knows them by their files */
    assert_int_equal(pc_modmgr_new(&mm, dir), 0);

    /* By size: 9000 bytes above 7000, the least recently used goes. */
    pc_modmgr_limit(mm, 7000, 0);
    assert_int_equal(pc_modmgr_evict(mm, NULL, 0), 1);
    assert_int_equal(access(b[0].file, F_OK), -1);
    assert_int_equal(access(b[1].file, F_OK), 0);
    assert_int_equal(access(b[2].file, F_OK), 0);
    pc_modmgr_stats st;
    pc_modmgr_status(mm, &st);
    assert_int_equal(st.held, 2);
    assert_int_equal(st.bytes, 6000);
    assert_int_equal(st.evicted, 1);
    assert_int_equal(pc_modmgr_evict(mm, NULL, 0), 0); /* within bounds now */

    /* A module in use stays, though it is the oldest. */
    pc_modmgr_limit(mm, 3000, 0);
    const uint8_t(*keep)[PC_HASH_LEN] = (const uint8_t(*)[PC_HASH_LEN])b[1].hash;
    assert_int_equal(pc_modmgr_evict(mm, keep, 1), 1);
    assert_int_equal(access(b[1].file, F_OK), 0);
    assert_int_equal(access(b[2].file, F_OK), -1);
    assert_false(pc_modmgr_has(mm, b[2].hash));

    /* A get makes a module recent again (its file's time). */
    const uint8_t *got;
    size_t n;
    s_age(b[1].file, 120);
    assert_int_equal(pc_modmgr_get(mm, b[1].hash, &got, &n), 0);
    struct stat sb;
    assert_int_equal(stat(b[1].file, &sb), 0);
    assert_true(sb.st_mtime > time(NULL) - 60);

    /* By age: unused for longer than the bound, it goes, in memory too. */
    pc_modmgr_limit(mm, (size_t)1 << 30, 60);
    assert_int_equal(pc_modmgr_evict(mm, NULL, 0), 0);
    pc_modmgr_destroy(&mm);
    s_age(b[1].file, 120);
    assert_int_equal(pc_modmgr_new(&mm, dir), 0);
    pc_modmgr_limit(mm, (size_t)1 << 30, 60);
    assert_int_equal(pc_modmgr_evict(mm, NULL, 0), 1);
    assert_false(pc_modmgr_has(mm, b[1].hash));
    assert_int_equal(s_entries(mods), 0);

    /* A module larger than the whole cache is refused, by name. */
    pc_modmgr_limit(mm, 1000, 0);
    assert_int_equal(pc_modmgr_put(mm, b[0].hash, b[0].bytes, sizeof b[0].bytes), LEV_ERANGE);
    assert_non_null(strstr(lev_errdetail(), "--module-cache"));
    pc_modmgr_status(mm, &st);
    assert_int_equal(st.refused, 1);
    assert_false(pc_modmgr_has(mm, b[0].hash));

    /* Without a directory, memory is bounded the same way. */
    pc_modmgr_destroy(&mm);
    assert_int_equal(pc_modmgr_new(&mm, NULL), 0);
    pc_modmgr_limit(mm, 7000, 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(pc_modmgr_put(mm, b[i].hash, b[i].bytes, sizeof b[i].bytes), 0);
    assert_int_equal(pc_modmgr_evict(mm, NULL, 0), 1);
    pc_modmgr_status(mm, &st);
    assert_int_equal(st.held, 2);
    assert_int_equal(st.bytes, 6000);
    pc_modmgr_destroy(&mm);
    rmdir(mods);
    rmdir(dir);
}

static void t_arch(void **state)
{
    (void)state;
    char arch[PC_ARCH_MAX];
    assert_int_equal(pc_module_arch(g_mod, g_mod_len, arch), 0);
    assert_string_equal(arch, pc_arch_self());
    assert_int_equal(pc_module_arch_check(g_mod, g_mod_len), 0);
    assert_int_equal(pc_arch_check(pc_arch_self()), 0);
#if defined(__x86_64__)
    assert_string_equal(pc_arch_self(), "x86_64");
#elif defined(__aarch64__)
    assert_string_equal(pc_arch_self(), "aarch64");
#endif

    uint8_t *b = malloc(g_mod_len);
    memcpy(b, g_mod, g_mod_len);
    Elf64_Ehdr eh;
    memcpy(&eh, b, sizeof eh);
    bool x86 = !strcmp(pc_arch_self(), "x86_64");
    eh.e_machine = x86 ? EM_AARCH64 : EM_X86_64;
    memcpy(b, &eh, sizeof eh);
    char want[128];
    snprintf(want, sizeof want, "module built for %s, this peer is %s", x86 ? "aarch64" : "x86_64",
             pc_arch_self());
    assert_int_equal(pc_module_arch_check(b, g_mod_len), LEV_EMODULE);
    assert_string_equal(lev_errdetail(), want);
    b[EI_DATA] = ELFDATA2MSB;
    b[18] = 0;
    b[19] = EM_PPC64;
    assert_int_equal(pc_module_arch(b, g_mod_len, arch), 0);
    assert_string_equal(arch, "ppc64");
    b[EI_CLASS] = 7;
    b[19] = 250;
    assert_int_equal(pc_module_arch(b, g_mod_len, arch), 0);
    assert_string_equal(arch, "elf-machine-250-badclass-be");
    assert_int_equal(pc_module_arch(b, 19, arch), LEV_EMODULE);
    assert_non_null(strstr(lev_errdetail(), "truncated"));
    assert_int_equal(pc_module_arch("#!/bin/sh\n", 10, arch), LEV_EMODULE);
    assert_non_null(strstr(lev_errdetail(), "not an ELF file"));
    free(b);

    assert_int_equal(pc_arch_check("riscv64-nonesuch"), LEV_EMODULE);
    assert_non_null(strstr(lev_errdetail(), "module built for riscv64-nonesuch, this peer is"));
    assert_int_equal(pc_arch_check(NULL), LEV_EMODULE);
}

static int s_setup(void **state)
{
    (void)state;
    g_mod = pc_test_slurp(LEV_TASK_MODULE_PATH, &g_mod_len);
    pc_module_hash(g_mod, g_mod_len, g_hash);
    return 0;
}

static int s_teardown(void **state)
{
    (void)state;
    free(g_mod);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_modmgr_memory),
        cmocka_unit_test(t_modmgr_disk),
        cmocka_unit_test(t_modmgr_evict),
        cmocka_unit_test(t_arch),
    };
    return cmocka_run_group_tests(tests, s_setup, s_teardown);
}
