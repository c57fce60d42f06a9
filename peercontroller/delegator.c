/* delegator.c - placement of VTs on workers (delegator.h): the worker on
 * which one more VT would finish first, and the running VT better off
 * elsewhere, each with its reason. A VT on a free core runs at the
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

/* A VT on a core of its own moves to a free core only if that core is at
 * least this much faster: the move costs the image's trip and a restore,
 * and rates are measured within 10 %. */
#define PC_MOVE_GAIN 1.5

/* The VTs a candidate runs: its gossiped load counts every VC's, and this
 * VC's placed since that load was measured. */
static double s_busy(const pc_place_cand *c)
{
    return (double)(c->load > c->assigned ? c->load : c->assigned);
}

/* Its rate per core (a rate of 0 counts as 1). */
static double s_rate(const pc_place_cand *c) { return (double)(c->rate ? c->rate : 1); }

static double s_cap(const pc_place_cand *c) { return s_rate(c) * (double)c->cores; }

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

int pc_delegate_why(const pc_place_cand *c, int n, pc_place_why *why)
{
    int best = -1, second = -1, holder = -1;
    for (int i = 0; i < n; i++) {
        if (!c[i].cores)
            continue;
        if (best < 0 || s_better(&c[i], &c[best])) {
            second = best;
            best = i;
        } else if (second < 0 || s_better(&c[i], &c[second])) {
            second = i;
        }
        if (c[i].holds_image && (holder < 0 || s_better(&c[i], &c[holder])))
            holder = i;
    }
    pc_place_why w = PC_PLACE_NONE;
    /* A holder resumes without the image crossing the network again:
     * worth it only on a near-tie, never at the price of sharing a core
     * while another candidate has one free. */
    if (holder >= 0 && holder != best && (s_free(&c[holder]) || !s_free(&c[best])) &&
        s_finish(&c[holder]) <= PC_HOLDER_NEAR * s_finish(&c[best])) {
        best = holder;
        w = PC_PLACE_HOLDER;
    } else if (best >= 0 && second < 0) {
        w = PC_PLACE_ONLY;
    } else if (best >= 0) {
        double fb = s_finish(&c[best]), fs = s_finish(&c[second]);
        w = s_free(&c[best]) != s_free(&c[second]) ? PC_PLACE_FREE_CORE
            : fb * PC_FINISH_NEAR < fs             ? PC_PLACE_SOONEST
                                                   : PC_PLACE_SPREAD;
    }
    if (why)
        *why = w;
    return best;
}

int pc_delegate(const pc_place_cand *c, int n) { return pc_delegate_why(c, n, NULL); }

bool pc_rebalance(const pc_place_cand *c, int n, pc_move *m)
{
    pc_place_cand t[PC_PLACE_MAX];
    n = n < PC_PLACE_MAX ? n : PC_PLACE_MAX;
    for (int i = 0; i < n; i++) {
        t[i] = c[i];
        t[i].holds_image = false; /* a move ships a live image anyway */
    }
    /* a VT sharing a core while another candidate has one free */
    for (int k = 0; k < n; k++) {
        if (!t[k].assigned || s_busy(&t[k]) <= (double)t[k].cores)
            continue;
        /* where would one of its VTs go, were it placed now? */
        t[k].assigned--;
        if (t[k].load)
            t[k].load--;
        int to = pc_delegate(t, n);
        t[k].assigned = c[k].assigned;
        t[k].load = c[k].load;
        if (to >= 0 && to != k && s_free(&t[to])) {
            *m = (pc_move){.from = k, .to = to, .why = PC_PLACE_UNSHARE};
            return true;
        }
    }
    /* the slowest VT on a core of its own, and the fastest free core of a
     * newly active candidate */
    int from = -1, to = -1;
    for (int i = 0; i < n; i++) {
        if (!t[i].cores)
            continue;
        if (t[i].assigned && s_busy(&t[i]) <= (double)t[i].cores &&
            (from < 0 || s_rate(&t[i]) < s_rate(&t[from])))
            from = i;
        if (t[i].fresh && s_free(&t[i]) && (to < 0 || s_rate(&t[i]) > s_rate(&t[to])))
            to = i;
    }
    if (from < 0 || to < 0 || to == from || s_rate(&t[to]) < PC_MOVE_GAIN * s_rate(&t[from]))
        return false;
    *m = (pc_move){.from = from, .to = to, .why = PC_PLACE_FASTER};
    return true;
}

const char *pc_place_why_text(pc_place_why why)
{
    switch (why) {
    case PC_PLACE_ONLY:
        return "the only worker";
    case PC_PLACE_FREE_CORE:
        return "a free core";
    case PC_PLACE_SOONEST:
        return "finishes soonest";
    case PC_PLACE_SPREAD:
        return "most capacity left";
    case PC_PLACE_HOLDER:
        return "holds its image";
    case PC_PLACE_UNSHARE:
        return "moved off a shared core";
    case PC_PLACE_FASTER:
        return "moved to a faster free core";
    case PC_PLACE_NONE:
        break;
    }
    return "none";
}
