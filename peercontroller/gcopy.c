/* gcopy.c - a worker's copies of global values named by their hash
 * (gcopy.h): a small array searched by hash, the least recently used
 * copy evicted past the bound.
 */
#include "gcopy.h"

#include <stdlib.h>
#include <string.h>

#include "modmgr.h"
#include "vec.h"

typedef struct s_copy {
    uint8_t hash[PC_HASH_LEN];
    pc_buf *val;
    uint64_t used;
} s_copy;

struct pc_gcopies {
    s_copy *c;
    size_t n, cap;
    size_t bytes, max;
    uint64_t clock;
};

pc_gcopies *pc_gcopies_new(size_t max_bytes)
{
    pc_gcopies *g = calloc(1, sizeof *g);
    if (g)
        g->max = max_bytes ? max_bytes : PC_GCOPY_BYTES;
    return g;
}

void pc_gcopies_destroy(pc_gcopies **g_p)
{
    pc_gcopies *g = g_p ? *g_p : NULL;
    if (!g)
        return;
    for (size_t i = 0; i < g->n; i++)
        pc_buf_drop(&g->c[i].val);
    free(g->c);
    free(g);
    *g_p = NULL;
}

static s_copy *s_find(pc_gcopies *g, const uint8_t *hash, size_t len)
{
    for (size_t i = 0; i < g->n; i++)
        if (pc_buf_len(g->c[i].val) == len && !memcmp(g->c[i].hash, hash, PC_HASH_LEN))
            return &g->c[i];
    return NULL;
}

/* Evicts the least recently used copy. */
static void s_evict(pc_gcopies *g)
{
    size_t old = 0;
    for (size_t i = 1; i < g->n; i++)
        if (g->c[i].used < g->c[old].used)
            old = i;
    g->bytes -= pc_buf_len(g->c[old].val);
    pc_buf_drop(&g->c[old].val);
    g->c[old] = g->c[--g->n];
}

void pc_gcopies_put(pc_gcopies *g, const void *data, size_t len)
{
    if (!g || !len || len > g->max)
        return;
    uint8_t hash[PC_HASH_LEN];
    pc_module_hash(data, len, hash);
    s_copy *c = s_find(g, hash, len);
    if (c) {
        c->used = ++g->clock;
        return;
    }
    while (g->n && g->bytes + len > g->max)
        s_evict(g);
    pc_buf *b = pc_buf_new(data, len);
    if (!b || RT_VEC_RESERVE(g->c, g->cap, g->n, 1)) {
        pc_buf_drop(&b);
        return; /* no copy: the deployer's reference misses, and it sends the value */
    }
    c = &g->c[g->n++];
    memcpy(c->hash, hash, PC_HASH_LEN);
    c->val = b;
    c->used = ++g->clock;
    g->bytes += len;
}

pc_buf *pc_gcopies_get(pc_gcopies *g, const uint8_t hash[PC_HASH_LEN], size_t len)
{
    s_copy *c = g ? s_find(g, hash, len) : NULL;
    if (!c)
        return NULL;
    c->used = ++g->clock;
    return pc_buf_ref(c->val);
}

size_t pc_gcopies_count(const pc_gcopies *g) { return g ? g->n : 0; }

size_t pc_gcopies_bytes(const pc_gcopies *g) { return g ? g->bytes : 0; }
