/* vtchan.c - the channel state of a virtual thread (vtchan.h): its input
 * stream, outbox and counters in malloc memory under a mutex per VT,
 * delivery and acknowledgement by the host, the capture rule, and the
 * portable form of the state that travels with the VT's images.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bytes.h"
#include "clock.h"
#include "executor.h"
#include "lev_task.h"
#include "rt.h"
#include "vec.h"
#include "vtchan_private.h"

#define S_MAGIC 0x4843564Cu /* "LVCH" */
#define S_VERSION 3u        /* 2: the set of ended VTs; 3: the reads answered ahead of their log */
#define S_MAX_DATA (1u << 30) /* bound of one entry's bytes in the portable form */

/* ===================================================================
 * The state
 * =================================================================== */

static void s_in_free(rt_ch_in *e) { free(e->data); }

static void s_out_free(rt_ch_out *o)
{
    free(o->name);
    free(o->data);
}

/* Frees a channel state and everything it holds; accepts NULL. */
static void s_chan_free(rt_chan *ch)
{
    if (!ch)
        return;
    for (size_t i = 0; i < ch->nin; i++)
        s_in_free(&ch->in[i]);
    for (size_t i = 0; i < ch->nout; i++)
        s_out_free(&ch->out[i]);
    for (size_t i = 0; i < ch->nlocks; i++)
        free(ch->locks[i]);
    free(ch->in);
    free(ch->out);
    free(ch->locks);
    free(ch->missing);
    free(ch->ended);
    free(ch->ahead);
    pthread_cond_destroy(&ch->cv);
    pthread_mutex_destroy(&ch->mu);
    free(ch);
}

/* A new empty state (next input 1); NULL on exhaustion. */
static rt_chan *s_chan_new(void)
{
    rt_chan *ch = calloc(1, sizeof *ch);
    if (!ch)
        return NULL;
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&ch->cv, &a);
    pthread_condattr_destroy(&a);
    if (rc) {
        free(ch);
        return NULL;
    }
    pthread_mutex_init(&ch->mu, NULL);
    ch->next_d = 1;
    return ch;
}

rt_chan *rt_ch_get(rt_vt *vt)
{
    rt_chan *ch = __atomic_load_n(&vt->chan, __ATOMIC_ACQUIRE);
    if (ch)
        return ch;
    rt_chan *fresh = s_chan_new();
    if (!fresh)
        return NULL;
    rt_chan *expect = NULL;
    if (__atomic_compare_exchange_n(&vt->chan, &expect, fresh, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        return fresh;
    s_chan_free(fresh); /* another thread created it first */
    return expect;
}

void rt_ch_free(rt_vt *vt)
{
    s_chan_free(vt->chan);
    vt->chan = NULL;
}

const rt_ch_host *rt_ch_host_of(rt_vt *vt)
{
    rt_exec *ex = __atomic_load_n(&vt->exec, __ATOMIC_ACQUIRE);
    return ex ? rt_exec_chan(ex) : NULL;
}

/* Copies len bytes into malloc memory (NULL for 0 bytes); false on exhaustion. */
static bool s_dup(const void *p, size_t len, void **out)
{
    *out = NULL;
    if (!len)
        return true;
    *out = malloc(len);
    if (!*out)
        return false;
    memcpy(*out, p, len);
    return true;
}

int rt_ch_emit_locked(rt_chan *ch, rt_out *o)
{
    if (o->kind == RT_OUT_CONSUMED) {
        o->seq = 0;
        return 0;
    }
    if (RT_VEC_RESERVE(ch->out, ch->cout, ch->nout, 1))
        return rt_err(LEV_ENOMEM, "no memory for the outbox");
    rt_ch_out k = {
        .seq = ch->out_seq + 1, .to = o->to, .ref = o->ref, .kind = o->kind, .keep = o->keep};
    if (!s_dup(o->data, o->len, &k.data) ||
        (o->name && !s_dup(o->name, strlen(o->name) + 1, (void **)&k.name))) {
        s_out_free(&k);
        return rt_err(LEV_ENOMEM, "no memory for an output of %zu bytes", o->len);
    }
    k.len = o->len;
    ch->out[ch->nout++] = k;
    if (k.kind == RT_OUT_MSG)
        ch->nmsg++;
    o->seq = k.seq;
    ch->out_seq = k.seq;
    return 0;
}

/* ===================================================================
 * The host's side
 * =================================================================== */

/* Whether a delivered entry is well formed; names the bad field. */
static int s_check_in(const rt_in *in)
{
    if (in->kind < RT_IN_MSG || in->kind > RT_IN_ENDED)
        return rt_err(LEV_EINVAL, "rt_ch_deliver: unknown kind %u", in->kind);
    if (in->len && !in->data)
        return rt_err(LEV_EINVAL, "rt_ch_deliver: data NULL with len %zu", in->len);
    if (in->len > S_MAX_DATA)
        return rt_err(LEV_EINVAL, "rt_ch_deliver: len %zu above %u", in->len, S_MAX_DATA);
    if (in->kind == RT_IN_MSG && in->from == 0)
        return rt_err(LEV_EINVAL, "rt_ch_deliver: message from 0 (LEV_ANY)");
    if ((in->kind == RT_IN_ERROR || in->kind == RT_IN_BOUNCE || in->kind == RT_IN_ENDED) &&
        in->err >= 0)
        return rt_err(LEV_EINVAL, "rt_ch_deliver: err %d is not a LEV_E* code", (int)in->err);
    if (in->kind >= RT_IN_TIMEOUT && in->kind <= RT_IN_ERROR && in->ref == 0)
        return rt_err(LEV_EINVAL, "rt_ch_deliver: ref 0 of a kind-%u entry", in->kind);
    if (in->kind == RT_IN_ENDED && (in->from == LEV_ANY || in->from == LEV_CLIENT))
        return rt_err(LEV_EINVAL, "rt_ch_deliver: end of %llu, which is not a VT id",
                      (unsigned long long)in->from);
    return 0;
}

const rt_ch_end *rt_ch_ended_locked(const rt_chan *ch, uint64_t id)
{
    for (size_t i = 0; i < ch->nended; i++)
        if (ch->ended[i].vt == id)
            return &ch->ended[i];
    return NULL;
}

/* Under ch->mu: takes an RT_IN_ENDED into the set of ended VTs (a second
 * end of the same VT changes nothing). false on exhaustion. */
static bool s_note_end_locked(rt_chan *ch, const rt_in *in)
{
    if (rt_ch_ended_locked(ch, in->from))
        return true;
    if (RT_VEC_RESERVE(ch->ended, ch->cended, ch->nended, 1))
        return false;
    ch->ended[ch->nended++] = (rt_ch_end){.vt = in->from, .d = in->d, .err = in->err};
    return true;
}

/* Wakes the VT if a _try said it waits, and a thread waiting in a plain
 * call; called after ch->mu is released with what it decided. */
static void s_notify(rt_vt *vt, bool wake)
{
    if (wake)
        rt_exec_wake(vt);
}

int rt_ch_deliver(rt_vt *vt, const rt_in *in)
{
    if (!vt || !in)
        return rt_err(LEV_EINVAL, "rt_ch_deliver: NULL argument");
    if (in->d == 0)
        return rt_err(LEV_EINVAL, "rt_ch_deliver: position d 0 (positions start at 1)");
    int rc = s_check_in(in);
    if (rc)
        return rc;
    rt_chan *ch = rt_ch_get(vt);
    if (!ch)
        return rt_err(LEV_ENOMEM, "rt_ch_deliver: no memory for the channel state");
    pthread_mutex_lock(&ch->mu);
    if (in->d < ch->next_d) {
        pthread_mutex_unlock(&ch->mu);
        return 1;
    }
    if (in->d > ch->next_d) {
        uint64_t want = ch->next_d;
        pthread_mutex_unlock(&ch->mu);
        return rt_err(LEV_ERANGE, "rt_ch_deliver: position %llu, expected %llu",
                      (unsigned long long)in->d, (unsigned long long)want);
    }
    size_t ahead = ch->nahead;
    for (size_t i = 0; in->kind == RT_IN_READ && i < ch->nahead; i++)
        if (ch->ahead[i] == in->ref)
            ahead = i;
    if (ahead < ch->nahead) { /* the read took its answer from the host: passed over */
        ch->ahead[ahead] = ch->ahead[--ch->nahead];
    } else if (in->kind == RT_IN_ENDED) { /* into the set, with its position */
        if (!s_note_end_locked(ch, in)) {
            pthread_mutex_unlock(&ch->mu);
            return rt_err(LEV_ENOMEM, "rt_ch_deliver: no memory for the set of ended VTs");
        }
    } else if (in->kind != RT_IN_VOID) { /* a void entry is passed over at once */
        rt_ch_in e = {.d = in->d,
                      .from = in->from,
                      .ref = in->ref,
                      .err = in->err,
                      .kind = in->kind,
                      .novalue = in->novalue,
                      .len = in->len};
        if (RT_VEC_RESERVE(ch->in, ch->cin, ch->nin, 1) || !s_dup(in->data, in->len, &e.data)) {
            pthread_mutex_unlock(&ch->mu);
            return rt_err(LEV_ENOMEM, "rt_ch_deliver: no memory for %zu bytes", in->len);
        }
        ch->in[ch->nin++] = e;
    }
    ch->next_d++;
    ch->gen++;
    bool wake = ch->waiting;
    ch->waiting = false;
    pthread_cond_broadcast(&ch->cv);
    pthread_mutex_unlock(&ch->mu);
    s_notify(vt, wake);
    return 0;
}

uint64_t rt_ch_next_in(rt_vt *vt)
{
    rt_chan *ch = vt ? __atomic_load_n(&vt->chan, __ATOMIC_ACQUIRE) : NULL;
    if (!ch)
        return 1;
    pthread_mutex_lock(&ch->mu);
    uint64_t d = ch->next_d;
    pthread_mutex_unlock(&ch->mu);
    return d;
}

int rt_ch_read_answer(rt_vt *vt, uint64_t seq, uint64_t rev, const void *data, size_t len)
{
    if (!vt || !seq || !rev || (len && !data) || len > S_MAX_DATA)
        return rt_err(LEV_EINVAL, "rt_ch_read_answer: %s",
                      !vt                ? "NULL VT"
                      : !seq             ? "read number 0"
                      : !rev             ? "revision 0"
                      : len > S_MAX_DATA ? "value above the entry bound"
                                         : "data NULL with a length");
    rt_chan *ch = rt_ch_get(vt);
    if (!ch)
        return rt_err(LEV_ENOMEM, "rt_ch_read_answer: no memory for the channel state");
    pthread_mutex_lock(&ch->mu);
    rt_ch_out *o = NULL;
    for (size_t i = 0; i < ch->nout && !o; i++)
        if (ch->out[i].seq == seq)
            o = &ch->out[i];
    bool logged = false;
    for (size_t i = 0; i < ch->nin && !logged; i++)
        logged = ch->in[i].kind == RT_IN_READ && ch->in[i].ref == seq;
    void *copy = NULL;
    if (!o || o->kind != RT_OUT_READ || o->ref || logged || ch->bk != RT_BK_READ ||
        ch->bk_ref != seq) {
        pthread_mutex_unlock(&ch->mu);
        return 1; /* not the read the VT waits in, answered already, or its log came */
    }
    if (!s_dup(data, len, &copy)) {
        pthread_mutex_unlock(&ch->mu);
        return rt_err(LEV_ENOMEM, "rt_ch_read_answer: no memory for %zu bytes", len);
    }
    free(o->data);
    o->data = copy;
    o->len = len;
    o->ref = rev;
    ch->gen++;
    bool wake = ch->waiting && ch->bk == RT_BK_READ && ch->bk_ref == seq;
    if (wake)
        ch->waiting = false;
    pthread_cond_broadcast(&ch->cv);
    pthread_mutex_unlock(&ch->mu);
    s_notify(vt, wake);
    return 0;
}

void rt_ch_ack(rt_vt *vt, uint64_t seq)
{
    rt_chan *ch = vt ? rt_ch_get(vt) : NULL;
    if (!ch)
        return;
    pthread_mutex_lock(&ch->mu);
    size_t k = 0;
    while (k < ch->nout && ch->out[k].seq <= seq) {
        if (ch->out[k].kind == RT_OUT_MSG)
            ch->nmsg--;
        s_out_free(&ch->out[k]);
        k++;
    }
    bool wake = false;
    if (k) {
        memmove(ch->out, ch->out + k, (ch->nout - k) * sizeof *ch->out);
        ch->nout -= k;
        ch->gen++;
        wake = ch->waiting && ch->bk == RT_BK_SEND;
        if (wake)
            ch->waiting = false;
        pthread_cond_broadcast(&ch->cv);
    }
    pthread_mutex_unlock(&ch->mu);
    s_notify(vt, wake);
}

void rt_ch_wake_send(rt_vt *vt)
{
    rt_chan *ch = vt ? rt_ch_get(vt) : NULL;
    if (!ch)
        return;
    pthread_mutex_lock(&ch->mu);
    ch->gen++; /* a send between its try and its wait sees the change */
    bool wake = ch->waiting && ch->bk == RT_BK_SEND;
    if (wake)
        ch->waiting = false;
    pthread_cond_broadcast(&ch->cv);
    pthread_mutex_unlock(&ch->mu);
    s_notify(vt, wake);
}

/* Hands every outbox entry to h->out, oldest first: copies them under
 * the lock (an acknowledgement may come meanwhile), calls without it. */
static void s_resend_to(rt_vt *vt, rt_chan *ch, const rt_ch_host *h)
{
    pthread_mutex_lock(&ch->mu);
    ch->resend = false;
    size_t n = ch->nout;
    rt_ch_out *copy = n ? malloc(n * sizeof *copy) : NULL;
    size_t got = 0;
    for (size_t i = 0; copy && i < n; i++) {
        rt_ch_out c = ch->out[i];
        if (!s_dup(ch->out[i].data, c.len, &c.data) ||
            (c.name && !s_dup(ch->out[i].name, strlen(c.name) + 1, (void **)&c.name))) {
            free(c.data);
            break; /* out of memory: the rest goes with the next resend */
        }
        copy[got++] = c;
    }
    pthread_mutex_unlock(&ch->mu);
    for (size_t i = 0; i < got; i++) {
        rt_out o = {.seq = copy[i].seq,
                    .to = copy[i].to,
                    .ref = copy[i].ref,
                    .kind = copy[i].kind,
                    .keep = copy[i].keep,
                    .name = copy[i].name,
                    .data = copy[i].data,
                    .len = copy[i].len};
        h->out(vt, &o, h->ud);
        s_out_free(&copy[i]);
    }
    free(copy);
}

uint64_t rt_ch_oldest_out(rt_vt *vt)
{
    rt_chan *ch = vt ? __atomic_load_n(&vt->chan, __ATOMIC_ACQUIRE) : NULL;
    if (!ch)
        return 0;
    pthread_mutex_lock(&ch->mu);
    uint64_t seq = ch->nout ? ch->out[0].seq : 0;
    pthread_mutex_unlock(&ch->mu);
    return seq;
}

void rt_ch_resend(rt_vt *vt)
{
    rt_chan *ch = vt ? __atomic_load_n(&vt->chan, __ATOMIC_ACQUIRE) : NULL;
    if (!ch)
        return;
    const rt_ch_host *h = rt_ch_host_of(vt);
    if (!h) { /* not spawned yet: rt_exec_spawn resends */
        pthread_mutex_lock(&ch->mu);
        ch->resend = true;
        pthread_mutex_unlock(&ch->mu);
        return;
    }
    s_resend_to(vt, ch, h);
}

void rt_ch_resend_via(rt_vt *vt, const rt_ch_host *h)
{
    rt_chan *ch = vt ? __atomic_load_n(&vt->chan, __ATOMIC_ACQUIRE) : NULL;
    if (ch && h)
        s_resend_to(vt, ch, h);
}

void rt_ch_spawned(rt_vt *vt, const rt_ch_host *h)
{
    rt_chan *ch = __atomic_load_n(&vt->chan, __ATOMIC_ACQUIRE);
    if (!ch || !h)
        return;
    pthread_mutex_lock(&ch->mu);
    bool resend = ch->resend;
    pthread_mutex_unlock(&ch->mu);
    if (resend)
        s_resend_to(vt, ch, h);
}

bool rt_ch_capture_ok(rt_vt *vt)
{
    rt_chan *ch = vt ? __atomic_load_n(&vt->chan, __ATOMIC_ACQUIRE) : NULL;
    if (!ch)
        return true;
    pthread_mutex_lock(&ch->mu);
    bool ok = ch->nlocks == 0;
    for (size_t i = 0; ok && i < ch->nin; i++)
        if (ch->in[i].kind == RT_IN_GRANT)
            ok = false;
    pthread_mutex_unlock(&ch->mu);
    return ok;
}

uint64_t rt_ch_deadline(rt_vt *vt)
{
    rt_chan *ch = vt ? __atomic_load_n(&vt->chan, __ATOMIC_ACQUIRE) : NULL;
    if (!ch)
        return 0;
    pthread_mutex_lock(&ch->mu);
    uint64_t dl = ch->bk == RT_BK_RECV && !ch->bk_timeout ? ch->bk_dl_ns : 0;
    pthread_mutex_unlock(&ch->mu);
    return dl;
}

/* ===================================================================
 * Portable form
 * =================================================================== */

int rt_ch_save(rt_vt *vt, uint8_t **buf, size_t *len)
{
    if (!vt || !buf || !len)
        return rt_err(LEV_EINVAL, "rt_ch_save: NULL argument");
    rt_chan *ch = rt_ch_get(vt);
    if (!ch)
        return rt_err(LEV_ENOMEM, "rt_ch_save: no memory for the channel state");
    rt_wbuf b;
    rt_wbuf_init(&b);
    pthread_mutex_lock(&ch->mu);
    rt_put_u32(&b, S_MAGIC);
    rt_put_u32(&b, S_VERSION);
    rt_put_u64(&b, ch->next_d);
    rt_put_u64(&b, ch->out_seq);
    rt_put_u64(&b, ch->recv_n);
    rt_put_u32(&b, ch->since_consumed);
    rt_put_u8(&b, ch->bk);
    rt_put_u8(&b, ch->bk_timeout);
    rt_put_u64(&b, ch->bk_ref);
    rt_put_u64(&b, ch->bk_recv);
    uint64_t now = rt_now_ns(), left = UINT64_MAX; /* no deadline */
    if (ch->bk_dl_ns)
        left = ch->bk_dl_ns > now ? ch->bk_dl_ns - now : 0;
    rt_put_u64(&b, left);
    rt_put_u32(&b, (uint32_t)ch->nin);
    for (size_t i = 0; i < ch->nin; i++) {
        const rt_ch_in *e = &ch->in[i];
        rt_put_u64(&b, e->d);
        rt_put_u64(&b, e->from);
        rt_put_u64(&b, e->ref);
        rt_put_i32(&b, e->err);
        rt_put_u8(&b, e->kind);
        rt_put_u8(&b, e->novalue);
        rt_put_blob(&b, e->data, e->len);
    }
    rt_put_u32(&b, (uint32_t)ch->nout);
    for (size_t i = 0; i < ch->nout; i++) {
        const rt_ch_out *o = &ch->out[i];
        size_t nl = o->name ? strlen(o->name) : 0;
        rt_put_u64(&b, o->seq);
        rt_put_u64(&b, o->to);
        rt_put_u64(&b, o->ref);
        rt_put_u8(&b, o->kind);
        rt_put_u8(&b, o->keep);
        rt_put_u16(&b, (uint16_t)nl);
        rt_put_raw(&b, o->name, nl);
        rt_put_blob(&b, o->data, o->len);
    }
    rt_put_u32(&b, (uint32_t)ch->nlocks);
    for (size_t i = 0; i < ch->nlocks; i++) {
        size_t nl = strlen(ch->locks[i]);
        rt_put_u16(&b, (uint16_t)nl);
        rt_put_raw(&b, ch->locks[i], nl);
    }
    rt_put_u32(&b, (uint32_t)ch->nmissing);
    for (size_t i = 0; i < ch->nmissing; i++)
        rt_put_u64(&b, ch->missing[i]);
    rt_put_u32(&b, (uint32_t)ch->nended);
    for (size_t i = 0; i < ch->nended; i++) {
        rt_put_u64(&b, ch->ended[i].vt);
        rt_put_u64(&b, ch->ended[i].d);
        rt_put_i32(&b, ch->ended[i].err);
    }
    rt_put_u32(&b, (uint32_t)ch->nahead);
    for (size_t i = 0; i < ch->nahead; i++)
        rt_put_u64(&b, ch->ahead[i]);
    pthread_mutex_unlock(&ch->mu);
    if (b.err) {
        int err = b.err;
        rt_wbuf_free(&b);
        return rt_err(err, err == LEV_ENOMEM ? "rt_ch_save: no memory for the channel state's bytes"
                                             : "rt_ch_save: an entry is above 4 GiB");
    }
    *buf = b.data;
    *len = b.len;
    return 0;
}

/* A reader of the portable form: the codec's reader, and the error of its
 * first failure, which names the field and its offset. */
typedef struct s_rd {
    rt_rbuf b;
    int err;
} s_rd;

/* Fails the reader on `field`, which starts at offset `at`; the first
 * failure is the one reported. Returns the error. */
static int s_bad(s_rd *r, size_t at, const char *field, const char *why)
{
    rt_rbuf_fail(&r->b, why);
    if (!r->err)
        r->err = rt_err(LEV_EIMAGE, "channel state: %s at offset %zu %s", field, at, why);
    return r->err;
}

/* A little-endian integer of 1, 2, 4 or 8 bytes; 0 once the reader failed. */
static uint64_t s_get(s_rd *r, int bytes, const char *field)
{
    size_t at = r->b.off;
    uint64_t v = bytes == 1   ? rt_get_u8(&r->b)
                 : bytes == 2 ? rt_get_u16(&r->b)
                 : bytes == 4 ? rt_get_u32(&r->b)
                              : rt_get_u64(&r->b);
    if (r->b.bad)
        s_bad(r, at, field, "is cut off (the state is truncated)");
    return v;
}

/* A count whose entries take at least `each` bytes: bounded by what is left. */
static size_t s_get_count(s_rd *r, size_t each, const char *field)
{
    size_t at = r->b.off;
    uint64_t v = s_get(r, 4, field);
    if (!r->err && v > rt_rbuf_left(&r->b) / each) {
        s_bad(r, at, field, "is larger than the bytes that follow");
        return 0;
    }
    return (size_t)v;
}

/* Bytes of length len, bounded by `max`; malloc'd copy in *out (NULL for 0). */
static void s_get_bytes(s_rd *r, size_t len, size_t max, bool nul, const char *field, void **out)
{
    *out = NULL;
    if (r->err)
        return;
    size_t at = r->b.off;
    const void *p = NULL;
    if (len > max) {
        s_bad(r, at, field, "is above its limit");
        return;
    }
    if (!rt_get_raw(&r->b, &p, len)) {
        s_bad(r, at, field, "is cut off (the state is truncated)");
        return;
    }
    if (!len && !nul)
        return;
    char *c = malloc(len + (nul ? 1 : 0));
    if (!c) {
        rt_rbuf_fail(&r->b, "out of memory");
        r->err = rt_err(LEV_ENOMEM, "channel state: no memory for %s", field);
        return;
    }
    if (len)
        memcpy(c, p, len);
    if (nul)
        c[len] = 0;
    *out = c;
}

/* A name: 1..LEV_NAME_MAX bytes with no NUL. */
static char *s_get_name(s_rd *r, const char *lenfield, const char *field)
{
    size_t at = r->b.off;
    size_t nl = (size_t)s_get(r, 2, lenfield);
    if (!r->err && (nl == 0 || nl > LEV_NAME_MAX)) {
        s_bad(r, at, lenfield, "is not 1 to 255");
        return NULL;
    }
    void *name = NULL;
    size_t start = r->b.off;
    s_get_bytes(r, nl, LEV_NAME_MAX, true, field, &name);
    if (name && strlen(name) != nl) {
        s_bad(r, start, field, "holds a NUL byte");
        free(name);
        return NULL;
    }
    return name;
}

static void s_load_ins(s_rd *r, rt_chan *ch)
{
    size_t n = s_get_count(r, 34, "input count");
    if (r->err || !n)
        return;
    ch->in = calloc(n, sizeof *ch->in);
    if (!ch->in) {
        r->err = rt_err(LEV_ENOMEM, "channel state: no memory for %zu inputs", n);
        return;
    }
    ch->cin = n;
    uint64_t prev = 0;
    for (size_t i = 0; i < n && !r->err; i++) {
        rt_ch_in *e = &ch->in[i];
        size_t at = r->b.off;
        e->d = s_get(r, 8, "input position");
        if (!r->err && (e->d <= prev || e->d >= ch->next_d)) {
            s_bad(r, at, "input position", "is out of order or beyond the next one expected");
        }
        prev = e->d;
        e->from = s_get(r, 8, "input sender");
        e->ref = s_get(r, 8, "input ref");
        e->err = (int32_t)(uint32_t)s_get(r, 4, "input err");
        at = r->b.off;
        e->kind = (uint8_t)s_get(r, 1, "input kind");
        if (!r->err && (e->kind < RT_IN_MSG || e->kind >= RT_IN_VOID)) {
            s_bad(r, at, "input kind", "is unknown");
        }
        e->novalue = (uint8_t)s_get(r, 1, "input novalue");
        e->len = (size_t)s_get(r, 4, "input length");
        s_get_bytes(r, e->len, S_MAX_DATA, false, "input data", &e->data);
        ch->nin = i + 1;
    }
}

static void s_load_outs(s_rd *r, rt_chan *ch)
{
    size_t n = s_get_count(r, 32, "output count");
    if (r->err || !n)
        return;
    ch->out = calloc(n, sizeof *ch->out);
    if (!ch->out) {
        r->err = rt_err(LEV_ENOMEM, "channel state: no memory for %zu outputs", n);
        return;
    }
    ch->cout = n;
    uint64_t prev = 0;
    for (size_t i = 0; i < n && !r->err; i++) {
        rt_ch_out *o = &ch->out[i];
        size_t at = r->b.off;
        o->seq = s_get(r, 8, "output number");
        if (!r->err && (o->seq <= prev || o->seq > ch->out_seq)) {
            s_bad(r, at, "output number", "is out of order or beyond the output counter");
        }
        prev = o->seq;
        o->to = s_get(r, 8, "output destination");
        o->ref = s_get(r, 8, "output ref");
        at = r->b.off;
        o->kind = (uint8_t)s_get(r, 1, "output kind");
        if (!r->err &&
            (o->kind < RT_OUT_MSG || o->kind == RT_OUT_CONSUMED || o->kind > RT_OUT_PUT)) {
            s_bad(r, at, "output kind", "is unknown");
        }
        o->keep = (uint8_t)s_get(r, 1, "output keep");
        bool named = o->kind == RT_OUT_LOCK || o->kind == RT_OUT_UNLOCK || o->kind == RT_OUT_READ ||
                     o->kind == RT_OUT_PUT;
        at = r->b.off;
        if (named) {
            o->name = s_get_name(r, "output name length", "output name");
        } else if (s_get(r, 2, "output name length") && !r->err) {
            s_bad(r, at, "output name length", "is not 0 for an output without a name");
        }
        o->len = (size_t)s_get(r, 4, "output length");
        s_get_bytes(r, o->len, S_MAX_DATA, false, "output data", &o->data);
        if (o->kind == RT_OUT_MSG)
            ch->nmsg++;
        ch->nout = i + 1;
    }
}

/* The set of ended VTs (version 2): ids not LEV_ANY or LEV_CLIENT and
 * each once, positions rising and before the next input, LEV_E* codes. */
static void s_load_ended(s_rd *r, rt_chan *ch)
{
    size_t n = s_get_count(r, 20, "ended count");
    if (!r->err && n) {
        ch->ended = calloc(n, sizeof *ch->ended);
        if (!ch->ended)
            r->err = rt_err(LEV_ENOMEM, "channel state: no memory for %zu ended VTs", n);
        ch->cended = n;
    }
    uint64_t prev = 0;
    for (size_t i = 0; i < n && !r->err; i++) {
        rt_ch_end *e = &ch->ended[i];
        size_t at = r->b.off;
        e->vt = s_get(r, 8, "ended id");
        if (!r->err && (e->vt == LEV_ANY || e->vt == LEV_CLIENT || rt_ch_ended_locked(ch, e->vt))) {
            s_bad(r, at, "ended id", "is not a VT id, or is there twice");
        }
        at = r->b.off;
        e->d = s_get(r, 8, "ended position");
        if (!r->err && (e->d <= prev || e->d >= ch->next_d)) {
            s_bad(r, at, "ended position", "is out of order or beyond the next input expected");
        }
        prev = e->d;
        at = r->b.off;
        e->err = (int32_t)(uint32_t)s_get(r, 4, "ended err");
        if (!r->err && e->err >= 0) {
            s_bad(r, at, "ended err", "is not a LEV_E* code");
        }
        if (!r->err)
            ch->nended = i + 1;
    }
}

/* The reads answered ahead of their log (version 3): output numbers
 * not 0, each once, none beyond the output counter. */
static void s_load_ahead(s_rd *r, rt_chan *ch)
{
    size_t n = s_get_count(r, 8, "ahead count");
    if (!r->err && n) {
        ch->ahead = calloc(n, sizeof *ch->ahead);
        if (!ch->ahead)
            r->err = rt_err(LEV_ENOMEM, "channel state: no memory for %zu reads", n);
        ch->cahead = n;
    }
    for (size_t i = 0; i < n && !r->err; i++) {
        size_t at = r->b.off;
        uint64_t seq = s_get(r, 8, "ahead read number");
        bool twice = false;
        for (size_t k = 0; k < i; k++)
            twice |= ch->ahead[k] == seq;
        if (!r->err && (!seq || seq > ch->out_seq || twice)) {
            s_bad(r, at, "ahead read number", "is 0, beyond the output counter, or there twice");
        }
        if (!r->err)
            ch->ahead[ch->nahead++] = seq;
    }
}

static void s_load_sets(s_rd *r, rt_chan *ch)
{
    size_t n = s_get_count(r, 3, "lock count");
    if (!r->err && n) {
        ch->locks = calloc(n, sizeof *ch->locks);
        if (!ch->locks)
            r->err = rt_err(LEV_ENOMEM, "channel state: no memory for %zu locks", n);
        else
            ch->clocks = n;
    }
    for (size_t i = 0; i < n && !r->err; i++) {
        ch->locks[i] = s_get_name(r, "lock name length", "lock name");
        if (ch->locks[i])
            ch->nlocks = i + 1;
    }
    n = s_get_count(r, 8, "missing count");
    if (!r->err && n) {
        ch->missing = calloc(n, sizeof *ch->missing);
        if (!ch->missing)
            r->err = rt_err(LEV_ENOMEM, "channel state: no memory for %zu ids", n);
        else
            ch->cmissing = n;
    }
    for (size_t i = 0; i < n && !r->err; i++) {
        ch->missing[i] = s_get(r, 8, "missing id");
        ch->nmissing = i + 1;
    }
}

int rt_ch_load(rt_vt *vt, const uint8_t *buf, size_t len)
{
    if (!vt || (!buf && len))
        return rt_err(LEV_EINVAL, "rt_ch_load: NULL argument");
    if (__atomic_load_n(&vt->exec, __ATOMIC_ACQUIRE))
        return rt_err(LEV_EINVAL, "rt_ch_load: virtual thread %llu is spawned",
                      (unsigned long long)vt->id);
    s_rd r = {.err = 0};
    rt_rbuf_init(&r.b, buf, len);
    if (s_get(&r, 4, "magic") != S_MAGIC && !r.err)
        return s_bad(&r, 0, "magic", "is not that of a channel state");
    uint32_t ver = (uint32_t)s_get(&r, 4, "version");
    if (r.err)
        return r.err;
    if (ver < 1 || ver > S_VERSION)
        return rt_err(LEV_EVERSION,
                      "channel state: version %u at offset 4 (this runtime reads 1 to %u)", ver,
                      S_VERSION);
    rt_chan *ch = s_chan_new();
    if (!ch)
        return rt_err(LEV_ENOMEM, "rt_ch_load: no memory for the channel state");
    ch->next_d = s_get(&r, 8, "next input position");
    if (!r.err && ch->next_d == 0) {
        s_bad(&r, r.b.off - 8, "next input position", "is 0");
    }
    ch->out_seq = s_get(&r, 8, "output counter");
    ch->recv_n = s_get(&r, 8, "receive counter");
    ch->since_consumed = (uint32_t)s_get(&r, 4, "consumptions since report");
    size_t at = r.b.off;
    ch->bk = (uint8_t)s_get(&r, 1, "blocking call");
    if (!r.err && ch->bk > RT_BK_READ) {
        s_bad(&r, at, "blocking call", "is unknown");
    }
    ch->bk_timeout = (uint8_t)s_get(&r, 1, "timeout asked");
    ch->bk_ref = s_get(&r, 8, "request number");
    ch->bk_recv = s_get(&r, 8, "receive number");
    uint64_t left = s_get(&r, 8, "remaining time");
    if (!r.err && left != UINT64_MAX)
        ch->bk_dl_ns = rt_now_ns() + left;
    s_load_ins(&r, ch);
    s_load_outs(&r, ch);
    s_load_sets(&r, ch);
    if (ver >= 2)
        s_load_ended(&r, ch);
    if (ver >= 3)
        s_load_ahead(&r, ch);
    if (!r.err && !rt_rbuf_done(&r.b))
        s_bad(&r, r.b.off, "end", "is followed by extra bytes");
    if (r.err) {
        s_chan_free(ch);
        return r.err;
    }
    rt_chan *old = vt->chan;
    vt->chan = ch;
    s_chan_free(old);
    return 0;
}
