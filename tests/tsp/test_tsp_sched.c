/* test_tsp_sched.c - lev-tsp's schedule decisions (samples/tsp/tsp_sched.c):
 * the check of a schedule that came from elsewhere, the order in which a
 * VT picks units, what a commit marks, backups and waits, the second unit
 * claimed ahead and when it is not, and runs of a model mesh over many
 * seeds in which every unit is committed first exactly once, in order,
 * after its migrant, and a unit claimed ahead never reads a state.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tsp_sched.h"

/* A schedule of k islands and e epochs on the heap. */
static tsp_sched *s_new(int32_t k, int32_t e)
{
    tsp_sched *s = malloc(tsp_sched_bytes(k));
    assert_non_null(s);
    tsp_sched_init(s, k, e);
    return s;
}

static tsp_asker s_vt(uint64_t self, int32_t me, int32_t held, const tsp_have *have, int32_t n)
{
    return (tsp_asker){.self = self, .me = me, .held = held, .have = have, .nhave = n};
}

static void t_bad(void **state)
{
    (void)state;
    tsp_sched *s = s_new(4, 3);
    size_t len = tsp_sched_bytes(4);
    assert_null(tsp_sched_bad(s, len, 4, 3));
    assert_non_null(tsp_sched_bad(NULL, len, 4, 3));
    assert_non_null(tsp_sched_bad(s, len - 1, 4, 3));
    assert_non_null(tsp_sched_bad(s, len, 5, 3));
    assert_non_null(tsp_sched_bad(s, len, 4, 2));
    tsp_sched_slots(s)[2].done = 4;
    assert_non_null(tsp_sched_bad(s, len, 4, 3));
    tsp_sched_slots(s)[2].done = -1;
    assert_non_null(tsp_sched_bad(s, len, 4, 3));
    tsp_sched_slots(s)[2].done = 3;
    assert_null(tsp_sched_bad(s, len, 4, 3));
    s->nwait = TSP_WAITERS_MAX + 1;
    assert_non_null(tsp_sched_bad(s, len, 4, 3));
    s->nwait = 0;
    s->nvts = -1;
    assert_non_null(tsp_sched_bad(s, len, 4, 3));
    s->nvts = 0;
    s->magic ^= 1;
    assert_non_null(tsp_sched_bad(s, len, 4, 3));
    free(s);
}

static void t_join(void **state)
{
    (void)state;
    tsp_sched *s = s_new(2, 2);
    assert_int_equal(tsp_sched_join(s, 7), 0);
    assert_int_equal(tsp_sched_join(s, 9), 1);
    assert_int_equal(tsp_sched_join(s, 7), 0);
    for (uint64_t id = 100; s->nvts < TSP_WAITERS_MAX; id++) {
        int32_t at = tsp_sched_join(s, id);
        assert_int_equal(at, s->nvts - 1);
    }
    assert_int_equal(tsp_sched_join(s, 5), -1);
    assert_int_equal(tsp_sched_join(s, 9), 1);
    free(s);
}

/* The order of picks: the held island, a kept one within one epoch of the
 * lowest, the lowest epoch; a unit whose migrant does not exist is not
 * ready. */
static void t_pick_order(void **state)
{
    (void)state;
    tsp_sched *s = s_new(4, 5);
    tsp_slot *sl = tsp_sched_slots(s);
    tsp_claim c;
    tsp_asker a = s_vt(7, -1, -1, NULL, 0);
    assert_int_equal(tsp_sched_pick(s, &a, 0, &c), TSP_PICK_UNIT);
    assert_int_equal(c.island, 0);
    assert_int_equal(c.epoch, 0);
    assert_int_equal(sl[0].owner, 7);
    assert_int_equal(sl[0].claimed, 1);
    /* done 2, 2, 1, 1: island 0 (epoch 2) waits for island 3; 1 and 3 ready */
    sl[0] = (tsp_slot){.done = 2};
    sl[1].done = sl[2].done = 1;
    sl[1].done = 2;
    sl[3].done = 1;
    tsp_have have[] = {{1, 2}, {3, 1}};
    a = s_vt(7, -1, 1, have, 2);
    assert_int_equal(tsp_sched_pick(s, &a, 0, &c), TSP_PICK_UNIT);
    assert_int_equal(c.island, 1); /* held */
    sl[1].owner = 0;
    a = s_vt(7, -1, 0, have, 2);
    assert_int_equal(tsp_sched_pick(s, &a, 0, &c), TSP_PICK_UNIT);
    assert_int_equal(c.island, 3); /* kept, lowest epoch 1 */
    sl[3].owner = 0;
    tsp_have far[] = {{1, 2}};
    a = s_vt(7, -1, 0, far, 1);
    assert_int_equal(tsp_sched_pick(s, &a, 0, &c), TSP_PICK_UNIT);
    assert_int_equal(c.island, 1); /* kept, one epoch above the lowest */
    sl[1].owner = 0;
    sl[1].done = 3;
    sl[0].done = 3;
    sl[3].done = 2;
    /* ready: 1 (3 <= 3), 2 (1), 3 (2 <= 2); kept 1 at 3 is two above 2's 1 */
    tsp_have two[] = {{1, 3}};
    a = s_vt(7, -1, 0, two, 1);
    assert_int_equal(tsp_sched_pick(s, &a, 0, &c), TSP_PICK_UNIT);
    assert_int_equal(c.island, 2);
    free(s);
}

/* Commits: the first marks, a second changes nothing; the migrant's
 * sending is noted for the next island; the next VT to run that island
 * learns who sent it. */
static void t_done(void **state)
{
    (void)state;
    tsp_sched *s = s_new(3, 4);
    tsp_slot *sl = tsp_sched_slots(s);
    tsp_claim c;
    int32_t mx = tsp_sched_join(s, 7), my = tsp_sched_join(s, 9);
    tsp_asker x = s_vt(7, mx, -1, NULL, 0), y = s_vt(9, my, -1, NULL, 0);
    assert_int_equal(tsp_sched_pick(s, &x, 0, &c), TSP_PICK_UNIT);
    assert_int_equal(c.island, 0);
    assert_int_equal(tsp_sched_done(s, &x, 0, 0, 500), 1);
    assert_int_equal(sl[0].done, 1);
    assert_int_equal(sl[0].owner, 0);
    assert_int_equal(s->units_done, 1);
    assert_int_equal(s->best, 500);
    assert_int_equal(sl[1].sent[0].from, 7);
    assert_int_equal(sl[1].sent[0].sent, 2);
    assert_int_equal(tsp_sched_done(s, &y, 0, 0, 400), 0);
    assert_int_equal(s->units_done, 1);
    assert_int_equal(s->best, 500);
    assert_int_equal(tsp_sched_done(s, &y, 5, 0, 400), 0); /* no such island */
    /* island 1 epoch 1 waits for island 0's epoch 0 only: after 1's epoch 0 */
    sl[1].done = 1;
    sl[2].done = 1;
    sl[0].owner = 99;
    assert_int_equal(tsp_sched_pick(s, &y, 0, &c), TSP_PICK_UNIT);
    assert_int_equal(c.island, 1);
    assert_int_equal(c.epoch, 1);
    assert_int_equal(c.mig_from, 7);
    sl[1].owner = 0;
    assert_int_equal(tsp_sched_pick(s, &x, 0, &c), TSP_PICK_UNIT);
    assert_int_equal(c.island, 1);
    assert_int_equal(c.mig_from, 0); /* its own it keeps */
    /* a VT that joined after the migrant went out was not sent it */
    sl[1].owner = 0;
    tsp_asker z = s_vt(11, tsp_sched_join(s, 11), -1, NULL, 0);
    assert_int_equal(tsp_sched_pick(s, &z, 0, &c), TSP_PICK_UNIT);
    assert_int_equal(c.island, 1);
    assert_int_equal(c.mig_from, 0);
    /* the last epoch's migrant is not noted */
    sl[2].done = 3;
    assert_int_equal(tsp_sched_done(s, &x, 2, 3, 450), 1);
    assert_int_equal(sl[0].sent[3 % TSP_MIG_SENT].from, 0);
    assert_int_equal(s->best, 450);
    assert_int_equal(s->best_island, 2);
    free(s);
}

/* With every unit claimed by another VT: wait (registered once); stuck,
 * or nothing left unclaimed: back up the oldest claim; then done. */
static void t_backup_wait(void **state)
{
    (void)state;
    tsp_sched *s = s_new(2, 3);
    tsp_slot *sl = tsp_sched_slots(s);
    tsp_claim c;
    tsp_asker x = s_vt(7, -1, -1, NULL, 0), y = s_vt(9, -1, -1, NULL, 0);
    assert_int_equal(tsp_sched_pick(s, &x, 0, &c), TSP_PICK_UNIT);
    assert_int_equal(tsp_sched_done(s, &x, 0, 0, 10), 1);
    /* island 0 epoch 1 waits for island 1; island 1 is claimed by x */
    assert_int_equal(tsp_sched_pick(s, &x, 0, &c), TSP_PICK_UNIT);
    assert_int_equal(c.island, 1);
    assert_int_equal(tsp_sched_pick(s, &y, 0, &c), TSP_PICK_WAIT);
    assert_int_equal(tsp_sched_pick(s, &y, 0, &c), TSP_PICK_WAIT);
    assert_int_equal(s->nwait, 1);
    assert_int_equal(s->waiters[0], 9);
    assert_int_equal(tsp_sched_pick(s, &y, 1, &c), TSP_PICK_BACKUP);
    assert_int_equal(c.island, 1);
    assert_int_equal(sl[1].backup, 9);
    assert_int_equal(s->backups, 1);
    /* the last units: both claimed and backed up */
    sl[0].done = 2;
    sl[1].done = 2;
    sl[0].owner = 7;
    sl[1].owner = 7;
    sl[1].backup = 9;
    assert_int_equal(tsp_sched_pick(s, &y, 0, &c), TSP_PICK_BACKUP);
    assert_int_equal(c.island, 0);
    assert_int_equal(tsp_sched_pick(s, &y, 0, &c), TSP_PICK_DONE);
    assert_int_equal(tsp_sched_pick(s, &x, 0, &c), TSP_PICK_DONE);
    free(s);
}

/* A second unit is claimed only when enough are left, one ready unit is
 * left for each other VT, and the VT has both states. */
static void t_ahead(void **state)
{
    (void)state;
    tsp_sched *s = s_new(8, 10);
    tsp_slot *sl = tsp_sched_slots(s);
    tsp_claim a, b;
    int32_t mx = tsp_sched_join(s, 7);
    tsp_sched_join(s, 9);
    /* a new VT: its first unit (epoch 0) and a second of epoch 0 */
    tsp_asker x = s_vt(7, mx, -1, NULL, 0);
    assert_int_equal(tsp_sched_pick(s, &x, 0, &a), TSP_PICK_UNIT);
    assert_int_equal(tsp_sched_pick_ahead(s, &x, &a, &b), 1);
    assert_int_equal(a.island, 0);
    assert_int_equal(b.island, 1);
    assert_int_equal(b.epoch, 0);
    assert_int_equal(sl[1].owner, 7);
    assert_true(sl[1].claimed > sl[0].claimed);
    /* every island at epoch 3, the VT holds 2 and kept 5 */
    for (int32_t i = 0; i < 8; i++)
        sl[i] = (tsp_slot){.done = 3};
    tsp_have have[] = {{2, 3}, {5, 3}};
    x = s_vt(7, mx, 2, have, 2);
    assert_int_equal(tsp_sched_pick(s, &x, 0, &a), TSP_PICK_UNIT);
    assert_int_equal(a.island, 2);
    assert_int_equal(tsp_sched_pick_ahead(s, &x, &a, &b), 1);
    assert_int_equal(b.island, 5);
    assert_int_equal(b.epoch, 3);
    /* no state of another ready island: none */
    sl[5].owner = 0;
    tsp_have only[] = {{2, 3}};
    x = s_vt(7, mx, 2, only, 1);
    sl[2].owner = 0;
    assert_int_equal(tsp_sched_pick(s, &x, 0, &a), TSP_PICK_UNIT);
    assert_int_equal(tsp_sched_pick_ahead(s, &x, &a, &b), 0);
    /* the first unit's state would push the second's out: none. Island 0
     * (epoch 3) is the lowest ready; the kept island 4 (epoch 5) is two
     * above it, so the VT runs 0, whose state it does not have. */
    for (int32_t i = 0; i < 8; i++)
        sl[i] = (tsp_slot){.done = i ? 5 : 3};
    tsp_have high[] = {{4, 5}};
    x = s_vt(7, mx, -1, high, 1);
    assert_int_equal(tsp_sched_pick(s, &x, 0, &a), TSP_PICK_UNIT);
    assert_int_equal(a.island, 0);
    assert_int_equal(tsp_sched_pick_ahead(s, &x, &a, &b), 0);
    for (int32_t i = 0; i < 8; i++)
        sl[i] = (tsp_slot){.done = 3};
    /* fewer ready units than VTs once the first is claimed: none */
    for (int32_t i = 0; i < 8; i++)
        sl[i].owner = i == 2 || i == 5 ? 0 : 50 + (uint64_t)i;
    x = s_vt(7, mx, 2, have, 2);
    assert_int_equal(tsp_sched_pick(s, &x, 0, &a), TSP_PICK_UNIT);
    assert_int_equal(a.island, 2);
    assert_int_equal(tsp_sched_pick_ahead(s, &x, &a, &b), 0);
    /* the end of the run: at most two unclaimed units per VT left: none */
    for (int32_t i = 0; i < 8; i++)
        sl[i] = (tsp_slot){.done = i == 2 || i == 5 ? 9 : 10};
    tsp_have end[] = {{2, 9}, {5, 9}};
    x = s_vt(7, mx, 2, end, 2);
    assert_int_equal(tsp_sched_pick(s, &x, 0, &a), TSP_PICK_UNIT);
    assert_int_equal(tsp_sched_pick_ahead(s, &x, &a, &b), 0);
    free(s);
}

/* ===================================================================
 * A model mesh: VTs that keep states as the task does (tsp_tasks.c)
 * =================================================================== */

#define M_KEPT 4 /* TSP_STATES_KEPT of tsp_tasks.c */

typedef struct m_vt {
    uint64_t self;
    int32_t me, held, held_epoch;
    tsp_have kept[M_KEPT];
    tsp_claim run[2]; /* the unit it runs, then the one claimed ahead */
    int32_t nrun;
    int32_t pend[2][2];
    int32_t npend;
    int stuck, done;
    int reads, ahead_reads;
} m_vt;

/* As s_load_island and s_swap_state: takes the unit's state, keeping the
 * held one in place of the kept one of the fewest epochs; counts a read
 * when the state was neither held nor kept. */
static void m_load(m_vt *v, int32_t island, int32_t epoch, int ahead)
{
    if (v->held == island && v->held_epoch == epoch)
        return;
    int hit = -1, slot = -1;
    for (int j = 0; j < M_KEPT; j++) {
        if (v->kept[j].island == island && v->kept[j].epochs == epoch)
            hit = j;
        else if (slot < 0 || v->kept[j].epochs < v->kept[slot].epochs)
            slot = j;
    }
    if (hit >= 0) {
        v->kept[hit] = (tsp_have){v->held, v->held >= 0 ? v->held_epoch : -1};
    } else {
        if (v->held >= 0 && slot >= 0)
            v->kept[slot] = (tsp_have){v->held, v->held_epoch};
        if (epoch > 0) {
            v->reads++;
            v->ahead_reads += ahead;
        }
    }
    v->held = island;
    v->held_epoch = epoch;
}

static tsp_asker m_asker(const m_vt *v, tsp_have have[1 + M_KEPT])
{
    int32_t n = 0;
    if (v->held >= 0)
        have[n++] = (tsp_have){v->held, v->held_epoch};
    for (int j = 0; j < M_KEPT; j++)
        if (v->kept[j].island >= 0)
            have[n++] = v->kept[j];
    return s_vt(v->self, v->me, v->held, have, n);
}

/* One run of the model: `nvt` VTs on k islands x e epochs, steps in an
 * order drawn from seed. Returns the units claimed ahead. */
static int m_run(uint32_t seed, int32_t nvt, int32_t k, int32_t e)
{
    tsp_sched *s = s_new(k, e);
    tsp_slot *sl = tsp_sched_slots(s);
    m_vt vt[8];
    int32_t *firsts = calloc((size_t)(k * e), sizeof *firsts);
    assert_non_null(firsts);
    for (int32_t i = 0; i < nvt; i++) {
        vt[i] = (m_vt){.self = 100 + (uint64_t)i, .me = -1, .held = -1};
        for (int j = 0; j < M_KEPT; j++)
            vt[i].kept[j] = (tsp_have){-1, -1};
    }
    uint32_t r = seed * 2654435761u + 1;
    int ahead = 0, live = nvt;
    for (int step = 0; live && step < 100000; step++) {
        r = r * 1103515245u + 12345u;
        m_vt *v = &vt[(r >> 16) % (uint32_t)nvt];
        if (v->done)
            continue;
        if (v->nrun) { /* it ends its unit, and starts the one claimed ahead */
            tsp_claim *c = &v->run[0];
            m_load(v, c->island, c->epoch, 0);
            v->held_epoch = c->epoch + 1;
            v->pend[v->npend][0] = c->island;
            v->pend[v->npend++][1] = c->epoch;
            v->run[0] = v->run[1];
            if (--v->nrun) /* its state is loaded as it starts */
                m_load(v, v->run[0].island, v->run[0].epoch, 1);
            continue;
        }
        /* it takes the lock */
        if (v->me < 0)
            v->me = tsp_sched_join(s, v->self);
        tsp_have have[1 + M_KEPT];
        tsp_asker a = m_asker(v, have);
        for (int32_t i = 0; i < v->npend; i++) {
            int32_t is = v->pend[i][0], ep = v->pend[i][1];
            int32_t was = sl[is].done;
            if (tsp_sched_done(s, &a, is, ep, 1000 - ep)) {
                assert_int_equal(was, ep); /* in order */
                firsts[is * e + ep]++;
            }
        }
        v->npend = 0;
        tsp_claim c;
        int kind = tsp_sched_pick(s, &a, v->stuck, &c);
        v->stuck = 0;
        if (kind == TSP_PICK_DONE) {
            v->done = 1;
            live--;
            continue;
        }
        if (kind == TSP_PICK_WAIT) {
            v->stuck = (r >> 8) % 4 == 0;
            continue;
        }
        if (c.epoch > 0) /* its migrant exists */
            assert_true(sl[(c.island + k - 1) % k].done >= c.epoch || k == 1);
        v->run[0] = c;
        v->nrun = 1;
        if (kind == TSP_PICK_UNIT && tsp_sched_pick_ahead(s, &a, &c, &v->run[1])) {
            tsp_claim *b = &v->run[1];
            assert_int_not_equal(b->island, c.island);
            assert_true(b->epoch == 0 || sl[(b->island + k - 1) % k].done >= b->epoch);
            v->nrun = 2;
            ahead++;
        }
        m_load(v, c.island, c.epoch, 0);
    }
    assert_int_equal(live, 0);
    for (int32_t i = 0; i < k; i++)
        assert_int_equal(sl[i].done, e);
    for (int32_t u = 0; u < k * e; u++)
        assert_int_equal(firsts[u], 1);
    assert_int_equal(s->units_done, k * e);
    for (int32_t i = 0; i < nvt; i++)
        assert_int_equal(vt[i].ahead_reads, 0);
    free(firsts);
    free(s);
    return ahead;
}

/* 400 seeded runs of 1 to 6 VTs on 1 to 9 islands: every unit first
 * committed once, in order, after its migrant; the run ends; units
 * claimed ahead read no state; and some are claimed ahead. */
static void t_model(void **state)
{
    (void)state;
    int ahead = 0;
    for (uint32_t seed = 1; seed <= 400; seed++) {
        int32_t nvt = 1 + (int32_t)(seed % 6), k = 1 + (int32_t)(seed * 7 % 9);
        int32_t e = 1 + (int32_t)(seed * 13 % 12);
        ahead += m_run(seed, nvt, k, e);
    }
    assert_true(ahead > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_bad),   cmocka_unit_test(t_join),        cmocka_unit_test(t_pick_order),
        cmocka_unit_test(t_done),  cmocka_unit_test(t_backup_wait), cmocka_unit_test(t_ahead),
        cmocka_unit_test(t_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
