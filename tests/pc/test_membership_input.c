/* test_membership_input.c - what the membership protocol
 * (peercontroller/membership.h) does with input it must not trust: every
 * kind of malformed payload dropped with LEV_EINVAL and a reason, nothing
 * sent and the state unchanged; a peer of another mesh id ignored; and a
 * fuzz loop of random and mutated messages on a hand-run net
 * (membership_hand.h).
 *
 * Simulated time only: every run is deterministic, and every loop is
 * bounded in count.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "lev_errors.h"
#include "membership.h"
#include "membership_codec.h"
#include "membership_hand.h"
#include "membership_sim.h"
#include "portprobe.h"

/* ===================================================================
 * Malformed input
 * =================================================================== */

/* A peer's state as the interface shows it. */
typedef struct snap {
    pc_member view[256];
    size_t n;
    pc_members_stats st;
} snap;

static void snap_take(const pc_members *m, snap *sn)
{
    memset(sn, 0, sizeof *sn);
    sn->n = pc_members_view(m, sn->view, 256);
    assert_true(sn->n <= 256);
    pc_members_stats_get(m, &sn->st);
}

static bool same_member(const pc_member *a, const pc_member *b)
{
    return !strcmp(a->rec.endpoint, b->rec.endpoint) && a->state == b->state &&
           a->incarnation == b->incarnation && a->instance == b->instance &&
           a->since_ms == b->since_ms && a->rec.cores == b->rec.cores &&
           a->rec.rate == b->rec.rate && a->rec.load == b->rec.load &&
           !strcmp(a->rec.arch, b->rec.arch) && a->rec.big_endian == b->rec.big_endian &&
           a->rec.version == b->rec.version;
}

/* m is as in before, but for one more message received and dropped (or
 * ignored as another mesh's, when foreign). */
static void snap_same(const pc_members *m, const snap *before, bool foreign)
{
    snap now;
    snap_take(m, &now);
    assert_int_equal(now.n, before->n);
    for (size_t i = 0; i < now.n; i++)
        assert_true(same_member(&now.view[i], &before->view[i]));
    assert_int_equal(now.st.received, before->st.received + 1);
    assert_int_equal(now.st.dropped, before->st.dropped + !foreign);
    assert_int_equal(now.st.foreign, before->st.foreign + foreign);
    assert_int_equal(now.st.sent, before->st.sent);
    assert_int_equal(now.st.bytes_sent, before->st.bytes_sent);
    assert_int_equal(now.st.refutations, before->st.refutations);
    assert_int_equal(now.st.syncs, before->st.syncs);
}

static void put_u8s(pc_wbuf *w, const char *bytes, size_t n) { pc_put_raw(w, bytes, n); }

/* The start of an update: its head byte, incarnation and instance. */
static void put_upd(pc_wbuf *w, uint8_t head, uint32_t inc)
{
    pc_put_u8(w, head);
    pc_mem_put_var(w, inc);
    pc_put_u64(w, 5);
}

static uint64_t g_bad_mesh; /* the receiver's mesh id, for the malformed cases */

/* An update with its record, the way the codec writes one. */
static void put_alive(pc_wbuf *w, const char *endpoint)
{
    pc_member mb = {.rec = h_rec(endpoint), .state = PC_MEMBER_ALIVE, .incarnation = 1};
    pc_mem_put_update(w, &mb, true);
}

static void put_digest(pc_wbuf *w, uint8_t flags)
{
    pc_put_u32(w, 0x1234);
    pc_put_u8(w, flags);
}

/* Builds malformed case k into w (type, sender, a part of the reason);
 * false past the last case. A is tcp://10.1.0.0:7946 (the receiver), B
 * tcp://10.1.0.1:7946 (the sender). */
static bool bad_case(int k, pc_wbuf *w, uint16_t *type, const char **from, const char **why)
{
    const char *a = h_ep(0), *longer = "tcp://0123456789012345678901234567890123456789"
                                       "01234567890123456789012345678901234567890123456789"
                                       "0123456789012345678901234567890123456789";
    static char b[32];
    snprintf(b, sizeof b, "%s", h_ep(1));
    *from = b;
    *type = PC_M_GOSSIP;
    *why = "truncated";
    if (k >= 7 && (k < 40 || k > 42))
        pc_mem_put_head(w, g_bad_mesh, 0);
    switch (k) {
    case 0:
        *type = PC_C_PING;
        *why = "not a membership message";
        return true;
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
    case 6: /* empty payloads */
        *type = (uint16_t)(PC_M_PING + k - 1);
        return true;
    case 7:
        *type = PC_M_PING;
        pc_mem_put_var(w, 1);
        pc_mem_put_str(w, "tcp://10.9.9.9:1");
        put_digest(w, 0);
        pc_mem_put_var(w, 0);
        *why = "another peer";
        return true;
    case 8:
        *type = PC_M_PING;
        pc_mem_put_var(w, 1);
        pc_mem_put_str(w, longer);
        *why = "too long";
        return true;
    case 9:
        *type = PC_M_PING;
        put_u8s(w, "\xFF\xFF\xFF\xFF\x1F", 5);
        *why = "32 bits";
        return true;
    case 10:
        *type = PC_M_ACK;
        put_u8s(w, "\x81\x00", 2);
        *why = "shortest";
        return true;
    case 11:
        *type = PC_M_PING;
        pc_mem_put_var(w, 1);
        pc_mem_put_str(w, "tcp://a b:1");
        *why = "control, space";
        return true;
    case 12:
        *type = PC_M_PING;
        pc_mem_put_var(w, 1);
        pc_mem_put_str(w, a);
        put_digest(w, 2);
        pc_mem_put_var(w, 0);
        *why = "digest flags";
        return true;
    case 13:
        pc_mem_put_var(w, PC_MEM_GOSSIP_CAP + 1);
        for (int i = 0; i <= PC_MEM_GOSSIP_CAP; i++)
            put_alive(w, "tcp://10.2.0.1:1");
        *why = "too many updates";
        return true;
    case 14:
        pc_mem_put_var(w, 10);
        put_upd(w, 0, 1);
        put_u8s(w, "\x01x", 2);
        put_upd(w, 0, 1);
        put_u8s(w, "\x01y", 2);
        *why = "more updates announced";
        return true;
    case 15:
        pc_mem_put_var(w, 1);
        put_upd(w, 0x24, 1);
        put_u8s(w, "\x01x", 2);
        *why = "unknown flags";
        return true;
    case 16:
        pc_mem_put_var(w, 1);
        put_upd(w, 0x00, 1);
        put_u8s(w, "\x01x", 2);
        *why = "without its record";
        return true;
    case 17:
        pc_mem_put_var(w, 1);
        put_upd(w, 0x09, 1);
        put_u8s(w, "\x01x", 2);
        *why = "byte order without a record";
        return true;
    case 18:
        pc_mem_put_var(w, 1);
        put_upd(w, 0x01, 1);
        put_u8s(w, "\x00\x00", 2);
        *why = "empty endpoint";
        return true;
    case 19:
        pc_mem_put_var(w, 1);
        put_upd(w, 0x04, 1);
        put_u8s(w, "\x01x\x01\x01\x01", 5);
        pc_mem_put_str(w, "0123456789abcdef");
        pc_mem_put_var(w, 1);
        *why = "architecture name too long";
        return true;
    case 20:
        pc_mem_put_var(w, 1);
        put_upd(w, 0x04, 1);
        put_u8s(w, "\x01x\x01\x01\x01\x01", 6);
        *why = "truncated";
        return true;
    case 21:
        pc_mem_put_var(w, 1);
        put_alive(w, "tcp://10.2.0.1:1");
        pc_put_u8(w, 0);
        *why = "trailing bytes";
        return true;
    case 22: { /* a valid accusation of A, then a bad update: A must not refute */
        pc_member acc = {.rec = h_rec(a), .state = PC_MEMBER_SUSPECT, .incarnation = 0};
        pc_mem_put_var(w, 2);
        pc_mem_put_update(w, &acc, false);
        put_upd(w, 0xFF, 1);
        put_u8s(w, "\x01x", 2);
        *why = "unknown flags";
        return true;
    }
    case 23:
        *type = PC_M_JOIN;
        pc_mem_put_var(w, 2);
        put_alive(w, b);
        put_alive(w, b);
        *why = "its sender's";
        return true;
    case 24:
        *type = PC_M_JOIN;
        pc_mem_put_var(w, 1);
        put_alive(w, "tcp://10.2.0.1:1");
        *why = "its sender's";
        return true;
    case 25: {
        *type = PC_M_JOIN;
        pc_member sus = {.rec = h_rec(b), .state = PC_MEMBER_SUSPECT};
        pc_mem_put_var(w, 1);
        pc_mem_put_update(w, &sus, true);
        *why = "its sender's";
        return true;
    }
    case 26:
        *type = PC_M_SYNC;
        pc_put_u8(w, 2);
        pc_mem_put_var(w, 0);
        *why = "sync flags";
        return true;
    case 27:
        *type = PC_M_SYNC;
        pc_put_u8(w, 0);
        pc_mem_put_var(w, PC_MEM_VIEW_CAP + 1);
        *why = "too many updates";
        return true;
    case 28:
    case 29:
        *type = PC_M_PING_REQ;
        pc_mem_put_var(w, 1);
        pc_mem_put_str(w, k == 28 ? a : b);
        pc_mem_put_var(w, 0);
        *why = "ping request naming";
        return true;
    case 30:
        pc_mem_put_var(w, 0);
        *from = a;
        *why = "own endpoint";
        return true;
    case 31:
    case 32:
    case 33:
        pc_mem_put_var(w, 0);
        *from = k == 31 ? "" : k == 32 ? NULL : "tcp://x\n:1";
        *why = "sender";
        return true;
    case 34:
        *type = PC_M_ACK;
        pc_mem_put_var(w, 1);
        put_digest(w, 0xFF);
        pc_mem_put_var(w, 0);
        *why = "digest flags";
        return true;
    case 35:
        pc_mem_put_var(w, 1);
        put_upd(w, 0x01, 1);
        pc_mem_put_str(w, longer);
        *why = "endpoint too long";
        return true;
    case 36:
        *type = PC_M_SYNC;
        pc_put_u8(w, 1);
        pc_mem_put_var(w, UINT32_MAX);
        *why = "too many updates";
        return true;
    case 37:
        pc_mem_put_var(w, 1);
        put_upd(w, 0x01, 1);
        put_u8s(w, "\x03x\x00y", 4);
        *why = "control, space";
        return true;
    case 38:
        *type = PC_M_PING;
        pc_mem_put_var(w, 1);
        pc_mem_put_str(w, a);
        put_digest(w, 0);
        pc_mem_put_var(w, 0);
        put_u8s(w, "\x00\x00", 2);
        *why = "trailing bytes";
        return true;
    case 39:
        *type = PC_M_ACK;
        pc_mem_put_var(w, 1);
        put_digest(w, 0);
        *why = "truncated";
        return true;
    case 40:
    case 41:
    case 42: /* a bad head: version, flags, mesh id 0 */
        pc_put_u8(w, k == 40 ? 1 : PC_MEM_VERSION);
        pc_put_u8(w, k == 41 ? 2 : 0);
        pc_put_u64(w, k == 42 ? 0 : g_bad_mesh);
        pc_mem_put_var(w, 0);
        *why = k == 40 ? "version" : k == 41 ? "head flags" : "mesh id 0";
        return true;
    case 43:
    case 44: /* an accuser on an alive update; an accuser 0 */
        pc_mem_put_var(w, 1);
        put_upd(w, k == 43 ? 0x14 : 0x11, 1);
        put_u8s(w, "\x01x\x00\x00\x00\x00", 6);
        *why = k == 43 ? "not a suspicion" : "accuser 0";
        return true;
    default:
        return false;
    }
}

/* A peer with a view (A knows B, B's view) receives each malformed case:
 * LEV_EINVAL, a reason, nothing sent, nothing changed. */
static void t_malformed(void **state)
{
    (void)state;
    h_net *net = h_new(2);
    pc_members_join(net->p[1].m, h_ep(0), 0);
    h_run(net, 0, 300);
    pc_members *a = net->p[0].m;
    assert_int_equal(pc_members_count_live(a), 2);
    g_bad_mesh = pc_members_mesh_id(a);
    int k = 0;
    for (;; k++) {
        pc_wbuf w;
        pc_wbuf_init(&w);
        uint16_t type;
        const char *from, *expect, *why = NULL;
        if (!bad_case(k, &w, &type, &from, &expect)) {
            pc_wbuf_free(&w);
            break;
        }
        assert_int_equal(w.err, 0);
        snap before;
        snap_take(a, &before);
        int rc = pc_members_recv(a, 301, from, type, w.data, w.len, &why);
        if (rc != LEV_EINVAL || !why || !strstr(why, expect))
            fail_msg("case %d: rc %d, why \"%s\", expected \"%s\"", k, rc, why ? why : "(null)",
                     expect);
        snap_same(a, &before, false);
        assert_int_equal(net->nq, 0);
        /* why may be NULL */
        assert_int_equal(pc_members_recv(a, 301, from, type, w.data, w.len, NULL), LEV_EINVAL);
        pc_wbuf_free(&w);
    }
    assert_int_equal(k, 45);
    assert_int_equal(pc_members_find(a, h_ep(0))->incarnation, 0);
    h_free(&net);
}

/* A peer that joins adopts its seed's mesh id; what a peer of another
 * mesh sends, of every type, is ignored (counted in foreign, nothing
 * changed, nothing answered), and its join is refused. */
static void t_mesh_id(void **state)
{
    (void)state;
    h_net *net = h_new(3);
    uint64_t drawn = pc_members_mesh_id(net->p[1].m);
    pc_members_join(net->p[1].m, h_ep(0), 0);
    h_run(net, 0, 300);
    pc_members *a = net->p[0].m;
    uint64_t mesh = pc_members_mesh_id(a);
    assert_true(mesh == pc_members_mesh_id(net->p[1].m) && mesh <= drawn);
    pc_members_opts other = {.mesh_id = mesh ^ 1};
    g_hopts = &other;
    h_start(net, 2, 300);
    g_hopts = NULL;
    assert_true(pc_members_mesh_id(net->p[2].m) == (mesh ^ 1));
    pc_members_join(net->p[2].m, h_ep(0), 301);
    h_run(net, 301, 2000);
    assert_null(pc_members_find(a, h_ep(2)));
    assert_int_equal(pc_members_count_live(net->p[2].m), 1);
    for (uint16_t type = PC_M_PING; type <= PC_M_GOSSIP; type++) {
        pc_wbuf w;
        pc_wbuf_init(&w);
        pc_mem_put_head(&w, mesh ^ 1, 0);
        if (type == PC_M_PING || type == PC_M_PING_REQ || type == PC_M_ACK)
            pc_mem_put_var(&w, 1);
        if (type == PC_M_PING || type == PC_M_PING_REQ)
            pc_mem_put_str(&w, h_ep(type == PC_M_PING ? 0 : 1));
        if (type == PC_M_PING || type == PC_M_ACK)
            put_digest(&w, 1);
        if (type == PC_M_SYNC)
            pc_put_u8(&w, PC_MEM_SYNC_ANSWER);
        pc_mem_put_var(&w, 1);
        put_alive(&w, h_ep(2));
        snap before;
        snap_take(a, &before);
        const char *why = NULL;
        assert_int_equal(pc_members_recv(a, 2001, h_ep(2), type, w.data, w.len, &why), 0);
        assert_non_null(why);
        assert_non_null(strstr(why, "another mesh"));
        snap_same(a, &before, true);
        assert_int_equal(net->nq, 0);
        pc_wbuf_free(&w);
    }
    pc_members_stats st;
    pc_members_stats_get(a, &st);
    assert_true(st.foreign >= 7 && st.dropped == 0);
    assert_null(pc_members_find(a, h_ep(2)));
    h_free(&net);
}

static uint64_t g_fuzz_rng;

static uint32_t fuzz_rand(uint32_t n)
{
    g_fuzz_rng = g_fuzz_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)((g_fuzz_rng >> 33) % n);
}

/* Payloads that peers really sent, cut, flipped, spliced, or random, and
 * random types, fed to a peer 30,000 times: every one is handled or
 * dropped; a dropped one changes nothing. */
static void t_fuzz(void **state)
{
    (void)state;
    pc_members_opts mo = {.mesh_id = 0x5EED};
    g_hopts = &mo; /* restarts of the peer fuzzed stay in the mesh */
    h_net *net = h_new(4);
    net->caplog = 4096;
    net->log = calloc(net->caplog, sizeof *net->log);
    assert_non_null(net->log);
    for (int i = 1; i < 4; i++)
        pc_members_join(net->p[i].m, h_ep(i / 2), 0);
    h_run(net, 0, 3000);
    pc_members_leave(net->p[3].m, 3001);
    h_run(net, 3001, 3300);
    assert_true(net->nlog > 100);
    pc_members *a = net->p[0].m;
    g_fuzz_rng = 42;
    int dropped = 0, taken = 0;
    uint8_t buf[4096];
    for (int it = 0; it < 30000; it++) {
        const h_msg *src = &net->log[fuzz_rand((uint32_t)net->nlog)];
        size_t len = src->len < sizeof buf ? src->len : sizeof buf;
        memcpy(buf, src->data, len);
        uint16_t type = src->type;
        switch (fuzz_rand(7)) {
        case 0: /* cut */
            len = len ? fuzz_rand((uint32_t)len) : 0;
            break;
        case 1: /* flip bits */
            for (int f = 0, nf = 1 + (int)fuzz_rand(4); f < nf && len; f++)
                buf[fuzz_rand((uint32_t)len)] ^= (uint8_t)(1u << fuzz_rand(8));
            break;
        case 2: /* random bytes */
            len = fuzz_rand(200);
            for (size_t i = 0; i < len; i++)
                buf[i] = (uint8_t)fuzz_rand(256);
            break;
        case 3: /* another membership type */
            type = (uint16_t)(PC_M_PING + fuzz_rand(8));
            break;
        case 6: /* another mesh */
            if (len >= 10)
                buf[2 + fuzz_rand(8)] ^= 0x10;
            break;
        case 4: /* set a byte */
            if (len)
                buf[fuzz_rand((uint32_t)len)] = (uint8_t)fuzz_rand(256);
            break;
        default: /* as sent: delivered to the wrong peer, or not */
            break;
        }
        const char *from = h_ep(1 + (int)fuzz_rand(3));
        snap before;
        snap_take(a, &before);
        const char *why = NULL;
        int rc = pc_members_recv(a, 3400 + (uint64_t)it, from, type, buf, len, &why);
        if (rc || why) { /* malformed, or another mesh's */
            assert_true(rc == LEV_EINVAL || (rc == 0 && strstr(why, "another mesh")));
            assert_non_null(why);
            snap_same(a, &before, rc == 0);
            assert_int_equal(net->nq, 0);
            dropped++;
        } else {
            taken++;
        }
        h_drop_queue(net);
        if (before.n > 128) { /* random but valid updates grow the view: start afresh */
            h_start(net, 0, 3400 + (uint64_t)it);
            a = net->p[0].m;
        }
    }
    print_message("fuzz: %d dropped, %d handled\n", dropped, taken);
    assert_true(dropped > 10000 && taken > 1000);
    h_free(&net);
    g_hopts = NULL;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_mesh_id),
        cmocka_unit_test(t_malformed),
        cmocka_unit_test(t_fuzz),
    };
    return cmocka_run_group_tests_name("membership_input", tests, NULL, NULL);
}
