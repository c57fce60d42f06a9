/* test_tsp_run.c - lev-tsp, the TSP sample's client, run as users run it:
 * on its embedded peer, on a 3-peer loopback mesh, with a worker killed
 * (SIGKILL) mid-run, and on bad input. Every run must end with a valid
 * TOUR file whose recomputed length is the printed one, and the same
 * options must give the same best length as the sequential reference
 * lev-tsp-seq, wherever and however the run went. Waits are for events
 * (a process's exit, a progress file, a peer's status), bounded in time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../pc/mesh.h"
#include "tsplib.h"

static char s_dir[256];
static int s_serial;

static uint64_t s_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A program run as a child, its standard output and error in files. */
typedef struct run {
    pid_t pid;
    int status;
    char out[300], err[300];
} run;

/* Starts prog with args (NULL-terminated), LEV_PEER set to peer (NULL:
 * unset, the embedded peer). */
static void s_spawn(run *r, const char *peer, const char *const *args)
{
    memset(r, 0, sizeof *r);
    int id = s_serial++;
    snprintf(r->out, sizeof r->out, "%s/run%d.out", s_dir, id);
    snprintf(r->err, sizeof r->err, "%s/run%d.err", s_dir, id);
    r->pid = fork();
    assert_true(r->pid >= 0);
    if (r->pid == 0) {
        int o = open(r->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(r->err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0)
            _exit(127);
        dup2(o, 1);
        dup2(e, 2);
        if (peer)
            setenv("LEV_PEER", peer, 1);
        else
            unsetenv("LEV_PEER");
        execv(args[0], (char *const *)args);
        _exit(127);
    }
}

/* Waits at most limit_ms for r to exit; true if it did. */
static bool s_wait(run *r, int limit_ms)
{
    uint64_t end = s_ms() + (uint64_t)limit_ms;
    for (int i = 0; i < 1000000 && r->pid; i++) {
        pid_t p = waitpid(r->pid, &r->status, WNOHANG);
        if (p == r->pid) {
            r->pid = 0;
            return true;
        }
        if (s_ms() > end)
            break;
        usleep(10000);
    }
    return r->pid == 0;
}

/* Prints a file to stderr (for a failing test). */
static void s_cat(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[512];
    fprintf(stderr, "---- %s\n", path);
    for (int i = 0; f && i < 60 && fgets(line, sizeof line, f); i++)
        fputs(line, stderr);
    if (f)
        fclose(f);
}

/* Waits at most limit_ms for r's end and returns its exit status; fails
 * the test (killing it) if it does not end. */
static int s_finish(run *r, int limit_ms)
{
    if (!s_wait(r, limit_ms)) {
        kill(r->pid, SIGKILL);
        s_wait(r, 5000);
        s_cat(r->out);
        s_cat(r->err);
        fail_msg("the program did not end within %d ms", limit_ms);
    }
    return WIFEXITED(r->status) ? WEXITSTATUS(r->status) : 128 + WTERMSIG(r->status);
}

/* Runs prog to its end (at most limit_ms) and returns its exit status. */
static int s_run(run *r, const char *peer, const char *const *args, int limit_ms)
{
    s_spawn(r, peer, args);
    return s_finish(r, limit_ms);
}

/* The last line of a file into line. */
static void s_last_line(const char *path, char *line, size_t cap)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char buf[1024];
    line[0] = '\0';
    while (fgets(buf, sizeof buf, f))
        if (buf[0] != '\n' && buf[0] != '\r')
            snprintf(line, cap, "%s", buf);
    fclose(f);
}

/* Checks a finished run: exit 0, last line `best L gap G tour FILE`, FILE
 * a valid TOUR of inst whose recomputed length is L; returns L. */
static int64_t s_check_run(const run *r, int code, const char *instance)
{
    if (code != 0) {
        s_cat(r->out);
        s_cat(r->err);
        fail_msg("the run ended with status %d", code);
    }
    char line[1024], tourfile[512], gap[64];
    long long len = -1;
    s_last_line(r->out, line, sizeof line);
    if (sscanf(line, "best %lld gap %63s tour %511s", &len, gap, tourfile) != 3) {
        s_cat(r->out);
        fail_msg("unexpected last line: %s", line);
    }
    tsp_instance inst;
    char err[256];
    assert_int_equal(tsp_load(instance, &inst, err, sizeof err), 0);
    int32_t *tour = malloc((size_t)inst.n * sizeof *tour);
    assert_non_null(tour);
    if (tsp_tour_read(&inst, tourfile, tour, err, sizeof err) != 0)
        fail_msg("the tour file is not valid: %s", err);
    assert_int_equal(tsp_tour_check(&inst, tour, err, sizeof err), 0);
    assert_int_equal(tsp_tour_length(&inst, tour), len);
    free(tour);
    tsp_free(&inst);
    return len;
}

/* The options of a small run on inst, its tour to FILE (a fresh name). */
#define RUN_OPTS "--seed", "7", "--budget", "1600", "--islands", "4", "--epoch-gens", "20"

static const char *s_path(const char *fmt, ...)
{
    static char bufs[8][300];
    static int next;
    char *b = bufs[next++ % 8];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof bufs[0], fmt, ap);
    va_end(ap);
    return b;
}

/* The best length lev-tsp-seq finds with RUN_OPTS on instance. */
static int64_t s_seq(const char *instance)
{
    run r;
    const char *tour = s_path("%s/seq%d.tour", s_dir, s_serial);
    const char *svg = s_path("%s/seq%d.svg", s_dir, s_serial);
    const char *args[] = {LEVTSPSEQ_PATH, instance, RUN_OPTS,  "--tour-out", tour,
                          "--svg",        svg,      "--quiet", NULL};
    return s_check_run(&r, s_run(&r, NULL, args, 240000), instance);
}

/* Starts a mesh: peer 0 for the client (it offers `client_cores`), then
 * `workers` peers of one core each joining it. Peer 0 carries the VTs'
 * messages as LEV_TEST_MESSAGES says: direct (between executors) or
 * relay (through it, the default). */
static void s_mesh(mesh_peer *p, int workers, const char *client_cores)
{
    const char *e = getenv("LEV_TEST_MESSAGES");
    const char *a0[] = {"--listen",
                        mesh_listen(),
                        "--cores",
                        client_cores,
                        "--period-ms",
                        "200",
                        "--probe-timeout-ms",
                        "150",
                        "--suspect-ms",
                        "600",
                        "--log-level",
                        "warn",
                        "--messages",
                        e && !strcmp(e, "direct") ? "direct" : "relay",
                        NULL};
    assert_int_equal(mesh_start(&p[0], LEVPEER_PATH, s_dir, 20000, a0), 0);
    for (int i = 1; i <= workers; i++) {
        const char *a[] = {"--listen",    mesh_listen(),  "--cores",
                           "1",           "--join",       p[0].ep,
                           "--period-ms", "200",          "--probe-timeout-ms",
                           "150",         "--suspect-ms", "600",
                           "--log-level", "warn",         NULL};
        assert_int_equal(mesh_start(&p[i], LEVPEER_PATH, s_dir, 20000, a), 0);
    }
}

#define INSTANCE DATA_DIR "/berlin52.tsp"

/* On the embedded peer: a valid tour, the same length as the sequential
 * reference's; the picture is written where the program says. */
static void t_embedded(void **state)
{
    (void)state;
    run r;
    const char *tour = s_path("%s/emb.tour", s_dir), *svg = s_path("%s/emb.svg", s_dir);
    const char *args[] = {LEVTSP_PATH, INSTANCE, RUN_OPTS, "--tour-out", tour, "--svg", svg, NULL};
    int64_t len = s_check_run(&r, s_run(&r, NULL, args, 240000), INSTANCE);
    struct stat st;
    assert_int_equal(stat(svg, &st), 0);
    assert_true(st.st_size > 100);
    assert_int_equal(len, s_seq(INSTANCE));
}

/* The counts of lev-tsp's `units N committed by V VTs, B run twice as
 * backups, R migrants read ...` line in file `path`: units and reads. */
static void s_units_line(const char *path, int *units, int *reads)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char buf[1024];
    *units = *reads = -1;
    while (fgets(buf, sizeof buf, f)) {
        int v, b;
        if (sscanf(buf, "units %d committed by %d VTs, %d run twice as backups, %d migrants read",
                   units, &v, &b, reads) == 4)
            break;
    }
    fclose(f);
    if (*units < 0 || *reads < 0) {
        s_cat(path);
        fail_msg("no line of units in %s", path);
    }
}

/* The trace of a run (--trace-file): one well-formed line per unit,
 * `SECONDS VT ISLAND EPOCH UNITS_DONE`, the units done 1..units once each,
 * seconds that never go back, VTs and islands in range. */
static void s_check_trace(const char *path, int units, int islands, int vts)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *seen = calloc((size_t)units + 1, 1);
    assert_non_null(seen);
    char line[256];
    int n = 0;
    double last = 0;
    while (fgets(line, sizeof line, f)) {
        double t;
        unsigned long long vt;
        int island, epoch;
        long long done;
        char extra;
        if (sscanf(line, "%lf %llu %d %d %lld %c", &t, &vt, &island, &epoch, &done, &extra) != 5 ||
            t < last || vt < 2 || vt >= 2 + (unsigned long long)vts || island < 0 ||
            island >= islands || epoch < 0 || done < 1 || done > units || seen[done])
            fail_msg("trace line %d is wrong: %s", n + 1, line);
        seen[done] = 1;
        last = t;
        n++;
    }
    fclose(f);
    free(seen);
    if (n != units)
        fail_msg("%d trace lines for %d units", n, units);
}

/* On a mesh of 3 loopback peers: the same best length, and migrants went
 * in messages to the VTs that needed them (not every one was read from
 * its global variable); --trace-file gives one line per unit. */
static void t_mesh(void **state)
{
    (void)state;
    mesh_peer p[3];
    s_mesh(p, 2, "1");
    run r;
    const char *tour = s_path("%s/mesh.tour", s_dir), *svg = s_path("%s/mesh.svg", s_dir);
    const char *trace = s_path("%s/mesh.trace", s_dir);
    const char *args[] = {LEVTSP_PATH, INSTANCE, RUN_OPTS, "--tour-out",   tour,  "--svg",
                          svg,         "--vts",  "3",      "--trace-file", trace, NULL};
    int64_t len = s_check_run(&r, s_run(&r, p[0].ep, args, 240000), INSTANCE);
    mesh_stop_all(p, 3);
    assert_int_equal(len, s_seq(INSTANCE));
    int units, reads;
    s_units_line(r.out, &units, &reads);
    if (units != 80 || reads >= units)
        fail_msg("%d units committed (80 expected), %d migrants read from globals", units, reads);
    s_check_trace(trace, units, 4, 3);
}

/* What the kill waits for: every VT of the run holds an image. */
static bool s_all_imaged(const char *json, void *ctx)
{
    (void)ctx;
    return strstr(json, "\"vts\":[{") && !strstr(json, "\"checkpoint_age_ms\":-1");
}

/* The units done, from the progress file (-1 if there is none yet). */
static long long s_units_done(const char *path, long long *total)
{
    FILE *f = fopen(path, "r");
    long long done = -1;
    *total = -1;
    if (f) {
        if (fscanf(f, "%lld %lld", &done, total) != 2)
            done = -1;
        fclose(f);
    }
    return done;
}

/* A worker killed with SIGKILL once a quarter of the units are done and
 * every VT holds an image: its VTs resume elsewhere and the run ends with
 * a valid tour of the same length as the fault-free run's. */
static void t_kill(void **state)
{
    (void)state;
    mesh_peer p[4];
    s_mesh(p, 3, "-1");
    run r;
    const char *tour = s_path("%s/kill.tour", s_dir), *svg = s_path("%s/kill.svg", s_dir);
    const char *prog = s_path("%s/kill.progress", s_dir);
    const char *inst = DATA_DIR "/kroA100.tsp";
    const char *args[] = {LEVTSP_PATH,
                          inst,
                          "--seed",
                          "5",
                          "--budget",
                          "25600",
                          "--islands",
                          "4",
                          "--epoch-gens",
                          "40",
                          "--vts",
                          "3",
                          "--checkpoint-ms",
                          "200",
                          "--tour-out",
                          tour,
                          "--svg",
                          svg,
                          "--progress-file",
                          prog,
                          NULL};
    s_spawn(&r, p[0].ep, args);
    long long done = -1, total = -1;
    uint64_t end = s_ms() + 180000;
    for (int i = 0; i < 100000 && s_ms() < end; i++) {
        done = s_units_done(prog, &total);
        if (total > 0 && done * 4 >= total)
            break;
        assert_int_equal(waitpid(r.pid, &r.status, WNOHANG), 0);
        usleep(10000);
    }
    assert_true(total > 0 && done * 4 >= total);
    assert_true(mesh_wait(p[0].ep, s_all_imaged, NULL, 60000));
    char *json = mesh_status(p[0].ep, 5000);
    assert_non_null(json);
    int victim = 1, most = -1;
    for (int i = 1; i <= 3; i++) {
        char needle[200];
        snprintf(needle, sizeof needle, "\"host\":\"%s\"", p[i].ep);
        int c = js_count(json, needle);
        if (c > most) {
            most = c;
            victim = i;
        }
    }
    free(json);
    assert_true(most > 0);
    done = s_units_done(prog, &total);
    if (done >= total)
        fail_msg("the run ended before the worker could be killed mid-run");
    mesh_signal(&p[victim], SIGKILL);
    assert_true(mesh_reap(&p[victim], 10000));
    int64_t len = s_check_run(&r, s_finish(&r, 240000), inst);
    char line[1024];
    FILE *f = fopen(r.out, "r");
    bool resumed = false;
    while (f && fgets(line, sizeof line, f))
        resumed |= strstr(line, "resumed elsewhere") != NULL;
    if (f)
        fclose(f);
    if (!resumed)
        s_cat(r.out);
    assert_true(resumed);
    mesh_stop_all(p, 4);
    const char *seq[] = {LEVTSPSEQ_PATH, inst,
                         "--seed",       "5",
                         "--budget",     "25600",
                         "--islands",    "4",
                         "--epoch-gens", "40",
                         "--tour-out",   s_path("%s/kseq.tour", s_dir),
                         "--svg",        s_path("%s/kseq.svg", s_dir),
                         "--quiet",      NULL};
    run q;
    assert_int_equal(s_check_run(&q, s_run(&q, NULL, seq, 240000), inst), len);
}

/* Bad input: exit status 2 and a message that names the problem. */
static void t_bad_input(void **state)
{
    (void)state;
    const char *empty = s_path("%s/empty.tsp", s_dir);
    FILE *f = fopen(empty, "w");
    assert_non_null(f);
    fclose(f);
    const char *badtype = s_path("%s/explicit.tsp", s_dir);
    f = fopen(badtype, "w");
    assert_non_null(f);
    fputs("NAME : x\nTYPE : TSP\nDIMENSION : 5\nEDGE_WEIGHT_TYPE : EXPLICIT\n", f);
    fclose(f);
    struct {
        const char *arg, *opt, *val, *expect;
    } cases[] = {
        {DATA_DIR "/no-such-file.tsp", NULL, NULL, "no-such-file.tsp"},
        {empty, NULL, NULL, "empty"},
        {badtype, NULL, NULL, "EXPLICIT"},
        {INSTANCE, "--budget", "-3", "--budget"},
        {INSTANCE, "--islands", "x", "--islands"},
        {INSTANCE, "--trace-file", DATA_DIR "/no-such-dir/t.trace", "--trace-file"},
        {INSTANCE, "--trace-file", "", "--trace-file"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run r;
        const char *args[] = {LEVTSP_PATH, cases[i].arg, cases[i].opt, cases[i].val, NULL};
        assert_int_equal(s_run(&r, NULL, args, 60000), 2);
        char line[1024];
        FILE *e = fopen(r.err, "r");
        bool named = false;
        while (e && fgets(line, sizeof line, e))
            named |= strstr(line, cases[i].expect) != NULL;
        if (e)
            fclose(e);
        if (!named)
            s_cat(r.err);
        assert_true(named);
    }
}

int main(int argc, char **argv)
{
    if (mesh_workdir(s_dir, sizeof s_dir, "tsp"))
        return 1;
    setenv("LEV_PEER_TIMEOUT_MS", "5000", 0);
    setenv("LEV_EXEC_NICE", "0", 0);
    const struct CMUnitTest all[] = {
        cmocka_unit_test(t_embedded),
        cmocka_unit_test(t_mesh),
        cmocka_unit_test(t_kill),
        cmocka_unit_test(t_bad_input),
    };
    return mesh_run_tests(all, sizeof all / sizeof *all, argc, argv, s_dir);
}
