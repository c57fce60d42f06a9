/* libc_alloc.c - C library calls that hand the caller memory of their own
 * allocation, reimplemented on the VT heap: getline and getdelim, strndup,
 * asprintf and vasprintf (open_memstream is in streams.c, with the other
 * streams that images carry).
 *
 * levpp renames them in task sources (see preproc/README.md, "C library
 * calls"). What they return is then a heap object like any other: a
 * capture carries it, the collector frees it, and a buffer that
 * getline grows may come from an earlier capture. The C library's own
 * versions would return (or realloc) memory the runtime does not own.
 */
#define _GNU_SOURCE /* vasprintf */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
