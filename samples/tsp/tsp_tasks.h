/* tsp_tasks.h - what the VTs of lev-tsp (tsp_tasks.c) and the client
 * (lev_tsp.c) tell each other: the task's name, the global variables of
 * the virtual computer, the progress report and the VT's result.
 *
 * Global variables of a run:
 *   tsp.sched        the schedule: per island, the epochs done and who
 *                    runs the next one (tsp_sched below)
 *   tsp.isl.I        island I's state (ga.h) after its last epoch done
 *   tsp.mig.I.E      island I's best tour at the end of its epoch E, the
 *                    migrant of unit (I+1, E+1); written once
 */
#ifndef TSP_TASKS_H
#define TSP_TASKS_H

#include <stdint.h>

#define TSP_TASK "tsp_worker"
#define TSP_SCHED_VAR "tsp.sched"
#define TSP_SCHED_MAGIC 0x32435354u /* "TSC2" */
#define TSP_WAITERS_MAX 64
#define TSP_WAIT_MS 2000
#define TSP_MIG_SENT 4 /* migrants sent remembered per island */

/* A migrant sent in messages (tsp_mig_msg): island-1's of `epoch`, by
 * VT `from` to the first `sent` VTs of tsp_sched.vts. */
typedef struct tsp_sent {
    uint64_t from; /* 0: none */
    int32_t epoch;
    int32_t sent;
} tsp_sent;

/* One island's line of the schedule. */
typedef struct tsp_slot {
    int32_t done; /* epochs done (the next unit is (island, done)) */
    int32_t pad;
    uint64_t owner;   /* VT running unit (island, done); 0: none */
    uint64_t backup;  /* VT running it again to finish sooner; 0: none */
    uint64_t claimed; /* claim number of owner (older claims first) */
    /* the last migrants sent for this island's units, at [epoch % TSP_MIG_SENT] */
    tsp_sent sent[TSP_MIG_SENT];
} tsp_slot;

/* The message that carries a migrant to the other VTs: this header,
 * then the tour (n int32). The same tour as global tsp.mig.I.E, which a
 * VT reads when no such message was sent to it. */
typedef struct tsp_mig_msg {
    int32_t island, epoch;
} tsp_mig_msg;

/* The schedule (global variable tsp.sched), which the client sets before
 * it starts the VTs: this header, then one tsp_slot per island.
 *
 * A VT claims the ready unit of the lowest epoch: island I's next epoch E
 * is ready when island I-1 has done epoch E-1 (its migrant exists). When
 * no unit is ready and none is left unclaimed (the end of the run), or
 * after a wait of TSP_WAIT_MS with no wake, an idle VT runs the oldest
 * claimed unit again as its backup: units are deterministic, so the first
 * of the two to commit wins and the other's commit changes nothing. This
 * ends a run as soon as its fastest VTs can, and finishes the unit of a
 * VT that failed for good. While many units are left, a VT may claim a
 * second unit with the first and run it without taking the lock again
 * (tsp_sched_pick_ahead in tsp_sched.h): one round trip for two units.
 *
 * The VT that commits unit (I, E) first also sends its migrant to every
 * other VT of the schedule and notes it in slot I+1: on a network with
 * long round trips, unit (I+1, E+1) then waits for the schedule's lock
 * only, whichever VT runs it. */
typedef struct tsp_sched {
    uint32_t magic;
    int32_t islands;
    int32_t epochs;
    int32_t nwait;                     /* VTs waiting for a unit */
    uint64_t waiters[TSP_WAITERS_MAX]; /* ... to be woken by a message */
    uint64_t claims;                   /* claims made */
    int64_t units_done;                /* units committed */
    int64_t backups;                   /* units run twice to end sooner */
    int64_t best;                      /* best length committed; -1 none */
    int32_t best_island;
    int32_t best_epoch;
    int32_t nvts; /* VTs that have taken the schedule's lock, in order */
    int32_t pad;
    uint64_t vts[TSP_WAITERS_MAX]; /* ... to which migrants are sent */
} tsp_sched;

/* The report a VT sends after each unit it commits. */
typedef struct tsp_progress {
    int64_t units_done;  /* units committed in the run */
    int64_t units_total; /* islands x epochs */
    int64_t best;        /* best length committed so far */
    int32_t island;      /* the unit this VT just committed */
    int32_t epoch;
    int64_t unit_best; /* its island's best after it */
} tsp_progress;

/* A VT's result: 0 and the units it committed, or an error and why. */
typedef struct tsp_result {
    int32_t err;
    int32_t units;
    int32_t backups;   /* units it ran as a backup */
    int32_t mig_reads; /* migrants it read from their global variable */
    int32_t isl_reads; /* island states it read from their global variable */
    int32_t ahead;     /* units it claimed ahead, with the one before (no lock) */
    char why[160];
} tsp_result;

#endif
