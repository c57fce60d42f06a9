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
#define GA_SKEW 80           /* ints between two scratch arrays (320 bytes) */

/* One child, and one chromosome of a first population, is a LEV_ATOMIC
 * kernel (lev_task.h) under levpp, which parses with clang: it runs as
 * native code, and a VT stops only between two of them (every tenth of a
 * millisecond or so). Other compilers see nothing. */
#if defined(__clang__)
#define GA_ATOMIC __attribute__((__annotate__("lev_atomic")))
#else
#define GA_ATOMIC
#endif

/* The helpers of the hot loops: inlined even where levpp multiplies the
 * bodies that call them (a resumable copy beside each fresh one). */
#define GA_HOT static inline __attribute__((always_inline))

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
    int32_t nk;   /* neighbours per city: GA_NEIGHBOURS */
    double *xy;   /* 2n coordinates */
    int32_t *mat; /* n x n distances (GEO), or NULL */
    int32_t *nb;  /* n x nk nearest cities, nearest first */
    int64_t *nbd; /* their distances (INT64_MAX past n - 1) */
    /* scratch of one child */
    int32_t *t;     /* the child: city at each position */
    int32_t *pos;   /* position of each city in t */
    int32_t *pos1;  /* position of each city in the first parent */
    int32_t *pos2;  /* in the second parent */
    int32_t *queue; /* ring of cities to look at */
    uint8_t *inq;   /* city is in the queue */
    int32_t *mark;  /* crossover: stamp of cities placed */
    int32_t *block; /* the six int32 arrays above, in one object */
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

GA_HOT uint64_t s_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

GA_HOT uint64_t s_next(uint64_t *s)
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
GA_HOT int32_t s_below(uint64_t *s, int32_t bound)
{
    return (int32_t)(((s_next(s) >> 32) * (uint64_t)(uint32_t)bound) >> 32);
}

/* ------------------------------------------------------------------ */
/* Parameters, world, distances                                        */
/* ------------------------------------------------------------------ */

void ga_params_default(ga_params *p, int32_t n)
{
    p->pop = n < 200 ? 16 : 32;
    /* An island's state travels as one global variable of lev-tsp's
     * virtual computer, at most 1 MiB (lev_task.h): large instances get a
     * smaller population (2 at the least, for 100,000 cities). */
    int64_t fit = ((int64_t)1 << 20) - 4096;
    if ((int64_t)p->pop * (4 * (int64_t)n + 8) > fit)
        p->pop =
            (int32_t)(fit / (4 * (int64_t)n + 8)) < 2 ? 2 : (int32_t)(fit / (4 * (int64_t)n + 8));
    p->tournament = 3;
    p->elite = 2;
    /* A unit of about 0.2 s of one core on pr1002 (samples/tsp/README.md);
     * fewer generations per unit as instances grow. */
    p->gens = n < 200 ? 50 : n < 600 ? 200 : 600000 / n < 50 ? 50 : 600000 / n;
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
GA_HOT int64_t s_d(const ga_world *w, int32_t a, int32_t b)
{
    if (w->mat)
        return w->mat[(size_t)a * (size_t)w->n + (size_t)b];
    const double *p = w->xy + 2 * (size_t)a, *q = w->xy + 2 * (size_t)b;
    return tsp_dist_xy(w->metric, p[0], p[1], q[0], q[1]);
}

/* Offers city b at distance d to a's list (nb, nd of nk entries, `have`
 * filled): the list stays ordered by distance, then by index. */
GA_HOT void s_nb_offer(int32_t *nb, int64_t *nd, int32_t nk, int32_t *have, int32_t b, int64_t d)
{
    if (*have == nk && (d > nd[nk - 1] || (d == nd[nk - 1] && b > nb[nk - 1])))
        return;
    int32_t k = *have < nk ? (*have)++ : nk - 1;
    while (k > 0 && (nd[k - 1] > d || (nd[k - 1] == d && nb[k - 1] > b))) {
        nb[k] = nb[k - 1];
        nd[k] = nd[k - 1];
        k--;
    }
    nb[k] = b;
    nd[k] = d;
}

/* Computes the neighbour lists: for each city its nk nearest, nearest
 * first, ties broken by the lower index; with fewer than nk other cities
 * the list ends with the city itself at distance INT64_MAX, which no
 * move takes. Every other city is compared (n x n) for GEO, whose
 * distance is not the plane's, and for small instances; else cities are
 * bucketed in a grid of about two per cell and each city looks at rings
 * of cells around its own until no farther city can enter its list (the
 * other weights grow with the Euclidean distance): the same lists, in
 * time about linear in n. Returns 0, or -1 when memory runs out. */
static int s_neighbours(ga_world *w)
{
    int32_t n = w->n, nk = w->nk, m = w->metric;
    for (size_t i = 0; i < (size_t)n * (size_t)nk; i++) {
        w->nb[i] = (int32_t)(i / (size_t)nk);
        w->nbd[i] = INT64_MAX;
    }
    if (m == TSP_GEO || n <= 256) {
        for (int32_t a = 0; a < n; a++) {
            int32_t have = 0;
            for (int32_t b = 0; b < n; b++)
                if (b != a)
                    s_nb_offer(w->nb + (size_t)a * (size_t)nk, w->nbd + (size_t)a * (size_t)nk, nk,
                               &have, b, s_d(w, a, b));
        }
        return 0;
    }
    const double *xy = w->xy;
    double x0 = xy[0], x1 = xy[0], y0 = xy[1], y1 = xy[1];
    for (int32_t a = 1; a < n; a++) {
        double x = xy[2 * a], y = xy[2 * a + 1];
        x0 = x < x0 ? x : x0;
        x1 = x > x1 ? x : x1;
        y0 = y < y0 ? y : y0;
        y1 = y > y1 ? y : y1;
    }
    int32_t g = 1;
    while ((int64_t)g * g * 2 < n)
        g++;
    double cw = (x1 - x0) / g > 0 ? (x1 - x0) / g : 1.0,
           ch = (y1 - y0) / g > 0 ? (y1 - y0) / g : 1.0;
    int32_t *cell = malloc((size_t)n * sizeof *cell);
    int32_t *start = calloc((size_t)g * (size_t)g + 1, sizeof *start);
    int32_t *item = malloc((size_t)n * sizeof *item);
    if (!cell || !start || !item) {
        free(cell);
        free(start);
        free(item);
        return -1;
    }
    for (int32_t a = 0; a < n; a++) {
        int32_t cx = (int32_t)((xy[2 * a] - x0) / cw), cy = (int32_t)((xy[2 * a + 1] - y0) / ch);
        cx = cx >= g ? g - 1 : cx;
        cy = cy >= g ? g - 1 : cy;
        cell[a] = cy * g + cx;
        start[cell[a] + 1]++;
    }
    for (int32_t c = 0; c < g * g; c++)
        start[c + 1] += start[c];
    for (int32_t a = 0; a < n; a++) /* cities of a cell stay in index order */
        item[start[cell[a]]++] = a;
    for (int32_t c = g * g; c > 0; c--)
        start[c] = start[c - 1];
    start[0] = 0;
    double step = cw < ch ? cw : ch;
    for (int32_t a = 0; a < n; a++) {
        int32_t *nb = w->nb + (size_t)a * (size_t)nk;
        int64_t *nd = w->nbd + (size_t)a * (size_t)nk;
        int32_t have = 0, cx = cell[a] % g, cy = cell[a] / g;
        for (int32_t r = 0; r < g; r++) {
            for (int32_t y = cy - r; y <= cy + r; y++) {
                if (y < 0 || y >= g)
                    continue;
                int32_t edge = y == cy - r || y == cy + r;
                for (int32_t x = cx - r; x <= cx + r; x += edge || r == 0 ? 1 : 2 * r) {
                    if (x < 0 || x >= g)
                        continue;
                    int32_t c = y * g + x;
                    for (int32_t i = start[c]; i < start[c + 1]; i++)
                        if (item[i] != a)
                            s_nb_offer(nb, nd, nk, &have, item[i], s_d(w, a, item[i]));
                }
            }
            /* Every city beyond ring r is at least r x step away (less a
             * hair, for a city on the border of two cells). */
            if (have == nk && tsp_dist_xy(m, 0, 0, ((double)r - 1e-6) * step, 0) > nd[nk - 1])
                break;
        }
    }
    free(cell);
    free(start);
    free(item);
    return 0;
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
    w->nk = GA_NEIGHBOURS;
    size_t un = (size_t)n;
    w->xy = malloc(2 * un * sizeof *w->xy);
    w->nb = malloc(un * (size_t)w->nk * sizeof *w->nb);
    w->nbd = malloc(un * (size_t)w->nk * sizeof *w->nbd);
    /* The scratch arrays, read at the same index together, are cut from
     * one object with each one GA_SKEW ints further from a page boundary
     * than the last: a VT's heap puts every object of a page or more at
     * a page boundary, and arrays at the same offset of their pages
     * collide in the cache (4K aliasing cost the GA 5-10% there). */
    size_t stride = un + GA_SKEW;
    w->block = calloc(6 * stride, sizeof *w->block);
    if (w->block) {
        w->t = w->block;
        w->pos = w->t + stride;
        w->pos1 = w->pos + stride;
        w->pos2 = w->pos1 + stride;
        w->queue = w->pos2 + stride;
        w->mark = w->queue + stride;
    }
    w->inq = calloc(un, 1);
    if (m == TSP_GEO && n <= GA_MATRIX_MAX)
        w->mat = malloc(un * un * sizeof *w->mat);
    if (!w->xy || !w->nb || !w->nbd || !w->block || !w->inq ||
        (m == TSP_GEO && n <= GA_MATRIX_MAX && !w->mat)) {
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
    if (s_neighbours(w) != 0) {
        ga_world_destroy(&w);
        return NULL;
    }
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
    free(w->block);
    free(w->inq);
    free(w);
    *wp = NULL;
}

const int32_t *ga_world_neighbours(const ga_world *w, int32_t a, int32_t *count)
{
    *count = w->nk;
    return w->nb + (size_t)a * (size_t)w->nk;
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

GA_HOT int32_t s_succ(const ga_world *w, int32_t c)
{
    int32_t i = w->pos[c] + 1;
    return w->t[i == w->n ? 0 : i];
}

GA_HOT int32_t s_pred(const ga_world *w, int32_t c)
{
    int32_t i = w->pos[c];
    return w->t[i == 0 ? w->n - 1 : i - 1];
}

/* Puts city c in the queue of cities to look at, if it is not there. */
GA_HOT void s_push(ga_world *w, int32_t c)
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

/* The distance between cities a and b from the world's fields held in C
 * locals (s_local_search): levpp's polls call into the runtime on their
 * unlikely path, so fields read through w would be read again at every
 * iteration of every loop. */
GA_HOT int64_t s_dl(const double *xy, const int32_t *mat, int32_t metric, int32_t n, int32_t a,
                    int32_t b)
{
    if (mat)
        return mat[(size_t)a * (size_t)n + (size_t)b];
    const double *p = xy + 2 * (size_t)a, *q = xy + 2 * (size_t)b;
    return tsp_dist_xy(metric, p[0], p[1], q[0], q[1]);
}

/* Queues city c (ring queue[n], flags inq, head qh, length ql); returns
 * the new length. */
GA_HOT int32_t s_pushl(int32_t *queue, uint8_t *inq, int32_t n, int32_t qh, int32_t ql, int32_t c)
{
    if (inq[c])
        return ql;
    inq[c] = 1;
    int32_t i = qh + ql;
    queue[i >= n ? i - n : i] = c;
    return ql + 1;
}

/* The local search's shorthands over its C locals. */
#define LS_D(a, b) s_dl(xy, mat, metric, n, (a), (b))
#define LS_SUCC(c) t[pos[c] + 1 == n ? 0 : pos[c] + 1]
#define LS_PRED(c) t[pos[c] == 0 ? n - 1 : pos[c] - 1]
#define LS_PUSH(c) (ql = s_pushl(queue, inq, n, qh, ql, (c)))

/* Runs the local search until no queued city finds a better move, and
 * returns how much shorter the tour became. For each city taken from the
 * queue: the best 2-opt move that gives it a nearer neighbour (both
 * directions), else the best Or-opt move of a segment of 1 to 3 cities
 * that starts or ends at it to between two cities near one of its ends.
 * One function with its loops inline and the world's fields in C locals:
 * levpp polls its loops by budget, and the candidate loops, shorter than
 * 16, run uncharged. */
static int64_t s_local_search(ga_world *w)
{
    const int32_t n = w->n, nk = w->nk, metric = w->metric;
    const double *xy = w->xy;
    const int32_t *mat = w->mat, *nbs = w->nb;
    const int64_t *nds = w->nbd;
    int32_t *t = w->t, *pos = w->pos, *queue = w->queue;
    uint8_t *inq = w->inq;
    int32_t qh = w->qhead, ql = w->qlen;
    int64_t total = 0;
    while (ql > 0) {
        int32_t a = queue[qh];
        qh = qh + 1 == n ? 0 : qh + 1;
        ql--;
        inq[a] = 0;
        const int32_t *nb = nbs + (size_t)a * (size_t)nk;
        const int64_t *nd = nds + (size_t)a * (size_t)nk;
        /* 2-opt: remove (bx, succ bx), (by, succ by) */
        int64_t best = 0;
        int32_t bx = -1, by = -1;
        for (int32_t dir = 0; dir < 2; dir++) {
            int32_t b = dir ? LS_PRED(a) : LS_SUCC(a);
            int64_t dab = LS_D(a, b);
            /* the nearer neighbours: a prefix of the sorted list */
            for (int32_t k = 0; k < GA_NEIGHBOURS; k++) {
                if (nd[k] < dab) {
                    int32_t c = nb[k];
                    int32_t d = dir ? LS_PRED(c) : LS_SUCC(c);
                    int64_t g = c == b || d == a ? 0 : dab + LS_D(c, d) - nd[k] - LS_D(b, d);
                    if (g > best) {
                        best = g;
                        bx = dir ? b : a;
                        by = dir ? d : c;
                    }
                }
            }
        }
        if (best > 0) {
            int32_t sx = LS_SUCC(bx), sy = LS_SUCC(by);
            s_reverse(w, pos[sx], pos[by]);
            LS_PUSH(bx);
            LS_PUSH(sx);
            LS_PUSH(by);
            LS_PUSH(sy);
        } else {
            /* Or-opt: the segment s1..s2 (forward) of k cities at i */
            int32_t bi = -1, bk = 0, bu = -1, brev = 0;
            for (int32_t v = 0; v < 2 * GA_SEG_MAX; v++) {
                int32_t k = v / 2 + 1;
                int32_t i = pos[a];
                if (v & 1)
                    i = i - (k - 1) < 0 ? i - (k - 1) + n : i - (k - 1);
                int32_t j = i + k - 1 >= n ? i + k - 1 - n : i + k - 1;
                int32_t s1 = t[i], s2 = t[j];
                int32_t p = LS_PRED(s1), x = LS_SUCC(s2);
                int64_t gain = LS_D(p, s1) + LS_D(s2, x) - LS_D(p, x);
                if (k + 3 > n || (k == 1 && v == 1))
                    gain = 0;
                for (int32_t e = 0; e < 2; e++) {
                    int32_t end = e ? s2 : s1, other = e ? s1 : s2;
                    const int32_t *eb = nbs + (size_t)end * (size_t)nk;
                    const int64_t *ed = nds + (size_t)end * (size_t)nk;
                    for (int32_t q = 0; q < GA_NEIGHBOURS; q++) {
                        if (ed[q] >= gain)
                            continue;
                        int32_t c = eb[q];
                        int32_t off = pos[c] - i;
                        off = off < 0 ? off + n : off;
                        /* c then its successor, the end next to c */
                        int32_t cs = LS_SUCC(c), cp = LS_PRED(c);
                        int64_t g1 =
                            off < k || c == p ? 0 : gain - ed[q] - LS_D(other, cs) + LS_D(c, cs);
                        /* its predecessor then c */
                        int64_t g2 =
                            off < k || c == x ? 0 : gain - ed[q] - LS_D(other, cp) + LS_D(cp, c);
                        if (g1 > best) {
                            best = g1;
                            bi = i, bk = k, bu = c, brev = e;
                        }
                        if (g2 > best) {
                            best = g2;
                            bi = i, bk = k, bu = cp, brev = !e;
                        }
                    }
                }
            }
            if (best > 0) {
                int32_t bj = bi + bk - 1 >= n ? bi + bk - 1 - n : bi + bk - 1;
                int32_t s1 = t[bi], s2 = t[bj];
                int32_t p = LS_PRED(s1), x = LS_SUCC(s2), us = LS_SUCC(bu);
                s_move_segment(w, bi, bk, bu, brev);
                LS_PUSH(p);
                LS_PUSH(x);
                LS_PUSH(s1);
                LS_PUSH(s2);
                LS_PUSH(bu);
                LS_PUSH(us);
            }
        }
        if (best > 0)
            LS_PUSH(a);
        total += best;
    }
    w->qhead = qh;
    w->qlen = ql;
    return total;
}

#undef LS_D
#undef LS_SUCC
#undef LS_PRED
#undef LS_PUSH

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
GA_HOT int s_adjacent(int32_t n, const int32_t *pos, int32_t a, int32_t b)
{
    int32_t dlt = pos[a] - pos[b];
    return dlt == 1 || dlt == -1 || dlt == n - 1 || dlt == 1 - n;
}

/* Order crossover: the child in t / pos keeps a random segment of the
 * first parent and takes the other cities in the order of the second;
 * queues the ends of every edge neither parent has. Returns the child's
 * length. */
static int64_t s_crossover(ga_world *w, uint64_t *rng, const int32_t *p1, const int32_t *p2)
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
    int64_t length = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t c = t[i], d = t[i + 1 == n ? 0 : i + 1];
        length += s_d(w, c, d);
        if (!s_adjacent(n, w->pos1, c, d) && !s_adjacent(n, w->pos2, c, d)) {
            s_push(w, c);
            s_push(w, d);
        }
    }
    return length;
}

/* The double bridge on two short adjacent segments of the child (A B C D
 * becomes A C B D); queues the six cities at the cuts. Returns how much
 * longer the tour became. */
static int64_t s_double_bridge(ga_world *w, uint64_t *rng)
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
    int64_t delta = s_d(w, pa, c0) + s_d(w, c1, b0) + s_d(w, b1, dd) - s_d(w, pa, b0) -
                    s_d(w, b1, c0) - s_d(w, c1, dd);
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
    return delta;
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
        int better = lens[c] < lens[best] || (c < best && lens[c] == lens[best]);
        best = better ? c : best;
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

/* Makes one chromosome of a first population into tour[n]: a randomised
 * nearest-neighbour tour improved by the local search; returns its length. */
static GA_ATOMIC int64_t s_first(ga_world *w, uint64_t *rng, int32_t *tour)
{
    s_nearest_tour(w, rng);
    s_local_search(w);
    memcpy(tour, w->t, (size_t)w->n * sizeof *w->t);
    return ga_tour_length(w, w->t);
}

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
    for (int32_t j = 0; j < pop; j++)
        lens[j] = s_first(w, h.rng, tours + (size_t)j * (size_t)n);
    memcpy(state, &h, sizeof h);
}

/* Makes one child of the population, improves it and offers it. */
static GA_ATOMIC void s_child(ga_world *w, uint64_t *rng, int32_t *tours, int64_t *lens)
{
    int32_t n = w->n, pop = w->p.pop;
    int32_t i1 = s_tournament(rng, lens, pop, w->p.tournament);
    const int32_t *p1 = tours + (size_t)i1 * (size_t)n;
    int32_t roll = s_below(rng, 100);
    int64_t len;
    if (roll < GA_XOVER_PCT) {
        int32_t i2 = s_tournament(rng, lens, pop, w->p.tournament);
        if (i2 == i1) {
            i2 = i1 + 1 + s_below(rng, pop - 1);
            i2 = i2 >= pop ? i2 - pop : i2;
        }
        len = s_crossover(w, rng, p1, tours + (size_t)i2 * (size_t)n);
        if (s_below(rng, 100) < GA_MUT_PCT)
            len += s_double_bridge(w, rng);
    } else {
        s_load(w, p1);
        len = lens[i1] + s_double_bridge(w, rng);
    }
    len -= s_local_search(w);
    s_offer(w, tours, lens, w->t, len);
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
