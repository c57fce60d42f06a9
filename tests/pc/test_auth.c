/* test_auth.c - keys and admission (peercontroller/auth.h): key pairs
 * written and read back, files refused with the file and line named,
 * the authorised keys of a file or a directory, and CurveZMQ connections
 * on loopback admitted by the ZAP handler only with an authorised key, a
 * refused address logged once however often it tries. Every wait is
 * bounded in count and time.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <setjmp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include <cmocka.h>

#include "auth.h"
#include "lev_errors.h"
#include "log.h"

static char s_dir[64];

static int s_setup(void **state)
{
    (void)state;
    snprintf(s_dir, sizeof s_dir, "/tmp/lev-test-auth-XXXXXX");
    assert_non_null(mkdtemp(s_dir));
    return 0;
}

static int s_teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    return system(cmd);
}

static void s_write(const char *name, const char *text)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", s_dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A pair written is read back alike, its .key private; a .pub reads as
 * the public half; nothing is replaced. */
static void t_keys(void **state)
{
    (void)state;
    pc_keypair k, r;
    char base[256], path[300], err[256];
    assert_int_equal(pc_key_generate(&k), 0);
    assert_int_equal(strlen(k.pub), PC_KEY_Z85);
    snprintf(base, sizeof base, "%s/mesh", s_dir);
    assert_int_equal(pc_key_write(base, &k, err, sizeof err), 0);
    snprintf(path, sizeof path, "%s.key", base);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(pc_key_read(path, &r, err, sizeof err), 0);
    assert_string_equal(r.pub, k.pub);
    assert_string_equal(r.sec, k.sec);
    snprintf(path, sizeof path, "%s.pub", base);
    assert_int_equal(pc_key_read(path, &r, err, sizeof err), 0);
    assert_string_equal(r.pub, k.pub);
    assert_string_equal(r.sec, "");
    assert_int_equal(pc_key_write(base, &k, err, sizeof err), LEV_EIO);
    assert_non_null(strstr(err, "mesh.key"));
    assert_non_null(strstr(err, "not replaced"));
}

static void s_refused(const char *name, const char *text, const char *want)
{
    char path[256], err[256] = "";
    pc_keypair k;
    s_write(name, text);
    snprintf(path, sizeof path, "%s/%s", s_dir, name);
    assert_int_not_equal(pc_key_read(path, &k, err, sizeof err), 0);
    if (!strstr(err, want))
        fail_msg("%s: '%s' lacks '%s'", name, err, want);
    assert_string_equal(k.pub, "");
}

/* Damaged files: each refusal names the file and what is wrong. */
static void t_bad_files(void **state)
{
    (void)state;
    pc_keypair a, b;
    assert_int_equal(pc_key_generate(&a), 0);
    assert_int_equal(pc_key_generate(&b), 0);
    char text[512];
    s_refused("none.key", "", "none.key: no public-key line");
    s_refused("junk.key", "# x\nhello\n", "junk.key:2: not a public-key or secret-key line");
    s_refused("eq.key", "public-key: abc\n", "eq.key:1: '=' expected");
    s_refused("short.key", "public-key = abc\n", "short.key:1: not a key");
    snprintf(text, sizeof text, "public-key = %s\npublic-key = %s\n", a.pub, b.pub);
    s_refused("twice.key", text, "twice.key:2: a second key");
    snprintf(text, sizeof text, "public-key = %s\nsecret-key = %s\n", a.pub, b.sec);
    s_refused("mixed.key", text, "mixed.key: its public key is not that of its secret key");
    char path[256], err[256];
    snprintf(path, sizeof path, "%s/absent.key", s_dir);
    pc_keypair k;
    assert_int_equal(pc_key_read(path, &k, err, sizeof err), LEV_EIO);
    assert_non_null(strstr(err, "absent.key"));
}

/* Authorised keys from a file (bare keys, public-key lines, comments) or
 * from the .pub files of a directory (other files ignored); the mesh's
 * own key always. */
static void t_authorized(void **state)
{
    (void)state;
    pc_keypair own, c1, c2, c3;
    assert_int_equal(pc_key_generate(&own), 0);
    assert_int_equal(pc_key_generate(&c1), 0);
    assert_int_equal(pc_key_generate(&c2), 0);
    assert_int_equal(pc_key_generate(&c3), 0);
    char text[512], path[256], err[256];
    snprintf(text, sizeof text, "# clients\n%s\n\npublic-key = %s\n", c1.pub, c2.pub);
    s_write("authorized", text);
    snprintf(path, sizeof path, "%s/authorized", s_dir);
    pc_auth *a = NULL;
    assert_int_equal(pc_auth_new(&a, NULL, &own, path, err, sizeof err), 0);
    assert_int_equal(pc_auth_count(a), 3);
    uint8_t raw[32];
    zmq_z85_decode(raw, c2.pub);
    assert_true(pc_auth_allowed(a, raw));
    zmq_z85_decode(raw, c3.pub);
    assert_false(pc_auth_allowed(a, raw));
    pc_auth_destroy(&a);
    /* a directory */
    char sub[128], base[256];
    snprintf(sub, sizeof sub, "%s/keys", s_dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    snprintf(base, sizeof base, "%s/alice", sub);
    assert_int_equal(pc_key_write(base, &c1, err, sizeof err), 0);
    snprintf(base, sizeof base, "%s/bob", sub);
    assert_int_equal(pc_key_write(base, &c3, err, sizeof err), 0);
    s_write("keys/notes.txt", "not keys at all\n");
    assert_int_equal(pc_auth_new(&a, NULL, &own, sub, err, sizeof err), 0);
    assert_int_equal(pc_auth_count(a), 3); /* own, alice.pub, bob.pub */
    assert_true(pc_auth_allowed(a, raw));
    pc_auth_destroy(&a);
    /* a bad line in a directory's file is named */
    s_write("keys/carol.pub", "public-key = tooshort\n");
    assert_int_not_equal(pc_auth_new(&a, NULL, &own, sub, err, sizeof err), 0);
    assert_non_null(strstr(err, "carol.pub:1: not a key"));
}

static uint64_t s_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Serves the ZAP socket and the server until `got` says a message came or
 * `refusals` refusals were counted, at most 10 s. */
static bool s_serve(pc_auth *a, void *server, int *got, uint64_t refusals)
{
    uint64_t end = s_ms() + 10000;
    while (s_ms() < end) {
        zmq_pollitem_t it[2] = {{.socket = pc_auth_socket(a), .events = ZMQ_POLLIN},
                                {.socket = server, .events = ZMQ_POLLIN}};
        zmq_poll(it, 2, 50);
        if (it[0].revents)
            pc_auth_on_zap(a);
        if (it[1].revents) {
            zmq_msg_t m;
            zmq_msg_init(&m);
            while (zmq_msg_recv(&m, server, ZMQ_DONTWAIT) >= 0)
                if (!zmq_msg_more(&m))
                    (*got)++;
            zmq_msg_close(&m);
        }
        if (*got || (refusals && pc_auth_refused(a) >= refusals))
            return true;
    }
    return false;
}

/* On loopback: a client with an authorised key reaches the server;
 * clients with another key never do, each is counted, and their address
 * is logged once. */
static void t_connections(void **state)
{
    (void)state;
    FILE *log = tmpfile();
    pc_log_set_fd(fileno(log));
    void *z = zmq_ctx_new();
    pc_keypair own, good, bad;
    assert_int_equal(pc_key_generate(&own), 0);
    assert_int_equal(pc_key_generate(&good), 0);
    assert_int_equal(pc_key_generate(&bad), 0);
    char text[128], path[256], err[256];
    snprintf(text, sizeof text, "%s\n", good.pub);
    s_write("clients", text);
    snprintf(path, sizeof path, "%s/clients", s_dir);
    pc_auth *a = NULL;
    assert_int_equal(pc_auth_new(&a, z, &own, path, err, sizeof err), 0);
    void *server = zmq_socket(z, ZMQ_ROUTER);
    assert_int_equal(pc_auth_serve(server, &own), 0);
    assert_int_equal(zmq_bind(server, "tcp://127.0.0.1:*"), 0);
    char ep[64];
    size_t el = sizeof ep;
    zmq_getsockopt(server, ZMQ_LAST_ENDPOINT, ep, &el);
    int zero = 0, ivl = 20;
    void *c = zmq_socket(z, ZMQ_DEALER);
    zmq_setsockopt(c, ZMQ_LINGER, &zero, sizeof zero);
    assert_int_equal(pc_auth_connect(c, &good, own.pub), 0);
    assert_int_equal(zmq_connect(c, ep), 0);
    zmq_send(c, "hi", 2, 0);
    int got = 0;
    assert_true(s_serve(a, server, &got, 0));
    assert_int_equal(got, 1);
    assert_int_equal(pc_auth_refused(a), 0);
    zmq_close(c);
    /* another key, three times over from one address: refused each
     * time, logged once */
    for (uint64_t i = 1; i <= 3; i++) {
        c = zmq_socket(z, ZMQ_DEALER);
        zmq_setsockopt(c, ZMQ_LINGER, &zero, sizeof zero);
        zmq_setsockopt(c, ZMQ_RECONNECT_IVL, &ivl, sizeof ivl);
        assert_int_equal(pc_auth_connect(c, &bad, own.pub), 0);
        assert_int_equal(zmq_connect(c, ep), 0);
        zmq_send(c, "hi", 2, ZMQ_DONTWAIT);
        got = 0;
        assert_true(s_serve(a, server, &got, i));
        assert_int_equal(got, 0);
        zmq_close(c);
    }
    zmq_close(server);
    pc_auth_destroy(&a);
    zmq_ctx_term(z);
    fflush(log);
    rewind(log);
    char line[512];
    int refused = 0;
    while (fgets(line, sizeof line, log))
        refused += strstr(line, "refused a connection from") && strstr(line, "not authorised");
    fclose(log);
    pc_log_set_fd(2);
    assert_int_equal(refused, 1);
}

int main(void)
{
    pc_log_set_level(PC_LOG_WARN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(t_keys, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(t_bad_files, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(t_authorized, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(t_connections, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
