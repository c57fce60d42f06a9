/* worker_reads.c - global reads answered near the reader, the worker's
 * part (docs/GLOBAL_READS.md): the versioned copies of the variables its
 * VTs read, kept up to date by the deployer's pushes (W_GLOB); the writes
 * of its VTs the deployer has not acknowledged, during which no read of
 * that variable is answered here (a VT reads its own writes, and so does
 * one told of them); and the reads answered here (X_READ_AT to the
 * executor, the read marked with its revision to the deployer), kept
 * until the deployer acknowledges them so that a read sent again goes up
 * marked alike.
 *
 * A VT's read is answered here only when its number is above what the
 * deployer had of the VT when this incarnation asked for its inputs
 * (W_READS_FROM): below it, the deployer logged an answer already, which
 * a resumed VT must read again.
 */
#include <stdlib.h>
#include <string.h>

#include "gcopy.h"
#include "lev_task.h"
#include "log.h"
#include "modmgr.h"
#include "vec.h"
#include "vtchan.h"
#include "wire.h"
#include "worker_private.h"

typedef struct wk_glob {
    char name[LEV_NAME_MAX + 1];
    uint64_t rev;
    pc_buf *val; /* NULL: changed since, no value here */
    uint8_t hash[PC_HASH_LEN];
} wk_glob;

typedef struct wk_write { /* an unlock or a put not yet acknowledged */
    uint64_t vt, seq;
    char name[LEV_NAME_MAX + 1];
} wk_write;

typedef struct wk_answer { /* a read answered here, not yet acknowledged */
    uint64_t vt, seq, rev;
    pc_buf *val;
    uint8_t hash[PC_HASH_LEN];
} wk_answer;

struct wk_reads {
    wk_glob *g;
    size_t ng, capg;
    wk_write *wr;
    size_t nwr, capwr;
    wk_answer *ans;
    size_t nans, capans;
};

static wk_reads *s_reads(wk_vc *v)
{
    if (!v->reads)
        v->reads = calloc(1, sizeof *v->reads);
    return v->reads;
}

static wk_glob *s_glob(wk_reads *r, const char *name)
{
    for (size_t i = 0; r && i < r->ng; i++)
        if (!strcmp(r->g[i].name, name))
            return &r->g[i];
    return NULL;
}

void pc_wk_reads_free(wk_vc *v)
{
    wk_reads *r = v->reads;
    if (!r)
        return;
    for (size_t i = 0; i < r->ng; i++)
        pc_buf_drop(&r->g[i].val);
    for (size_t i = 0; i < r->nans; i++)
        pc_buf_drop(&r->ans[i].val);
    free(r->g);
    free(r->wr);
    free(r->ans);
    free(r);
    v->reads = NULL;
}

void pc_wk_glob_ack(pc_worker *w, const pc_msg *m)
{
    pc_rbuf rb;
    pc_rbuf_init(&rb, pc_buf_data(m->body), pc_buf_len(m->body));
    char name[LEV_NAME_MAX + 1];
    if (!pc_get_str(&rb, name, sizeof name))
        return;
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_str(&b, name);
    pc_peer_send(w->p, m->from, pc_hdr_make(PC_W_GLOB_ACK, m->h.vc, 0, 0, m->h.seq), &b, NULL);
    pc_wbuf_free(&b);
}

void pc_wk_glob(pc_worker *w, wk_vc *v, const pc_msg *m)
{
    pc_rbuf rb;
    pc_rbuf_init(&rb, pc_buf_data(m->body), pc_buf_len(m->body));
    char name[LEV_NAME_MAX + 1];
    pc_get_str(&rb, name, sizeof name);
    uint8_t form = pc_get_u8(&rb);
    const void *data = NULL;
    size_t len = 0;
    pc_get_blob(&rb, &data, &len);
    if (!pc_rbuf_done(&rb) || !*name || form > PC_GLOB_DROP ||
        (form == PC_GLOB_REF && len != PC_HASH_LEN + 4)) {
        pc_log_src(PC_LOG_WARN, m->from, "VC %016llx: dropped a malformed GLOB from %s: %s",
                   (unsigned long long)v->vc, m->from,
                   pc_rbuf_done(&rb) ? "bad name, form or reference" : pc_rbuf_why(&rb));
        return;
    }
    w->glob_pushes++;
    if (v->direct) /* the writer's direct messages wait until every subscriber has it */
        pc_wk_glob_ack(w, m);
    wk_reads *r = s_reads(v);
    wk_glob *g = s_glob(r, name);
    if (form == PC_GLOB_DROP) {
        if (g) {
            pc_buf_drop(&g->val);
            *g = r->g[--r->ng];
        }
        return;
    }
    if (g && m->h.seq <= g->rev)
        return; /* not newer than what it has */
    if (!g) {
        if (!r || RT_VEC_RESERVE(r->g, r->capg, r->ng, 1))
            return; /* no copy: its reads go to the deployer */
        g = &r->g[r->ng++];
        memset(g, 0, sizeof *g);
        memcpy(g->name, name, strlen(name) + 1);
    }
    pc_buf_drop(&g->val);
    g->rev = m->h.seq;
    if (form == PC_GLOB_WHOLE && len) {
        if (!v->copies)
            v->copies = pc_gcopies_new(0);
        pc_module_hash(data, len, g->hash);
        pc_gcopies_put(v->copies, data, len); /* named by its hash in later inputs */
        g->val = pc_gcopies_get(v->copies, g->hash, len);
        if (!g->val)
            g->val = pc_buf_new(data, len);
    } else if (form == PC_GLOB_REF) {
        memcpy(g->hash, data, PC_HASH_LEN);
        g->val =
            pc_gcopies_get(v->copies, g->hash, rt_le32_get((const uint8_t *)data + PC_HASH_LEN));
    } /* CHANGED, or a copy gone: no value until the next push */
}

static bool s_writing(const wk_reads *r, const char *name)
{
    for (size_t i = 0; i < r->nwr; i++)
        if (!strcmp(r->wr[i].name, name))
            return true;
    return false;
}

/* A write of VT vt (output seq) went up: no read of name is answered here
 * until it is acknowledged. */
static void s_write(wk_vc *v, uint64_t vt, uint64_t seq, const char *name)
{
    wk_reads *r = s_reads(v);
    for (size_t i = 0; r && i < r->nwr; i++)
        if (r->wr[i].vt == vt && r->wr[i].seq == seq)
            return;
    if (!r || RT_VEC_RESERVE(r->wr, r->capwr, r->nwr, 1)) {
        /* cannot remember it: every copy goes, reads go to the deployer */
        for (size_t i = 0; r && i < r->ng; i++)
            pc_buf_drop(&r->g[i].val);
        return;
    }
    wk_write *e = &r->wr[r->nwr++];
    e->vt = vt;
    e->seq = seq;
    memcpy(e->name, name, strlen(name) + 1);
}

/* Sends the deployer read `seq` of t marked as answered here at a's
 * revision, its value named by hash. */
static void s_forward_marked(pc_worker *w, wk_vc *v, const wk_vt *t, uint64_t seq, const char *name,
                             const wk_answer *a)
{
    uint8_t ref[PC_HASH_LEN + 4];
    memcpy(ref, a->hash, PC_HASH_LEN);
    rt_le32_put(ref + PC_HASH_LEN, (uint32_t)pc_buf_len(a->val));
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_u8(&b, RT_OUT_READ);
    pc_put_u64(&b, 0);
    pc_put_u64(&b, a->rev);
    pc_put_u8(&b, 1); /* by reference */
    pc_put_str(&b, name);
    pc_put_blob(&b, ref, sizeof ref);
    if (!b.err)
        pc_wk_send_deployer(w, v, PC_W_OUT, t->id, t->epoch, seq, b.data, b.len, NULL);
    pc_wbuf_free(&b);
}

bool pc_wk_read_out(pc_worker *w, wk_vc *v, wk_vt *t, const pc_hdr *h, const uint8_t *payload)
{
    pc_rbuf rb;
    pc_rbuf_init(&rb, payload, h->len);
    uint8_t kind = pc_get_u8(&rb);
    pc_get_u64(&rb);
    uint64_t ref = pc_get_u64(&rb);
    pc_get_u8(&rb);
    char name[LEV_NAME_MAX + 1];
    pc_get_str(&rb, name, sizeof name);
    const void *data = NULL;
    size_t len = 0;
    pc_get_blob(&rb, &data, &len);
    if (!pc_rbuf_done(&rb) || !*name || !h->seq)
        return false; /* the deployer judges it */
    if (kind == RT_OUT_UNLOCK || kind == RT_OUT_PUT) {
        s_write(v, t->id, h->seq, name);
        return false;
    }
    if (kind != RT_OUT_READ || ref || !t->reads_ok || h->seq <= t->reads_from)
        return false; /* answered already (it goes up whole), or the deployer answers */
    wk_reads *r = v->reads;
    for (size_t i = 0; r && i < r->nans; i++)
        if (r->ans[i].vt == t->id && r->ans[i].seq == h->seq) { /* sent again */
            s_forward_marked(w, v, t, h->seq, name, &r->ans[i]);
            return true;
        }
    wk_glob *g = s_glob(r, name);
    if (!g || !g->val || s_writing(r, name) || RT_VEC_RESERVE(r->ans, r->capans, r->nans, 1))
        return false;
    wk_answer *a = &r->ans[r->nans];
    *a = (wk_answer){.vt = t->id, .seq = h->seq, .rev = g->rev, .val = pc_buf_ref(g->val)};
    memcpy(a->hash, g->hash, PC_HASH_LEN);
    uint8_t head[8 + 4];
    rt_le64_put(head, g->rev);
    rt_le32_put(head + 8, (uint32_t)pc_buf_len(a->val));
    struct iovec io[2] = {{head, sizeof head}, {(void *)pc_buf_data(a->val), pc_buf_len(a->val)}};
    if (pc_wk_xsend(w, v, pc_hdr_make(PC_X_READ_AT, v->vc, t->id, t->epoch, h->seq), io, 2)) {
        pc_buf_drop(&a->val);
        return false;
    }
    r->nans++;
    w->reads_here++;
    s_forward_marked(w, v, t, h->seq, name, a);
    return true;
}

void pc_wk_reads_acked(wk_vc *v, uint64_t vt, uint64_t seq)
{
    wk_reads *r = v->reads;
    for (size_t i = 0; r && i < r->nwr;)
        if (r->wr[i].vt == vt && r->wr[i].seq <= seq)
            r->wr[i] = r->wr[--r->nwr];
        else
            i++;
    for (size_t i = 0; r && i < r->nans;)
        if (r->ans[i].vt == vt && r->ans[i].seq <= seq) {
            pc_buf_drop(&r->ans[i].val);
            r->ans[i] = r->ans[--r->nans];
        } else {
            i++;
        }
}

void pc_wk_reads_forget(wk_vc *v, uint64_t vt) { pc_wk_reads_acked(v, vt, UINT64_MAX); }

void pc_worker_reads_status(pc_worker *w, pc_wbuf *j)
{
    size_t n = 0;
    for (wk_vc *v = w->vcs; v; v = v->next)
        for (size_t i = 0; v->reads && i < v->reads->ng; i++)
            n += v->reads->g[i].val != NULL;
    pc_json_fmt(j, "{\"answered\":%llu,\"versioned_copies\":%zu,\"pushes\":%llu}",
                (unsigned long long)w->reads_here, n, (unsigned long long)w->glob_pushes);
}
