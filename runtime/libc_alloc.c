/* libc_alloc.c - C library calls that hand the caller memory of their own
 * allocation, reimplemented on the VT heap: getline and getdelim, strndup,
 * asprintf and vasprintf, open_memstream.
 *
 * levpp renames them in task sources (see preproc/README.md, "C library
 * calls"). What they return is then a heap object like any other: a
 * capture carries it, the collector frees it, and a buffer that
 * getline grows may come from an earlier capture. The C library's own
 * versions would return (or realloc) memory the runtime does not own.
 */
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GC_THREADS
#include <gc/gc.h>

#include "lev_task.h"

/* Grows *buf (a heap object of bytes, NULL, or memory of the C library)
 * to at least `need` bytes, doubling; *cap is its size. 0, or -1. */
static int s_grow(const lev_module *m, char **buf, size_t *cap, size_t need)
{
    if (*buf && need <= *cap)
        return 0;
    size_t n = *cap > 64 ? *cap : 64;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return -1;
        n *= 2;
    }
    char *nb = lev_realloc(m, *buf, LEV_T_BYTES, n);
    if (!nb)
        return -1;
    *buf = nb;
    *cap = n;
    return 0;
}

ssize_t lev_getdelim(const lev_module *m, char **line, size_t *n, int delim, FILE *fp)
{
    if (!line || !n || !fp) {
        errno = EINVAL;
        return -1;
    }
    size_t len = 0;
    flockfile(fp);
    for (;;) {
        int c = getc_unlocked(fp);
        if (c == EOF)
            break;
        if (s_grow(m, line, n, len + 2)) {
            funlockfile(fp);
            errno = ENOMEM;
            return -1;
        }
        (*line)[len++] = (char)c;
        if (c == delim)
            break;
    }
    funlockfile(fp);
    if (len == 0) {
        if (s_grow(m, line, n, 1) == 0)
            (*line)[0] = '\0';
        return -1; /* end of file or error, as getdelim says */
    }
    (*line)[len] = '\0';
    return (ssize_t)len;
}

char *lev_strndup(const lev_module *m, const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *d = lev_alloc(m, LEV_T_BYTES, len + 1);
    if (!d)
        return NULL;
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

int lev_vasprintf(const lev_module *m, char **out, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int len = vsnprintf(NULL, 0, fmt, ap);
    char *d = len < 0 ? NULL : lev_alloc(m, LEV_T_BYTES, (size_t)len + 1);
    if (d)
        vsnprintf(d, (size_t)len + 1, fmt, again);
    va_end(again);
    if (!d)
        return -1; /* *out is left as it was, as the C library leaves it */
    *out = d;
    return len;
}

/* ===================================================================
 * open_memstream: a stream of the C library (fopencookie) whose bytes go
 * to a heap object; *bufp and *sizep follow every write, so that they
 * hold what fflush and fclose promise at any time
 * =================================================================== */

typedef struct s_memstream {
    const lev_module *m;
    char **bufp;
    size_t *sizep;
    char *buf; /* the heap object (also in *bufp) */
    size_t cap, len, pos;
} s_memstream;

static void s_mem_publish(s_memstream *ms)
{
    *ms->bufp = ms->buf;
    *ms->sizep = ms->pos < ms->len ? ms->pos : ms->len;
}

static ssize_t s_mem_write(void *cookie, const char *data, size_t n)
{
    s_memstream *ms = cookie;
    if (n > SIZE_MAX - ms->pos - 1 || s_grow(ms->m, &ms->buf, &ms->cap, ms->pos + n + 1)) {
        errno = ENOMEM;
        return 0;
    }
    if (ms->pos > ms->len) /* written past the end after a seek: zeros between */
        memset(ms->buf + ms->len, 0, ms->pos - ms->len);
    memcpy(ms->buf + ms->pos, data, n);
    ms->pos += n;
    if (ms->pos > ms->len)
        ms->len = ms->pos;
    ms->buf[ms->len] = '\0';
    s_mem_publish(ms);
    return (ssize_t)n;
}

static int s_mem_seek(void *cookie, off64_t *offset, int whence)
{
    s_memstream *ms = cookie;
    off64_t base = whence == SEEK_SET   ? 0
                   : whence == SEEK_CUR ? (off64_t)ms->pos
                                        : (off64_t)ms->len;
    if (whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END)
        return -1;
    if (*offset < -base) {
        errno = EINVAL;
        return -1;
    }
    ms->pos = (size_t)(base + *offset);
    *offset = (off64_t)ms->pos;
    return 0;
}

static int s_mem_close(void *cookie)
{
    s_memstream *ms = cookie;
    s_mem_publish(ms);
    GC_FREE(ms);
    return 0;
}

FILE *lev_open_memstream(const lev_module *m, char **bufp, size_t *sizep)
{
    if (!bufp || !sizep) {
        errno = EINVAL;
        return NULL;
    }
    /* Scanned by the collector (the stream's cookie lives in memory of
     * the C library, which is not) and never collected while open. */
    s_memstream *ms = GC_MALLOC_UNCOLLECTABLE(sizeof *ms);
    if (!ms) {
        errno = ENOMEM;
        return NULL;
    }
    *ms = (s_memstream){.m = m, .bufp = bufp, .sizep = sizep};
    if (s_grow(m, &ms->buf, &ms->cap, 1)) {
        GC_FREE(ms);
        errno = ENOMEM;
        return NULL;
    }
    ms->buf[0] = '\0';
    s_mem_publish(ms);
    cookie_io_functions_t io = {.write = s_mem_write, .seek = s_mem_seek, .close = s_mem_close};
    FILE *fp = fopencookie(ms, "w", io);
    if (!fp)
        GC_FREE(ms);
    return fp;
}
