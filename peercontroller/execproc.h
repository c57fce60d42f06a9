/* execproc.h - the executors of a worker in the real world (execproc.c):
 * a process `levpeer --executor --fd N` per remote VC (a thread in an
 * embedded peer) over an executor channel. peer.c gives them to the
 * worker as its env's exec_start, exec_send and exec_stop, and polls
 * their channels on the network thread: records go to
 * pc_worker_exec_record, a death to pc_worker_exec_ended. Network thread
 * only.
 */
#ifndef PC_EXECPROC_H
#define PC_EXECPROC_H

#include <sys/uio.h>
#include <zmq.h>

#include "peer_private.h"

typedef struct pc_execs pc_execs;

/* 0 or LEV_ENOMEM; caller owns *out. */
int pc_execs_new(pc_execs **out, pc_peer *p);

/* Kills every executor still running and frees; accepts NULL. */
void pc_execs_destroy(pc_execs **e_p);

/* Starts an executor (a process, or a thread when the peer is embedded);
 * *handle names it, *pid is its process (0: a thread). 0, LEV_EIO (no
 * socketpair or fork) or LEV_ENOMEM. */
int pc_execs_start(pc_execs *e, void **handle, int *pid);

/* Sends one record (header, then the parts); 0, or LEV_EPEER when the
 * executor is gone. A small record is put off until pc_execs_flush, so
 * that what one pass of the peer's loop sends an executor goes in one
 * write. */
int pc_execs_send(pc_execs *e, void *handle, pc_hdr h, const struct iovec *iov, int n);

/* Sends one record at once (after those put off) with descriptor fd
 * passed along (the caller keeps its own); 0, or LEV_EPEER. */
int pc_execs_send_fd(pc_execs *e, void *handle, pc_hdr h, const struct iovec *iov, int n, int fd);

/* Writes every executor's records put off; the peer calls it before it
 * waits again. */
void pc_execs_flush(pc_execs *e);

/* Stops an executor: its channel closes, a process is killed and reaped.
 * Nothing more comes from it (no pc_worker_exec_ended). */
void pc_execs_stop(pc_execs *e, void *handle);

/* Adds the live executors' channels to a poll set; returns how many. */
int pc_execs_poll_items(pc_execs *e, zmq_pollitem_t *items, int cap);

/* Reads the channels poll found readable (items as filled above). */
void pc_execs_on_ready(pc_execs *e, const zmq_pollitem_t *items, int n);

#endif
