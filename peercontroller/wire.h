/* wire.h - Leverage's one wire protocol: the fixed little-endian header
 * frame every message starts with, its bounds-checked codec, the message
 * types, and the payloads more than one part reads (wire.c). Payloads are
 * written and read with the runtime's byte codec (runtime/bytes.h), under
 * the names pc_wbuf and pc_rbuf.
 *
 * The shared wire header: internal (not installed), included by the peer
 * controller and by libleverage's client (leverage/client_int.h), which
 * includes no other header of peercontroller/ but embed.h. It depends
 * only on the runtime's byte codec, so the include graph stays
 * leverage/ -> peercontroller/{wire,embed}.h -> runtime/.
 *
 * A message is multipart: the 40-byte header frame, then zero or more
 * opaque payload frames whose sizes add up to hdr.len. Over ZeroMQ each
 * part is a frame; over an executor channel (chan.h) the parts follow
 * each other in one stream record. Structured payloads (frame 1) are
 * written with pc_wbuf and read with pc_rbuf; bulk data (a module, an
 * image) travels as its own frame, as it is.
 *
 * Header layout (all little-endian):
 *   0 magic u32 "LEVW"   4 version u16   6 type u16   8 vc u64
 *  16 vt u64            24 epoch u32    28 len u32   32 seq u64
 */
#ifndef PC_WIRE_H
#define PC_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bytes.h"

#define PC_WIRE_MAGIC 0x5756454Cu /* "LEVW" read little-endian */
#define PC_WIRE_VERSION 1u
#define PC_HDR_LEN 40u
#define PC_ENDPOINT_MAX 128u /* bytes of an endpoint, NUL included */
#define PC_HASH_LEN 32u      /* BLAKE2b-256 of a module's bytes */
#define PC_PATCH_BLOCK 4096u /* bytes of a block of an image patch (H_PATCH) */

/* Message types. Ranges: 0x01xx membership (participation manager),
 * 0x02xx client <-> its peer (deployer), 0x03xx deployer <-> worker,
 * 0x04xx checkpoint holders, 0x05xx status, 0x06xx worker <-> executor
 * process. Payload layouts are written next to each type: s = string
 * (u32 length + bytes), b = blob (u32 length + bytes), iN/uN = integer,
 * h = PC_HASH_LEN raw bytes, F = a separate frame. An image travels in
 * an envelope (envelope.h: the VT's channel state, then the image), with
 * "next_in", the position in the VT's input stream the image stands at:
 * the deployer trims its input log by it, and a VT resumed from the image
 * asks for its inputs from there (W_RESYNC). */
typedef enum pc_type {
    /* membership: payloads are membership.c's own */
    PC_M_PING = 0x0101,
    PC_M_ACK = 0x0102,
    PC_M_PING_REQ = 0x0103,
    PC_M_JOIN = 0x0104,
    PC_M_SYNC = 0x0105,
    PC_M_GOSSIP = 0x0106,

    /* client -> peer; every request carries a seq that the reply repeats */
    PC_C_OPEN = 0x0201,   /* i32 workers, i32 checkpoint_ms, i32 replicas, u64 digest,
                           * h hash; F module bytes -> OPENED (hdr.vc) | ERROR */
    PC_C_START = 0x0202,  /* hdr.vc; s task, b arg -> STARTED (hdr.vt) | ERROR */
    PC_C_CLOSE = 0x0203,  /* hdr.vc -> CLOSED */
    PC_C_PING = 0x0204,   /* -> PONG */
    PC_C_OPENED = 0x0281, /* hdr.vc */
    PC_C_STARTED = 0x0282,
    PC_C_CLOSED = 0x0283,
    PC_C_PONG = 0x0284,
    PC_C_ERROR = 0x0285,  /* i32 err, s detail */
    PC_C_RESULT = 0x0286, /* hdr.vc, hdr.vt; i32 err, s detail, b result */
    PC_C_REPORT = 0x0287, /* hdr.vc, hdr.vt; b report */
    PC_C_SEND = 0x0205,   /* hdr.vc, hdr.vt (to); b message -> SENT | ERROR */
    PC_C_GSET = 0x0206,   /* hdr.vc; s name, b value -> GSET_OK | ERROR */
    PC_C_GGET = 0x0207,   /* hdr.vc; s name -> GVALUE | ERROR */
    PC_C_SENT = 0x0288,
    PC_C_GSET_OK = 0x0289,
    PC_C_GVALUE = 0x028A,      /* u8 set (0: never set), b value */
    PC_C_STATS = 0x0208,       /* hdr.vc -> STATS_REPLY | ERROR */
    PC_C_STATS_REPLY = 0x028B, /* the VC's counts (pc_put_vc_stats): u32 peers, u32 cores,
                                * u32 vts, u32 vts_ended, u64 checkpoints, u64 resumes,
                                * u64 restarts, u64 lost_peers, u64 messages */

    /* deployer <-> worker */
    PC_W_ENROL = 0x0301,     /* hdr.vc; s deployer, h module hash, u64 module size, s arch,
                              * i32 checkpoint_ms, u64 mesh id, u8 flags (PC_ENROL_DIRECT),
                              * the VC's limits: u64 bytes of a VT's state, of a message,
                              * of a global value -> ENROLLED */
    PC_W_ENROLLED = 0x0302,  /* i32 err (LEV_EPEER: another mesh), u8 has module, u32 cores */
    PC_W_MODULE = 0x0303,    /* hdr.vc; h hash; F module bytes -> MODULE_OK */
    PC_W_MODULE_OK = 0x0304, /* i32 err, s detail */
    PC_W_RUN = 0x0305,       /* hdr.vc/vt/epoch; s task, b arg, u32 n, n x s holder */
    PC_W_RESUME = 0x0306,    /* hdr.vc/vt/epoch; u32 n, n x s holder, u64 next_in; F image */
    PC_W_DONE = 0x0307,      /* worker -> deployer: hdr.vc/vt/epoch; i32 err, s detail, b result,
                              * M? (direct messages) the number of its last message to each
                              * VT it sent to, b? the engine's part of its state (causal.h,
                              * pc_cx_image: its sender log) */
    PC_W_REPORT = 0x0308,    /* no longer sent: reports are outputs (W_OUT); number kept */
    PC_W_STOPPED = 0x0309,   /* hdr.vc/vt/epoch; i32 err, u64 next_in; F image (migration) */
    PC_W_FENCE = 0x030A,     /* hdr.vc/vt/epoch: stop copies older than epoch; vt 0: the VC */
    PC_W_CLOSE = 0x030B,     /* hdr.vc: the VC is closed */
    PC_W_LOST = 0x030C,      /* hdr.vc; u64 culprit (0: none), i32 signal, u32 n, n x (u64 vt,
                              * u32 epoch): the executor of the VC died */
    PC_W_PLACE_ERR = 0x030D, /* hdr.vc/vt/epoch; i32 err, s detail: could not run it here */
    PC_W_HOLDERS = 0x030E,   /* deployer -> worker: hdr.vc/vt; u32 n, n x s holder */
    /* a VT's channels (runtime/vtchan.h), relayed by the worker to and from its executor */
    PC_W_OUT = 0x030F,     /* worker -> deployer: hdr.vc/vt/epoch, seq = output number (0 for
                            * CONSUMED); u8 kind, u64 to, u64 ref, u8 keep, s name, b data;
                            * a READ's ref is the revision it was answered at by the worker
                            * (0: not answered), its data the value, or with keep 1 the
                            * value's h BLAKE2b-256 and u32 length */
    PC_W_ACK = 0x0310,     /* deployer -> worker: hdr.vc/vt/epoch, seq = outputs up to here;
                            * u8 resend (1: an output after seq was lost: send the outbox
                            * again), or no payload */
    PC_W_IN = 0x0311,      /* deployer -> worker: hdr.vc/vt/epoch, seq = input position; u8 kind,
                            * u8 novalue, u64 from, u64 ref, i32 err, u64 cfrom, u64 cseq
                            * (its channel: message cseq from VT cfrom, or from the deployer
                            * when cfrom is 0), b data; an RT_IN_ENDED's ref is the number
                            * of the ended VT's last message on its channel to this one,
                            * which the executor's engine takes first */
    PC_W_RESYNC = 0x0312,  /* worker -> deployer: hdr.vc/vt/epoch, seq = next input position
                            * wanted (after a resume, or on a gap); outputs are re-sent after */
    PC_W_UNKNOWN = 0x0313, /* worker -> deployer: hdr.vc: this worker does not serve that VC
                            * (it restarted, or dropped it): the VC's VTs there are lost */
    PC_W_MIGRATE = 0x0314, /* deployer -> worker: hdr.vc/vt/epoch: capture and stop the VT and
                            * hand it over (W_STOPPED), to be resumed on a less loaded worker */
    PC_W_FULL = 0x0315,    /* holder -> worker: hdr.vc/vt/epoch, seq = the patch's image number:
                            * a patch (H_PATCH) found no base here: send whole images */
    PC_W_IN_REF = 0x0316,  /* deployer -> worker: as W_IN, a global's value named by its hash,
                            * which the worker has a copy of: u8 kind, u8 novalue, u64 from,
                            * u64 ref, i32 err, u64 cfrom, u64 cseq, h BLAKE2b-256 of the
                            * value, u32 its length */
    PC_W_IN_MISS = 0x0317, /* worker -> deployer: hdr.vc/vt/epoch, seq = the input's position:
                            * no copy of the value its W_IN_REF named: send it whole */
    PC_W_DET = 0x0318,     /* worker -> deployer: hdr.vc; D determinants: the positions the
                            * executor gave its VTs' inputs (causal.h) */
    PC_W_STABLE = 0x0319,  /* deployer -> worker: hdr.vc/vt/epoch, seq = the VT's determinants
                            * are stable up to this position */
    PC_W_FLUSH = 0x031A,   /* deployer -> worker: hdr.vc, seq = recovery barrier number; V the
                            * fenced VTs, each with its new incarnation: answer W_FLUSHED once
                            * every determinant the VC's executor holds is on its way */
    PC_W_FLUSHED = 0x031B, /* worker -> deployer: hdr.vc, seq = the barrier number answered */
    PC_W_FIX = 0x031C,     /* deployer -> worker: hdr.vc/vt/epoch; D the positions after its
                            * image this incarnation must take again, in order (causal.h) */
    PC_W_PLACE = 0x031D,   /* deployer -> worker: hdr.vc, seq = the worker's executor number
                            * in the VC (PC_XNO_NONE: none), epoch = its incarnation; P where
                            * VTs run: each VT's incarnation and the number of its executor
                            * (-1: none, as when fenced or ended) */
    PC_W_TRIM = 0x031E,    /* deployer -> worker: hdr.vc/vt; M how far the VT's stable image
                            * consumed each channel: sender logs drop what it consumed */
    PC_W_LINK = 0x031F,    /* worker -> deployer: hdr.vc, seq = executor number, epoch = its
                            * incarnation; s where its executor receives direct messages */
    PC_W_LINKS = 0x0320,   /* deployer -> worker: hdr.vc; L where each executor of the VC
                            * receives (entry k: executor k; "": none) */
    PC_W_STALL = 0x0321,   /* worker -> deployer: hdr.vc/vt/epoch; D the fixed position the VT
                            * has waited at since the executor's last look (X_STALL) */
    /* global reads answered near the reader (docs/GLOBAL_READS.md) */
    PC_W_GLOB = 0x0322,       /* deployer -> worker: hdr.vc, seq = the variable's revision;
                               * s name, u8 form (PC_GLOB_*), b by form: the value (WHOLE),
                               * the BLAKE2b-256 and u32 length of a value the worker has
                               * (REF), nothing (the others) */
    PC_W_READS_FROM = 0x0323, /* deployer -> worker: hdr.vc/vt/epoch, seq = outputs of the VT
                               * the deployer has when its incarnation resyncs: the worker
                               * answers only its reads numbered above */
    PC_W_GLOB_ACK = 0x0324,   /* worker -> deployer, direct messages: hdr.vc, seq = the
                               * revision of a W_GLOB taken; s name */

    /* checkpoint holders */
    PC_H_HOLD = 0x0401,    /* worker -> holder: hdr.vc/vt/epoch/seq; s deployer, u64 next_in;
                            * F image */
    PC_H_HELD = 0x0402,    /* holder -> deployer: hdr.vc/vt/epoch/seq; u64 size, u64 next_in,
                            * M how far the image consumed each channel, D the determinants
                            * its executor held (causal.h, pc_cx_image) */
    PC_H_SEND = 0x0403,    /* deployer -> holder: hdr.vc/vt/epoch (new); s target worker,
                            * u32 n, n x s holder */
    PC_H_MISSING = 0x0404, /* holder -> deployer: hdr.vc/vt: no image */
    PC_H_DROP = 0x0405,    /* deployer -> holder: hdr.vc/vt (vt 0: the whole VC) */
    PC_H_PATCH = 0x0406,   /* worker -> holder: as H_HOLD, the image given as its differences
                            * from image base_seq of the same epoch: s deployer, u64 next_in,
                            * u64 base_seq, u64 image length; F patch (u32 n, n x u32 block,
                            * then the n blocks' bytes; PC_PATCH_BLOCK bytes a block, the
                            * image's last block as long as it is) */
    PC_H_LOG = 0x0407,     /* deployer -> holder: hdr.vc/vt: the VT failed for good (direct
                            * messages): the causal state of the image held -> H_LOGGED */
    PC_H_LOGGED = 0x0408,  /* holder -> deployer: hdr.vc/vt/epoch/seq of the image; b its
                            * causal state (causal.h, pc_cx_image; empty: no image held) */

    /* status */
    PC_S_STATUS = 0x0501,       /* -> STATUS_REPLY */
    PC_S_STATUS_REPLY = 0x0502, /* s JSON document (peercontroller/README.md) */

    /* worker daemon <-> executor process (chan.h) */
    PC_X_READY = 0x0601,      /* exec -> daemon: i32 pid */
    PC_X_MODULE = 0x0602,     /* h hash, u64 digest, b module bytes -> MODULE_OK */
    PC_X_MODULE_OK = 0x0603,  /* i32 err, s detail */
    PC_X_RUN = 0x0604,        /* hdr.vt/epoch; s task, b arg */
    PC_X_RESUME = 0x0605,     /* hdr.vt/epoch, seq = next_in; b image */
    PC_X_IMAGE = 0x0606,      /* exec -> daemon: hdr.vt/epoch, seq = next_in; b image (periodic) */
    PC_X_DONE = 0x0607,       /* exec -> daemon: as W_DONE */
    PC_X_REPORT = 0x0608,     /* no longer sent: reports are outputs (X_OUT); number kept */
    PC_X_STOP = 0x0609,       /* daemon -> exec: capture and stop hdr.vt (0: every VT) */
    PC_X_STOPPED = 0x060A,    /* exec -> daemon: hdr.vt/epoch, seq = next_in; i32 err, s detail,
                               * b image */
    PC_X_CANCEL = 0x060B,     /* daemon -> exec: end hdr.vt if its epoch < hdr.epoch */
    PC_X_CRASH = 0x060C,      /* exec -> daemon, from its fault handler: hdr.vt; i32 signal */
    PC_X_CONFIG = 0x060D,     /* daemon -> exec: i32 checkpoint_ms, i32 threads, s the numeric
                               * IPv4 address to receive direct messages on ("": the VC's
                               * messages go through its deployer), s s the public and secret
                               * key of the mesh's executor links (auth.h; "" "": no keys),
                               * the VC's limits: u64 bytes of a VT's state (its image), of a
                               * message, of a global value */
    PC_X_FAILED = 0x060E,     /* exec -> daemon: hdr.vt/epoch; i32 err, s detail: did not start */
    PC_X_OUT = 0x060F,        /* exec -> daemon: as W_OUT */
    PC_X_ACK = 0x0610,        /* daemon -> exec: as W_ACK */
    PC_X_IN = 0x0611,         /* daemon -> exec: as W_IN */
    PC_X_RESYNC = 0x0612,     /* exec -> daemon: as W_RESYNC */
    PC_X_IMAGE_SLOT = 0x0613, /* exec -> daemon: as X_IMAGE, the envelope lent in shared memory
                               * (imgslot.h): u32 slot, u8 its memfd goes along, u64 slot
                               * size, u64 offset, u64 length */
    PC_X_SLOT_FREE = 0x0614,  /* daemon -> exec: u32 slot, given back */
    PC_X_STOPPED_SLOT = 0x0615, /* exec -> daemon: a STOPPED whose image (err 0) is lent in a
                                 * slot: the fields of X_IMAGE_SLOT */
    PC_X_DET = 0x0616,          /* exec -> daemon: as W_DET */
    PC_X_STABLE = 0x0617,       /* daemon -> exec: as W_STABLE */
    PC_X_FLUSH = 0x0618,        /* daemon -> exec: as W_FLUSH */
    PC_X_FLUSHED = 0x0619,      /* exec -> daemon: as W_FLUSHED, after its last X_DET */
    PC_X_FIX = 0x061A,          /* daemon -> exec: as W_FIX */
    PC_X_PLACE = 0x061B,        /* daemon -> exec: as W_PLACE */
    PC_X_TRIM = 0x061C,         /* daemon -> exec: as W_TRIM */
    PC_X_LINK = 0x061D,         /* exec -> daemon: as W_LINK */
    PC_X_LINKS = 0x061E,        /* daemon -> exec: as W_LINKS */
    PC_X_STATS = 0x061F,        /* exec -> daemon, direct messages: u64 frames sent, received,
                                 * dropped, refused; u64 sends that waited for their receiver,
                                 * credits sent, credits received */
    PC_X_STALL = 0x0620,        /* exec -> daemon, direct messages: hdr.vt/epoch; D the fixed
                                 * position the VT has waited at since its last look -> W_STALL */
    PC_X_RESUME_SLOT = 0x0621,  /* daemon -> exec: as X_RESUME, the image in the daemon's resume
                                 * slot (imgslot.h): u64 slot size, u64 length, u8 its memfd
                                 * passed along (SCM_RIGHTS) -> X_RESUME_FREE */
    PC_X_RESUME_FREE = 0x0622,  /* exec -> daemon: the resume slot may be written again */
    PC_X_READ_AT = 0x0623,      /* daemon -> exec: hdr.vt/epoch, seq = a read's output number;
                                 * u64 revision, b value: the read answered at the worker */
} pc_type;

/* W_GLOB's forms: the new value whole, or by the hash of a copy the
 * worker has; changed, with no value (above PC_GLOB_PUSH_MAX, unless the
 * worker has a copy): the worker drops its copy; DROP: no longer a
 * subscriber, the copy goes. */
enum { PC_GLOB_WHOLE = 0, PC_GLOB_REF = 1, PC_GLOB_CHANGED = 2, PC_GLOB_DROP = 3 };
#define PC_GLOB_PUSH_MAX (16u << 10) /* larger values are pushed as changed only */

/* W_ENROL's flags: the VC's VTs send their messages to each other's
 * executors directly (docs/DIRECT_MESSAGES.md), not through the deployer. */
#define PC_ENROL_DIRECT 1u

/* An executor number in W_PLACE's seq: the worker has none in the VC. */
#define PC_XNO_NONE UINT64_MAX

typedef struct pc_hdr {
    uint32_t magic;
    uint16_t version;
    uint16_t type;
    uint64_t vc;
    uint64_t vt;
    uint32_t epoch;
    uint32_t len; /* bytes of the payload frames together */
    uint64_t seq;
} pc_hdr;

/* Fills a header of `type` with magic and version, the rest zero. */
pc_hdr pc_hdr_make(uint16_t type, uint64_t vc, uint64_t vt, uint32_t epoch, uint64_t seq);

/* Writes h into out[PC_HDR_LEN], little-endian. */
void pc_hdr_encode(const pc_hdr *h, uint8_t out[PC_HDR_LEN]);

/* Decodes a header frame of `len` bytes. 0, or LEV_EINVAL (wrong size,
 * magic or unknown type) or LEV_EVERSION (another protocol version);
 * *why names the fault (a static string). */
int pc_hdr_decode(const void *buf, size_t len, pc_hdr *h, const char **why);

/* Reads a message's payload whole against the table of fields of its
 * type (wire.c, PC_TYPES): body[len] and the size of its bulk frame (0:
 * none). 0, or LEV_EINVAL with *why (a static string): a field cut short,
 * bytes left over, a string with a NUL, a bulk frame missing or where
 * none goes. A message that fails is refused before anything acts on it;
 * membership payloads are their own codec's. */
int pc_msg_check(const pc_hdr *h, const void *body, size_t len, size_t bulk, const char **why);

/* Copies an endpoint (or routing id) into dst[PC_ENDPOINT_MAX], cut
 * to fit and terminated. */
void pc_ep_copy(char *dst, const char *src);

/* True if s looks like a tcp://HOST:PORT endpoint. */
int pc_endpoint_valid(const char *s);

/* The HOST of a tcp://HOST:PORT endpoint into host[cap]: 0, or
 * LEV_EINVAL (not an endpoint, or too long). */
int pc_endpoint_host(const char *ep, char *host, size_t cap);

/* The name of a message type ("C_OPEN"), or "?" for an unknown one. */
const char *pc_type_name(uint16_t type);

/* ===================================================================
 * Structured payloads
 * =================================================================== */

/* Structured payloads are written and read with the runtime's byte codec
 * (runtime/bytes.h), under the peer controller's names: a failed
 * allocation makes every later put a no-op (err), a failed read every
 * later read (bad, why), and a payload is accepted only when
 * pc_rbuf_done: every byte read, none bad. */
typedef rt_wbuf pc_wbuf;
typedef rt_rbuf pc_rbuf;

#define pc_wbuf_init rt_wbuf_init
#define pc_wbuf_free rt_wbuf_free
#define pc_put_u8 rt_put_u8
#define pc_put_u16 rt_put_u16
#define pc_put_u32 rt_put_u32
#define pc_put_i32 rt_put_i32
#define pc_put_u64 rt_put_u64
#define pc_put_raw rt_put_raw
#define pc_put_blob rt_put_blob
#define pc_put_str rt_put_str

#define pc_rbuf_init rt_rbuf_init
#define pc_get_u8 rt_get_u8
#define pc_get_u16 rt_get_u16
#define pc_get_u32 rt_get_u32
#define pc_get_i32 rt_get_i32
#define pc_get_u64 rt_get_u64
#define pc_get_raw rt_get_raw
#define pc_get_blob rt_get_blob
#define pc_get_str rt_get_str
#define pc_get_strdup rt_get_strdup
#define pc_get_count rt_get_count
#define pc_rbuf_fail rt_rbuf_fail
#define pc_rbuf_left rt_rbuf_left
#define pc_rbuf_done rt_rbuf_done
#define pc_rbuf_why rt_rbuf_why

/* The payload of C_STATS_REPLY (lev_vc_stats of lev_client.h), written
 * and read field by field in the order wire.h gives. */
struct lev_vc_stats;
void pc_put_vc_stats(pc_wbuf *w, const struct lev_vc_stats *st);
/* Reads into *st; false (and r bad) when the payload is short. */
bool pc_get_vc_stats(pc_rbuf *r, struct lev_vc_stats *st);

#endif
