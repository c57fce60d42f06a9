/* bench_mesh.c - the distributed system's benchmarks, on meshes of levpeer
 * processes on loopback (tests/pc/mesh.c) with this program as client:
 *
 *   recovery  kill -9 of a worker, default settings: time until the
 *             deployer has placed each of its VTs elsewhere (a new epoch
 *             on a live worker) and until those workers run them;
 *   shipping  a VT with 16 MiB live on its heap, checkpointed at the
 *             default interval to one holder and to two (the default),
 *             against the same VT with checkpoints off, runs
 *             alternating: the run-time ratios, and those of the CPU
 *             time of every peer and executor;
 *   handover  the same VT checkpointed every 250 ms, its images lent
 *             to the daemon in shared memory against sent through the
 *             channel (LEV_IMAGE_SLOTS=0): CPU per image, run times;
 *   starts    lev_vt_start latency, and VT starts per second (start and
 *             join) through a 4-peer mesh;
 *   placement 24 identical peers started together, each offering what
 *             its machine allows at the rate it measures: the rates they
 *             announce and where 24 VTs of one VC go (VTs per peer);
 *   placement_settled  the same once every peer has measured its rate
 *             again while idle.
 *
 *   bench_mesh [recovery|shipping|handover|starts|placement|placement_settled|all] [ROUNDS]
 *
 * Prints one table per benchmark. Executors run at normal priority here
 * (LEV_EXEC_NICE=0) so that the figures are the system's, not the
 * scheduler's.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "leverage.h"
#include "mesh.h"
#include "pc_tasks.h"

#define LIMIT 300000
#define MAXP 8

static char s_dir[256];

static double s_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int s_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double s_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, s_cmp);
    return n ? v[n / 2] : 0;
}

static void s_die(const char *what)
{
    fprintf(stderr, "bench_mesh: %s\n", what);
    exit(1);
}

typedef struct want {
    int n;
} want;

static bool s_alive(const char *js, void *ctx)
{
    return js_count(js, "\"state\":\"alive\"") >= ((want *)ctx)->n;
}

/* A mesh: peer 0 offers no cores (the client's deployer), the others one
 * each at rate 1000 (or, measured, what their machine allows at the rate
 * each measures); returns once peer 0 sees them all alive. */
static int s_mesh_as(mesh_peer *p, int workers, bool measured)
{
    for (int i = 0; i <= workers; i++) {
        const char *args[16] = {
            "--listen", "tcp://127.0.0.1:0", "--cores", i ? "1" : "-1", "--rate", "1000"};
        int n = measured ? 4 : 6;
        if (measured && i)
            n = 2; /* cores and rate as the peer finds them */
        if (i) {
            args[n++] = "--join";
            args[n++] = p[0].ep;
        }
        args[n] = NULL;
        if (mesh_start(&p[i], LEVPEER_PATH, s_dir, LIMIT, args))
            s_die("a levpeer did not start");
    }
    want w = {workers + 1};
    if (!mesh_wait(p[0].ep, s_alive, &w, LIMIT))
        s_die("mesh did not converge");
    return workers + 1;
}

static int s_mesh(mesh_peer *p, int workers) { return s_mesh_as(p, workers, false); }

static bool s_held(const char *js, void *ctx)
{
    for (int v = 2; v < ((want *)ctx)->n + 2; v++)
        if (js_vt_int(js, (uint64_t)v, "checkpoint_age_ms") < 0)
            return false;
    return true;
}

static lev_vc *s_open_r(const char *ep, int workers, int ckpt, int replicas)
{
    lev_vc *vc = NULL;
    lev_vc_options o = {
        .workers = workers, .checkpoint_ms = ckpt, .replicas = replicas, .peer = ep};
    if (lev_vc_open(&vc, &o))
        s_die(lev_errdetail());
    return vc;
}

static lev_vc *s_open(const char *ep, int workers, int ckpt)
{
    lev_vc *vc = NULL;
    lev_vc_options o = {.workers = workers, .checkpoint_ms = ckpt, .peer = ep};
    if (lev_vc_open(&vc, &o))
        s_die(lev_errdetail());
    return vc;
}

/* ===================================================================
 * Recovery
 * =================================================================== */

static void s_recovery(int rounds)
{
    double place[32] = {0}, run[32] = {0};
    int nr = 0;
    printf("\nrecovery: kill -9 of a worker (3 workers, 6 VTs, default settings)\n");
    printf("%6s %12s %12s %10s\n", "round", "placed (ms)", "running (ms)", "VTs moved");
    for (int r = 0; r < rounds && r < 32; r++) {
        mesh_peer p[MAXP];
        memset(p, 0, sizeof p);
        int n = s_mesh(p, 3);
        lev_vc *vc = s_open(p[0].ep, 3, 0);
        long arg[2] = {1000000L, 1000000L}; /* far longer than the round */
        lev_vt_id id;
        for (int i = 0; i < 6; i++)
            if (lev_vt_start(vc, "pc_spin", arg, sizeof arg, &id))
                s_die("start failed");
        want h = {6};
        if (!mesh_wait(p[0].ep, s_held, &h, LIMIT))
            s_die("no images held");
        char *js = mesh_status(p[0].ep, LIMIT);
        char victim[128];
        if (!js || !js_vt_str(js, 2, "host", victim, sizeof victim))
            s_die("no host");
        int moved[8], nm = 0;
        for (int v = 2; v < 8; v++) {
            char host[128];
            if (js_vt_str(js, (uint64_t)v, "host", host, sizeof host) && !strcmp(host, victim))
                moved[nm++] = v;
        }
        free(js);
        int vi = 0;
        while (vi < n && strcmp(p[vi].ep, victim))
            vi++;
        double t0 = s_now(), t1 = 0, t2 = 0;
        mesh_signal(&p[vi], SIGKILL);
        /* placed: each moved VT has a new epoch on a live host */
        char hosts[8][128];
        for (int k = 0; k < 200000 && !t1 && s_now() - t0 < 60; k++) {
            js = mesh_status(p[0].ep, LIMIT);
            int ok = 0;
            for (int i = 0; js && i < nm; i++) {
                char *hh = hosts[i];
                if (js_vt_int(js, (uint64_t)moved[i], "epoch") >= 2 &&
                    js_vt_str(js, (uint64_t)moved[i], "host", hh, 128) && *hh && strcmp(hh, victim))
                    ok++;
            }
            free(js);
            if (ok == nm)
                t1 = s_now();
        }
        /* running: the new hosts' executors have them */
        for (int k = 0; k < 200000 && !t2 && s_now() - t0 < 60; k++) {
            int ok = 0;
            for (int i = 0; i < nm; i++) {
                js = mesh_status(hosts[i], LIMIT);
                char key[64];
                snprintf(key, sizeof key, "%d", moved[i]);
                const char *e = js ? strstr(js, "\"running\":[") : NULL;
                bool has = false;
                for (const char *q = e; q && *q && *q != ']'; q++)
                    if ((q[-1] == '[' || q[-1] == ',') && !strncmp(q, key, strlen(key)) &&
                        (q[strlen(key)] == ',' || q[strlen(key)] == ']'))
                        has = true;
                ok += has;
                free(js);
            }
            if (ok == nm)
                t2 = s_now();
        }
        if (!t1 || !t2)
            s_die("the VTs of the killed worker did not run again within 60 s");
        place[nr] = (t1 - t0) * 1e3;
        run[nr] = (t2 - t0) * 1e3;
        printf("%6d %12.0f %12.0f %10d\n", r + 1, place[nr], run[nr], nm);
        nr++;
        lev_vc_close(&vc);
        mesh_stop_all(p, n);
    }
    double pm = s_median(place, nr), rm = s_median(run, nr);
    printf("median: placed %.0f ms, running %.0f ms (target: running within 1500 ms)\n", pm, rm);
}

/* ===================================================================
 * Checkpoint shipping
 * =================================================================== */

/* The work per step of pc_big runs: LEV_BENCH_WORK, else dflt. */
static long s_work(long dflt)
{
    const char *e = getenv("LEV_BENCH_WORK");
    return e && atol(e) > 0 ? atol(e) : dflt;
}

static double s_big_run(const char *ep, int ckpt, int replicas, long steps, long work,
                        uint64_t *sum)
{
    lev_vc *vc = s_open_r(ep, 1, ckpt, replicas);
    long arg[3] = {16, steps, work};
    lev_vt_id id;
    double t0 = s_now();
    if (lev_vt_start(vc, "pc_big", arg, sizeof arg, &id))
        s_die("start failed");
    void *res = NULL;
    size_t len = 0;
    if (lev_vt_join(vc, id, &res, &len, LIMIT) || len != sizeof *sum)
        s_die("pc_big failed");
    double t = s_now() - t0;
    memcpy(sum, res, sizeof *sum);
    free(res);
    lev_vc_close(&vc);
    return t;
}

/* Sums over peers p[0..n) what their workers sent holders for periodic
 * images (status "image_shipping"): image bytes and bytes sent. */
static void s_shipped(const mesh_peer *p, int n, double *bytes, double *sent)
{
    *bytes = *sent = 0;
    for (int i = 0; i < n; i++) {
        char *js = mesh_status(p[i].ep, LIMIT);
        const char *at = js ? strstr(js, "\"image_shipping\":") : NULL;
        unsigned long long k = 0, b = 0, s = 0;
        if (at &&
            sscanf(at, "\"image_shipping\":{\"images\":%llu,\"bytes\":%llu,\"sent_bytes\":%llu", &k,
                   &b, &s) == 3) {
            *bytes += (double)b;
            *sent += (double)s;
        }
        free(js);
    }
}

static double s_mesh_cpu(const mesh_peer *p, int n);

static void s_shipping(int rounds)
{
    mesh_peer p[MAXP];
    memset(p, 0, sizeof p);
    int n = s_mesh(p, 3); /* the VT's worker and two other peers to hold its images */
    long steps = 4096, work = s_work(2500000); /* about 15 s a run */
    printf("\ncheckpoint shipping: pc_big, 16 MiB live, checkpoint every 2000 ms to 1 holder and "
           "to 2 (the default)\n");
    printf("%6s %12s %12s %12s %8s %8s %10s %10s %10s %8s %8s\n", "round", "off (s)", "1 (s)",
           "2 (s)", "1/off", "2/off", "cpu off", "cpu 1", "cpu 2", "c1/off", "c2/off");
    double r1[32] = {0}, r2[32] = {0}, c1r[32] = {0}, c2r[32] = {0}, img = 0, whole = 0, sent = 0;
    uint64_t a = 0, b = 0, c = 0;
    for (int r = 0; r < rounds && r < 32; r++) {
        /* CPU time of every peer and executor over each run (s_mesh_cpu:
         * executors ended and reaped): less moved by the machine's other
         * work than wall time */
        double k0 = s_mesh_cpu(p, n);
        double off = s_big_run(p[0].ep, -1, 0, steps, work, &a);
        double k1 = s_mesh_cpu(p, n);
        double b0, s0, b1, s1, b2, s2;
        s_shipped(p, n, &b0, &s0);
        double one = s_big_run(p[0].ep, 0, 1, steps, work, &b);
        double k2 = s_mesh_cpu(p, n);
        s_shipped(p, n, &b1, &s1);
        double two = s_big_run(p[0].ep, 0, 2, steps, work, &c);
        double k3 = s_mesh_cpu(p, n);
        s_shipped(p, n, &b2, &s2);
        img += (b1 - b0) + (b2 - b1);
        whole += (b1 - b0) + 2 * (b2 - b1);
        sent += (s1 - s0) + (s2 - s1);
        if (a != b || a != c)
            s_die("checkpointed run gave another result");
        r1[r] = one / off;
        r2[r] = two / off;
        c1r[r] = (k2 - k1) / (k1 - k0);
        c2r[r] = (k3 - k2) / (k1 - k0);
        printf("%6d %12.3f %12.3f %12.3f %8.4f %8.4f %10.2f %10.2f %10.2f %8.4f %8.4f\n", r + 1,
               off, one, two, r1[r], r2[r], k1 - k0, k2 - k1, k3 - k2, c1r[r], c2r[r]);
    }
    printf("median overhead: 1 replica %.2f %%, 2 replicas %.2f %% (target: at most 1 %%)\n"
           "median CPU over the run without checkpoints (every peer and executor): 1 replica "
           "%+.2f %%, 2 replicas %+.2f %%\n"
           "images: %.0f MiB captured; to their holders %.0f MiB whole, %.0f MiB sent (%.1f %%: "
           "the rest saved by patches)\n",
           (s_median(r1, rounds) - 1.0) * 100.0, (s_median(r2, rounds) - 1.0) * 100.0,
           (s_median(c1r, rounds) - 1.0) * 100.0, (s_median(c2r, rounds) - 1.0) * 100.0,
           img / 1048576.0, whole / 1048576.0, sent / 1048576.0,
           whole > 0 ? 100.0 * sent / whole : 0.0);
    mesh_stop_all(p, n);
}

/* ===================================================================
 * Hand-over of images from the executor to its daemon
 * =================================================================== */

/* CPU seconds of a process and of the children it reaped (its executors). */
static double s_cpu(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = 0;
    const char *at = strrchr(buf, ')');
    unsigned long long ut = 0, st = 0, cut = 0, cst = 0;
    if (!at || sscanf(at + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu",
                      &ut, &st, &cut, &cst) != 4)
        s_die("cannot read a levpeer's CPU time");
    return (double)(ut + st + cut + cst) / (double)sysconf(_SC_CLK_TCK);
}

static bool s_no_executor(const char *js, void *ctx)
{
    (void)ctx;
    return !js_has_executor(js);
}

/* CPU seconds of the peers p[0..n) and their executors, once every
 * executor has ended and been reaped. */
static double s_mesh_cpu(const mesh_peer *p, int n)
{
    double cpu = 0;
    for (int i = 0; i < n; i++) {
        if (!mesh_wait(p[i].ep, s_no_executor, NULL, LIMIT))
            s_die("an executor did not end");
        cpu += s_cpu(p[i].pid);
    }
    return cpu;
}

/* The same VT, checkpointed every 250 ms to one holder, on a mesh whose
 * executors lend images to their daemons in shared memory and on one
 * whose executors send them through the channel (LEV_IMAGE_SLOTS=0),
 * runs alternating: the CPU time the peers and executors spent over a
 * run without checkpoints, per image, and the run times. */
static void s_handover(int rounds)
{
    mesh_peer a[MAXP], b[MAXP];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    int na = s_mesh(a, 2);
    setenv("LEV_IMAGE_SLOTS", "0", 1); /* inherited by mesh b's executors */
    int nb = s_mesh(b, 2);
    unsetenv("LEV_IMAGE_SLOTS");
    long steps = 4096, work = s_work(1200000); /* about 7 s a run */
    printf("\nimage hand-over: pc_big, 16 MiB live, checkpoint every 250 ms to 1 holder; lent in "
           "shared memory against sent through the channel\n");
    printf("%6s %10s %10s %10s %10s %12s %12s %8s %8s\n", "round", "off (s)", "lent (s)",
           "bytes (s)", "images", "lent ms/img", "bytes ms/img", "lent/off", "bytes/off");
    double pl[32] = {0}, pb[32] = {0}, wl[32] = {0}, wb[32] = {0};
    for (int r = 0; r < rounds && r < 32; r++) {
        uint64_t x = 0, y = 0, z = 0;
        double c0 = s_mesh_cpu(a, na);
        double off = s_big_run(a[0].ep, -1, 0, steps, work, &x);
        double c1 = s_mesh_cpu(a, na);
        double k0, s0, k1, s1;
        s_shipped(a, na, &k0, &s0);
        double lent = s_big_run(a[0].ep, 250, 1, steps, work, &y);
        double c2 = s_mesh_cpu(a, na);
        s_shipped(a, na, &k1, &s1);
        double d0 = s_mesh_cpu(b, nb), m0, t0, m1, t1;
        s_shipped(b, nb, &m0, &t0);
        double bytes = s_big_run(b[0].ep, 250, 1, steps, work, &z);
        double d1 = s_mesh_cpu(b, nb);
        s_shipped(b, nb, &m1, &t1);
        if (x != y || x != z)
            s_die("checkpointed run gave another result");
        double img_a = (k1 - k0) / (16.0 * 1048576.0), img_b = (m1 - m0) / (16.0 * 1048576.0);
        double base = c1 - c0; /* CPU of the run without checkpoints */
        pl[r] = img_a > 0 ? 1000.0 * ((c2 - c1) - base) / img_a : 0;
        pb[r] = img_b > 0 ? 1000.0 * ((d1 - d0) - base) / img_b : 0;
        wl[r] = lent / off;
        wb[r] = bytes / off;
        printf("%6d %10.3f %10.3f %10.3f %5.0f/%-4.0f %12.1f %12.1f %8.4f %8.4f\n", r + 1, off,
               lent, bytes, img_a, img_b, pl[r], pb[r], wl[r], wb[r]);
    }
    printf("median CPU per 16 MiB image (peers and executors, over the run without checkpoints): "
           "lent %.1f ms, as bytes %.1f ms; run time over no checkpoints: lent %.2f %%, as bytes "
           "%.2f %%\n",
           s_median(pl, rounds), s_median(pb, rounds), (s_median(wl, rounds) - 1) * 100,
           (s_median(wb, rounds) - 1) * 100);
    mesh_stop_all(a, na);
    mesh_stop_all(b, nb);
}

/* ===================================================================
 * Starts
 * =================================================================== */

static void s_starts(int rounds)
{
    mesh_peer p[MAXP];
    memset(p, 0, sizeof p);
    int n = s_mesh(p, 3);
    lev_vc *vc = s_open(p[0].ep, 3, -1);
    /* warm up: every worker enrolled and its executor running */
    long small = 1000;
    lev_vt_id id;
    for (int i = 0; i < 30; i++) {
        lev_vt_start(vc, "pc_sum", &small, sizeof small, &id);
        lev_vt_join(vc, id, NULL, NULL, LIMIT);
    }
    printf("\nVT starts through a 4-peer mesh (3 workers), pc_sum of 1000\n");
    printf("%6s %14s %14s %14s\n", "round", "start p50 (us)", "start p99 (us)", "starts/s");
    static double lat[2000];
    static lev_vt_id ids[2000];
    for (int r = 0; r < rounds; r++) {
        double t0 = s_now();
        for (int i = 0; i < 2000; i++) {
            double ts = s_now();
            if (lev_vt_start(vc, "pc_sum", &small, sizeof small, &ids[i]))
                s_die("start failed");
            lat[i] = (s_now() - ts) * 1e6;
        }
        for (int i = 0; i < 2000; i++)
            if (lev_vt_join(vc, ids[i], NULL, NULL, LIMIT))
                s_die("join failed");
        double rate = 2000.0 / (s_now() - t0);
        qsort(lat, 2000, sizeof *lat, s_cmp);
        printf("%6d %14.0f %14.0f %14.0f\n", r + 1, lat[1000], lat[1980], rate);
    }
    lev_vc_close(&vc);
    mesh_stop_all(p, n);
}

/* ===================================================================
 * Placement
 * =================================================================== */

#define PL_PEERS 24

typedef struct placed {
    const lev_vt_id *ids;
    int n;
} placed;

/* Every VT running on a host. */
static bool s_placed(const char *js, void *ctx)
{
    const placed *pl = ctx;
    char host[128];
    for (int i = 0; i < pl->n; i++)
        if (!js_vt_str(js, pl->ids[i], "host", host, sizeof host) || !*host)
            return false;
    return true;
}

/* The integer after `"key":` in the status entry of peer ep, or -1. */
static long s_peer_field(const char *js, const char *ep, const char *key)
{
    char pat[160];
    snprintf(pat, sizeof pat, "{\"endpoint\":\"%s\"", ep);
    const char *at = strstr(js, pat);
    const char *end = at ? strchr(at, '}') : NULL;
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *f = at ? strstr(at, pat) : NULL;
    return f && f < end ? atol(f + strlen(pat)) : -1;
}

/* Every worker of the VC enrolled and ready (active). */
static bool s_all_active(const char *js, void *ctx)
{
    return js_count(js, ":\"active\"") >= ((want *)ctx)->n;
}

static bool s_measured_twice(const char *js, void *ctx)
{
    (void)ctx;
    long long n = js_int(js, "rate_measurements");
    return n != INT64_MIN && n >= 2;
}

typedef struct rate_of {
    const char *ep;
    long rate;
} rate_of;

/* The status shows peer ro->ep at rate ro->rate. */
static bool s_rate_known(const char *js, void *ctx)
{
    const rate_of *ro = ctx;
    return s_peer_field(js, ro->ep, "rate") == ro->rate;
}

/* settled: the VC opens once every peer has measured its rate again,
 * idle (a peer does 3-6 s after start), instead of at once. */
static void s_placement(int rounds, bool settled)
{
    printf("\nPlacement: %d identical peers started together (each offering what its machine "
           "allows, at the rate it measures%s), one VC of %d VTs\n",
           PL_PEERS, settled ? ", measured again once idle" : "", PL_PEERS);
    for (int r = 0; r < rounds; r++) {
        static mesh_peer p[PL_PEERS + 1];
        memset(p, 0, sizeof p);
        int n = s_mesh_as(p, PL_PEERS, true);
        for (int k = 1; settled && k <= PL_PEERS; k++)
            if (!mesh_wait(p[k].ep, s_measured_twice, NULL, LIMIT))
                s_die("a peer did not measure its rate again");
        /* the client's peer learns each new rate by gossip */
        for (int k = 1; settled && k <= PL_PEERS; k++) {
            char *own = mesh_status(p[k].ep, LIMIT);
            rate_of ro = {p[k].ep, own ? s_peer_field(own, p[k].ep, "rate") : -1};
            free(own);
            if (!mesh_wait(p[0].ep, s_rate_known, &ro, LIMIT))
                s_die("a new rate did not spread");
        }
        lev_vc *vc = s_open(p[0].ep, PL_PEERS, -1);
        /* the VTs start once every worker is enrolled: where they go is
         * then the delegator's choice, not the order of enrolment */
        want all = {PL_PEERS};
        long warm = 1;
        lev_vt_id w;
        if (lev_vt_start(vc, "pc_sum", &warm, sizeof warm, &w) ||
            lev_vt_join(vc, w, NULL, NULL, LIMIT) || !mesh_wait(p[0].ep, s_all_active, &all, LIMIT))
            s_die("the workers were not all enrolled");
        pc_gate_arg g = {.steps = 8, .step_work = 1000};
        snprintf(g.gate, sizeof g.gate, "%.240s/gate", s_dir);
        remove(g.gate);
        lev_vt_id ids[PL_PEERS];
        for (int i = 0; i < PL_PEERS; i++)
            if (lev_vt_start(vc, "pc_gated", &g, sizeof g, &ids[i]))
                s_die("start failed");
        placed pl = {ids, PL_PEERS};
        if (!mesh_wait(p[0].ep, s_placed, &pl, LIMIT))
            s_die("the VTs were not all placed");
        char *js = mesh_status(p[0].ep, LIMIT);
        if (!js)
            s_die("no status");
        int count[PL_PEERS + 1] = {0}, used = 0, most = 0;
        long rmin = -1, rmax = -1;
        for (int i = 0; i < PL_PEERS; i++) {
            char host[128];
            js_vt_str(js, ids[i], "host", host, sizeof host);
            for (int k = 1; k <= PL_PEERS; k++)
                if (!strcmp(host, p[k].ep))
                    count[k]++;
        }
        printf("round %d: VTs per peer:", r + 1);
        for (int k = 1; k <= PL_PEERS; k++) {
            long rate = s_peer_field(js, p[k].ep, "rate");
            rmin = rmin < 0 || rate < rmin ? rate : rmin;
            rmax = rate > rmax ? rate : rmax;
            used += count[k] > 0;
            most = count[k] > most ? count[k] : most;
            printf(" %d", count[k]);
        }
        printf("\n  %d of %d peers used, at most %d VTs on one; rates announced %ld to %ld "
               "(%.1f %% apart), cores each %ld\n",
               used, PL_PEERS, most, rmin, rmax,
               rmin > 0 ? (double)(rmax - rmin) * 100.0 / rmin : 0,
               s_peer_field(js, p[1].ep, "cores"));
        free(js);
        FILE *f = fopen(g.gate, "w");
        if (f)
            fclose(f);
        for (int i = 0; i < PL_PEERS; i++)
            if (lev_vt_join(vc, ids[i], NULL, NULL, LIMIT))
                s_die("join failed");
        remove(g.gate);
        lev_vc_close(&vc);
        mesh_stop_all(p, n);
    }
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *what = argc > 1 ? argv[1] : "all";
    int rounds = argc > 2 ? atoi(argv[2]) : 3;
    if (rounds < 1)
        rounds = 1;
    setenv("LEV_EXEC_NICE", "0", 1);
    const char *tmp = getenv("TMPDIR");
    snprintf(s_dir, sizeof s_dir, "%s/lev-bench-XXXXXX", tmp ? tmp : "/tmp");
    if (!mkdtemp(s_dir))
        s_die("no temporary directory");
    bool all = !strcmp(what, "all");
    if (all || !strcmp(what, "recovery"))
        s_recovery(rounds + 2);
    if (all || !strcmp(what, "starts"))
        s_starts(rounds);
    if (all || !strcmp(what, "shipping"))
        s_shipping(rounds);
    if (all || !strcmp(what, "handover"))
        s_handover(rounds);
    if (all || !strcmp(what, "placement"))
        s_placement(rounds, false);
    if (all || !strcmp(what, "placement_settled"))
        s_placement(rounds, true);
    return 0;
}
