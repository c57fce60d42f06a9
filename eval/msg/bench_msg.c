/* bench_msg.c - messages between VTs on two different peers of a mesh of
 * levpeer processes on loopback, side by side in one run with plain
 * libzmq between two processes (a DEALER and a ROUTER, the pattern the
 * peers use), and global variable lock round trips with 8 VTs contending.
 * Two VCs run on the same two workers: one whose deployer relays the
 * messages (levpeer --messages relay) and one whose executors send them
 * to each other (--messages direct), each from a deployer of its own:
 *
 *   latency     round trip of a 1 KiB (or SIZE) message: VT ping-pong
 *               against libzmq ping-pong;
 *   throughput  messages per second of a one-way stream of 1 KiB
 *               messages with one answer at the end, against libzmq's;
 *   lock        lock + read + update + unlock round trips per second of
 *               8 VTs on one variable;
 *   switches    context switches per round trip and per streamed message,
 *               summed over every thread of the processes taking part
 *               (this one, the levpeers, their executors, the libzmq
 *               child): each wake-up of a waiting thread costs one, so
 *               this counts the hand-offs a message makes on its way.
 *               The pair's start and join and the warm-up are included.
 *
 *   bench_msg [ROUNDS] [SIZE]
 *   bench_msg pairs ROUNDS SIZE RELAY_EP DIRECT_EP
 *
 * Each comparison alternates the three sides ROUNDS times (default 5) and
 * prints the medians and their ratios. Executors run at normal priority
 * (LEV_EXEC_NICE=0).
 *
 * `pairs` runs only the VT-to-VT round trip and stream, ROUNDS times, on
 * a mesh already running: a deployer that relays (RELAY_EP) and one with
 * --messages direct (DIRECT_EP, or "-" for none), each beside the same
 * two workers (the mesh has those four peers); with LEV_MESH_KEY set it
 * is a client of a mesh with keys. It prints a line per measurement,
 * "relay|direct round_trip_us|stream_msgs_per_s VALUE", for a script to
 * gather (eval/curve/msg.sh: the same on meshes with and without keys).
 */
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "bench_msg.h"
#include "leverage.h"
#include "mesh.h"
#include "zbase.h"

#define LIMIT 300000
#define PP_N 2000L
#define ST_N 20000L
#define LOCK_N 2000L

static char s_dir[256];
#define NP 4 /* the relaying deployer, two workers, the direct one's deployer */
static mesh_peer s_p[NP];

static void s_die(const char *what)
{
    fprintf(stderr, "bench_msg: %s (%s)\n", what, lev_errdetail());
    mesh_stop_all(s_p, NP);
    exit(1);
}

/* ===================================================================
 * Leverage: two VTs of one VC on two workers
 * =================================================================== */

static int s_together; /* pairs whose VTs were placed on one worker */

/* Whether VTs a and b run, on two different workers, as the deployer at
 * ep says (before they are sent their work: they wait for it). */
typedef struct pair_hosts {
    lev_vt_id a, b;
    char ha[128], hb[128];
} pair_hosts;

static bool s_placed(const char *js, void *ctx)
{
    pair_hosts *p = ctx;
    return js_vt_str(js, p->a, "host", p->ha, sizeof p->ha) && *p->ha &&
           js_vt_str(js, p->b, "host", p->hb, sizeof p->hb) && *p->hb;
}

static void *s_join_any(lev_vc *vc, lev_vt_id id)
{
    void *r = NULL;
    size_t l = 0;
    if (lev_vt_join(vc, id, &r, &l, LIMIT))
        s_die("lev_vt_join");
    return r;
}

static bool s_apart(const char *ep, lev_vt_id a, lev_vt_id b)
{
    pair_hosts p = {.a = a, .b = b};
    return mesh_wait(ep, s_placed, &p, LIMIT) && strcmp(p.ha, p.hb) != 0;
}

/* Runs a pair of VTs of `task` on two different workers (a pair placed
 * on one worker does one message and goes; at most 20 tries) and returns
 * role 0's time. */
/* Every peer the deployer at ep knows reports no VT running (the loads
 * it gossips lag behind the VTs' ends: a pair started at once would find
 * a worker still loaded and stack on the other). */
static bool s_idle(const char *js, void *ctx)
{
    (void)ctx;
    return js_count(js, "\"load\":") == NP && js_count(js, "\"load\":0,") == NP;
}

static int64_t s_pair(lev_vc *vc, const char *ep, const char *task, long n, long warm, long size)
{
    lev_vt_id a, b;
    if (!mesh_wait(ep, s_idle, NULL, LIMIT))
        s_die("the workers did not go idle");
    for (int tries = 0;; tries++) {
        if (lev_vt_start(vc, task, NULL, 0, &a) || lev_vt_start(vc, task, NULL, 0, &b))
            s_die("lev_vt_start");
        if (s_apart(ep, a, b) || tries == 20)
            break;
        s_together++;
        bm_cfg c1 = {.peer = b, .role = 0, .n = 1, .size = 1};
        bm_cfg c2 = {.peer = a, .role = 1, .n = 1, .size = 1};
        lev_vt_send(vc, a, &c1, sizeof c1);
        lev_vt_send(vc, b, &c2, sizeof c2);
        free(s_join_any(vc, a));
        free(s_join_any(vc, b));
    }
    bm_cfg ca = {.peer = b, .role = 0, .n = n, .warm = warm, .size = size};
    bm_cfg cb = {.peer = a, .role = 1, .n = n, .warm = warm, .size = size};
    if (lev_vt_send(vc, a, &ca, sizeof ca) || lev_vt_send(vc, b, &cb, sizeof cb))
        s_die("lev_vt_send");
    int64_t *ta = NULL, *tb = NULL;
    size_t la = 0, lb = 0;
    if (lev_vt_join(vc, a, (void **)&ta, &la, LIMIT) ||
        lev_vt_join(vc, b, (void **)&tb, &lb, LIMIT))
        s_die("lev_vt_join");
    int64_t t = la == sizeof *ta ? *ta : -1;
    free(ta);
    free(tb);
    if (t < 0)
        s_die("a VT of the pair failed");
    return t;
}

/* Whether pid is `root` or descends from it (bounded walk up the parents). */
static bool s_descends(long pid, long root)
{
    for (int i = 0; i < 64 && pid > 1; i++) {
        if (pid == root)
            return true;
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        FILE *f = fopen(path, "r");
        if (!f)
            return false;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        const char *p = strrchr(buf, ')'); /* the name may hold spaces */
        char state;
        if (!p || sscanf(p + 1, " %c %ld", &state, &pid) != 2)
            return false;
    }
    return false;
}

/* Context switches, voluntary and not, of every thread of process pid. */
static uint64_t s_proc_switches(long pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/task", pid);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    uint64_t sum = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char st[400], line[128];
        snprintf(st, sizeof st, "%s/%s/status", path, e->d_name);
        FILE *f = fopen(st, "r");
        if (!f)
            continue;
        unsigned long long v;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1 ||
                sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1)
                sum += v;
        fclose(f);
    }
    closedir(d);
    return sum;
}

/* Context switches of this process and all its descendants. */
static uint64_t s_switches(void)
{
    long self = (long)getpid();
    uint64_t sum = 0;
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (!*end && pid > 0 && s_descends(pid, self))
            sum += s_proc_switches(pid);
    }
    closedir(d);
    return sum;
}

static bool s_alive(const char *js, void *ctx)
{
    return js_count(js, "\"state\":\"alive\"") >= *(int *)ctx;
}

/* bench_msg pairs ROUNDS SIZE RELAY_EP DIRECT_EP (see the top). */
static int s_pairs_main(int argc, char **argv)
{
    int rounds = argc == 6 ? atoi(argv[2]) : 0;
    long size = argc == 6 ? atol(argv[3]) : 0;
    if (rounds < 1 || size < 1 || size > (1 << 20)) {
        fprintf(stderr, "usage: bench_msg pairs ROUNDS SIZE (1..1048576) RELAY_EP DIRECT_EP|-\n");
        return 2;
    }
    const char *ep[2] = {argv[4], strcmp(argv[5], "-") ? argv[5] : NULL};
    const char *name[2] = {"relay", "direct"};
    lev_vc *vc[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        lev_vc_options o = {.workers = 2, .checkpoint_ms = 2000, .peer = ep[k]};
        if (ep[k] && lev_vc_open(&vc[k], &o))
            s_die(k ? "lev_vc_open (direct)" : "lev_vc_open");
    }
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < 2; k++)
            if (vc[k]) {
                double rt = (double)s_pair(vc[k], ep[k], "bm_pingpong", PP_N, PP_N / 10, size) *
                            1e-3 / PP_N;
                double st =
                    ST_N /
                    ((double)s_pair(vc[k], ep[k], "bm_stream", ST_N, ST_N / 10, size) * 1e-9);
                printf("%s round_trip_us %.1f\n%s stream_msgs_per_s %.0f\n", name[k], rt, name[k],
                       st);
                fflush(stdout);
            }
    if (s_together)
        fprintf(stderr, "bench_msg: %d pairs placed on one worker were run again\n", s_together);
    lev_vc_close(&vc[0]);
    lev_vc_close(&vc[1]);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "pairs"))
        return s_pairs_main(argc, argv);
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    long size = argc > 2 ? atol(argv[2]) : 1024;
    if (rounds < 1 || size < 1 || size > (1 << 20)) {
        fprintf(stderr, "usage: bench_msg [ROUNDS] [SIZE (1..1048576)]\n");
        return 2;
    }
    setenv("LEV_EXEC_NICE", "0", 1);
    snprintf(s_dir, sizeof s_dir, "/tmp/lev-bench-msg-XXXXXX");
    if (!mkdtemp(s_dir))
        return 1;
    for (int i = 0; i < NP; i++) {
        bool deployer = i == 0 || i == NP - 1;
        const char *args[] = {"--listen",   "tcp://127.0.0.1:0",
                              "--cores",    deployer ? "-1" : "1",
                              "--messages", i == NP - 1 ? "direct" : "relay",
                              "--join",     s_p[0].ep,
                              NULL};
        if (i == 0)
            args[6] = NULL;
        if (mesh_start(&s_p[i], LEVPEER_PATH, s_dir, LIMIT, args))
            s_die("a levpeer did not start");
    }
    int want = NP;
    if (!mesh_wait(s_p[0].ep, s_alive, &want, LIMIT) ||
        !mesh_wait(s_p[NP - 1].ep, s_alive, &want, LIMIT))
        s_die("the mesh did not form");
    lev_vc *vc = NULL, *vd = NULL;
    lev_vc_options o = {.workers = 2, .checkpoint_ms = 2000, .peer = s_p[0].ep};
    if (lev_vc_open(&vc, &o))
        s_die("lev_vc_open");
    o.peer = s_p[NP - 1].ep;
    if (lev_vc_open(&vd, &o))
        s_die("lev_vc_open (direct)");
    zb_pair z;
    if (zb_up(&z))
        s_die("the libzmq child did not start");
    double *lz = calloc((size_t)rounds, sizeof(double)),
           *ll = calloc((size_t)rounds, sizeof(double));
    double *sz = calloc((size_t)rounds, sizeof(double)),
           *sl = calloc((size_t)rounds, sizeof(double));
    double *ld = calloc((size_t)rounds, sizeof(double)),
           *sd = calloc((size_t)rounds, sizeof(double));
    double *w[6]; /* switches: round trip (libzmq, relayed, direct), stream (the same) */
    for (int i = 0; i < 6; i++)
        w[i] = calloc((size_t)rounds, sizeof(double));
    const double pp = (double)(PP_N + PP_N / 10), st = (double)(ST_N + ST_N / 10);
    for (int r = 0; r < rounds; r++) {
        uint64_t c0 = s_switches();
        lz[r] = zb_pingpong(&z, PP_N, PP_N / 10, (size_t)size) / PP_N * 1e6;
        uint64_t c1 = s_switches();
        ll[r] = (double)s_pair(vc, s_p[0].ep, "bm_pingpong", PP_N, PP_N / 10, size) * 1e-3 / PP_N;
        uint64_t c2 = s_switches();
        ld[r] =
            (double)s_pair(vd, s_p[NP - 1].ep, "bm_pingpong", PP_N, PP_N / 10, size) * 1e-3 / PP_N;
        uint64_t c3 = s_switches();
        sz[r] = ST_N / zb_stream(&z, ST_N, (size_t)size);
        uint64_t c4 = s_switches();
        sl[r] = ST_N / ((double)s_pair(vc, s_p[0].ep, "bm_stream", ST_N, ST_N / 10, size) * 1e-9);
        uint64_t c5 = s_switches();
        sd[r] =
            ST_N / ((double)s_pair(vd, s_p[NP - 1].ep, "bm_stream", ST_N, ST_N / 10, size) * 1e-9);
        uint64_t c6 = s_switches();
        w[0][r] = (double)(c1 - c0) / pp;
        w[1][r] = (double)(c2 - c1) / pp;
        w[2][r] = (double)(c3 - c2) / pp;
        w[3][r] = (double)(c4 - c3) / st;
        w[4][r] = (double)(c5 - c4) / st;
        w[5][r] = (double)(c6 - c5) / st;
    }
    zb_down(&z);
    printf("messages of %ld bytes, %d rounds alternating, medians (VTs on two different "
           "workers: %s)\n",
           size, rounds, "checked, every pair");
    if (s_together)
        printf("(%d pairs placed on one worker were run again)\n", s_together);
    printf("| measure | plain libzmq | VT to VT, relayed | ratio | VT to VT, direct | ratio "
           "|\n|---|---|---|---|---|---|\n");
    double mlz = bench_median(lz, rounds), mll = bench_median(ll, rounds);
    double msz = bench_median(sz, rounds), msl = bench_median(sl, rounds);
    double mld = bench_median(ld, rounds), msd = bench_median(sd, rounds);
    printf("| round trip (us) | %.1f | %.1f | %.2fx | %.1f | %.2fx |\n", mlz, mll, mll / mlz, mld,
           mld / mlz);
    printf("| stream (msgs/s) | %.0f | %.0f | %.1f%% | %.0f | %.1f%% |\n", msz, msl,
           100 * msl / msz, msd, 100 * msd / msz);
    double mw[6];
    for (int i = 0; i < 6; i++) {
        mw[i] = bench_median(w[i], rounds);
        free(w[i]);
    }
    printf("| context switches per round trip | %.1f | %.1f | %.2fx | %.1f | %.2fx |\n", mw[0],
           mw[1], mw[1] / mw[0], mw[2], mw[2] / mw[0]);
    printf("| context switches per streamed message | %.2f | %.2f | %.2fx | %.2f | %.2fx |\n",
           mw[3], mw[4], mw[4] / mw[3], mw[5], mw[5] / mw[3]);
    /* 8 VTs contending for one lock */
    double *lk = calloc((size_t)rounds, sizeof(double));
    for (int r = 0; r < rounds; r++) {
        lev_vt_id id[8];
        long n = LOCK_N;
        for (int i = 0; i < 8; i++)
            if (lev_vt_start(vc, "bm_lock", &n, sizeof n, &id[i]))
                s_die("lev_vt_start");
        double worst = 0;
        for (int i = 0; i < 8; i++) {
            int64_t *t = NULL;
            size_t l = 0;
            if (lev_vt_join(vc, id[i], (void **)&t, &l, LIMIT) || l != sizeof *t || *t < 0)
                s_die("bm_lock failed");
            if ((double)*t * 1e-9 > worst)
                worst = (double)*t * 1e-9;
            free(t);
        }
        lk[r] = 8.0 * LOCK_N / worst;
    }
    printf("| global lock+update, 8 VTs (round trips/s) | - | %.0f | - |\n",
           bench_median(lk, rounds));
    lev_vc_close(&vc);
    lev_vc_close(&vd);
    mesh_stop_all(s_p, NP);
    free(ld);
    free(sd);
    free(lz);
    free(ll);
    free(sz);
    free(sl);
    free(lk);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    return system(cmd) ? 1 : 0;
}
