/* vtchan.h - the channels of a virtual thread (vtchan.c): its input
 * stream (what its host delivers, in order: messages, receive timeouts,
 * lock grants, snapshot reads, bounced sends, the ends of other VTs), its
 * outbox (outputs the host has not yet acknowledged: messages, reports,
 * lock, unlock and read requests, timeout requests), the numbers that make
 * both exactly-once, the blocking calls of lev_task.h over them, and the
 * portable form of that state which travels with the VT's images.
 *
 * Internal (not installed). The runtime knows nothing of networks: the
 * host (a levpeer executor, or a test) carries outputs to the VC's
 * deployer and delivers its answers back.
 *
 * The model
 * ---------
 * Inputs: the deployer numbers every input of a VT from 1 (rt_in.d) and
 * keeps them until no image that could be resumed needs them. The host
 * delivers them in that order (rt_ch_deliver); the VT consumes them only
 * through its own calls, so what a call returns depends only on the
 * stream, never on when entries arrived:
 *   lev_recv(from)  returns the first unconsumed entry of the stream that
 *                   is a message from `from` (any sender for LEV_ANY), a
 *                   bounce about `from`, or the RT_IN_TIMEOUT of this very
 *                   receive (matched by receive number); stale timeouts of
 *                   earlier receives are dropped as they are passed.
 *                   From a VT id X, an RT_IN_ENDED about X counts too: a
 *                   receive that reaches it before any entry it would take
 *                   returns its error (LEV_EFAILED: X failed; LEV_ENOVT: X
 *                   ended normally) with *from = X, and so does every
 *                   later receive from X. Messages X sent come before the
 *                   entry in the stream, so they are all received first.
 *                   LEV_ANY passes RT_IN_ENDED over: the end of one sender
 *                   says nothing about the others (nor the client);
 *   lock / read     take the RT_IN_GRANT / RT_IN_READ (or RT_IN_ERROR)
 *                   whose `ref` is the output number of their request;
 *                   a read may instead take the answer its host gave
 *                   ahead of the log (rt_ch_read_answer): its number then
 *                   joins the set of reads answered ahead, and the logged
 *                   RT_IN_READ for it is passed over on delivery (the set
 *                   travels in the channel state, so a VT resumed from an
 *                   image taken after the read does the same);
 *   RT_IN_VOID      (a grant the deployer took back) is passed over.
 * RT_IN_ENDED and RT_IN_VOID are taken off the stream on delivery; an
 * RT_IN_ENDED goes into the VT's set of ended VTs with its position, so
 * a receive from X compares that position with the entries it would take
 * and returns exactly what it would have returned had the entry stayed in
 * the stream (the set travels in the channel state, so a restored VT
 * answers alike). The deployer appends it to the stream of every VT live
 * when X ends; a VT added later is not told (its receive from X waits, its
 * send to X bounces).
 * A receive whose deadline passes does not time out by itself: it emits
 * RT_OUT_TIMEOUT for its receive number, and times out only when the
 * deployer's RT_IN_TIMEOUT comes back in the stream before any message
 * it would take — so the decision is in the stream and replays alike.
 *
 * Outputs: numbered from 1 per VT (rt_out.seq) in program order, kept in
 * the outbox until the host acknowledges them (rt_ch_ack, cumulative).
 * A VT resumed from an image re-sends its outbox (rt_ch_resend) and then
 * re-issues, by re-executing, the outputs after it with the same numbers;
 * the deployer drops every number it already has.
 *
 * Captures: a VT that holds a lock, or has a grant in its stream that it
 * has not taken yet, is not captured (rt_ch_capture_ok): its checkpoints
 * and stops wait until it unlocks. So an image never holds a lock: a VT
 * resumed from one either takes its grant again (the deployer keeps it
 * in the log, and the lock with the VT, while the VT recovers) or sends
 * its unlock again.
 *
 * Threads: rt_ch_deliver and rt_ch_ack may be called from any thread
 * while the VT runs (a mutex per VT); the output callback runs on the
 * VT's worker thread, inside the VT's call, and must not block for long.
 */
#ifndef VTCHAN_H
#define VTCHAN_H

#include <stddef.h>
#include <stdint.h>

#include "vt.h"

typedef enum rt_in_kind {
    RT_IN_MSG = 1,     /* a message from `from` (a VT id or LEV_CLIENT) */
    RT_IN_TIMEOUT = 2, /* the receive numbered `ref` may time out here */
    RT_IN_GRANT = 3,   /* the lock request numbered `ref` is granted: data is the value */
    RT_IN_READ = 4,    /* the read request numbered `ref`: data is the committed value */
    RT_IN_ERROR = 5,   /* the request numbered `ref` failed with `err` */
    RT_IN_BOUNCE = 6,  /* a message to `from` was not delivered (err: LEV_ENOVT) */
    RT_IN_VOID = 7,    /* an entry the deployer took back: passed over */
    RT_IN_ENDED = 8    /* VT `from` ended: err LEV_EFAILED (it failed) or LEV_ENOVT (done) */
} rt_in_kind;

typedef struct rt_in {
    uint64_t d;      /* position in the VT's input stream, from 1 */
    uint64_t from;   /* RT_IN_MSG: the sender; BOUNCE: the missing VT; ENDED: the VT that ended */
    uint64_t ref;    /* the request (output number) or receive number it answers; ENDED:
                      * the number of the ended VT's last message to this one on
                      * their channel (0: none), which comes before it */
    int32_t err;     /* RT_IN_ERROR, RT_IN_BOUNCE, RT_IN_ENDED: a LEV_E* code */
    uint8_t kind;    /* rt_in_kind */
    uint8_t novalue; /* GRANT/READ: the variable was never set (data NULL) */
    const void *data;
    size_t len;
} rt_in;

typedef enum rt_out_kind {
    RT_OUT_MSG = 1,      /* data to `to` */
    RT_OUT_REPORT = 2,   /* a partial result for the client */
    RT_OUT_LOCK = 3,     /* lock `name`; answered by RT_IN_GRANT ref = seq */
    RT_OUT_UNLOCK = 4,   /* set `name` to data (keep: `keep` 1) and unlock it */
    RT_OUT_READ = 5,     /* snapshot of `name`; answered by RT_IN_READ ref = seq */
    RT_OUT_TIMEOUT = 6,  /* receive `ref` passed its deadline: ask for RT_IN_TIMEOUT */
    RT_OUT_CONSUMED = 7, /* not numbered (seq 0), not kept: inputs up to `ref` are consumed */
    RT_OUT_PUT = 8       /* set `name` to data if version `ref` is above its own; no lock */
} rt_out_kind;

typedef struct rt_out {
    uint64_t seq;     /* the VT's output number, from 1 (0: RT_OUT_CONSUMED) */
    uint64_t to;      /* RT_OUT_MSG */
    uint64_t ref;     /* RT_OUT_TIMEOUT: receive number; RT_OUT_CONSUMED: input position;
                         RT_OUT_PUT: the value's version (not 0); RT_OUT_READ: the
                         revision its host answered it at (0: not answered), and data
                         the value it answered with */
    uint8_t kind;     /* rt_out_kind */
    uint8_t keep;     /* RT_OUT_UNLOCK: keep the value the lock gave */
    const char *name; /* LOCK, UNLOCK, READ, PUT: 1..LEV_NAME_MAX bytes, NUL-terminated */
    const void *data;
    size_t len;
} rt_out;

/* What the host of an executor's VTs provides (rt_exec_opts.chan).
 * out: called for each new output of a VT, and for each outbox entry on
 * rt_ch_resend; the pointers live until it returns. Its return value is
 * ignored: a host that cannot send keeps the entry in the outbox, which
 * its next resend carries. Limits of 0 take the defaults below. */
typedef struct rt_ch_host {
    void (*out)(rt_vt *vt, const rt_out *o, void *ud);
    void *ud;
    /* NULL, or the host takes the VT's messages itself (direct messages
     * between executors): lev_send hands each to send() instead of the
     * outbox, outside the VT's channel lock, with no output number, and
     * returns what send() returns (0, or a LEV_E* code with its detail);
     * send() must have logged the message when it returns 0, as nothing
     * sends it again. The window does not apply: send() returns
     * LEV_BLOCKED, having taken nothing, while its own flow control
     * holds the VT back, and calls rt_ch_wake_send once it may send. */
    int (*send)(rt_vt *vt, uint64_t to, const void *data, size_t len, void *ud);
    /* NULL, or called (outside the channel lock) when the VT takes a
     * message of another VT out of its stream: its sender and its ref
     * (as delivered; with direct messages, its number on the channel) */
    void (*taken)(rt_vt *vt, uint64_t from, uint64_t ref, void *ud);
    size_t max_msg;   /* bytes of one message; default RT_CH_MAX_MSG */
    size_t max_value; /* bytes of a global value; default RT_CH_MAX_VALUE */
    uint32_t window;  /* unacknowledged messages beyond which lev_send waits; default 256 */
} rt_ch_host;

#define RT_CH_MAX_MSG (16u << 20)
#define RT_CH_MAX_VALUE (1u << 20)

/* Appends an input to the VT's stream if in->d is the position it
 * expects (the data is copied), and wakes the VT if it waits. 0 when
 * appended; 1 for an entry it already has (d below, dropped); LEV_ERANGE
 * for a gap (d above: the host must deliver from rt_ch_next_in);
 * LEV_EINVAL for a malformed entry (the detail says which field);
 * LEV_ENOMEM. */
int rt_ch_deliver(rt_vt *vt, const rt_in *in);

/* The read numbered `seq` answered by the host ahead of its log, at
 * revision `rev` (not 0) of the variable, with its value (an unset
 * variable is never answered so): kept on the read's outbox entry, whose
 * resends carry it (rt_out.ref, data), until the host acknowledges the
 * read; the read returns it, unless the logged RT_IN_READ is in the
 * stream first (it holds the same value: the log records the answer the
 * host gave). 0 when kept; 1 when dropped (the VT does not wait in a
 * read numbered `seq`: it took an answer already, or there is no such
 * read; or its logged answer came); LEV_EINVAL, LEV_ENOMEM. */
int rt_ch_read_answer(rt_vt *vt, uint64_t seq, uint64_t rev, const void *data, size_t len);

/* The position of the next input the VT expects (1 for a new VT). */
uint64_t rt_ch_next_in(rt_vt *vt);

/* The host has outputs up to `seq`: drops them from the outbox and wakes
 * the VT if it waits for room in its window. */
void rt_ch_ack(rt_vt *vt, uint64_t seq);

/* The host's send() may take the VT's messages again (rt_ch_host.send):
 * a VT that waits in lev_send tries again. */
void rt_ch_wake_send(rt_vt *vt);

/* Calls the host's out() for every output still in the outbox, oldest
 * first (after a restore, before the VT runs again). */
void rt_ch_resend(rt_vt *vt);

/* The number of the oldest output still in the VT's outbox, 0 if it is
 * empty: a host that sees it unchanged for long re-sends the outbox (an
 * output or its acknowledgement was lost). */
uint64_t rt_ch_oldest_out(rt_vt *vt);

/* Whether the VT may be captured now (it holds no lock and has no grant
 * it has not taken). */
bool rt_ch_capture_ok(rt_vt *vt);

/* The channel state of the VT in portable form (little-endian, versioned;
 * unconsumed inputs, outbox, counters, the blocking call in progress with
 * its remaining time, the VTs known missing or ended, the reads answered
 * ahead of their log). Caller owns *buf
 * (free()). 0 or LEV_ENOMEM. */
int rt_ch_save(rt_vt *vt, uint8_t **buf, size_t *len);

/* Replaces the channel state of a VT that is not spawned with a saved
 * one (this version's form; version 2's, which had no set of reads
 * answered ahead; or version 1's, which had no set of ended VTs). 0, or LEV_EIMAGE for damaged
 * bytes (the detail names the field and offset), LEV_EVERSION, LEV_ENOMEM; the VT's state is
 * unchanged then. */
int rt_ch_load(rt_vt *vt, const uint8_t *buf, size_t len);

/* What the executor and the VT's own calls use (not for hosts). */

/* The monotonic time (rt_now_ns) at which the receive the VT waits in
 * passes its deadline, while it has not asked for its timeout; else 0.
 * The executor wakes a parked VT then. */
uint64_t rt_ch_deadline(rt_vt *vt);

/* As rt_ch_resend, through host h: for a VT that has ended and left its
 * executor, whose host still sends its outbox until it is acknowledged. */
void rt_ch_resend_via(rt_vt *vt, const rt_ch_host *h);

/* rt_exec_spawn: the VT now has host h; does the resend that
 * rt_ch_resend put off because the VT had none. */
void rt_ch_spawned(rt_vt *vt, const rt_ch_host *h);

/* Hands a report of the VT to its host as an RT_OUT_REPORT output (kept
 * until acknowledged). 0 or LEV_ENOMEM. */
int rt_ch_report(rt_vt *vt, const rt_ch_host *h, const void *buf, size_t len);

/* Frees the VT's channel state (rt_vt_destroy). */
void rt_ch_free(rt_vt *vt);

#endif
