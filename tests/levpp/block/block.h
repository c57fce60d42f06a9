/* block.h - what the task source of the blocking-call test shares with
 * its driver: the evaluation counters the task's argument expressions go
 * through, and the task's result. */
#ifndef BLOCK_H
#define BLOCK_H

#include <stddef.h>
#include <stdint.h>

/* The sender of every message the driver's receive hands back. */
#define BLOCK_SENDER 42u

/* The argument expressions a counter follows (block_note's `what`). */
enum { BN_SEND_TO, BN_RECV_FROM, BN_LOCK_NAME, BN_READ_NAME, BN_RECV_TIMEOUT, BN_N };

/* Counts one evaluation of argument `what` and returns p (driver.c). */
void *block_note(int what, void *p);
/* Counts one evaluation of the timeout argument and returns ms. */
int block_timeout(int ms);

/* The result of task block_run. */
struct block_result {
    long sent;     /* sends after the first that returned 0 */
    long sum;      /* of the values of the messages received */
    long nrecv;    /* messages received */
    long iplus;    /* final value of the index the receive loop post-increments */
    long counter;  /* value of the global "counter" after the updates */
    long snapshot; /* what lev_global_read read of it */
    long helper;   /* what the checkpointable helper received */
    int last_rc;   /* what the receive loop ended on (LEV_ETIMEDOUT) */
};

#endif
