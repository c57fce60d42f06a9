/* msgmgr.h - the message manager and the global variable manager of one
 * virtual computer (msgmgr.c), kept by its deployer.
 *
 * Every input of a VT (the messages sent to it, its receive timeouts, its
 * lock grants and snapshot reads, bounces of what it sent to a VT that is
 * not there, the ends of the other VTs) is appended here to that VT's
 * input stream, numbered, logged and sent to the VT's current host; every
 * output of a VT (W_OUT) is taken once by its output number and
 * acknowledged. The logs live here, with the deployer, because the
 * deployer shares its fate with the client and not with any worker:
 * whichever workers and holders are lost, a VT resumed from an image gets
 * its inputs again from the position the image stands at (W_RESYNC), in
 * the same order, and so computes the same outputs, which are dropped as
 * duplicates. A log is trimmed up to the oldest image that could still be
 * resumed.
 *
 * Global variables live here too, for the same reason: one place orders
 * every lock, applies each update once (by the updater's output number)
 * and keeps a lock with a VT whose worker is lost until its new
 * incarnation unlocks it (the grant stays in its log, so whatever image
 * it resumes from, it takes the same grant again or sends the same
 * unlock again); a VT that fails for good releases it.
 *
 * Runs on the peer's network thread, like the deployer.
 */
#ifndef PC_MSGMGR_H
#define PC_MSGMGR_H

#include <stddef.h>
#include <stdint.h>

#include "causal.h"
#include "peer_private.h"
#include "resolver.h"

typedef struct pc_msgmgr pc_msgmgr;

typedef struct pc_mm_opts {
    pc_peer *p;
    uint64_t vc;
    const char *client;       /* the client's endpoint (reports go there); kept by the caller */
    const pc_resolver *where; /* where each VT runs; kept by the caller */
    size_t max_msg;           /* 0: RT_CH_MAX_MSG */
    size_t max_value;         /* 0: RT_CH_MAX_VALUE */
    uint32_t backlog;         /* unconsumed inputs of a receiver beyond which its
                               * senders' acknowledgements wait; 0: 1024 */
    size_t ref_min;           /* global values this large go by reference to a worker
                               * that has a copy (W_IN_REF); 0: 1024 */
    bool direct;              /* the VTs' messages go between executors: the streams
                               * here hold the deployer's own inputs, its channel 0,
                               * numbered by position in it; the executors give the
                               * positions in the VTs' streams */
    bool reads_near;          /* workers answer global reads from copies kept up to
                               * date (msgmgr_reads.c) */
} pc_mm_opts;

/* 0 or LEV_ENOMEM; caller owns *out. */
int pc_mm_new(pc_msgmgr **out, const pc_mm_opts *o);

/* Frees the logs and the variables; accepts NULL and sets *mm_p to NULL. */
void pc_mm_destroy(pc_msgmgr **mm_p);

/* VT `vt` exists from now on (ids are dense from 2). 0 or LEV_ENOMEM. */
int pc_mm_vt_add(pc_msgmgr *mm, uint64_t vt);

/* A new incarnation of `vt` was placed: nothing goes to it until its host
 * asks with W_RESYNC. A lock the old one held stays with the VT. */
void pc_mm_vt_lost(pc_msgmgr *mm, uint64_t vt);

/* `vt` ended with `err` (0: done; a LEV_E* code: failed): its log goes,
 * what is sent to it later bounces, a lock it held is released with its
 * value unchanged and goes to the next waiter (what it sent under the
 * lock is delivered if it is done, discarded if it failed), and every
 * other live VT gets an RT_IN_ENDED about it in its stream (err
 * LEV_EFAILED if it failed, LEV_ENOVT if it is done), after everything it
 * sent: their receives from it return that error instead of waiting. */
void pc_mm_vt_ended_with(pc_msgmgr *mm, uint64_t vt, int err);

/* Direct messages: VT `vt`, which ended, sent its last message to each
 * VT marks[i].vt numbered marks[i].seq on their channel (marks: n x (u64
 * vt, u64 seq), little-endian, as W_DONE carries them); the news of its
 * end waits for those. Call before pc_mm_vt_ended_with. */
void pc_mm_vt_last_sent(pc_msgmgr *mm, uint64_t vt, const void *marks, uint32_t n);

/* Direct messages: VT `vt`, which ended, had had each channel to it up
 * to had[i].seq (its engine's marks at its end): a sender resumed from an
 * image that sends one of those again is not told that `vt` ended (it
 * was received). 0 or LEV_ENOMEM (such a send is bounced). */
int pc_mm_vt_had(pc_msgmgr *mm, uint64_t vt, const pc_cx_mark *had, size_t n);

/* Direct messages: what VT `vt`, which ended, still held in its sender
 * log (log[n], its messages' data shared): kept for each receiver, sent
 * to it now and at each of its resyncs (on vt's channel, with vt's
 * numbers; its executor drops what it has), as a receiver resumed from
 * an image older than them needs them and no one else has them. Kept
 * while the receiver lives. 0 or LEV_ENOMEM (some are not kept). */
int pc_mm_vt_left(pc_msgmgr *mm, uint64_t vt, const pc_cx_msg *log, size_t n);

/* Direct messages: whether message seq of VT `from`, which ended, to VT
 * `to` is kept here for `to` (pc_mm_vt_left). */
bool pc_mm_vt_kept(const pc_msgmgr *mm, uint64_t to, uint64_t from, uint64_t seq);

/* pc_mm_vt_ended_with(mm, vt, 0): a deployer that does not say how the
 * VT ended has it reported as done (LEV_ENOVT to its peers). */
void pc_mm_vt_ended(pc_msgmgr *mm, uint64_t vt);

/* Whether `vt` can still start over from its beginning: its log holds
 * every input from the first. */
bool pc_mm_replayable(const pc_msgmgr *mm, uint64_t vt);

/* No image older than input position `floor` will be resumed: the log
 * before it goes. */
void pc_mm_trim(pc_msgmgr *mm, uint64_t vt, uint64_t floor);

/* Direct messages: the oldest image of `vt` that could still be resumed
 * consumed each channel this far (marks: n x (u64 vt, u64 seq),
 * little-endian, as H_HELD carries them): the deployer's channel is
 * trimmed to there, and so are the ended senders' messages kept for
 * it. */
void pc_mm_trim_marks(pc_msgmgr *mm, uint64_t vt, const void *marks, uint32_t n);

/* W_OUT and W_RESYNC of the current incarnation (with direct messages, a
 * W_OUT of a message with no output number, seq 0, names a receiver its
 * executor knows no place for, and the message's number on their channel
 * in `ref`: bounced if the receiver is not there) (the deployer checked
 * the epoch and the host). A resync returns LEV_EFAILED when the inputs
 * the incarnation needs were trimmed (it restarted from its beginning
 * after every image was lost): it cannot be replayed and must fail. */
void pc_mm_on_out(pc_msgmgr *mm, pc_msg *m);
int pc_mm_on_resync(pc_msgmgr *mm, pc_msg *m);

/* W_IN_MISS: the host had no copy of the value an input named by its
 * hash (W_IN_REF); that input goes again whole, and the deployer no
 * longer counts on that copy. */
void pc_mm_on_miss(pc_msgmgr *mm, pc_msg *m);

/* Global reads near the reader (msgmgr_reads.c), direct messages:
 * W_GLOB_ACK from a subscriber (the deployer checked it is a worker of
 * the VC); the writers whose acknowledgement waited for it get it. */
void pc_mm_on_glob_ack(pc_msgmgr *mm, pc_msg *m);

/* The worker at host is gone from the VC: its subscriptions go, and no
 * writer waits for it any more. */
void pc_mm_host_gone(pc_msgmgr *mm, const char *host);

/* W_DET's determinants, from the worker at `from`, checked against the log
 * (a contradiction is logged and counted: the executors' ordering of
 * inputs and the deployer's disagree); how far they agree goes back to
 * the host at once (W_STABLE). */
void pc_mm_on_dets(pc_msgmgr *mm, const char *from, const pc_cx_det *d, size_t n);

/* The client's C_SEND, C_GSET and C_GGET: each is answered (now, or for
 * a C_GSET that waits for a lock, once it has it). */
void pc_mm_client(pc_msgmgr *mm, pc_msg *m);

/* Sends the acknowledgements of the outputs taken since the last flush,
 * one per VT. The peer calls it once it has handled what its socket
 * held, so that a burst of outputs gets one acknowledgement and not one
 * each; accepts NULL. */
void pc_mm_flush(pc_msgmgr *mm);

/* Every second or so (the deployer's tick): repairs what a dropped
 * message may have left stuck. A VT that consumed nothing since the last
 * tick though it has inputs gets its newest input again (a gap makes its
 * host ask for the rest); every synced VT gets its acknowledgement again;
 * one whose outputs stopped at a gap is asked again to re-send them. */
void pc_mm_tick(pc_msgmgr *mm);

/* The largest message a VT of the VC may send, in bytes. */
size_t pc_mm_max_msg(const pc_msgmgr *mm);

/* Messages delivered to VTs so far (from VTs and the client), each once. */
uint64_t pc_mm_delivered(const pc_msgmgr *mm);

/* Appends the manager's part of the status document: "globals":[...]
 * and per-VT fields through pc_mm_vt_status. */
void pc_mm_status(pc_msgmgr *mm, pc_wbuf *j);
void pc_mm_vt_status(pc_msgmgr *mm, uint64_t vt, pc_wbuf *j);

#endif
