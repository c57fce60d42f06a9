/* tsp_sched.c - the decisions of lev-tsp's schedule (tsp_sched.h): marking
 * a unit done, choosing and claiming a VT's next unit, and the second unit
 * it may claim with it. Pure functions of the locked schedule and of what
 * the VT has; the task (tsp_tasks.c) takes the lock and does the rest.
 */
#include "tsp_sched.h"

#include <string.h>

size_t tsp_sched_bytes(int32_t islands)
{
    return sizeof(tsp_sched) + (size_t)islands * sizeof(tsp_slot);
}

tsp_slot *tsp_sched_slots(tsp_sched *s) { return (tsp_slot *)(s + 1); }

void tsp_sched_init(tsp_sched *s, int32_t islands, int32_t epochs)
{
    memset(s, 0, tsp_sched_bytes(islands));
    s->magic = TSP_SCHED_MAGIC;
    s->islands = islands;
    s->epochs = epochs;
    s->best = -1;
}

const char *tsp_sched_bad(const tsp_sched *s, size_t len, int32_t islands, int32_t epochs)
{
    if (!s || len < sizeof *s || s->magic != TSP_SCHED_MAGIC)
        return "the schedule (tsp.sched) is missing or damaged";
    if (s->islands != islands || s->epochs != epochs || len != tsp_sched_bytes(islands))
        return "the schedule (tsp.sched) does not match the job";
    if (s->nwait < 0 || s->nwait > TSP_WAITERS_MAX || s->nvts < 0 || s->nvts > TSP_WAITERS_MAX)
        return "the schedule's lists of VTs are damaged";
    const tsp_slot *sl = (const tsp_slot *)(s + 1);
    for (int32_t i = 0; i < islands; i++)
        if (sl[i].done < 0 || sl[i].done > epochs)
            return "the schedule's epochs done are out of range";
    return NULL;
}

int32_t tsp_sched_join(tsp_sched *s, uint64_t self)
{
    for (int32_t i = 0; i < s->nvts; i++)
        if (s->vts[i] == self)
            return i;
    if (s->nvts >= TSP_WAITERS_MAX)
        return -1;
    s->vts[s->nvts] = self;
    return s->nvts++;
}

int tsp_sched_done(tsp_sched *s, const tsp_asker *a, int32_t island, int32_t epoch, int64_t best)
{
    if (island < 0 || island >= s->islands)
        return 0;
    tsp_slot *sl = &tsp_sched_slots(s)[island];
    if (sl->done != epoch)
        return 0;
    sl->done = epoch + 1;
    sl->owner = sl->backup = 0;
    /* its migrant goes to the others: whichever runs the unit that needs
     * it has it */
    tsp_slot *next = &tsp_sched_slots(s)[(island + 1) % s->islands];
    if (s->islands > 1 && epoch + 1 < s->epochs && a->me >= 0)
        next->sent[epoch % TSP_MIG_SENT] =
            (tsp_sent){.from = a->self, .epoch = epoch, .sent = s->nvts};
    s->units_done++;
    if (s->best < 0 || best < s->best) {
        s->best = best;
        s->best_island = island;
        s->best_epoch = epoch;
    }
    return 1;
}

/* Whether a has island i's state after `epochs` epochs. */
static int s_has(const tsp_asker *a, int32_t i, int32_t epochs)
{
    for (int32_t j = 0; j < a->nhave; j++)
        if (a->have[j].island == i && a->have[j].epochs == epochs)
            return 1;
    return 0;
}

/* Whether island i's next unit is ready: its migrant exists. */
static int s_ready(const tsp_sched *s, const tsp_slot *sl, int32_t i)
{
    int32_t k = s->islands, prev = (i + k - 1) % k;
    return sl[i].done == 0 || k == 1 || sl[prev].done >= sl[i].done;
}

/* Claims island i's next unit for a (as its owner or as a backup). */
static void s_claim(tsp_sched *s, const tsp_asker *a, int32_t i, int backup, tsp_claim *c)
{
    tsp_slot *u = &tsp_sched_slots(s)[i];
    if (backup) {
        u->backup = a->self;
        s->backups++;
    } else {
        u->owner = a->self;
        u->backup = 0;
        u->claimed = ++s->claims;
    }
    c->island = i;
    c->epoch = u->done;
    c->mig_from = 0;
    const tsp_sent *m = &u->sent[(u->done + TSP_MIG_SENT - 1) % TSP_MIG_SENT];
    if (u->done > 0 && m->from && m->from != a->self && m->epoch == u->done - 1 && a->me >= 0 &&
        a->me < m->sent)
        c->mig_from = m->from; /* (its own it keeps) */
}

int tsp_sched_pick(tsp_sched *s, const tsp_asker *a, int stuck, tsp_claim *c)
{
    tsp_slot *sl = tsp_sched_slots(s);
    int32_t k = s->islands, pick = -1, open = 0, mine = -1, kept = -1;
    for (int32_t i = 0; i < k; i++) {
        if (sl[i].done >= s->epochs || sl[i].owner)
            continue;
        open++;
        if (!s_ready(s, sl, i))
            continue;
        if (i == a->held)
            mine = i;
        else if (s_has(a, i, sl[i].done) && (kept < 0 || sl[i].done < sl[kept].done))
            kept = i;
        if (pick < 0 || sl[i].done < sl[pick].done)
            pick = i;
    }
    if (mine >= 0)
        pick = mine;
    else if (kept >= 0 && sl[kept].done <= sl[pick].done + 1)
        pick = kept;
    if (pick >= 0) {
        s_claim(s, a, pick, 0, c);
        return TSP_PICK_UNIT;
    }
    if (open == 0 || stuck) {
        for (int32_t i = 0; i < k; i++)
            if (sl[i].done < s->epochs && sl[i].owner && sl[i].owner != a->self && !sl[i].backup &&
                (pick < 0 || sl[i].claimed < sl[pick].claimed))
                pick = i;
        if (pick >= 0) {
            s_claim(s, a, pick, 1, c);
            return TSP_PICK_BACKUP;
        }
    }
    if (open == 0)
        return TSP_PICK_DONE; /* every unit left runs, backed up: nothing to add */
    int known = 0;
    for (int32_t i = 0; i < s->nwait; i++)
        known |= s->waiters[i] == a->self;
    if (!known && s->nwait < TSP_WAITERS_MAX)
        s->waiters[s->nwait++] = a->self;
    return TSP_PICK_WAIT;
}

int tsp_sched_pick_ahead(tsp_sched *s, const tsp_asker *a, const tsp_claim *first, tsp_claim *c)
{
    tsp_slot *sl = tsp_sched_slots(s);
    if (!s_has(a, first->island, first->epoch) && !(first->epoch == 0 && a->held < 0))
        return 0; /* the first unit's state would push another out */
    int64_t left = 0;
    int32_t ready = 0, pick = -1;
    for (int32_t i = 0; i < s->islands; i++) {
        if (sl[i].done >= s->epochs)
            continue;
        left += s->epochs - sl[i].done - (sl[i].owner ? 1 : 0);
        if (sl[i].owner || !s_ready(s, sl, i))
            continue;
        ready++;
        if ((sl[i].done == 0 || s_has(a, i, sl[i].done)) &&
            (pick < 0 || sl[i].done < sl[pick].done))
            pick = i;
    }
    int32_t vts = s->nvts > 0 ? s->nvts : 1;
    if (pick < 0 || left <= 2 * (int64_t)vts || ready < vts)
        return 0;
    s_claim(s, a, pick, 0, c);
    return 1;
}
