/* ga.c - the island-model genetic algorithm of the TSP sample (ga.h): a
 * steady-state memetic GA (tournament selection, order crossover, a local
 * double-bridge mutation, 2-opt and Or-opt local search with neighbour
 * lists started around the edges each child changed, replacement of the
 * worst, no two chromosomes of one length) and its flat island state.
 *
 * Task code too: levpp compiles this file into the task module, so its
 * hot loops are written in the shape whose loop polls cost nothing
 * (counted `for` loops bounded by C locals, no `break`), and it calls no
 * function through a pointer. Everything random comes from the
 * generator in the island's state.
 */
#include "ga.h"

#include <stdlib.h>
#include <string.h>

#include "tsp_dist.h"

#define GA_MAGIC 0x53494147u /* "GAIS" */
#define GA_NEIGHBOURS 10     /* candidate list length per city */
#define GA_MATRIX_MAX 2000   /* GEO instances up to this size get a matrix */
#define GA_SEG_MAX 3         /* longest segment Or-opt moves */
#define GA_DB_SEG 50         /* longest segment of the double bridge */
#define GA_XOVER_PCT 50      /* children made by crossover, percent */
#define GA_MUT_PCT 10        /* crossover children mutated too, percent */

/* The header of an island's state; the tours (pop x n int32) and their
 * lengths (pop int64, 8-aligned) follow it. */
typedef struct s_head {
    uint32_t magic;
    int32_t n;
    int32_t pop;
    int32_t epoch;
    int32_t island;
    int32_t reserved;
    uint64_t rng[4]; /* xoshiro256** */
} s_head;

struct ga_world {
    int32_t n;
    int32_t metric;
    ga_params p;
    int32_t nk;   /* neighbours per city */
    double *xy;   /* 2n coordinates */
    int32_t *mat; /* n x n distances (GEO), or NULL */
    int32_t *nb;  /* n x nk nearest cities, nearest first */
    int64_t *nbd; /* their distances */
    /* scratch of one child */
    int32_t *t;     /* the child: city at each position */
    int32_t *pos;   /* position of each city in t */
    int32_t *pos1;  /* position of each city in the first parent */
    int32_t *pos2;  /* in the second parent */
    int32_t *queue; /* ring of cities to look at */
    uint8_t *inq;   /* city is in the queue */
    int32_t *mark;  /* crossover: stamp of cities placed */
    int32_t stamp;
    int32_t qhead, qlen;
};

/* ------------------------------------------------------------------ */
/* Random numbers: splitmix64 seeds xoshiro256**                       */
/* ------------------------------------------------------------------ */

static uint64_t s_splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline uint64_t s_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t s_next(uint64_t *s)
{
    uint64_t r = s_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = s_rotl(s[3], 45);
    return r;
}

/* A number in [0, bound) (bound >= 1). */
static inline int32_t s_below(uint64_t *s, int32_t bound)
{
    return (int32_t)(((s_next(s) >> 32) * (uint64_t)(uint32_t)bound) >> 32);
}

/* ------------------------------------------------------------------ */
/* Parameters, world, distances                                        */
/* ------------------------------------------------------------------ */

void ga_params_default(ga_params *p, int32_t n)
{
    p->pop = n < 200 ? 16 : 24;
    p->tournament = 3;
    p->elite = 2;
    /* About 0.2 s of one core per unit on pr1002 (samples/tsp/README.md). */
    p->gens = n < 200 ? 25 : n < 600 ? 10 : 4;
}

int ga_params_check(const ga_params *p, int32_t n, const char **why)
{
    const char *w = NULL;
    if (!p)
        w = "no parameters";
    else if (n < 5 || n > 100000)
        w = "n (cities) is out of range (5 to 100,000)";
    else if (p->pop < 2 || p->pop > 4096)
        w = "pop (chromosomes per island) is out of range (2 to 4,096)";
    else if ((int64_t)p->pop * n > 64 * 1024 * 1024)
        w = "pop x n is too large (over 64 M cities per island)";
    else if (p->gens < 1 || p->gens > 1000000)
        w = "gens (generations per epoch) is out of range (1 to 1,000,000)";
    else if (p->tournament < 1 || p->tournament > p->pop)
        w = "tournament is out of range (1 to pop)";
    else if (p->elite < 0 || p->elite >= p->pop)
        w = "elite is out of range (0 to pop - 1)";
    if (w) {
        if (why)
            *why = w;
        return -1;
    }
    return 0;
}

/* The distance between cities a and b. */
static inline int64_t s_d(const ga_world *w, int32_t a, int32_t b)
{
    if (w->mat)
        return w->mat[(size_t)a * (size_t)w->n + (size_t)b];
    const double *p = w->xy + 2 * (size_t)a, *q = w->xy + 2 * (size_t)b;
    return tsp_dist_xy(w->metric, p[0], p[1], q[0], q[1]);
}

/* Computes the neighbour lists: for each city its nk nearest, nearest
 * first, ties broken by the lower index. */
static void s_neighbours(ga_world *w)
{
    int32_t n = w->n, nk = w->nk;
    for (int32_t a = 0; a < n; a++) {
        int32_t *nb = w->nb + (size_t)a * (size_t)nk;
        int64_t *nd = w->nbd + (size_t)a * (size_t)nk;
        int32_t have = 0;
        for (int32_t b = 0; b < n; b++) {
            if (b == a)
                continue;
            int64_t d = s_d(w, a, b);
            if (have == nk && d >= nd[nk - 1])
                continue;
            int32_t k = have < nk ? have++ : nk - 1;
            while (k > 0 && nd[k - 1] > d) {
                nb[k] = nb[k - 1];
                nd[k] = nd[k - 1];
                k--;
            }
            nb[k] = b;
            nd[k] = d;
        }
    }
}

ga_world *ga_world_new(int32_t n, int32_t m, const double *xy, const ga_params *p)
{
    if (!xy || m < TSP_EUC_2D || m > TSP_GEO || ga_params_check(p, n, NULL) != 0)
        return NULL;
    ga_world *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->n = n;
    w->metric = m;
    w->p = *p;
    w->nk = n - 1 < GA_NEIGHBOURS ? n - 1 : GA_NEIGHBOURS;
    size_t un = (size_t)n;
    w->xy = malloc(2 * un * sizeof *w->xy);
    w->nb = malloc(un * (size_t)w->nk * sizeof *w->nb);
    w->nbd = malloc(un * (size_t)w->nk * sizeof *w->nbd);
    w->t = malloc(un * sizeof *w->t);
    w->pos = malloc(un * sizeof *w->pos);
    w->pos1 = malloc(un * sizeof *w->pos1);
    w->pos2 = malloc(un * sizeof *w->pos2);
    w->queue = malloc(un * sizeof *w->queue);
    w->inq = calloc(un, 1);
    w->mark = calloc(un, sizeof *w->mark);
    if (m == TSP_GEO && n <= GA_MATRIX_MAX)
        w->mat = malloc(un * un * sizeof *w->mat);
    if (!w->xy || !w->nb || !w->nbd || !w->t || !w->pos || !w->pos1 || !w->pos2 || !w->queue ||
        !w->inq || !w->mark || (m == TSP_GEO && n <= GA_MATRIX_MAX && !w->mat)) {
        ga_world_destroy(&w);
        return NULL;
    }
    memcpy(w->xy, xy, 2 * un * sizeof *w->xy);
    if (w->mat) {
        for (int32_t a = 0; a < n; a++) {
            const double *pa = w->xy + 2 * (size_t)a;
            int32_t *row = w->mat + (size_t)a * un;
            for (int32_t b = 0; b < n; b++)
                row[b] = (int32_t)tsp_dist_xy(m, pa[0], pa[1], w->xy[2 * b], w->xy[2 * b + 1]);
        }
    }
    s_neighbours(w);
    return w;
}

void ga_world_destroy(ga_world **wp)
{
    if (!wp || !*wp)
        return;
    ga_world *w = *wp;
    free(w->xy);
    free(w->mat);
    free(w->nb);
    free(w->nbd);
    free(w->t);
    free(w->pos);
    free(w->pos1);
    free(w->pos2);
    free(w->queue);
    free(w->inq);
    free(w->mark);
    free(w);
    *wp = NULL;
}

int64_t ga_tour_length(const ga_world *w, const int32_t *tour)
{
    int32_t n = w->n;
    int64_t len = s_d(w, tour[n - 1], tour[0]);
    for (int32_t i = 1; i < n; i++)
        len += s_d(w, tour[i - 1], tour[i]);
    return len;
}

/* ------------------------------------------------------------------ */
/* The island state                                                    */
/* ------------------------------------------------------------------ */

static size_t s_tours_off(void) { return sizeof(s_head); }

static size_t s_lens_off(int32_t n, int32_t pop)
{
    size_t off = sizeof(s_head) + (size_t)n * (size_t)pop * sizeof(int32_t);
    return (off + 7) & ~(size_t)7;
}

size_t ga_island_bytes(const ga_world *w)
{
    return s_lens_off(w->n, w->p.pop) + (size_t)w->p.pop * sizeof(int64_t);
}

static int32_t *s_tours(void *state) { return (int32_t *)((char *)state + s_tours_off()); }

static int64_t *s_lens(void *state, int32_t n, int32_t pop)
{
    return (int64_t *)((char *)state + s_lens_off(n, pop));
}

static const int32_t *s_ctours(const void *state)
{
    return (const int32_t *)((const char *)state + s_tours_off());
}

static const int64_t *s_clens(const void *state, int32_t n, int32_t pop)
{
    return (const int64_t *)((const char *)state + s_lens_off(n, pop));
}

/* ------------------------------------------------------------------ */
/* The child under local search: moves on the array t / pos            */
/* ------------------------------------------------------------------ */

static inline int32_t s_succ(const ga_world *w, int32_t c)
{
    int32_t i = w->pos[c] + 1;
    return w->t[i == w->n ? 0 : i];
}

static inline int32_t s_pred(const ga_world *w, int32_t c)
{
    int32_t i = w->pos[c];
    return w->t[i == 0 ? w->n - 1 : i - 1];
}

/* Puts city c in the queue of cities to look at, if it is not there. */
static inline void s_push(ga_world *w, int32_t c)
{
    if (w->inq[c])
        return;
    w->inq[c] = 1;
    int32_t i = w->qhead + w->qlen;
    w->queue[i >= w->n ? i - w->n : i] = c;
    w->qlen++;
}

/* Reverses the path of positions i..j (forward, cyclic), or its
 * complement when that is shorter: the same cycle either way. */
static void s_reverse(ga_world *w, int32_t i, int32_t j)
{
    int32_t n = w->n;
    int32_t len = j - i + 1;
    if (len <= 0)
        len += n;
    if (2 * len > n) {
        int32_t k = i;
        i = j + 1 == n ? 0 : j + 1;
        j = k == 0 ? n - 1 : k - 1;
        len = n - len;
    }
    int32_t *t = w->t, *pos = w->pos;
    int32_t half = len / 2;
    for (int32_t k = 0; k < half; k++) {
        int32_t a = t[i], b = t[j];
        t[i] = b;
        pos[b] = i;
        t[j] = a;
        pos[a] = j;
        i = i + 1 == n ? 0 : i + 1;
        j = j == 0 ? n - 1 : j - 1;
    }
}

/* Moves the segment of k cities at positions i.. (forward) to between
 * city u and its successor, reversed if rev; u is outside the segment
 * and not its predecessor. Shifts the shorter side. */
static void s_move_segment(ga_world *w, int32_t i, int32_t k, int32_t u, int32_t rev)
{
    int32_t n = w->n;
    int32_t *t = w->t, *pos = w->pos;
    int32_t seg[GA_SEG_MAX + GA_DB_SEG];
    for (int32_t j = 0; j < k; j++) {
        int32_t q = i + j;
        seg[j] = t[q >= n ? q - n : q];
    }
    int32_t first = i + k >= n ? i + k - n : i + k; /* position after the segment */
    int32_t m = pos[u] - first + 1;                 /* cities from there to u */
    if (m <= 0)
        m += n;
    int32_t dst; /* where the segment starts once placed */
    if (m <= n - k - m) {
        /* shift the m cities back by k, then the segment after them */
        int32_t to = i, from = first;
        for (int32_t j = 0; j < m; j++) {
            int32_t c = t[from];
            t[to] = c;
            pos[c] = to;
            to = to + 1 == n ? 0 : to + 1;
            from = from + 1 == n ? 0 : from + 1;
        }
        dst = to;
    } else {
        /* shift the other side forward by k, from its end */
        int32_t rest = n - k - m;
        int32_t from = i - 1 < 0 ? i - 1 + n : i - 1;
        int32_t to = from + k >= n ? from + k - n : from + k;
        for (int32_t j = 0; j < rest; j++) {
            int32_t c = t[from];
            t[to] = c;
            pos[c] = to;
            to = to == 0 ? n - 1 : to - 1;
            from = from == 0 ? n - 1 : from - 1;
        }
        dst = pos[u] + 1 == n ? 0 : pos[u] + 1;
    }
    for (int32_t j = 0; j < k; j++) {
        int32_t c = seg[rev ? k - 1 - j : j];
        int32_t q = dst + j >= n ? dst + j - n : dst + j;
        t[q] = c;
        pos[c] = q;
    }
}

/* Tries the best 2-opt move that gives city a a nearer neighbour, in
 * both directions; applies it and queues the cities it touched. 1 if it
 * improved the tour. */
static int s_two_opt(ga_world *w, int32_t a)
{
    int32_t nk = w->nk;
    const int32_t *nb = w->nb + (size_t)a * (size_t)nk;
    const int64_t *nd = w->nbd + (size_t)a * (size_t)nk;
    int64_t best = 0;
    int32_t bx = -1, by = -1; /* remove (bx, succ bx), (by, succ by) */
    for (int32_t dir = 0; dir < 2; dir++) {
        int32_t b = dir ? s_pred(w, a) : s_succ(w, a);
        int64_t dab = s_d(w, a, b);
        int32_t lim = 0;
        for (int32_t k = 0; k < nk; k++)
            lim += nd[k] < dab;
        for (int32_t k = 0; k < lim; k++) {
            int32_t c = nb[k];
            int32_t d = dir ? s_pred(w, c) : s_succ(w, c);
            if (c == b || d == a)
                continue;
            int64_t g = dab + s_d(w, c, d) - nd[k] - s_d(w, b, d);
            if (g > best) {
                best = g;
                bx = dir ? b : a;
                by = dir ? d : c;
            }
        }
    }
    if (bx < 0)
        return 0;
    int32_t sx = s_succ(w, bx), sy = s_succ(w, by);
    s_reverse(w, w->pos[sx], w->pos[by]);
    s_push(w, bx);
    s_push(w, sx);
    s_push(w, by);
    s_push(w, sy);
    return 1;
}

/* Tries the best Or-opt move of a segment of 1 to 3 cities that starts
 * or ends at city a to between two cities near one of its ends; applies
 * it and queues the cities it touched. 1 if it improved the tour. */
static int s_or_opt(ga_world *w, int32_t a)
{
    int32_t n = w->n, nk = w->nk;
    int64_t best = 0;
    int32_t bi = -1, bk = 0, bu = -1, brev = 0;
    for (int32_t v = 0; v < 2 * GA_SEG_MAX; v++) {
        int32_t k = v / 2 + 1;
        if (k + 3 > n || (k == 1 && v == 1))
            continue;
        /* the segment s1..s2 (forward) of k cities, a at one end */
        int32_t i = w->pos[a];
        if (v & 1)
            i = i - (k - 1) < 0 ? i - (k - 1) + n : i - (k - 1);
        int32_t s1 = w->t[i];
        int32_t j = i + k - 1 >= n ? i + k - 1 - n : i + k - 1;
        int32_t s2 = w->t[j];
        int32_t p = s_pred(w, s1), x = s_succ(w, s2);
        int64_t gain = s_d(w, p, s1) + s_d(w, s2, x) - s_d(w, p, x);
        if (gain <= 0)
            continue;
        for (int32_t e = 0; e < 2; e++) {
            int32_t end = e ? s2 : s1, other = e ? s1 : s2;
            const int32_t *nb = w->nb + (size_t)end * (size_t)nk;
            const int64_t *nd = w->nbd + (size_t)end * (size_t)nk;
            int32_t lim = 0;
            for (int32_t q = 0; q < nk; q++)
                lim += nd[q] < gain;
            for (int32_t q = 0; q < lim; q++) {
                int32_t c = nb[q];
                int32_t off = w->pos[c] - i;
                if (off < 0)
                    off += n;
                if (off < k)
                    continue; /* c is in the segment */
                /* c then its successor: the end next to c */
                int32_t cs = s_succ(w, c);
                if (c != p) {
                    int64_t g = gain - nd[q] - s_d(w, other, cs) + s_d(w, c, cs);
                    if (g > best) {
                        best = g;
                        bi = i, bk = k, bu = c, brev = e;
                    }
                }
                /* its predecessor then c */
                int32_t cp = s_pred(w, c);
                if (c != x) {
                    int64_t g = gain - nd[q] - s_d(w, other, cp) + s_d(w, cp, c);
                    if (g > best) {
                        best = g;
                        bi = i, bk = k, bu = cp, brev = !e;
                    }
                }
            }
        }
    }
    if (bi < 0)
        return 0;
    int32_t s1 = w->t[bi];
    int32_t j = bi + bk - 1 >= n ? bi + bk - 1 - n : bi + bk - 1;
    int32_t s2 = w->t[j];
    int32_t p = s_pred(w, s1), x = s_succ(w, s2), us = s_succ(w, bu);
    s_move_segment(w, bi, bk, bu, brev);
    s_push(w, p);
    s_push(w, x);
    s_push(w, s1);
    s_push(w, s2);
    s_push(w, bu);
    s_push(w, us);
    return 1;
}

/* Runs the local search until no queued city finds a better move. */
static void s_local_search(ga_world *w)
{
    while (w->qlen > 0) {
        int32_t a = w->queue[w->qhead];
        w->qhead = w->qhead + 1 == w->n ? 0 : w->qhead + 1;
        w->qlen--;
        w->inq[a] = 0;
        if (s_two_opt(w, a) || s_or_opt(w, a))
            s_push(w, a);
    }
}

/* Makes tour[n] the child in t / pos. */
static void s_load(ga_world *w, const int32_t *tour)
{
    int32_t n = w->n;
    for (int32_t i = 0; i < n; i++) {
        w->t[i] = tour[i];
        w->pos[tour[i]] = i;
    }
}

/* Sets pos[c] to the position of each city c in tour. */
static void s_positions(int32_t n, const int32_t *tour, int32_t *pos)
{
    for (int32_t i = 0; i < n; i++)
        pos[tour[i]] = i;
}

/* ------------------------------------------------------------------ */
/* Operators                                                           */
/* ------------------------------------------------------------------ */

/* A new stamp for the marks of w->mark: no mark holds it yet. */
static int32_t s_stamp(ga_world *w)
{
    if (w->stamp == INT32_MAX) {
        memset(w->mark, 0, (size_t)w->n * sizeof *w->mark);
        w->stamp = 0;
    }
    return ++w->stamp;
}

/* 1 if a and b are next to each other in the tour whose positions are
 * pos. */
static inline int s_adjacent(int32_t n, const int32_t *pos, int32_t a, int32_t b)
{
    int32_t dlt = pos[a] - pos[b];
    return dlt == 1 || dlt == -1 || dlt == n - 1 || dlt == 1 - n;
}

/* Order crossover: the child in t / pos keeps a random segment of the
 * first parent and takes the other cities in the order of the second;
 * queues the ends of every edge neither parent has. */
static void s_crossover(ga_world *w, uint64_t *rng, const int32_t *p1, const int32_t *p2)
{
    int32_t n = w->n;
    int32_t *t = w->t, *mark = w->mark;
    int32_t stamp = s_stamp(w);
    int32_t a = s_below(rng, n);
    int32_t len = 1 + s_below(rng, n / 2);
    for (int32_t k = 0; k < len; k++) {
        int32_t q = a + k >= n ? a + k - n : a + k;
        t[q] = p1[q];
        mark[p1[q]] = stamp;
    }
    int32_t to = a + len >= n ? a + len - n : a + len;
    int32_t from = to;
    int32_t left = n - len;
    for (int32_t k = 0; k < n; k++) {
        int32_t c = p2[from];
        from = from + 1 == n ? 0 : from + 1;
        int32_t take = left > 0 && mark[c] != stamp;
        t[to] = take ? c : t[to];
        to = take ? (to + 1 == n ? 0 : to + 1) : to;
        left -= take;
    }
    s_positions(n, t, w->pos);
    s_positions(n, p1, w->pos1);
    s_positions(n, p2, w->pos2);
    for (int32_t i = 0; i < n; i++) {
        int32_t c = t[i], d = t[i + 1 == n ? 0 : i + 1];
        if (!s_adjacent(n, w->pos1, c, d) && !s_adjacent(n, w->pos2, c, d)) {
            s_push(w, c);
            s_push(w, d);
        }
    }
}

/* The double bridge on two short adjacent segments of the child (A B C D
 * becomes A C B D); queues the six cities at the cuts. */
static void s_double_bridge(ga_world *w, uint64_t *rng)
{
    int32_t n = w->n;
    int32_t lmax = (n - 2) / 3 < GA_DB_SEG ? (n - 2) / 3 : GA_DB_SEG;
    int32_t i = s_below(rng, n);
    int32_t l1 = 1 + s_below(rng, lmax), l2 = 1 + s_below(rng, lmax);
    /* B is l1 cities at i, C the l2 after it: move B after C */
    int32_t ie = i + l1 - 1 >= n ? i + l1 - 1 - n : i + l1 - 1;
    int32_t ce = ie + l2 >= n ? ie + l2 - n : ie + l2;
    int32_t b0 = w->t[i], b1 = w->t[ie], c1 = w->t[ce];
    int32_t pa = s_pred(w, b0), c0 = s_succ(w, b1), dd = s_succ(w, c1);
    int32_t *t = w->t, *pos = w->pos;
    /* rotate B C left by l1, through a copy of B */
    int32_t seg[GA_SEG_MAX + GA_DB_SEG];
    for (int32_t k = 0; k < l1; k++) {
        int32_t q = i + k >= n ? i + k - n : i + k;
        seg[k] = t[q];
    }
    int32_t to = i, from = ie + 1 == n ? 0 : ie + 1;
    for (int32_t k = 0; k < l2; k++) {
        int32_t c = t[from];
        t[to] = c;
        pos[c] = to;
        to = to + 1 == n ? 0 : to + 1;
        from = from + 1 == n ? 0 : from + 1;
    }
    for (int32_t k = 0; k < l1; k++) {
        t[to] = seg[k];
        pos[seg[k]] = to;
        to = to + 1 == n ? 0 : to + 1;
    }
    s_push(w, pa);
    s_push(w, b0);
    s_push(w, b1);
    s_push(w, c0);
    s_push(w, c1);
    s_push(w, dd);
}

/* A nearest-neighbour tour from a random city into t / pos (a random
 * unvisited city where every neighbour is taken), every city queued. */
static void s_nearest_tour(ga_world *w, uint64_t *rng)
{
    int32_t n = w->n, nk = w->nk;
    int32_t *mark = w->mark;
    int32_t stamp = s_stamp(w);
    int32_t c = s_below(rng, n);
    int32_t scan = 0;
    for (int32_t i = 0; i < n; i++) {
        w->t[i] = c;
        w->pos[c] = i;
        mark[c] = stamp;
        s_push(w, c);
        if (i == n - 1)
            continue;
        const int32_t *nb = w->nb + (size_t)c * (size_t)nk;
        int32_t next = -1;
        for (int32_t k = nk - 1; k >= 0; k--)
            next = mark[nb[k]] != stamp ? nb[k] : next;
        if (next < 0) {
            while (mark[scan] == stamp)
                scan++;
            next = scan;
        }
        c = next;
    }
}

/* The index of the chromosome a tournament picks. */
static int32_t s_tournament(uint64_t *rng, const int64_t *lens, int32_t pop, int32_t size)
{
    int32_t best = s_below(rng, pop);
    for (int32_t k = 1; k < size; k++) {
        int32_t c = s_below(rng, pop);
        if (lens[c] < lens[best] || (lens[c] == lens[best] && c < best))
            best = c;
    }
    return best;
}

/* The index of the longest chromosome (the last of equals). */
static int32_t s_worst(const int64_t *lens, int32_t pop)
{
    int32_t worst = 0;
    for (int32_t k = 1; k < pop; k++)
        worst = lens[k] >= lens[worst] ? k : worst;
    return worst;
}

/* 1 if a chromosome of the population has length len. */
static int s_has_length(const int64_t *lens, int32_t pop, int64_t len)
{
    int found = 0;
    for (int32_t k = 0; k < pop; k++)
        found |= lens[k] == len;
    return found;
}

/* Puts tour (length len) in place of the worst chromosome if it is
 * shorter and no chromosome has its length. */
static void s_offer(ga_world *w, int32_t *tours, int64_t *lens, const int32_t *tour, int64_t len)
{
    int32_t pop = w->p.pop;
    int32_t worst = s_worst(lens, pop);
    if (len >= lens[worst] || s_has_length(lens, pop, len))
        return;
    memcpy(tours + (size_t)worst * (size_t)w->n, tour, (size_t)w->n * sizeof *tour);
    lens[worst] = len;
}

/* ------------------------------------------------------------------ */
/* Islands                                                             */
/* ------------------------------------------------------------------ */

void ga_island_init(ga_world *w, void *state, uint64_t seed, int32_t island)
{
    int32_t n = w->n, pop = w->p.pop;
    s_head h;
    memset(&h, 0, sizeof h);
    h.magic = GA_MAGIC;
    h.n = n;
    h.pop = pop;
    h.island = island;
    uint64_t x = seed ^ (0xA0761D6478BD642Full * (uint64_t)(uint32_t)(island + 1));
    for (int k = 0; k < 4; k++)
        h.rng[k] = s_splitmix(&x);
    int32_t *tours = s_tours(state);
    int64_t *lens = s_lens(state, n, pop);
    for (int32_t j = 0; j < pop; j++) {
        s_nearest_tour(w, h.rng);
        s_local_search(w);
        memcpy(tours + (size_t)j * (size_t)n, w->t, (size_t)n * sizeof *w->t);
        lens[j] = ga_tour_length(w, w->t);
    }
    memcpy(state, &h, sizeof h);
}

/* Makes one child of the population, improves it and offers it. */
static void s_child(ga_world *w, uint64_t *rng, int32_t *tours, int64_t *lens)
{
    int32_t n = w->n, pop = w->p.pop;
    int32_t i1 = s_tournament(rng, lens, pop, w->p.tournament);
    const int32_t *p1 = tours + (size_t)i1 * (size_t)n;
    int32_t roll = s_below(rng, 100);
    if (roll < GA_XOVER_PCT) {
        int32_t i2 = s_tournament(rng, lens, pop, w->p.tournament);
        if (i2 == i1) {
            i2 = i1 + 1 + s_below(rng, pop - 1);
            i2 = i2 >= pop ? i2 - pop : i2;
        }
        s_crossover(w, rng, p1, tours + (size_t)i2 * (size_t)n);
        if (s_below(rng, 100) < GA_MUT_PCT)
            s_double_bridge(w, rng);
    } else {
        s_load(w, p1);
        s_double_bridge(w, rng);
    }
    s_local_search(w);
    s_offer(w, tours, lens, w->t, ga_tour_length(w, w->t));
}

void ga_island_epoch(ga_world *w, void *state, const int32_t *migrant)
{
    int32_t n = w->n, pop = w->p.pop;
    s_head h;
    memcpy(&h, state, sizeof h);
    int32_t *tours = s_tours(state);
    int64_t *lens = s_lens(state, n, pop);
    if (migrant)
        s_offer(w, tours, lens, migrant, ga_tour_length(w, migrant));
    int32_t gens = w->p.gens;
    for (int32_t g = 0; g < gens; g++) {
        for (int32_t c = 0; c < pop; c++)
            s_child(w, h.rng, tours, lens);
    }
    h.epoch++;
    memcpy(state, &h, sizeof h);
}

int32_t ga_island_epochs(const void *state)
{
    s_head h;
    memcpy(&h, state, sizeof h);
    return h.epoch;
}

int64_t ga_island_best(const ga_world *w, const void *state, int32_t *tour)
{
    int32_t n = w->n, pop = w->p.pop;
    const int64_t *lens = s_clens(state, n, pop);
    int32_t best = 0;
    for (int32_t k = 1; k < pop; k++)
        best = lens[k] < lens[best] ? k : best;
    if (tour)
        memcpy(tour, s_ctours(state) + (size_t)best * (size_t)n, (size_t)n * sizeof *tour);
    return lens[best];
}

int ga_island_check(const ga_world *w, const void *state, size_t len, const char **why)
{
    const char *bad = NULL;
    s_head h;
    int32_t n = w->n, pop = w->p.pop;
    uint8_t *seen = NULL;
    if (!state || len < sizeof h)
        bad = "the island state is shorter than its header";
    else {
        memcpy(&h, state, sizeof h);
        if (h.magic != GA_MAGIC)
            bad = "the island state does not start with its magic number";
        else if (h.n != n)
            bad = "the island state's n differs from the instance's";
        else if (h.pop != pop)
            bad = "the island state's pop differs from the parameters'";
        else if (h.epoch < 0)
            bad = "the island state's epoch is negative";
        else if (len != ga_island_bytes(w))
            bad = "the island state's size does not match n and pop";
        else if ((h.rng[0] | h.rng[1] | h.rng[2] | h.rng[3]) == 0)
            bad = "the island state's random generator is all zero";
        else if (!(seen = malloc((size_t)n)))
            bad = "out of memory checking the island state";
    }
    const int32_t *tours = bad ? NULL : s_ctours(state);
    const int64_t *lens = bad ? NULL : s_clens(state, n, pop);
    for (int32_t j = 0; !bad && j < pop; j++) {
        const int32_t *t = tours + (size_t)j * (size_t)n;
        memset(seen, 0, (size_t)n);
        int32_t ok = 1;
        for (int32_t i = 0; i < n; i++) {
            int32_t c = t[i];
            int32_t in = c >= 0 && c < n;
            ok &= in && !seen[in ? c : 0];
            seen[in ? c : 0] = 1;
        }
        if (!ok)
            bad = "a chromosome of the island state is not a permutation of the cities";
        else if (ga_tour_length(w, t) != lens[j])
            bad = "a length of the island state differs from its chromosome's";
    }
    free(seen);
    if (bad) {
        if (why)
            *why = bad;
        return -1;
    }
    return 0;
}
