/* rt.h - the runtime's shared base: error codes with a detail for
 * lev_errdetail(), and the one-time process initialisation (errors.c).
 *
 * Internal (not installed). It exposes nothing else: each module of the
 * runtime has its own internal header (module.h, heap.h, arena.h, vt.h,
 * image.h, executor.h, ...), and the order in which they depend on each
 * other is in runtime/README.md ("Modules"). The runtime knows nothing
 * about networks: the channels a task uses (reports, results, images)
 * leave it through the callbacks the embedding side gives the executor.
 */
#ifndef RT_H
#define RT_H

#include "lev_abi.h"

/* Records `err` with a printf-style detail for lev_errdetail() on this
 * thread and returns err, so failures read `return rt_err(LEV_EIMAGE, ...)`. */
int rt_err(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clears this thread's error detail. */
void rt_err_clear(void);

/* Thread-local variables read on every allocation: the initial-exec
 * model reaches them without a call (the library is loaded with the
 * program, or by dlopen into the static TLS surplus, a few bytes). */
#define RT_TLS_FAST __attribute__((tls_model("initial-exec")))

/* One-time process initialisation (GC, tpl hooks); idempotent, thread-safe. */
void rt_init(void);

#endif
