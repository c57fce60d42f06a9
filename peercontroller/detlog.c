/* detlog.c - the deployer's log of determinants (detlog.h): per VT, the
 * positions after its stable image, the watermark, and the positions
 * fixed for each incarnation; and the recovery barrier.
 */
#include "detlog.h"

#include <stdlib.h>
#include <string.h>

#include "lev_errors.h"
#include "vec.h"

#define DL_UNFIXED UINT64_MAX /* an incarnation whose positions are not fixed yet */

/* What position base + 1 + i holds. */
typedef struct dl_slot {
    bool known;
    uint32_t epoch;
    uint64_t from, seq;
} dl_slot;

/* The positions fixed when incarnation `epoch` began. */
typedef struct dl_fixed {
    uint32_t epoch;
    uint64_t k;
} dl_fixed;

typedef struct dl_vt {
    uint32_t epoch;
    uint64_t base; /* the stable image's position */
    uint64_t wm;
    dl_slot *slot;
    size_t nslot, capslot;
    dl_fixed *fixed;
    size_t nfixed, capfixed;
} dl_vt;

struct pc_detlog {
    dl_vt *vt; /* by VT id */
    size_t nvt;
    uint64_t count;
    uint32_t barrier;  /* the last barrier's number */
    uint64_t awaiting; /* executors that have not answered it */
};

static const dl_vt *s_vt_get(const pc_detlog *l, uint64_t vt)
{
    return vt < l->nvt ? &l->vt[vt] : NULL;
}

static dl_vt *s_vt(pc_detlog *l, uint64_t vt)
{
    if (vt >= l->nvt) {
        size_t n = l->nvt ? l->nvt : 16;
        while (n <= vt)
            n *= 2;
        dl_vt *v = realloc(l->vt, n * sizeof *v);
        if (!v)
            return NULL;
        memset(v + l->nvt, 0, (n - l->nvt) * sizeof *v);
        for (size_t i = l->nvt; i < n; i++)
            v[i].epoch = 1;
        l->vt = v;
        l->nvt = n;
    }
    return &l->vt[vt];
}

static int s_set_fixed(dl_vt *v, uint32_t epoch, uint64_t k)
{
    for (size_t i = 0; i < v->nfixed; i++)
        if (v->fixed[i].epoch == epoch) {
            v->fixed[i].k = k;
            return 0;
        }
    if (RT_VEC_RESERVE(v->fixed, v->capfixed, v->nfixed, 1))
        return LEV_ENOMEM;
    v->fixed[v->nfixed++] = (dl_fixed){.epoch = epoch, .k = k};
    return 0;
}

/* The positions fixed for the first incarnation after `epoch` that was
 * fenced or fixed (the numbering may skip): DL_UNFIXED when none. */
static uint64_t s_fixed_after(const dl_vt *v, uint32_t epoch)
{
    uint32_t first = 0;
    uint64_t k = DL_UNFIXED;
    for (size_t i = 0; i < v->nfixed; i++)
        if (v->fixed[i].epoch > epoch && (!first || v->fixed[i].epoch < first)) {
            first = v->fixed[i].epoch;
            k = v->fixed[i].k;
        }
    return k;
}

bool pc_detlog_abandoned(const pc_detlog *l, const pc_cx_det *d)
{
    const dl_vt *v = s_vt_get(l, d->vt);
    return v && d->epoch < v->epoch && d->pos > s_fixed_after(v, d->epoch);
}

static void s_advance(dl_vt *v)
{
    if (v->wm < v->base)
        v->wm = v->base;
    while (v->wm - v->base < v->nslot && v->slot[v->wm - v->base].known)
        v->wm++;
}

int pc_detlog_add(pc_detlog *l, const pc_cx_det *d)
{
    if (pc_detlog_abandoned(l, d))
        return 0;
    dl_vt *v = s_vt(l, d->vt);
    if (!v)
        return LEV_ENOMEM;
    if (d->pos <= v->base)
        return 0;
    size_t i = (size_t)(d->pos - v->base - 1);
    if (i >= v->nslot) {
        if (RT_VEC_RESERVE(v->slot, v->capslot, v->nslot, i + 1 - v->nslot))
            return LEV_ENOMEM;
        memset(v->slot + v->nslot, 0, (i + 1 - v->nslot) * sizeof *v->slot);
        v->nslot = i + 1;
    }
    dl_slot *s = &v->slot[i];
    if (s->known)
        return s->from == d->from && s->seq == d->seq ? 0 : LEV_EINVAL;
    *s = (dl_slot){.known = true, .epoch = d->epoch, .from = d->from, .seq = d->seq};
    l->count++;
    s_advance(v);
    return 0;
}

int pc_detlog_image(pc_detlog *l, const pc_cx_det *d, size_t n, bool *usable)
{
    *usable = false;
    for (size_t i = 0; i < n; i++)
        if (pc_detlog_abandoned(l, &d[i]))
            return 0;
    for (size_t i = 0; i < n; i++) {
        int rc = pc_detlog_add(l, &d[i]);
        if (rc)
            return rc;
    }
    *usable = true;
    return 0;
}

void pc_detlog_stable(pc_detlog *l, uint64_t vt, uint64_t p)
{
    dl_vt *v = s_vt(l, vt);
    if (!v || p <= v->base)
        return;
    size_t drop = (size_t)(p - v->base);
    if (drop >= v->nslot) {
        v->nslot = 0;
    } else {
        memmove(v->slot, v->slot + drop, (v->nslot - drop) * sizeof *v->slot);
        v->nslot -= drop;
    }
    v->base = p;
    s_advance(v);
}

uint32_t pc_detlog_fence(pc_detlog *l, uint64_t vt)
{
    const dl_vt *v = s_vt_get(l, vt);
    uint32_t e = v ? v->epoch : 1;
    return e < UINT32_MAX && !pc_detlog_fence_to(l, vt, e + 1) ? e + 1 : 0;
}

int pc_detlog_fence_to(pc_detlog *l, uint64_t vt, uint32_t epoch)
{
    dl_vt *v = s_vt(l, vt);
    if (!v)
        return LEV_ENOMEM;
    if (epoch <= v->epoch)
        return 0;
    if (s_set_fixed(v, epoch, DL_UNFIXED))
        return LEV_ENOMEM;
    v->epoch = epoch;
    return 0;
}

int pc_detlog_fix(pc_detlog *l, uint64_t vt, uint64_t p, pc_cx_det **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    dl_vt *v = s_vt(l, vt);
    if (!v)
        return LEV_ENOMEM;
    if (p < v->base)
        return LEV_EINVAL; /* an image older than the stable one */
    uint64_t k = p;
    while (k - v->base < v->nslot && v->slot[k - v->base].known)
        k++;
    for (uint64_t q = k + 1; q - v->base <= v->nslot; q++)
        if (v->slot[q - v->base - 1].known)
            return LEV_EINVAL;
    if (s_set_fixed(v, v->epoch, k))
        return LEV_ENOMEM;
    if (k == p)
        return 0;
    pc_cx_det *d = malloc((size_t)(k - p) * sizeof *d);
    if (!d)
        return LEV_ENOMEM;
    for (uint64_t q = p + 1; q <= k; q++) {
        const dl_slot *s = &v->slot[q - v->base - 1];
        d[q - p - 1] =
            (pc_cx_det){.vt = vt, .pos = q, .from = s->from, .seq = s->seq, .epoch = s->epoch};
    }
    *out = d;
    *n = (size_t)(k - p);
    return 0;
}

uint64_t pc_detlog_wm(const pc_detlog *l, uint64_t vt)
{
    const dl_vt *v = s_vt_get(l, vt);
    return v ? v->wm : 0;
}

uint32_t pc_detlog_epoch(const pc_detlog *l, uint64_t vt)
{
    const dl_vt *v = s_vt_get(l, vt);
    return v ? v->epoch : 1;
}

uint32_t pc_detlog_barrier_start(pc_detlog *l, uint64_t live)
{
    l->awaiting = live;
    return ++l->barrier;
}

bool pc_detlog_barrier_answer(pc_detlog *l, uint32_t id, int peer)
{
    if (id != l->barrier || !l->awaiting || peer < 0 || peer >= PC_CX_PEERS ||
        !(l->awaiting & 1ull << peer))
        return false;
    l->awaiting &= ~(1ull << peer);
    return !l->awaiting;
}

bool pc_detlog_barrier_open(const pc_detlog *l) { return l->awaiting != 0; }

uint64_t pc_detlog_count(const pc_detlog *l) { return l->count; }

pc_detlog *pc_detlog_new(void) { return calloc(1, sizeof(pc_detlog)); }

void pc_detlog_destroy(pc_detlog **l_p)
{
    pc_detlog *l = l_p ? *l_p : NULL;
    if (!l)
        return;
    for (size_t i = 0; i < l->nvt; i++) {
        free(l->vt[i].slot);
        free(l->vt[i].fixed);
    }
    free(l->vt);
    free(l);
    *l_p = NULL;
}
