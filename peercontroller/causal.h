/* causal.h - causal logging of one VC's messages at one of its executors
 * (causal.c; the wire forms in causal_wire.c): the part of direct messages between executors that
 * each executor runs (docs/DIRECT_MESSAGES.md has the protocol and why it is exact).
 *
 * For the VTs it hosts, an engine orders the inputs as they arrive (a
 * channel's messages in their order), hands them to its VTs in position
 * order, and gives every order it makes (a determinant) to the deployer;
 * it sends its VTs' messages to the executors of the receivers with the
 * determinants those executors are not known to have, learns those that
 * come with messages, keeps its VTs' sender logs until the receivers'
 * stable images consumed them, drops what a fenced incarnation sends, and
 * installs a VT to resume from its image at the positions the deployer
 * fixed.
 *
 * It decides and does no I/O: it is fed decoded messages and events, and
 * acts through the callbacks of pc_cx_io, called before the function that
 * caused them returns. The executors of a VC are numbered 0..63 (peers);
 * the deployer as a sender is VT 0. Not thread-safe: one thread per engine.
 */
#ifndef PC_CAUSAL_H
#define PC_CAUSAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define PC_CX_PEERS 64 /* executors of a VC at most */

/* Input `pos` of VT `vt` is message `seq` of the channel from `from` to
 * `vt`; the position was given by incarnation `epoch` of `vt`. */
typedef struct pc_cx_det {
    uint64_t vt, pos, from, seq;
    uint32_t epoch;
} pc_cx_det;

/* A message between VTs: number `seq` on the channel from -> to (from 1),
 * sent by incarnation from_epoch to incarnation to_epoch as the sender's
 * executor knew it. */
typedef struct pc_cx_msg {
    uint64_t from, to, seq;
    uint32_t from_epoch, to_epoch;
    pc_buf *data; /* may be NULL (empty) */
    /* a message that takes a position only once the channel from VT
     * after_from to its receiver has come to after_seq (0: at once): the
     * deployer's news of a VT's end waits for that VT's last message */
    uint64_t after_from, after_seq;
    bool held; /* in a sender log: sent only once released (pc_cx_release) */
} pc_cx_msg;

/* How far one channel goes: (peer VT, number). */
typedef struct pc_cx_mark {
    uint64_t vt, seq;
} pc_cx_mark;

/* What an image of a VT carries for the engine besides the runtime's
 * state: how far the VT consumed each channel to it, the last number it
 * sent on each channel from it, its sender log, and the determinants its
 * executor held not yet stable when it was taken (the image's state may
 * depend on any of them, so the deployer must have them all before it
 * resumes anything from the image). Arrays owned by whoever filled them
 * (pc_cx_image_clear for pc_cx_image_of's). */
typedef struct pc_cx_image {
    uint64_t vt;
    uint32_t epoch;
    uint64_t consumed; /* inputs consumed: the image's position */
    pc_cx_mark *cons, *chan;
    size_t ncons, nchan;
    pc_cx_msg *log;
    size_t nlog;
    pc_cx_det *dets; /* ignored by pc_cx_install */
    size_t ndets;
} pc_cx_image;

typedef struct pc_cx_io {
    void *ud;
    /* m to the executor `peer`, with determinants (n may be 0) */
    void (*send)(void *ud, int peer, const pc_cx_msg *m, const pc_cx_det *d, size_t n);
    /* determinants new here, for the deployer, in the order learnt */
    void (*dets)(void *ud, const pc_cx_det *d, size_t n);
    /* input `pos` of hosted VT m->to, in position order */
    void (*deliver)(void *ud, uint64_t pos, const pc_cx_msg *m);
    /* NULL, or flow control's news for the executor `peer` of VT `from`:
     * hosted VT `to` took the channel from -> to up to number `seq` */
    void (*credit)(void *ud, int peer, uint64_t from, uint64_t to, uint64_t seq);
} pc_cx_io;

/* Messages of a channel its receiver may not have taken yet, by default:
 * a sender waits beyond them (pc_cx_may_send). */
#define PC_CX_WINDOW 1024u

typedef struct pc_cx pc_cx;

/* An engine for executor `self` (0..PC_CX_PEERS-1); NULL on exhaustion.
 * io is copied. */
pc_cx *pc_cx_new(int self, const pc_cx_io *io);

/* Frees the engine and what it holds; accepts NULL, sets *cx_p NULL. */
void pc_cx_destroy(pc_cx **cx_p);

/* VT `vt` runs as incarnation `epoch` on executor `peer` (-1: not placed,
 * as in a fence). Older news is ignored. A hosted incarnation older than
 * `epoch` is dropped; the logs of the VTs here are sent again to a VT
 * newly placed. 0 or LEV_ENOMEM. */
int pc_cx_place(pc_cx *cx, uint64_t vt, uint32_t epoch, int peer);

/* Hosts incarnation im->epoch of im->vt from its image, with the
 * positions after the image the deployer fixed (fixed[i].pos ==
 * im->consumed + 1 + i, each next in its channel). Its sender log goes
 * out again, and every log here sends it what it holds for it. Takes the
 * log's buffers (im->log's references move to the engine); the caller
 * keeps the arrays. 0, LEV_EINVAL (fixed positions out of order, or an
 * epoch older than known), LEV_ENOMEM. */
int pc_cx_install(pc_cx *cx, pc_cx_image *im, const pc_cx_det *fixed, size_t n);

/* The deployer fixed positions of hosted VT `vt`, incarnation `epoch`,
 * after it was installed (as pc_cx_install's `fixed`; those it has
 * already must hold the same messages): the messages still to come take
 * them as they arrive. A fix for an incarnation before the hosted one is
 * ignored. 0; LEV_ENOVT (not hosted, or an incarnation still to be
 * installed); LEV_EINVAL (out of order, or a position that holds
 * another message: the protocol is broken, the VT's positions may be
 * partly fixed, and the caller fails it); LEV_ENOMEM. */
int pc_cx_fix(pc_cx *cx, uint64_t vt, uint32_t epoch, const pc_cx_det *fixed, size_t n);

/* This engine is executor `self` from now on (the deployer numbers the
 * executors of a VC): 0; LEV_EINVAL (out of range); LEV_EBUSY once it
 * hosts a VT or holds a determinant under another number. */
int pc_cx_set_self(pc_cx *cx, int self);

/* The incarnation of `vt` the engine hosts, or 0. */
uint32_t pc_cx_hosts(const pc_cx *cx, uint64_t vt);

/* Stops hosting `vt` (it ended, or moved): its state and log go. */
void pc_cx_remove(pc_cx *cx, uint64_t vt);

/* Hosted VT `vt` sends data to VT `to`: numbered, logged, sent to its
 * executor when known (else once it is placed). Takes the caller's
 * reference to data, whatever it returns. 0, LEV_ENOVT (vt not hosted),
 * LEV_ENOMEM. */
int pc_cx_send(pc_cx *cx, uint64_t vt, uint64_t to, pc_buf *data);

/* As pc_cx_send, the message held in the sender log, not sent, until
 * pc_cx_release: what a VT sends while it holds a lock goes out only
 * once the lock is given back (an image taken meanwhile keeps it held). */
int pc_cx_send_held(pc_cx *cx, uint64_t vt, uint64_t to, pc_buf *data);

/* The messages hosted VT `vt` holds go out, in their order. 0 or
 * LEV_ENOVT. */
int pc_cx_release(pc_cx *cx, uint64_t vt);

/* A message from executor `src` (-1: the deployer) with the
 * determinants it carries. The determinants are learnt whatever becomes
 * of the message; it is dropped when its sender is fenced, kept when it
 * is early for an incarnation still to be installed here, taken into its
 * position otherwise (new positions given in channel order), and inputs
 * are delivered as their turn comes. Takes the caller's reference to
 * m->data, whatever it returns. 0 or LEV_ENOMEM. */
int pc_cx_on_msg(pc_cx *cx, int src, const pc_cx_msg *m, const pc_cx_det *d, size_t n);

/* The first number on the channel from VT `from` to hosted VT `vt` that
 * the engine does not have: one a fixed position waits for, else the
 * first it has neither given a position nor holds waiting (0: `vt` is
 * not hosted). What its sender, if it is the deployer, sends again from
 * when a later one came first. */
uint64_t pc_cx_next_wanted(pc_cx *cx, uint64_t vt, uint64_t from);

/* How many messages hosted VT `vt` holds in its log until a release,
 * and the first of them in *first (when not NULL). */
size_t pc_cx_held(pc_cx *cx, uint64_t vt, pc_cx_msg *first);

/* True when hosted VT `vt` waits for a message at its next position,
 * which the deployer fixed: *at says which (vt, pos, from, seq). */
bool pc_cx_stalled(pc_cx *cx, uint64_t vt, pc_cx_det *at);

/* The executor `vt` runs on as far as the engine knows (-1: none, as
 * when it was never placed, is fenced or ended), and *epoch (if not
 * NULL) its incarnation (0: no news of it). */
int pc_cx_where(const pc_cx *cx, uint64_t vt, uint32_t *epoch);

/* The number of the last message hosted VT `vt` sent to `to` (0: none,
 * or `vt` not hosted). */
uint64_t pc_cx_sent_last(pc_cx *cx, uint64_t vt, uint64_t to);

/* The link to executor `peer` is new (it listens somewhere else, or
 * could not be reached until now): what the logs here hold for the VTs
 * placed there goes again (receivers drop what they have). */
void pc_cx_resend_peer(pc_cx *cx, int peer);

/* ---- Flow control: a channel's sender waits while `window` of its
 * messages are not known taken by the receiver. The receiver's engine
 * tells the sender's each time the receiver took a quarter window more
 * (io.credit), and again when the sender's link or place is new. A VT
 * installed from an image takes its channels as taken (it may overshoot
 * by a window once per recovery: a credit lost with an executor never
 * stalls a channel). ---- */

/* The window of every channel from now on (0: PC_CX_WINDOW). */
void pc_cx_set_window(pc_cx *cx, uint32_t window);

/* Whether hosted VT `vt` may send to `to` now. False when its window is
 * full: pc_cx_credit returns true once the VT may try again. */
bool pc_cx_may_send(pc_cx *cx, uint64_t vt, uint64_t to);

/* Hosted VT `vt` took the message numbered `seq` of the channel from
 * `from` (a VT) out of its stream. */
void pc_cx_taken(pc_cx *cx, uint64_t vt, uint64_t from, uint64_t seq);

/* Flow control's news (io.credit of `to`'s executor): VT `to` took the
 * channel from hosted VT `from` up to `seq`. True when `from` waited for
 * that room. */
bool pc_cx_credit(pc_cx *cx, uint64_t from, uint64_t to, uint64_t seq);

/* Hosted VT `vt` consumed its inputs up to `pos` (its image, if taken
 * now, stands there). */
void pc_cx_consumed(pc_cx *cx, uint64_t vt, uint64_t pos);

/* Fills *im for an image of hosted VT `vt` at the position it consumed
 * up to (references to the log's buffers included). 0, LEV_ENOVT,
 * LEV_ENOMEM. */
int pc_cx_image_of(pc_cx *cx, uint64_t vt, pc_cx_image *im);

/* Frees the arrays and references of an image pc_cx_image_of filled. */
void pc_cx_image_clear(pc_cx_image *im);

/* The deployer: the positions of `vt` are stable up to `pos`. */
void pc_cx_stable(pc_cx *cx, uint64_t vt, uint64_t pos);

/* The deployer: the stable image of `vt` consumed its channels this far;
 * what the logs here hold for it up to there goes. */
void pc_cx_trim(pc_cx *cx, uint64_t vt, const pc_cx_mark *cons, size_t n);

/* The same from its wire form (W_TRIM: a u32 count of (u64 vt, u64
 * seq)), read whole: 0; LEV_EINVAL with *why; LEV_ENOMEM. */
int pc_cx_trim_apply(pc_cx *cx, uint64_t vt, const void *bytes, size_t blen, const char **why);

/* ===================================================================
 * The wire form of a message between executors
 * =================================================================== */

/* Appends m, its determinants and its data to w: u64 from, to, seq; u32
 * from_epoch, to_epoch; a u32 count of determinants, each u64 vt, pos,
 * from, seq and u32 epoch; the data as a blob. Little-endian. */
void pc_cx_encode(pc_wbuf *w, const pc_cx_msg *m, const pc_cx_det *d, size_t n);

/* Reads what pc_cx_encode wrote, whole: m (its data left NULL), *data and
 * *len pointing inside `bytes`, *d (malloc'd, caller frees; NULL when
 * none) and *n. 0; LEV_EINVAL with *why naming the fault (truncated,
 * trailing bytes, a count the bytes cannot hold, a zero number, a
 * message to its sender, data over max_data); LEV_ENOMEM. */
int pc_cx_decode(const void *bytes, size_t blen, size_t max_data, pc_cx_msg *m, const void **data,
                 size_t *len, pc_cx_det **d, size_t *n, const char **why);

/* Flow control's news on the same links: u64 from, to, then a u64 0
 * where a message has its number (never 0), then u64 seq. */
void pc_cx_credit_encode(pc_wbuf *w, uint64_t from, uint64_t to, uint64_t seq);

/* 1 when bytes are a credit (read whole into *from, *to, *seq), 0 when
 * they are not (a message, for pc_cx_decode), LEV_EINVAL with *why when
 * they are one cut short or followed by bytes, or name VT 0 or a VT to
 * itself. */
int pc_cx_credit_decode(const void *bytes, size_t blen, uint64_t *from, uint64_t *to, uint64_t *seq,
                        const char **why);

/* Appends the engine's part of an image to w: u64 vt, u32 epoch, u64
 * consumed; the consumed marks and the channel marks, each a u32 count
 * of (u64 vt, u64 seq); a u32 count of logged messages, each as in a
 * message without determinants, then u8 held (0 or 1); a u32 count of
 * determinants. */
void pc_cx_image_encode(pc_wbuf *w, const pc_cx_image *im);

/* Reads what pc_cx_image_encode wrote, whole, into *im (arrays and
 * buffers its own: pc_cx_image_clear frees them). 0; LEV_EINVAL with *why
 * (truncated, trailing bytes, a count the bytes cannot hold, VT or
 * incarnation 0, a channel given twice or to the VT itself, a logged
 * message not from the VT, logged data over max_data, a bad
 * determinant), *im left empty; LEV_ENOMEM. */
int pc_cx_image_decode(const void *bytes, size_t blen, size_t max_data, pc_cx_image *im,
                       const char **why);

/* The fences of a recovery barrier (wire.h, W_FLUSH: a u32 count of
 * (u64 vt, u32 epoch)), learnt: each fenced VT not hosted here is not
 * placed anywhere from now on (one hosted here is stopped by its
 * CANCEL, which removes it). Then the placements the deployer sends
 * (W_PLACE: a u32 count of (u64 vt, u32 epoch, i32 executor, -1 for
 * none)), taken alike, except news of another incarnation of a VT
 * hosted here. Each list whole or nothing: 0; LEV_EINVAL with *why
 * (truncated, trailing bytes, a count the bytes cannot hold, an
 * executor out of range); LEV_ENOMEM. */
int pc_cx_fences_apply(pc_cx *cx, const void *bytes, size_t blen, const char **why);
int pc_cx_places_apply(pc_cx *cx, const void *bytes, size_t blen, const char **why);

/* A whole W_PLACE: this engine's number `self` (UINT64_MAX: none given;
 * pc_cx_set_self), then the placements. 0; LEV_EINVAL or LEV_EBUSY with
 * *why (a number out of range, or a second one); as pc_cx_places_apply. */
int pc_cx_place_news(pc_cx *cx, uint64_t self, const void *bytes, size_t blen, const char **why);

/* As pc_cx_image_decode, checking all of it but leaving the logged
 * messages' data out (their data NULL): what a holder and the deployer
 * need of an image (its consumed marks and determinants), without a
 * copy of its sender log. */
int pc_cx_image_peek(const void *bytes, size_t blen, size_t max_data, pc_cx_image *im,
                     const char **why);

/* A list of determinants as the deployer takes them: a u32 count, each
 * as in a message. */
void pc_cx_dets_encode(pc_wbuf *w, const pc_cx_det *d, size_t n);

/* Reads what pc_cx_dets_encode wrote, whole: *d (malloc'd, caller frees;
 * NULL when none) and *n. 0; LEV_EINVAL with *why (truncated, trailing
 * bytes, a count the bytes cannot hold, a bad determinant); LEV_ENOMEM. */
int pc_cx_dets_decode(const void *bytes, size_t blen, pc_cx_det **d, size_t *n, const char **why);

typedef struct pc_cx_stats {
    size_t unstable;  /* determinants held, not yet stable */
    size_t early;     /* messages waiting for an incarnation to be installed */
    uint64_t fenced;  /* messages dropped from fenced incarnations */
    uint64_t filled;  /* positions fixed by the deployer whose message came */
    uint64_t waits;   /* sends that waited for their receiver (flow control) */
    uint64_t credits; /* flow control's news sent */
} pc_cx_stats;

/* What the engine holds and did (for status and tests). */
pc_cx_stats pc_cx_stats_of(const pc_cx *cx);

#endif
