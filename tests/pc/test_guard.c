/* test_guard.c - what keeps a mesh safe to run where strangers can reach
 * it, shown on levpeer processes on loopback with a client that carries
 * pc_tasks.c (one test per scenario):
 *   - stranger: before and after. A mesh run without keys (--insecure)
 *     runs a shell command for any client that reaches it; a mesh with
 *     keys refuses a client with no key or a key it does not admit
 *     before anything it sends is decoded, so the command never runs,
 *     and runs it for a client holding an admitted key.
 *   - limits: a VC's deployer refuses a VT beyond --max-vts, naming the
 *     limit; a VT whose state outgrows --max-vt-memory fails with
 *     LEV_ERANGE, which its client's join returns with the limit named;
 *     a value above --max-value and a message above --max-msg are
 *     refused to the VT with LEV_ERANGE, while smaller ones go; the
 *     worker's module cache shows in the status.
 *   - holder: a holder refuses an image whose deployer is no peer of the
 *     mesh (or left it), and one above its limit of a VT's state; it
 *     keeps none.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "auth.h"
#include "envelope.h"
#include "leverage.h"
#include "mesh.h"
#include "wire.h"

#define LIMIT 120000 /* ms: the bound of every wait, far above what any takes */

static char s_dir[256];

/* Peer i of a mesh of n: i = 0 is the client's (no cores), the others
 * join it with one core; extra arguments (NULL-terminated) follow. */
static void s_peer(mesh_peer *p, int i, const char *const *extra)
{
    const char *args[24] = {"--listen", mesh_listen(), "--cores", i ? "1" : "-1", "--rate", "1000"};
    int n = 6;
    if (i) {
        args[n++] = "--join";
        args[n++] = p[0].ep;
    }
    for (int k = 0; extra && extra[k] && n < 22; k++)
        args[n++] = extra[k];
    args[n] = NULL;
    if (mesh_start(&p[i], LEVPEER_PATH, s_dir, LIMIT, args))
        fail_msg("levpeer %d did not start", i);
}

static bool s_alive2(const char *js, void *ctx)
{
    (void)ctx;
    return js_count(js, "\"state\":\"alive\"") >= 2;
}

/* A mesh of two peers with those extra arguments, formed. */
static void s_mesh(mesh_peer *p, const char *const *extra)
{
    memset(p, 0, 2 * sizeof *p);
    s_peer(p, 0, extra);
    s_peer(p, 1, extra);
    assert_true(mesh_wait(p[0].ep, s_alive2, NULL, LIMIT));
}

/* Runs `cmd` through pc_system on the mesh of ep as the client this
 * process's environment makes; 0 and the command's status in *status,
 * or lev_vc_open's error. */
static int s_run_system(const char *ep, const char *cmd, int *status)
{
    lev_vc_options o = {.workers = 1, .peer = ep};
    lev_vc *vc = NULL;
    int rc = lev_vc_open(&vc, &o);
    if (rc)
        return rc;
    lev_vt_id id;
    int *st = NULL;
    size_t len = 0;
    assert_int_equal(lev_vt_start(vc, "pc_system", cmd, strlen(cmd), &id), 0);
    rc = lev_vt_join(vc, id, (void **)&st, &len, LIMIT);
    if (rc)
        fail_msg("pc_system: %s: %s", lev_strerror(rc), lev_errdetail());
    assert_int_equal(len, sizeof *st);
    *status = *st;
    free(st);
    assert_int_equal(lev_vc_close(&vc), 0);
    return 0;
}

static void s_keygen(const char *name)
{
    char base[sizeof s_dir + 64], err[256];
    snprintf(base, sizeof base, "%s/%s", s_dir, name);
    pc_keypair k;
    assert_int_equal(pc_key_generate(&k), 0);
    if (pc_key_write(base, &k, err, sizeof err))
        fail_msg("%s", err);
}

static void t_stranger(void **state)
{
    (void)state;
    char before[sizeof s_dir + 32], after[sizeof s_dir + 32], cmd[sizeof s_dir + 64];
    snprintf(before, sizeof before, "%s/before", s_dir);
    snprintf(after, sizeof after, "%s/after", s_dir);
    unsetenv("LEV_MESH_KEY");
    unsetenv("LEV_CLIENT_KEY");

    /* Before: no keys. Any client that reaches the port runs a command. */
    mesh_peer p[2];
    const char *insecure[] = {"--insecure", NULL};
    s_mesh(p, insecure);
    assert_true(mesh_log_has(&p[0], "INSECURE (--insecure)"));
    snprintf(cmd, sizeof cmd, "id -u > '%s'", before);
    int st = -1;
    assert_int_equal(s_run_system(p[0].ep, cmd, &st), 0);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_int_equal(access(before, F_OK), 0); /* it ran, as the peer's user */
    mesh_stop_all(p, 2);

    /* After: a mesh with keys. */
    s_keygen("mesh");
    s_keygen("stranger");
    char meshkey[sizeof s_dir + 32], strangerkey[sizeof s_dir + 32];
    snprintf(meshkey, sizeof meshkey, "%s/mesh.key", s_dir);
    snprintf(strangerkey, sizeof strangerkey, "%s/stranger.key", s_dir);
    const char *keyed[] = {"--key", meshkey, NULL};
    setenv("LEV_MESH_KEY", meshkey, 1); /* the test's own status queries */
    s_mesh(p, keyed);
    unsetenv("LEV_MESH_KEY");
    snprintf(cmd, sizeof cmd, "id -u > '%s'", after);
    setenv("LEV_PEER_TIMEOUT_MS", "1500", 1);
    int rc = s_run_system(p[0].ep, cmd, &st); /* no key */
    if (rc != LEV_EPEER)
        fail_msg("a client with no key: %s: %s", lev_strerror(rc), lev_errdetail());
    /* a key of its own, not admitted (the mesh's public key is no secret) */
    char meshpub[sizeof s_dir + 32];
    snprintf(meshpub, sizeof meshpub, "%s/mesh.pub", s_dir);
    setenv("LEV_MESH_KEY", meshpub, 1);
    setenv("LEV_CLIENT_KEY", strangerkey, 1);
    assert_int_equal(s_run_system(p[0].ep, cmd, &st), LEV_EPEER);
    assert_non_null(strstr(lev_errdetail(), "the peer may have refused this client's key"));
    unsetenv("LEV_CLIENT_KEY");
    unsetenv("LEV_MESH_KEY");
    setenv("LEV_PEER_TIMEOUT_MS", "3000", 1);
    assert_int_equal(access(after, F_OK), -1); /* nothing ran */
    assert_true(mesh_log_has(&p[0], "its key is not authorised"));
    setenv("LEV_MESH_KEY", meshkey, 1);
    char *js = mesh_status(p[0].ep, LIMIT); /* the refused key is counted */
    assert_non_null(js);
    const char *auth = strstr(js, "\"auth\":{\"keys\":true,\"admitted\":1,\"refused_keys\":");
    if (!auth ||
        atoll(auth + strlen("\"auth\":{\"keys\":true,\"admitted\":1,\"refused_keys\":")) < 1)
        fail_msg("auth counts: %s", js);
    free(js);
    /* the mesh's own key is admitted */
    assert_int_equal(s_run_system(p[0].ep, cmd, &st), 0);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_int_equal(access(after, F_OK), 0);
    unsetenv("LEV_MESH_KEY");
    mesh_stop_all(p, 2);
}

static void t_limits(void **state)
{
    (void)state;
    mesh_peer p[2];
    const char *lim[] = {
        "--max-vts", "2", "--max-vt-memory", "1M", "--max-value", "1K", "--max-msg", "1M", NULL};
    s_mesh(p, lim);
    lev_vc_options o = {.workers = 1, .peer = p[0].ep, .checkpoint_ms = 50};
    lev_vc *vc = NULL;
    assert_int_equal(lev_vc_open(&vc, &o), 0);
    long n = 1000, *sum = NULL;
    size_t len = 0;
    lev_vt_id a, b, c;
    assert_int_equal(lev_vt_start(vc, "pc_sum", &n, sizeof n, &a), 0);
    assert_int_equal(lev_vt_start(vc, "pc_sum", &n, sizeof n, &b), 0);
    assert_int_equal(lev_vt_start(vc, "pc_sum", &n, sizeof n, &c), LEV_ERANGE);
    if (!strstr(lev_errdetail(), "--max-vts"))
        fail_msg("the third VT: %s", lev_errdetail());
    for (int i = 0; i < 2; i++) {
        assert_int_equal(lev_vt_join(vc, i ? b : a, (void **)&sum, &len, LIMIT), 0);
        assert_int_equal(*sum, 499500);
        free(sum);
    }
    assert_int_equal(lev_vc_close(&vc), 0);

    /* 8 MiB of heap in a VC whose VTs may hold 1 MiB */
    assert_int_equal(lev_vc_open(&vc, &o), 0);
    long arg[3] = {8, 1000000, 1000};
    assert_int_equal(lev_vt_start(vc, "pc_big", arg, sizeof arg, &a), 0);
    void *res = NULL;
    int rc = lev_vt_join(vc, a, &res, &len, LIMIT);
    if (rc != LEV_ERANGE || !strstr(lev_errdetail(), "--max-vt-memory"))
        fail_msg("pc_big: %s: %s", lev_strerror(rc), lev_errdetail());
    free(res);
    assert_int_equal(lev_vc_close(&vc), 0);
    /* a value and a message, within the limits and above them */
    const long probes[4][2] = {{0, 1024}, {0, 1025}, {1, 1000000}, {1, 1045000}};
    const int want[4] = {0, LEV_ERANGE, 0, LEV_ERANGE};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(lev_vc_open(&vc, &o), 0);
        long spin[2] = {1, 1};
        assert_int_equal(lev_vt_start(vc, "pc_spin", spin, sizeof spin, &a), 0);
        long arg3[3] = {probes[i][0], (long)a, probes[i][1]};
        assert_int_equal(lev_vt_start(vc, "pc_probe", arg3, sizeof arg3, &b), 0);
        int *got = NULL;
        assert_int_equal(lev_vt_join(vc, b, (void **)&got, &len, LIMIT), 0);
        if (*got != want[i])
            fail_msg("probe %d (%ld bytes): %d, not %d", i, probes[i][1], *got, want[i]);
        free(got);
        assert_int_equal(lev_vc_close(&vc), 0);
    }
    char *js = mesh_status(p[1].ep, LIMIT);
    assert_non_null(js);
    if (!strstr(js, "\"modules\":{\"cached\":1,"))
        fail_msg("the worker's module cache: %s", js);
    free(js);
    mesh_stop_all(p, 2);
}

/* Sends H_HOLD of (vc 9, vt 3, epoch 1) naming deployer, with an image
 * of ilen bytes, to ep. */
static void s_hold(const char *ep, const char *deployer, size_t ilen)
{
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_str(&b, deployer);
    pc_put_u64(&b, 0);
    uint8_t *img = calloc(1, ilen + 12);
    assert_non_null(img);
    /* an envelope (envelope.h): magic, a tail of 4 bytes (no channel nor
     * causal state), the image's bytes, then the tail */
    uint32_t head[2] = {PC_ENV_MAGIC, 4};
    memcpy(img, head, sizeof head);
    pc_hdr h = pc_hdr_make(PC_H_HOLD, 9, 3, 1, 1);
    h.len = (uint32_t)(b.len + ilen + 12);
    uint8_t hb[PC_HDR_LEN];
    pc_hdr_encode(&h, hb);
    const void *f[3] = {hb, b.data, img};
    size_t l[3] = {sizeof hb, b.len, ilen + 12};
    mesh_send_raw(ep, f, l, 3);
    pc_wbuf_free(&b);
    free(img);
}

/* mesh_wait's condition: the log of peer ctx[0] holds the text ctx[1]. */
static bool s_logged(const char *js, void *ctx)
{
    (void)js;
    const void *const *c = ctx;
    return mesh_log_holds(c[0], c[1]);
}

static void t_holder(void **state)
{
    (void)state;
    mesh_peer p[2];
    const char *lim[] = {"--max-vt-memory", "64K", NULL};
    s_mesh(p, lim);
    s_hold(p[1].ep, "tcp://127.0.0.1:9", 100);
    const void *no_deployer[2] = {&p[1], "its deployer is no peer of this mesh"};
    assert_true(mesh_wait(p[1].ep, s_logged, no_deployer, LIMIT));
    s_hold(p[1].ep, p[0].ep, 100000);
    const void *too_big[2] = {&p[1], "above this peer's limit of 65536 per VT"};
    assert_true(mesh_wait(p[1].ep, s_logged, too_big, LIMIT));
    char *js = mesh_status(p[1].ep, LIMIT);
    assert_non_null(js);
    if (!strstr(js, "\"held\":{\"images\":0,"))
        fail_msg("the holder kept an image: %s", js);
    free(js);
    mesh_stop_all(p, 2);
}

int main(int argc, char **argv)
{
    if (mesh_workdir(s_dir, sizeof s_dir, "guard"))
        return 1;
    setenv("LEV_PEER_TIMEOUT_MS", "3000", 0);
    setenv("LEV_EXEC_NICE", "0", 0);
    const struct CMUnitTest all[] = {
        cmocka_unit_test(t_stranger),
        cmocka_unit_test(t_limits),
        cmocka_unit_test(t_holder),
    };
    return mesh_run_tests(all, sizeof all / sizeof *all, argc, argv, s_dir);
}
