/* delegator.h - the virtual thread delegator (delegator.c): which worker
 * of a virtual computer runs the next VT: the one on which it would
 * finish first. A free core runs a VT at the worker's measured rate; VTs
 * beyond the cores share them, so once busy a peer twice as fast (or
 * with twice the cores) gets about twice the VTs, and no peer takes a VT
 * it must share a core for while another has a core free. A worker that
 * already holds a VT's newest image is preferred only on a near-tie
 * (within 10 %) and only if it has a core free whenever another has, so
 * the VTs of a lost worker spread over the live ones rather than stack
 * on their holder. And which running VT is better off elsewhere: one that
 * shares a core while another worker has one free, or one on a core that
 * the free core of a newly active worker (a spare, a peer that joined)
 * outruns by half again. Each decision comes
 * with its reason, for the log and the status. Pure functions.
 */
#ifndef PC_DELEGATOR_H
#define PC_DELEGATOR_H

#include <stdbool.h>
#include <stdint.h>

#define PC_PLACE_MAX 256 /* candidates a decision looks at */

typedef struct pc_place_cand {
    uint32_t cores;    /* cores the worker offers */
    uint32_t rate;     /* its measured rate per core */
    uint32_t assigned; /* VTs of this VC placed there now */
    uint32_t load;     /* VTs it runs for every VC (its gossiped load) */
    bool holds_image;  /* holds the image of the VT being placed */
    bool fresh;        /* newly active: no VT of this VC ended there yet */
} pc_place_cand;

/* Why a candidate was chosen (the log and the status name it). */
typedef enum pc_place_why {
    PC_PLACE_NONE,      /* no candidate */
    PC_PLACE_ONLY,      /* the only worker offering cores */
    PC_PLACE_FREE_CORE, /* it has a core free and the runner-up has none */
    PC_PLACE_SOONEST,   /* the VT finishes there over 10 % sooner */
    PC_PLACE_SPREAD,    /* finishes alike: the most capacity left */
    PC_PLACE_HOLDER,    /* a near-tie, and it holds the VT's newest image */
    PC_PLACE_UNSHARE,   /* moved off a shared core to a free one */
    PC_PLACE_FASTER,    /* moved to a free core at least 1.5x as fast */
} pc_place_why;

/* A move of one running VT (pc_rebalance). */
typedef struct pc_move {
    int from, to;     /* candidate indices */
    pc_place_why why; /* PC_PLACE_UNSHARE or PC_PLACE_FASTER */
} pc_move;

/* Index of the candidate to place one more VT on, or -1 if n is 0. */
int pc_delegate(const pc_place_cand *c, int n);
/* The same, and why (PC_PLACE_NONE with -1); why may be NULL. */
int pc_delegate_why(const pc_place_cand *c, int n, pc_place_why *why);
/* Whether one VT of this VC (`assigned` counts them) would be better off
 * on another candidate: first one that shares a core while another
 * candidate has a core free, then one whose core a free core of a fresh
 * candidate outruns by PC_MOVE_GAIN (worth the image's trip). A core
 * freed by a VT that ended draws no move: near the end of a job the VTs
 * left are finishing, and a move would only delay them. True with *m
 * set. */
bool pc_rebalance(const pc_place_cand *c, int n, pc_move *m);
/* A short text for a reason ("free core", ...). */
const char *pc_place_why_text(pc_place_why why);

#endif
