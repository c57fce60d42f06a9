/* delegator.c - placement of VTs on workers (delegator.h): the worker
 * whose finishing time after one more VT would be earliest, measured in
 * VTs per unit of capacity (rate x cores). */
#include "delegator.h"

#include <stddef.h>

/* Time to finish what a candidate would have after one more VT, in units
 * of its capacity; its other VCs' VTs count too. */
static double s_finish(const pc_place_cand *c)
{
    double cap = (double)(c->rate ? c->rate : 1) * (double)(c->cores ? c->cores : 1);
    uint32_t busy = c->load > c->assigned ? c->load : c->assigned;
    return ((double)busy + 1.0) / cap;
}

int pc_delegate(const pc_place_cand *c, int n)
{
    int best = -1, holder = -1;
    for (int i = 0; i < n; i++) {
        if (!c[i].cores)
            continue;
        if (best < 0 || s_finish(&c[i]) < s_finish(&c[best]))
            best = i;
        if (c[i].holds_image && (holder < 0 || s_finish(&c[i]) < s_finish(&c[holder])))
            holder = i;
    }
    /* A holder resumes without the image crossing the network again:
     * worth it unless it would finish much later than the best. */
    if (holder >= 0 && s_finish(&c[holder]) <= 2.0 * s_finish(&c[best]))
        return holder;
    return best;
}
