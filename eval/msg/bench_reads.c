/* bench_reads.c - the latency of a global read (lev_global_read) answered
 * near the reader, at its worker (levpeer --reads near), against one
 * answered at the VC's deployer (--reads deployer), side by side in one
 * run (docs/GLOBAL_READS.md). Two deploying peers, one of each kind, and
 * two workers form one mesh on loopback; with DELAY_MS, a relay
 * (eval/net/lagrelay.c) in front of each peer holds every byte between
 * peers back by that much one way, as a WAN would (the client talks to
 * its deployer directly). Each round, a VT on each VC reads a variable
 * of SIZE bytes that nobody writes, WARM times and then N times, timed;
 * the rounds alternate the two VCs.
 *
 *   bench_reads [ROUNDS] [DELAY_MS] [SIZE]
 *
 * Prints the median time of one read on each side and their ratio, and
 * the reads each deployer logged as answered at the workers.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "leverage.h"
#include "mesh.h"

#define LIMIT 300000
#define NP 4 /* the deployer answering near, the one answering itself, two workers */

static char s_dir[256];
static mesh_peer s_p[NP];
static pid_t s_relay[NP];

static void s_die(const char *what)
{
    fprintf(stderr, "bench_reads: %s\n", what);
    mesh_stop_all(s_p, NP);
    for (int i = 0; i < NP; i++)
        if (s_relay[i] > 0)
            kill(s_relay[i], SIGKILL);
    exit(1);
}

/* A loopback port free now (the peer binds it a moment later). */
static int s_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) ||
        getsockname(fd, (struct sockaddr *)&a, &al))
        s_die("no free port");
    close(fd);
    return ntohs(a.sin_port);
}

/* Starts a lagrelay to 127.0.0.1:port, its endpoint into ep. */
static void s_relay_start(int i, int port, int delay_ms, char *ep, size_t cap)
{
    int fd[2];
    if (pipe(fd))
        s_die("pipe");
    char to[32], delay[16];
    snprintf(to, sizeof to, "127.0.0.1:%d", port);
    snprintf(delay, sizeof delay, "%d", delay_ms);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        execl(LAGRELAY_PATH, "lagrelay", "--listen", "127.0.0.1:0", "--to", to, "--delay-ms", delay,
              (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    s_relay[i] = pid;
    FILE *f = fdopen(fd[0], "r");
    if (pid < 0 || !f || !fgets(ep, (int)cap, f))
        s_die("a lagrelay did not start");
    ep[strcspn(ep, "\n")] = 0;
    fclose(f);
}

static bool s_alive(const char *js, void *ctx)
{
    return js_count(js, "\"state\":\"alive\"") >= *(const int *)ctx;
}

/* One timed run of bm_read on vc: microseconds per read. */
static double s_run(lev_vc *vc, long n, long warm)
{
    long a[2] = {n, warm};
    lev_vt_id id;
    int64_t *t = NULL;
    size_t l = 0;
    if (lev_vt_start(vc, "bm_read", a, sizeof a, &id) ||
        lev_vt_join(vc, id, (void **)&t, &l, LIMIT) || l != sizeof *t || *t < 0)
        s_die("bm_read failed");
    double us = (double)*t * 1e-3 / (double)n;
    free(t);
    return us;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    int delay = argc > 2 ? atoi(argv[2]) : 0;
    long size = argc > 3 ? atol(argv[3]) : 1024;
    if (rounds < 1 || delay < 0 || delay > 1000 || size < 1 || size > (1 << 20)) {
        fprintf(stderr, "usage: bench_reads [ROUNDS] [DELAY_MS (0..1000)] [SIZE (1..1048576)]\n");
        return 2;
    }
    setenv("LEV_EXEC_NICE", "0", 1);
    snprintf(s_dir, sizeof s_dir, "/tmp/lev-bench-reads-XXXXXX");
    if (!mkdtemp(s_dir))
        return 1;
    char direct[NP][64]; /* where a client on the same machine reaches each peer */
    for (int i = 0; i < NP; i++) {
        int port = s_free_port();
        char listen[64], adv[128] = "";
        snprintf(listen, sizeof listen, "tcp://127.0.0.1:%d", port);
        snprintf(direct[i], sizeof direct[i], "%s", listen);
        if (delay)
            s_relay_start(i, port, delay, adv, sizeof adv);
        const char *args[12] = {"--listen",         listen,    "--cores",
                                i < 2 ? "-1" : "1", "--reads", i == 0 ? "near" : "deployer"};
        int k = 6;
        if (i) {
            args[k++] = "--join";
            args[k++] = s_p[0].ep;
        }
        if (delay) {
            args[k++] = "--advertise";
            args[k++] = adv;
        }
        args[k] = NULL;
        if (mesh_start(&s_p[i], LEVPEER_PATH, s_dir, LIMIT, args))
            s_die("a levpeer did not start");
    }
    int want = NP;
    if (!mesh_wait(direct[0], s_alive, &want, LIMIT) ||
        !mesh_wait(direct[1], s_alive, &want, LIMIT))
        s_die("the mesh did not form");
    lev_vc *vc[2] = {NULL, NULL}; /* near, at the deployer */
    char *val = malloc((size_t)size);
    if (!val)
        s_die("no memory");
    memset(val, 'r', (size_t)size);
    for (int i = 0; i < 2; i++) {
        lev_vc_options o = {.workers = 1, .checkpoint_ms = 2000, .peer = direct[i]};
        if (lev_vc_open(&vc[i], &o) || lev_global_set(vc[i], "rb", val, (size_t)size))
            s_die("lev_vc_open or lev_global_set");
    }
    free(val);
    long n = delay ? 40 : 2000, warm = delay ? 5 : 200;
    double *t[2] = {calloc((size_t)rounds, sizeof(double)), calloc((size_t)rounds, sizeof(double))};
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < 2; k++) {
            int i = (r + k) % 2; /* alternating which goes first */
            t[i][r] = s_run(vc[i], n, warm);
        }
    long long near[2];
    for (int i = 0; i < 2; i++) {
        char *js = mesh_status(direct[i], LIMIT);
        near[i] = js ? js_obj_sum(js, "global_reads", "answered_at_workers") : -1;
        free(js);
    }
    double mn = bench_median(t[0], rounds), md = bench_median(t[1], rounds);
    printf("global reads of %ld bytes, %d rounds alternating, %ld reads each, one-way delay "
           "between peers %d ms, medians\n",
           size, rounds, n, delay);
    printf("| measure | answered at the deployer | answered near the reader | ratio |\n"
           "|---|---|---|---|\n");
    printf("| one read (us) | %.1f | %.1f | %.3fx |\n", md, mn, mn / md);
    printf("| reads logged as answered at a worker | %lld | %lld | - |\n", near[1], near[0]);
    for (int i = 0; i < 2; i++)
        lev_vc_close(&vc[i]);
    mesh_stop_all(s_p, NP);
    for (int i = 0; i < NP; i++)
        if (s_relay[i] > 0) {
            kill(s_relay[i], SIGTERM);
            waitpid(s_relay[i], NULL, 0);
        }
    free(t[0]);
    free(t[1]);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    return system(cmd) ? 1 : 0;
}
