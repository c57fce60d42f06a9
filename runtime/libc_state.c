/* libc_state.c - C library calls whose hidden state must travel with a
 * virtual thread, reimplemented over state that the caller owns.
 *
 * levpp rewrites rand, srand, random and srandom in the sources of a
 * --main-task program into calls on one generated static of type
 * lev_rand_state, and strtok into lev_strtok_r with a generated save
 * pointer, so that both are part of every image. The generator is the
 * one of the GNU C library (its default TYPE_3 additive feedback
 * generator, x**31 + x**3 + 1), so a program prints the same numbers
 * with and without levpp. atexit becomes lev_atexit_r on a generated
 * lev_exit_state, which one handler of the process runs at exit.
 */
#define _GNU_SOURCE /* tm_gmtoff, tm_zone */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lev_task.h"

enum {
    S_DEG = 31,            /* degree of the feedback polynomial: length of r[] */
    S_SEP = 3,             /* separation between the two taps */
    S_DISCARD = 10 * S_DEG /* outputs dropped after seeding */
};

/* One output: r[f] += r[b], returned without its low bit. */
static int32_t s_next(lev_rand_state *st)
{
    uint32_t val = (uint32_t)st->lev_r[st->lev_f] + (uint32_t)st->lev_r[st->lev_b];
    st->lev_r[st->lev_f] = (int32_t)val;
    if (++st->lev_f >= S_DEG) {
        st->lev_f = 0;
        ++st->lev_b;
    } else if (++st->lev_b >= S_DEG) {
        st->lev_b = 0;
    }
    return (int32_t)(val >> 1);
}

void lev_srand_r(lev_rand_state *st, unsigned seed)
{
    if (seed == 0)
        seed = 1;
    /* r[i] = 16807 * r[i-1] mod (2^31 - 1), Schrage's method, on the
     * seed read as a signed 32-bit number as the C library does. */
    int32_t word = (int32_t)seed;
    st->lev_r[0] = word;
    for (int i = 1; i < S_DEG; i++) {
        int64_t hi = word / 127773, lo = word % 127773;
        int64_t w = 16807 * lo - 2836 * hi;
        if (w < 0)
            w += 2147483647;
        word = (int32_t)w;
        st->lev_r[i] = word;
    }
    st->lev_f = S_SEP;
    st->lev_b = 0;
    st->lev_seeded = 1;
    for (int i = 0; i < S_DISCARD; i++)
        (void)s_next(st);
}

int lev_rand_r(lev_rand_state *st)
{
    /* Never seeded (a zeroed static) behaves as after srand(1); indices
     * out of range (a damaged state) start over the same way. */
    if (LEV_UNLIKELY(!st->lev_seeded || st->lev_f >= S_DEG || st->lev_b >= S_DEG))
        lev_srand_r(st, 1);
    return (int)s_next(st);
}

char *lev_strtok_r(char *s, const char *delim, char **save)
{
    if (!s && !*save)
        return NULL;
    char *tok = strtok_r(s, delim, save);
    /* At the end of the string the next call can only return NULL: drop
     * the pointer, so that it does not outlive the buffer (a dangling
     * pointer into a returned function's frame cannot be captured). */
    if (*save && !**save)
        *save = NULL;
    return tok;
}

/* ===================================================================
 * Exit handlers
 * =================================================================== */

static lev_exit_state *s_exit_state;
static pthread_once_t s_exit_once = PTHREAD_ONCE_INIT;

/* The process's one handler: the program's functions, last first. Each is
 * taken off the list before it runs, as the C library does. */
static void s_run_exit(void)
{
    lev_exit_state *st = s_exit_state;
    while (st && st->lev_n > 0 && st->lev_n <= LEV_EXIT_MAX) {
        void (*fn)(void) = st->lev_fn[--st->lev_n];
        st->lev_fn[st->lev_n] = NULL;
        if (fn)
            fn();
    }
}

static void s_exit_register(void) { (void)atexit(s_run_exit); }

void lev_exit_arm(lev_exit_state *st)
{
    s_exit_state = st;
    pthread_once(&s_exit_once, s_exit_register);
}

int lev_atexit_r(lev_exit_state *st, void (*fn)(void))
{
    if (st->lev_n >= LEV_EXIT_MAX)
        return -1;
    lev_exit_arm(st);
    st->lev_fn[st->lev_n++] = fn;
    return 0;
}

/* ===================================================================
 * localtime, gmtime, asctime, ctime
 * =================================================================== */

_Static_assert(offsetof(struct tm, tm_isdst) == 8 * sizeof(int) &&
                   offsetof(struct tm, tm_gmtoff) ==
                       offsetof(lev_time_state, lev_u.lev_raw.lev_gmtoff) &&
                   offsetof(struct tm, tm_zone) ==
                       offsetof(lev_time_state, lev_u.lev_raw.lev_zonep),
               "lev_time_state's lev_raw spells out struct tm");

struct tm *lev_time_r(lev_time_state *st, const time_t *t, int local)
{
    struct tm *tm = &st->lev_u.lev_tm;
    if (!(local ? localtime_r(t, tm) : gmtime_r(t, tm)))
        return NULL;
    /* The zone's name is the C library's: a copy that travels. */
    snprintf(st->lev_zone, sizeof st->lev_zone, "%s", tm->tm_zone ? tm->tm_zone : "");
    tm->tm_zone = st->lev_zone;
    return tm;
}

char *lev_asctime_r(lev_time_state *st, const struct tm *tm) { return asctime_r(tm, st->lev_text); }
