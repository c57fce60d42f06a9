/* portprobe.h - confirming the crash of a suspected peer (portprobe.c):
 * a non-blocking TCP connection to the port of its endpoint. A refusal
 * means that no process listens there any more (it was killed, it
 * faulted, the OOM killer took it): the peer's membership is told
 * (pc_members_refused) and declares it dead at once instead of waiting
 * out the suspicion timeout. A paused or overloaded peer still has its
 * port open, and a host that is gone or cut off does not answer at all:
 * neither is evidence, and those wait for the timeout.
 *
 * Only endpoints whose host is a numeric IPv4 or IPv6 address are probed
 * (a name would need a blocking lookup on the network thread). Results
 * are reported from pc_portprobe_on_ready and pc_portprobe_tick, never
 * from pc_portprobe_start, so a caller may start a probe from inside the
 * membership's callbacks.
 */
#ifndef PC_PORTPROBE_H
#define PC_PORTPROBE_H

#include <stdint.h>
#include <zmq.h>

#define PC_PORTPROBE_MAX 64          /* probes at once; more are not started */
#define PC_PORTPROBE_TIMEOUT_MS 1000 /* no answer by then: no evidence */

typedef struct pc_portprobe pc_portprobe;

/* What a probe found: called for each refused connection. */
typedef void (*pc_portprobe_refused_fn)(void *ud, const char *endpoint, uint64_t instance);

/* A set of probes reporting refusals to fn(ud, ...). 0 or LEV_ENOMEM. */
int pc_portprobe_new(pc_portprobe **out, pc_portprobe_refused_fn fn, void *ud);

/* Closes every probe; accepts NULL and sets *pp to NULL. */
void pc_portprobe_destroy(pc_portprobe **pp);

/* Starts a probe of the port of `endpoint` ("tcp://ADDRESS:PORT") for the
 * life `instance` of it, unless one of it runs, the endpoint's host is not
 * a numeric address, or PC_PORTPROBE_MAX run. */
void pc_portprobe_start(pc_portprobe *pp, const char *endpoint, uint64_t instance, uint64_t now_ms);

/* Fills items with the probes' sockets (POLLOUT); returns how many. */
int pc_portprobe_poll_items(const pc_portprobe *pp, zmq_pollitem_t *items, int cap);

/* After zmq_poll over the n items pc_portprobe_poll_items gave: finishes
 * the probes whose connection completed or failed. */
void pc_portprobe_on_ready(pc_portprobe *pp, const zmq_pollitem_t *items, int n);

/* Reports what is pending and ends the probes past their timeout; returns
 * when it wants to be called next (UINT64_MAX: nothing runs). */
uint64_t pc_portprobe_tick(pc_portprobe *pp, uint64_t now_ms);

#endif
