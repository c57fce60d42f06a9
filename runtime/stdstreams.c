/* stdstreams.c - the standard streams of a --main-task program across a
 * capture and a resume in a new process: what the C library holds of
 * stdin, stdout and stderr that the process's file descriptors do not
 * show, made part of the image or written out before it.
 *
 * The state lives in the program's travelling static of type
 * lev_stdio_state (lev_task.h), which levpp generates for every
 * --main-task program and whose address the main it writes gives here
 * (lev_stdio_arm) before lev_main_run. Every capture writes it
 * (rt_stdstreams_capture, called by rt_streams_sync), an image carries it
 * like any other static, and lev_main_run reads it back once it has
 * restored an image in a new process (rt_stdstreams_resume).
 *
 * - stdout and stderr: every capture flushes them first, so a line the
 *   program printed before the image is out before the image can be
 *   written, and a process that resumes the image does not print it
 *   again. Output printed after the image was still in the buffer when
 *   the process was killed (lost with it, printed again by the resumed
 *   run: once), or written out (by a flush, a full buffer, a line of a
 *   line-buffered stream): the resumed run prints it again, as a file
 *   opened for appending gets again what was appended after the image.
 *   A stream that is a regular file which the first process did not open
 *   for appending (`> out`) is treated as a file opened with "w"
 *   (streams.c): the capture records its size and identity (device and
 *   inode), and a resumed process whose stream is the same file (`>>
 *   out`, or `1<> out`) first cuts it back to that size, so what the
 *   killed run wrote after the image is written again once. A file that
 *   is shorter than that size by then (cut by the user, `> out` again) or
 *   another file is left as it is.
 * - stdin: the capture records how far the program consumed it: the
 *   offset of the file descriptor less what the buffer holds unread, and
 *   the bytes pushed back by ungetc that differ from the ones read (the
 *   GNU C library keeps those apart, in its backup area), and the end-of-
 *   file flag. A resumed process seeks its stdin, which must be the same
 *   file again (`< in`), to that offset and pushes the bytes back. A
 *   stdin that is not a regular file or block device (a pipe, a terminal,
 *   a socket) cannot be read again: a capture that finds bytes read ahead
 *   from it but not consumed fails, naming the stream (they would be lost
 *   with the process), except for the torture cycle, which restores in
 *   the same process; with nothing read ahead the resumed run reads on
 *   from what its own stdin gives. A resume whose stdin is not seekable,
 *   or is shorter than what the program had consumed, fails, naming the
 *   file the image read.
 *
 * What the buffers hold is read from the GNU C library's FILE; with
 * another C library stdin's offset is ftello's and nothing read ahead is
 * seen. Wide-oriented streams are not followed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wchar.h>

#include "lev_task.h"
#include "rt.h"
#include "streams.h"

/* The words of lev_stdio_state: stdin's, then S_OUT_WORDS for stdout and
 * as many for stderr. */
enum { O_KIND, O_DEV, O_INO, O_SIZE, S_OUT_WORDS };
enum {
    W_MAGIC,    /* S_MAGIC once a capture wrote it */
    W_IN_KIND,  /* S_IN_* */
    W_IN_POS,   /* file: offset of the first byte after the pushed-back ones */
    W_IN_SIZE,  /* file: its size at the capture */
    W_IN_FLAGS, /* S_IN_EOF */
    W_IN_NBACK, /* bytes pushed back, in lev_b[B_BACK...] in reading order */
    W_OUT,      /* stdout, then stderr: S_OUT_WORDS words each (O_*) */
    W_END = W_OUT + 2 * S_OUT_WORDS
};
/* The bytes: the pushed-back ones, then stdin's name (for messages). */
enum { B_BACK = 0, S_BACK_MAX = 32, B_NAME = B_BACK + S_BACK_MAX, S_NAME_MAX = 256 };
_Static_assert(W_END <= LEV_STDIO_WORDS && B_NAME + S_NAME_MAX <= LEV_STDIO_BYTES,
               "lev_stdio_state holds the state");

#define S_MAGIC 0x4C455653544431ull /* "LEVSTD1" */
enum { S_IN_NONE, S_IN_FILE, S_IN_STREAM };
enum { S_IN_EOF = 1 };
enum { S_OUT_FILE = 1, S_OUT_CUT = 2 };

/* The GNU C library's flag of a stream reading its backup area (pushed-
 * back bytes that differ from the ones read), part of its FILE's ABI. */
#define S_GLIBC_IN_BACKUP 0x0100

static lev_stdio_state *s_state;

void lev_stdio_arm(lev_stdio_state *st) { s_state = st; }

/* What `st_mode` is, for messages. */
static const char *s_kind(int fd, mode_t mode)
{
    if (S_ISFIFO(mode))
        return "a pipe";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISCHR(mode))
        return isatty(fd) ? "a terminal" : "a character device";
    if (S_ISDIR(mode))
        return "a directory";
    return "not seekable";
}

/* Whether st is something whose bytes a new process can read again at an
 * offset. */
static bool s_seekable(const struct stat *st)
{
    return S_ISREG(st->st_mode) || S_ISBLK(st->st_mode);
}

/* What input stream f holds that its file descriptor gave and the program
 * has not consumed (under f's lock): *unread bytes of its buffer and, in
 * *back, *nback bytes pushed back apart from them (to be read first). -1
 * for a wide-oriented stream, whose buffers are not followed. */
static int s_buffered(FILE *f, size_t *unread, const unsigned char **back, size_t *nback)
{
    *back = NULL;
    *nback = 0;
    *unread = 0;
    if (fwide(f, 0) > 0)
        return -1;
#ifdef __GLIBC__
    if (f->_flags & S_GLIBC_IN_BACKUP) {
        /* Reading pushed-back bytes: the main buffer's unread part was
         * set aside (from its read pointer to its end) and follows them. */
        *back = (const unsigned char *)f->_IO_read_ptr;
        *nback = (size_t)(f->_IO_read_end - f->_IO_read_ptr);
        *unread = (size_t)(f->_IO_save_end - f->_IO_save_base);
    } else if (f->_IO_read_ptr && f->_IO_read_end > f->_IO_read_ptr) {
        *unread = (size_t)(f->_IO_read_end - f->_IO_read_ptr);
    }
#endif
    return 0;
}

/* The name of file descriptor fd into buf (its path, "pipe:[N]"...). */
static void s_fd_name(int fd, char *buf, size_t cap)
{
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, buf, cap - 1);
    buf[n > 0 ? (size_t)n : 0] = '\0';
    if (n <= 0)
        snprintf(buf, cap, "file descriptor %d", fd);
}

/* ===================================================================
 * Capture
 * =================================================================== */

/* Writes where stdin stands into w and b. LEV_ECAPTURE (with `portable`)
 * when what it read ahead could not be read again by another process. */
static int s_in_capture(uint64_t *w, unsigned char *b, bool portable)
{
    for (int i = W_IN_KIND; i < W_OUT; i++)
        w[i] = 0;
    char *name = (char *)b + B_NAME;
    name[0] = '\0';
    int fd = fileno(stdin);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
        return 0; /* no stdin */
    s_fd_name(fd, name, S_NAME_MAX);
    size_t unread, nback;
    const unsigned char *back;
    flockfile(stdin);
    int known = s_buffered(stdin, &unread, &back, &nback);
    if (nback <= S_BACK_MAX && nback)
        memcpy(b + B_BACK, back, nback);
    bool eof = feof_unlocked(stdin) != 0;
#ifdef __GLIBC__
    bool used = stdin->_IO_buf_base != NULL || nback;
#else
    bool used = true;
    off_t told = ftello(stdin);
#endif
    funlockfile(stdin);
    if (known < 0 && used && portable)
        return rt_err(LEV_ECAPTURE,
                      "stdin (%s) is a wide-oriented stream: what it read ahead cannot be "
                      "carried in an image",
                      name);
    if (nback > S_BACK_MAX && portable)
        return rt_err(LEV_ECAPTURE,
                      "stdin (%s) holds %zu bytes pushed back with ungetc, more than the %d an "
                      "image carries",
                      name, nback, S_BACK_MAX);
    w[W_IN_NBACK] = nback <= S_BACK_MAX ? nback : 0;
    w[W_IN_FLAGS] = eof ? S_IN_EOF : 0;
    off_t at = s_seekable(&st) ? lseek(fd, 0, SEEK_CUR) : -1;
#ifndef __GLIBC__
    at = told >= 0 ? told : at;
#endif
    if (at >= 0 && (uint64_t)at >= unread) {
        w[W_IN_KIND] = S_IN_FILE;
        w[W_IN_POS] = (uint64_t)at - unread;
        w[W_IN_SIZE] = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
        return 0;
    }
    w[W_IN_KIND] = S_IN_STREAM;
    if (unread && portable)
        return rt_err(LEV_ECAPTURE,
                      "stdin is %s (%s) with %zu byte%s read ahead but not consumed: a process "
                      "that resumes the image could not read %s again; redirect stdin from a "
                      "file (< FILE) to checkpoint the program while it reads",
                      s_kind(fd, st.st_mode), name, unread, unread == 1 ? "" : "s",
                      unread == 1 ? "it" : "them");
    return 0;
}

/* Records the file stdout (k 0) or stderr (k 1) writes, when a regular
 * file: its identity and size; whether a resumed process cuts it back is
 * decided at the first capture that sees this file (not opened for
 * appending) and kept while the file stays the same. */
static void s_out_record(int k, uint64_t *w)
{
    uint64_t *o = w + W_OUT + S_OUT_WORDS * k;
    int fd = fileno(k ? stderr : stdout);
    struct stat st;
    int fl = fd >= 0 ? fcntl(fd, F_GETFL) : -1;
    if (fd < 0 || fl < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        memset(o, 0, S_OUT_WORDS * sizeof *o);
        return;
    }
    bool same = (o[O_KIND] & S_OUT_FILE) && o[O_DEV] == (uint64_t)st.st_dev &&
                o[O_INO] == (uint64_t)st.st_ino;
    bool cut = same ? (o[O_KIND] & S_OUT_CUT) != 0 : !(fl & O_APPEND);
    o[O_KIND] = S_OUT_FILE | (cut ? S_OUT_CUT : 0);
    o[O_DEV] = (uint64_t)st.st_dev;
    o[O_INO] = (uint64_t)st.st_ino;
    o[O_SIZE] = (uint64_t)st.st_size;
}

int rt_stdstreams_capture(bool portable)
{
    /* Both first: they may share a file. An error stays on the stream,
     * for the program to see as it would at its own next flush. */
    (void)fflush(stdout);
    (void)fflush(stderr);
    lev_stdio_state *s = s_state;
    if (!s)
        return 0;
    int rc = s_in_capture(s->lev_w, s->lev_b, portable);
    if (rc)
        return rc;
    s_out_record(0, s->lev_w);
    s_out_record(1, s->lev_w);
    s->lev_w[W_MAGIC] = S_MAGIC;
    return 0;
}

/* ===================================================================
 * Resume in a new process
 * =================================================================== */

/* Puts this process's stdin where the image's had been consumed to. */
static int s_in_resume(const uint64_t *w, const unsigned char *b)
{
    char name[S_NAME_MAX];
    memcpy(name, b + B_NAME, sizeof name);
    name[sizeof name - 1] = '\0';
    uint64_t pos = w[W_IN_POS], nback = w[W_IN_NBACK];
    if (nback > S_BACK_MAX)
        return rt_err(LEV_EIMAGE, "damaged state of the standard streams: %llu bytes pushed back",
                      (unsigned long long)nback);
    int fd = fileno(stdin);
    if (w[W_IN_KIND] == S_IN_FILE && pos > 0) {
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0)
            return rt_err(LEV_EIO,
                          "the program had read stdin (%s) up to byte %llu at the image, and this "
                          "process has no stdin: redirect it from the same file",
                          name, (unsigned long long)pos);
        if (!s_seekable(&st) || lseek(fd, 0, SEEK_CUR) < 0) {
            char now[S_NAME_MAX];
            s_fd_name(fd, now, sizeof now);
            return rt_err(LEV_EIO,
                          "the program had read stdin (%s) up to byte %llu at the image, and this "
                          "process's stdin is %s (%s), which cannot be read from there: redirect "
                          "it from the same file (< FILE)",
                          name, (unsigned long long)pos, s_kind(fd, st.st_mode), now);
        }
        if (S_ISREG(st.st_mode) && (uint64_t)st.st_size < pos)
            return rt_err(LEV_EIO,
                          "the program had read stdin (%s) up to byte %llu at the image, and this "
                          "process's stdin has only %lld bytes: redirect it from the same file",
                          name, (unsigned long long)pos, (long long)st.st_size);
        if (fseeko(stdin, (off_t)pos, SEEK_SET) != 0)
            return rt_err(LEV_EIO, "cannot put stdin at byte %llu: %s", (unsigned long long)pos,
                          strerror(errno));
    }
    for (uint64_t i = nback; i-- > 0;)
        if (ungetc(b[B_BACK + i], stdin) == EOF)
            return rt_err(LEV_EIO, "cannot push back the %llu bytes stdin held pushed back",
                          (unsigned long long)nback);
    if (w[W_IN_FLAGS] & S_IN_EOF) {
#ifdef _IO_EOF_SEEN
        stdin->_flags |= _IO_EOF_SEEN;
#else
        if (w[W_IN_KIND] == S_IN_FILE && !nback) {
            int c = getc(stdin); /* at the end: sets the flag again */
            if (c != EOF)
                ungetc(c, stdin);
        }
#endif
    }
    return 0;
}

/* Cuts the file of stdout (k 0) or stderr (k 1) back to its size at the
 * image, when the image says so and it is the same file. */
static int s_out_resume(int k, const uint64_t *w)
{
    const uint64_t *o = w + W_OUT + S_OUT_WORDS * k;
    if ((o[O_KIND] & (S_OUT_FILE | S_OUT_CUT)) != (S_OUT_FILE | S_OUT_CUT))
        return 0;
    const char *what = k ? "stderr" : "stdout";
    int fd = fileno(k ? stderr : stdout);
    struct stat st;
    int fl = fd >= 0 ? fcntl(fd, F_GETFL) : -1;
    if (fd < 0 || fl < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        (uint64_t)st.st_dev != o[O_DEV] || (uint64_t)st.st_ino != o[O_INO] ||
        (uint64_t)st.st_size < o[O_SIZE])
        return 0; /* another file, or one cut shorter since: written on as it is */
    if ((uint64_t)st.st_size > o[O_SIZE] && ftruncate(fd, (off_t)o[O_SIZE]) != 0) {
        char name[S_NAME_MAX];
        s_fd_name(fd, name, sizeof name);
        return rt_err(LEV_EIO, "cannot cut %s's file %s back to its %llu bytes at the image: %s",
                      what, name, (unsigned long long)o[O_SIZE], strerror(errno));
    }
    if (!(fl & O_APPEND) && lseek(fd, (off_t)o[O_SIZE], SEEK_SET) < 0)
        return rt_err(LEV_EIO, "cannot put %s at byte %llu: %s", what,
                      (unsigned long long)o[O_SIZE], strerror(errno));
    return 0;
}

int rt_stdstreams_resume(void)
{
    lev_stdio_state *s = s_state;
    if (!s || s->lev_w[W_MAGIC] != S_MAGIC)
        return 0; /* no state armed, or an image no capture wrote it into */
    /* stdin first: a resume it fails leaves the output files alone. */
    int rc = s_in_resume(s->lev_w, s->lev_b);
    if (!rc)
        rc = s_out_resume(0, s->lev_w);
    if (!rc)
        rc = s_out_resume(1, s->lev_w);
    return rc;
}
