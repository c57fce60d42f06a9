/* msgmgr.c - the message manager and global variable manager of one VC:
 * each VT's numbered input stream and its log, exactly-once outputs by
 * output number, flow control by delayed acknowledgements, global
 * variables with their lock queues, and taking a lock back from a lost
 * incarnation (msgmgr.h says why all of it lives with the deployer).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "causal.h"
#include "lev_errors.h"
#include "lev_task.h"
#include "log.h"
#include "modmgr.h"
#include "msgmgr.h"
#include "msgmgr_private.h"
#include "vec.h"
#include "vtchan.h"

#define MM_BACKLOG 1024u
#define MM_REF_MIN 1024u /* global values this large go by reference to a worker that has them */

/* ===================================================================
 * VTs and their streams
 * =================================================================== */

mm_vt *pc_mm_vt_of(pc_msgmgr *mm, uint64_t id)
{
    if (id < 2 || id - 2 >= mm->nvts || !mm->vts[id - 2].used)
        return NULL;
    return &mm->vts[id - 2];
}

/* ===================================================================
 * Copies of global values at the workers
 * =================================================================== */

/* The pair (host, hash), or NULL. */
mm_copy *pc_mm_copy_find(pc_msgmgr *mm, const char *host, const uint8_t *hash)
{
    for (size_t i = 0; i < mm->ncopies; i++)
        if (!memcmp(mm->copies[i].hash, hash, PC_HASH_LEN) && !strcmp(mm->copies[i].host, host))
            return &mm->copies[i];
    return NULL;
}

/* Host has (or now gets) the value of that hash. */
void pc_mm_copy_note(pc_msgmgr *mm, const char *host, const uint8_t *hash)
{
    mm_copy *c = pc_mm_copy_find(mm, host, hash);
    if (!c && mm->ncopies < MM_COPIES)
        c = &mm->copies[mm->ncopies++];
    if (!c) { /* the least recently used pair makes room */
        c = &mm->copies[0];
        for (size_t i = 1; i < mm->ncopies; i++)
            if (mm->copies[i].used < c->used)
                c = &mm->copies[i];
    }
    pc_ep_copy(c->host, host);
    memcpy(c->hash, hash, PC_HASH_LEN);
    c->used = ++mm->copy_clock;
}

static void s_copy_forget(pc_msgmgr *mm, const char *host, const uint8_t *hash)
{
    mm_copy *c = pc_mm_copy_find(mm, host, hash);
    if (c)
        *c = mm->copies[--mm->ncopies];
}

/* The hash of g's value (computed once per value). */
const uint8_t *pc_mm_glob_hash(mm_glob *g)
{
    if (!g->hashed) {
        pc_module_hash(g->val, g->len, g->hash);
        g->hashed = true;
    }
    return g->hash;
}

/* Sends input e to v's host: a global's value the host has a copy of by
 * its hash (W_IN_REF), anything else whole (W_IN); whole = true always
 * whole (the host missed its copy). */
static void s_send_in_as(pc_msgmgr *mm, mm_vt *v, const mm_in *e, bool whole)
{
    uint32_t epoch = 0;
    const char *host = pc_resolver_get(mm->o.where, pc_mm_id(mm, v), &epoch);
    if (!host || !v->synced)
        return;
    mm_copy *c = !whole && e->hashed ? pc_mm_copy_find(mm, host, e->hash) : NULL;
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_u8(&b, e->kind);
    pc_put_u8(&b, e->novalue);
    pc_put_u64(&b, e->from);
    pc_put_u64(&b, e->ref);
    pc_put_i32(&b, e->err);
    pc_put_u64(&b, e->cfrom);
    pc_put_u64(&b, e->cseq);
    if (c) {
        c->used = ++mm->copy_clock;
        pc_put_raw(&b, e->hash, PC_HASH_LEN);
        pc_put_u32(&b, (uint32_t)e->len);
        mm->by_ref++;
        mm->ref_bytes += e->len;
    } else {
        pc_put_blob(&b, e->data, e->len);
        if (e->hashed)
            pc_mm_copy_note(mm, host, e->hash); /* the host keeps it (worker.c) */
    }
    pc_peer_send(mm->o.p, host,
                 pc_hdr_make(c ? PC_W_IN_REF : PC_W_IN, mm->o.vc, pc_mm_id(mm, v), epoch, e->d), &b,
                 NULL);
    pc_wbuf_free(&b);
}

static void s_send_in(pc_msgmgr *mm, mm_vt *v, const mm_in *e) { s_send_in_as(mm, v, e, false); }

void pc_mm_on_miss(pc_msgmgr *mm, pc_msg *m)
{
    mm_vt *v = pc_mm_vt_of(mm, m->h.vt);
    uint64_t d = m->h.seq;
    if (!v || v->ended || d < v->first || d - v->first >= v->nlog)
        return; /* trimmed: the VT is past it */
    mm_in *e = &v->log[d - v->first];
    if (!e->hashed)
        return;
    mm->misses++;
    s_copy_forget(mm, m->from, e->hash);
    s_send_in_as(mm, v, e, true);
}

/* Acknowledges v's outputs up to what was accepted; `resend` asks its
 * host to send its outbox again (an output after them was lost). */
static void s_ack(pc_msgmgr *mm, mm_vt *v, bool resend)
{
    uint32_t epoch = 0;
    const char *host = pc_resolver_get(mm->o.where, pc_mm_id(mm, v), &epoch);
    v->acked = v->accepted;
    for (size_t i = 0; i < v->ngw; i++) /* a commit subscribers have not all taken */
        if (v->gw[i].seq <= v->acked)
            v->acked = v->gw[i].seq - 1;
    if (!host || !v->synced)
        return;
    pc_wbuf b;
    pc_wbuf_init(&b);
    if (resend)
        pc_put_u8(&b, 1);
    pc_peer_send(mm->o.p, host, pc_hdr_make(PC_W_ACK, mm->o.vc, pc_mm_id(mm, v), epoch, v->acked),
                 resend ? &b : NULL, NULL);
    pc_wbuf_free(&b);
}

/* Acknowledges v's outputs at the next pc_mm_flush: the outputs of a
 * burst get one acknowledgement (at once when out of memory). */
static void s_send_ack(pc_msgmgr *mm, mm_vt *v)
{
    if (v->ack_due)
        return;
    if (RT_VEC_RESERVE(mm->due, mm->capdue, mm->ndue, 1)) {
        s_ack(mm, v, false);
        return;
    }
    v->ack_due = true;
    mm->due[mm->ndue++] = pc_mm_id(mm, v);
}

void pc_mm_send_ack(pc_msgmgr *mm, mm_vt *v) { s_send_ack(mm, v); }

void pc_mm_flush(pc_msgmgr *mm)
{
    for (size_t i = 0; mm && i < mm->ndue; i++) {
        mm_vt *v = pc_mm_vt_of(mm, mm->due[i]);
        if (v && v->ack_due) {
            v->ack_due = false;
            s_ack(mm, v, false);
        }
    }
    if (mm)
        mm->ndue = 0;
}

/* The last number given on the channel from `from` (0: the deployer)
 * to v, or NULL on exhaustion. */
uint64_t *pc_mm_chan(mm_vt *v, uint64_t from)
{
    for (size_t i = 0; i < v->nchans; i++)
        if (v->chans[i].vt == from)
            return &v->chans[i].seq;
    if (RT_VEC_RESERVE(v->chans, v->capchans, v->nchans, 1))
        return NULL;
    v->chans[v->nchans] = (pc_cx_mark){.vt = from, .seq = 0};
    return &v->chans[v->nchans++].seq;
}

/* Appends an input to v's stream (data copied) and sends it on. 0 or
 * LEV_ENOMEM. */
static int s_append_h(pc_msgmgr *mm, mm_vt *v, uint8_t kind, uint64_t from, uint64_t ref,
                      int32_t err, const void *data, size_t len, bool novalue, const uint8_t *hash)
{
    if (RT_VEC_RESERVE(v->log, v->caplog, v->nlog, 1))
        return LEV_ENOMEM;
    uint64_t cfrom = kind == RT_IN_MSG && from >= 2 ? from : 0;
    uint64_t *cseq = pc_mm_chan(v, cfrom);
    uint8_t *copy = len && cseq ? malloc(len) : NULL;
    if (!cseq || (len && !copy))
        return LEV_ENOMEM;
    if (len)
        memcpy(copy, data, len);
    if (!v->nlog)
        v->first = v->next_d;
    mm_in *e = &v->log[v->nlog++];
    *e = (mm_in){.d = v->next_d++,
                 .from = from,
                 .ref = ref,
                 .cfrom = cfrom,
                 .cseq = ++*cseq,
                 .err = err,
                 .kind = kind,
                 .novalue = novalue,
                 .hashed = hash != NULL,
                 .data = copy,
                 .len = len};
    if (hash)
        memcpy(e->hash, hash, PC_HASH_LEN);
    s_send_in(mm, v, e);
    return 0;
}

static int s_append(pc_msgmgr *mm, mm_vt *v, uint8_t kind, uint64_t from, uint64_t ref, int32_t err,
                    const void *data, size_t len, bool novalue)
{
    return s_append_h(mm, v, kind, from, ref, err, data, len, novalue, NULL);
}

/* Appends a read's answer or a grant: g's value, named by its hash when
 * it is large enough to go by reference to a host that has it. */
static int s_append_value(pc_msgmgr *mm, mm_vt *v, uint8_t kind, uint64_t seq, mm_glob *g)
{
    bool some = g && g->set && g->len >= mm->o.ref_min;
    return s_append_h(mm, v, kind, 0, seq, 0, g ? g->val : NULL, g ? g->len : 0, !g || !g->set,
                      some ? pc_mm_glob_hash(g) : NULL);
}

static uint64_t s_backlog(const mm_vt *v)
{
    uint64_t have = v->next_d - 1;
    return have > v->consumed ? have - v->consumed : 0;
}

/* Delivers a message from `from` (a VT id or LEV_CLIENT) to `to`, or
 * bounces it to a sending VT when `to` is not there. */
static int s_deliver(pc_msgmgr *mm, uint64_t from, uint64_t to, const void *data, size_t len)
{
    mm_vt *t = pc_mm_vt_of(mm, to);
    if (!t || t->ended) {
        mm_vt *s = pc_mm_vt_of(mm, from);
        if (s && !s->ended) {
            pc_log(PC_LOG_DEBUG, "VC %016llx: a message of VT %llu to %llu bounced (%s)",
                   (unsigned long long)mm->o.vc, (unsigned long long)from, (unsigned long long)to,
                   t ? "it ended" : "no such VT");
            s_append(mm, s, RT_IN_BOUNCE, to, 0, LEV_ENOVT, NULL, 0, false);
        }
        return LEV_ENOVT;
    }
    mm->delivered++;
    return s_append(mm, t, RT_IN_MSG, from, 0, 0, data, len, false);
}

static void s_report(pc_msgmgr *mm, mm_vt *v, const void *data, size_t len)
{
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_blob(&b, data, len);
    v->reports++;
    pc_peer_send(mm->o.p, mm->o.client,
                 pc_hdr_make(PC_C_REPORT, mm->o.vc, pc_mm_id(mm, v), 0, v->reports), &b, NULL);
    pc_wbuf_free(&b);
}

static void s_held_free(mm_vt *v)
{
    while (v->held) {
        mm_held *h = v->held;
        v->held = h->next;
        free(h->data);
        free(h);
    }
    v->held_tail = &v->held;
}

/* What v sent under its lock goes out now that the lock is committed. */
static void s_release_held(pc_msgmgr *mm, mm_vt *v)
{
    mm_held *list = v->held;
    v->held = NULL;
    v->held_tail = &v->held;
    while (list) {
        mm_held *h = list;
        list = h->next;
        if (h->kind == RT_OUT_MSG)
            s_deliver(mm, pc_mm_id(mm, v), h->to, h->data, h->len);
        else
            s_report(mm, v, h->data, h->len);
        free(h->data);
        free(h);
    }
}

static void s_hold(mm_vt *v, uint8_t kind, uint64_t to, const void *data, size_t len)
{
    mm_held *h = calloc(1, sizeof *h);
    uint8_t *copy = len ? malloc(len) : NULL;
    if (!h || (len && !copy)) {
        free(h);
        free(copy);
        pc_log(PC_LOG_ERROR, "deployer out of memory: an output held under a lock is lost");
        return;
    }
    if (len)
        memcpy(copy, data, len);
    *h = (mm_held){.kind = kind, .to = to, .data = copy, .len = len};
    *v->held_tail = h;
    v->held_tail = &h->next;
}

/* ===================================================================
 * Global variables
 * =================================================================== */

static mm_glob *s_glob(pc_msgmgr *mm, const char *name, bool create)
{
    for (mm_glob *g = mm->globs; g; g = g->next)
        if (!strcmp(g->name, name))
            return g;
    if (!create)
        return NULL;
    mm_glob *g = calloc(1, sizeof *g);
    if (!g || !(g->name = strdup(name))) {
        free(g);
        return NULL;
    }
    g->wtail = &g->wq;
    g->next = mm->globs;
    mm->globs = g;
    return g;
}

mm_glob *pc_mm_glob(pc_msgmgr *mm, const char *name) { return s_glob(mm, name, false); }

static int s_set_value(mm_glob *g, const void *val, size_t len)
{
    uint8_t *copy = len ? malloc(len) : NULL;
    if (len && !copy)
        return LEV_ENOMEM;
    if (len)
        memcpy(copy, val, len);
    pc_mm_glob_keep(g);
    g->val = copy;
    g->len = len;
    g->set = true;
    g->hashed = false;
    g->rev++;
    return 0;
}

static void s_client_reply(pc_msgmgr *mm, uint16_t type, uint64_t seq, int err, const char *why)
{
    pc_wbuf b;
    pc_wbuf_init(&b);
    if (err) {
        pc_put_i32(&b, err);
        pc_put_str(&b, why);
        type = PC_C_ERROR;
    }
    pc_peer_send(mm->o.p, mm->o.client, pc_hdr_make(type, mm->o.vc, 0, 0, seq), &b, NULL);
    pc_wbuf_free(&b);
}

/* A VT's put (lev_global_put): applied if its version is above the
 * variable's; true if it was. */
static bool s_put(pc_msgmgr *mm, mm_glob *g, uint64_t version, const void *val, size_t len)
{
    if (version <= g->version) {
        mm->puts_stale++;
        return false;
    }
    if (s_set_value(g, val, len)) {
        pc_log(PC_LOG_ERROR, "deployer out of memory: put of '%s' lost", g->name);
        return false;
    }
    g->version = version;
    mm->puts++;
    return true;
}

/* Gives a free lock to its next waiter: a VT gets a grant in its stream,
 * a client's set and a VT's put are applied at once. */
static void s_grant_next(pc_msgmgr *mm, mm_glob *g)
{
    while (!g->owner && g->wq) {
        mm_waiter *w = g->wq;
        g->wq = w->next;
        if (!g->wq)
            g->wtail = &g->wq;
        if (w->version) {
            if (s_put(mm, g, w->version, w->val, w->len))
                pc_mm_glob_push(mm, g, NULL, 0); /* its output was taken before */
        } else if (!w->vt) {
            int rc = s_set_value(g, w->val, w->len);
            s_client_reply(mm, PC_C_GSET_OK, w->seq, rc, rc ? "deployer out of memory" : "");
            if (!rc)
                pc_mm_glob_push(mm, g, NULL, 0);
        } else {
            mm_vt *v = pc_mm_vt_of(mm, w->vt);
            if (v && !v->ended) {
                g->owner = w->vt;
                v->lock = g;
                v->lock_seq = w->seq;
                v->grant_d = v->next_d;
                s_append_value(mm, v, RT_IN_GRANT, w->seq, g);
            }
        }
        free(w->val);
        free(w);
    }
}

static int s_enqueue(mm_glob *g, uint64_t vt, uint64_t seq, uint64_t version, const void *val,
                     size_t len)
{
    mm_waiter *w = calloc(1, sizeof *w);
    uint8_t *copy = len ? malloc(len) : NULL;
    if (!w || (len && !copy)) {
        free(w);
        free(copy);
        return LEV_ENOMEM;
    }
    if (len)
        memcpy(copy, val, len);
    *w = (mm_waiter){.vt = vt, .seq = seq, .version = version, .val = copy, .len = len};
    *g->wtail = w;
    g->wtail = &w->next;
    return 0;
}

/* Frees v's lock (its value unchanged) and passes it on. */
static void s_unlock(pc_msgmgr *mm, mm_vt *v)
{
    mm_glob *g = v->lock;
    v->lock = NULL;
    if (g) {
        g->owner = 0;
        s_grant_next(mm, g);
    }
}

/* ===================================================================
 * Outputs
 * =================================================================== */

/* Reads a W_OUT payload. */
typedef struct mm_out {
    uint8_t kind, keep;
    uint64_t to, ref;
    char name[LEV_NAME_MAX + 1];
    const void *data;
    size_t len;
    /* a READ answered at the worker (ref: the revision): the value it
     * was answered with, and its hash */
    const void *rval;
    size_t rlen;
    uint8_t rhash[PC_HASH_LEN];
} mm_out;

static bool s_read_out(pc_msg *m, mm_out *o)
{
    pc_rbuf r;
    pc_rbuf_init(&r, pc_buf_data(m->body), pc_buf_len(m->body));
    o->kind = pc_get_u8(&r);
    o->to = pc_get_u64(&r);
    o->ref = pc_get_u64(&r);
    o->keep = pc_get_u8(&r);
    pc_get_str(&r, o->name, sizeof o->name);
    pc_get_blob(&r, &o->data, &o->len);
    o->rval = NULL;
    o->rlen = 0;
    if (!pc_rbuf_done(&r)) {
        pc_log_src(PC_LOG_WARN, m->from, "dropped OUT of VT %llu from %s: %s",
                   (unsigned long long)m->h.vt, m->from, pc_rbuf_why(&r));
        return false;
    }
    return true;
}

static void s_take(pc_msgmgr *mm, mm_vt *v, const mm_out *o, uint64_t seq, const char *host)
{
    uint64_t id = pc_mm_id(mm, v);
    switch (o->kind) {
    case RT_OUT_MSG:
        if (o->len > mm->o.max_msg) {
            /* the runtime refuses above its own limit (16 MiB); this one is
             * lower when the deployer's --max-msg is */
            pc_log(PC_LOG_WARN,
                   "VC %016llx VT %llu: message of %zu bytes to VT %llu dropped: above the "
                   "limit of %zu bytes",
                   (unsigned long long)mm->o.vc, (unsigned long long)id, o->len,
                   (unsigned long long)o->to, mm->o.max_msg);
            break;
        }
        if (v->lock) {
            mm->held_back++;
            s_hold(v, RT_OUT_MSG, o->to, o->data, o->len);
            break;
        }
        s_deliver(mm, id, o->to, o->data, o->len);
        mm_vt *t = pc_mm_vt_of(mm, o->to);
        if (t && s_backlog(t) > mm->o.backlog)
            v->wait_on = o->to;
        break;
    case RT_OUT_REPORT:
        if (v->lock)
            s_hold(v, RT_OUT_REPORT, 0, o->data, o->len);
        else
            s_report(mm, v, o->data, o->len);
        break;
    case RT_OUT_LOCK: {
        mm_glob *g = *o->name ? s_glob(mm, o->name, true) : NULL;
        if (!g) {
            s_append(mm, v, RT_IN_ERROR, 0, seq, *o->name ? LEV_ENOMEM : LEV_EINVAL, NULL, 0,
                     false);
            break;
        }
        if (g->owner == id || v->lock) {
            s_append(mm, v, RT_IN_ERROR, 0, seq, LEV_EBUSY, NULL, 0, false);
            break;
        }
        if (s_enqueue(g, id, seq, 0, NULL, 0))
            s_append(mm, v, RT_IN_ERROR, 0, seq, LEV_ENOMEM, NULL, 0, false);
        s_grant_next(mm, g);
        break;
    }
    case RT_OUT_UNLOCK: {
        mm_glob *g = s_glob(mm, o->name, false);
        if (!g || g->owner != id || v->lock != g) {
            pc_log(PC_LOG_WARN, "VC %016llx VT %llu unlocked '%s', which it does not hold",
                   (unsigned long long)mm->o.vc, (unsigned long long)id, o->name);
            break;
        }
        if (!o->keep && o->len > mm->o.max_value)
            break;
        if (!o->keep && s_set_value(g, o->data, o->len)) {
            pc_log(PC_LOG_ERROR, "deployer out of memory: update of '%s' lost", o->name);
        } else if (!o->keep) {
            if (o->len >= mm->o.ref_min && host) /* it went up through its host (worker.c) */
                pc_mm_copy_note(mm, host, pc_mm_glob_hash(g));
            pc_mm_glob_push(mm, g, v, seq); /* before what it held back, and before its ack */
        }
        s_release_held(mm, v);
        s_unlock(mm, v);
        break;
    }
    case RT_OUT_READ: {
        mm_glob *g = s_glob(mm, o->name, false);
        if (o->rval) { /* answered at its worker: logged with the value it was answered with */
            mm->reads_near++;
            s_append_h(mm, v, RT_IN_READ, 0, seq, 0, o->rval, o->rlen, false,
                       o->rlen >= mm->o.ref_min ? o->rhash : NULL);
        } else {
            s_append_value(mm, v, RT_IN_READ, seq, g);
        }
        pc_mm_glob_reader(mm, g, host);
        break;
    }
    case RT_OUT_PUT: {
        /* the runtime refuses all of these; a hostile or damaged host may not */
        mm_glob *g = *o->name && o->ref && o->len <= mm->o.max_value && !v->lock
                         ? s_glob(mm, o->name, true)
                         : NULL;
        if (!g) {
            pc_log(PC_LOG_WARN, "VC %016llx VT %llu: put of '%s' dropped (%s)",
                   (unsigned long long)mm->o.vc, (unsigned long long)id, o->name,
                   !*o->name                  ? "no name"
                   : !o->ref                  ? "version 0"
                   : o->len > mm->o.max_value ? "above the value limit"
                   : v->lock                  ? "it holds a lock"
                                              : "deployer out of memory");
            break;
        }
        if (g->owner || g->wq) { /* after the holder and those before it */
            if (s_enqueue(g, id, seq, o->ref, o->data, o->len))
                pc_log(PC_LOG_ERROR, "deployer out of memory: put of '%s' lost", o->name);
        } else if (s_put(mm, g, o->ref, o->data, o->len)) {
            if (o->len >= mm->o.ref_min && host) /* it went up through its host (worker.c) */
                pc_mm_copy_note(mm, host, pc_mm_glob_hash(g));
            pc_mm_glob_push(mm, g, v, seq);
        }
        break;
    }
    case RT_OUT_TIMEOUT:
        s_append(mm, v, RT_IN_TIMEOUT, 0, o->ref, 0, NULL, 0, false);
        break;
    default:
        pc_log(PC_LOG_WARN, "VC %016llx VT %llu: output of unknown kind %u dropped",
               (unsigned long long)mm->o.vc, (unsigned long long)id, o->kind);
    }
}

/* Acknowledgements held back by receivers that have consumed enough. */
static void s_unblock(pc_msgmgr *mm, uint64_t receiver)
{
    mm_vt *t = pc_mm_vt_of(mm, receiver);
    if (t && !t->ended && s_backlog(t) > mm->o.backlog)
        return;
    for (size_t i = 0; i < mm->nvts; i++) {
        mm_vt *v = &mm->vts[i];
        if (v->used && v->wait_on == receiver) {
            v->wait_on = 0;
            s_send_ack(mm, v);
        }
    }
}

/* Direct messages: v's executor knows no place for o.to, to which v sent
 * message o.ref of their channel: bounced once (a resumed v asks again
 * with the same number) when o.to is not in the VC or ended; else it is
 * on its way there (sent once o.to is placed). */
static void s_probe(pc_msgmgr *mm, mm_vt *v, const mm_out *o)
{
    mm_vt *t = pc_mm_vt_of(mm, o->to);
    if (t && !t->ended)
        return;
    /* a sender resumed from an image sends again what the receiver had
     * before it ended: nothing to bounce */
    for (size_t i = 0; t && i < t->nhad; i++)
        if (t->had[i].vt == pc_mm_id(mm, v) && o->ref <= t->had[i].seq)
            return;
    uint64_t *last = NULL;
    for (size_t i = 0; i < v->nbounced && !last; i++)
        if (v->bounced[i].vt == o->to)
            last = &v->bounced[i].seq;
    if (!last && !RT_VEC_RESERVE(v->bounced, v->capbounced, v->nbounced, 1)) {
        v->bounced[v->nbounced] = (pc_cx_mark){.vt = o->to, .seq = 0};
        last = &v->bounced[v->nbounced++].seq;
    }
    if (!last || o->ref <= *last)
        return;
    *last = o->ref;
    pc_log(PC_LOG_DEBUG, "VC %016llx: direct message %llu of VT %llu to %llu bounced (%s)",
           (unsigned long long)mm->o.vc, (unsigned long long)o->ref,
           (unsigned long long)pc_mm_id(mm, v), (unsigned long long)o->to,
           t ? "it ended" : "no such VT");
    s_append(mm, v, RT_IN_BOUNCE, o->to, 0, LEV_ENOVT, NULL, 0, false);
}

/* A read answered at its worker (o->ref its revision): finds the value
 * it was answered with, given whole or by hash (keep 1: the hash and u32
 * length), into o->rval; false if it is gone (or the reference is
 * malformed). */
static bool s_read_value(pc_msgmgr *mm, mm_out *o)
{
    if (o->keep != 1) { /* whole: as its outbox kept it */
        if (o->len > mm->o.max_value || !o->len)
            return false;
        o->rval = o->data;
        o->rlen = o->len;
        pc_module_hash(o->data, o->len, o->rhash);
        return true;
    }
    if (o->len != PC_HASH_LEN + 4)
        return false;
    bool found = false;
    size_t len = rt_le32_get((const uint8_t *)o->data + PC_HASH_LEN);
    o->rval = pc_mm_glob_at(s_glob(mm, o->name, false), o->ref, o->data, len, &found);
    o->rlen = found ? len : 0;
    memcpy(o->rhash, o->data, PC_HASH_LEN);
    return found;
}

void pc_mm_on_out(pc_msgmgr *mm, pc_msg *m)
{
    mm_vt *v = pc_mm_vt_of(mm, m->h.vt);
    mm_out o;
    if (!v || v->ended || !s_read_out(m, &o))
        return;
    if (mm->o.direct && o.kind == RT_OUT_MSG && !m->h.seq) {
        s_probe(mm, v, &o);
        return;
    }
    if (o.kind == RT_OUT_CONSUMED) {
        if (o.ref > v->consumed && o.ref < v->next_d)
            v->consumed = o.ref;
        s_unblock(mm, m->h.vt);
        return;
    }
    uint64_t seq = m->h.seq;
    if (seq <= v->accepted) {
        mm->dups++;
        if (!v->wait_on)
            s_send_ack(mm, v); /* a re-sent output: the ack may have been lost */
        return;
    }
    if (seq != v->accepted + 1) {
        /* an output was lost on the way: the host sends its outbox again
         * (asked once per gap; the tick asks again if that is lost too) */
        if (v->gap_asked != v->accepted + 1) {
            pc_log(PC_LOG_INFO, "VC %016llx VT %llu: output %llu after %llu: asking again",
                   (unsigned long long)mm->o.vc, (unsigned long long)m->h.vt,
                   (unsigned long long)seq, (unsigned long long)v->accepted);
            v->gap_asked = v->accepted + 1;
            s_ack(mm, v, true);
        }
        return;
    }
    if (o.kind == RT_OUT_READ && o.ref && !s_read_value(mm, &o)) {
        /* answered at its worker from a revision no longer here: the
         * executor's outbox, which holds the value, is asked for again */
        mm->reads_again++;
        if (v->gap_asked != v->accepted + 1) {
            v->gap_asked = v->accepted + 1;
            s_ack(mm, v, true);
        }
        return;
    }
    v->accepted = seq;
    v->gap_asked = 0;
    s_take(mm, v, &o, seq, m->from);
    if (!v->wait_on)
        s_send_ack(mm, v);
}

int pc_mm_on_resync(pc_msgmgr *mm, pc_msg *m)
{
    mm_vt *v = pc_mm_vt_of(mm, m->h.vt);
    if (!v || v->ended)
        return 0;
    uint64_t from = m->h.seq ? m->h.seq : 1;
    if (from < v->first) {
        pc_log(PC_LOG_ERROR,
               "VC %016llx VT %llu resumed at input %llu, but the log starts at %llu: "
               "its inputs cannot be replayed",
               (unsigned long long)mm->o.vc, (unsigned long long)m->h.vt, (unsigned long long)from,
               (unsigned long long)v->first);
        return LEV_EFAILED;
    }
    v->synced = true;
    pc_mm_reads_from(mm, v, m->from, m->h.epoch);
    for (size_t i = 0; i < v->nlog; i++)
        if (v->log[i].d >= from)
            s_send_in(mm, v, &v->log[i]);
    for (size_t i = 0; i < v->nrelay; i++) /* its executor drops what it has */
        pc_mm_send_relay(mm, v, &v->relay[i]);
    if (!v->wait_on)
        s_send_ack(mm, v);
    return 0;
}

/* ===================================================================
 * Determinants
 * =================================================================== */

/* One determinant from v's executor, checked against the log: position
 * pos holds message seq of the channel from `from`. */
static void s_det(pc_msgmgr *mm, mm_vt *v, const pc_cx_det *d)
{
    mm->dets++;
    if (mm->o.direct) { /* positions are the executors': nothing here to check them by */
        if (d->pos == v->det_wm + 1)
            v->det_wm = d->pos;
        return;
    }
    if (d->pos < v->first || d->pos - v->first >= v->nlog) {
        if (d->pos >= v->next_d)
            goto bad; /* a position not given yet */
        return;       /* trimmed: an image stands past it */
    }
    const mm_in *e = &v->log[d->pos - v->first];
    if (e->cfrom != d->from || e->cseq != d->seq)
        goto bad;
    if (d->pos == v->det_wm + 1)
        v->det_wm = d->pos;
    return;
bad:
    mm->det_bad++;
    pc_log(PC_LOG_ERROR,
           "VC %016llx VT %llu: its executor put message %llu from %llu at input %llu, which "
           "the deployer's log does not hold there",
           (unsigned long long)mm->o.vc, (unsigned long long)d->vt, (unsigned long long)d->seq,
           (unsigned long long)d->from, (unsigned long long)d->pos);
}

/* Tells v's host how far its determinants are stable, when that moved;
 * with direct messages, every worker that runs a VT of the VC, as their
 * executors carry v's determinants on their messages until then. */
/* Where the VT at index i of mm->vts runs while it lives, or NULL. */
static const char *s_live_host(pc_msgmgr *mm, size_t i)
{
    uint32_t e = 0;
    return mm->vts[i].used && !mm->vts[i].ended ? pc_resolver_get(mm->o.where, (uint64_t)i + 2, &e)
                                                : NULL;
}

static void s_stable(pc_msgmgr *mm, mm_vt *v)
{
    uint32_t epoch = 0;
    const char *host = pc_resolver_get(mm->o.where, pc_mm_id(mm, v), &epoch);
    if (v->det_wm <= v->det_sent || !host || !v->synced)
        return;
    v->det_sent = v->det_wm;
    pc_hdr h = pc_hdr_make(PC_W_STABLE, mm->o.vc, pc_mm_id(mm, v), epoch, v->det_wm);
    pc_peer_send(mm->o.p, host, h, NULL, NULL);
    for (size_t i = 0; mm->o.direct && i < mm->nvts; i++) {
        const char *other = s_live_host(mm, i);
        bool told = !other || !strcmp(other, host);
        for (size_t k = 0; k < i && !told; k++) { /* once per worker */
            const char *o2 = s_live_host(mm, k);
            told = o2 && !strcmp(o2, other);
        }
        if (!told)
            pc_peer_send(mm->o.p, other, h, NULL, NULL);
    }
}

void pc_mm_on_dets(pc_msgmgr *mm, const char *from, const pc_cx_det *d, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t epoch = 0;
        mm_vt *v = pc_mm_vt_of(mm, d[i].vt);
        const char *host = v ? pc_resolver_get(mm->o.where, d[i].vt, &epoch) : NULL;
        if (!v || v->ended || !host || strcmp(host, from) || d[i].epoch != epoch)
            continue; /* an older incarnation's, or of a VT gone */
        s_det(mm, v, &d[i]);
        if (i + 1 == n || d[i + 1].vt != d[i].vt)
            s_stable(mm, v); /* at once: the executor holds them until then */
    }
}

void pc_mm_tick(pc_msgmgr *mm)
{
    for (size_t i = 0; i < mm->nvts; i++) {
        mm_vt *v = &mm->vts[i];
        if (!v->used || v->ended || !v->synced)
            continue;
        /* (with direct messages, consumption is counted in positions the
         * deployer does not give: the newest input goes again each tick) */
        if ((mm->o.direct || v->consumed == v->tick_consumed) && v->nlog &&
            (mm->o.direct || v->log[v->nlog - 1].d > v->consumed))
            s_send_in(mm, v, &v->log[v->nlog - 1]);
        v->tick_consumed = v->consumed;
        if (!v->wait_on)
            s_ack(mm, v, v->gap_asked != 0);
        s_stable(mm, v);
    }
}

/* ===================================================================
 * Incarnations
 * =================================================================== */

/* A lock the lost incarnation held stays with the VT through its
 * recovery. Its grant stays in the log and its request stays answered:
 * the new incarnation either resumes from an image taken before the
 * grant reached it (it takes the same grant again, from the log), or
 * from one taken after it unlocked (its outbox sends the unlock again,
 * which nothing else has been given in between), or restarts from its
 * beginning and replays both. Taking the lock back instead cannot be
 * exact: the deployer does not know which of these the new incarnation
 * stands at, and re-granting a request that it had completed, or
 * voiding a grant whose unlock it sends again, hangs the VC or loses an
 * update (the simulator's seeds in tests/pc/test_vcsim.c, t_found).
 * Other VTs wait for the lock meanwhile; a VT that fails for good
 * releases it (pc_mm_vt_ended_with). */
void pc_mm_vt_lost(pc_msgmgr *mm, uint64_t id)
{
    mm_vt *v = pc_mm_vt_of(mm, id);
    if (v)
        v->synced = false;
}

static void s_log_free(mm_vt *v)
{
    free(v->gw); /* its commits' waits go with it */
    v->gw = NULL;
    v->ngw = v->capgw = 0;
    for (size_t i = 0; i < v->nlog; i++)
        free(v->log[i].data);
    free(v->log);
    v->log = NULL;
    v->nlog = v->caplog = 0;
    free(v->chans);
    v->chans = NULL;
    v->nchans = v->capchans = 0;
    for (size_t i = 0; i < v->nrelay; i++)
        free(v->relay[i].data);
    free(v->relay);
    v->relay = NULL;
    v->nrelay = v->caprelay = 0;
    free(v->bounced);
    v->bounced = NULL;
    v->nbounced = v->capbounced = 0;
}

void pc_mm_vt_ended(pc_msgmgr *mm, uint64_t id) { pc_mm_vt_ended_with(mm, id, 0); }

void pc_mm_vt_ended_with(pc_msgmgr *mm, uint64_t id, int err)
{
    mm_vt *v = pc_mm_vt_of(mm, id);
    if (!v || v->ended)
        return;
    /* What it sent under a lock counts if it ended well; if it failed, no
     * more than what a lost incarnation sent under one. */
    if (err)
        s_held_free(v);
    else
        s_release_held(mm, v);
    s_unlock(mm, v);
    v->ended = true;
    s_log_free(v);
    /* its waiting lock requests go (its puts stay: they were outputs it
     * made, taken like its reports) */
    for (mm_glob *g = mm->globs; g; g = g->next) {
        mm_waiter **pp = &g->wq, *last = NULL;
        while (*pp) {
            mm_waiter *w = *pp;
            if (w->vt == id && !w->version) {
                *pp = w->next;
                free(w->val);
                free(w);
            } else {
                last = w;
                pp = &w->next;
            }
        }
        g->wtail = last ? &last->next : &g->wq;
    }
    /* every other live VT is told, after all that it sent: the news
     * names the number of its last message on their channel (ref), which
     * the receiver's engine waits for when messages go direct */
    int32_t why = err ? LEV_EFAILED : LEV_ENOVT;
    for (size_t i = 0; i < mm->nvts; i++) {
        mm_vt *t = &mm->vts[i];
        uint64_t last = 0;
        for (size_t k = 0; k < t->nchans; k++)
            if (t->chans[k].vt == id)
                last = t->chans[k].seq;
        if (t->used && !t->ended && s_append(mm, t, RT_IN_ENDED, id, last, why, NULL, 0, false))
            pc_log(PC_LOG_ERROR, "deployer out of memory: VT %llu is not told that VT %llu ended",
                   (unsigned long long)pc_mm_id(mm, t), (unsigned long long)id);
    }
    s_unblock(mm, id);
}

bool pc_mm_replayable(const pc_msgmgr *mm, uint64_t id)
{
    const mm_vt *v = pc_mm_vt_of((pc_msgmgr *)mm, id);
    return !v || v->first <= 1;
}

void pc_mm_trim(pc_msgmgr *mm, uint64_t id, uint64_t floor)
{
    mm_vt *v = pc_mm_vt_of(mm, id);
    /* with direct messages, floor (a position) says nothing of the
     * deployer's channel: its log is kept whole (DIRECT_MESSAGES.md) */
    if (!v || !v->nlog || floor <= v->first || mm->o.direct)
        return;
    size_t k = 0;
    while (k < v->nlog && v->log[k].d < floor)
        free(v->log[k++].data);
    memmove(v->log, v->log + k, (v->nlog - k) * sizeof *v->log);
    v->nlog -= k;
    v->first = v->nlog ? v->log[0].d : v->next_d;
}

int pc_mm_vt_add(pc_msgmgr *mm, uint64_t id)
{
    if (id < 2)
        return LEV_EINVAL;
    size_t need = (size_t)(id - 2) + 1;
    if (need > mm->capvts) {
        size_t old = mm->capvts;
        if (RT_VEC_RESERVE(mm->vts, mm->capvts, mm->nvts, need - mm->nvts))
            return LEV_ENOMEM;
        memset(mm->vts + old, 0, (mm->capvts - old) * sizeof *mm->vts);
        for (size_t i = 0; i < mm->nvts; i++)
            mm->vts[i].held_tail = mm->vts[i].held ? mm->vts[i].held_tail : &mm->vts[i].held;
    }
    if (need > mm->nvts)
        mm->nvts = need;
    mm_vt *v = &mm->vts[id - 2];
    memset(v, 0, sizeof *v);
    v->used = true;
    v->next_d = v->first = 1;
    v->held_tail = &v->held;
    return 0;
}

/* ===================================================================
 * The client
 * =================================================================== */

void pc_mm_client(pc_msgmgr *mm, pc_msg *m)
{
    pc_rbuf r;
    pc_rbuf_init(&r, pc_buf_data(m->body), pc_buf_len(m->body));
    char name[LEV_NAME_MAX + 2] = "";
    const void *data = NULL;
    size_t len = 0;
    char why[160];
    if (m->h.type == PC_C_SEND) {
        pc_get_blob(&r, &data, &len);
        if (!pc_rbuf_done(&r)) {
            s_client_reply(mm, 0, m->h.seq, LEV_EINVAL, pc_rbuf_why(&r));
            return;
        }
        if (len > mm->o.max_msg) {
            snprintf(why, sizeof why,
                     "message of %zu bytes is above the virtual computer's limit of %zu bytes", len,
                     mm->o.max_msg);
            s_client_reply(mm, 0, m->h.seq, LEV_ERANGE, why);
            return;
        }
        mm_vt *t = pc_mm_vt_of(mm, m->h.vt);
        int rc = !t || t->ended ? LEV_ENOVT : s_deliver(mm, 1, m->h.vt, data, len);
        s_client_reply(mm, PC_C_SENT, m->h.seq, rc,
                       rc == LEV_ENOVT ? "no such virtual thread in the virtual computer, or it "
                                         "has ended"
                                       : "deployer out of memory");
        return;
    }
    pc_get_str(&r, name, sizeof name);
    if (m->h.type == PC_C_GSET)
        pc_get_blob(&r, &data, &len);
    if (!pc_rbuf_done(&r) || !*name || strlen(name) > LEV_NAME_MAX) {
        s_client_reply(mm, 0, m->h.seq, LEV_EINVAL,
                       !pc_rbuf_done(&r) ? pc_rbuf_why(&r)
                                         : "a global variable's name is 1 to 255 bytes");
        return;
    }
    if (m->h.type == PC_C_GGET) {
        mm_glob *g = s_glob(mm, name, false);
        pc_wbuf b;
        pc_wbuf_init(&b);
        pc_put_u8(&b, g && g->set);
        pc_put_blob(&b, g ? g->val : NULL, g ? g->len : 0);
        pc_peer_send(mm->o.p, mm->o.client, pc_hdr_make(PC_C_GVALUE, mm->o.vc, 0, 0, m->h.seq), &b,
                     NULL);
        pc_wbuf_free(&b);
        return;
    }
    if (len > mm->o.max_value) {
        snprintf(why, sizeof why,
                 "value of %zu bytes is above the virtual computer's limit of %zu bytes", len,
                 mm->o.max_value);
        s_client_reply(mm, 0, m->h.seq, LEV_ERANGE, why);
        return;
    }
    mm_glob *g = s_glob(mm, name, true);
    if (!g || s_enqueue(g, 0, m->h.seq, 0, data, len)) {
        s_client_reply(mm, 0, m->h.seq, LEV_ENOMEM, "deployer out of memory");
        return;
    }
    s_grant_next(mm, g);
}

/* ===================================================================
 * Life and status
 * =================================================================== */

int pc_mm_new(pc_msgmgr **out, const pc_mm_opts *o)
{
    pc_msgmgr *mm = calloc(1, sizeof *mm);
    if (!mm)
        return LEV_ENOMEM;
    mm->o = *o;
    if (!mm->o.max_msg)
        mm->o.max_msg = RT_CH_MAX_MSG;
    if (!mm->o.max_value)
        mm->o.max_value = RT_CH_MAX_VALUE;
    if (!mm->o.backlog)
        mm->o.backlog = MM_BACKLOG;
    if (!mm->o.ref_min)
        mm->o.ref_min = MM_REF_MIN;
    *out = mm;
    return 0;
}

void pc_mm_destroy(pc_msgmgr **mm_p)
{
    pc_msgmgr *mm = mm_p ? *mm_p : NULL;
    if (!mm)
        return;
    for (size_t i = 0; i < mm->nvts; i++) {
        s_log_free(&mm->vts[i]);
        s_held_free(&mm->vts[i]);
        free(mm->vts[i].had); /* kept past its end, for senders that resume */
    }
    free(mm->vts);
    free(mm->due);
    while (mm->globs) {
        mm_glob *g = mm->globs;
        mm->globs = g->next;
        while (g->wq) {
            mm_waiter *w = g->wq;
            g->wq = w->next;
            free(w->val);
            free(w);
        }
        free(g->name);
        free(g->val);
        pc_mm_glob_free_reads(g);
        free(g);
    }
    free(mm);
    *mm_p = NULL;
}

void pc_mm_vt_status(pc_msgmgr *mm, uint64_t id, pc_wbuf *j)
{
    mm_vt *v = pc_mm_vt_of(mm, id);
    if (!v)
        return;
    pc_json_fmt(j,
                ",\"inputs\":%llu,\"consumed\":%llu,\"logged\":%zu,\"outputs\":%llu,"
                "\"reports\":%llu,\"lock\":",
                (unsigned long long)(v->next_d - 1), (unsigned long long)v->consumed, v->nlog,
                (unsigned long long)v->accepted, (unsigned long long)v->reports);
    if (v->lock)
        pc_json_str(j, v->lock->name);
    else
        pc_json_fmt(j, "null");
}

uint64_t pc_mm_delivered(const pc_msgmgr *mm) { return mm->delivered; }

size_t pc_mm_max_msg(const pc_msgmgr *mm) { return mm->o.max_msg; }

void pc_mm_status(pc_msgmgr *mm, pc_wbuf *j)
{
    pc_json_fmt(j,
                ",\"messages\":{\"delivered\":%llu,\"duplicates\":%llu,\"held_back\":%llu},"
                "\"global_copies\":{\"by_reference\":%llu,\"bytes_saved\":%llu,\"misses\":%llu},"
                "\"determinants\":{\"checked\":%llu,\"contradicting\":%llu},"
                "\"puts\":{\"applied\":%llu,\"stale\":%llu},"
                "\"global_reads\":{\"answered_at_workers\":%llu,\"asked_again\":%llu,"
                "\"pushes\":%llu,\"push_bytes\":%llu,\"subscribed\":%llu,"
                "\"unsubscribed\":%llu},\"globals\":[",
                (unsigned long long)mm->delivered, (unsigned long long)mm->dups,
                (unsigned long long)mm->held_back, (unsigned long long)mm->by_ref,
                (unsigned long long)mm->ref_bytes, (unsigned long long)mm->misses,
                (unsigned long long)mm->dets, (unsigned long long)mm->det_bad,
                (unsigned long long)mm->puts, (unsigned long long)mm->puts_stale,
                (unsigned long long)mm->reads_near, (unsigned long long)mm->reads_again,
                (unsigned long long)mm->pushes, (unsigned long long)mm->push_bytes,
                (unsigned long long)mm->subscribed, (unsigned long long)mm->unsubscribed);
    bool first = true;
    for (mm_glob *g = mm->globs; g; g = g->next) {
        int waiters = 0;
        for (mm_waiter *w = g->wq; w; w = w->next)
            waiters++;
        pc_json_fmt(j, "%s{\"name\":", first ? "" : ",");
        pc_json_str(j, g->name);
        pc_json_fmt(j,
                    ",\"bytes\":%zu,\"version\":%llu,\"revision\":%llu,\"owner\":%llu,"
                    "\"waiters\":%d,\"subscribers\":%zu}",
                    g->len, (unsigned long long)g->version, (unsigned long long)g->rev,
                    (unsigned long long)g->owner, waiters, g->nsubs);
        first = false;
    }
    pc_json_fmt(j, "]");
}
