/* pp_util.c - small helpers of levpp: memory, strings, growable buffers,
 * and the one diagnostic printer (errors and warnings).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "levpp.h"

/* ===================================================================
 * Small helpers: memory, strings, growable buffers
 * =================================================================== */

void *pp_xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        pp_error_noloc(NULL, "out of memory");
        exit(1);
    }
    return p;
}

char *pp_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(pp_xrealloc(NULL, n), s, n);
}

void pp_putn(pp_buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        while (b->n + n + 1 > b->cap)
            b->cap = b->cap ? b->cap * 2 : 256;
        b->p = pp_xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

void pp_puts(pp_buf *b, const char *s) { pp_putn(b, s, strlen(s)); }

static void pp_vprintf(pp_buf *b, const char *fmt, va_list ap)
{
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    char *tmp = pp_xrealloc(NULL, (size_t)n + 1);
    vsnprintf(tmp, (size_t)n + 1, fmt, ap);
    pp_putn(b, tmp, (size_t)n);
    free(tmp);
}

void __attribute__((format(printf, 2, 3))) pp_printf(pp_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pp_vprintf(b, fmt, ap);
    va_end(ap);
}

char *__attribute__((format(printf, 1, 2))) pp_fmt(const char *fmt, ...)
{
    pp_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    pp_vprintf(&b, fmt, ap);
    va_end(ap);
    if (!b.p)
        return pp_strdup("");
    return b.p;
}

/* Copies a CXString and disposes it. */
char *pp_cxstring(CXString s)
{
    const char *c = clang_getCString(s);
    char *r = pp_strdup(c ? c : "");
    clang_disposeString(s);
    return r;
}

unsigned pp_lines_in(const pp_buf *b)
{
    unsigned n = 1;
    for (size_t i = 0; i < b->n; i++)
        n += b->p[i] == '\n';
    return n;
}

/* ===================================================================
 * Diagnostics
 * =================================================================== */

/* The one diagnostic printer: `FILE:LINE:COL: error: levpp: TEXT`, or
 * `FILE: error: levpp: TEXT` with no line, or `levpp: error: TEXT` with no
 * file; warnings alike with `warning:`. Errors are counted in ctx.errors
 * when `count` is set (a run with errors writes nothing). */
void pp_vdiag(int severity, int count, const char *file, unsigned line, unsigned col,
              const char *fmt, va_list ap)
{
    const char *what = severity == PP_WARNING ? "warning" : "error";
    if (file && line)
        fprintf(stderr, "%s:%u:%u: %s: levpp: ", file, line, col, what);
    else if (file)
        fprintf(stderr, "%s: %s: levpp: ", file, what);
    else
        fprintf(stderr, "levpp: %s: ", what);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    if (severity == PP_ERROR && count)
        ctx.errors++;
}

void pp_error_noloc(const char *file, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pp_vdiag(PP_ERROR, 1, file, 0, 0, fmt, ap);
    va_end(ap);
}

/* A diagnostic at a source location (its expansion location). */
void pp_diag(int severity, CXSourceLocation loc, const char *fmt, ...)
{
    CXFile file;
    unsigned line, col;
    clang_getExpansionLocation(loc, &file, &line, &col, NULL);
    char *name = file ? pp_cxstring(clang_getFileName(file)) : pp_strdup("levpp");
    va_list ap;
    va_start(ap, fmt);
    pp_vdiag(severity, 1, name, line, col, fmt, ap);
    va_end(ap);
    free(name);
}
