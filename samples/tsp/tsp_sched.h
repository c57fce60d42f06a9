/* tsp_sched.h - the decisions of lev-tsp's schedule (tsp_sched.c): what
 * a commit marks done, which unit a VT claims next, and which second unit
 * it may claim with it. Plain C on a schedule (tsp_tasks.h) that the
 * caller holds locked, with no Leverage call: the same code runs in the
 * task module (through levpp) and natively in the tests.
 */
#ifndef TSP_SCHED_H
#define TSP_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "tsp_tasks.h"

/* What tsp_sched_pick gives a VT. */
enum { TSP_PICK_UNIT, TSP_PICK_BACKUP, TSP_PICK_WAIT, TSP_PICK_DONE };

/* An island's state a VT has in memory, after `epochs` epochs. */
typedef struct tsp_have {
    int32_t island, epochs;
} tsp_have;

/* The VT that holds the schedule's lock: its id, its place in s->vts
 * (tsp_sched_join; -1 when the list was full), the island whose state it
 * holds (-1: none) and every state it has (the held one included). */
typedef struct tsp_asker {
    uint64_t self;
    int32_t me;
    int32_t held;
    const tsp_have *have;
    int32_t nhave;
} tsp_asker;

/* A unit claimed: its island and epoch, and the VT that sent its migrant
 * in a message (0: none sent to this VT; it has or reads the migrant). */
typedef struct tsp_claim {
    int32_t island, epoch;
    uint64_t mig_from;
} tsp_claim;

/* Bytes of the schedule of `islands` islands; its slots. */
size_t tsp_sched_bytes(int32_t islands);
tsp_slot *tsp_sched_slots(tsp_sched *s);

/* Fills s (tsp_sched_bytes long) as the schedule of a new run: every
 * island at epoch 0, nothing claimed. */
void tsp_sched_init(tsp_sched *s, int32_t islands, int32_t epochs);

/* NULL if s[len] is a schedule of this many islands and epochs, else a
 * static sentence saying what is wrong. */
const char *tsp_sched_bad(const tsp_sched *s, size_t len, int32_t islands, int32_t epochs);

/* VT self's place in s->vts, added at the end if it is not there yet;
 * -1 when the list is full (it then receives no migrant by message). */
int32_t tsp_sched_join(tsp_sched *s, uint64_t self);

/* Marks unit (island, epoch), whose island's best is now `best`, done if
 * it is the first commit of it: clears its claims, counts it, keeps the
 * best length, and notes that a's migrant goes to every other VT of
 * s->vts (slot island+1's `sent`, when a later unit needs it). 1 if it
 * was the first (the caller reports it and sends the migrant), 0 if the
 * other copy of a backed-up unit had marked it already. */
int tsp_sched_done(tsp_sched *s, const tsp_asker *a, int32_t island, int32_t epoch, int64_t best);

/* Chooses VT a's next unit and claims it: TSP_PICK_UNIT or
 * TSP_PICK_BACKUP with *c set, TSP_PICK_WAIT (a registered as a waiter
 * when there is room) or TSP_PICK_DONE. A ready unit comes first, in this
 * order: the next unit of the island a holds; one whose island's state a
 * has, unless its epoch is more than one above the lowest ready one; the
 * ready unit of the lowest epoch. Island I's epoch E is ready when island
 * I-1 has done E-1 (its migrant exists). When no unit is unclaimed, or
 * `stuck` (no wake came during a's last wait), a backs up the oldest
 * claim of another VT. */
int tsp_sched_pick(tsp_sched *s, const tsp_asker *a, int stuck, tsp_claim *c);

/* After tsp_sched_pick gave a TSP_PICK_UNIT `first`, claims a second
 * unit for a to run after it without taking the lock again, so that a
 * network's round trip is paid once per two units. Only when:
 *   - more than two unclaimed units per VT of s->vts are left (the end of
 *     a run is not slowed by a unit waiting behind another);
 *   - at least one ready unit is left unclaimed for each other VT;
 *   - a has the states of both islands (it runs both without reading a
 *     state, and the first does not push the second's out).
 * The first unit is marked done at a's next lock, with the second: units
 * that need its migrant are ready one unit later. 1 with *c set, or 0. */
int tsp_sched_pick_ahead(tsp_sched *s, const tsp_asker *a, const tsp_claim *first, tsp_claim *c);

#endif
