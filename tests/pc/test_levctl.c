/* test_levctl.c - levctl (LEVCTL_PATH) run against fake peers
 * (fake_peer.h) that answer S_STATUS with documents the test writes: its
 * arguments, a peer where nothing listens, the readable report and the
 * JSON document of a mesh merged from several peers (the JSON output fed
 * back to levctl as a status must be accepted), and malformed documents,
 * each refused with the fault named; the JSON string escaper peers and
 * levctl write with (status.h). With LEVPEER_PATH (levpeer is built),
 * also a mesh of two levpeer processes, one running a VT of this program's
 * VC, seen from the other.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "auth.h"
#include "fake_peer.h"
#include "status.h"
#ifdef LEVPEER_PATH
#include <sys/stat.h>

#include "leverage.h"
#include "mesh.h"
#endif

#ifndef LEVCTL_PATH
#error "define LEVCTL_PATH"
#endif

extern char **environ;

/* What a run of levctl printed and how it ended. */
typedef struct run {
    char out[16384], err[4096];
    int status; /* exit status, or -1 if killed */
    uint64_t ms;
} run;

/* Appends what fd has to read to buf; false at end of file. */
static bool s_drain(int fd, char *buf, size_t cap)
{
    size_t len = strlen(buf);
    ssize_t n = read(fd, buf + len, cap - 1 - len);
    if (n <= 0)
        return n < 0 && errno == EINTR;
    buf[len + (size_t)n] = '\0';
    return len + (size_t)n < cap - 1;
}

/* Runs levctl with the arguments of args (NULL-terminated), at most 20 s. */
static run *s_levctl(const char *const *args)
{
    const char *argv[16] = {LEVCTL_PATH};
    int argc = 1;
    for (const char *const *a = args; *a && argc < 15; a++)
        argv[argc++] = *a;
    argv[argc] = NULL;

    run *r = calloc(1, sizeof *r);
    int out[2], err[2];
    assert_non_null(r);
    assert_int_equal(pipe(out), 0);
    assert_int_equal(pipe(err), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    posix_spawn_file_actions_addclose(&fa, err[0]);
    pid_t pid;
    uint64_t t0 = fp_now_ms();
    assert_int_equal(posix_spawn(&pid, LEVCTL_PATH, &fa, NULL, (char **)argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    close(err[1]);
    struct pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    while ((fds[0].fd >= 0 || fds[1].fd >= 0) && fp_now_ms() - t0 < 20000) {
        if (poll(fds, 2, 100) <= 0)
            continue;
        for (int i = 0; i < 2; i++)
            if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP)) &&
                !s_drain(fds[i].fd, i ? r->err : r->out, i ? sizeof r->err : sizeof r->out)) {
                close(fds[i].fd);
                fds[i].fd = -1;
            }
    }
    for (int i = 0; i < 2; i++)
        if (fds[i].fd >= 0) {
            kill(pid, SIGKILL);
            close(fds[i].fd);
        }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    r->ms = fp_now_ms() - t0;
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

/* Asserts that text contains part. */
static void s_has(const char *text, const char *part)
{
    if (!strstr(text, part))
        fail_msg("'%s' lacks '%s'", text, part);
}

/* ===================================================================
 * Arguments and unreachable peers
 * =================================================================== */

/* Bad arguments: the usage and exit status 2; --help: the usage, 0. */
/* keygen writes a pair (private) and its public half, prints the key,
 * and replaces no file; auth.h reads both back. */
static void t_keygen(void **state)
{
    (void)state;
    char dir[64], base[128], path[160];
    snprintf(dir, sizeof dir, "/tmp/lev-test-keygen-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(base, sizeof base, "%s/alice", dir);
    run *r = s_levctl((const char *[]){"keygen", base, NULL});
    assert_int_equal(r->status, 0);
    s_has(r->out, "alice.pub: public key ");
    pc_keypair k;
    char err[256];
    snprintf(path, sizeof path, "%s.key", base);
    assert_int_equal(pc_key_read(path, &k, err, sizeof err), 0);
    assert_int_equal(strlen(k.sec), PC_KEY_Z85);
    s_has(r->out, k.pub);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 077, 0);
    free(r);
    r = s_levctl((const char *[]){"keygen", base, NULL});
    assert_int_equal(r->status, 1);
    s_has(r->err, "alice.key: cannot create it: a file is there already (not replaced)");
    free(r);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void t_usage(void **state)
{
    (void)state;
    unsetenv("LEV_PEER");
    struct {
        const char *a[5];
        const char *says;
    } bad[] = {
        {{NULL}, "no command given"},
        {{"frob", NULL}, "unknown command 'frob'"},
        {{"status", NULL}, "no peer given (--peer or LEV_PEER)"},
        {{"status", "--peer", NULL}, "--peer needs a value"},
        {{"status", "--timeout", "0", NULL}, "--timeout '0' is not a positive number"},
        {{"status", "--timeout", "5x", NULL}, "--timeout '5x'"},
        {{"status", "--jason", NULL}, "unknown argument '--jason'"},
        {{"keygen", NULL}, "keygen takes one NAME"},
        {{"keygen", "a", "b", NULL}, "keygen takes one NAME"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        run *r = s_levctl(bad[i].a);
        assert_int_equal(r->status, 2);
        s_has(r->err, bad[i].says);
        s_has(r->err, "usage: levctl status");
        free(r);
    }
    run *r = s_levctl((const char *[]){"--help", NULL});
    assert_int_equal(r->status, 0);
    s_has(r->out, "usage: levctl status");
    free(r);
}

/* A peer where nothing listens, or that does not answer S_STATUS: exit 1
 * with one line naming it, once the timeout has passed. */
static void t_unreachable(void **state)
{
    (void)state;
    char ep[PC_ENDPOINT_MAX], want[256];
    fp_dead_endpoint(ep);
    run *r = s_levctl((const char *[]){"status", "--peer", ep, "--timeout", "300", NULL});
    assert_int_equal(r->status, 1);
    snprintf(want, sizeof want, "levctl: no answer from %s within 300 ms\n", ep);
    assert_string_equal(r->err, want);
    assert_true(r->ms >= 300 && r->ms < 5000);
    free(r);

    fake_peer *fp = fp_new(FP_NORMAL); /* no status set: it does not answer */
    setenv("LEV_PEER", fp_endpoint(fp), 1);
    r = s_levctl((const char *[]){"status", "--timeout", "200", NULL});
    unsetenv("LEV_PEER");
    assert_int_equal(r->status, 1);
    s_has(r->err, "no answer from");
    assert_int_equal(fp_seen_get(fp).statuses, 1);
    free(r);
    r = s_levctl((const char *[]){"status", "--peer", "nonsense", NULL});
    assert_int_equal(r->status, 1);
    s_has(r->err, "malformed endpoint 'nonsense'");
    free(r);
    fp_destroy(&fp);
}

/* ===================================================================
 * A mesh
 * =================================================================== */

/* The status documents of a mesh of peers a and b (alive), c (dead) and
 * d (listed alive, but nothing listens there). a deploys VC "aa01", b
 * deploys VC "bb02"; b lists VC "aa01" too, which must appear once. */
typedef struct mesh {
    fake_peer *a, *b;
    char d[PC_ENDPOINT_MAX];
    char doc_a[8192], doc_b[8192];
} mesh;

static const char *s_vc_a =
    "{\"id\":\"aa01\",\"client\":\"client:77:ab\",\"quota\":3,\"checkpoint_ms\":2000,"
    "\"replicas\":1,\"workers\":[\"%s\"],\"placement\":[{\"worker\":\"%s\",\"cores\":4,"
    "\"rate\":4321,\"vts\":1,\"executor\":7}],\"recovery\":{\"barriers\":2,"
    "\"last_barrier_ms\":15,\"max_barrier_ms\":40,\"fixed_positions\":9},"
    "\"messages\":{\"delivered\":71,\"duplicates\":3,\"held_back\":5},"
    "\"puts\":{\"applied\":40,\"stale\":2},\"global_reads\":{\"answered_at_workers\":12,"
    "\"asked_again\":1,\"pushes\":30,\"push_bytes\":960,\"subscribed\":4,\"unsubscribed\":2},"
    "\"globals\":[{\"name\":\"g\",\"bytes\":8,"
    "\"version\":0,\"owner\":2,\"waiters\":3},{\"name\":\"h\",\"bytes\":1,\"version\":7,"
    "\"owner\":0,\"waiters\":0}],"
    "\"vts\":[{\"id\":2,\"task\":\"pc_spin\","
    "\"state\":\"running\",\"host\":\"%s\",\"placed\":\"a free core\",\"epoch\":1,"
    "\"checkpoint_age_ms\":340,"
    "\"holders\":[\"%s\",\"tcp://10.0.0.9:7000\"]},{\"id\":3,\"task\":\"caf\\u00e9 "
    "\\ud83d\\ude00\",\"state\":\"done\",\"host\":\"%s\",\"epoch\":2,\"checkpoint_age_ms\":-1,"
    "\"holders\":[]}]}";

static void s_mesh_new(mesh *m)
{
    char vc_a[2048];
    m->a = fp_new(FP_NORMAL);
    m->b = fp_new(FP_NORMAL);
    fp_dead_endpoint(m->d);
    const char *a = fp_endpoint(m->a), *b = fp_endpoint(m->b);
    snprintf(vc_a, sizeof vc_a, s_vc_a, b, b, b, a, b);
    snprintf(m->doc_a, sizeof m->doc_a,
             "{\"peer\":\"%s\",\"version\":1,\"peers\":["
             "{\"endpoint\":\"%s\",\"state\":\"alive\",\"cores\":2,\"rate\":12345,\"load\":3,"
             "\"arch\":\"x86_64\",\"byte_order\":\"little\",\"version\":1,\"incarnation\":2},"
             "{\"endpoint\":\"%s\",\"state\":\"alive\",\"cores\":4,\"rate\":999,\"load\":0,"
             "\"arch\":\"aarch64\",\"byte_order\":\"little\",\"version\":1,\"incarnation\":1},"
             "{\"endpoint\":\"tcp://10.0.0.9:7000\",\"state\":\"dead\",\"cores\":1},"
             "{\"endpoint\":\"%s\",\"state\":\"alive\"}],"
             "\"vcs\":[%s],\"executors\":[{\"vc\":\"bb02\",\"deployer\":\"%s\",\"pid\":123,"
             "\"vts\":4}],\"held\":{\"images\":3,\"bytes\":12345}}",
             a, a, b, m->d, vc_a, b);
    snprintf(m->doc_b, sizeof m->doc_b,
             "{\"peer\":\"%s\",\"version\":1,\"peers\":[],\"vcs\":[%s,"
             "{\"id\":\"bb02\",\"client\":\"client:88:cd\",\"vts\":[]}]}",
             b, vc_a);
    fp_set_status(m->a, m->doc_a);
    fp_set_status(m->b, m->doc_b);
}

static void s_mesh_destroy(mesh *m)
{
    fp_destroy(&m->a);
    fp_destroy(&m->b);
}

/* The report: the peers' table, the VCs of every peer that answered (once
 * each) with their VTs, and the peer that did not answer named. */
static void t_report(void **state)
{
    (void)state;
    mesh m;
    s_mesh_new(&m);
    run *r =
        s_levctl((const char *[]){"status", "--peer", fp_endpoint(m.a), "--timeout", "500", NULL});
    assert_int_equal(r->status, 0);
    s_has(r->out, "PEER");
    s_has(r->out, "x86_64");
    s_has(r->out, "aarch64");
    s_has(r->out, "dead");
    s_has(r->out, "12345");
    s_has(r->out, "VC aa01");
    s_has(r->out, "VC bb02");
    s_has(r->out, "pc_spin");
    s_has(r->out, "running");
    s_has(r->out, "340 ms");
    s_has(r->out, "PLACED");
    s_has(r->out, "a free core"); /* why VT 2 runs where it does */
    s_has(r->out, "WORKER");      /* the placement table: cores, rate, VTs, executor */
    s_has(r->out, "EXEC");
    s_has(r->out, "recovery: 2 barriers (last 15 ms, longest 40 ms), 9 positions fixed");
    s_has(r->out, "messages: 71 delivered, 3 duplicates dropped, 5 held under a lock; puts: 40 "
                  "applied, 2 not above the version");
    s_has(r->out, "global variables: 2, 1 locked, 3 requests waiting");
    s_has(r->out, "global reads: 12 answered at the workers (1 asked again); 30 changes pushed "
                  "(960 bytes whole) to 4 subscriptions, 2 dropped");
    s_has(r->out, "4321");
    s_has(r->out, "none"); /* checkpoint age -1: no image yet */
    s_has(r->out, "café 😀");
    s_has(r->out, "no virtual threads");
    s_has(r->out, "pid 123");
    s_has(r->out, "held images: 3 (12345 bytes)");
    s_has(r->out, "not shown: the VCs of");
    s_has(r->err, m.d);
    assert_null(strstr(strstr(r->out, "VC aa01") + 1, "VC aa01")); /* once */
    assert_int_equal(fp_seen_get(m.a).statuses, 1);
    assert_int_equal(fp_seen_get(m.b).statuses, 1);
    free(r);
    s_mesh_destroy(&m);
}

/* --json: one merged document, which levctl itself accepts as a status. */
static void t_json(void **state)
{
    (void)state;
    mesh m;
    s_mesh_new(&m);
    run *r = s_levctl(
        (const char *[]){"status", "--peer", fp_endpoint(m.a), "--json", "--timeout", "500", NULL});
    assert_int_equal(r->status, 0);
    s_has(r->out, "\"id\": \"aa01\"");
    s_has(r->out, "\"id\": \"bb02\"");
    s_has(r->out, "\"unanswered\": [");
    s_has(r->out, "café 😀");
    assert_null(strstr(strstr(r->out, "\"aa01\"") + 1, "\"id\": \"aa01\""));

    fake_peer *echo = fp_new(FP_NORMAL);
    fp_set_status(echo, r->out);
    run *again = s_levctl((const char *[]){"status", "--peer", fp_endpoint(echo), "--json",
                                           "--timeout", "500", NULL});
    /* b listed as alive there too: asked again, its VCs already merged. */
    assert_int_equal(again->status, 0);
    s_has(again->out, "\"id\": \"bb02\"");
    free(again);
    fp_destroy(&echo);
    free(r);
    s_mesh_destroy(&m);
}

/* Asserts that pc_json_str writes in as the literal want. */
static void s_escaped(const char *in, const char *want)
{
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_json_str(&w, in);
    assert_int_equal(w.err, 0);
    if (w.len != strlen(want) || memcmp(w.data, want, w.len))
        fail_msg("escaped as '%.*s', not '%s'", (int)w.len, (const char *)w.data, want);
    pc_wbuf_free(&w);
}

/* The one JSON string escaper: quotes, backslashes and control bytes
 * escaped, well-formed UTF-8 copied, each byte of a malformed sequence
 * written as \u00XX, so that any bytes make valid JSON. */
static void t_json_escape(void **state)
{
    (void)state;
    s_escaped(NULL, "\"\"");
    s_escaped("", "\"\"");
    s_escaped("tcp://10.0.0.1:7000", "\"tcp://10.0.0.1:7000\"");
    s_escaped("a\"b\\c/d", "\"a\\\"b\\\\c/d\"");
    s_escaped("\x01\t\n\x1f \x7f~", "\"\\u0001\\u0009\\u000a\\u001f \\u007f~\"");
    /* 2, 3 and 4 bytes, and the ends of the ranges */
    s_escaped("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
              "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    s_escaped("\xc2\x80\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xf4\x8f\xbf\xbf",
              "\"\xc2\x80\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xf4\x8f\xbf\xbf\"");
    /* malformed: a stray continuation byte, sequences cut short (at the
     * end too), overlong forms, a surrogate, past U+10FFFF, never UTF-8 */
    s_escaped("\x80x", "\"\\u0080x\"");
    s_escaped("\xc3(", "\"\\u00c3(\"");
    s_escaped("a\xc3", "\"a\\u00c3\"");
    s_escaped("\xe2\x82", "\"\\u00e2\\u0082\"");
    s_escaped("\xf0\x9f\x98", "\"\\u00f0\\u009f\\u0098\"");
    s_escaped("\xc0\xaf\xc1\xbf", "\"\\u00c0\\u00af\\u00c1\\u00bf\"");
    s_escaped("\xe0\x80\xaf", "\"\\u00e0\\u0080\\u00af\"");
    s_escaped("\xf0\x80\x80\xaf", "\"\\u00f0\\u0080\\u0080\\u00af\"");
    s_escaped("\xed\xa0\x80", "\"\\u00ed\\u00a0\\u0080\"");
    s_escaped("\xf4\x90\x80\x80", "\"\\u00f4\\u0090\\u0080\\u0080\"");
    s_escaped("\xf5\xff\xfe", "\"\\u00f5\\u00ff\\u00fe\"");
    /* a malformed byte before a well-formed sequence leaves it whole */
    s_escaped("\xe2\xc3\xa9", "\"\\u00e2\xc3\xa9\"");
}

/* Malformed documents: exit 1, the fault named. */
static void t_malformed(void **state)
{
    (void)state;
    static char deep[512];
    memset(deep, '[', 100);
    deep[100] = '\0';
    struct {
        const char *doc, *says;
    } bad[] = {
        {"[1,2]", "the document is not an object"},
        {"{\"peer\":1,\"peers\":[],\"vcs\":[]}", "peer is not a string"},
        {"{\"peer\":\"p\",\"vcs\":[]}", "peers is missing"},
        {"{\"peer\":\"p\",\"peers\":[{\"endpoint\":\"e\"}],\"vcs\":[]}",
         "peers[0].state is missing"},
        {"{\"peer\":\"p\",\"peers\":[],\"vcs\":[{\"id\":\"a\"}]}", "vcs[0].vts is missing"},
        {"{\"peer\":\"p\",\"peers\":[],\"vcs\":[{\"id\":\"a\",\"vts\":[{\"id\":\"x\"}]}]}",
         "vcs[0].vts[0].id is not a number"},
        {"{\"peer\":\"p\",\"peers\":[],\"vcs\":[],\"held\":[]}", "held is not an object"},
        {"{\"peer\":\"p\",\"peers\":[],\"vcs\":[{\"id\":\"a\",\"vts\":[],\"globals\":[{}]}]}",
         "vcs[0].globals[0].name is missing"},
        {"{\"peer\":\"p\",\"peers\":[],\"vcs\":[{\"id\":\"a\",\"vts\":[],\"puts\":[]}]}",
         "vcs[0].puts is not an object"},
        {"{\"peer\":\"p\",\"peers\":[", "unexpected end at byte 21"},
        {"{\"peer\":\"p\" \"peers\":[]}", "expected a string key, ',' or '}' at byte 12"},
        {"{\"peer\":\"a\\qb\"}", "bad escape inside a string"},
        {"{\"peer\":\"a\\u0000b\"}", "bad escape inside a string"},
        {"{\"peer\":\"a\tb\"}", "control character inside a string"},
        {"{\"peer\":\"p\",\"peers\":[],\"vcs\":[]} x", "text after the document"},
        {"{\"peer\":\"p\",\"peers\":[01],\"vcs\":[]}", "expected ',' or ']'"},
        {"{\"peer\":\"p\",\"peers\":[-],\"vcs\":[]}", "bad number"},
        {"{\"peer\":tru}", "bad number"},
        {deep, "nested too deep"},
        {"", "unexpected end at byte 0"},
    };
    fake_peer *fp = fp_new(FP_NORMAL);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        fp_set_status(fp, bad[i].doc);
        run *r = s_levctl((const char *[]){"status", "--peer", fp_endpoint(fp), NULL});
        if (r->status != 1 || !strstr(r->err, bad[i].says) ||
            !strstr(r->err, "malformed status from"))
            fail_msg("document '%s': exit %d, said '%s' (wanted '%s')", bad[i].doc, r->status,
                     r->err, bad[i].says);
        free(r);
    }
    fp_destroy(&fp);
}

#ifdef LEVPEER_PATH
/* ===================================================================
 * A mesh of levpeer processes
 * =================================================================== */

#define T_LIMIT 60000 /* ms: the bound of every wait on a real peer */

/* True once the status lists two peers alive. */
static bool s_two_alive(const char *json, void *ctx)
{
    (void)ctx;
    return js_count(json, "\"state\":\"alive\"") >= 2;
}

/* Two levpeer processes, a (no cores) and b (one core, joined to a); this
 * program opens a VC on b and runs a VT there. levctl asked at a shows b
 * alive and b's VC, merged from b's own status. */
static void t_real_mesh(void **state)
{
    (void)state;
    mesh_peer p[2];
    const char *args_a[] = {"--listen", "tcp://127.0.0.1:0", "--cores", "-1", NULL};
    mkdir(PC_WORK_DIR, 0755);
    assert_int_equal(mesh_start(&p[0], LEVPEER_PATH, PC_WORK_DIR, T_LIMIT, args_a), 0);
    const char *args_b[] = {"--listen", "tcp://127.0.0.1:0", "--cores", "1", "--join", p[0].ep,
                            NULL};
    assert_int_equal(mesh_start(&p[1], LEVPEER_PATH, PC_WORK_DIR, T_LIMIT, args_b), 0);
    assert_true(mesh_wait(p[0].ep, s_two_alive, NULL, T_LIMIT));

    lev_vc *vc = NULL;
    lev_vc_options o = {.peer = p[1].ep};
    int rc = lev_vc_open(&vc, &o);
    if (rc)
        fail_msg("lev_vc_open: %s: %s", lev_strerror(rc), lev_errdetail());
    lev_vt_id id;
    void *res = NULL;
    size_t len = 0;
    assert_int_equal(lev_vt_start(vc, "cl_echo", "mesh", 5, &id), 0);
    rc = lev_vt_join(vc, id, &res, &len, T_LIMIT);
    if (rc) {
        char detail[512];
        snprintf(detail, sizeof detail, "%s", lev_errdetail());
        char *js = mesh_status(p[1].ep, T_LIMIT);
        fprintf(stderr, "status of the deploying peer: %s\n", js ? js : "(none)");
        free(js);
        for (int i = 0; i < 2; i++)
            mesh_print_log_tail(&p[i], 60);
        fail_msg("lev_vt_join: %s: %s", lev_strerror(rc), detail);
    }
    assert_string_equal(res, "mesh");
    free(res);

    char client[64];
    snprintf(client, sizeof client, "client:%d:", (int)getpid());
    run *r = s_levctl((const char *[]){"status", "--peer", p[0].ep, NULL});
    assert_int_equal(r->status, 0);
    s_has(r->out, p[1].ep);
    s_has(r->out, "alive");
    s_has(r->out, client); /* b's VC, merged */
    assert_null(strstr(r->out, "no virtual computers"));
    free(r);
    r = s_levctl((const char *[]){"status", "--peer", p[0].ep, "--json", NULL});
    assert_int_equal(r->status, 0);
    s_has(r->out, client);
    assert_null(strstr(r->out, "unanswered"));
    free(r);
    assert_int_equal(lev_vc_close(&vc), 0);
    mesh_stop_all(p, 2);
}
#endif

int main(void)
{
    /* executors at normal priority: at SCHED_IDLE a busy machine starves them */
    setenv("LEV_EXEC_NICE", "0", 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_usage),     cmocka_unit_test(t_keygen), cmocka_unit_test(t_unreachable),
        cmocka_unit_test(t_report),    cmocka_unit_test(t_json),   cmocka_unit_test(t_json_escape),
        cmocka_unit_test(t_malformed),
#ifdef LEVPEER_PATH
        cmocka_unit_test(t_real_mesh),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
