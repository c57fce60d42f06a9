/* mesh.h - a mesh of levpeer processes on loopback for the multi-process
 * tests (mesh.c): start a peer and wait for the endpoint it prints, signal
 * and reap it, ask any peer for its status document, and wait (bounded in
 * time and count) for a condition on the status of a peer.
 */
#ifndef PC_MESH_H
#define PC_MESH_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lev_client.h"

typedef struct mesh_peer {
    pid_t pid; /* 0 once reaped */
    char ep[128];
    char log[256]; /* its standard error */
    int status;    /* wait status once reaped */
} mesh_peer;

/* The --listen endpoint of this test's peers: tcp://127.0.0.X:0, X chosen
 * by the test's process id (2 to 251), so that tests running at the same
 * time use different loopback addresses: a port that a killed peer frees
 * can then not be taken by a peer of another test's mesh, which the
 * killed peer's mesh would take for it (peers do not check which mesh an
 * endpoint belongs to). */
const char *mesh_listen(void);

/* Starts `levpeer ARGS...` (args NULL-terminated) with its standard error
 * in a log file of dir, and waits at most limit_ms for the endpoint line.
 * 0, or -1 (the peer did not come up: its log is printed). */
int mesh_start(mesh_peer *p, const char *levpeer, const char *dir, int limit_ms,
               const char *const *args);

/* Sends sig to the peer. */
void mesh_signal(mesh_peer *p, int sig);

/* mesh_start, with the peer in the network namespace `netns` (a name of
 * `ip netns`; NULL: this process's). */
int mesh_start_in(mesh_peer *p, const char *netns, const char *levpeer, const char *dir,
                  int limit_ms, const char *const *args);

/* Waits at most limit_ms for the peer to exit; true if it did (status in
 * p->status). */
bool mesh_reap(mesh_peer *p, int limit_ms);

/* Kills (SIGKILL) and reaps every peer still running. */
void mesh_stop_all(mesh_peer *v, int n);

/* The status document of the peer at ep (malloc'd JSON), or NULL when it
 * does not answer within limit_ms. With LEV_MESH_KEY (and LEV_CLIENT_KEY)
 * set, asked as a client of a mesh with keys (CurveZMQ). */
char *mesh_status(const char *ep, int limit_ms);

/* Sends raw frames (each with its length) to ep through a fresh DEALER. */
void mesh_send_raw(const char *ep, const void *const *frames, const size_t *lens, int n);

/* Calls cond(status of ep, ctx) on the peer's status every 20 ms until it
 * returns true (true) or limit_ms pass (false). */
bool mesh_wait(const char *ep, bool (*cond)(const char *json, void *ctx), void *ctx, int limit_ms);

/* ---- a client's reports, for the tests that wait for them ---- */

#define MESH_REPORT_VTS 32 /* VT ids below this are counted */

/* The reports a client got, per VT: how many, and the last one's value
 * (a report is an int32_t or an int64_t); bad counts the others. */
typedef struct mesh_reports {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int64_t last[MESH_REPORT_VTS];
    int n[MESH_REPORT_VTS];
    int bad;
} mesh_reports;

void mesh_reports_init(mesh_reports *r);

/* The lev_vc_on_report callback (ctx: a mesh_reports). */
void mesh_on_report(lev_vt_id vt, const void *buf, size_t len, void *ctx);

/* Waits at most limit_ms until VT vt has sent n reports; false (and a
 * line saying how many came) if it has not. */
bool mesh_wait_reports(mesh_reports *r, lev_vt_id vt, int n, int limit_ms);

/* ---- reading the status document (its layout is status.c's) ---- */

/* Occurrences of needle in s. */
int js_count(const char *s, const char *needle);

/* The text of string field `field` of VT `vt` ("host", "state", "task")
 * into out; false if the VT is not there. */
bool js_vt_str(const char *json, uint64_t vt, const char *field, char *out, size_t cap);

/* The integer field `field` of VT `vt` ("epoch", "checkpoint_age_ms"),
 * or INT64_MIN if absent. */
long long js_vt_int(const char *json, uint64_t vt, const char *field);

/* The first entry of VT `vt`'s list `list` ("holders": assigned,
 * "held": that acknowledged an image) into out; false if it is empty. */
bool js_vt_holder(const char *json, uint64_t vt, const char *list, char *out, size_t cap);

/* Number of entries of the "workers" list of the first VC, and whether
 * `ep` is among them. */
int js_workers(const char *json, const char *ep, bool *has);

/* State of peer `ep` in the "peers" list ("alive", "suspect"...), or "" if absent. */
void js_peer_state(const char *json, const char *ep, char *out, size_t cap);

/* ---- added for the fault tests ---- */

/* The work directory of a test program: TMPDIR (else /tmp)/lev-NAME-XXXXXX,
 * made, into dir. 0, or -1 if it cannot be made. */
int mesh_workdir(char *dir, size_t cap, const char *name);

struct CMUnitTest;
/* Runs a test program's n tests (only those argv[1] names, if given)
 * and, when every one passed, removes its work directory dir. The
 * program's exit status. */
int mesh_run_tests(const struct CMUnitTest *tests, size_t n, int argc, char **argv,
                   const char *dir);

/* Whether a line of the peer's log holds text (if not, says so on
 * standard error). */
bool mesh_log_has(const mesh_peer *p, const char *text);

/* The same, quietly (a condition to wait for). */
bool mesh_log_holds(const mesh_peer *p, const char *text);

/* Prints the last `lines` lines of the peer's log to standard error. */
void mesh_print_log_tail(const mesh_peer *p, int lines);

/* Whether the peer whose status this is runs an executor of any VC (its
 * "executors" list is not empty). */
bool js_has_executor(const char *json);

/* Whether `ep` is an entry of VT `vt`'s list `list` ("holders", "held"). */
bool js_vt_listed(const char *json, uint64_t vt, const char *list, const char *ep);

/* The first integer member `key` of the document ("rate_measurements";
 * "rate" is this peer's own, the first of "peers"), or INT64_MIN. */
long long js_int(const char *json, const char *key);

/* The sum of integer member `key` over every flat object `"obj":{...}` of
 * the document ("image_shipping", "global_copies": the deployer's per VC
 * and the worker's), or INT64_MIN when no such object has it. */
long long js_obj_sum(const char *json, const char *obj, const char *key);

#endif
