/* msgmgr_reads.c - global reads answered near the reader, the deployer's
 * part (docs/GLOBAL_READS.md): each variable's revision and the values of
 * its recent revisions, the workers subscribed to it (those whose VTs
 * read it), the changes pushed to them (W_GLOB), and the values that
 * reads the workers answered themselves are logged with.
 *
 * A worker subscribes by having a read of the variable answered for one
 * of its VTs; it stays one while its VTs read it (at the deployer or at
 * the worker): MM_UNREAD changes pushed with no read in between, and it
 * is dropped (PC_GLOB_DROP). Pushes go in the order of the changes on
 * the one connection to each worker, before anything the deployer sends
 * after the change (a message a writer sent after its unlock, the
 * acknowledgement of the unlock): what the worker answers is never older
 * than what a read at the deployer would have been once those came.
 *
 * With direct messages a writer's messages do not pass the deployer, so
 * the subscribers acknowledge each push (W_GLOB_ACK) and the writer's
 * acknowledgement of its commit waits until all have (mm_gwait): its
 * direct sends after the commit wait for that acknowledgement
 * (exechost_direct.c). A subscriber dropped there stays one until it
 * acknowledges the drop; one whose worker is gone stops counting.
 */
#include <stdlib.h>
#include <string.h>

#include "lev_task.h"
#include "log.h"
#include "modmgr.h"
#include "msgmgr_private.h"
#include "vec.h"
#include "wire.h"

static mm_sub *s_sub(mm_glob *g, const char *host)
{
    for (size_t i = 0; i < g->nsubs; i++)
        if (!strcmp(g->subs[i].host, host))
            return &g->subs[i];
    return NULL;
}

/* Sends host the change of g to its revision in form `form` (wire.h):
 * the value whole, by the hash of a copy the host has, or no value. */
static void s_push(pc_msgmgr *mm, mm_glob *g, const char *host, uint8_t form)
{
    const uint8_t *hash = g->len >= mm->o.ref_min ? pc_mm_glob_hash(g) : NULL;
    if (form == PC_GLOB_WHOLE && hash && pc_mm_copy_find(mm, host, hash))
        form = PC_GLOB_REF;
    else if (form == PC_GLOB_WHOLE && g->len > PC_GLOB_PUSH_MAX)
        form = PC_GLOB_CHANGED;
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_str(&b, g->name);
    pc_put_u8(&b, form);
    if (form == PC_GLOB_WHOLE) {
        pc_put_blob(&b, g->val, g->len);
        if (hash)
            pc_mm_copy_note(mm, host, hash); /* the worker keeps it (worker_reads.c) */
        mm->push_bytes += g->len;
    } else if (form == PC_GLOB_REF) {
        uint8_t ref[PC_HASH_LEN + 4];
        memcpy(ref, hash, PC_HASH_LEN);
        rt_le32_put(ref + PC_HASH_LEN, (uint32_t)g->len);
        pc_put_blob(&b, ref, sizeof ref);
    } else {
        pc_put_blob(&b, NULL, 0);
    }
    mm->pushes++;
    pc_peer_send(mm->o.p, host, pc_hdr_make(PC_W_GLOB, mm->o.vc, 0, 0, g->rev), &b, NULL);
    pc_wbuf_free(&b);
}

void pc_mm_glob_reader(pc_msgmgr *mm, mm_glob *g, const char *host)
{
    if (!mm->o.reads_near || !host || !g || !g->set)
        return;
    mm_sub *s = s_sub(g, host);
    if (s) {
        s->unread = 0;
        return;
    }
    if (g->nsubs >= MM_SUBS || RT_VEC_RESERVE(g->subs, g->capsubs, g->nsubs, 1))
        return; /* its reads keep going to the deployer */
    s = &g->subs[g->nsubs++];
    memset(s, 0, sizeof *s);
    pc_ep_copy(s->host, host);
    s->acked = g->rev; /* what it is sent now is current: no earlier commit waits for it */
    mm->subscribed++;
    s_push(mm, g, host, PC_GLOB_WHOLE); /* by reference: the read's answer brought it */
}

void pc_mm_glob_keep(mm_glob *g)
{
    if (!g->set || !g->nsubs) {
        free(g->val);
        g->val = NULL;
        return;
    }
    if (g->nhist == MM_HIST) { /* the oldest goes */
        free(g->hist[0].val);
        memmove(g->hist, g->hist + 1, (MM_HIST - 1) * sizeof *g->hist);
        g->nhist--;
    }
    g->hist[g->nhist++] = (mm_rev){.rev = g->rev, .val = g->val, .len = g->len};
    g->val = NULL;
}

/* Whether every subscriber of g has taken revision rev. */
static bool s_taken(const mm_glob *g, uint64_t rev)
{
    for (size_t i = 0; i < g->nsubs; i++)
        if (g->subs[i].drop_rev || g->subs[i].acked < rev)
            return false;
    return true;
}

/* Direct messages: the writers whose commits of g every subscriber has
 * taken now get their acknowledgement. */
static void s_gwait_check(pc_msgmgr *mm, mm_glob *g)
{
    for (size_t i = 0; i < mm->nvts; i++) {
        mm_vt *v = &mm->vts[i];
        size_t before = v->ngw;
        for (size_t k = 0; v->used && k < v->ngw;)
            if (v->gw[k].g == g && s_taken(g, v->gw[k].rev))
                v->gw[k] = v->gw[--v->ngw];
            else
                k++;
        if (v->ngw != before && !v->ended)
            pc_mm_send_ack(mm, v);
    }
}

void pc_mm_glob_push(pc_msgmgr *mm, mm_glob *g, mm_vt *writer, uint64_t seq)
{
    for (size_t i = 0; i < g->nsubs;) {
        mm_sub *s = &g->subs[i];
        if (s->drop_rev) { /* dropped: waits for the acknowledgement of that */
            i++;
            continue;
        }
        if (++s->unread > MM_UNREAD) { /* its VTs stopped reading it */
            s_push(mm, g, s->host, PC_GLOB_DROP);
            mm->unsubscribed++;
            if (mm->o.direct) {
                s->drop_rev = g->rev;
                i++;
            } else {
                *s = g->subs[--g->nsubs];
            }
            continue;
        }
        s_push(mm, g, s->host, PC_GLOB_WHOLE);
        i++;
    }
    if (mm->o.direct && writer && !s_taken(g, g->rev) &&
        !RT_VEC_RESERVE(writer->gw, writer->capgw, writer->ngw, 1))
        writer->gw[writer->ngw++] = (mm_gwait){.g = g, .rev = g->rev, .seq = seq};
    if (!g->nsubs) {
        for (size_t i = 0; i < g->nhist; i++)
            free(g->hist[i].val);
        g->nhist = 0;
    }
}

const uint8_t *pc_mm_glob_at(mm_glob *g, uint64_t rev, const uint8_t *hash, size_t len, bool *found)
{
    uint8_t h[PC_HASH_LEN];
    *found = false;
    if (!g || !g->set)
        return NULL;
    if (rev == g->rev) {
        *found = g->len == len && !memcmp(pc_mm_glob_hash(g), hash, PC_HASH_LEN);
        return *found ? g->val : NULL;
    }
    for (size_t i = 0; i < g->nhist; i++) {
        const mm_rev *r = &g->hist[i];
        if (r->rev != rev || r->len != len)
            continue;
        pc_module_hash(r->val, r->len, h);
        *found = !memcmp(h, hash, PC_HASH_LEN);
        return *found ? r->val : NULL;
    }
    return NULL;
}

/* Removes subscriber i of g. */
static void s_unsub(mm_glob *g, size_t i) { g->subs[i] = g->subs[--g->nsubs]; }

void pc_mm_on_glob_ack(pc_msgmgr *mm, pc_msg *m)
{
    pc_rbuf r;
    pc_rbuf_init(&r, pc_buf_data(m->body), pc_buf_len(m->body));
    char name[LEV_NAME_MAX + 1];
    pc_get_str(&r, name, sizeof name);
    mm_glob *g = pc_rbuf_done(&r) ? pc_mm_glob(mm, name) : NULL;
    mm_sub *s = g ? s_sub(g, m->from) : NULL;
    if (!s)
        return; /* not (or no longer) a subscriber */
    if (m->h.seq > s->acked)
        s->acked = m->h.seq;
    if (s->drop_rev && s->acked >= s->drop_rev)
        s_unsub(g, (size_t)(s - g->subs));
    s_gwait_check(mm, g);
}

void pc_mm_host_gone(pc_msgmgr *mm, const char *host)
{
    for (mm_glob *g = mm->globs; g; g = g->next) {
        mm_sub *s = s_sub(g, host);
        if (!s)
            continue;
        s_unsub(g, (size_t)(s - g->subs));
        mm->unsubscribed++;
        s_gwait_check(mm, g);
    }
}

void pc_mm_glob_free_reads(mm_glob *g)
{
    for (size_t i = 0; i < g->nhist; i++)
        free(g->hist[i].val);
    g->nhist = 0;
    free(g->subs);
    g->subs = NULL;
    g->nsubs = g->capsubs = 0;
}

void pc_mm_reads_from(pc_msgmgr *mm, mm_vt *v, const char *host, uint32_t epoch)
{
    if (mm->o.reads_near && host)
        pc_peer_send(mm->o.p, host,
                     pc_hdr_make(PC_W_READS_FROM, mm->o.vc, pc_mm_id(mm, v), epoch, v->accepted),
                     NULL, NULL);
}
