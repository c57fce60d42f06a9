/* capacity.c - what this machine offers the mesh (capacity.h): the
 * affinity mask, the cgroup CPU quota (v2 and v1, read through
 * /proc/self/cgroup and /proc/self/mountinfo), and the per-core rate
 * measured in CPU time.
 */
#define _GNU_SOURCE
#include "capacity.h"

#include <math.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define S_PATH 4096
#define S_SLICES 8     /* runs of the rate benchmark; the best counts */
#define S_SLICE_NS 5e6 /* CPU time of one run */

/* ===================================================================
 * The CPU quota
 * =================================================================== */

/* Whether the comma-separated list holds the word w. */
static bool s_has_word(const char *list, const char *w)
{
    size_t wl = strlen(w);
    for (const char *t = list; *t; t += strcspn(t, ","), t += *t == ',')
        if (strcspn(t, ",") == wl && !strncmp(t, w, wl))
            return true;
    return false;
}

/* Opens root/path for reading (NULL if it cannot). */
static FILE *s_open(const char *root, const char *path)
{
    char full[S_PATH];
    if (snprintf(full, sizeof full, "%s%s", root, path) >= (int)sizeof full)
        return NULL;
    return fopen(full, "r");
}

/* Reads the first line of root/path into buf; false if it cannot. */
static bool s_read_line(const char *root, const char *path, char *buf, size_t cap)
{
    FILE *f = s_open(root, path);
    if (!f)
        return false;
    bool ok = fgets(buf, (int)cap, f) != NULL;
    fclose(f);
    if (ok)
        buf[strcspn(buf, "\n")] = 0;
    return ok;
}

/* The cgroup path of this process in the v2 hierarchy (v2) or in the v1
 * hierarchy that has the cpu controller, from root/proc/self/cgroup. */
static bool s_cgroup_path(const char *root, bool v2, char *out, size_t cap)
{
    FILE *f = s_open(root, "/proc/self/cgroup");
    if (!f)
        return false;
    char line[S_PATH];
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = 0;
        const char *ctl = c1 + 1;
        bool match = v2 ? !strncmp(line, "0:", 2) && !*ctl : s_has_word(ctl, "cpu");
        if (match && strlen(c2 + 1) < cap) {
            snprintf(out, cap, "%s", c2 + 1);
            found = true;
        }
    }
    fclose(f);
    return found;
}

/* The mount point and mount root of the cgroup2 hierarchy (v2) or of the
 * v1 hierarchy mounted with the cpu controller, from mountinfo. */
static bool s_mount(const char *root, bool v2, char *mnt, char *mroot, size_t cap)
{
    FILE *f = s_open(root, "/proc/self/mountinfo");
    if (!f)
        return false;
    char line[S_PATH];
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) {
        /* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS */
        char r[S_PATH], m[S_PATH];
        if (sscanf(line, "%*s %*s %*s %4095s %4095s", r, m) != 2)
            continue;
        const char *dash = strstr(line, " - ");
        char fstype[64], source[S_PATH], super[S_PATH] = "";
        if (!dash || sscanf(dash + 3, "%63s %4095s %4095s", fstype, source, super) < 2)
            continue;
        if (v2 ? !strcmp(fstype, "cgroup2")
               : !strcmp(fstype, "cgroup") && s_has_word(super, "cpu")) {
            if (strlen(m) < cap && strlen(r) < cap) {
                snprintf(mnt, cap, "%s", m);
                snprintf(mroot, cap, "%s", r);
                found = true;
            }
        }
    }
    fclose(f);
    return found;
}

/* A whole decimal number from 1 to 2^40 (microseconds of a quota or a
 * period); false for anything else. */
static bool s_micros(const char *t, size_t n, double *out)
{
    if (!n || n > 13)
        return false;
    double v = 0;
    for (size_t i = 0; i < n; i++) {
        if (t[i] < '0' || t[i] > '9')
            return false;
        v = v * 10 + (t[i] - '0');
    }
    *out = v;
    return v >= 1 && v <= 1099511627776.0;
}

/* The quota of one cgroup directory, in cores (0: none or unreadable).
 * v2: cpu.max is "QUOTA PERIOD" or "max PERIOD"; v1: cpu.cfs_quota_us (-1:
 * none) over cpu.cfs_period_us. */
static double s_dir_quota(const char *root, const char *dir, bool v2)
{
    char path[S_PATH], a[128], b[128];
    double quota, period;
    if (v2) {
        if (snprintf(path, sizeof path, "%s/cpu.max", dir) >= (int)sizeof path ||
            !s_read_line(root, path, a, sizeof a))
            return 0;
        size_t qn = strcspn(a, " ");
        const char *pt = a + qn + (a[qn] == ' ');
        if (!a[qn] || !s_micros(a, qn, &quota) || !s_micros(pt, strlen(pt), &period))
            return 0;
        return quota / period;
    }
    if (snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir) >= (int)sizeof path ||
        !s_read_line(root, path, a, sizeof a))
        return 0;
    snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir);
    if (!s_read_line(root, path, b, sizeof b) || !s_micros(a, strlen(a), &quota) ||
        !s_micros(b, strlen(b), &period))
        return 0;
    return quota / period;
}

/* The smallest quota from this process's cgroup up to its hierarchy's
 * root (a parent's limit binds its children), for one cgroup version. */
static double s_quota(const char *root, bool v2)
{
    char cg[S_PATH], mnt[S_PATH], mroot[S_PATH];
    if (!s_cgroup_path(root, v2, cg, sizeof cg) || !s_mount(root, v2, mnt, mroot, sizeof mnt))
        return 0;
    /* the path is from the hierarchy's root; the mount shows it from mroot */
    const char *rel = cg;
    size_t rl = strlen(mroot);
    if (strcmp(mroot, "/") && !strncmp(cg, mroot, rl) && (cg[rl] == '/' || !cg[rl]))
        rel = cg + rl;
    char dir[S_PATH];
    if (snprintf(dir, sizeof dir, "%s%s", mnt, rel) >= (int)sizeof dir)
        return 0;
    size_t base = strlen(mnt);
    double best = 0;
    for (;;) {
        size_t n = strlen(dir);
        while (n > base && dir[n - 1] == '/')
            dir[--n] = 0;
        double q = s_dir_quota(root, dir, v2);
        if (q > 0 && (best == 0 || q < best))
            best = q;
        char *slash = strrchr(dir, '/');
        if (n <= base || !slash || (size_t)(slash - dir) < base)
            break;
        *slash = 0;
    }
    return best;
}

double pc_cpu_quota(const char *root)
{
    if (!root)
        root = "";
    double v2 = s_quota(root, true), v1 = s_quota(root, false);
    if (v2 > 0 && v1 > 0)
        return v2 < v1 ? v2 : v1;
    return v2 > 0 ? v2 : v1;
}

/* ===================================================================
 * The rate
 * =================================================================== */

static double s_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

uint32_t pc_measure_rate(void)
{
    volatile uint64_t sink = 0;
    uint64_t x = 88172645463325252ull;
    double best = 0;
    for (int s = 0; s < S_SLICES; s++) {
        uint64_t rounds = 0;
        double t0 = s_cpu_ns(), t1 = t0;
        while (t1 - t0 < S_SLICE_NS && rounds < (1ull << 40)) {
            for (int i = 0; i < 20000; i++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x += x * 2654435761u;
            }
            rounds += 20000;
            t1 = s_cpu_ns();
        }
        double per_ms = (double)rounds / ((t1 - t0) / 1e6); /* thousands per second */
        if (per_ms > best)
            best = per_ms;
    }
    sink = x;
    (void)sink;
    return best >= 1 ? (uint32_t)(best > UINT32_MAX ? UINT32_MAX : best) : 1;
}

pc_capacity pc_capacity_get(int cores, int rate)
{
    pc_capacity c = {.cpus = 1};
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        c.cpus = (uint32_t)CPU_COUNT(&set);
    c.quota = pc_cpu_quota("");
    c.cores = cores > 0 ? (uint32_t)cores : c.cpus;
    if (cores <= 0 && c.quota > 0 && c.quota < c.cores)
        c.cores = (uint32_t)ceil(c.quota);
    if (!c.cores)
        c.cores = 1;
    if (rate > 0) { /* as configured: the quota is the operator's to weigh */
        c.rate1 = c.rate = (uint32_t)rate;
        return c;
    }
    c.rate1 = pc_measure_rate();
    c.rate = pc_capacity_rate(&c, c.rate1);
    return c;
}

uint32_t pc_capacity_rate(const pc_capacity *c, uint32_t rate1)
{
    double share = c->quota > 0 && c->quota < c->cores ? c->quota / c->cores : 1.0;
    double r = rate1 * share;
    return r >= 1 ? (uint32_t)r : 1;
}
