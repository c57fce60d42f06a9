/* lev_client.h - the client side of Leverage: what an application calls to
 * open a virtual computer (VC) on a levpeer, start virtual threads (VTs)
 * of the task module it carries, take their reports and join their results,
 * and follow the VC's progress (lev_vc_stats_get).
 *
 * Installed; included by leverage.h.
 *
 * Rules that hold for every call here:
 * - Every call returns 0 or a negative LEV_E... code (lev_errors.h);
 *   lev_errdetail() then says what was at fault, on the calling thread.
 * - Every call is thread-safe: any thread may use a VC at any time, except
 *   that lev_vc_close must not race with other calls on the same VC.
 * - A buffer a call hands back (the result of lev_vt_join) belongs to the
 *   caller, who releases it with free().
 * - A timeout_ms below zero waits without limit.
 * - The library talks to its levpeer from a thread of its own per VC. If
 *   the peer stops answering for LEV_PEER_TIMEOUT_MS milliseconds
 *   (environment; default 3000), the VC is lost: every waiting call and
 *   every later call on it returns LEV_EPEER (results that arrived before
 *   can still be joined). The VC must still be closed.
 *
 * Which levpeer: lev_vc_options.peer if set, else the environment variable
 * LEV_PEER, else a peer embedded in this process, started on first use and
 * stopped at exit; it listens on LEV_LISTEN (default tcp://127.0.0.1:0)
 * and joins the comma-separated endpoints of LEV_JOIN. Set LEV_DEBUG to
 * see on stderr the messages the library drops as malformed.
 */
#ifndef LEV_CLIENT_H
#define LEV_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "lev_errors.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A virtual computer: the VTs one application runs on a mesh of peers. */
typedef struct lev_vc lev_vc;

/* The id of a virtual thread, assigned by its deployer (never 0 or 1) and
 * stable across migration. */
typedef uint64_t lev_vt_id;

#ifndef LEV_ANY                  /* (lev_task.h has the same) */
#define LEV_ANY ((uint64_t)0)    /* lev_recv: from any sender */
#define LEV_CLIENT ((uint64_t)1) /* the client application as a sender */
#endif

/* How a VC is opened; zero means default in every field. */
typedef struct lev_vc_options {
    int workers;       /* quota of workers; 0: every peer that offers cores */
    int checkpoint_ms; /* checkpoint interval of each VT; 0: 2000; <0: off */
    int replicas;      /* peers holding each VT's newest image, none of them its host;
                        * 0: 2, so that any two faults of other peers than the
                        * client's leave a copy (1 halves the checkpoint traffic,
                        * but a VT whose host and holder fail together restarts
                        * from its beginning, or fails if its inputs are gone) */
    const char *peer;  /* endpoint of a levpeer; NULL: LEV_PEER, else embedded */
} lev_vc_options;

/* Opens a VC on a levpeer (opt NULL: all defaults) and ships it the task
 * module this program carries (see leverage_add_tasks). Sets *vc, owned by
 * the caller until lev_vc_close; *vc is NULL on failure. LEV_EINVAL (NULL
 * vc, negative workers or replicas, malformed endpoint or environment
 * value), LEV_EMODULE (the program carries no task module, or the peer
 * refused it), LEV_EPEER (no peer answered within LEV_PEER_TIMEOUT_MS),
 * LEV_EUNSUPPORTED (no peer named, and none can be embedded in this
 * build), LEV_ENOMEM, or an error the peer returned. */
LEV_API int lev_vc_open(lev_vc **vc, const lev_vc_options *opt);

/* Closes the VC: its deployer cancels the VTs still running, and every
 * resource of the VC is freed, results not joined included; sets *vc to
 * NULL. Accepts NULL and a pointer to NULL. Waits at most
 * LEV_PEER_TIMEOUT_MS for the peer to confirm; a peer that is lost or
 * does not confirm closes the VC on its own once the client is silent.
 * Returns 0, or LEV_EBUSY (nothing done) when called from a report
 * callback of the VC. */
LEV_API int lev_vc_close(lev_vc **vc);

/* Starts a VT running the task entry `task` (at most 255 bytes) of the
 * module with a copy of arg[len] as its argument, and sets *id. LEV_EINVAL
 * (NULL vc, task or id, arg NULL with len > 0, a task name that is empty
 * or too long), LEV_EPEER, LEV_EBUSY (called from a report callback), or
 * an error the deployer returned (e.g. LEV_EMODULE: no such task). */
LEV_API int lev_vt_start(lev_vc *vc, const char *task, const void *arg, size_t len, lev_vt_id *id);

/* Waits up to timeout_ms for VT `id` to end and joins it. On success sets
 * *result to a malloc'd copy of what the VT passed to lev_return (NULL
 * and 0 for an empty result or a VT that ended without one), which the
 * caller frees with free(); result and len may be NULL to discard it.
 * Returns the VT's own outcome: 0, or the error it ended with (e.g.
 * LEV_EFAILED, LEV_ECANCELED, LEV_EMODULE; lev_errdetail() says why; no
 * result then). A joined VT is forgotten. Errors of the call itself:
 * LEV_ETIMEDOUT (the VT is still running and stays joinable), LEV_ENOVT
 * (an id this VC never started or already joined), LEV_EINVAL, LEV_EPEER
 * (the peer was lost before the VT ended), LEV_ENOMEM, LEV_EBUSY (a wait
 * from a report callback). Results that arrive before the join are kept
 * until it. */
LEV_API int lev_vt_join(lev_vc *vc, lev_vt_id id, void **result, size_t *len, int timeout_ms);

/* Calls cb(vt, buf, len, ctx) for each report a VT of this VC sends, on the
 * library's thread of the VC, one report at a time; buf lives until cb
 * returns. cb NULL stops reports. Once this returns, the previous callback
 * is no longer running nor called again (unless this is called from that
 * callback itself). A callback must not wait on its own VC: lev_vt_start,
 * lev_vc_close and a lev_vt_join that would wait return LEV_EBUSY there.
 * 0 or LEV_EINVAL (NULL vc). */
LEV_API int lev_vc_on_report(lev_vc *vc,
                             void (*cb)(lev_vt_id vt, const void *buf, size_t len, void *ctx),
                             void *ctx);

/* Sends VT `id` a copy of buf[len] as a message from LEV_CLIENT, after
 * every message this VC sent it before; the deployer has it, in the VT's
 * input stream, when this returns. This is how a client hands VTs their
 * work and each other's ids. LEV_ENOVT (no such VT in the VC, or it has
 * ended), LEV_ERANGE (above the VC's message limit, named in the detail),
 * LEV_EINVAL (NULL vc, buf NULL with len > 0, id LEV_ANY or LEV_CLIENT),
 * LEV_EPEER, LEV_EBUSY (from a report callback), LEV_ENOMEM. */
LEV_API int lev_vt_send(lev_vc *vc, lev_vt_id id, const void *buf, size_t len);

/* Sets global variable `name` (1 to 255 bytes) of the VC to a copy of
 * value[len], as one locked update: it waits for a VT that holds the lock.
 * LEV_ERANGE (above the value limit), LEV_EINVAL, LEV_EPEER, LEV_EBUSY,
 * LEV_ENOMEM. */
LEV_API int lev_global_set(lev_vc *vc, const char *name, const void *value, size_t len);

/* Sets *value to a malloc'd copy of the committed value of `name` (the
 * caller frees it) and *len to its length; a variable never set gives
 * NULL and 0 (and 0). LEV_EINVAL, LEV_EPEER, LEV_EBUSY, LEV_ENOMEM. */
LEV_API int lev_global_get(lev_vc *vc, const char *name, void **value, size_t *len);

/* What a VC is doing, as its deployer counts it (lev_vc_stats_get): the
 * first three fields are of now, the others count since the VC opened. */
typedef struct lev_vc_stats {
    uint32_t peers;       /* workers enrolled and active in the VC now */
    uint32_t cores;       /* cores those workers offer */
    uint32_t vts;         /* VTs started and not yet ended */
    uint32_t vts_ended;   /* VTs that ended (joined or not) */
    uint64_t checkpoints; /* images taken and acknowledged by a holder, all VTs */
    uint64_t resumes;     /* VT incarnations resumed from an image (after a fault or a migration) */
    uint64_t restarts;    /* VT incarnations started over (no image held yet) */
    uint64_t lost_peers;  /* workers the VC lost (dead or left) */
    uint64_t messages;    /* messages delivered to VTs (from VTs and the client), each once */
} lev_vc_stats;

/* Fills *st with the VC's counts as its deployer has them now (for a
 * progress display: they change between two calls); *st is zeroed on
 * failure. Waits at most LEV_PEER_TIMEOUT_MS for the answer. LEV_EINVAL
 * (NULL vc or st), LEV_EPEER (the peer is lost, or sent no well-formed
 * answer in time), LEV_EBUSY (from a report callback), LEV_ENOMEM, or an
 * error the deployer returned. */
LEV_API int lev_vc_stats_get(lev_vc *vc, lev_vc_stats *st);

#ifdef __cplusplus
}
#endif

#endif
