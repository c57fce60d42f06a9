/* delegator.h - the virtual thread delegator (delegator.c): which worker
 * of a virtual computer runs the next VT: the one on which it would
 * finish first. A free core runs a VT at the worker's measured rate; VTs
 * beyond the cores share them, so once busy a peer twice as fast (or
 * with twice the cores) gets about twice the VTs, and no peer takes a VT
 * it must share a core for while another has a core free. A worker that
 * already holds a VT's newest image is preferred only on a near-tie
 * (within 10 %), so the VTs of a lost worker spread over the live ones
 * rather than stack on their holder. Pure functions.
 */
#ifndef PC_DELEGATOR_H
#define PC_DELEGATOR_H

#include <stdbool.h>
#include <stdint.h>

typedef struct pc_place_cand {
    uint32_t cores;    /* cores the worker offers */
    uint32_t rate;     /* its measured rate per core */
    uint32_t assigned; /* VTs of this VC placed there now */
    uint32_t load;     /* VTs it runs for every VC (its gossiped load) */
    bool holds_image;  /* holds the image of the VT being placed */
} pc_place_cand;

/* Index of the candidate to place one more VT on, or -1 if n is 0. */
int pc_delegate(const pc_place_cand *c, int n);

#endif
