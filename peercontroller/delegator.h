/* delegator.h - the virtual thread delegator (delegator.c): which worker
 * of a virtual computer runs the next VT. Workers are weighed by their
 * measured rate times their cores, so a peer twice as fast gets about
 * twice the VTs; a worker that already holds a VT's newest image is
 * preferred when it is not much busier than the best. Pure functions.
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
