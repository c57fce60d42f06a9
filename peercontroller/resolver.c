/* resolver.c - VT id to host peer and epoch (resolver.h): an open
 * addressing hash table keyed by VT id. */
#include "resolver.h"

#include <stdlib.h>
#include <string.h>

#include "lev_errors.h"
#include "wire.h"

typedef struct s_entry {
    uint64_t vt; /* 0: empty (VT ids are never 0) */
    uint32_t epoch;
    char endpoint[PC_ENDPOINT_MAX];
} s_entry;

struct pc_resolver {
    s_entry *t;
    size_t cap, n; /* cap a power of two */
};

int pc_resolver_new(pc_resolver **out)
{
    pc_resolver *r = calloc(1, sizeof *r);
    if (r)
        r->t = calloc(r->cap = 64, sizeof *r->t);
    if (!r || !r->t) {
        free(r);
        return LEV_ENOMEM;
    }
    *out = r;
    return 0;
}

void pc_resolver_destroy(pc_resolver **r_p)
{
    if (!r_p || !*r_p)
        return;
    free((*r_p)->t);
    free(*r_p);
    *r_p = NULL;
}

static size_t s_slot(const pc_resolver *r, uint64_t vt)
{
    size_t i = (size_t)(vt * 0x9E3779B97F4A7C15ull) & (r->cap - 1);
    while (r->t[i].vt && r->t[i].vt != vt)
        i = (i + 1) & (r->cap - 1);
    return i;
}

static int s_grow(pc_resolver *r)
{
    s_entry *old = r->t;
    size_t oldcap = r->cap;
    s_entry *t = calloc(oldcap * 2, sizeof *t);
    if (!t)
        return LEV_ENOMEM;
    r->t = t;
    r->cap = oldcap * 2;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].vt)
            r->t[s_slot(r, old[i].vt)] = old[i];
    free(old);
    return 0;
}

int pc_resolver_set(pc_resolver *r, uint64_t vt, const char *endpoint, uint32_t epoch)
{
    if (!vt)
        return LEV_EINVAL;
    if ((r->n + 1) * 2 > r->cap && s_grow(r))
        return LEV_ENOMEM;
    s_entry *e = &r->t[s_slot(r, vt)];
    if (!e->vt)
        r->n++;
    e->vt = vt;
    e->epoch = epoch;
    size_t len = strlen(endpoint);
    if (len >= sizeof e->endpoint)
        len = sizeof e->endpoint - 1;
    memcpy(e->endpoint, endpoint, len);
    e->endpoint[len] = '\0';
    return 0;
}

const char *pc_resolver_get(const pc_resolver *r, uint64_t vt, uint32_t *epoch)
{
    if (!vt)
        return NULL;
    const s_entry *e = &r->t[s_slot(r, vt)];
    if (!e->vt)
        return NULL;
    if (epoch)
        *epoch = e->epoch;
    return e->endpoint;
}

void pc_resolver_forget(pc_resolver *r, uint64_t vt)
{
    if (!vt)
        return;
    size_t i = s_slot(r, vt);
    if (!r->t[i].vt)
        return;
    r->t[i].vt = 0;
    r->n--;
    /* re-insert the cluster that follows, so lookups never stop early */
    for (size_t j = (i + 1) & (r->cap - 1); r->t[j].vt; j = (j + 1) & (r->cap - 1)) {
        s_entry e = r->t[j];
        r->t[j].vt = 0;
        r->t[s_slot(r, e.vt)] = e;
    }
}
