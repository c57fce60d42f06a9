/* msgmgr_private.h - what the message manager's files share: msgmgr.c
 * (streams, outputs, globals, the client) and msgmgr_direct.c (what it
 * keeps and does for direct messages between executors). Not used
 * outside the message manager.
 */
#ifndef PC_MSGMGR_PRIVATE_H
#define PC_MSGMGR_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "causal.h"
#include "msgmgr.h"

#define MM_COPIES 256 /* (worker, value) pairs remembered */
#define MM_HIST 8     /* earlier values of a variable kept while workers answer its reads */
#define MM_SUBS 32    /* workers subscribed to one variable */
#define MM_UNREAD 16  /* changes pushed to a worker with no read from it: it is dropped */

/* One logged input, with its channel: message cseq from VT cfrom, or
 * from the deployer itself (cfrom 0: everything but a VT's message). */
typedef struct mm_in {
    uint64_t d, from, ref;
    uint64_t cfrom, cseq;
    int32_t err;
    uint8_t kind, novalue;
    bool hashed; /* a global's value (a read or a grant): hash names it */
    uint8_t hash[PC_HASH_LEN];
    uint8_t *data;
    size_t len;
} mm_in;

/* A global value a worker has a copy of, as far as the deployer knows:
 * one it was sent whole, or one that went up through it in an unlock. */
typedef struct mm_copy {
    char host[PC_ENDPOINT_MAX];
    uint8_t hash[PC_HASH_LEN];
    uint64_t used; /* the least recently used pair goes first */
} mm_copy;

/* An output held back while its VT holds a lock (a message or a report). */
typedef struct mm_held {
    struct mm_held *next;
    uint8_t kind;
    uint64_t to;
    uint8_t *data;
    size_t len;
} mm_held;

/* Direct messages: a message an ended VT sent, which it can no longer
 * send again (its sender log ended with it), kept for its receiver. */
typedef struct mm_relay {
    uint64_t from, seq; /* its channel, and its number there */
    uint8_t *data;
    size_t len;
} mm_relay;

typedef struct mm_glob mm_glob;

/* Reads answered near the reader (msgmgr_reads.c): an earlier value of a
 * variable, and a worker subscribed to its changes. */
typedef struct mm_rev {
    uint64_t rev;
    uint8_t *val;
    size_t len;
} mm_rev;

typedef struct mm_sub {
    char host[PC_ENDPOINT_MAX];
    uint32_t unread;   /* changes pushed since a read of its VTs */
    uint64_t acked;    /* direct messages: the revision it acknowledged (W_GLOB_ACK) */
    uint64_t drop_rev; /* dropping (not 0): sent PC_GLOB_DROP at this revision, it stays */
} mm_sub;              /* until it acknowledges that */

/* Direct messages: a VT's commit (output seq) that changed a variable to
 * revision rev, which a subscriber has not acknowledged yet: the VT's
 * acknowledgement stops below seq, and with it its direct sends after
 * the commit (exechost_direct.c), so that no receiver gets a message
 * sent after it before its worker has the change. */
typedef struct mm_gwait {
    mm_glob *g;
    uint64_t rev, seq;
} mm_gwait;

typedef struct mm_vt {
    bool used, ended, synced;
    mm_in *log; /* log[i].d == first + i */
    size_t nlog, caplog;
    uint64_t first;    /* position of log[0] */
    uint64_t next_d;   /* the next position to give */
    uint64_t consumed; /* inputs up to here consumed (RT_OUT_CONSUMED) */
    uint64_t accepted; /* outputs taken, by number */
    uint64_t acked;    /* the acknowledgement last sent */
    uint64_t wait_on;  /* a receiver whose backlog holds the ack back (0: none) */
    mm_glob *lock;     /* the lock it holds (one at a time) */
    uint64_t lock_seq; /* output number of its LOCK */
    uint64_t grant_d;  /* input position of the grant */
    mm_held *held, **held_tail;
    uint64_t reports;       /* reports passed to the client */
    uint64_t gap_asked;     /* accepted + 1 when a resend was asked for (0: none pending) */
    uint64_t tick_consumed; /* consumed at the last tick */
    bool ack_due;           /* in mm->due: its acknowledgement goes at the flush */
    pc_cx_mark *chans;      /* per channel to it: the last number given */
    size_t nchans, capchans;
    mm_relay *relay; /* direct messages: ended senders' messages to it */
    size_t nrelay, caprelay;
    pc_cx_mark *bounced; /* direct messages: per receiver not there, the last number bounced */
    size_t nbounced, capbounced;
    pc_cx_mark *had; /* direct messages, once it ended: per channel to it, how far it had it */
    size_t nhad;
    mm_gwait *gw; /* direct messages: its commits subscribers have not all taken */
    size_t ngw, capgw;
    uint64_t det_wm;   /* its executors' determinants agree with the log up to here */
    uint64_t det_sent; /* the watermark its host was last told (W_STABLE) */
} mm_vt;

/* A waiter for a lock: a VT's LOCK, or a client's C_GSET. */
typedef struct mm_waiter {
    struct mm_waiter *next;
    uint64_t vt, seq; /* vt 0: the client, seq its request's */
    uint64_t version; /* a VT's put (lev_global_put): its version; 0: a lock */
    uint8_t *val;
    size_t len;
} mm_waiter;

struct mm_glob {
    mm_glob *next;
    char *name;
    uint8_t *val;
    size_t len;
    bool set;
    bool hashed; /* hash is that of val (computed when first needed) */
    uint8_t hash[PC_HASH_LEN];
    uint64_t version; /* the highest version a put applied (0: none) */
    uint64_t owner;   /* VT holding the lock, 0: free */
    mm_waiter *wq, **wtail;
    uint64_t rev;         /* raised by every change of its value */
    mm_rev hist[MM_HIST]; /* the values of earlier revisions, oldest first, kept while it */
    size_t nhist;         /* has subscribers: a worker may have answered from them */
    mm_sub *subs;         /* the workers answering its reads */
    size_t nsubs, capsubs;
};

struct pc_msgmgr {
    pc_mm_opts o;
    mm_vt *vts; /* index id - 2 */
    size_t nvts, capvts;
    mm_glob *globs;
    uint64_t delivered, dups, held_back;
    uint64_t puts, puts_stale; /* puts applied; those whose version was not above */
    uint64_t *due;             /* VTs whose acknowledgement goes at the next pc_mm_flush */
    size_t ndue, capdue;
    mm_copy copies[MM_COPIES];
    size_t ncopies;
    uint64_t copy_clock;
    uint64_t by_ref, ref_bytes, misses; /* inputs sent by reference, their value bytes; misses */
    uint64_t dets, det_bad;             /* determinants checked; those contradicting the log */
    uint64_t reads_near, reads_again;   /* reads the workers answered; those whose value was
                                         * gone here (their outbox was asked for again) */
    uint64_t pushes, push_bytes;        /* W_GLOB sent, the value bytes they carried whole */
    uint64_t subscribed, unsubscribed;
};

/* VT id's record, or NULL; its id. */
mm_vt *pc_mm_vt_of(pc_msgmgr *mm, uint64_t id);
static inline uint64_t pc_mm_id(const pc_msgmgr *mm, const mm_vt *v)
{
    return (uint64_t)(v - mm->vts) + 2;
}

/* The last number given on the channel from `from` (0: the deployer)
 * to v, or NULL on exhaustion. */
uint64_t *pc_mm_chan(mm_vt *v, uint64_t from);

/* Copies of global values at the workers (msgmgr.c): whether host has
 * the value of that hash, as far as the deployer knows (NULL: no); host
 * has it now; the hash of g's value. */
mm_copy *pc_mm_copy_find(pc_msgmgr *mm, const char *host, const uint8_t *hash);
void pc_mm_copy_note(pc_msgmgr *mm, const char *host, const uint8_t *hash);
const uint8_t *pc_mm_glob_hash(mm_glob *g);

/* Reads answered near the reader (msgmgr_reads.c, docs/GLOBAL_READS.md).
 * pc_mm_glob_reader: a read of g was answered for a VT on host (here or
 * there): host subscribes to g, and is sent its value, or stays one.
 * pc_mm_glob_keep: g's value is about to be replaced: kept as an earlier
 * revision while g has subscribers, else freed (g->val is NULL after).
 * pc_mm_glob_push: g changed (by output seq of writer, or NULL): every
 * subscriber is sent the change; with direct messages, the writer's
 * acknowledgement waits until each has taken it.
 * pc_mm_glob_at: g's value at revision rev if its hash is `hash` and its
 * length len, else NULL (*found says which).
 * pc_mm_glob_free_reads: frees g's earlier values and subscribers.
 * pc_mm_reads_from: v's new incarnation on host asked for its inputs:
 * the host may answer its reads numbered above what the deployer has. */
void pc_mm_glob_reader(pc_msgmgr *mm, mm_glob *g, const char *host);
void pc_mm_glob_keep(mm_glob *g);
void pc_mm_glob_push(pc_msgmgr *mm, mm_glob *g, mm_vt *writer, uint64_t seq);
const uint8_t *pc_mm_glob_at(mm_glob *g, uint64_t rev, const uint8_t *hash, size_t len,
                             bool *found);

/* msgmgr.c: the variable named `name`, or NULL. */
mm_glob *pc_mm_glob(pc_msgmgr *mm, const char *name);
void pc_mm_glob_free_reads(mm_glob *g);
void pc_mm_reads_from(pc_msgmgr *mm, mm_vt *v, const char *host, uint32_t epoch);

/* msgmgr.c: v's acknowledgement goes at the next pc_mm_flush. */
void pc_mm_send_ack(pc_msgmgr *mm, mm_vt *v);

/* Direct messages (msgmgr_direct.c): an ended sender's message kept for
 * v, to v's host. */
void pc_mm_send_relay(pc_msgmgr *mm, mm_vt *v, const mm_relay *e);

#endif
