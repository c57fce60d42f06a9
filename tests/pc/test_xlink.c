/* test_xlink.c - an executor's links to the other executors of its VC
 * (peercontroller/xlink.h), two or three in one process on loopback:
 * frames arrive in order naming their sender and its incarnation, a
 * link that moves or goes is followed, bad arguments are refused with
 * a reason, and connections that do not name an executor are dropped
 * and counted without disturbing the others. Every wait is bounded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>
#include <zmq.h>

#include "auth.h"
#include "lev_errors.h"
#include "rt.h"
#include "xlink.h"

#define WAIT_MS 10000 /* for a frame that must come */
#define WAITS 1000    /* waits at most, in a loop that reads until a count */

typedef struct got {
    int n, src[2048];
    uint32_t inc[2048], val[2048];
} got;

static void s_on(void *ud, int src, uint32_t inc, const void *p, size_t n)
{
    got *g = ud;
    assert_true(g->n < 2048);
    g->src[g->n] = src;
    g->inc[g->n] = inc;
    g->val[g->n] = 0;
    if (n >= 4)
        memcpy(&g->val[g->n], p, 4);
    g->n++;
}

/* Reads into g until it holds `want` frames, and x has dropped `drops`. */
static void s_read_until(pc_xlink *x, got *g, int want, uint64_t drops)
{
    for (int i = 0; i < WAITS && (g->n < want || pc_xlink_stats_of(x).dropped_in < drops); i++) {
        assert_true(pc_xlink_read(x, 256, s_on, g) >= 0);
        if (g->n < want || pc_xlink_stats_of(x).dropped_in < drops)
            assert_true(pc_xlink_wait(x, WAIT_MS) >= 0);
    }
    assert_int_equal(g->n, want);
    assert_int_equal(pc_xlink_stats_of(x).dropped_in, drops);
}

static pc_xlink *s_link(void *ctx, int self, uint32_t inc, char ep[PC_ENDPOINT_MAX])
{
    pc_xlink *x = NULL;
    assert_int_equal(pc_xlink_new(&x, ctx, self, inc, "127.0.0.1", 1 << 20, NULL, ep), 0);
    assert_non_null(x);
    assert_true(pc_endpoint_valid(ep));
    return x;
}

/* Executor na (incarnation 1) linked to executor nb (incarnation ib);
 * eb gets nb's endpoint. */
static void s_pair(void *ctx, int na, int nb, uint32_t ib, pc_xlink **a, pc_xlink **b,
                   char eb[PC_ENDPOINT_MAX])
{
    char ea[PC_ENDPOINT_MAX];
    *a = s_link(ctx, na, 1, ea);
    *b = s_link(ctx, nb, ib, eb);
    assert_int_equal(pc_xlink_peer(*a, nb, eb), 0);
    if (nb == 5) /* t_exchange answers */
        assert_int_equal(pc_xlink_peer(*b, na, ea), 0);
}

/* A thousand frames one way arrive in order, naming executor 0 in its
 * incarnation; the answer names executor 5 in its. */
static void t_exchange(void **state)
{
    (void)state;
    void *ctx = zmq_ctx_new();
    char eb[PC_ENDPOINT_MAX];
    pc_xlink *a, *b;
    s_pair(ctx, 0, 5, 7, &a, &b, eb);
    assert_int_equal(pc_xlink_peer(a, 5, eb), 0); /* the same: kept */
    for (uint32_t i = 0; i < 1000; i++)
        assert_int_equal(pc_xlink_send(a, 5, &i, sizeof i), 0);
    static got g;
    memset(&g, 0, sizeof g);
    s_read_until(b, &g, 1000, 0);
    for (int i = 0; i < 1000; i++) {
        assert_int_equal(g.src[i], 0);
        assert_int_equal(g.inc[i], 1);
        assert_int_equal(g.val[i], (uint32_t)i);
    }
    uint32_t back = 42;
    assert_int_equal(pc_xlink_send(b, 0, &back, sizeof back), 0);
    memset(&g, 0, sizeof g);
    s_read_until(a, &g, 1, 0);
    assert_int_equal(g.src[0], 5);
    assert_int_equal(g.inc[0], 7);
    assert_int_equal(g.val[0], 42);
    pc_xlink_stats st = pc_xlink_stats_of(a);
    assert_int_equal(st.sent, 1000);
    assert_int_equal(st.received, 1);
    assert_int_equal(st.bytes_out, 4000);
    pc_xlink_destroy(&a);
    pc_xlink_destroy(&b);
    assert_null(a);
    pc_xlink_destroy(NULL);
    zmq_ctx_term(ctx);
}

/* A receiver that moved (a new executor in its place, on another port)
 * is reached once its link is told; one that is gone cannot be sent to. */
static void t_moved(void **state)
{
    (void)state;
    void *ctx = zmq_ctx_new();
    char ea[PC_ENDPOINT_MAX], eb[PC_ENDPOINT_MAX], ec[PC_ENDPOINT_MAX];
    pc_xlink *a = s_link(ctx, 0, 1, ea), *b = s_link(ctx, 1, 1, eb);
    assert_int_equal(pc_xlink_peer(a, 1, eb), 0);
    pc_xlink_destroy(&b);
    pc_xlink *c = s_link(ctx, 1, 2, ec);
    assert_int_equal(pc_xlink_peer(a, 1, ec), 0);
    uint32_t v = 7;
    assert_int_equal(pc_xlink_send(a, 1, &v, sizeof v), 0);
    static got g;
    memset(&g, 0, sizeof g);
    s_read_until(c, &g, 1, 0);
    assert_int_equal(g.val[0], 7);
    assert_int_equal(pc_xlink_peer(a, 1, NULL), 0);
    assert_int_equal(pc_xlink_send(a, 1, &v, sizeof v), LEV_EPEER);
    assert_int_equal(pc_xlink_send(a, 9, &v, sizeof v), LEV_EPEER); /* never linked */
    assert_int_equal(pc_xlink_send(a, -1, &v, sizeof v), LEV_EPEER);
    assert_int_equal(pc_xlink_stats_of(a).dropped_out, 3);
    pc_xlink_destroy(&a);
    pc_xlink_destroy(&c);
    zmq_ctx_term(ctx);
}

/* Wrong arguments are refused with a reason that names them. */
static void t_bad_args(void **state)
{
    (void)state;
    void *ctx = zmq_ctx_new();
    char ep[PC_ENDPOINT_MAX];
    pc_xlink *x = NULL;
    assert_int_equal(pc_xlink_new(&x, ctx, 64, 1, "127.0.0.1", 0, NULL, ep), LEV_EINVAL);
    assert_non_null(strstr(lev_errdetail(), "executor 64"));
    assert_int_equal(pc_xlink_new(&x, ctx, -1, 1, "127.0.0.1", 0, NULL, ep), LEV_EINVAL);
    assert_int_equal(pc_xlink_new(&x, ctx, 0, 0, "127.0.0.1", 0, NULL, ep), LEV_EINVAL);
    assert_int_equal(pc_xlink_new(&x, ctx, 0, 1, "localhost", 0, NULL, ep), LEV_EINVAL);
    assert_non_null(strstr(lev_errdetail(), "localhost"));
    assert_int_equal(pc_xlink_new(&x, ctx, 0, 1, NULL, 0, NULL, ep), LEV_EINVAL);
    assert_int_equal(pc_xlink_new(&x, ctx, 0, 1, "192.0.2.1", 0, NULL, ep),
                     LEV_EPEER); /* not ours */
    assert_non_null(strstr(lev_errdetail(), "cannot listen"));
    assert_null(x);
    x = s_link(ctx, 3, 1, ep);
    assert_int_equal(pc_xlink_peer(x, 3, ep), LEV_EINVAL); /* itself */
    assert_int_equal(pc_xlink_peer(x, 64, ep), LEV_EINVAL);
    assert_int_equal(pc_xlink_peer(x, 1, "tcp://nowhere"), LEV_EINVAL);
    assert_non_null(strstr(lev_errdetail(), "tcp://nowhere"));
    pc_xlink_destroy(&x);
    zmq_ctx_term(ctx);
}

/* Connections that do not name an executor (another id, an executor
 * number out of range, incarnation 0) and messages of more than one part
 * are dropped and counted; a real executor's frames still come, in
 * order. */
static void t_strangers(void **state)
{
    (void)state;
    void *ctx = zmq_ctx_new();
    char eb[PC_ENDPOINT_MAX];
    pc_xlink *a, *b;
    s_pair(ctx, 2, 4, 1, &a, &b, eb);
    static const uint8_t ids[][6] = {
        {'b', 'o', 'g', 'u', 's', '!'}, {'x', 64, 1, 0, 0, 0}, {'x', 1, 0, 0, 0, 0}};
    void *s[4];
    for (int i = 0; i < 4; i++) {
        s[i] = zmq_socket(ctx, ZMQ_DEALER);
        int zero = 0;
        zmq_setsockopt(s[i], ZMQ_LINGER, &zero, sizeof zero);
        if (i < 3)
            zmq_setsockopt(s[i], ZMQ_ROUTING_ID, ids[i], 6);
        else
            zmq_setsockopt(s[i], ZMQ_ROUTING_ID, "x\x01\x05\x00\x00\x00", 6);
        assert_int_equal(zmq_connect(s[i], eb), 0);
    }
    uint32_t v = 99;
    for (int i = 0; i < 3; i++)
        assert_true(zmq_send(s[i], &v, sizeof v, 0) == 4);
    assert_true(zmq_send(s[3], &v, sizeof v, ZMQ_SNDMORE) == 4); /* two parts */
    assert_true(zmq_send(s[3], &v, sizeof v, 0) == 4);
    for (uint32_t i = 0; i < 10; i++)
        assert_int_equal(pc_xlink_send(a, 4, &i, sizeof i), 0);
    static got g;
    memset(&g, 0, sizeof g);
    s_read_until(b, &g, 10, 4);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(g.src[i], 2);
        assert_int_equal(g.val[i], (uint32_t)i);
    }
    for (int i = 0; i < 4; i++)
        zmq_close(s[i]);
    pc_xlink_destroy(&a);
    pc_xlink_destroy(&b);
    zmq_ctx_term(ctx);
}

/* Links of a mesh with keys (the pair derived from the mesh's secret,
 * auth.h): its executors exchange frames; a plain connection, and one
 * that knows only the mesh's public key (as any of its clients does),
 * never get a frame through. */
static void t_keys(void **state)
{
    (void)state;
    void *ctx = zmq_ctx_new();
    pc_keypair mesh, links, links2, client;
    assert_int_equal(pc_key_generate(&mesh), 0);
    assert_int_equal(pc_key_derive_links(&mesh, &links), 0);
    assert_int_equal(pc_key_derive_links(&mesh, &links2), 0);
    assert_string_equal(links.pub, links2.pub); /* the same for every holder of the secret */
    assert_string_not_equal(links.pub, mesh.pub);
    pc_keypair pub_only = mesh;
    pub_only.sec[0] = 0;
    assert_int_equal(pc_key_derive_links(&pub_only, &links2), LEV_EINVAL);
    char ea[PC_ENDPOINT_MAX], eb[PC_ENDPOINT_MAX];
    pc_xlink *a = NULL, *b = NULL;
    assert_int_equal(pc_xlink_new(&a, ctx, 1, 1, "127.0.0.1", 1 << 20, &links, ea), 0);
    assert_int_equal(pc_xlink_new(&b, ctx, 2, 1, "127.0.0.1", 1 << 20, &links, eb), 0);
    assert_int_equal(pc_xlink_peer(a, 2, eb), 0);
    /* strangers first: a plain DEALER, and a CURVE one with the mesh's
     * public key as the server's */
    assert_int_equal(pc_key_generate(&client), 0);
    void *s[2];
    for (int i = 0; i < 2; i++) {
        s[i] = zmq_socket(ctx, ZMQ_DEALER);
        int zero = 0;
        zmq_setsockopt(s[i], ZMQ_LINGER, &zero, sizeof zero);
        zmq_setsockopt(s[i], ZMQ_ROUTING_ID, "x\x01\x01\x00\x00\x00", 6);
        if (i)
            assert_int_equal(pc_auth_connect(s[i], &client, mesh.pub), 0);
        assert_int_equal(zmq_connect(s[i], eb), 0);
        uint32_t v = 99;
        zmq_send(s[i], &v, sizeof v, ZMQ_DONTWAIT);
    }
    for (uint32_t i = 0; i < 100; i++)
        assert_int_equal(pc_xlink_send(a, 2, &i, sizeof i), 0);
    static got g;
    memset(&g, 0, sizeof g);
    s_read_until(b, &g, 100, 0);
    for (int i = 0; i < 100; i++)
        assert_int_equal(g.val[i], (uint32_t)i); /* no 99 among them */
    for (int i = 0; i < 2; i++)
        zmq_close(s[i]);
    pc_xlink_destroy(&a);
    pc_xlink_destroy(&b);
    zmq_ctx_term(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_exchange),  cmocka_unit_test(t_moved), cmocka_unit_test(t_bad_args),
        cmocka_unit_test(t_strangers), cmocka_unit_test(t_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
