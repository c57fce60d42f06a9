/* delegator.c - placement of VTs on workers (delegator.h): the worker on
 * which one more VT would finish first. A VT on a free core runs at the
 * core's rate; VTs beyond the cores share them, each counting fully. */
#include "delegator.h"

#include <stddef.h>

/* A holder of the image is preferred only over candidates that would
 * finish no more than this much earlier (measured rates differ by a few
 * per cent between like peers; a busy core doubles the time). */
#define PC_HOLDER_NEAR 1.1

/* Finish times this close count as alike (like machines measure rates a
 * few per cent apart, eval/rate): then the candidate with the most
 * capacity left wins, so that VTs spread over idle peers instead of
 * filling the cores of the one that measured fastest. */
#define PC_FINISH_NEAR 1.1

/* The VTs a candidate runs: its gossiped load counts every VC's, and this
 * VC's placed since that load was measured. */
static double s_busy(const pc_place_cand *c)
{
    return (double)(c->load > c->assigned ? c->load : c->assigned);
}

static double s_cap(const pc_place_cand *c)
{
    return (double)(c->rate ? c->rate : 1) * (double)c->cores;
}

/* When one more VT placed there would finish, in units of one core's
 * work: 1 / rate while a core is free, (busy + 1) / (rate x cores) once
 * the VTs outnumber the cores. */
static double s_finish(const pc_place_cand *c)
{
    double n = s_busy(c) + 1.0;
    return (n > (double)c->cores ? n : (double)c->cores) / s_cap(c);
}

/* Among candidates that finish alike, the one with the most capacity
 * left (busy + 1 per unit of capacity, lower is better). */
static double s_fill(const pc_place_cand *c) { return (s_busy(c) + 1.0) / s_cap(c); }

static bool s_free(const pc_place_cand *c) { return s_busy(c) < (double)c->cores; }

static bool s_better(const pc_place_cand *a, const pc_place_cand *b)
{
    if (s_free(a) != s_free(b))
        return s_free(a); /* a free core first, whatever the rates say */
    double fa = s_finish(a), fb = s_finish(b);
    if (fa * PC_FINISH_NEAR < fb || fb * PC_FINISH_NEAR < fa)
        return fa < fb;
    double la = s_fill(a), lb = s_fill(b);
    return la != lb ? la < lb : fa < fb;
}

int pc_delegate(const pc_place_cand *c, int n)
{
    int best = -1, holder = -1;
    for (int i = 0; i < n; i++) {
        if (!c[i].cores)
            continue;
        if (best < 0 || s_better(&c[i], &c[best]))
            best = i;
        if (c[i].holds_image && (holder < 0 || s_better(&c[i], &c[holder])))
            holder = i;
    }
    /* A holder resumes without the image crossing the network again:
     * worth it only on a near-tie, never at the price of sharing a core
     * while another candidate has one free. */
    if (holder >= 0 && s_finish(&c[holder]) <= PC_HOLDER_NEAR * s_finish(&c[best]))
        return holder;
    return best;
}
