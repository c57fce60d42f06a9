/* pc_tasks.c - the task sources of the peer controller's tests, built by
 * leverage_add_tasks into a task module that the tests ship to executor
 * processes: a sum, a long deterministic computation that reports its
 * progress, one that crashes its executor, one with a large live heap, and
 * one that runs a shell command (what whoever reaches a peer may ask).
 * Every result is a pure function of the argument, however often the VT
 * is captured, stopped, restored or moved. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lev_task.h"
#include "pc_tasks.h"

#define PC_BIG_CHUNK 131072 /* longs in one MiB */

/* Returns the sum of i for i below the long argument. */
LEV_TASK void pc_sum(const void *arg, size_t len)
{
    long n = len == sizeof(long) ? *(const long *)arg : 0;
    long s = 0;
    for (long i = 0; i < n; i++)
        s += i;
    lev_return(&s, sizeof s);
}

/* n rounds of integer mixing of x (xorshift and multiply). */
uint64_t pc_mix(uint64_t x, long n)
{
    for (long i = 0; i < n; i++) {
        x ^= x >> 31;
        x *= 0x9E3779B97F4A7C15ull;
        x += (uint64_t)i;
    }
    return x;
}

/* `steps` steps of step_work rounds of mixing each, reporting the step
 * number every eighth of the way; each step also folds in and rewrites
 * one long of the heap chunks, if any. Returns the checksum. */
uint64_t pc_steps(uint64_t x, long steps, long step_work, long **chunks, long nchunks)
{
    long every = steps >= 8 ? steps / 8 : 1;
    for (long s = 0; s < steps; s++) {
        x = pc_mix(x, step_work);
        if (nchunks > 0) {
            long *c = chunks[s % nchunks];
            long at = (long)(x % PC_BIG_CHUNK);
            x ^= (uint64_t)c[at];
            c[at] = (long)(x >> 1);
        }
        if ((s + 1) % every == 0) {
            long step = s + 1;
            lev_report(&step, sizeof step);
        }
    }
    return x;
}

/* Argument: long steps, long step_work. Returns a 64-bit checksum. */
LEV_TASK void pc_spin(const void *arg, size_t len)
{
    const long *a = arg;
    long steps = len == 2 * sizeof(long) ? a[0] : 0;
    long work = len == 2 * sizeof(long) ? a[1] : 0;
    uint64_t x = pc_steps(PC_SPIN_SEED, steps, work, NULL, 0);
    lev_return(&x, sizeof x);
}

/* Argument: pc_gate_arg. Runs pc_spin's steps, then waits until the gate
 * file exists (looking every millisecond) and returns pc_spin's checksum:
 * the VT stays alive, and can be captured, stopped or lost, until its
 * client opens the gate, however fast the machine is. */
LEV_TASK void pc_gated(const void *arg, size_t len)
{
    const pc_gate_arg *a = arg;
    if (len != sizeof *a || !memchr(a->gate, '\0', sizeof a->gate)) {
        lev_return(NULL, 0);
        return;
    }
    uint64_t x = pc_steps(PC_SPIN_SEED, a->steps, a->step_work, NULL, 0);
    struct timespec ms = {0, 1000000};
    while (access(a->gate, F_OK) != 0)
        nanosleep(&ms, NULL);
    lev_return(&x, sizeof x);
}

/* An address in the first page above NULL, where nothing is ever mapped
 * (not NULL itself: a sanitizer would report a null load and exit
 * instead of letting the fault happen), hidden from the compiler. */
static volatile uintptr_t pc_hole = 4096;

/* Reads from pc_hole: the executor that runs it dies of SIGSEGV. */
LEV_TASK void pc_crash(const void *arg, size_t len)
{
    (void)arg;
    (void)len;
    long v = *(volatile long *)pc_hole;
    lev_return(&v, sizeof v);
}

/* Argument: long mib, long steps, long step_work. Fills mib MiB of heap
 * with longs, runs pc_spin's steps over it (each step rewriting one long)
 * and returns a 64-bit checksum over the steps and the whole heap. */
LEV_TASK void pc_big(const void *arg, size_t len)
{
    const long *a = arg;
    long mib = len == 3 * sizeof(long) ? a[0] : 0;
    long steps = len == 3 * sizeof(long) ? a[1] : 0;
    long work = len == 3 * sizeof(long) ? a[2] : 0;
    long **chunks = malloc((size_t)(mib > 0 ? mib : 1) * sizeof *chunks);
    for (long i = 0; i < mib; i++) {
        chunks[i] = malloc(PC_BIG_CHUNK * sizeof(long));
        for (long j = 0; j < PC_BIG_CHUNK; j++)
            chunks[i][j] = (i * PC_BIG_CHUNK + j) * 2654435761L;
    }
    uint64_t x = pc_steps(0x13198A2E03707344ull, steps, work, chunks, mib);
    for (long i = 0; i < mib; i++) {
        for (long j = 0; j < PC_BIG_CHUNK; j++)
            x = x * 31 + (uint64_t)chunks[i][j];
        free(chunks[i]);
    }
    free(chunks);
    lev_return(&x, sizeof x);
}

/* Argument: a shell command line (at most 511 bytes). Runs it with
 * system() and returns its wait status as an int. */
LEV_TASK void pc_system(const void *arg, size_t len)
{
    char cmd[512];
    size_t n = len < sizeof cmd - 1 ? len : sizeof cmd - 1;
    memcpy(cmd, arg, n);
    cmd[n] = '\0';
    int st = system(cmd);
    lev_return(&st, sizeof st);
}

/* Argument: long kind, long to, long bytes. Kind 0 commits a value of
 * `bytes` bytes to the global variable "probe"; kind 1 sends a message
 * of `bytes` bytes to VT `to`. Returns the call's result as an int: 0,
 * or the error the VC's limits give. */
LEV_TASK void pc_probe(const void *arg, size_t len)
{
    const long *a = arg;
    int rc = LEV_EINVAL;
    long bytes = len == 3 * sizeof(long) ? a[2] : -1;
    char *buf = bytes >= 0 ? calloc(1, (size_t)bytes + 1) : NULL;
    if (buf && a[0] == 0) {
        void *old = NULL;
        size_t n = 0;
        rc = lev_global_lock("probe", &old, &n);
        free(old);
        if (!rc)
            rc = lev_global_unlock("probe", buf, (size_t)bytes);
        if (rc) /* the lock is given back whatever the value did */
            lev_global_unlock("probe", NULL, 0);
    } else if (buf && a[0] == 1) {
        rc = lev_send((uint64_t)a[1], buf, (size_t)bytes);
    }
    free(buf);
    lev_return(&rc, sizeof rc);
}
