/* exechost.h - the executor of one virtual computer (exechost.c): the
 * runtime's executor (rt_exec) driven by a worker daemon over an executor
 * channel (chan.h), in a process of its own (`levpeer --executor --fd N`)
 * or on a thread of an embedded peer.
 *
 * Protocol (types PC_X_*, payloads as wire.h writes them):
 *   -> READY(pid)       sent first.
 *   <- CONFIG           checkpoint_ms (<= 0: none) and threads (0: one per
 *                       core) of the executor, made at the first RUN or
 *                       RESUME; a CONFIG that arrives while VTs live here
 *                       is ignored (and said so on stderr).
 *   <- MODULE           checked against its BLAKE2b hash, loaded from its
 *                       bytes; -> MODULE_OK(err, detail), seq repeated.
 *   <- RUN, RESUME      a VT of id hdr.vt (never 0 or 1) and epoch
 *                       hdr.epoch, from a task of a loaded module or from
 *                       an image of that VT; -> FAILED(err, detail) when it
 *                       cannot start (unknown task, damaged or foreign
 *                       image, no such module loaded, an id running here).
 *   -> IMAGE            periodic checkpoints, seq counting per VT from 1;
 *                       an image still queued when a newer one of the same
 *                       VT comes is dropped (the newest is all that counts).
 *   -> IMAGE_SLOT       the same, the envelope lent in a shared-memory slot
 *                       (imgslot.h; LEV_IMAGE_SLOTS=0: never).
 *   -> STOPPED_SLOT     a STOPPED whose image is lent in a slot.
 *   <- SLOT_FREE        the daemon gives a slot back.
 *   -> RESYNC           a VT (re)started: its inputs from hdr.seq, please.
 *   -> OUT              an output of a VT (message, report, lock, global
 *                       update...), seq counting per VT from 1; kept and
 *                       sent again until acknowledged.
 *   <- IN, ACK          an input of a VT; its outputs taken up to hdr.seq.
 *   -> DONE             a VT ended: err (0, or why it failed), detail,
 *                       result; sent once every output of the VT is
 *                       acknowledged, so it never overtakes one.
 *   <- STOP             capture and stop hdr.vt (0: every VT here); each VT
 *                       answers once: STOPPED(0, "", image), or STOPPED(err,
 *                       detail) without an image if it could not be
 *                       captured or is not here, or DONE if it ended first.
 *   <- CANCEL           ends hdr.vt (0: every VT) if its epoch < hdr.epoch
 *                       and forgets it: no DONE, and its records still
 *                       queued are dropped.
 *   -> CRASH(signal)    from the fault handler of an executor process,
 *                       hdr.vt naming the VT that ran on the faulting
 *                       thread (0: none); then the process dies of the
 *                       signal.
 * Records to the daemon are written by a sender thread, never by a VT's
 * worker: a checkpoint taken on a VT's path only queues its image.
 */
#ifndef PC_EXECHOST_H
#define PC_EXECHOST_H

#include <stdbool.h>

/* Runs the executor of one VC over the connected stream socket fd (taken,
 * closed on return) until the daemon closes its end, then cancels and
 * frees what runs. With own_process (an executor process): lowers the
 * CPU priority (SCHED_IDLE, else nice 19; the environment variable
 * LEV_EXEC_NICE=N sets nice N instead, and 0 leaves the priority alone),
 * dies with its parent (PR_SET_PDEATHSIG) and reports faults with a CRASH
 * record. Call it from a thread the collector knows (the main thread, or
 * one started through it). Returns 0 once the channel closed, 1 when the
 * executor could not start or the channel broke (said on stderr). */
int pc_exechost_run(int fd, bool own_process);

#endif
