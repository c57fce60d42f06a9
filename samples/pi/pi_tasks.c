/* pi_tasks.c - the task of the Monte Carlo pi sample: count the points of
 * a unit square that fall inside the quarter circle, reporting progress.
 * Plain C; levpp makes it mobile (leverage_add_tasks in CMakeLists.txt). */
#include <stddef.h>
#include <stdint.h>

#include "lev_task.h"

/* What a VT is given: its share of the points and its own random seed. */
typedef struct pi_arg {
    uint64_t points;
    uint64_t seed;
} pi_arg;

/* A 64-bit xorshift step: the next pseudo-random number after *s. */
static uint64_t pi_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* Returns (uint64_t) the points of arg->points that fall inside the
 * circle; reports the fraction done every tenth of the way. */
LEV_TASK void pi_count(const void *arg, size_t len)
{
    pi_arg a = {0, 1};
    if (len == sizeof a)
        a = *(const pi_arg *)arg;
    uint64_t s = a.seed | 1, in = 0, tenth = a.points / 10 ? a.points / 10 : 1;
    for (uint64_t i = 0; i < a.points; i++) {
        double x = (double)(pi_next(&s) >> 11) / 9007199254740992.0;
        double y = (double)(pi_next(&s) >> 11) / 9007199254740992.0;
        in += x * x + y * y <= 1.0;
        if ((i + 1) % tenth == 0) {
            uint32_t pct = (uint32_t)((i + 1) * 100 / a.points);
            lev_report(&pct, sizeof pct);
        }
    }
    lev_return(&in, sizeof in);
}
