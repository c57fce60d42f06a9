/* test_net.c - a mesh across network namespaces, under the network's
 * faults. Each test makes its own namespaces and removes them: a bridge
 * in this one (the client's peer listens on it) and two namespaces with a
 * worker each, joined to the bridge by veth pairs, on a /24 of 10/8 drawn
 * from the process id. The faults are the kernel's own on the workers'
 * links: their packets pass through the netq program (an iptables NFQUEUE
 * rule: delay with jitter, loss), or are dropped (a partition, by
 * iptables DROP rules, later removed). One test per scenario:
 *   - delay: 50 ms +- 10 ms on every packet a worker sends;
 *   - loss: 5 % of them dropped;
 * in both, VTs that compute and report, and a token ring of VTs passing
 * messages through the workers' links;
 *   - partition: the host of a VT cut off after its image is held, until
 *     its VT resumed on the other side and ended; then healed.
 * In every case each VT's result is the fault-free one and the client gets
 * each of its reports once; after the partition heals the cut-off peer
 * is alive in the mesh again and a worker of the VC again, runs none of
 * the copies it was fenced from, and nothing it ran reached the client
 * a second time.
 *
 * Needs root, `ip` (iproute2), `iptables` and the kernel's NFQUEUE; when
 * one is missing the program says which and exits 77 (ctest: skipped).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "leverage.h"
#include "mesh.h"
#include "msg_tasks.h"
#include "pc_tasks.h"

#define LIMIT 180000 /* ms: the bound of every wait, far above what any takes */
#define STEPS 64L
#define NVT 4

static char s_dir[256];
static char s_base[16]; /* prefix of this process's interface and namespace names */
static int s_net[2];    /* 10.s_net[0].s_net[1].0/24 */
static long s_work = 1000000;

/* Runs a shell command; its exit status (0: it worked). */
static int s_sh(const char *fmt, ...)
{
    char cmd[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

#define SH(...) assert_int_equal(s_sh(__VA_ARGS__), 0)

/* The namespaces: <base>a and <base>b, each with eth0 = 10.x.y.11 and
 * .12, bridged to <base>br = 10.x.y.1 here. */
static int s_setup(void **state)
{
    (void)state;
    SH("ip link add %sbr type bridge && ip addr add 10.%d.%d.1/24 dev %sbr && "
       "ip link set %sbr up",
       s_base, s_net[0], s_net[1], s_base, s_base);
    for (int i = 0; i < 2; i++) {
        char ns = (char)('a' + i);
        SH("ip netns add %s%c", s_base, ns);
        SH("ip link add %sh%c type veth peer name eth0 netns %s%c", s_base, ns, s_base, ns);
        SH("ip link set %sh%c master %sbr up", s_base, ns, s_base);
        SH("ip netns exec %s%c sh -c 'ip addr add 10.%d.%d.%d/24 dev eth0 && ip link set eth0 up "
           "&& ip link set lo up'",
           s_base, ns, s_net[0], s_net[1], 11 + i);
    }
    return 0;
}

static int s_teardown(void **state)
{
    (void)state;
    for (int i = 0; i < 2; i++) { /* a veth pair goes with either end, at once */
        s_sh("ip link del %sh%c 2>/dev/null", s_base, 'a' + i);
        s_sh("ip netns del %s%c 2>/dev/null", s_base, 'a' + i);
    }
    s_sh("ip link del %sbr 2>/dev/null", s_base);
    return 0;
}

typedef struct net {
    mesh_peer p[3];  /* the client's peer here, the workers in a and b */
    mesh_peer nq[2]; /* netq in a and b, or pid 0 */
} net;

/* The namespace of worker i (1 or 2). */
static const char *s_ns(int i)
{
    static char name[2][24];
    snprintf(name[i - 1], sizeof name[i - 1], "%s%c", s_base, 'a' + i - 1);
    return name[i - 1];
}

static bool s_alive3(const char *js, void *ctx)
{
    (void)ctx;
    return js_count(js, "\"state\":\"alive\"") >= 3;
}

/* The mesh: the client's peer, then a worker in each namespace (netq
 * started first in each with `netq` arguments, when not NULL). */
static void s_mesh(net *n, const char *const *netq)
{
    memset(n, 0, sizeof *n);
    char listen[64], ep[2][64];
    snprintf(listen, sizeof listen, "tcp://10.%d.%d.1:0", s_net[0], s_net[1]);
    const char *a0[] = {"--listen", listen, "--cores", "-1", "--rate", "1000", NULL};
    if (mesh_start(&n->p[0], LEVPEER_PATH, s_dir, LIMIT, a0))
        fail_msg("the client's peer did not start");
    for (int i = 1; i <= 2; i++) {
        if (netq) {
            SH("ip netns exec %s iptables -A OUTPUT -o eth0 -j NFQUEUE --queue-num 0", s_ns(i));
            if (mesh_start_in(&n->nq[i - 1], s_ns(i), NETQ_PATH, s_dir, LIMIT, netq))
                fail_msg("netq did not start in %s", s_ns(i));
        }
        snprintf(ep[i - 1], sizeof ep[i - 1], "tcp://10.%d.%d.%d:0", s_net[0], s_net[1], 10 + i);
        const char *a[] = {"--listen", ep[i - 1], "--cores",  "1", "--rate",
                           "1000",     "--join",  n->p[0].ep, NULL};
        if (mesh_start_in(&n->p[i], s_ns(i), LEVPEER_PATH, s_dir, LIMIT, a))
            fail_msg("the worker in %s did not start", s_ns(i));
    }
    assert_true(mesh_wait(n->p[0].ep, s_alive3, NULL, LIMIT));
}

static void s_stop(net *n)
{
    mesh_stop_all(n->p, 3);
    for (int i = 0; i < 2; i++)
        if (n->nq[i].pid) {
            mesh_signal(&n->nq[i], SIGTERM); /* what it holds goes on */
            mesh_reap(&n->nq[i], LIMIT);
        }
}

typedef struct run {
    lev_vc *vc;
    mesh_reports rep;
    lev_vt_id id[NVT];
    char gate[sizeof s_dir + 32];
} run;

/* Opens a VC on both workers and starts NVT VTs of pc_gated. */
static void s_run(run *r, const net *n)
{
    static int runs;
    memset(r, 0, sizeof *r);
    mesh_reports_init(&r->rep);
    snprintf(r->gate, sizeof r->gate, "%s/gate-%d", s_dir, runs++);
    lev_vc_options o = {.workers = 2, .checkpoint_ms = 300, .peer = n->p[0].ep};
    int rc = lev_vc_open(&r->vc, &o);
    if (rc)
        fail_msg("lev_vc_open: %s: %s", lev_strerror(rc), lev_errdetail());
    assert_int_equal(lev_vc_on_report(r->vc, mesh_on_report, &r->rep), 0);
    pc_gate_arg arg = {.steps = STEPS, .step_work = s_work};
    memcpy(arg.gate, r->gate, strlen(r->gate) + 1);
    for (int i = 0; i < NVT; i++)
        assert_int_equal(lev_vt_start(r->vc, "pc_gated", &arg, sizeof arg, &r->id[i]), 0);
}

/* Each VT reported steps 8, 16, ... 64 once: 8 reports, the last 64. */
static void s_check_reports(run *r)
{
    pthread_mutex_lock(&r->rep.mu);
    assert_int_equal(r->rep.bad, 0);
    for (int i = 0; i < NVT; i++) {
        lev_vt_id v = r->id[i];
        if (r->rep.n[v] != 8 || r->rep.last[v] != STEPS)
            fail_msg("VT %llu: %d reports, the last %lld (want 8, the last %ld)",
                     (unsigned long long)v, r->rep.n[v], (long long)r->rep.last[v], STEPS);
    }
    pthread_mutex_unlock(&r->rep.mu);
}

/* Opens the gate and joins every VT: each result is the fault-free one,
 * given once. */
static void s_join(run *r)
{
    FILE *g = fopen(r->gate, "w");
    assert_non_null(g);
    fclose(g);
    uint64_t want = pc_steps(PC_SPIN_SEED, STEPS, s_work, NULL, 0);
    for (int i = 0; i < NVT; i++) {
        void *res = NULL;
        size_t len = 0;
        int rc = lev_vt_join(r->vc, r->id[i], &res, &len, LIMIT);
        if (rc)
            fail_msg("VT %llu: %s: %s", (unsigned long long)r->id[i], lev_strerror(rc),
                     lev_errdetail());
        assert_int_equal(len, sizeof want);
        assert_memory_equal(res, &want, sizeof want);
        free(res);
        assert_int_equal(lev_vt_join(r->vc, r->id[i], NULL, NULL, 0), LEV_ENOVT);
    }
    for (int i = 0; i < NVT; i++) /* every report came before its result */
        assert_true(mesh_wait_reports(&r->rep, r->id[i], 8, LIMIT));
    s_check_reports(r);
}

/* Every VT runs with an image held. */
static bool s_all_held(const char *js, void *ctx)
{
    const run *r = ctx;
    for (int i = 0; i < NVT; i++) {
        char st[32];
        if (!js_vt_str(js, r->id[i], "state", st, sizeof st) || strcmp(st, "running") ||
            js_vt_int(js, r->id[i], "checkpoint_age_ms") < 0)
            return false;
    }
    return true;
}

/* Every VT has had 3 images taken and held: they crossed the links. */
static bool s_imaged(const char *js, void *ctx)
{
    const run *r = ctx;
    for (int i = 0; i < NVT; i++)
        if (js_vt_int(js, r->id[i], "checkpoints") < 3)
            return false;
    return true;
}

/* A token ring of `places` VTs of r's VC, `rounds` times around: starts
 * them, gives each its place, lets place 0 go on once it reported half
 * way, and checks every VT's last token (msg_tasks.c, pc_ring). */
static void s_ring(run *r, int places, long rounds)
{
    msg_cfg cfg = {.n = places, .rounds = rounds};
    for (int i = 0; i < places; i++)
        assert_int_equal(lev_vt_start(r->vc, "pc_ring", NULL, 0, &cfg.ids[i]), 0);
    for (int i = 0; i < places; i++) {
        cfg.me = i;
        assert_int_equal(lev_vt_send(r->vc, cfg.ids[i], &cfg, sizeof cfg), 0);
    }
    assert_true(mesh_wait_reports(&r->rep, cfg.ids[0], 1, LIMIT));
    long open = 1;
    assert_int_equal(lev_vt_send(r->vc, cfg.ids[0], &open, sizeof open), 0);
    for (int i = 0; i < places; i++) {
        long *tok = NULL;
        size_t len = 0;
        int rc = lev_vt_join(r->vc, cfg.ids[i], (void **)&tok, &len, LIMIT);
        if (rc)
            fail_msg("ring place %d: %s: %s", i, lev_strerror(rc), lev_errdetail());
        long want = i == 0 ? rounds * places : (rounds - 1) * places + i;
        assert_int_equal(len, sizeof *tok);
        if (*tok != want)
            fail_msg("ring place %d ended with token %ld, not %ld", i, *tok, want);
        free(tok);
    }
    pthread_mutex_lock(&r->rep.mu);
    assert_int_equal(r->rep.n[cfg.ids[0]], 1); /* its report, once */
    pthread_mutex_unlock(&r->rep.mu);
}

/* A VC run through the faults the netq arguments make. */
static void s_faulty(const char *const *netq)
{
    net n;
    s_mesh(&n, netq);
    run r;
    s_run(&r, &n);
    assert_true(mesh_wait(n.p[0].ep, s_imaged, &r, LIMIT)); /* under the faults a while */
    s_join(&r);
    s_ring(&r, 6, 20);
    lev_vc_stats st;
    assert_int_equal(lev_vc_stats_get(r.vc, &st), 0);
    printf("# %d VTs ended; %llu checkpoints, %llu resumes, %llu restarts, %llu peers lost\n",
           (int)st.vts_ended, (unsigned long long)st.checkpoints, (unsigned long long)st.resumes,
           (unsigned long long)st.restarts, (unsigned long long)st.lost_peers);
    assert_int_equal(st.vts_ended, NVT + 6);
    assert_int_equal(lev_vc_close(&r.vc), 0);
    s_stop(&n);
}

static void t_delay(void **state)
{
    (void)state;
    const char *netq[] = {"--delay", "50", "--jitter", "10", "--seed", "7", NULL};
    s_faulty(netq);
}

static void t_loss(void **state)
{
    (void)state;
    const char *netq[] = {"--loss", "5", "--seed", "11", NULL};
    s_faulty(netq);
}

typedef struct want_moved {
    uint64_t vt;
    char gone[128];
} want_moved;

/* VT vt runs, on another host than `gone`, in a later epoch. */
static bool s_moved(const char *js, void *ctx)
{
    want_moved *w = ctx;
    char host[128], st[32];
    return js_vt_str(js, w->vt, "host", host, sizeof host) && *host && strcmp(host, w->gone) &&
           js_vt_int(js, w->vt, "epoch") >= 2 && js_vt_str(js, w->vt, "state", st, sizeof st) &&
           !strcmp(st, "running");
}

typedef struct want_state {
    const char *ep, *state;
} want_state;

static bool s_state_is(const char *js, void *ctx)
{
    want_state *w = ctx;
    char st[32] = "";
    js_peer_state(js, w->ep, st, sizeof st);
    return !strcmp(st, w->state);
}

/* None of the peer's executors runs a VT. */
static bool s_runs_none(const char *js, void *ctx)
{
    (void)ctx;
    for (const char *r = strstr(js, "\"running\":["); r; r = strstr(r + 1, "\"running\":["))
        if (r[strlen("\"running\":[")] != ']')
            return false;
    return true;
}

/* The VC's workers include ctx (an endpoint). */
static bool s_worker_again(const char *js, void *ctx)
{
    bool has = false;
    js_workers(js, ctx, &has);
    return has;
}

/* Cuts worker i's namespace off (on = true) or lets it in again. */
static void s_partition(int i, bool on)
{
    const char *op = on ? "-I" : "-D";
    SH("ip netns exec %s sh -c 'iptables %s INPUT -i eth0 -j DROP && "
       "iptables %s OUTPUT -o eth0 -j DROP'",
       s_ns(i), op, op);
}

static void t_partition(void **state)
{
    (void)state;
    net n;
    s_mesh(&n, NULL);
    run r;
    s_run(&r, &n);
    assert_true(mesh_wait(n.p[0].ep, s_all_held, &r, LIMIT));
    want_moved mv = {.vt = r.id[0]};
    char *js = mesh_status(n.p[0].ep, LIMIT);
    assert_non_null(js);
    assert_true(js_vt_str(js, mv.vt, "host", mv.gone, sizeof mv.gone));
    free(js);
    int cut = !strcmp(mv.gone, n.p[1].ep) ? 1 : 2;
    assert_string_equal(mv.gone, n.p[cut].ep);
    s_partition(cut, true);
    /* the other side declares it dead and resumes its VTs from their
     * images; they end there while the cut-off copies still run */
    assert_true(mesh_wait(n.p[0].ep, s_moved, &mv, LIMIT));
    want_state dead = {n.p[cut].ep, "dead"};
    assert_true(mesh_wait(n.p[0].ep, s_state_is, &dead, LIMIT));
    s_join(&r);
    s_partition(cut, false);
    /* healed: the peer is alive in the mesh again, and a worker of the VC
     * again (its quota refilled); the copies it ran were fenced, and
     * nothing of them reached the client */
    want_state alive = {n.p[cut].ep, "alive"};
    assert_true(mesh_wait(n.p[0].ep, s_state_is, &alive, LIMIT));
    assert_true(mesh_wait(n.p[0].ep, s_worker_again, n.p[cut].ep, LIMIT));
    assert_true(mesh_wait(n.p[cut].ep, s_runs_none, NULL, LIMIT));
    lev_vc_stats st;
    assert_int_equal(lev_vc_stats_get(r.vc, &st), 0);
    assert_int_equal(st.vts_ended, NVT);
    assert_true(st.lost_peers >= 1 && st.resumes >= 1);
    s_check_reports(&r);
    assert_int_equal(lev_vc_close(&r.vc), 0);
    s_stop(&n);
}

/* Why this machine cannot run the tests, or NULL. */
static const char *s_cannot(void)
{
    if (geteuid() != 0)
        return "not root (network namespaces need it)";
    if (s_sh("command -v ip >/dev/null && command -v iptables >/dev/null"))
        return "ip or iptables is not installed";
    char ns[32];
    snprintf(ns, sizeof ns, "%sprobe", s_base);
    if (s_sh("ip netns add %s 2>/dev/null", ns))
        return "cannot make a network namespace (ip netns add)";
    int q = s_sh("ip netns exec %s iptables -A OUTPUT -j NFQUEUE --queue-num 0 2>/dev/null", ns);
    s_sh("ip netns del %s", ns);
    return q ? "iptables has no NFQUEUE target here" : NULL;
}

int main(int argc, char **argv)
{
    int pid = (int)getpid();
    snprintf(s_base, sizeof s_base, "lv%d", pid % 1000000);
    s_net[0] = 200 + pid % 50;
    s_net[1] = (pid / 50) % 250;
    const char *why = s_cannot();
    if (why) {
        printf("test_net: skipped: %s\n", why);
        return 77;
    }
    if (mesh_workdir(s_dir, sizeof s_dir, "net"))
        return 1;
    setenv("LEV_PEER_TIMEOUT_MS", "5000", 0);
    setenv("LEV_EXEC_NICE", "0", 0);
    const struct CMUnitTest all[] = {
        cmocka_unit_test_setup_teardown(t_delay, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(t_loss, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(t_partition, s_setup, s_teardown),
    };
    return mesh_run_tests(all, sizeof all / sizeof *all, argc, argv, s_dir);
}
