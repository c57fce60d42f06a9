/* test_membership.c - the membership protocol (peercontroller/membership.h):
 * probes and acks, indirect probes around a lost path, suspicion and
 * refutation, death after suspect_ms and forgetting, leave, data updates,
 * a restarted peer (a new instance), the sync of a view of 1,024 peers,
 * and meshes of 32 and 256 simulated peers
 * (membership_sim.h): convergence, suspicion and death of a killed peer,
 * flat load, false suspicion; two meshes on one network that never merge,
 * restarts on the same endpoint, a slow peer with and without local
 * health awareness; a peer that was cut off, whose view must not spread;
 * a crash confirmed by a refused connection, and the port probe that
 * finds it (portprobe.h, on loopback sockets).
 *
 * Simulated time only (but for the port probe, which waits on its
 * sockets): every run is deterministic, and every loop is bounded in
 * simulated time or in count.
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
 * Watching a simulated mesh
 * =================================================================== */

typedef struct watch {
    int target;                 /* -1: every peer */
    int suspects, deads, lefts; /* transitions seen by any observer */
    int updates;                /* ALIVE -> ALIVE (new member or new data) */
    uint64_t first_suspect, first_dead, last_dead;
} watch;

static void w_seen(void *ud, int obs, int t, pc_member_state old, const pc_member *mb, uint64_t ms)
{
    watch *w = ud;
    pc_member_state now = mb->state;
    (void)obs;
    if (w->target >= 0 && t != w->target)
        return;
    if (now == PC_MEMBER_SUSPECT && !w->suspects++)
        w->first_suspect = ms;
    if (now == PC_MEMBER_DEAD) {
        if (!w->deads++)
            w->first_dead = ms;
        w->last_dead = ms;
    }
    w->lefts += now == PC_MEMBER_LEFT;
    w->updates += old == PC_MEMBER_ALIVE && now == PC_MEMBER_ALIVE;
}

/* Drops what peer a sends or receives (b < 0), or what goes between a and
 * b, from `from` until `until` ms. */
typedef struct cut {
    int a, b;
    uint64_t from, until;
} cut;

static bool cut_filter(void *ud, int from, int to, uint16_t type, uint64_t now)
{
    const cut *c = ud;
    (void)type;
    if (now < c->from || now >= c->until)
        return false;
    if (c->b < 0)
        return from == c->a || to == c->a;
    return (from == c->a && to == c->b) || (from == c->b && to == c->a);
}

static bool c_converged(msim *s, void *ud)
{
    (void)ud;
    return msim_converged(s);
}

typedef struct held {
    int t;
    unsigned mask;
} held;

/* Every live peer holds h->t in one of the states of h->mask. */
static bool c_held(msim *s, void *ud)
{
    const held *h = ud;
    int others = msim_nlive(s) - msim_live(s, h->t);
    return msim_count(s, h->t, h->mask) == others;
}

#define M(st) (1u << (st))

/* A mesh of n peers, converged within limit_ms. */
static msim *sim_mesh(int n, uint64_t seed, uint64_t limit_ms, const pc_members_opts *mo)
{
    msim_opts o = {.n = n, .seed = seed, .start_spread_ms = n > 8 ? 1000 : 0};
    if (mo)
        o.members = *mo;
    msim *s;
    assert_int_equal(msim_new(&s, &o), 0);
    assert_true(msim_run(s, limit_ms, c_converged, NULL));
    return s;
}

/* ===================================================================
 * Protocol
 * =================================================================== */

static void drop_send(void *ud, const char *to, uint16_t type, const void *payload, size_t len)
{
    (void)ud, (void)to, (void)type, (void)payload, (void)len;
}

static void t_new_checks(void **state)
{
    (void)state;
    pc_members *m = NULL;
    pc_peer_rec rec = h_rec("tcp://10.1.0.0:7946");
    pc_members_io io = {.send = drop_send};
    assert_int_equal(pc_members_new(&m, NULL, NULL, &io, 1, 0), LEV_EINVAL);
    assert_int_equal(pc_members_new(&m, &rec, NULL, NULL, 1, 0), LEV_EINVAL);
    pc_members_io no_send = {0};
    assert_int_equal(pc_members_new(&m, &rec, NULL, &no_send, 1, 0), LEV_EINVAL);
    pc_peer_rec bad = rec;
    bad.endpoint[0] = '\0';
    assert_int_equal(pc_members_new(&m, &bad, NULL, &io, 1, 0), LEV_EINVAL);
    snprintf(bad.endpoint, sizeof bad.endpoint, "tcp://a b:1");
    assert_int_equal(pc_members_new(&m, &bad, NULL, &io, 1, 0), LEV_EINVAL);
    bad = rec;
    memset(bad.arch, 'x', sizeof bad.arch);
    assert_int_equal(pc_members_new(&m, &bad, NULL, &io, 1, 0), LEV_EINVAL);
    pc_members_opts o[] = {{.period_ms = -1},    {.period_ms = 100, .probe_timeout_ms = 100},
                           {.indirect = 17},     {.gossip_max = 65},
                           {.suspect_ms = -5},   {.health_max = -2},
                           {.health_max = 65},   {.suspect_ms = 2000, .suspect_max_ms = 1000},
                           {.confirmations = -1}};
    for (size_t i = 0; i < sizeof o / sizeof o[0]; i++)
        assert_int_equal(pc_members_new(&m, &rec, &o[i], &io, 1, 0), LEV_EINVAL);
    assert_null(m);

    assert_int_equal(pc_members_new(&m, &rec, NULL, &io, 1, 0), 0);
    pc_member view[2];
    assert_int_equal(pc_members_view(m, view, 2), 1);
    assert_string_equal(view[0].rec.endpoint, rec.endpoint);
    assert_int_equal(view[0].state, PC_MEMBER_ALIVE);
    assert_int_equal(pc_members_count_live(m), 1);
    assert_non_null(pc_members_find(m, rec.endpoint));
    assert_null(pc_members_find(m, "tcp://10.9.9.9:1"));
    assert_string_equal(pc_member_state_name(PC_MEMBER_SUSPECT), "suspect");
    assert_string_equal(pc_member_state_name(PC_MEMBER_LEFT), "left");
    pc_members_destroy(&m);
    assert_null(m);
    pc_members_destroy(&m);
}

/* Two peers probe each other a whole run: acks come, nothing is suspected. */
static void t_probe_ack(void **state)
{
    (void)state;
    msim *s = sim_mesh(2, 1, 2000, NULL);
    msim_run(s, msim_now(s) + 4000, NULL, NULL);
    for (int i = 0; i < 2; i++) {
        pc_members_stats st;
        pc_members_stats_get(msim_peer(s, i), &st);
        assert_true(st.probes >= 15); /* one a period */
        assert_int_equal(st.suspicions, 0);
        assert_int_equal(st.indirect_probes, 0);
        assert_true(st.received >= st.probes);
        assert_int_equal(msim_state(s, i, 1 - i), PC_MEMBER_ALIVE);
    }
    assert_int_equal(msim_refused(s), 0);
    msim_destroy(&s);
}

/* The path between peers 0 and 1 is lost: their probes of each other go
 * through the other three, whose relayed acks keep both ALIVE. */
static void t_indirect_probe(void **state)
{
    (void)state;
    msim *s = sim_mesh(5, 2, 3000, NULL);
    watch w = {.target = -1};
    cut c = {.a = 0, .b = 1, .from = msim_now(s), .until = UINT64_MAX};
    msim_set_filter(s, cut_filter, &c);
    msim_set_watch(s, w_seen, &w);
    msim_run(s, msim_now(s) + 10000, NULL, NULL);
    pc_members_stats st0, st1;
    pc_members_stats_get(msim_peer(s, 0), &st0);
    pc_members_stats_get(msim_peer(s, 1), &st1);
    assert_true(st0.indirect_probes >= 3 && st1.indirect_probes >= 3);
    assert_int_equal(w.suspects, 0);
    assert_int_equal(st0.suspicions + st1.suspicions, 0);
    assert_int_equal(msim_state(s, 0, 1), PC_MEMBER_ALIVE);
    assert_int_equal(msim_state(s, 1, 0), PC_MEMBER_ALIVE);
    msim_destroy(&s);
}

static bool c_suspected(msim *s, void *ud)
{
    (void)s;
    return ((const watch *)ud)->suspects > 0;
}

/* Peer 3 is cut off until someone suspects it, and 100 ms more: it hears
 * of it once back, refutes with a higher incarnation, and is ALIVE
 * everywhere again before any suspicion of it runs out. */
static void t_suspect_refute(void **state)
{
    (void)state;
    msim *s = sim_mesh(8, 3, 3000, NULL);
    watch w = {.target = 3};
    uint64_t t0 = msim_now(s);
    cut c = {.a = 3, .b = -1, .from = t0, .until = UINT64_MAX};
    msim_set_filter(s, cut_filter, &c);
    msim_set_watch(s, w_seen, &w);
    assert_true(msim_run(s, t0 + 3000, c_suspected, &w));
    c.until = msim_now(s) + 100;
    held back = {3, M(PC_MEMBER_ALIVE)};
    assert_true(msim_run(s, c.until + 800, c_held, &back));
    assert_int_equal(w.deads, 0);
    pc_members_stats st;
    pc_members_stats_get(msim_peer(s, 3), &st);
    assert_true(st.refutations >= 1);
    const pc_member *mb = pc_members_find(msim_peer(s, 0), msim_endpoint(s, 3));
    assert_non_null(mb);
    assert_true(mb->incarnation >= 1);
    /* The suspicions peer 3 raised while cut off are refuted too. */
    assert_true(msim_run(s, c.until + 5000, c_converged, NULL));
    msim_run(s, msim_now(s) + 2000, NULL, NULL);
    assert_int_equal(w.deads, 0);
    msim_destroy(&s);
}

/* A killed peer is SUSPECT after a failed probe, DEAD suspect_ms (here
 * 1 s) later, and forgotten dead_keep_ms after that. */
static void t_dead_after_suspect(void **state)
{
    (void)state;
    pc_members_opts mo = {.dead_keep_ms = 3000, .suspect_ms = 1000};
    msim *s = sim_mesh(8, 4, 3000, &mo);
    watch w = {.target = 5};
    msim_set_watch(s, w_seen, &w);
    uint64_t t0 = msim_now(s);
    msim_kill(s, 5);
    held dead = {5, M(PC_MEMBER_DEAD)};
    assert_true(msim_run(s, t0 + 4000, c_held, &dead));
    assert_true(w.suspects >= 1);
    assert_true(w.first_suspect <= t0 + 1000); /* probed within a few periods */
    assert_true(w.first_dead >= w.first_suspect + 1000);
    assert_true(w.first_dead <= w.first_suspect + 1000 + 200);
    for (int i = 0; i < 8; i++)
        if (i != 5)
            assert_int_equal(pc_members_count_live(msim_peer(s, i)), 7);
    msim_run(s, w.last_dead + 3000 + 250, NULL, NULL);
    for (int i = 0; i < 8; i++)
        if (i != 5) {
            assert_null(pc_members_find(msim_peer(s, i), msim_endpoint(s, 5)));
            pc_member view[8];
            assert_int_equal(pc_members_view(msim_peer(s, i), view, 8), 7);
        }
    msim_destroy(&s);
}

/* A peer that leaves is LEFT everywhere, never suspected, then forgotten. */
static void t_leave(void **state)
{
    (void)state;
    pc_members_opts mo = {.dead_keep_ms = 3000};
    msim *s = sim_mesh(8, 5, 3000, &mo);
    watch w = {.target = 4};
    msim_set_watch(s, w_seen, &w);
    uint64_t t0 = msim_now(s);
    msim_leave(s, 4);
    held left = {4, M(PC_MEMBER_LEFT)};
    assert_true(msim_run(s, t0 + 1000, c_held, &left));
    msim_run(s, t0 + 2500, NULL, NULL);
    assert_int_equal(w.suspects + w.deads, 0);
    assert_int_equal(w.lefts, 7);
    msim_run(s, t0 + 5000, NULL, NULL);
    for (int i = 0; i < 8; i++)
        if (i != 4)
            assert_null(pc_members_find(msim_peer(s, i), msim_endpoint(s, 4)));
    msim_destroy(&s);
}

/* New data of a peer spread with a new incarnation; its name stays. */
static void t_update_self(void **state)
{
    (void)state;
    msim *s = sim_mesh(8, 6, 3000, NULL);
    watch w = {.target = 2};
    msim_set_watch(s, w_seen, &w);
    pc_peer_rec rec = h_rec("tcp://elsewhere:1");
    rec.cores = 7;
    rec.load = 3;
    rec.rate = 1234;
    snprintf(rec.arch, sizeof rec.arch, "aarch64");
    rec.big_endian = 1;
    pc_members_update_self(msim_peer(s, 2), &rec, msim_now(s));
    msim_run(s, msim_now(s) + 2000, NULL, NULL);
    assert_int_equal(w.updates, 7);
    for (int i = 0; i < 8; i++) {
        const pc_member *mb = pc_members_find(msim_peer(s, i), msim_endpoint(s, 2));
        assert_non_null(mb);
        assert_int_equal(mb->incarnation, 1);
        assert_int_equal(mb->rec.cores, 7);
        assert_int_equal(mb->rec.load, 3);
        assert_int_equal(mb->rec.rate, 1234);
        assert_string_equal(mb->rec.arch, "aarch64");
        assert_int_equal(mb->rec.big_endian, 1);
        assert_string_equal(mb->rec.endpoint, msim_endpoint(s, 2));
    }
    msim_destroy(&s);
}

/* Writes a GOSSIP payload of the updates about mbs[0..n). */
static void put_gossip(pc_wbuf *w, const pc_member *mbs, size_t n)
{
    pc_mem_put_var(w, n);
    for (size_t i = 0; i < n; i++)
        pc_mem_put_update(w, &mbs[i], mbs[i].state <= PC_MEMBER_SUSPECT);
}

/* A peer held DEAD restarts on its endpoint, a new instance at
 * incarnation 0: its join replaces the DEAD record of its earlier life,
 * and news of that life does not touch it. */
static void t_restart_new_instance(void **state)
{
    (void)state;
    h_net *net = h_new(2);
    pc_members_join(net->p[1].m, h_ep(0), 0);
    h_run(net, 0, 500);
    assert_non_null(pc_members_find(net->p[0].m, h_ep(1)));
    uint64_t old = pc_members_find(net->p[1].m, h_ep(1))->instance;
    pc_member dead = {
        .rec = h_rec(h_ep(1)), .state = PC_MEMBER_DEAD, .incarnation = 2, .instance = old};
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_mem_put_head(&w, pc_members_mesh_id(net->p[0].m), 0);
    put_gossip(&w, &dead, 1);
    assert_int_equal(
        pc_members_recv(net->p[0].m, 501, "tcp://10.1.0.3:7946", PC_M_GOSSIP, w.data, w.len, NULL),
        0);
    pc_wbuf_free(&w);
    /* a death of a member held alive is taken as a suspicion
     * (t_cut_off_peer); peer 1 is restarted before it can refute */
    assert_int_equal(pc_members_find(net->p[0].m, h_ep(1))->state, PC_MEMBER_SUSPECT);

    h_start(net, 1, 600);
    uint64_t now = pc_members_find(net->p[1].m, h_ep(1))->instance;
    assert_true(now > old);
    pc_members_join(net->p[1].m, h_ep(0), 600);
    h_run(net, 600, 1500);
    assert_int_equal(pc_members_mesh_id(net->p[1].m), pc_members_mesh_id(net->p[0].m));
    const pc_member *mb = pc_members_find(net->p[0].m, h_ep(1));
    assert_non_null(mb);
    assert_int_equal(mb->state, PC_MEMBER_ALIVE);
    assert_int_equal(mb->incarnation, 0);
    assert_true(mb->instance == now);
    /* The earlier life's death again, at any incarnation: no effect. */
    dead.incarnation = 99;
    pc_wbuf_init(&w);
    pc_mem_put_head(&w, pc_members_mesh_id(net->p[0].m), 0);
    put_gossip(&w, &dead, 1);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pc_members_recv(net->p[i].m, 1501, "tcp://10.1.0.3:7946", PC_M_GOSSIP,
                                         w.data, w.len, NULL),
                         0);
    pc_wbuf_free(&w);
    h_run(net, 1501, 3000);
    mb = pc_members_find(net->p[0].m, h_ep(1));
    assert_true(mb->state == PC_MEMBER_ALIVE && mb->instance == now && mb->incarnation == 0);
    pc_members_stats st;
    pc_members_stats_get(net->p[1].m, &st);
    assert_int_equal(st.refutations, 0);
    assert_int_equal(net->refused, 0);
    h_free(&net);
}

/* Lifeguard's suspicion timeout: a suspicion of x that only its accuser
 * and this peer's own failed probes hold lasts 6 - 5 log 2 / log 4 = 3.5
 * s; y, suspected by three others too, is DEAD after suspect_ms. */
static void t_suspicion_confirmed(void **state)
{
    (void)state;
    pc_members_opts mo = {.suspect_ms = 1000, .suspect_max_ms = 6000, .confirmations = 3};
    g_hopts = &mo;
    h_net *net = h_new(1);
    g_hopts = NULL;
    pc_members *a = net->p[0].m;
    pc_member mbs[2] = {{.rec = h_rec("tcp://10.3.0.1:1"), .instance = 9},
                        {.rec = h_rec("tcp://10.3.0.2:1"), .instance = 9}};
    for (int k = 0; k < 6; k++) { /* both alive; x and y by 11; y by 12, 13, 14 */
        pc_wbuf w;
        pc_wbuf_init(&w);
        pc_mem_put_head(&w, pc_members_mesh_id(a), 0);
        if (k == 0) {
            put_gossip(&w, mbs, 2);
        } else {
            pc_member sus = mbs[k > 1];
            sus.state = PC_MEMBER_SUSPECT;
            pc_mem_put_var(&w, 1);
            pc_mem_put_update_by(&w, &sus, false, k == 1 ? 11 : 10 + (uint32_t)k);
        }
        assert_int_equal(pc_members_recv(a, 0, h_ep(1), PC_M_GOSSIP, w.data, w.len, NULL), 0);
        pc_wbuf_free(&w);
    }
    const char *x = mbs[0].rec.endpoint, *y = mbs[1].rec.endpoint;
    h_run(net, 1, 1200);
    assert_int_equal(pc_members_find(a, y)->state, PC_MEMBER_DEAD);
    assert_int_equal(pc_members_find(a, x)->state, PC_MEMBER_SUSPECT);
    h_run(net, 1201, 3400);
    assert_int_equal(pc_members_find(a, x)->state, PC_MEMBER_SUSPECT);
    h_run(net, 3401, 3700);
    assert_int_equal(pc_members_find(a, x)->state, PC_MEMBER_DEAD);
    h_free(&net);
}

/* Sends one GOSSIP to peer `to` of the net from endpoint `from` with one
 * update about mb in state st. */
static void gossip_one(h_net *net, int to, const char *from, const pc_member *mb,
                       pc_member_state st, uint64_t now)
{
    pc_member u = *mb;
    u.state = st;
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_mem_put_head(&w, pc_members_mesh_id(net->p[to].m), 0);
    put_gossip(&w, &u, 1);
    assert_int_equal(pc_members_recv(net->p[to].m, now, from, PC_M_GOSSIP, w.data, w.len, NULL), 0);
    pc_wbuf_free(&w);
}

/* Peers 1 and 2 joined through peer 0, at 1500 ms: every view holds all. */
static h_net *three_peers(void)
{
    h_net *net = h_new(3);
    pc_members_join(net->p[1].m, h_ep(0), 0);
    pc_members_join(net->p[2].m, h_ep(0), 0);
    h_run(net, 0, 1500);
    return net;
}

/* A peer that was cut off judged the others dead meanwhile; once heard
 * again, its view must not spread: a death of a member held ALIVE is
 * taken as a suspicion, which the member refutes; the word of a peer held
 * DEAD on others is not taken at all; a death of a member held SUSPECT
 * is taken at once. */
static void t_cut_off_peer(void **state)
{
    (void)state;
    h_net *net = three_peers();
    pc_members *a = net->p[0].m;
    for (int i = 1; i < 3; i++)
        assert_int_equal(pc_members_find(a, h_ep(i))->state, PC_MEMBER_ALIVE);

    /* peer 2 says peer 1 is dead: a suspicion here, refuted by peer 1 */
    pc_member one = *pc_members_find(a, h_ep(1));
    gossip_one(net, 0, h_ep(2), &one, PC_MEMBER_DEAD, 1501);
    assert_int_equal(pc_members_find(a, h_ep(1))->state, PC_MEMBER_SUSPECT);
    h_run(net, 1502, 2500);
    const pc_member *now1 = pc_members_find(a, h_ep(1));
    assert_int_equal(now1->state, PC_MEMBER_ALIVE);
    assert_true(now1->incarnation > one.incarnation);

    /* peer 1 says peer 2 is suspect, then dead: dead here at once */
    pc_member two = *pc_members_find(a, h_ep(2));
    gossip_one(net, 0, h_ep(1), &two, PC_MEMBER_SUSPECT, 2501);
    gossip_one(net, 0, h_ep(1), &two, PC_MEMBER_DEAD, 2501);
    assert_int_equal(pc_members_find(a, h_ep(2))->state, PC_MEMBER_DEAD);

    /* peer 2, held dead here, says peer 1 is suspect, then dead: ignored */
    one = *pc_members_find(a, h_ep(1));
    gossip_one(net, 0, h_ep(2), &one, PC_MEMBER_SUSPECT, 2502);
    gossip_one(net, 0, h_ep(2), &one, PC_MEMBER_DEAD, 2502);
    now1 = pc_members_find(a, h_ep(1));
    assert_int_equal(now1->state, PC_MEMBER_ALIVE);
    assert_int_equal(now1->incarnation, one.incarnation);
    h_free(&net);
}

/* Drops what goes between peers below `split` and the others, from
 * `from` until `until` ms: a partition into two sides. */
typedef struct split {
    int split;
    uint64_t from, until;
} split;

static bool split_filter(void *ud, int from, int to, uint16_t type, uint64_t now)
{
    const split *c = ud;
    (void)type;
    return now >= c->from && now < c->until && (from < c->split) != (to < c->split);
}

/* A partition that heals with nothing else to say: peers 3 and 4 are cut
 * off from 0, 1 and 2 for 8 s, so that each side takes the other for
 * dead; once the cut is gone, the push-pulls with members taken for dead
 * bring the mesh together again before dead_keep_ms (30 s) would have the
 * sides forget each other. */
static void t_partition_heals(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        msim *s = sim_mesh(5, seed, 10000, NULL);
        uint64_t t0 = msim_now(s);
        split c = {.split = 3, .from = t0, .until = t0 + 8000};
        msim_set_filter(s, split_filter, &c);
        msim_run(s, t0 + 8000, NULL, NULL); /* the cut lasts its 8 s */
        for (int i = 0; i < 5; i++)         /* each side holds the other dead */
            for (int k = 0; k < 5; k++)
                if ((i < 3) != (k < 3))
                    assert_int_equal(msim_state(s, i, k), PC_MEMBER_DEAD);
        if (!msim_run(s, t0 + 8000 + 25000, c_converged, NULL))
            fail_msg("seed %llu: the mesh did not come together again within 25 s of the heal",
                     (unsigned long long)seed);
        msim_destroy(&s);
    }
}

/* A refused connection (pc_members_refused): a suspect of that instance
 * is DEAD at once, a member held ALIVE becomes SUSPECT, and a refusal of
 * an earlier life of the endpoint, or of a stranger, changes nothing. */
static void t_refused(void **state)
{
    (void)state;
    h_net *net = three_peers();
    pc_members *a = net->p[0].m;
    pc_member one = *pc_members_find(a, h_ep(1));
    pc_members_refused(a, h_ep(1), one.instance - 1, 1501); /* an earlier life */
    pc_members_refused(a, "tcp://10.9.9.9:1", 1, 1501);     /* a stranger */
    assert_int_equal(pc_members_find(a, h_ep(1))->state, PC_MEMBER_ALIVE);
    pc_members_refused(a, h_ep(1), one.instance, 1501);
    assert_int_equal(pc_members_find(a, h_ep(1))->state, PC_MEMBER_SUSPECT);
    pc_members_refused(a, h_ep(1), one.instance, 1502);
    assert_int_equal(pc_members_find(a, h_ep(1))->state, PC_MEMBER_DEAD);
    pc_members_stats st;
    pc_members_stats_get(a, &st);
    assert_int_equal(st.refused, 2);
    h_free(&net);
}

typedef struct probe_seen {
    int n;
    char ep[PC_ENDPOINT_MAX];
    uint64_t instance;
} probe_seen;

static void probe_refused(void *ud, const char *endpoint, uint64_t instance)
{
    probe_seen *s = ud;
    s->n++;
    snprintf(s->ep, sizeof s->ep, "%s", endpoint);
    s->instance = instance;
}

/* A loopback TCP socket bound to a free port, listening or not; its port
 * in *port. */
static int bound_socket(bool listening, int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    if (listening)
        assert_int_equal(listen(fd, 4), 0);
    socklen_t len = sizeof sa;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

/* The port probe (portprobe.h) on loopback: a port where nothing listens
 * is reported refused, once, with the instance it was started for; a
 * listening port (a paused peer's) and an endpoint named by a host name
 * are not. Runs until no probe is left, waiting on their sockets. */
static void t_port_probe(void **state)
{
    (void)state;
    int open_port, closed_port;
    int lfd = bound_socket(true, &open_port);
    int cfd = bound_socket(false, &closed_port); /* holds the port: nothing else takes it */
    probe_seen seen = {0};
    pc_portprobe *pp = NULL;
    assert_int_equal(pc_portprobe_new(&pp, probe_refused, &seen), 0);
    char open_ep[64], closed_ep[64], named_ep[64];
    snprintf(open_ep, sizeof open_ep, "tcp://127.0.0.1:%d", open_port);
    snprintf(closed_ep, sizeof closed_ep, "tcp://127.0.0.1:%d", closed_port);
    snprintf(named_ep, sizeof named_ep, "tcp://localhost:%d", closed_port);
    uint64_t now = 1000;
    pc_portprobe_start(pp, open_ep, 7, now);
    pc_portprobe_start(pp, closed_ep, 8, now);
    pc_portprobe_start(pp, closed_ep, 9, now); /* one runs: not started again */
    pc_portprobe_start(pp, named_ep, 10, now);
    assert_int_equal(seen.n, 0); /* never reported from start */
    zmq_pollitem_t items[PC_PORTPROBE_MAX];
    for (int i = 0; i < 200; i++) {
        uint64_t next = pc_portprobe_tick(pp, now);
        int n = pc_portprobe_poll_items(pp, items, PC_PORTPROBE_MAX);
        if (!n && next == UINT64_MAX)
            break;
        assert_true(zmq_poll(items, n, 100) >= 0);
        pc_portprobe_on_ready(pp, items, n);
        now += 10; /* the probes' timeout stays far: each ends by its event */
    }
    assert_int_equal(pc_portprobe_poll_items(pp, items, PC_PORTPROBE_MAX), 0);
    assert_int_equal(seen.n, 1);
    assert_string_equal(seen.ep, closed_ep);
    assert_int_equal(seen.instance, 8);
    pc_portprobe_destroy(&pp);
    assert_null(pp);
    close(lfd);
    close(cfd);
}

/* A peer that knows 1,024 peers answers a join with its whole view in
 * one SYNC of under 64 KiB, and the newcomer holds every record. */
static void t_sync_large_view(void **state)
{
    (void)state;
    enum { N = 1022 };
    h_net *net = h_new(2);
    static pc_member mbs[N];
    for (int i = 0; i < N; i++) {
        pc_member *mb = &mbs[i];
        memset(mb, 0, sizeof *mb);
        snprintf(mb->rec.endpoint, sizeof mb->rec.endpoint, "tcp://192.168.%d.%d:7946", i / 250,
                 i % 250);
        mb->rec.cores = (uint32_t)(i % 64 + 1);
        mb->rec.rate = 1000 + (uint32_t)i * 7;
        mb->rec.load = (uint32_t)(i % 9);
        snprintf(mb->rec.arch, sizeof mb->rec.arch, "%s", i % 2 ? "x86_64" : "aarch64");
        mb->rec.big_endian = i % 3 == 0;
        mb->rec.version = PC_WIRE_VERSION;
        mb->incarnation = (uint32_t)(i % 5);
        mb->instance = 1000 + (uint64_t)i;
        mb->state = i % 10 == 9 ? PC_MEMBER_SUSPECT : PC_MEMBER_ALIVE;
    }
    for (int at = 0; at < N; at += PC_MEM_GOSSIP_CAP) {
        pc_wbuf w;
        pc_wbuf_init(&w);
        size_t k = N - at < PC_MEM_GOSSIP_CAP ? (size_t)(N - at) : PC_MEM_GOSSIP_CAP;
        pc_mem_put_head(&w, pc_members_mesh_id(net->p[0].m), 0);
        put_gossip(&w, &mbs[at], k);
        const char *why = NULL;
        assert_int_equal(pc_members_recv(net->p[0].m, 1, "tcp://10.1.0.3:7946", PC_M_GOSSIP, w.data,
                                         w.len, &why),
                         0);
        pc_wbuf_free(&w);
    }
    assert_int_equal(pc_members_count_live(net->p[0].m), N + 1);
    h_drop_queue(net);
    pc_members_join(net->p[1].m, h_ep(0), 2);
    h_flush(net, 2);
    assert_int_equal(net->refused, 0);
    /* 1,022 others, the seed, the newcomer: the view of 1,024 peers. */
    assert_int_equal(pc_members_count_live(net->p[1].m), N + 2);
    assert_true(net->sync_len > 0 && net->sync_len <= 65536);
    print_message("sync of a view of %d peers: %zu bytes\n", N + 2, net->sync_len);
    for (int i = 0; i < N; i++) {
        const pc_member *mb = pc_members_find(net->p[1].m, mbs[i].rec.endpoint);
        assert_non_null(mb);
        assert_int_equal(mb->state, mbs[i].state);
        assert_int_equal(mb->incarnation, mbs[i].incarnation);
        assert_true(mb->instance == mbs[i].instance);
        assert_int_equal(mb->rec.cores, mbs[i].rec.cores);
        assert_int_equal(mb->rec.rate, mbs[i].rec.rate);
        assert_int_equal(mb->rec.load, mbs[i].rec.load);
        assert_string_equal(mb->rec.arch, mbs[i].rec.arch);
        assert_int_equal(mb->rec.big_endian, mbs[i].rec.big_endian);
        assert_int_equal(mb->rec.version, mbs[i].rec.version);
    }
    h_free(&net);
}

/* ===================================================================
 * Simulated meshes
 * =================================================================== */

static msim_result g_sim32;

static void sim_scale(int n, msim_result *r)
{
    /* at a suspicion timeout of 1 s (the default is longer:
     * PC_MEMBERS_SUSPECT_MS), as eval/membership measures it */
    msim_opts o = {.n = n, .seed = 7, .start_spread_ms = 1000, .members.suspect_ms = 1000};
    assert_int_equal(msim_scenario(&o, 5000, 5000, r), 0);
    print_message("%d peers: converged %.0f ms after the last start, killed peer suspected "
                  "everywhere in %.0f ms, dead in %.0f ms; %.2f messages and %.0f bytes per peer "
                  "per period\n",
                  n, r->converge_ms, r->suspect_ms, r->dead_ms, r->msgs, r->bytes);
    assert_int_equal(r->refused, 0);
    assert_true(r->converge_ms >= 0 && r->converge_ms <= 5000);
    assert_true(r->suspect_ms >= 0 && r->suspect_ms <= 2000);
    assert_true(r->dead_ms >= 1000 && r->dead_ms <= 3500);
    assert_true(r->msgs > 1.5 && r->msgs < 4);
}

static void t_sim_32(void **state)
{
    (void)state;
    sim_scale(32, &g_sim32);
}

/* 256 peers, and the load of a peer no higher than among 32. */
static void t_sim_256(void **state)
{
    (void)state;
    msim_result r;
    if (g_sim32.msgs == 0)
        sim_scale(32, &g_sim32);
    sim_scale(256, &r);
    assert_true(r.msgs <= 1.5 * g_sim32.msgs);
    assert_true(r.bytes - r.sync_bytes <= 1.5 * (g_sim32.bytes - g_sim32.sync_bytes));
}

/* A peer whose messages are all lost for a second is suspected (perhaps
 * declared dead), refutes once back, and is ALIVE everywhere again. */
static void false_suspicion(int n, uint64_t seed)
{
    msim *s = sim_mesh(n, seed, 10000, NULL);
    msim_run(s, msim_now(s) + 3000, NULL, NULL);
    int victim = n / 2 + 1;
    watch w = {.target = victim};
    uint64_t t0 = msim_now(s);
    cut c = {.a = victim, .b = -1, .from = t0, .until = t0 + 1000};
    msim_set_filter(s, cut_filter, &c);
    msim_set_watch(s, w_seen, &w);
    msim_run(s, t0 + 1000, NULL, NULL);
    /* A second may pass without a probe of it (one a period, round-robin
     * over everyone): then the cut lasts until one fails. */
    assert_true(msim_run(s, t0 + 3000, c_suspected, &w));
    c.until = msim_now(s) > c.until ? msim_now(s) : c.until;
    held back = {victim, M(PC_MEMBER_ALIVE)};
    assert_true(msim_run(s, c.until + 3000, c_held, &back));
    print_message("%d peers: cut off for %llu ms, ALIVE everywhere again %llu ms after\n", n,
                  (unsigned long long)(c.until - t0), (unsigned long long)(msim_now(s) - c.until));
    assert_true(msim_run(s, c.until + 8000, c_converged, NULL));
    assert_int_equal(msim_refused(s), 0);
    msim_destroy(&s);
}

static void t_false_suspicion_32(void **state)
{
    (void)state;
    false_suspicion(32, 8);
}

static void t_false_suspicion_256(void **state)
{
    (void)state;
    false_suspicion(256, 9);
}

/* 5 % of messages lost: indirect probes keep false suspicions rare and
 * short; nobody is declared dead. */
static void t_lossy(void **state)
{
    (void)state;
    msim_opts o = {.n = 32, .seed = 10, .start_spread_ms = 500, .loss = 0.05};
    msim *s;
    assert_int_equal(msim_new(&s, &o), 0);
    assert_true(msim_run(s, 10000, c_converged, NULL));
    watch w = {.target = -1};
    msim_set_watch(s, w_seen, &w);
    uint64_t raised = 0;
    msim_run(s, msim_now(s) + 20000, NULL, NULL);
    for (int i = 0; i < 32; i++) {
        pc_members_stats st;
        pc_members_stats_get(msim_peer(s, i), &st);
        raised += st.suspicions;
    }
    print_message("5 %% loss, 32 peers, 20 s (3,200 probes): %llu suspicions raised, %d deaths\n",
                  (unsigned long long)raised, w.deads);
    assert_int_equal(w.deads, 0);
    assert_true(raised <= 10);
    assert_true(msim_converged(s));
    msim_destroy(&s);
}

/* Two meshes on one network: a killed peer of mesh A starts again on its
 * endpoint as a member of mesh B (0 to 1 s after the kill), while A's
 * peers still probe and gossip to it. Over 12 seeds, no peer takes a
 * record of a peer of the other mesh, A's peers hold the endpoint's old
 * life dead, and both meshes converge apart. */
static void t_two_meshes(void **state)
{
    (void)state;
    uint64_t foreign = 0;
    for (uint64_t seed = 1; seed <= 12; seed++) {
        msim_opts o = {.n = 24, .seed = seed, .start_spread_ms = 500, .meshes = 2};
        msim_meshes_result r;
        assert_int_equal(msim_two_meshes(&o, 2 * (int)(seed % 10) + 2, 150 * (int)(seed % 8), &r),
                         0);
        if (!r.converged || r.merges || r.held_live || r.refused)
            fail_msg("seed %llu: converged %d, %llu merges, %d of A hold it live, %llu refused",
                     (unsigned long long)seed, r.converged, (unsigned long long)r.merges,
                     r.held_live, (unsigned long long)r.refused);
        foreign += r.foreign;
    }
    print_message("two meshes of 12, 12 seeds: never merged; %llu messages of the other mesh "
                  "ignored\n",
                  (unsigned long long)foreign);
    assert_true(foreign > 0);
}

/* A peer killed and restarted on its endpoint (once its death is known
 * everywhere, or before anyone noticed it) is ALIVE everywhere again
 * within a second; its earlier life's death and suspicion, told to every
 * peer at a high incarnation, never touch the new one. */
static void t_restart_same_endpoint(void **state)
{
    (void)state;
    double worst = 0;
    for (uint64_t seed = 1; seed <= 8; seed++) {
        msim_opts o = {.n = 16, .seed = 100 + seed, .start_spread_ms = 1000};
        msim_restart_result r;
        int after = seed % 2 ? -1 : 40 * (int)seed;
        assert_int_equal(msim_restarted(&o, 3 + (int)seed, after, &r), 0);
        if (r.alive_ms < 0 || r.alive_ms > 1000 || r.hits || !r.alive_after || r.refused)
            fail_msg("seed %llu: ALIVE everywhere after %.0f ms, new life held suspect or dead %d "
                     "times, %llu refused",
                     (unsigned long long)seed, r.alive_ms, r.hits, (unsigned long long)r.refused);
        worst = r.alive_ms > worst ? r.alive_ms : worst;
    }
    print_message("restart on the same endpoint: ALIVE everywhere again within %.0f ms\n", worst);
}

/* A slow peer (each message it receives handled 100 to 600 ms late)
 * suspects healthy peers far less often with local health awareness
 * (its probe timeout and period grow with its failed probes) than
 * without. The figures are in eval/membership/README.md. */
static void t_slow_peer(void **state)
{
    (void)state;
    msim_slow_result sum[2] = {{0}};
    for (uint64_t seed = 1; seed <= 5; seed++) {
        msim_slow_result r[2];
        for (int lhm = 0; lhm < 2; lhm++) {
            msim_opts o = {.n = 16,
                           .seed = 200 + seed,
                           .start_spread_ms = 500,
                           .slow_peer = 5,
                           .slow_min_ms = 100,
                           .slow_max_ms = 600};
            o.members.health_max = lhm ? 0 : -1;
            assert_int_equal(msim_slow(&o, 5000, 30000, &r[lhm]), 0);
            sum[lhm].raised += r[lhm].raised;
            sum[lhm].false_views += r[lhm].false_views;
            sum[lhm].slow_views += r[lhm].slow_views;
        }
        if (r[1].raised * 3 > r[0].raised || r[1].false_views * 3 > r[0].false_views ||
            r[0].refused || r[1].refused)
            fail_msg("seed %llu: false suspicions raised %llu with local health, %llu without",
                     (unsigned long long)seed, (unsigned long long)r[1].raised,
                     (unsigned long long)r[0].raised);
    }
    for (int lhm = 0; lhm < 2; lhm++)
        print_message("slow peer, 16 peers, 5 seeds x 30 s, local health %s: %llu false suspicions "
                      "raised, healthy peers held suspect %llu times, the slow peer %llu times\n",
                      lhm ? "on" : "off", (unsigned long long)sum[lhm].raised,
                      (unsigned long long)sum[lhm].false_views,
                      (unsigned long long)sum[lhm].slow_views);
    assert_true(sum[1].raised * 5 <= sum[0].raised);
}
int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_new_checks),
        cmocka_unit_test(t_probe_ack),
        cmocka_unit_test(t_indirect_probe),
        cmocka_unit_test(t_suspect_refute),
        cmocka_unit_test(t_dead_after_suspect),
        cmocka_unit_test(t_leave),
        cmocka_unit_test(t_update_self),
        cmocka_unit_test(t_restart_new_instance),
        cmocka_unit_test(t_suspicion_confirmed),
        cmocka_unit_test(t_cut_off_peer),
        cmocka_unit_test(t_partition_heals),
        cmocka_unit_test(t_refused),
        cmocka_unit_test(t_port_probe),
        cmocka_unit_test(t_sync_large_view),
        cmocka_unit_test(t_sim_32),
        cmocka_unit_test(t_sim_256),
        cmocka_unit_test(t_false_suspicion_32),
        cmocka_unit_test(t_false_suspicion_256),
        cmocka_unit_test(t_lossy),
        cmocka_unit_test(t_two_meshes),
        cmocka_unit_test(t_restart_same_endpoint),
        cmocka_unit_test(t_slow_peer),
    };
    return cmocka_run_group_tests_name("membership", tests, NULL, NULL);
}
