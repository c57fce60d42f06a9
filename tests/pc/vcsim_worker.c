/* vcsim_worker.c - the model worker of a simulated peer: it answers the
 * deployer's enrolment, runs model VTs as the real worker and executor
 * run real ones (W_RUN, W_RESUME, W_IN, W_ACK, W_FENCE, W_HOLDERS,
 * W_CLOSE in; W_ENROLLED, W_MODULE_OK, W_OUT, W_RESYNC, W_DONE and H_HOLD
 * out), with the runtime's channel rules (runtime/vtchan.h): inputs taken
 * in stream order, outputs numbered and kept until acknowledged, no
 * capture while a lock or a grant is held.
 *
 * A model VT is one of a ring of V VTs (ids 2 .. V+1), each running R
 * rounds of: compute, send a value to the next VT, receive the previous
 * VT's value and fold it into its accumulator, lock the global "ctr" and
 * add one, report the round. Its result is the accumulator, which only
 * the order of its inputs decides: vs_ref_result computes it without any
 * network, and any loss, duplication or reordering of a message changes
 * it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envelope.h"
#include "lev_errors.h"
#include "modmgr.h"
#include "vcsim_int.h"
#include "vtchan.h"

#define MW_TICK_MS 10
#define MW_STALE_MS 2000 /* an unacknowledged outbox is sent again after */
#define MW_HOLDERS 8
#define MW_IMG_MAGIC 0x4D495356u /* "VSIM" */
#define RT_IN_ENDED_KIND 8       /* "from ended" (err says how), when the deployer sends it */

enum { PH_COMPUTE, PH_SEND, PH_RECV, PH_LOCK, PH_UNLOCK, PH_REPORT, PH_END };

typedef struct mw_in {
    uint64_t d, from, ref;
    int32_t err;
    uint8_t kind, novalue;
    uint64_t val; /* the first 8 bytes of the data */
    bool taken;
} mw_in;

typedef struct mw_out {
    uint64_t seq, to, ref, val;
    uint8_t kind, has_val;
} mw_out;

/* The state an image carries. */
typedef struct mw_state {
    uint32_t round, phase;
    uint64_t acc, work_left_us, out_seq, lock_req, lock_val, next_in, recv_no;
    mw_in *in;
    uint32_t nin;
    mw_out *out;
    uint32_t nout;
} mw_state;

typedef struct mw_vt {
    uint64_t vc, id;
    uint32_t epoch;
    char holders[MW_HOLDERS][PC_ENDPOINT_MAX];
    int nh;
    mw_state s;
    uint64_t last_ckpt, ckpt_seq, oldest_seen, oldest_since, resync_asked;
    int32_t end_err;
    char end_detail[128];
    bool ended;
    bool heard; /* an input or acknowledgement reached it */
} mw_vt;

typedef struct mw_vc {
    uint64_t vc;
    char deployer[PC_ENDPOINT_MAX];
    uint64_t orphan_ms; /* when its deployer was declared dead (0: it is not) */
    int ckpt_ms;
    mw_vt **vts;
    int nvts;
} mw_vc;

struct vs_mworker {
    vs_node *n;
    mw_vc *vcs;
    int nvcs;
};

/* ===================================================================
 * The program
 * =================================================================== */

static uint64_t s_mix(uint64_t a, uint64_t b)
{
    uint64_t x = a ^ (b + 0x9E3779B97F4A7C15ull + (a << 6) + (a >> 2));
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return x;
}

static int s_vts(const vs_opts *o) { return o->vts ? o->vts : 6; }
static int s_rounds(const vs_opts *o) { return o->rounds ? o->rounds : 12; }

static uint64_t s_next(const vs_opts *o, uint64_t id)
{
    return id + 1 < (uint64_t)s_vts(o) + 2 ? id + 1 : 2;
}

static uint64_t s_prev(const vs_opts *o, uint64_t id)
{
    return id > 2 ? id - 1 : (uint64_t)s_vts(o) + 1;
}

/* The value VT `id` sends in round r with accumulator acc. */
static uint64_t s_value(uint64_t id, uint32_t r, uint64_t acc) { return s_mix(acc, id * 1000 + r); }

uint64_t vs_ref_result(const vs_opts *o, uint64_t id)
{
    int v = s_vts(o), rounds = s_rounds(o);
    uint64_t acc[256];
    if (v > 256)
        return 0;
    for (int i = 0; i < v; i++)
        acc[i] = (uint64_t)i + 2;
    for (int r = 0; r < rounds; r++) {
        uint64_t sent[256];
        for (int i = 0; i < v; i++)
            sent[i] = s_value((uint64_t)i + 2, (uint32_t)r, acc[i]);
        for (int i = 0; i < v; i++)
            acc[i] = s_mix(acc[i], sent[(i + v - 1) % v]);
    }
    return acc[id - 2];
}

/* ===================================================================
 * Helpers
 * =================================================================== */

static mw_vc *s_vc(vs_mworker *mw, uint64_t vc)
{
    for (int i = 0; i < mw->nvcs; i++)
        if (mw->vcs[i].vc == vc)
            return &mw->vcs[i];
    return NULL;
}

static mw_vt *s_vt(mw_vc *v, uint64_t id)
{
    for (int i = 0; i < v->nvts; i++)
        if (v->vts[i]->id == id)
            return v->vts[i];
    return NULL;
}

static void s_vt_free(mw_vt *t)
{
    free(t->s.in);
    free(t->s.out);
    free(t);
}

static void s_vt_forget(mw_vc *v, uint64_t id)
{
    for (int i = 0; i < v->nvts; i++)
        if (v->vts[i]->id == id) {
            s_vt_free(v->vts[i]);
            v->vts[i] = v->vts[--v->nvts];
            return;
        }
}

static void s_vc_drop(vs_mworker *mw, mw_vc *v)
{
    for (int i = 0; i < v->nvts; i++)
        s_vt_free(v->vts[i]);
    free(v->vts);
    *v = mw->vcs[--mw->nvcs];
}

static void s_send(vs_mworker *mw, const char *to, uint16_t type, mw_vt *t, uint64_t seq,
                   const pc_wbuf *b)
{
    vs_net_send(mw->n, to, pc_hdr_make(type, t->vc, t->id, t->epoch, seq), b ? b->data : NULL,
                b ? b->len : 0, NULL);
}

static const char *s_deployer(vs_mworker *mw, const mw_vt *t)
{
    mw_vc *v = s_vc(mw, t->vc);
    return v ? v->deployer : "";
}

static bool s_read_holders(pc_rbuf *r, mw_vt *t)
{
    uint32_t n = pc_get_u32(r);
    if (n > 64)
        return false;
    t->nh = 0;
    for (uint32_t i = 0; i < n && !r->bad; i++) {
        char ep[PC_ENDPOINT_MAX];
        if (pc_get_str(r, ep, sizeof ep) && t->nh < MW_HOLDERS)
            snprintf(t->holders[t->nh++], PC_ENDPOINT_MAX, "%s", ep);
    }
    return !r->bad;
}

/* ===================================================================
 * Outputs
 * =================================================================== */

static void s_out_send(vs_mworker *mw, mw_vt *t, const mw_out *o)
{
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_u8(&b, o->kind);
    pc_put_u64(&b, o->to);
    pc_put_u64(&b, o->ref);
    pc_put_u8(&b, 0);
    pc_put_str(&b, o->kind == RT_OUT_LOCK || o->kind == RT_OUT_UNLOCK ? "ctr" : "");
    uint8_t val[8];
    for (int i = 0; i < 8; i++)
        val[i] = (uint8_t)(o->val >> (8 * i));
    pc_put_blob(&b, o->has_val ? val : NULL, o->has_val ? 8 : 0);
    s_send(mw, s_deployer(mw, t), PC_W_OUT, t, o->seq, &b);
    pc_wbuf_free(&b);
}

/* A numbered output: kept until acknowledged, sent now. */
static uint64_t s_output(vs_mworker *mw, mw_vt *t, uint8_t kind, uint64_t to, uint64_t val,
                         bool has_val)
{
    mw_out *n = realloc(t->s.out, (t->s.nout + 1) * sizeof *n);
    if (!n)
        abort();
    t->s.out = n;
    mw_out *o = &n[t->s.nout++];
    *o = (mw_out){.seq = ++t->s.out_seq, .to = to, .val = val, .kind = kind, .has_val = has_val};
    s_out_send(mw, t, o);
    return o->seq;
}

static void s_resend(vs_mworker *mw, mw_vt *t)
{
    for (uint32_t i = 0; i < t->s.nout; i++)
        s_out_send(mw, t, &t->s.out[i]);
}

/* Tells the deployer how far the VT consumed its inputs (not numbered). */
static void s_consumed(vs_mworker *mw, mw_vt *t)
{
    uint64_t upto = t->s.next_in - 1;
    for (uint32_t i = 0; i < t->s.nin; i++)
        if (!t->s.in[i].taken && t->s.in[i].d <= upto)
            upto = t->s.in[i].d - 1;
    mw_out o = {.kind = RT_OUT_CONSUMED, .ref = upto};
    s_out_send(mw, t, &o);
}

/* Drops the taken inputs at the front of the stream. */
static void s_compact(mw_vt *t)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < t->s.nin; i++)
        if (!t->s.in[i].taken)
            t->s.in[k++] = t->s.in[i];
    t->s.nin = k;
}

/* ===================================================================
 * Running a VT
 * =================================================================== */

static void s_end(vs_mworker *mw, mw_vt *t, int32_t err, const char *detail)
{
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_i32(&b, err);
    pc_put_str(&b, detail);
    uint8_t res[8];
    for (int i = 0; i < 8; i++)
        res[i] = (uint8_t)(t->s.acc >> (8 * i));
    pc_put_blob(&b, err ? NULL : res, err ? 0 : 8);
    s_send(mw, s_deployer(mw, t), PC_W_DONE, t, 0, &b);
    pc_wbuf_free(&b);
    t->ended = true;
    t->end_err = err;
    if (detail != t->end_detail)
        snprintf(t->end_detail, sizeof t->end_detail, "%s", detail);
    vs_trace(mw->n->w, "%s: VT %llu epoch %u ended (%d)", mw->n->ep, (unsigned long long)t->id,
             t->epoch, err);
}

/* Runs the VT's steps that need no time, up to a block or its end. */
static void s_step(vs_mworker *mw, mw_vt *t, const vs_opts *o)
{
    for (int guard = 0; guard < 64 && !t->ended; guard++) {
        mw_state *s = &t->s;
        switch (s->phase) {
        case PH_COMPUTE:
            if (s->work_left_us)
                return;
            s->phase = PH_SEND;
            break;
        case PH_SEND:
            s_output(mw, t, RT_OUT_MSG, s_next(o, t->id), s_value(t->id, s->round, s->acc), true);
            s->recv_no++;
            s->phase = PH_RECV;
            break;
        case PH_RECV: {
            uint64_t from = s_prev(o, t->id);
            mw_in *hit = NULL;
            for (uint32_t i = 0; i < s->nin && !hit; i++) {
                mw_in *in = &s->in[i];
                if (in->taken)
                    continue;
                if (in->from == from && (in->kind == RT_IN_MSG || in->kind == RT_IN_BOUNCE ||
                                         in->kind == RT_IN_ENDED_KIND))
                    hit = in;
            }
            if (!hit)
                return;
            hit->taken = true;
            mw_in got = *hit; /* the stream is compacted below */
            hit = &got;
            s_consumed(mw, t);
            if (hit->kind != RT_IN_MSG) {
                char why[96];
                snprintf(why, sizeof why, "receive from VT %llu: %s", (unsigned long long)from,
                         lev_strerror(hit->err ? hit->err : LEV_EFAILED));
                s_compact(t);
                s_end(mw, t, hit->err ? hit->err : LEV_EFAILED, why);
                return;
            }
            s->acc = s_mix(s->acc, hit->val);
            s_compact(t);
            s->phase = PH_LOCK;
            break;
        }
        case PH_LOCK:
            if (!s->lock_req) {
                s->lock_req = s_output(mw, t, RT_OUT_LOCK, 0, 0, false);
                return;
            }
            for (uint32_t i = 0; i < s->nin; i++) {
                mw_in *in = &s->in[i];
                if (in->taken)
                    continue;
                if (in->kind == RT_IN_VOID) {
                    in->taken = true;
                    continue;
                }
                if ((in->kind == RT_IN_GRANT || in->kind == RT_IN_ERROR) &&
                    in->ref == s->lock_req) {
                    mw_in got = *in; /* the stream is compacted below */
                    in->taken = true;
                    s_consumed(mw, t);
                    s_compact(t);
                    if (got.kind == RT_IN_ERROR) {
                        s_end(mw, t, got.err ? got.err : LEV_EFAILED, "lock refused");
                        return;
                    }
                    s->lock_val = got.novalue ? 0 : got.val;
                    s->phase = PH_UNLOCK;
                    break;
                }
            }
            if (s->phase == PH_LOCK)
                return;
            break;
        case PH_UNLOCK:
            s_output(mw, t, RT_OUT_UNLOCK, 0, s->lock_val + 1, true);
            s->lock_req = 0;
            s->phase = PH_REPORT;
            break;
        case PH_REPORT:
            s_output(mw, t, RT_OUT_REPORT, 0, t->id << 32 | s->round, true);
            if (++s->round >= (uint32_t)s_rounds(o)) {
                s->phase = PH_END;
            } else {
                s->phase = PH_COMPUTE;
                s->work_left_us = (uint64_t)(o->compute_ms ? o->compute_ms : 300) * 1000;
            }
            break;
        case PH_END:
            s_end(mw, t, 0, "");
            return;
        default:
            return;
        }
    }
}

/* Whether the VT may be captured now: it holds no lock and no grant
 * waits in its stream. */
static bool s_capture_ok(const mw_vt *t)
{
    if (t->s.phase == PH_UNLOCK)
        return false;
    for (uint32_t i = 0; i < t->s.nin; i++)
        if (!t->s.in[i].taken && t->s.in[i].kind == RT_IN_GRANT)
            return false;
    return true;
}

/* ===================================================================
 * Images
 * =================================================================== */

static void s_put_state(pc_wbuf *b, const mw_vt *t)
{
    const mw_state *s = &t->s;
    pc_put_u32(b, MW_IMG_MAGIC);
    pc_put_u64(b, t->id);
    pc_put_u32(b, t->epoch);
    pc_put_u32(b, s->round);
    pc_put_u32(b, s->phase);
    pc_put_u64(b, s->acc);
    pc_put_u64(b, s->work_left_us);
    pc_put_u64(b, s->out_seq);
    pc_put_u64(b, s->lock_req);
    pc_put_u64(b, s->lock_val);
    pc_put_u64(b, s->next_in);
    pc_put_u64(b, s->recv_no);
    pc_put_u32(b, s->nin);
    for (uint32_t i = 0; i < s->nin; i++) {
        const mw_in *in = &s->in[i];
        pc_put_u64(b, in->d);
        pc_put_u64(b, in->from);
        pc_put_u64(b, in->ref);
        pc_put_i32(b, in->err);
        pc_put_u8(b, in->kind);
        pc_put_u8(b, in->novalue);
        pc_put_u64(b, in->val);
        pc_put_u8(b, in->taken);
    }
    pc_put_u32(b, s->nout);
    for (uint32_t i = 0; i < s->nout; i++) {
        const mw_out *o = &s->out[i];
        pc_put_u64(b, o->seq);
        pc_put_u64(b, o->to);
        pc_put_u64(b, o->ref);
        pc_put_u64(b, o->val);
        pc_put_u8(b, o->kind);
        pc_put_u8(b, o->has_val);
    }
}

static bool s_get_state(pc_rbuf *r, mw_state *s, uint64_t *id, uint32_t *epoch)
{
    memset(s, 0, sizeof *s);
    if (pc_get_u32(r) != MW_IMG_MAGIC)
        return false;
    *id = pc_get_u64(r);
    *epoch = pc_get_u32(r);
    s->round = pc_get_u32(r);
    s->phase = pc_get_u32(r);
    s->acc = pc_get_u64(r);
    s->work_left_us = pc_get_u64(r);
    s->out_seq = pc_get_u64(r);
    s->lock_req = pc_get_u64(r);
    s->lock_val = pc_get_u64(r);
    s->next_in = pc_get_u64(r);
    s->recv_no = pc_get_u64(r);
    s->nin = pc_get_u32(r);
    if (r->bad || s->nin > 100000)
        return false;
    s->in = calloc(s->nin ? s->nin : 1, sizeof *s->in);
    for (uint32_t i = 0; i < s->nin && s->in; i++) {
        mw_in *in = &s->in[i];
        in->d = pc_get_u64(r);
        in->from = pc_get_u64(r);
        in->ref = pc_get_u64(r);
        in->err = pc_get_i32(r);
        in->kind = pc_get_u8(r);
        in->novalue = pc_get_u8(r);
        in->val = pc_get_u64(r);
        in->taken = pc_get_u8(r);
    }
    s->nout = pc_get_u32(r);
    if (r->bad || s->nout > 100000)
        return false;
    s->out = calloc(s->nout ? s->nout : 1, sizeof *s->out);
    for (uint32_t i = 0; i < s->nout && s->out; i++) {
        mw_out *o = &s->out[i];
        o->seq = pc_get_u64(r);
        o->to = pc_get_u64(r);
        o->ref = pc_get_u64(r);
        o->val = pc_get_u64(r);
        o->kind = pc_get_u8(r);
        o->has_val = pc_get_u8(r);
    }
    return s->in && s->out && pc_rbuf_done(r);
}

int vs_image_id(const uint8_t *img, size_t len, uint64_t *vt, uint32_t *epoch)
{
    pc_rbuf r;
    pc_rbuf_init(&r, img, len);
    mw_state s;
    bool ok = s_get_state(&r, &s, vt, epoch);
    free(s.in);
    free(s.out);
    return ok ? 0 : LEV_EIMAGE;
}

/* A checkpoint: the VT's image in an envelope, to each of its holders. */
static void s_checkpoint(vs_mworker *mw, mw_vt *t, uint64_t now)
{
    t->last_ckpt = now;
    if (!t->nh || !s_capture_ok(t))
        return;
    pc_wbuf img;
    pc_wbuf_init(&img);
    s_put_state(&img, t);
    size_t elen = 0;
    uint8_t *env = pc_env_make(NULL, 0, img.data, img.len, &elen);
    pc_wbuf_free(&img);
    if (!env)
        abort();
    t->ckpt_seq++;
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_str(&b, s_deployer(mw, t));
    pc_put_u64(&b, t->s.next_in);
    vs_report *rep = vs_world_report(mw->n->w);
    for (int i = 0; i < t->nh; i++) {
        zmq_msg_t m;
        zmq_msg_init_size(&m, elen);
        memcpy(zmq_msg_data(&m), env, elen);
        vs_net_send(mw->n, t->holders[i],
                    pc_hdr_make(PC_H_HOLD, t->vc, t->id, t->epoch, t->ckpt_seq), b.data, b.len, &m);
        rep->images++;
        rep->image_bytes += elen;
    }
    pc_wbuf_free(&b);
    free(env);
}

/* ===================================================================
 * The deployer's messages
 * =================================================================== */

static void s_enrol(vs_mworker *mw, pc_msg *m)
{
    pc_rbuf r;
    pc_rbuf_init(&r, zmq_msg_data(&m->body), zmq_msg_size(&m->body));
    char deployer[PC_ENDPOINT_MAX], arch[PC_ARCH_MAX];
    const void *hash = NULL;
    pc_get_str(&r, deployer, sizeof deployer);
    pc_get_raw(&r, &hash, PC_HASH_LEN);
    pc_get_u64(&r);
    pc_get_str(&r, arch, sizeof arch);
    int32_t ckpt = pc_get_i32(&r);
    uint64_t mesh = pc_get_u64(&r);
    if (!pc_rbuf_done(&r) || !m->h.vc) {
        vs_violation(mw->n->w, "%s: malformed W_ENROL from %s", mw->n->ep, m->from);
        return;
    }
    if (mesh != pc_members_mesh_id(mw->n->p->mem)) {
        /* as worker.c: a deployer of another mesh is refused */
        pc_wbuf b;
        pc_wbuf_init(&b);
        pc_put_i32(&b, LEV_EPEER);
        pc_put_u8(&b, 0);
        pc_put_u32(&b, 0);
        vs_net_send(mw->n, deployer, pc_hdr_make(PC_W_ENROLLED, m->h.vc, 0, 0, m->h.seq), b.data,
                    b.len, NULL);
        pc_wbuf_free(&b);
        return;
    }
    if (mw->n->foreign)
        vs_violation(mw->n->w, "%s, a peer of another mesh, was enrolled by %s", mw->n->ep,
                     deployer);
    if (!s_vc(mw, m->h.vc)) {
        mw_vc *n = realloc(mw->vcs, (size_t)(mw->nvcs + 1) * sizeof *n);
        if (!n)
            abort();
        mw->vcs = n;
        mw_vc *v = &n[mw->nvcs++];
        memset(v, 0, sizeof *v);
        v->vc = m->h.vc;
        pc_ep_copy(v->deployer, deployer);
        v->ckpt_ms = ckpt > 0 ? ckpt : 2000;
    }
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_i32(&b, 0);
    pc_put_u8(&b, 1);
    pc_put_u32(&b, mw->n->cores);
    vs_net_send(mw->n, deployer, pc_hdr_make(PC_W_ENROLLED, m->h.vc, 0, 0, m->h.seq), b.data, b.len,
                NULL);
    pc_wbuf_free(&b);
    pc_wbuf_init(&b);
    pc_put_i32(&b, 0);
    pc_put_str(&b, "");
    vs_net_send(mw->n, deployer, pc_hdr_make(PC_W_MODULE_OK, m->h.vc, 0, 0, 0), b.data, b.len,
                NULL);
    pc_wbuf_free(&b);
}

/* The VT's record for a new incarnation (an older copy is replaced). */
static mw_vt *s_track(mw_vc *v, uint64_t id, uint32_t epoch)
{
    s_vt_forget(v, id);
    mw_vt **n = realloc(v->vts, (size_t)(v->nvts + 1) * sizeof *n);
    mw_vt *t = calloc(1, sizeof *t);
    if (!n || !t)
        abort();
    v->vts = n;
    n[v->nvts++] = t;
    t->vc = v->vc;
    t->id = id;
    t->epoch = epoch;
    return t;
}

static void s_run(vs_mworker *mw, mw_vc *v, pc_msg *m, const vs_opts *o)
{
    pc_rbuf r;
    pc_rbuf_init(&r, zmq_msg_data(&m->body), zmq_msg_size(&m->body));
    char task[64];
    const void *arg;
    size_t alen;
    pc_get_str(&r, task, sizeof task);
    pc_get_blob(&r, &arg, &alen);
    mw_vt tmp;
    if (!s_read_holders(&r, &tmp) || !pc_rbuf_done(&r) || m->h.vt < 2 || !m->h.epoch) {
        vs_violation(mw->n->w, "%s: malformed W_RUN from %s", mw->n->ep, m->from);
        return;
    }
    mw_vt *t = s_track(v, m->h.vt, m->h.epoch);
    memcpy(t->holders, tmp.holders, sizeof tmp.holders);
    t->nh = tmp.nh;
    t->s.acc = t->id;
    t->s.next_in = 1;
    t->s.work_left_us = (uint64_t)(o->compute_ms ? o->compute_ms : 300) * 1000;
    t->last_ckpt = vs_now(mw->n->w);
    vs_report *rep = vs_world_report(mw->n->w);
    rep->restarts += m->h.epoch > 1;
    vs_trace(mw->n->w, "%s: VT %llu epoch %u runs from its start", mw->n->ep,
             (unsigned long long)t->id, t->epoch);
    /* every incarnation asks for its inputs from where it stands */
    s_send(mw, v->deployer, PC_W_RESYNC, t, 1, NULL);
}

static void s_resume(vs_mworker *mw, mw_vc *v, pc_msg *m)
{
    pc_rbuf r;
    pc_rbuf_init(&r, zmq_msg_data(&m->body), zmq_msg_size(&m->body));
    mw_vt tmp;
    bool ok = s_read_holders(&r, &tmp);
    pc_get_u64(&r); /* next_in: the image has it */
    const uint8_t *chan, *img;
    size_t clen, ilen;
    const char *why = NULL;
    mw_state s = {0};
    uint64_t id = 0;
    uint32_t epoch = 0;
    ok = ok && pc_rbuf_done(&r) &&
         pc_env_split(zmq_msg_data(&m->bulk), zmq_msg_size(&m->bulk), &chan, &clen, &img, &ilen,
                      &why);
    if (ok) {
        pc_rbuf ri;
        pc_rbuf_init(&ri, img, ilen);
        ok = s_get_state(&ri, &s, &id, &epoch) && id == m->h.vt && epoch < m->h.epoch;
    }
    if (!ok) {
        free(s.in);
        free(s.out);
        vs_violation(mw->n->w, "%s: bad W_RESUME of VT %llu epoch %u from %s", mw->n->ep,
                     (unsigned long long)m->h.vt, m->h.epoch, m->from);
        return;
    }
    mw_vt *t = s_track(v, m->h.vt, m->h.epoch);
    memcpy(t->holders, tmp.holders, sizeof tmp.holders);
    t->nh = tmp.nh;
    t->s = s;
    t->last_ckpt = vs_now(mw->n->w);
    vs_world_report(mw->n->w)->resumes++;
    vs_trace(mw->n->w, "%s: VT %llu epoch %u resumed (round %u, from epoch %u)", mw->n->ep,
             (unsigned long long)t->id, t->epoch, t->s.round, epoch);
    s_send(mw, v->deployer, PC_W_RESYNC, t, t->s.next_in, NULL);
    s_resend(mw, t);
    /* its only image may be on this very peer (its holder became its
     * host): a new one goes to its holders at once */
    s_checkpoint(mw, t, vs_now(mw->n->w));
    s_step(mw, t, vs_world_opts(mw->n->w));
}

static void s_in(vs_mworker *mw, mw_vt *t, pc_msg *m)
{
    pc_rbuf r;
    pc_rbuf_init(&r, zmq_msg_data(&m->body), zmq_msg_size(&m->body));
    mw_in in = {.d = m->h.seq};
    in.kind = pc_get_u8(&r);
    in.novalue = pc_get_u8(&r);
    in.from = pc_get_u64(&r);
    in.ref = pc_get_u64(&r);
    in.err = pc_get_i32(&r);
    const void *data = NULL;
    size_t len = 0;
    pc_get_blob(&r, &data, &len);
    if (!pc_rbuf_done(&r)) {
        vs_violation(mw->n->w, "%s: malformed W_IN of VT %llu", mw->n->ep,
                     (unsigned long long)t->id);
        return;
    }
    for (size_t i = 0; i < len && i < 8; i++)
        in.val |= (uint64_t)((const uint8_t *)data)[i] << (8 * i);
    if (in.d < t->s.next_in)
        return; /* had it */
    if (in.d > t->s.next_in) {
        /* a gap: ask from the first missing one, once per position */
        if (t->resync_asked != t->s.next_in) {
            t->resync_asked = t->s.next_in;
            s_send(mw, s_deployer(mw, t), PC_W_RESYNC, t, t->s.next_in, NULL);
        }
        return;
    }
    mw_in *n = realloc(t->s.in, (t->s.nin + 1) * sizeof *n);
    if (!n)
        abort();
    t->s.in = n;
    n[t->s.nin++] = in;
    t->s.next_in++;
    t->resync_asked = 0;
}

static void s_ack(vs_mworker *mw, mw_vt *t, pc_msg *m)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < t->s.nout; i++)
        if (t->s.out[i].seq > m->h.seq)
            t->s.out[k++] = t->s.out[i];
    t->s.nout = k;
    if (zmq_msg_size(&m->body) == 1 && ((const uint8_t *)zmq_msg_data(&m->body))[0])
        s_resend(mw, t);
}

void vs_mw_on_msg(vs_mworker *mw, pc_msg *m)
{
    const vs_opts *o = vs_world_opts(mw->n->w);
    if (m->h.type == PC_W_ENROL) {
        s_enrol(mw, m);
        return;
    }
    mw_vc *v = s_vc(mw, m->h.vc);
    if (!v || (strcmp(v->deployer, m->from) && m->h.type != PC_W_RESUME)) {
        /* not enrolled in that VC (a restarted peer forgot it): as worker.c */
        if (!v && m->h.type != PC_W_FENCE && m->h.type != PC_W_CLOSE && m->h.type != PC_W_RESUME)
            vs_net_send(mw->n, m->from, pc_hdr_make(PC_W_UNKNOWN, m->h.vc, 0, 0, 0), NULL, 0, NULL);
        return;
    }
    mw_vt *t = m->h.vt ? s_vt(v, m->h.vt) : NULL;
    switch (m->h.type) {
    case PC_W_MODULE:
        return;
    case PC_W_RUN:
        s_run(mw, v, m, o);
        return;
    case PC_W_RESUME:
        s_resume(mw, v, m);
        return;
    case PC_W_HOLDERS: {
        pc_rbuf r;
        pc_rbuf_init(&r, zmq_msg_data(&m->body), zmq_msg_size(&m->body));
        mw_vt tmp;
        if (t && s_read_holders(&r, &tmp) && pc_rbuf_done(&r)) {
            memcpy(t->holders, tmp.holders, sizeof tmp.holders);
            t->nh = tmp.nh;
        }
        return;
    }
    case PC_W_FENCE:
        if (!m->h.vt) {
            vs_trace(mw->n->w, "%s: fenced out of VC", mw->n->ep);
            s_vc_drop(mw, v);
            return;
        }
        if (t && t->epoch < m->h.epoch)
            s_vt_forget(v, t->id);
        return;
    case PC_W_CLOSE:
        s_vc_drop(mw, v);
        return;
    case PC_W_IN:
        if (t && t->epoch == m->h.epoch)
            t->heard = true;
        if (t && t->epoch == m->h.epoch && !t->ended) {
            s_in(mw, t, m);
            s_step(mw, t, o);
        }
        return;
    case PC_W_ACK:
        if (t && t->epoch == m->h.epoch)
            t->heard = true;
        if (t && t->epoch == m->h.epoch && t->ended) {
            /* as worker.c: the end again, the first was lost */
            s_end(mw, t, t->end_err, t->end_detail);
            return;
        }
        if (t && t->epoch == m->h.epoch && !t->ended)
            s_ack(mw, t, m);
        return;
    default:
        return;
    }
}

void vs_mw_on_member(vs_mworker *mw, const pc_member *m)
{
    /* as worker.c: a deployer that left goes at once, one declared dead
     * only if it stays dead for the client timeout */
    for (int i = 0; i < mw->nvcs;) {
        mw_vc *v = &mw->vcs[i];
        if (strcmp(v->deployer, m->rec.endpoint)) {
            i++;
            continue;
        }
        if (m->state == PC_MEMBER_LEFT) {
            s_vc_drop(mw, v);
            continue;
        }
        if (m->state == PC_MEMBER_DEAD && !v->orphan_ms)
            v->orphan_ms = vs_now(mw->n->w) ? vs_now(mw->n->w) : 1;
        else if (m->state == PC_MEMBER_ALIVE)
            v->orphan_ms = 0;
        i++;
    }
}

void vs_mw_dump(const vs_mworker *mw)
{
    for (int i = 0; i < mw->nvcs; i++)
        for (int k = 0; k < mw->vcs[i].nvts; k++) {
            const mw_vt *t = mw->vcs[i].vts[k];
            vs_trace(mw->n->w,
                     "%s: VT %llu epoch %u%s: round %u phase %u lock_req %llu next_in %llu, "
                     "%u inputs, %u outputs (first %llu), out_seq %llu",
                     mw->n->ep, (unsigned long long)t->id, t->epoch, t->ended ? " (ended)" : "",
                     t->s.round, t->s.phase, (unsigned long long)t->s.lock_req,
                     (unsigned long long)t->s.next_in, t->s.nin, t->s.nout,
                     (unsigned long long)(t->s.nout ? t->s.out[0].seq : 0),
                     (unsigned long long)t->s.out_seq);
            for (uint32_t j = 0; j < t->s.nin; j++)
                vs_trace(mw->n->w, "    input %llu kind %u from %llu ref %llu%s",
                         (unsigned long long)t->s.in[j].d, t->s.in[j].kind,
                         (unsigned long long)t->s.in[j].from, (unsigned long long)t->s.in[j].ref,
                         t->s.in[j].taken ? " taken" : "");
        }
}

uint32_t vs_mw_load(const vs_mworker *mw)
{
    uint32_t n = 0;
    for (int i = 0; i < mw->nvcs; i++)
        for (int k = 0; k < mw->vcs[i].nvts; k++)
            n += !mw->vcs[i].vts[k]->ended;
    return n;
}

uint64_t vs_mw_tick(vs_mworker *mw, uint64_t now)
{
    const vs_opts *o = vs_world_opts(mw->n->w);
    uint32_t load = vs_mw_load(mw);
    /* each VT gets its share of the cores */
    uint64_t share = load > mw->n->cores ? (uint64_t)mw->n->cores * 1000 / load : 1000;
    uint64_t next = now + 1000;
    for (int i = 0; i < mw->nvcs;) {
        mw_vc *v = &mw->vcs[i];
        if (v->orphan_ms && now - v->orphan_ms >= (uint64_t)mw->n->p->o.client_timeout_ms)
            s_vc_drop(mw, v);
        else
            i++;
    }
    for (int i = 0; i < mw->nvcs; i++) {
        mw_vc *v = &mw->vcs[i];
        for (int k = 0; k < v->nvts; k++) {
            mw_vt *t = v->vts[k];
            if (t->ended)
                continue;
            if (t->s.phase == PH_COMPUTE && t->s.work_left_us) {
                uint64_t step = (uint64_t)MW_TICK_MS * share;
                t->s.work_left_us = t->s.work_left_us > step ? t->s.work_left_us - step : 0;
                next = now + MW_TICK_MS < next ? now + MW_TICK_MS : next;
            }
            s_step(mw, t, o);
            if (t->ended)
                continue;
            if (now - t->last_ckpt >= (uint64_t)v->ckpt_ms)
                s_checkpoint(mw, t, now);
            uint64_t c = t->last_ckpt + (uint64_t)v->ckpt_ms;
            next = c < next ? c : next;
            /* an outbox that stays unacknowledged is sent again */
            uint64_t oldest = t->s.nout ? t->s.out[0].seq : 0;
            if (oldest != t->oldest_seen) {
                t->oldest_seen = oldest;
                t->oldest_since = now;
            } else if (now - t->oldest_since >= MW_STALE_MS) {
                /* as exechost.c: the outbox again, and the inputs asked
                 * for again by an incarnation that heard nothing yet */
                t->oldest_since = now;
                if (oldest)
                    s_resend(mw, t);
                if (!t->heard)
                    s_send(mw, v->deployer, PC_W_RESYNC, t, t->s.next_in, NULL);
            }
        }
    }
    return next;
}

vs_mworker *vs_mw_new(vs_node *n)
{
    vs_mworker *mw = calloc(1, sizeof *mw);
    if (mw)
        mw->n = n;
    return mw;
}

void vs_mw_free(vs_mworker **mw_p)
{
    vs_mworker *mw = *mw_p;
    if (!mw)
        return;
    while (mw->nvcs)
        s_vc_drop(mw, &mw->vcs[0]);
    free(mw->vcs);
    free(mw);
    *mw_p = NULL;
}
