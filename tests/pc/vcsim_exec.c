/* vcsim_exec.c - the model executor of the simulator (vcsim_int.h): what
 * the real worker (worker.c) of each simulated peer starts through its
 * env for a VC, in place of an executor process. It speaks the executor
 * protocol (exechost.h: CONFIG, MODULE, RUN, RESUME, IN, ACK, STOP, CANCEL
 * in; READY, MODULE_OK, RESYNC, OUT, IMAGE, DONE, STOPPED out) and runs
 * model VTs with the runtime's channel rules (runtime/vtchan.h): inputs
 * taken in stream order, outputs numbered and kept until acknowledged,
 * no capture while a lock or a grant is held, the outbox sent again when
 * it stays unacknowledged, the inputs asked for again while the deployer
 * has said nothing. Like an executor (exechost_causal.c), it orders its
 * VTs' inputs by their channels with the causal logging engine
 * (causal.c), sends its determinants up (X_DET), drops those the
 * deployer says are stable (X_STABLE), and keeps the engine's part in
 * each image envelope.
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

#include "causal.h"
#include "envelope.h"
#include "lev_errors.h"
#include "vcsim_int.h"
#include "vec.h"
#include "vtchan.h"

#define MW_TICK_MS 10
#define MW_STALE_MS 2000         /* an unacknowledged outbox is sent again after */
#define MW_IMG_MAGIC 0x4D495356u /* "VSIM" */

enum {
    PH_COMPUTE,
    PH_SEND,
    PH_RECV,
    PH_LOCK,
    PH_UNLOCK,
    PH_REPORT,
    PH_END,
    PH_PUT,
    PH_READ,      /* after its unlock: its own write not yet acknowledged */
    PH_READ_FIRST /* after its work: the acknowledgement of its last unlock came, or not */
};

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
    uint64_t read_req, last_read; /* vs_opts.reads: the read in progress, the last answer */
    mw_in *in;
    uint32_t nin;
    mw_out *out;
    uint32_t nout;
    uint64_t *ahead; /* reads taken from their worker's answer (X_READ_AT) whose logged */
    uint32_t nahead; /* answer has not come: passed over when it does */
} mw_state;

typedef struct mw_vt {
    uint64_t vc, id;
    uint32_t epoch;
    mw_state s;
    uint64_t last_ckpt, oldest_seen, oldest_since, resync_asked;
    bool ended;    /* its DONE went out: forgotten at the next sweep */
    bool draining; /* at its end, its DONE held until its outputs are acknowledged */
    int32_t end_err;
    char end_detail[96];
    bool heard; /* an input or acknowledgement reached it */
    struct {
        uint64_t from, seq;
    } chans[16]; /* the last number taken on each channel since it started here */
    int nchans;
} mw_vt;

/* One model executor: the VTs of one VC on one peer. */
struct vs_mexec {
    vs_mexec *next; /* in its node's list */
    vs_node *n;
    uint64_t vc;
    int ckpt_ms;
    bool dead; /* stopped by the worker, or its peer crashed */
    mw_vt **vts;
    int nvts;
    pc_cx *cx;       /* the VC's causal logging engine here */
    pc_cx_det *dets; /* for the next X_DET */
    size_t ndets, capdets;
    uint64_t flushes;                         /* barriers answered */
    uint64_t places;                          /* placement news taken */
    uint64_t hand_cfrom, hand_cseq, hand_pos; /* the input being ordered, and where it went */
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

static mw_vt *s_vt(vs_mexec *x, uint64_t id)
{
    for (int i = 0; i < x->nvts; i++)
        if (x->vts[i]->id == id)
            return x->vts[i];
    return NULL;
}

static void s_vt_free(mw_vt *t)
{
    free(t->s.in);
    free(t->s.out);
    free(t->s.ahead);
    free(t);
}

static void s_vt_forget(vs_mexec *x, mw_vt *t)
{
    pc_cx_remove(x->cx, t->id);
    for (int i = 0; i < x->nvts; i++)
        if (x->vts[i] == t) {
            s_vt_free(t);
            x->vts[i] = x->vts[--x->nvts];
            return;
        }
}

/* Forgets the VTs that ended. */
static void s_sweep(vs_mexec *x)
{
    for (int i = 0; i < x->nvts;)
        if (x->vts[i]->ended) {
            pc_cx_remove(x->cx, x->vts[i]->id);
            s_vt_free(x->vts[i]);
            x->vts[i] = x->vts[--x->nvts];
        } else {
            i++;
        }
}

/* A record to the worker: header (vc, the VT, its epoch, seq) and b. */
static void s_flush(vs_mexec *x, const pc_hdr *h, const uint8_t *p, size_t len);
static void s_fix(vs_mexec *x, const pc_hdr *h, const uint8_t *p, size_t len);

static void s_rec(vs_mexec *x, uint16_t type, uint64_t vt, uint32_t epoch, uint64_t seq,
                  const pc_wbuf *b)
{
    if (x->dead)
        return;
    pc_hdr h = pc_hdr_make(type, x->vc, vt, epoch, seq);
    size_t len = b ? b->len : 0;
    uint8_t *payload = len ? malloc(len) : NULL;
    if (len && !payload)
        abort();
    if (len)
        memcpy(payload, b->data, len);
    h.len = (uint32_t)len;
    vs_exec_emit(x->n, x, &h, payload);
}

/* ===================================================================
 * Outputs
 * =================================================================== */

static void s_out_send(vs_mexec *x, mw_vt *t, const mw_out *o)
{
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_u8(&b, o->kind);
    pc_put_u64(&b, o->to);
    pc_put_u64(&b, o->ref);
    pc_put_u8(&b, 0);
    pc_put_str(&b, o->kind == RT_OUT_LOCK || o->kind == RT_OUT_UNLOCK || o->kind == RT_OUT_READ
                       ? "ctr"
                   : o->kind == RT_OUT_PUT ? "pmax"
                                           : "");
    uint8_t val[8];
    for (int i = 0; i < 8; i++)
        val[i] = (uint8_t)(o->val >> (8 * i));
    pc_put_blob(&b, o->has_val ? val : NULL, o->has_val ? 8 : 0);
    s_rec(x, PC_X_OUT, t->id, t->epoch, o->seq, &b);
    pc_wbuf_free(&b);
}

/* A numbered output: kept until acknowledged, sent now. */
static uint64_t s_output(vs_mexec *x, mw_vt *t, uint8_t kind, uint64_t to, uint64_t val,
                         bool has_val)
{
    mw_out *n = realloc(t->s.out, (t->s.nout + 1) * sizeof *n);
    if (!n)
        abort();
    t->s.out = n;
    mw_out *o = &n[t->s.nout++];
    *o = (mw_out){.seq = ++t->s.out_seq,
                  .to = to,
                  .ref = kind == RT_OUT_PUT ? val : 0, /* a put's version is its value */
                  .val = val,
                  .kind = kind,
                  .has_val = has_val};
    s_out_send(x, t, o);
    return o->seq;
}

/* The answer of read `seq` from the worker (rt_ch_read_answer's rule):
 * kept on the read's outbox entry if the VT waits in that read, it is
 * not answered already, and its logged answer has not come. */
static void s_read_at(mw_vt *t, uint64_t seq, uint64_t rev, const uint8_t *val)
{
    if (t->s.read_req != seq)
        return; /* not the read it waits in */
    for (uint32_t i = 0; i < t->s.nin; i++)
        if (t->s.in[i].kind == RT_IN_READ && t->s.in[i].ref == seq)
            return;
    for (uint32_t i = 0; i < t->s.nout; i++) {
        mw_out *o = &t->s.out[i];
        if (o->seq != seq || o->kind != RT_OUT_READ || o->ref)
            continue;
        o->ref = rev;
        o->val = 0;
        for (int k = 0; k < 8; k++)
            o->val |= (uint64_t)val[k] << (8 * k);
        o->has_val = 1;
        return;
    }
}

static void s_resend(vs_mexec *x, mw_vt *t)
{
    for (uint32_t i = 0; i < t->s.nout; i++)
        s_out_send(x, t, &t->s.out[i]);
}

/* Tells the deployer how far the VT consumed its inputs (not numbered). */
static void s_consumed(vs_mexec *x, mw_vt *t)
{
    uint64_t upto = t->s.next_in - 1;
    for (uint32_t i = 0; i < t->s.nin; i++)
        if (!t->s.in[i].taken && t->s.in[i].d <= upto)
            upto = t->s.in[i].d - 1;
    mw_out o = {.kind = RT_OUT_CONSUMED, .ref = upto};
    s_out_send(x, t, &o);
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

/* Sends the DONE of a VT at its end. */
static void s_send_end(vs_mexec *x, mw_vt *t)
{
    int32_t err = t->end_err;
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_i32(&b, err);
    pc_put_str(&b, t->end_detail);
    uint8_t res[8];
    for (int i = 0; i < 8; i++)
        res[i] = (uint8_t)(t->s.acc >> (8 * i));
    pc_put_blob(&b, err ? NULL : res, err ? 0 : 8);
    s_rec(x, PC_X_DONE, t->id, t->epoch, 0, &b);
    pc_wbuf_free(&b);
    t->ended = true;
    t->draining = false;
    vs_trace(x->n->w, "%s: VT %llu epoch %u ended (%d)", x->n->ep, (unsigned long long)t->id,
             t->epoch, err);
}

/* The end of a VT: as exechost.c, its DONE waits until every output
 * before it is acknowledged. */
static void s_end(vs_mexec *x, mw_vt *t, int32_t err, const char *detail)
{
    t->end_err = err;
    snprintf(t->end_detail, sizeof t->end_detail, "%s", detail);
    t->draining = true;
    if (!t->s.nout)
        s_send_end(x, t);
}

/* Runs the VT's steps that need no time, up to a block or its end. */
static void s_step(vs_mexec *x, mw_vt *t, const vs_opts *o)
{
    for (int guard = 0; guard < 64 && !t->ended && !t->draining; guard++) {
        mw_state *s = &t->s;
        switch (s->phase) {
        case PH_COMPUTE:
            if (s->work_left_us)
                return;
            s->phase = o->reads ? PH_READ_FIRST : PH_SEND;
            break;
        case PH_SEND:
            s_output(x, t, RT_OUT_MSG, s_next(o, t->id), s_value(t->id, s->round, s->acc), true);
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
                if (in->from == from &&
                    (in->kind == RT_IN_MSG || in->kind == RT_IN_BOUNCE || in->kind == RT_IN_ENDED))
                    hit = in;
            }
            if (!hit)
                return;
            hit->taken = true;
            mw_in got = *hit; /* the stream is compacted below */
            hit = &got;
            s_consumed(x, t);
            if (hit->kind != RT_IN_MSG) {
                char why[96];
                snprintf(why, sizeof why, "receive from VT %llu: %s", (unsigned long long)from,
                         lev_strerror(hit->err ? hit->err : LEV_EFAILED));
                s_compact(t);
                s_end(x, t, hit->err ? hit->err : LEV_EFAILED, why);
                return;
            }
            s->acc = s_mix(s->acc, hit->val);
            s_compact(t);
            s->phase = PH_LOCK;
            break;
        }
        case PH_LOCK:
            if (!s->lock_req) {
                s->lock_req = s_output(x, t, RT_OUT_LOCK, 0, 0, false);
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
                    s_consumed(x, t);
                    s_compact(t);
                    if (got.kind == RT_IN_ERROR) {
                        s_end(x, t, got.err ? got.err : LEV_EFAILED, "lock refused");
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
            s_output(x, t, RT_OUT_UNLOCK, 0, s->lock_val + 1, true);
            s->lock_req = 0;
            s->phase = o->puts ? PH_PUT : o->reads ? PH_READ : PH_REPORT;
            break;
        case PH_PUT:
            s_output(x, t, RT_OUT_PUT, 0, (uint64_t)(s->round + 1) << 16 | t->id, true);
            s->phase = o->reads ? PH_READ : PH_REPORT;
            break;
        case PH_READ:
        case PH_READ_FIRST: {
            if (!s->read_req) {
                s->read_req = s_output(x, t, RT_OUT_READ, 0, 0, false);
                return;
            }
            mw_in *hit = NULL;
            for (uint32_t i = 0; i < s->nin && !hit; i++)
                if (!s->in[i].taken && s->in[i].ref == s->read_req &&
                    (s->in[i].kind == RT_IN_READ || s->in[i].kind == RT_IN_ERROR))
                    hit = &s->in[i];
            mw_out *ans = NULL; /* answered at its worker ahead of the log (X_READ_AT) */
            for (uint32_t i = 0; i < s->nout && !hit && !ans; i++)
                if (s->out[i].seq == s->read_req && s->out[i].kind == RT_OUT_READ && s->out[i].ref)
                    ans = &s->out[i];
            if (!hit && !ans)
                return;
            mw_in got = {.kind = RT_IN_READ, .val = ans ? ans->val : 0};
            if (hit) {
                got = *hit; /* the stream is compacted below */
                hit->taken = true;
                s_consumed(x, t);
                s_compact(t);
            } else {
                vs_world_report(x->n->w)->reads_near++;
                uint64_t *n = realloc(s->ahead, (s->nahead + 1) * sizeof *n);
                if (!n)
                    abort();
                s->ahead = n;
                n[s->nahead++] = s->read_req;
            }
            if (got.kind == RT_IN_ERROR) {
                s_end(x, t, got.err ? got.err : LEV_EFAILED, "read refused");
                return;
            }
            uint64_t v = got.novalue ? 0 : got.val;
            uint64_t own = s->phase == PH_READ || s->round ? s->lock_val + 1 : 0; /* its write */
            vs_read_seen(x->n->w, t->id, s->read_req, v);
            if (v < own || v < s->last_read)
                vs_violation(x->n->w,
                             "VT %llu read the counter at %llu after writing %llu and reading %llu",
                             (unsigned long long)t->id, (unsigned long long)v,
                             (unsigned long long)own, (unsigned long long)s->last_read);
            s->last_read = v;
            s->read_req = 0;
            s->phase = s->phase == PH_READ ? PH_REPORT : PH_SEND;
            break;
        }
        case PH_REPORT:
            s_output(x, t, RT_OUT_REPORT, 0, t->id << 32 | s->round, true);
            if (++s->round >= (uint32_t)s_rounds(o)) {
                s->phase = PH_END;
            } else {
                s->phase = PH_COMPUTE;
                s->work_left_us = (uint64_t)(o->compute_ms ? o->compute_ms : 300) * 1000;
            }
            break;
        case PH_END:
            s_end(x, t, 0, "");
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

#define MW_BALLAST (3 * PC_PATCH_BLOCK) /* bytes of an image that never change */

/* The ballast of VT id's images. */
static void s_ballast(uint64_t id, uint8_t *out)
{
    for (size_t i = 0; i < MW_BALLAST; i++)
        out[i] = (uint8_t)(id * 131 + i * 7 + (i >> 8));
}

static void s_put_state(pc_wbuf *b, const mw_vt *t)
{
    const mw_state *s = &t->s;
    pc_put_u32(b, MW_IMG_MAGIC);
    pc_put_u64(b, t->id);
    pc_put_u32(b, t->epoch);
    /* ballast that stays from image to image, as most of a real VT's heap
     * does: images span several blocks and go to holders as patches */
    uint8_t ballast[MW_BALLAST];
    s_ballast(t->id, ballast);
    pc_put_raw(b, ballast, sizeof ballast);
    pc_put_u32(b, s->round);
    pc_put_u32(b, s->phase);
    pc_put_u64(b, s->acc);
    pc_put_u64(b, s->work_left_us);
    pc_put_u64(b, s->out_seq);
    pc_put_u64(b, s->lock_req);
    pc_put_u64(b, s->lock_val);
    pc_put_u64(b, s->next_in);
    pc_put_u64(b, s->recv_no);
    pc_put_u64(b, s->read_req);
    pc_put_u64(b, s->last_read);
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
    pc_put_u32(b, s->nahead);
    for (uint32_t i = 0; i < s->nahead; i++)
        pc_put_u64(b, s->ahead[i]);
}

static bool s_get_state(pc_rbuf *r, mw_state *s, uint64_t *id, uint32_t *epoch)
{
    memset(s, 0, sizeof *s);
    if (pc_get_u32(r) != MW_IMG_MAGIC)
        return false;
    *id = pc_get_u64(r);
    *epoch = pc_get_u32(r);
    const void *got = NULL;
    uint8_t want[MW_BALLAST];
    s_ballast(*id, want);
    if (!pc_get_raw(r, &got, sizeof want) || memcmp(got, want, sizeof want))
        return false; /* a holder made it wrong from a patch */
    s->round = pc_get_u32(r);
    s->phase = pc_get_u32(r);
    s->acc = pc_get_u64(r);
    s->work_left_us = pc_get_u64(r);
    s->out_seq = pc_get_u64(r);
    s->lock_req = pc_get_u64(r);
    s->lock_val = pc_get_u64(r);
    s->next_in = pc_get_u64(r);
    s->recv_no = pc_get_u64(r);
    s->read_req = pc_get_u64(r);
    s->last_read = pc_get_u64(r);
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
    s->nahead = pc_get_u32(r);
    if (r->bad || s->nahead > 100000)
        return false;
    s->ahead = calloc(s->nahead ? s->nahead : 1, sizeof *s->ahead);
    for (uint32_t i = 0; i < s->nahead && s->ahead; i++)
        s->ahead[i] = pc_get_u64(r);
    return s->in && s->out && s->ahead && pc_rbuf_done(r);
}

int vs_image_id(const uint8_t *img, size_t len, uint64_t *vt, uint32_t *epoch)
{
    pc_rbuf r;
    pc_rbuf_init(&r, img, len);
    mw_state s;
    bool ok = s_get_state(&r, &s, vt, epoch);
    free(s.in);
    free(s.out);
    free(s.ahead);
    return ok ? 0 : LEV_EIMAGE;
}

/* The VT's image in an envelope, with the engine's part (malloc'd, *len
 * its size). */
static uint8_t *s_envelope(vs_mexec *x, const mw_vt *t, size_t *len)
{
    pc_wbuf img, cx;
    pc_wbuf_init(&img);
    pc_wbuf_init(&cx);
    s_put_state(&img, t);
    pc_cx_image im;
    if (pc_cx_image_of(x->cx, t->id, &im))
        abort();
    pc_cx_image_encode(&cx, &im);
    pc_cx_image_clear(&im);
    size_t tlen = 0;
    uint8_t *tail = pc_env_tail(NULL, 0, cx.data, cx.len, &tlen);
    uint8_t *env = tail ? pc_env_make(tail, tlen, img.data, img.len, len) : NULL;
    free(tail);
    pc_wbuf_free(&img);
    pc_wbuf_free(&cx);
    if (!env)
        abort();
    return env;
}

/* A checkpoint: the image to the worker, which sends it to the holders. */
static void s_checkpoint(vs_mexec *x, mw_vt *t, uint64_t now)
{
    t->last_ckpt = now;
    if (!s_capture_ok(t))
        return;
    size_t elen = 0;
    uint8_t *env = s_envelope(x, t, &elen);
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_blob(&b, env, elen);
    s_rec(x, PC_X_IMAGE, t->id, t->epoch, t->s.next_in, &b);
    pc_wbuf_free(&b);
    free(env);
    vs_report *rep = vs_world_report(x->n->w);
    rep->images++;
    rep->image_bytes += elen;
}

/* ===================================================================
 * The worker's records
 * =================================================================== */

/* The VT's record for a new incarnation (an older copy is replaced). */
static mw_vt *s_track(vs_mexec *x, uint64_t id, uint32_t epoch)
{
    mw_vt *old = s_vt(x, id);
    if (old)
        s_vt_forget(x, old);
    mw_vt **n = realloc(x->vts, (size_t)(x->nvts + 1) * sizeof *n);
    mw_vt *t = calloc(1, sizeof *t);
    if (!n || !t)
        abort();
    x->vts = n;
    n[x->nvts++] = t;
    t->vc = x->vc;
    t->id = id;
    t->epoch = epoch;
    return t;
}

static void s_run(vs_mexec *x, const pc_hdr *h, pc_rbuf *r, const vs_opts *o)
{
    char task[64];
    const void *arg;
    size_t alen;
    pc_get_str(r, task, sizeof task);
    pc_get_blob(r, &arg, &alen);
    if (!pc_rbuf_done(r) || h->vt < 2 || !h->epoch) {
        vs_violation(x->n->w, "%s: malformed RUN from the worker", x->n->ep);
        return;
    }
    mw_vt *t = s_track(x, h->vt, h->epoch);
    pc_cx_image fresh = {.vt = h->vt, .epoch = h->epoch};
    if (pc_cx_install(x->cx, &fresh, NULL, 0))
        vs_violation(x->n->w, "%s: the engine refused VT %llu epoch %u", x->n->ep,
                     (unsigned long long)h->vt, h->epoch);
    t->s.acc = t->id;
    t->s.next_in = 1;
    t->s.work_left_us = (uint64_t)(o->compute_ms ? o->compute_ms : 300) * 1000;
    t->last_ckpt = vs_now(x->n->w);
    vs_world_report(x->n->w)->restarts += h->epoch > 1;
    vs_trace(x->n->w, "%s: VT %llu epoch %u runs from its start", x->n->ep,
             (unsigned long long)t->id, t->epoch);
    /* every incarnation asks for its inputs from where it stands */
    s_rec(x, PC_X_RESYNC, t->id, t->epoch, 1, NULL);
}

static void s_resume(vs_mexec *x, const pc_hdr *h, pc_rbuf *r)
{
    const void *env = NULL;
    size_t elen = 0;
    pc_get_blob(r, &env, &elen);
    const uint8_t *chan, *img, *cxp;
    size_t clen, ilen, cxlen;
    const char *why = NULL;
    mw_state s = {0};
    uint64_t id = 0;
    uint32_t epoch = 0;
    pc_cx_image im = {0};
    bool ok =
        pc_rbuf_done(r) && pc_env_split(env, elen, &chan, &clen, &img, &ilen, &cxp, &cxlen, &why);
    if (ok) {
        pc_rbuf ri;
        pc_rbuf_init(&ri, img, ilen);
        ok = s_get_state(&ri, &s, &id, &epoch) && id == h->vt && epoch < h->epoch;
    }
    /* the engine's part stands where the state does */
    ok = ok && !pc_cx_image_decode(cxp, cxlen, 1u << 20, &im, &why) && im.vt == id &&
         im.consumed + 1 == s.next_in;
    if (!ok) {
        pc_cx_image_clear(&im);
        free(s.in);
        free(s.out);
        free(s.ahead);
        vs_violation(x->n->w, "%s: bad RESUME of VT %llu epoch %u", x->n->ep,
                     (unsigned long long)h->vt, h->epoch);
        return;
    }
    mw_vt *t = s_track(x, h->vt, h->epoch);
    im.epoch = h->epoch;
    if (pc_cx_install(x->cx, &im, NULL, 0))
        vs_violation(x->n->w, "%s: the engine refused the image of VT %llu epoch %u", x->n->ep,
                     (unsigned long long)h->vt, h->epoch);
    pc_cx_image_clear(&im);
    t->s = s;
    t->last_ckpt = vs_now(x->n->w);
    vs_world_report(x->n->w)->resumes++;
    vs_trace(x->n->w, "%s: VT %llu epoch %u resumed (round %u, from epoch %u)", x->n->ep,
             (unsigned long long)t->id, t->epoch, t->s.round, epoch);
    s_rec(x, PC_X_RESYNC, t->id, t->epoch, t->s.next_in, NULL);
    s_resend(x, t);
    /* its only image may be on this very peer (its holder became its
     * host): a new one goes to its holders at once */
    s_checkpoint(x, t, vs_now(x->n->w));
    s_step(x, t, vs_world_opts(x->n->w));
}

static void s_in(vs_mexec *x, mw_vt *t, const pc_hdr *h, pc_rbuf *r)
{
    mw_in in = {.d = h->seq};
    in.kind = pc_get_u8(r);
    in.novalue = pc_get_u8(r);
    in.from = pc_get_u64(r);
    in.ref = pc_get_u64(r);
    in.err = pc_get_i32(r);
    uint64_t cfrom = pc_get_u64(r), cseq = pc_get_u64(r);
    const void *data = NULL;
    size_t len = 0;
    pc_get_blob(r, &data, &len);
    if (!pc_rbuf_done(r)) {
        vs_violation(x->n->w, "%s: malformed IN of VT %llu", x->n->ep, (unsigned long long)t->id);
        return;
    }
    if (!cseq || cfrom != (in.kind == RT_IN_MSG && in.from >= 2 ? in.from : 0))
        vs_violation(x->n->w, "%s: input %llu of VT %llu on channel %llu/%llu, not its sender's",
                     x->n->ep, (unsigned long long)in.d, (unsigned long long)t->id,
                     (unsigned long long)cfrom, (unsigned long long)cseq);
    for (size_t i = 0; i < len && i < 8; i++)
        in.val |= (uint64_t)((const uint8_t *)data)[i] << (8 * i);
    if (in.d < t->s.next_in)
        return; /* had it */
    if (in.d > t->s.next_in) {
        /* a gap: ask from the first missing one, once per position */
        if (t->resync_asked != t->s.next_in) {
            t->resync_asked = t->s.next_in;
            s_rec(x, PC_X_RESYNC, t->id, t->epoch, t->s.next_in, NULL);
        }
        return;
    }
    /* the engine orders it: relayed by the deployer, at the position the
     * deployer gave it */
    x->hand_cfrom = cfrom;
    x->hand_cseq = cseq;
    x->hand_pos = 0;
    pc_cx_msg m = {
        .from = cfrom, .to = t->id, .seq = cseq, .from_epoch = UINT32_MAX, .to_epoch = t->epoch};
    if (in.kind == RT_IN_ENDED) { /* after the ended VT's last message */
        m.after_from = in.from;
        m.after_seq = in.ref;
    }
    if (pc_cx_on_msg(x->cx, -1, &m, NULL, 0) || x->hand_pos != in.d) {
        vs_violation(x->n->w,
                     "%s: VT %llu: message %llu of channel %llu ordered at input %llu, "
                     "the deployer put it at input %llu",
                     x->n->ep, (unsigned long long)t->id, (unsigned long long)cseq,
                     (unsigned long long)cfrom, (unsigned long long)x->hand_pos,
                     (unsigned long long)in.d);
        return;
    }
    pc_cx_consumed(x->cx, t->id, in.d); /* the VT's state has it now */
    mw_in *n = realloc(t->s.in, (t->s.nin + 1) * sizeof *n);
    if (!n)
        abort();
    t->s.in = n;
    for (uint32_t i = 0; in.kind == RT_IN_READ && i < t->s.nahead; i++)
        if (t->s.ahead[i] == in.ref) { /* answered at the worker: passed over */
            in.taken = true;
            t->s.ahead[i] = t->s.ahead[--t->s.nahead];
            break;
        }
    n[t->s.nin++] = in;
    t->s.next_in++;
    t->resync_asked = 0;
    /* the deployer numbers each channel 1, 2, 3, ... in the order of the
     * stream (checked from the first input this incarnation takes) */
    int c = 0;
    while (c < t->nchans && t->chans[c].from != cfrom)
        c++;
    if (c < t->nchans && cseq != t->chans[c].seq + 1)
        vs_violation(x->n->w, "%s: VT %llu took message %llu of channel %llu after %llu", x->n->ep,
                     (unsigned long long)t->id, (unsigned long long)cseq, (unsigned long long)cfrom,
                     (unsigned long long)t->chans[c].seq);
    if (c == t->nchans && c < 16)
        t->chans[t->nchans++].from = cfrom;
    if (c < t->nchans)
        t->chans[c].seq = cseq;
}

static void s_ack(vs_mexec *x, mw_vt *t, const pc_hdr *h, pc_rbuf *r)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < t->s.nout; i++)
        if (t->s.out[i].seq > h->seq)
            t->s.out[k++] = t->s.out[i];
    t->s.nout = k;
    if (r->len == 1 && pc_get_u8(r))
        s_resend(x, t);
}

/* Captures and stops a VT (a graceful leave): its image to the worker. */
static void s_stop(vs_mexec *x, mw_vt *t)
{
    size_t elen = 0;
    uint8_t *env = s_envelope(x, t, &elen);
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_i32(&b, 0);
    pc_put_str(&b, "");
    pc_put_blob(&b, env, elen);
    s_rec(x, PC_X_STOPPED, t->id, t->epoch, t->s.next_in, &b);
    pc_wbuf_free(&b);
    free(env);
    t->ended = true;
}

int vs_mexec_send(vs_mexec *x, pc_hdr h, const struct iovec *iov, int n)
{
    if (x->dead)
        return LEV_EPEER;
    if (!x->vc)
        x->vc = h.vc; /* its first record (CONFIG) names its VC */
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += iov[i].iov_len;
    uint8_t *buf = len ? malloc(len) : NULL;
    if (len && !buf)
        abort();
    for (size_t off = 0, i = 0; i < (size_t)n; off += iov[i].iov_len, i++)
        if (iov[i].iov_len)
            memcpy(buf + off, iov[i].iov_base, iov[i].iov_len);
    pc_rbuf r;
    pc_rbuf_init(&r, buf, len);
    const vs_opts *o = vs_world_opts(x->n->w);
    mw_vt *t = h.vt ? s_vt(x, h.vt) : NULL;
    switch (h.type) {
    case PC_X_CONFIG: { /* then the address and keys of direct messages: not modelled */
        int32_t ckpt = pc_get_i32(&r);
        pc_get_i32(&r);
        x->ckpt_ms = ckpt > 0 ? ckpt : 2000;
        break;
    }
    case PC_X_MODULE: {
        pc_wbuf b;
        pc_wbuf_init(&b);
        pc_put_i32(&b, 0);
        pc_put_str(&b, "");
        s_rec(x, PC_X_MODULE_OK, 0, 0, 0, &b);
        pc_wbuf_free(&b);
        break;
    }
    case PC_X_RUN:
        s_run(x, &h, &r, o);
        break;
    case PC_X_RESUME:
        s_resume(x, &h, &r);
        break;
    case PC_X_IN:
        if (t && t->epoch == h.epoch && !t->ended && !t->draining) {
            t->heard = true;
            s_in(x, t, &h, &r);
            s_step(x, t, o);
        }
        break;
    case PC_X_READ_AT: /* a read answered at the worker, ahead of its log */
        if (t && t->epoch == h.epoch && !t->ended && !t->draining) {
            uint64_t rev = pc_get_u64(&r);
            const void *data = NULL;
            size_t len = 0;
            pc_get_blob(&r, &data, &len);
            if (!pc_rbuf_done(&r) || !rev || len != 8) {
                vs_violation(x->n->w, "%s: malformed READ_AT of VT %llu", x->n->ep,
                             (unsigned long long)t->id);
                break;
            }
            s_read_at(t, h.seq, rev, data);
            s_step(x, t, o);
        }
        break;
    case PC_X_STABLE:
        pc_cx_stable(x->cx, h.vt, h.seq);
        break;
    case PC_X_FLUSH:
        s_flush(x, &h, buf, len);
        break;
    case PC_X_TRIM: {
        const char *why = NULL;
        int rc = pc_cx_trim_apply(x->cx, h.vt, buf, len, &why);
        if (rc == LEV_ENOMEM)
            abort();
        if (rc)
            vs_violation(x->n->w, "%s: trim refused: %s", x->n->ep, why);
        break;
    }
    case PC_X_PLACE: {
        /* its number, once, and where the VTs run */
        const char *why = NULL;
        int rc = pc_cx_place_news(x->cx, h.seq, buf, len, &why);
        if (rc == LEV_ENOMEM)
            abort();
        if (rc)
            vs_violation(x->n->w, "%s: placements refused: %s", x->n->ep,
                         why ? why : lev_strerror(rc));
        x->places++;
        break;
    }
    case PC_X_FIX:
        s_fix(x, &h, buf, len);
        break;
    case PC_X_ACK:
        if (t && t->epoch == h.epoch && !t->ended) {
            t->heard = true;
            s_ack(x, t, &h, &r);
            if (t->draining && !t->s.nout)
                s_send_end(x, t);
        }
        break;
    case PC_X_STOP:
        for (int i = 0; i < x->nvts; i++)
            if (!x->vts[i]->ended && !x->vts[i]->draining && (!h.vt || x->vts[i]->id == h.vt))
                s_stop(x, x->vts[i]);
        break;
    case PC_X_CANCEL:
        for (int i = 0; i < x->nvts; i++)
            if (x->vts[i]->id == h.vt && x->vts[i]->epoch < h.epoch)
                x->vts[i]->ended = true;
        break;
    default:
        vs_violation(x->n->w, "%s: the worker sent %s to its executor", x->n->ep,
                     pc_type_name(h.type));
    }
    free(buf);
    return 0;
}

/* ===================================================================
 * Life cycle, time, status
 * =================================================================== */

static void s_cx_dets(void *ud, const pc_cx_det *d, size_t n)
{
    vs_mexec *x = ud;
    if (RT_VEC_RESERVE(x->dets, x->capdets, x->ndets, n))
        abort();
    memcpy(x->dets + x->ndets, d, n * sizeof *d);
    x->ndets += n;
}

static void s_cx_deliver(void *ud, uint64_t pos, const pc_cx_msg *m)
{
    vs_mexec *x = ud;
    if (m->from == x->hand_cfrom && m->seq == x->hand_cseq)
        x->hand_pos = pos;
}

static void s_cx_flush(vs_mexec *x);

/* The recovery barrier: the fences learnt, every determinant held goes
 * up, then the answer. */
static void s_flush(vs_mexec *x, const pc_hdr *h, const uint8_t *p, size_t len)
{
    const char *why = NULL;
    int rc = pc_cx_fences_apply(x->cx, p, len, &why);
    if (rc == LEV_ENOMEM)
        abort();
    if (rc) {
        vs_violation(x->n->w, "%s: malformed FLUSH: %s", x->n->ep, why);
        return;
    }
    x->flushes++;
    s_cx_flush(x);
    s_rec(x, PC_X_FLUSHED, 0, 0, h->seq, NULL);
}

/* The positions the deployer fixed for a resumed incarnation: the
 * engine takes its inputs in that order, and checks those it has. */
static void s_fix(vs_mexec *x, const pc_hdr *h, const uint8_t *p, size_t len)
{
    pc_cx_det *d = NULL;
    size_t n = 0;
    const char *why = NULL;
    if (pc_cx_dets_decode(p, len, &d, &n, &why)) {
        vs_violation(x->n->w, "%s: malformed FIX: %s", x->n->ep, why ? why : "no memory");
        return;
    }
    int rc = pc_cx_fix(x->cx, h->vt, h->epoch, d, n);
    if (rc && rc != LEV_ENOVT)
        vs_violation(x->n->w,
                     "%s: VT %llu incarnation %u: the deployer fixed positions its engine "
                     "refuses (%s)",
                     x->n->ep, (unsigned long long)h->vt, (unsigned)h->epoch, lev_strerror(rc));
    free(d);
}

/* The determinants made since the last X_DET go up. */
static void s_cx_flush(vs_mexec *x)
{
    if (!x->ndets)
        return;
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_cx_dets_encode(&b, x->dets, x->ndets);
    s_rec(x, PC_X_DET, 0, 0, 0, &b);
    pc_wbuf_free(&b);
    x->ndets = 0;
}

vs_mexec *vs_mexec_start(vs_node *n)
{
    vs_mexec *x = calloc(1, sizeof *x);
    if (!x)
        abort();
    pc_cx_io io = {.ud = x, .dets = s_cx_dets, .deliver = s_cx_deliver};
    if (!(x->cx = pc_cx_new(0, &io)))
        abort();
    x->n = n;
    x->ckpt_ms = 2000;
    x->next = n->execs;
    n->execs = x;
    return x;
}

void vs_mexec_stop(vs_mexec *x)
{
    x->dead = true;
    for (int i = 0; i < x->nvts; i++)
        s_vt_free(x->vts[i]);
    x->nvts = 0;
}

bool vs_mexec_live(const vs_mexec *x) { return !x->dead; }

void vs_mexec_free_all(vs_node *n)
{
    while (n->execs) {
        vs_mexec *x = n->execs;
        n->execs = x->next;
        vs_mexec_stop(x);
        pc_cx_destroy(&x->cx);
        free(x->dets);
        free(x->vts);
        free(x);
    }
}

static uint32_t s_load(const vs_node *n)
{
    uint32_t load = 0;
    for (const vs_mexec *x = n->execs; x; x = x->next)
        for (int i = 0; !x->dead && i < x->nvts; i++)
            load += !x->vts[i]->ended && !x->vts[i]->draining;
    return load;
}

uint64_t vs_mexec_tick(vs_node *n, uint64_t now)
{
    const vs_opts *o = vs_world_opts(n->w);
    uint32_t load = s_load(n);
    /* each VT gets its share of the cores */
    uint64_t share = load > n->cores ? (uint64_t)n->cores * 1000 / load : 1000;
    uint64_t next = now + 1000;
    for (vs_mexec *x = n->execs; x; x = x->next) {
        if (x->dead)
            continue;
        s_cx_flush(x);
        for (int k = 0; k < x->nvts; k++) {
            mw_vt *t = x->vts[k];
            if (t->ended)
                continue;
            if (t->s.phase == PH_COMPUTE && t->s.work_left_us && !t->draining) {
                uint64_t step = (uint64_t)MW_TICK_MS * share;
                t->s.work_left_us = t->s.work_left_us > step ? t->s.work_left_us - step : 0;
                next = now + MW_TICK_MS < next ? now + MW_TICK_MS : next;
            }
            s_step(x, t, o);
            if (t->ended)
                continue;
            if (!t->draining) { /* a VT at its end takes no checkpoint */
                if (now - t->last_ckpt >= (uint64_t)x->ckpt_ms)
                    s_checkpoint(x, t, now);
                uint64_t c = t->last_ckpt + (uint64_t)x->ckpt_ms;
                next = c < next ? c : next;
            }
            /* as exechost.c: the outbox again while it stays unacknowledged,
             * and the inputs asked for again by an incarnation that heard
             * nothing yet */
            uint64_t oldest = t->s.nout ? t->s.out[0].seq : 0;
            if (oldest != t->oldest_seen) {
                t->oldest_seen = oldest;
                t->oldest_since = now;
            } else if (now - t->oldest_since >= MW_STALE_MS) {
                t->oldest_since = now;
                if (oldest)
                    s_resend(x, t);
                if (!t->heard)
                    s_rec(x, PC_X_RESYNC, t->id, t->epoch, t->s.next_in, NULL);
            }
        }
        s_sweep(x);
    }
    return next;
}

void vs_mexec_dump(const vs_node *n)
{
    for (const vs_mexec *x = n->execs; x; x = x->next)
        for (int k = 0; !x->dead && k < x->nvts; k++) {
            const mw_vt *t = x->vts[k];
            vs_trace(n->w,
                     "%s: VT %llu epoch %u: round %u phase %u lock_req %llu next_in %llu, "
                     "%u inputs, %u outputs (first %llu), out_seq %llu",
                     n->ep, (unsigned long long)t->id, t->epoch, t->s.round, t->s.phase,
                     (unsigned long long)t->s.lock_req, (unsigned long long)t->s.next_in, t->s.nin,
                     t->s.nout, (unsigned long long)(t->s.nout ? t->s.out[0].seq : 0),
                     (unsigned long long)t->s.out_seq);
            for (uint32_t j = 0; j < t->s.nin; j++)
                vs_trace(n->w, "    input %llu kind %u from %llu ref %llu%s",
                         (unsigned long long)t->s.in[j].d, t->s.in[j].kind,
                         (unsigned long long)t->s.in[j].from, (unsigned long long)t->s.in[j].ref,
                         t->s.in[j].taken ? " taken" : "");
        }
}
