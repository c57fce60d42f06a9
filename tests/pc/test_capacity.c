/* test_capacity.c - what a peer offers (peercontroller/capacity.h): the
 * CPU quota read from cgroup v1 and v2 trees, the smallest along the way
 * up, a mount that shows the hierarchy from below its root, no quota,
 * and damaged files; every tree is a fake one made in a directory of the
 * test's own, so the machine's cgroups do not matter. Then what the
 * machine offers: at least one core and a rate, an explicit rate taken
 * as it is.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "capacity.h"

static char s_root[256];

/* Writes text to root/path, making its directories. */
static void put(const char *path, const char *text)
{
    char full[1024];
    snprintf(full, sizeof full, "%s%s", s_root, path);
    for (char *p = full + strlen(s_root) + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        assert_true(mkdir(full, 0755) == 0 || errno == EEXIST);
        *p = '/';
    }
    FILE *f = fopen(full, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A fresh, empty fake root. */
static void fresh(void)
{
    if (*s_root) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", s_root);
        assert_int_equal(system(cmd), 0);
    }
    snprintf(s_root, sizeof s_root, "/tmp/lev_capacity_XXXXXX");
    assert_non_null(mkdtemp(s_root));
}

static const char *V1_MOUNTS =
    "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup "
    "rw,cpu,cpuacct\n"
    "34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n";

static const char *V2_MOUNTS =
    "30 22 0:27 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
    "rw,nsdelegate\n";

/* cgroup v1: the cpu hierarchy's cfs quota over its period, the smallest
 * of the group and its parents; -1 is none. */
static void t_v1(void **state)
{
    (void)state;
    fresh();
    put("/proc/self/mountinfo", V1_MOUNTS);
    put("/proc/self/cgroup", "4:memory:/x\n1:cpu,cpuacct:/lev/w1\n0::/\n");
    put("/sys/fs/cgroup/cpu,cpuacct/lev/w1/cpu.cfs_quota_us", "45000\n");
    put("/sys/fs/cgroup/cpu,cpuacct/lev/w1/cpu.cfs_period_us", "100000\n");
    put("/sys/fs/cgroup/cpu,cpuacct/lev/cpu.cfs_quota_us", "-1\n");
    put("/sys/fs/cgroup/cpu,cpuacct/lev/cpu.cfs_period_us", "100000\n");
    assert_true(pc_cpu_quota(s_root) > 0.449 && pc_cpu_quota(s_root) < 0.451);
    /* a parent's smaller limit binds */
    put("/sys/fs/cgroup/cpu,cpuacct/lev/cpu.cfs_quota_us", "20000\n");
    assert_true(pc_cpu_quota(s_root) > 0.199 && pc_cpu_quota(s_root) < 0.201);
    /* none anywhere */
    put("/sys/fs/cgroup/cpu,cpuacct/lev/cpu.cfs_quota_us", "-1\n");
    put("/sys/fs/cgroup/cpu,cpuacct/lev/w1/cpu.cfs_quota_us", "-1\n");
    assert_true(pc_cpu_quota(s_root) == 0);
}

/* cgroup v2: cpu.max "QUOTA PERIOD" or "max PERIOD", up the tree. */
static void t_v2(void **state)
{
    (void)state;
    fresh();
    put("/proc/self/mountinfo", V2_MOUNTS);
    put("/proc/self/cgroup", "0::/svc/peer\n");
    put("/sys/fs/cgroup/svc/peer/cpu.max", "max 100000\n");
    put("/sys/fs/cgroup/svc/cpu.max", "150000 100000\n");
    assert_true(pc_cpu_quota(s_root) > 1.499 && pc_cpu_quota(s_root) < 1.501);
    put("/sys/fs/cgroup/svc/peer/cpu.max", "25000 100000\n");
    assert_true(pc_cpu_quota(s_root) > 0.249 && pc_cpu_quota(s_root) < 0.251);
    put("/sys/fs/cgroup/svc/peer/cpu.max", "max 100000\n");
    put("/sys/fs/cgroup/svc/cpu.max", "max 100000\n");
    assert_true(pc_cpu_quota(s_root) == 0);
}

/* A mount that shows the hierarchy from below its root (a container's
 * cgroup namespace): the process's path is taken from the mount's root. */
static void t_mount_root(void **state)
{
    (void)state;
    fresh();
    put("/proc/self/mountinfo",
        "31 30 0:28 /box /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n");
    put("/proc/self/cgroup", "3:cpu:/box/peer\n");
    put("/sys/fs/cgroup/cpu/peer/cpu.cfs_quota_us", "30000\n");
    put("/sys/fs/cgroup/cpu/peer/cpu.cfs_period_us", "100000\n");
    assert_true(pc_cpu_quota(s_root) > 0.299 && pc_cpu_quota(s_root) < 0.301);
}

/* Damaged or missing files are no quota, never a crash nor a guess. */
static void t_damaged(void **state)
{
    (void)state;
    fresh();
    assert_true(pc_cpu_quota(s_root) == 0); /* nothing at all */
    put("/proc/self/mountinfo", V2_MOUNTS);
    put("/proc/self/cgroup", "0::/svc\n");
    assert_true(pc_cpu_quota(s_root) == 0); /* no cpu.max */
    static const char *const bad[] = {"",        "\n",       "garbage", "100000",       "-5 100000",
                                      "50000 0", "50000 -1", "max",     "1e400 100000x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        put("/sys/fs/cgroup/svc/cpu.max", bad[i]);
        double q = pc_cpu_quota(s_root);
        if (q != 0)
            fail_msg("cpu.max \"%s\" read as a quota of %g cores", bad[i], q);
    }
    put("/proc/self/cgroup", "garbage without colons\n1:\n");
    assert_true(pc_cpu_quota(s_root) == 0);
    put("/proc/self/mountinfo", "no fields here\n31 30 0:28 / /x - \n");
    put("/proc/self/cgroup", "1:cpu:/a\n");
    assert_true(pc_cpu_quota(s_root) == 0);
}

/* What this machine offers: at least one core and a positive rate; an
 * explicit rate and core count are taken as they are (the quota still
 * scales a measured rate only). */
static void t_capacity(void **state)
{
    (void)state;
    pc_capacity c = pc_capacity_get(0, 0);
    assert_true(c.cpus >= 1 && c.cores >= 1 && c.cores <= c.cpus);
    assert_true(c.rate1 >= 1 && c.rate >= 1 && c.rate <= c.rate1);
    print_message("this machine: %u CPUs, quota %.2f, %u cores offered at rate %u (one core %u)\n",
                  c.cpus, c.quota, c.cores, c.rate, c.rate1);
    c = pc_capacity_get(3, 5000);
    assert_int_equal(c.cores, 3);
    assert_int_equal(c.rate, 5000);
    assert_true(pc_measure_rate() >= 1);
}

static int s_cleanup(void **state)
{
    (void)state;
    if (*s_root) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", s_root);
        return system(cmd) == 0 ? 0 : -1;
    }
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_v1),      cmocka_unit_test(t_v2),       cmocka_unit_test(t_mount_root),
        cmocka_unit_test(t_damaged), cmocka_unit_test(t_capacity),
    };
    return cmocka_run_group_tests_name("capacity", tests, NULL, s_cleanup);
}
