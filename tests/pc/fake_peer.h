/* fake_peer.h - a stand-in for levpeer in the tests of the client API and
 * of levctl: a ZMQ_ROUTER on a thread of the test, bound to a free
 * loopback port, that speaks the client side of the wire protocol
 * (wire.h) as the test tells it to.
 *
 * Tasks it pretends to run, by name:
 *   echo     STARTED, a REPORT of the argument, a RESULT of the argument
 *   reports  STARTED, REPORTs "r0", "r1", "r2", a RESULT "done"
 *   fail     STARTED, a RESULT with LEV_EFAILED and a detail
 *   hold     STARTED; its RESULT (the argument) when fp_release is called
 *   other    ERROR LEV_EMODULE "no task named ..."
 *
 * Messages (C_SEND) are recorded and answered SENT while their VT runs
 * (only a `hold` VT not yet released does), else ERROR LEV_ENOVT; global
 * variables (C_GSET, C_GGET) live in a table of FP_GLOBALS. Above the
 * limits set with fp_set_limits it answers ERROR LEV_ERANGE naming them.
 * C_STATS is answered with the counts set with fp_set_stats (zero until
 * then), or with a reply cut short.
 */
#ifndef FAKE_PEER_H
#define FAKE_PEER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lev_client.h"
#include "wire.h"

#define FP_VC 0xC0FFEEull /* the VC id every fake peer hands out */
#define FP_SENT_KEPT 8    /* messages whose start it keeps */
#define FP_GLOBALS 16     /* global variables it can hold */

typedef enum fp_mode {
    FP_NORMAL,  /* answers as a levpeer would */
    FP_NOISY,   /* the same, with malformed and misdirected messages between */
    FP_GARBAGE, /* answers every message with malformed ones only */
} fp_mode;

typedef struct fake_peer fake_peer;

/* What a fake peer saw; a copy taken under its lock. */
typedef struct fp_seen {
    int opens, starts, closes, pings, statuses;
    int workers, checkpoint_ms, replicas; /* of the last OPEN */
    bool module_ok;                       /* its digest and hash match its bytes */
    char task[256];                       /* of the last START */
    int sends, gsets, ggets, stats;       /* requests seen, answered or not */
    int nsent;                            /* messages accepted (SENT) */
    uint64_t sent_vt[FP_SENT_KEPT];       /* the first FP_SENT_KEPT of them: to */
    char sent[FP_SENT_KEPT][16];          /* and their first bytes, terminated */
    size_t last_len;                      /* the last accepted message: length */
    uint64_t last_hash;                   /* and fp_hash of its bytes */
} fp_seen;

/* Starts a fake peer in `mode` on tcp://127.0.0.1 (a free port); fails the
 * test if it cannot. Destroy with fp_destroy. */
fake_peer *fp_new(fp_mode mode);

/* Stops it and frees it; accepts NULL. */
void fp_destroy(fake_peer **fp_p);

/* The endpoint it is bound to. */
const char *fp_endpoint(const fake_peer *fp);

/* From now on it answers nothing (true) or answers again (false). */
void fp_mute(fake_peer *fp, bool mute);

/* Its answer to the next OPENs: ERROR `err` with `detail` (0: OPENED). */
void fp_refuse_open(fake_peer *fp, int err, const char *detail);

/* Pushes the RESULT of the VT that `hold` started (the argument it got). */
void fp_release(fake_peer *fp);

/* Its answer to S_STATUS: STATUS_REPLY with this JSON (kept, not copied;
 * NULL: no answer). */
void fp_set_status(fake_peer *fp, const char *json);

/* Its limits from now on, in bytes (0: none): a message above msg_max or
 * a value above value_max is answered ERROR LEV_ERANGE naming the limit. */
void fp_set_limits(fake_peer *fp, size_t msg_max, size_t value_max);

/* Its answer to the next C_STATS: STATS_REPLY with *st, or (cut) the
 * same reply without its last 4 bytes, which a client must drop. */
void fp_set_stats(fake_peer *fp, const lev_vc_stats *st, bool cut);

/* FNV-1a 64 of buf[len], as fp_seen's last_hash. */
uint64_t fp_hash(const void *buf, size_t len);

/* What it saw so far. */
fp_seen fp_seen_get(fake_peer *fp);

/* Waits until it has seen `n` PINGs in all, at most timeout_ms; true if so. */
bool fp_wait_pings(fake_peer *fp, int n, int timeout_ms);

/* An endpoint on the loopback where nothing listens (a port just freed). */
void fp_dead_endpoint(char out[PC_ENDPOINT_MAX]);

/* Monotonic milliseconds. */
uint64_t fp_now_ms(void);

#endif
