/* errors.c - error codes, per-thread error detail, and one-time runtime
 * initialisation (Boehm GC, tpl hooks).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GC_THREADS
#include <gc/gc.h>
#include <tpl.h>

#include "rt.h"
#include "rt_tpl.h"

/* Defined by libtpl, not declared in its header. */
extern tpl_hook_t tpl_hook;

/* ===================================================================
 * Messages and detail
 * =================================================================== */

static __thread char s_detail[512];

const char *lev_strerror(int err)
{
    switch (err) {
    case 0:
        return "success";
#define LEV_ERR_CASE_(name, val, msg)                                                              \
    case val:                                                                                      \
        return msg;
        LEV_ERRNO_MAP(LEV_ERR_CASE_)
#undef LEV_ERR_CASE_
    default:
        return "unknown error";
    }
}

const char *lev_errdetail(void) { return s_detail; }

int rt_err(int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s_detail, sizeof s_detail, fmt, ap);
    va_end(ap);
    return err;
}

void rt_err_clear(void) { s_detail[0] = '\0'; }

/* ===================================================================
 * tpl hooks: never print, never exit
 * =================================================================== */

static __thread jmp_buf *s_tpl_jmp;

jmp_buf **rt_tpl_jmp_slot(void) { return &s_tpl_jmp; }

static int s_tpl_oops(const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    size_t n = strlen(buf);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        buf[--n] = '\0';
    rt_err(LEV_EIMAGE, "tpl: %s", buf);
    return 0;
}

static void s_tpl_fatal(const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    rt_err(LEV_ENOMEM, "tpl: %s", buf);
    if (s_tpl_jmp)
        longjmp(*s_tpl_jmp, 1);
    /* Reached only if tpl is used outside a guarded region: a bug. */
    fprintf(stderr, "leverage: unguarded tpl failure: %s\n", buf);
    abort();
}

/* ===================================================================
 * Initialisation
 * =================================================================== */

static pthread_once_t s_once = PTHREAD_ONCE_INIT;

static void s_init(void)
{
    GC_set_all_interior_pointers(1);
    GC_INIT();
    GC_allow_register_threads();
    tpl_hook.oops = s_tpl_oops;
    tpl_hook.fatal = s_tpl_fatal;
}

void rt_init(void) { pthread_once(&s_once, s_init); }
