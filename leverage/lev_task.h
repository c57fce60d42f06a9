/* lev_task.h - what task code calls on the runtime: its own id, reports,
 * its result, and the runner of a whole program turned into a task.
 *
 * Installed; included by code that levpp generates and by hand-written
 * task code.
 */
#ifndef LEV_TASK_H
#define LEV_TASK_H

#include <stddef.h>
#include <stdint.h>

/* levpp's outputs define LEV_TASK_OUTPUT, and LEV_TASK_STDIO or
 * LEV_TASK_TIME only where they call the stream or time functions below
 * (the program then includes <stdio.h> or <time.h> itself): a program's
 * own file-scope names, such as a global `time`, must not meet
 * declarations of headers it did not include. Other code gets all. */
#ifndef LEV_TASK_OUTPUT
#define LEV_TASK_STDIO 1
#define LEV_TASK_TIME 1
#endif
#ifdef LEV_TASK_STDIO
#include <stdarg.h>
#include <stdio.h>
#include <sys/types.h>
#endif
#ifdef LEV_TASK_TIME
#include <time.h>
#endif

#include "lev_abi.h"

/* Marks a task entry: LEV_TASK void name(const void *arg, size_t len).
 * levpp finds entries by this annotation; other compilers see nothing. */
#if defined(__clang__)
#define LEV_TASK __attribute__((__annotate__("lev_task")))
#else
#define LEV_TASK
#endif

/* Marks a function that runs to its end without a safe point: levpp does
 * not poll its loops and it calls its callees' native entries, so it runs
 * at native speed (a hot kernel: one generation of a genetic algorithm,
 * one block of a matrix product). A VT in it can be neither captured nor
 * checkpointed until it returns, so keep each call short (milliseconds).
 * One that reaches a safe point of its own (lev_recv, lev_checkpoint, a
 * function that does) is an error of levpp. Other compilers see nothing. */
#if defined(__clang__)
#define LEV_ATOMIC __attribute__((__annotate__("lev_atomic")))
#else
#define LEV_ATOMIC
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The id of the calling virtual thread, stable across migration; 0 when
 * called outside a virtual thread. */
LEV_API uint64_t lev_self(void);

/* Sends a partial result to the client: the runtime copies buf and hands
 * it to the host, which delivers the VT's reports to the client's report
 * callback in order, each once, rollbacks included (see Messages below).
 * Not a safe point. 0; LEV_ENOVT outside a virtual thread; LEV_EINVAL,
 * LEV_ENOMEM. A virtual thread whose host takes no reports drops them. */
LEV_API int lev_report(const void *buf, size_t len);

/* ===================================================================
 * Messages and global variables
 * ===================================================================
 * Virtual threads of one virtual computer (VC) exchange buffered
 * messages, addressed by VT id (stable across migration; LEV_CLIENT is
 * the client application), and share named global variables that are
 * read and written only under their lock. Every input a VT takes from
 * these channels comes from one ordered stream per VT that its deployer
 * keeps: the messages sent to it, the receive timeouts, the lock grants
 * with the values they carry, the snapshot reads. A VT rolled back to a
 * checkpoint and resumed elsewhere replays that stream, so it sees
 * exactly the inputs it saw before (which message each receive returned,
 * which receives timed out, which values its locks gave it), and what it
 * sends again is recognised by its output number and dropped.
 *
 * Piecewise determinism is assumed: between two inputs from these
 * channels a VT computes the same thing every time it runs that stretch
 * (no reading of clocks, random devices, files others write, addresses
 * or the scheduling of other threads to decide what it sends). Under
 * that assumption messages, global updates, reports and results are
 * exactly-once. Only Leverage's own channels are: a task's printf, file
 * writes or other effects on the world may repeat after a rollback.
 *
 * Buffers: what lev_recv, lev_global_lock and lev_global_read hand back
 * is an object of the VT's heap, which the VT may keep across safe points
 * (it moves with the VT) and releases with free(). Outside a VT these
 * calls return LEV_ENOVT. A message is at most the VC's message limit and
 * a value at most its value limit (LEV_ERANGE, the detail naming the
 * limit); a name is 1 to LEV_NAME_MAX bytes (LEV_EINVAL).
 *
 * In checkpointable code (levpp's output) lev_recv, lev_global_lock,
 * lev_global_read and a lev_send that must wait are blocking safe points:
 * the VT is parked, may be checkpointed and migrated while it waits, and
 * goes on when the call can complete. In code levpp did not transform
 * they wait on the calling OS thread instead, and no checkpoint is taken
 * meanwhile. */
#define LEV_NAME_MAX 255

/* lev_recv: from any sender; the client application as a sender (the
 * same as lev_client.h's). */
#ifndef LEV_ANY
#define LEV_ANY ((uint64_t)0)
#define LEV_CLIENT ((uint64_t)1)
#endif

/* Sends a copy of buf[len] to VT `to`, after every
 * message this VT sent before; it waits only while this VT has more
 * messages in flight than its window (flow control: the deployer lets
 * them through as fast as the receivers consume). 0; LEV_ENOVT when `to`
 * is known not to be in the VC or to have ended (learnt from a lev_recv
 * that returned LEV_ENOVT for it); LEV_EINVAL (to LEV_ANY, LEV_CLIENT,
 * which takes reports instead, or the VT itself; buf NULL with len > 0); LEV_ERANGE (above the
 * message limit); LEV_ENOMEM. */
LEV_API int lev_send(uint64_t to, const void *buf, size_t len);

/* Receives the next message: from *from if it is a VT id or LEV_CLIENT,
 * from any sender if it is LEV_ANY (0), in the order of the VT's input
 * stream. Sets *from to the sender, *buf to the message (a heap object,
 * NULL when len is 0) and *len. Waits at most timeout_ms (< 0: no limit;
 * 0: only what has already arrived). 0; LEV_ETIMEDOUT; LEV_ENOVT with
 * *from set: a message this VT sent to *from was not delivered, because
 * that VT is not in the VC or has ended (*buf NULL); LEV_EINVAL (a NULL
 * pointer); LEV_ENOMEM.
 * The end of a peer: when VT X ends, every other VT of the VC then
 * running is told, in its stream, after every message X sent it. A
 * receive from X returns X's messages first, then, instead of waiting for
 * ever, LEV_EFAILED (X failed for good: its images were all lost, it
 * crashed its executor --crash-limit times, or its task failed) or
 * LEV_ENOVT (X ended normally), with *from = X and *buf NULL; so does
 * every later receive from X, at once. A receive from LEV_ANY is not
 * interrupted by the end of a VT (it may still get messages from the
 * others and from the client): a VT that waits for several peers, one of
 * which may fail, receives from each in turn or uses a time limit. A VT
 * started after X ended is not told: its receive from X waits. */
LEV_API int lev_recv(uint64_t *from, void **buf, size_t *len, int timeout_ms);

/* Takes the lock of global variable `name` (waiting for it) and sets
 * *value and *len to a copy of its value (a heap object; NULL and 0 for
 * a variable never set). A VT holds one lock at a time (so locks cannot
 * deadlock each other). While a VT holds a lock its checkpoints wait for
 * the unlock, and what it sends and reports reaches others only once it
 * unlocks; if its worker is lost meanwhile, the lock goes to the next
 * waiter and nothing the VT did under it counts (it does it again when it
 * resumes). If the holder ends holding the lock, the lock goes to the
 * next waiter with the value unchanged: what the holder sent and reported
 * under it is delivered if it ended normally, and discarded if it failed
 * (a waiter is never left waiting for a holder that is gone). 0;
 * LEV_EBUSY (this VT holds a lock already); LEV_EINVAL; LEV_ENOMEM. */
LEV_API int lev_global_lock(const char *name, void **value, size_t *len);

/* Sets the value of `name` to a copy of value[len] (value NULL: keep the
 * value it had) and releases its lock: the update is applied once, as one
 * step with the lock's read. 0; LEV_EINVAL (not held by this VT, or a bad
 * name); LEV_ERANGE (above the value limit: the lock stays held). */
LEV_API int lev_global_unlock(const char *name, const void *value, size_t len);

/* A read-only snapshot of `name`'s committed value, without its lock:
 * *value is a heap object (NULL and 0 for a variable never set). 0;
 * LEV_EINVAL; LEV_ENOMEM. */
LEV_API int lev_global_read(const char *name, void **value, size_t *len);

/* Sets `name` to a copy of value[len] if `version` is above the version
 * of its value, without its lock and without waiting: a commit whose
 * writer needs no answer (a value written once, or one that only moves
 * forward, such as a state after its Nth step with version N). The
 * deployer applies puts and unlocks of a variable one at a time, in the
 * order they reach it; a put waits there while another VT holds the
 * lock. A variable's version is the highest one a put applied to it (0
 * until then; unlocks and lev_global_set leave it as it is), so a put
 * repeated, or one that arrives after a higher one, changes nothing.
 * It is an output of the VT like a report: exactly once, even when the
 * VT ends or fails for good before it is applied. A VT that locks the
 * variable after receiving a message this VT sent after the put sees
 * it (or a later value); so does a read, unless a lock holder that was
 * ahead of the put has not unlocked yet. 0; LEV_EINVAL (bad name, version 0, value
 * NULL with len > 0); LEV_EBUSY (this VT holds a lock: put after the
 * unlock); LEV_ERANGE (above the value limit); LEV_ENOMEM. */
LEV_API int lev_global_put(const char *name, const void *value, size_t len, uint64_t version);

/* Sets the result of the calling virtual thread (a copy of buf; a second
 * call replaces the first) and ends it. Ending is done by the code around
 * the call: in a checkpointable function levpp follows the call with
 * `return LEV_RUN_EXIT`, and every caller up the chain pops its callee's
 * frame and returns LEV_RUN_EXIT too; hand-written bodies do the same.
 * Called from a function levpp did not transform, it only sets the
 * result, and the VT ends when its entry returns.
 * 0; LEV_ENOVT outside a virtual thread; LEV_EINVAL, LEV_ENOMEM. */
LEV_API int lev_return(const void *buf, size_t len);

/* Asks for a checkpoint if one is due. This plain function is what code
 * that levpp did not transform reaches: it is not a safe point and returns
 * 0. In checkpointable code the call is a safe point,
 * lev_safepoint(vt, LEV_SP_CHECKPOINT), and may unwind the VT. */
LEV_API int lev_checkpoint(void);

/* Lets the other virtual threads of the worker run first. This plain
 * function is what code that levpp did not transform reaches: it returns
 * 0 at once. In checkpointable code the call is a safe point,
 * lev_safepoint(vt, LEV_SP_YIELD): the VT unwinds, goes to the back of
 * its run queue (a checkpoint that is due is taken then) and goes on
 * after the call when it runs again; it returns 0. */
LEV_API int lev_yield(void);

/* Runs a whole program as one virtual thread and returns its exit status:
 * what `main` of a --main-task program calls. `fn` is the id of main in
 * the module (flag LEV_FN_MAIN, frame beginning with lev_main_frame).
 * argv (and the environment) are copied into the VT's heap, so they are
 * part of its images. Environment of the process:
 *   LEV_CHECKPOINT_FILE=PATH  capture the VT every LEV_CHECKPOINT_MS
 *                             (default 1000) at a safe point and keep the
 *                             newest image in PATH (written to PATH.tmp,
 *                             synced, renamed), stdout and stderr flushed
 *                             before each image;
 *   LEV_RESUME=PATH           do not start main: continue the VT of the
 *                             image in PATH, with the argv and environment
 *                             recorded in it, stdin read on from where the
 *                             program had consumed it (redirect it from
 *                             the same file) and a stdout or stderr that
 *                             is the same file as at the image cut back
 *                             to its size then (lev_stdio_state below);
 *   LEV_TORTURE=N             capture and restore at new addresses,
 *                             the old memory poisoned, at every N-th
 *                             safe point.
 * Returns main's return value; 2 after printing a message on stderr if the
 * program cannot start or resume (missing, damaged or foreign image, bad
 * descriptors) or its VT fails. */
LEV_API int lev_main_run(const lev_module_desc *desc, uint32_t fn, int argc, char **argv);

/* C library calls with hidden state, over state the caller owns (levpp
 * rewrites the originals in --main-task programs into these, on
 * generated travelling statics; see preproc/README.md).
 *
 * lev_rand_state: the state of rand()/random(), plain integers only (the
 * taps are indices), so that it is captured like any other static. A
 * zeroed state behaves as if seeded with 1, as rand() does unseeded. */
typedef struct lev_rand_state {
    int32_t lev_r[31];     /* the additive feedback table */
    uint32_t lev_f, lev_b; /* front and back tap: indices into lev_r */
    uint32_t lev_seeded;   /* 0: not yet seeded */
} lev_rand_state;

/* The next number of the sequence, in [0, 2^31 - 1]: the same sequence
 * as the GNU C library's rand() and random() for every seed. */
LEV_API int lev_rand_r(lev_rand_state *st);

/* srand(seed) / srandom(seed) on *st (seed 0 is taken as 1). */
LEV_API void lev_srand_r(lev_rand_state *st, unsigned seed);

/* strtok_r(s, delim, save), except that *save becomes NULL once the
 * string is used up (the next call would return NULL, and does). */
LEV_API char *lev_strtok_r(char *s, const char *delim, char **save);

/* (Parameters without names: this header comes after the program's own
 * macros in levpp's output, and `#define line 1000` must not reach it.)
 *
 * C library calls that return memory of their own allocation, on the VT
 * heap instead (levpp renames getline, getdelim, strndup, asprintf,
 * vasprintf and open_memstream in task sources into calls of these, with
 * the module's heap): what they return, or grow, is a heap object that
 * images carry. Same results and errors as the C library's. */
LEV_API char *lev_strndup(const lev_module *, const char *, size_t);
#ifdef LEV_TASK_STDIO
LEV_API ssize_t lev_getdelim(const lev_module *, char **, size_t *, int, FILE *);
LEV_API int lev_vasprintf(const lev_module *, char **, const char *, va_list);

/* Streams that images carry (levpp renames fopen, freopen, fclose and
 * open_memstream in task sources): the FILE is the C library's, and the
 * runtime keeps a record of it on the VT heap. A capture flushes the
 * stream and carries where it stands; a restore in another process
 * reopens the file by its absolute path at that offset (a file opened
 * with a "w" mode is first cut back to its size at the capture), or
 * rebuilds the memory stream; in the same process it is the same FILE.
 * A pointer to a stream the program closed is carried as dangling. */

/* fopen(path, mode), registered. */
LEV_API FILE *lev_fopen(const lev_module *, const char *, const char *);

/* freopen(path, mode, stream), the new stream registered (a standard
 * stream stays the process's own). */
LEV_API FILE *lev_freopen(const lev_module *, const char *, const char *, FILE *);

/* fclose(stream); a registered stream is remembered as closed. */
LEV_API int lev_fclose(FILE *);

/* open_memstream(bufp, sizep) writing to a heap object; *bufp and *sizep
 * are up to date after every write (the C library's only after fflush
 * and fclose). */
LEV_API FILE *lev_open_memstream(const lev_module *, char **, size_t *);
#endif /* LEV_TASK_STDIO */

#ifdef LEV_TASK_TIME
/* lev_time_state: what localtime, gmtime, asctime and ctime return,
 * in a travelling static instead of the C library's: the broken-down
 * time (its tm_zone pointing to lev_zone, a copy of the zone's name) and
 * the text of asctime and ctime. lev_raw is the same struct tm spelled
 * out (the runtime checks the layout), so that generated descriptors name
 * its fields whatever the feature macros call them. */
typedef struct lev_time_state {
    union {
        struct tm lev_tm;
        struct {
            int lev_i[9];
            long lev_gmtoff;
            const char *lev_zonep;
        } lev_raw;
    } lev_u;
    char lev_zone[16];
    char lev_text[32];
} lev_time_state;

/* localtime(t) (local != 0) or gmtime(t) into st->lev_u.lev_tm, which it
 * returns (NULL: as the C library's). */
LEV_API struct tm *lev_time_r(lev_time_state *, const time_t *, int);

/* asctime(tm) into st->lev_text, which it returns. */
LEV_API char *lev_asctime_r(lev_time_state *, const struct tm *);
#endif /* LEV_TASK_TIME */

/* lev_exit_state: the functions a program registered with atexit(), in
 * the order of registration, kept in a travelling static so that a
 * process that resumes the program runs them at its exit. At least 32
 * registrations, as C requires. */
#define LEV_EXIT_MAX 32
typedef struct lev_exit_state {
    void (*lev_fn[LEV_EXIT_MAX])(void);
    uint32_t lev_n; /* registered so far */
} lev_exit_state;

/* atexit(fn) onto *st: 0, or -1 when LEV_EXIT_MAX are registered. */
LEV_API int lev_atexit_r(lev_exit_state *, void (*)(void));

/* Makes this process run st's functions, the last registered first, when
 * it exits (once per process; a second call only changes st). */
LEV_API void lev_exit_arm(lev_exit_state *);

/* lev_stdio_state: where a --main-task program's standard streams stood
 * at its newest capture, in a travelling static that levpp generates for
 * every such program: how far it had consumed stdin (and the bytes it
 * pushed back with ungetc), and which files stdout and stderr had written
 * up to where once flushed. Written by each capture, read by a resume in
 * a new process (runtime/stdstreams.c); the program never touches it.
 * Plain words and bytes, so that it is carried like any other static. */
#define LEV_STDIO_WORDS 16
#define LEV_STDIO_BYTES 288
typedef struct lev_stdio_state {
    uint64_t lev_w[LEV_STDIO_WORDS];
    unsigned char lev_b[LEV_STDIO_BYTES];
} lev_stdio_state;

/* Makes st the state that this process's captures write and that
 * lev_main_run reads back when it resumes an image (called by the main
 * levpp writes, before lev_main_run). */
LEV_API void lev_stdio_arm(lev_stdio_state *);

#ifdef __cplusplus
}
#endif

#endif
