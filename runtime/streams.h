/* streams.h - the C library streams that task code opens through the
 * runtime (streams.c), and the standard streams of a --main-task program
 * (stdstreams.c): what a capture and a restore need of them.
 *
 * Internal (not installed). The entry points that levpp's output calls
 * (lev_fopen, lev_freopen, lev_fclose, lev_open_memstream) are declared in
 * lev_task.h.
 */
#ifndef STREAMS_H
#define STREAMS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "lev_abi.h"

/* What a pointer that no object of the VT holds may be: */
enum {
    RT_STREAM_NONE = 0, /* not a stream the runtime registered */
    RT_STREAM_OPEN,     /* an open stream: *rec is its record, on the VT heap */
    RT_STREAM_CLOSED    /* a stream the program closed: the pointer dangles */
};

/* Flushes every open stream that the VT whose key (rt_vt.key: a serial
 * of this process, which no change of identity alters) is vt_key opened
 * (or got back from an image) and writes where it stands into its record: called before a
 * capture walks the VT, so that the image holds what the program wrote,
 * and a memory stream's buffer and the program's view of it agree; then
 * the standard streams (rt_stdstreams_capture). `portable`: the image may
 * be resumed in another process (not the torture cycle). LEV_ECAPTURE if
 * freopen sent a standard stream to a file, or as rt_stdstreams_capture. */
int rt_streams_sync(uint64_t vt_key, bool portable);

/* Classifies p (RT_STREAM_*); for an open stream sets *rec. A file stream
 * is flushed and its record brought up to date first, so a stream of
 * another VT is carried as it stands. */
int rt_stream_lookup(const void *p, void **rec);

/* The stream that record rec (a restored heap object) stands for, into
 * *out: the same FILE while the stream is still open in this process,
 * else the file reopened by its path at its offset, or the memory stream
 * rebuilt on its restored buffer (*opened: 1, else 0); it is then the
 * stream of the VT whose key is vt_key. 0, or LEV_EIMAGE
 * (a damaged record) or LEV_EIO (the file cannot be reopened), with a
 * message naming the stream. */
int rt_stream_revive(const lev_module *m, void *rec, uint64_t vt_key, FILE **out, int *opened);

/* Closes and forgets stream fp, which rt_stream_revive opened (*opened)
 * for a restore that then failed. */
void rt_stream_drop(FILE *fp);

/* Flushes stdout and stderr and, when the program armed its
 * lev_stdio_state (lev_stdio_arm), writes into it where stdin, stdout
 * and stderr stand. With `portable`, LEV_ECAPTURE (naming the stream)
 * when stdin is not seekable and holds bytes read ahead but not
 * consumed, which a process that resumes the image could not read. */
int rt_stdstreams_capture(bool portable);

/* Puts this process's standard streams where the armed lev_stdio_state,
 * just restored from an image, says (a resume in a new process): stdin
 * at the offset the program had consumed it to, its pushed-back bytes
 * back, and the file of stdout or stderr cut back to its size at the
 * image when it is the same file. 0; LEV_EIO naming the stream when
 * stdin cannot be put there (not seekable, shorter); LEV_EIMAGE. */
int rt_stdstreams_resume(void);

#endif
