/* chan.h - the executor channel (chan.c): messages of the wire protocol
 * (wire.h) over one stream socket between a worker daemon and the
 * executor process of a virtual computer (an inherited socketpair), or
 * an executor thread of an embedded peer.
 *
 * A record on the stream is the 40-byte header then hdr.len payload
 * bytes. Sending is whole-record and may block (several threads may send:
 * a mutex keeps records whole); receiving is incremental and never
 * blocks, so a reactor can poll the descriptor. A record whose header is
 * bad or whose length passes the channel's limit closes the channel with
 * a reason: the other end is a process of ours, so a damaged stream
 * means it is broken.
 */
#ifndef PC_CHAN_H
#define PC_CHAN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "wire.h"

typedef struct pc_chan pc_chan;

/* Takes ownership of the connected stream socket fd (closed by
 * pc_chan_destroy); max_len bounds a received payload (0: 1 GiB).
 * NULL on exhaustion (fd is then closed). */
pc_chan *pc_chan_new(int fd, size_t max_len);

/* Closes the socket and frees the channel; accepts NULL, sets *c_p NULL. */
void pc_chan_destroy(pc_chan **c_p);

/* The socket, for poll (readable: call pc_chan_recv). */
int pc_chan_fd(const pc_chan *c);

/* Sends one record: the header (its len set here to the sum of the
 * parts) then the n parts, whole, blocking until written. Thread-safe.
 * 0, or LEV_EPEER once the other end is gone (EPIPE, reset). */
int pc_chan_send(pc_chan *c, pc_hdr h, const struct iovec *parts, int n);

/* Sends one record as pc_chan_send does, with descriptor fd passed along
 * (SCM_RIGHTS; the caller keeps its own): the other end takes it with
 * pc_chan_take_fd once it has the record. */
int pc_chan_send_fd(pc_chan *c, pc_hdr h, const struct iovec *parts, int n, int fd);

/* Sends one record as pc_chan_send does, but only if that needs no wait
 * to start: 0 (nothing sent) when another thread is sending or the
 * socket has no room now; 1 when sent whole (a record the socket took in
 * part is finished at once, blocking if it must); or LEV_EPEER. */
int pc_chan_try_send(pc_chan *c, pc_hdr h, const struct iovec *parts, int n);

/* Puts a small record off (copied) until pc_chan_flush, so that what one
 * pass of a reactor sends goes in one write; a large one, or one that
 * fills the put-off bytes (256 KiB), sends them at once. Any send writes
 * what was put off first. 0, LEV_ENOMEM or LEV_EPEER. */
int pc_chan_send_later(pc_chan *c, pc_hdr h, const struct iovec *parts, int n);

/* Writes the records put off (blocking until written); 0 or LEV_EPEER. */
int pc_chan_flush(pc_chan *c);

/* Sends a record whose payload is one pc_wbuf (or none when w is NULL). */
int pc_chan_send_buf(pc_chan *c, pc_hdr h, const pc_wbuf *w);

/* Reads what the socket has without blocking; when a whole record is
 * there, sets *h and *payload (malloc'd, caller frees; NULL when hdr.len
 * is 0) and returns 1. 0: no whole record yet. LEV_EPEER: the other end
 * closed (or the stream is damaged: *why says how). Call it again until
 * it returns 0: one read may bring several records. With blocking != 0
 * it waits for a whole record instead. */
int pc_chan_recv(pc_chan *c, pc_hdr *h, uint8_t **payload, int blocking, const char **why);

/* The oldest descriptor received and not taken yet (the caller owns it),
 * or -1. A descriptor arrives with the first byte of its record, so once
 * pc_chan_recv returned a record that carries one, it is here; a channel
 * given more than 8 that no one takes dies with a reason. */
int pc_chan_take_fd(pc_chan *c);

#endif
