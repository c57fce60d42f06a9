/* nests.c - loop nests without calls: a safe point must come within a
 * bounded amount of work whatever the shape. Each kernel is reached from a
 * task entry (levpp makes it resumable); compiled as plain C with
 * NESTS_NATIVE, the file gives the native references instead. */
#include <stddef.h>
#include <stdlib.h>

#include "nests.h"

struct cell {
    struct cell *next;
    long v;
};

#define FOREACH(p, head) for ((p) = (head); (p); (p) = (p)->next)
#define RING 1000

/* A ring of RING cells, each pointing 7 ahead. */
static struct cell *s_ring(void)
{
    struct cell *ring = malloc(RING * sizeof(struct cell));
    for (int i = 0; i < RING; i++) {
        ring[i].next = &ring[(i + 7) % RING];
        ring[i].v = i;
    }
    return ring;
}

/* The nest of the defect: rounds of a long counted walk of the ring. */
static long s_ring_walk(long rounds, long steps)
{
    struct cell *p = s_ring();
    long sum = 0;
    for (long r = 0; r < rounds; r++)
        for (long s = 0; s < steps; s++) {
            sum += p->v;
            p = p->next;
        }
    return sum;
}

/* Three deep: while, counted, do-while, trip counts from the argument;
 * the innermost walks pointers. */
static long s_deep(const struct nest_arg *a)
{
    struct cell *p = s_ring();
    long sum = 0, r = 0;
    while (r < a->rounds) {
        for (long i = 0; i < 8; i++) {
            long k = a->steps / 8;
            do {
                sum += p->v ^ i;
                p = p->next;
            } while (--k > 0);
        }
        r++;
    }
    return sum;
}

/* A list walked again and again by a while loop over its pointers. */
static long s_list(const struct nest_arg *a)
{
    struct cell *head = NULL;
    for (long i = 0; i < a->steps; i++) {
        struct cell *c = malloc(sizeof(struct cell));
        c->v = i;
        c->next = head;
        head = c;
    }
    long sum = 0;
    for (long r = 0; r < a->rounds; r++) {
        struct cell *p = head;
        while (p) {
            sum += p->v + r;
            p = p->next;
        }
    }
    return sum;
}

/* Three counted loops deep, every trip count known only at run time. */
static long s_counted3(const struct nest_arg *a)
{
    long n1 = 1000, n2 = a->steps / n1, rounds = a->rounds, sum = 0;
    for (long r = 0; r < rounds; r++)
        for (long i = 0; i < n1; i++)
            for (long j = 0; j < n2; j++)
                sum += (i ^ j) + r;
    return sum;
}

/* Loops whose heads a macro writes, around a counted loop. */
static long s_macro(const struct nest_arg *a)
{
    struct cell *ring = s_ring(), *p;
    ring[RING - 1].next = NULL; /* a list of some of the cells */
    long sum = 0;
    for (long r = 0; r < a->rounds; r++)
        FOREACH(p, ring)
        {
            for (long s = 0; s < a->steps / RING; s++)
                sum += (p->v * s) & 7;
        }
    return sum;
}

/* Counted loops whose start and bound are constants inside loops known
 * only at run time: one charged its 200 iterations at once as it starts,
 * one too short to be charged (its parent pays for it). */
static long s_const(const struct nest_arg *a)
{
    long sum = 0, n = a->steps / 256;
    for (long r = 0; r < a->rounds; r++)
        for (long i = 0; i < n; i++) {
            for (int j = 0; j < 200; j++)
                sum += (i ^ j) + r;
            for (int j = 0; j < 8; j++)
                sum ^= (long)j << (i & 7);
        }
    return sum;
}

/* Scans bounded by one comparison of their condition beside another
 * conjunct (pp_bound.c): two equal buffers compared by pointers that
 * step together, and a search by index with a break, for values that
 * are not there, each over the whole buffer. */
static long s_scan(const struct nest_arg *a)
{
    long n = a->steps, sum = 0;
    unsigned char *x = calloc((size_t)n + 1, 1), *y = calloc((size_t)n + 1, 1);
    if (!x || !y)
        return -1;
    for (long r = 0; r < a->rounds; r++) {
        const unsigned char *p = x, *q = y, *end = x + n;
        while (p != end && *p == *q) {
            ++q;
            ++p;
        }
        sum += p - x;
        long i;
        for (i = 0; i < n && x[i] != 7; i++)
            if (y[i] == 9)
                break;
        sum += i + r;
    }
    free(x);
    free(y);
    return sum;
}

#ifdef NESTS_NATIVE

long nest_ring_ref(const struct nest_arg *a) { return s_ring_walk(a->rounds, a->steps); }
long nest_deep_ref(const struct nest_arg *a) { return s_deep(a); }
long nest_list_ref(const struct nest_arg *a) { return s_list(a); }
long nest_counted3_ref(const struct nest_arg *a) { return s_counted3(a); }
long nest_macro_ref(const struct nest_arg *a) { return s_macro(a); }
long nest_const_ref(const struct nest_arg *a) { return s_const(a); }
long nest_scan_ref(const struct nest_arg *a) { return s_scan(a); }

#else

#include "lev_task.h"

/* The task's argument, or zeros. */
static struct nest_arg s_arg(const void *arg, size_t len)
{
    struct nest_arg a = {0, 0};
    if (len == sizeof a)
        a = *(const struct nest_arg *)arg;
    return a;
}

LEV_TASK void nest_ring(const void *arg, size_t len)
{
    struct nest_arg a = s_arg(arg, len);
    long r = s_ring_walk(a.rounds, a.steps);
    lev_return(&r, sizeof r);
}

LEV_TASK void nest_deep(const void *arg, size_t len)
{
    struct nest_arg a = s_arg(arg, len);
    long r = s_deep(&a);
    lev_return(&r, sizeof r);
}

LEV_TASK void nest_list(const void *arg, size_t len)
{
    struct nest_arg a = s_arg(arg, len);
    long r = s_list(&a);
    lev_return(&r, sizeof r);
}

LEV_TASK void nest_counted3(const void *arg, size_t len)
{
    struct nest_arg a = s_arg(arg, len);
    long r = s_counted3(&a);
    lev_return(&r, sizeof r);
}

LEV_TASK void nest_macro(const void *arg, size_t len)
{
    struct nest_arg a = s_arg(arg, len);
    long r = s_macro(&a);
    lev_return(&r, sizeof r);
}

LEV_TASK void nest_const(const void *arg, size_t len)
{
    struct nest_arg a = s_arg(arg, len);
    long r = s_const(&a);
    lev_return(&r, sizeof r);
}

LEV_TASK void nest_scan(const void *arg, size_t len)
{
    struct nest_arg a = s_arg(arg, len);
    long r = s_scan(&a);
    lev_return(&r, sizeof r);
}

#endif
