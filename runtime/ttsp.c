/* ttsp.c - time to safe point: how long a VT runs from the moment a poll
 * is requested (its poll word set: time slice, checkpoint due, torture,
 * cancel, capture request, probe) to the safe point that honours it, in
 * wall time and in the CPU time of the thread that runs it.
 *
 * A request stamps the VT (rt_ttsp_request); the safe point's slow path
 * takes the stamp and adds the elapsed times to the histograms of its
 * thread (rt_ttsp_honour). The fast path of lev_poll is untouched. A
 * request that is pending when a run starts is timed from that start, so
 * time spent queued does not count. Histograms have four buckets per
 * power of two (a quantile is known within 25%); maxima are exact.
 * LEV_TTSP_REPORT=1 prints a summary on stderr at exit and makes the
 * executor's timer request a poll of every running VT at each tick (1 ms
 * apart), so that a program that asks for nothing still has its polls
 * timed.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "ttsp.h"

#define S_NBUCKETS 256
#define S_NSLOTS 64 /* threads with a histogram of their own; others share the last */

typedef struct s_hist {
    uint64_t n;
    uint64_t max;
    uint64_t b[S_NBUCKETS];
} s_hist;

typedef struct s_slot {
    s_hist wall, cpu;
} s_slot;

static s_slot s_slots[S_NSLOTS];
static unsigned s_nslots; /* atomic */
static __thread s_slot *s_mine;
static __thread clockid_t s_clock;
static __thread int s_clock_ok; /* 1: s_clock valid, -1: unavailable */
static int s_report;            /* LEV_TTSP_REPORT, read once */
static pthread_once_t s_report_once = PTHREAD_ONCE_INIT;

#define S_LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define S_ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)

/* Bucket of value v: exact below 4, then four per power of two. */
static unsigned s_bucket(uint64_t v)
{
    if (v < 4)
        return (unsigned)v;
    unsigned m = 63u - (unsigned)__builtin_clzll(v);
    return (m - 1u) * 4u + (unsigned)((v >> (m - 2u)) & 3u);
}

/* Largest value of bucket i. */
static uint64_t s_bucket_hi(unsigned i)
{
    if (i < 4)
        return i;
    unsigned m = i / 4u + 1u, sub = i % 4u;
    uint64_t lo = (uint64_t)(4u + sub) << (m - 2u);
    return lo + ((uint64_t)1 << (m - 2u)) - 1u;
}

static void s_hist_add(s_hist *h, uint64_t v)
{
    S_ADD(&h->n, 1);
    S_ADD(&h->b[s_bucket(v)], 1);
    uint64_t m = S_LOAD(&h->max);
    while (v > m &&
           !__atomic_compare_exchange_n(&h->max, &m, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

static s_slot *s_slot_mine(void)
{
    if (!s_mine) {
        unsigned i = __atomic_fetch_add(&s_nslots, 1u, __ATOMIC_RELAXED);
        s_mine = &s_slots[i < S_NSLOTS ? i : S_NSLOTS - 1];
    }
    return s_mine;
}

/* CPU time of the calling thread in ns, 0 if unknown. */
static uint64_t s_cpu_self(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CPU time of the thread whose CPU clock is c, 0 if unknown. */
static uint64_t s_cpu_of(clockid_t c)
{
    struct timespec ts;
    if (clock_gettime(c, &ts))
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The calling thread's CPU clock, as other threads can read it. */
static int s_clock_self(clockid_t *c)
{
    if (!s_clock_ok)
        s_clock_ok = pthread_getcpuclockid(pthread_self(), &s_clock) ? -1 : 1;
    *c = s_clock;
    return s_clock_ok > 0;
}

void rt_ttsp_request(rt_ttsp *t)
{
    if (__atomic_load_n(&t->wall, __ATOMIC_ACQUIRE))
        return; /* an earlier request is still pending: time from it */
    uint64_t cpu = 0;
    if (__atomic_load_n(&t->running, __ATOMIC_ACQUIRE))
        cpu = s_cpu_of(t->clock);
    __atomic_store_n(&t->cpu, cpu, __ATOMIC_RELAXED);
    uint64_t zero = 0, now = rt_now_ns();
    __atomic_compare_exchange_n(&t->wall, &zero, now ? now : 1, 0, __ATOMIC_RELEASE,
                                __ATOMIC_RELAXED);
}

void rt_ttsp_run_start(rt_ttsp *t, const volatile uint32_t *poll)
{
    clockid_t c;
    int ok = s_clock_self(&c);
    t->clock = c;
    __atomic_store_n(&t->running, ok, __ATOMIC_RELEASE);
    if (!*poll)
        return;
    /* a request made while the VT was queued: timed from now */
    __atomic_store_n(&t->cpu, ok ? s_cpu_self() : 0, __ATOMIC_RELAXED);
    uint64_t now = rt_now_ns();
    __atomic_store_n(&t->wall, now ? now : 1, __ATOMIC_RELEASE);
}

void rt_ttsp_run_end(rt_ttsp *t) { __atomic_store_n(&t->running, 0, __ATOMIC_RELEASE); }

void rt_ttsp_honour(rt_ttsp *t)
{
    uint64_t t0 = __atomic_exchange_n(&t->wall, 0, __ATOMIC_SEQ_CST);
    if (!t0)
        return;
    uint64_t c0 = __atomic_load_n(&t->cpu, __ATOMIC_RELAXED);
    uint64_t now = rt_now_ns();
    s_slot *s = s_slot_mine();
    s_hist_add(&s->wall, now > t0 ? now - t0 : 0);
    if (c0) {
        uint64_t c1 = s_cpu_self();
        if (c1)
            s_hist_add(&s->cpu, c1 > c0 ? c1 - c0 : 0);
    }
}

/* Quantile q (per mille) of the sum of the histograms picked by `cpu`. */
static void s_sum(int cpu, uint64_t *n, uint64_t *max, uint64_t *p50, uint64_t *p99)
{
    static uint64_t b[S_NBUCKETS];
    memset(b, 0, sizeof b);
    *n = *max = 0;
    unsigned ns = S_LOAD(&s_nslots);
    if (ns > S_NSLOTS)
        ns = S_NSLOTS;
    for (unsigned i = 0; i < ns; i++) {
        s_hist *h = cpu ? &s_slots[i].cpu : &s_slots[i].wall;
        *n += S_LOAD(&h->n);
        uint64_t m = S_LOAD(&h->max);
        if (m > *max)
            *max = m;
        for (unsigned j = 0; j < S_NBUCKETS; j++)
            b[j] += S_LOAD(&h->b[j]);
    }
    uint64_t total = 0;
    for (unsigned j = 0; j < S_NBUCKETS; j++)
        total += b[j];
    uint64_t want50 = (total * 50 + 99) / 100, want99 = (total * 99 + 99) / 100, acc = 0;
    *p50 = *p99 = 0;
    for (unsigned j = 0; j < S_NBUCKETS && total; j++) {
        acc += b[j];
        if (!*p50 && acc >= want50)
            *p50 = s_bucket_hi(j);
        if (acc >= want99) {
            *p99 = s_bucket_hi(j);
            break;
        }
    }
    if (*p50 > *max)
        *p50 = *max;
    if (*p99 > *max)
        *p99 = *max;
}

void rt_ttsp_get(rt_ttsp_stats *st)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER; /* s_sum's buffer */
    memset(st, 0, sizeof *st);
    pthread_mutex_lock(&mu);
    s_sum(0, &st->count, &st->wall_max_ns, &st->wall_p50_ns, &st->wall_p99_ns);
    s_sum(1, &st->cpu_count, &st->cpu_max_ns, &st->cpu_p50_ns, &st->cpu_p99_ns);
    pthread_mutex_unlock(&mu);
}

void rt_ttsp_reset(void)
{
    unsigned ns = S_LOAD(&s_nslots);
    if (ns > S_NSLOTS)
        ns = S_NSLOTS;
    for (unsigned i = 0; i < ns; i++) {
        s_hist *hs[2] = {&s_slots[i].wall, &s_slots[i].cpu};
        for (int k = 0; k < 2; k++) {
            __atomic_store_n(&hs[k]->n, 0, __ATOMIC_RELAXED);
            __atomic_store_n(&hs[k]->max, 0, __ATOMIC_RELAXED);
            for (unsigned j = 0; j < S_NBUCKETS; j++)
                __atomic_store_n(&hs[k]->b[j], 0, __ATOMIC_RELAXED);
        }
    }
}

static void s_report_at_exit(void)
{
    rt_ttsp_stats st;
    rt_ttsp_get(&st);
    fprintf(stderr,
            "lev-ttsp: count %llu wall_max_ns %llu wall_p99_ns %llu wall_p50_ns %llu "
            "cpu_count %llu cpu_max_ns %llu cpu_p99_ns %llu cpu_p50_ns %llu\n",
            (unsigned long long)st.count, (unsigned long long)st.wall_max_ns,
            (unsigned long long)st.wall_p99_ns, (unsigned long long)st.wall_p50_ns,
            (unsigned long long)st.cpu_count, (unsigned long long)st.cpu_max_ns,
            (unsigned long long)st.cpu_p99_ns, (unsigned long long)st.cpu_p50_ns);
}

static void s_report_init(void)
{
    const char *s = getenv("LEV_TTSP_REPORT");
    s_report = s && *s && strcmp(s, "0") != 0;
    if (s_report)
        atexit(s_report_at_exit);
}

int rt_ttsp_report(void)
{
    pthread_once(&s_report_once, s_report_init);
    return s_report;
}
