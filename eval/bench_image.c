/* bench_image.c - capture and restore speed of a suspended VT.
 *
 * Two heaps, each reachable from the VT's entry frame:
 *   big   1,000 arrays of double, 64 KiB each, through an array of pointers;
 *   list  1,000,000 nodes struct node { long v; struct node *next; }.
 * Each run times rt_capture and rt_restore (a fresh VT from the image)
 * separately, repeats, and prints best and median; throughput counts the
 * image's live bytes (frames and heap objects) over capture + restore.
 * A memcpy of the same objects is the reference.
 *
 * mem: resident memory across many cycles of a VT holding a list of
 * MEM_NODES nodes, in three ways: the torture cycle (rt_image_torture:
 * capture, poison, restore at new addresses, the old memory held a few
 * cycles), as torture mode does at every safe point, capture and restore into a new
 * VT (resume, migration), and capture alone (checkpoint files). Prints
 * RSS and the collector's heap after 100, 1,000, 10,000 and 100,000
 * cycles and the growth per cycle; stops a way early once RSS has grown
 * by MEM_RSS_CAP (a runtime whose memory grows without bound). Each way
 * runs in a process of its own when named (`mem in_place`).
 *
 * Usage: bench_image [big|list|all] [REPS] [noref]
 *        bench_image mem [in_place|new_vt|capture]
 * (noref: leave out the memcpy reference, for profiles)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define GC_THREADS
#include <gc/gc.h>

#include "arena.h"
#include "bench.h"
#include "heap.h"
#include "image.h"
#include "rt.h"
#include "vt.h"

/* ===================================================================
 * The task module: hand-written frames and types
 * =================================================================== */

enum { FN_BIG, FN_LIST, NFN };
enum { T_BIGFR = LEV_T_USER, T_LISTFR, T_NODE, T_F64, NTYPES_END };

struct big_frame {
    lev_task_frame t;
    double **arr; /* nobj pointers to arrays of per doubles */
    long nobj;
    long per;
};

struct node {
    long v;
    struct node *next;
};

struct list_frame {
    lev_task_frame t;
    struct node *head;
    long n;
};

static int s_hold_run(lev_ctx *vt, void *frame);

static const lev_field_desc s_big_fields[] = {
    {"arg", offsetof(struct big_frame, t.arg), LEV_K_PTR, 1, 0},
    {"len", offsetof(struct big_frame, t.len), LEV_K_B8, 1, 0},
    {"arr", offsetof(struct big_frame, arr), LEV_K_PTR, 1, 0},
    {"nobj", offsetof(struct big_frame, nobj), LEV_K_B8, 1, 0},
    {"per", offsetof(struct big_frame, per), LEV_K_B8, 1, 0}};
static const lev_field_desc s_list_fields[] = {
    {"arg", offsetof(struct list_frame, t.arg), LEV_K_PTR, 1, 0},
    {"len", offsetof(struct list_frame, t.len), LEV_K_B8, 1, 0},
    {"head", offsetof(struct list_frame, head), LEV_K_PTR, 1, 0},
    {"n", offsetof(struct list_frame, n), LEV_K_B8, 1, 0}};
static const lev_field_desc s_node_fields[] = {
    {"v", offsetof(struct node, v), LEV_K_B8, 1, 0},
    {"next", offsetof(struct node, next), LEV_K_PTR, 1, 0}};
static const lev_field_desc s_f64_fields[] = {{"value", 0, LEV_K_B8, 1, 0}};
static const lev_type_desc s_types[] = {
    {"frame big", sizeof(struct big_frame), 5, s_big_fields, _Alignof(struct big_frame)},
    {"frame list", sizeof(struct list_frame), 4, s_list_fields, _Alignof(struct list_frame)},
    {"struct node", sizeof(struct node), 2, s_node_fields, _Alignof(struct node)},
    {"double", sizeof(double), 1, s_f64_fields, _Alignof(double)}};
static const lev_fn_desc s_fns[] = {{"big", NULL, s_hold_run, T_BIGFR, LEV_FN_TASK},
                                    {"list", NULL, s_hold_run, T_LISTFR, LEV_FN_TASK}};
static const lev_module_desc s_mdesc = {
    LEV_ABI_VERSION, "bench_image", NTYPES_END - LEV_T_USER, s_types, NFN, s_fns, 0, NULL};
static lev_module *M;

/* Both entries: wait at a blocking safe point once, then end. */
static int s_hold_run(lev_ctx *vt, void *frame)
{
    lev_frame *h = frame;
    if (h->pc == 0 && lev_safepoint(vt, LEV_SP_BLOCK)) {
        h->pc = 1;
        return LEV_RUN_UNWIND;
    }
    return LEV_RUN_DONE;
}

/* ===================================================================
 * Building and checking the heaps
 * =================================================================== */

enum { BIG_NOBJ = 1000, BIG_PER = 64 * 1024 / sizeof(double), LIST_N = 1000000 };
enum { MEM_NODES = 2000, MEM_CYCLES = 100000 };
#define MEM_RSS_CAP ((size_t)1 << 30)

static rt_vt *s_suspended(uint32_t fn, void **frame)
{
    long arg = 0;
    rt_vt *vt;
    BENCH_CHECK(rt_vt_new(M, fn, &arg, sizeof arg, &vt), "rt_vt_new");
    if (rt_vt_step(vt) != LEV_RUN_UNWIND) {
        fprintf(stderr, "bench_image: the VT did not suspend\n");
        exit(1);
    }
    vt->want = 0;
    *frame = rt_vt_bottom(vt);
    return vt;
}

static rt_vt *s_make_big(void)
{
    struct big_frame *fr;
    rt_vt *vt = s_suspended(FN_BIG, (void **)&fr);
    fr->nobj = BIG_NOBJ;
    fr->per = BIG_PER;
    fr->arr = lev_alloc(M, LEV_T_PTR, BIG_NOBJ);
    for (long i = 0; i < BIG_NOBJ; i++) {
        double *a = lev_alloc(M, T_F64, BIG_PER);
        if (!a) {
            fprintf(stderr, "bench_image: out of memory\n");
            exit(1);
        }
        for (long j = 0; j < (long)BIG_PER; j++)
            a[j] = (double)i * 0.5 + (double)j;
        fr->arr[i] = a;
    }
    return vt;
}

static rt_vt *s_make_list(long n)
{
    struct list_frame *fr;
    rt_vt *vt = s_suspended(FN_LIST, (void **)&fr);
    fr->n = n;
    for (long k = n; k >= 1; k--) {
        struct node *p = lev_alloc(M, T_NODE, 1);
        if (!p) {
            fprintf(stderr, "bench_image: out of memory\n");
            exit(1);
        }
        p->v = k;
        p->next = fr->head;
        fr->head = p;
    }
    return vt;
}

static int s_same_big(rt_vt *a, rt_vt *b)
{
    struct big_frame *x = rt_vt_bottom(a), *y = rt_vt_bottom(b);
    if (x->nobj != y->nobj || x->per != y->per || x->arr == y->arr)
        return 0;
    for (long i = 0; i < x->nobj; i++)
        if (x->arr[i] == y->arr[i] || memcmp(x->arr[i], y->arr[i], (size_t)x->per * 8))
            return 0;
    return 1;
}

static int s_same_list(rt_vt *a, rt_vt *b)
{
    struct list_frame *x = rt_vt_bottom(a), *y = rt_vt_bottom(b);
    struct node *p = x->head, *q = y->head;
    long n = 0;
    for (; p && q; p = p->next, q = q->next, n++)
        if (p == q || p->v != q->v)
            return 0;
    return !p && !q && n == x->n;
}

/* ===================================================================
 * Reference: memcpy of the same objects
 * =================================================================== */

/* Copies every object of the heap into dst (contiguously); returns bytes. */
static size_t s_copy_big(rt_vt *vt, char *dst)
{
    struct big_frame *fr = rt_vt_bottom(vt);
    size_t off = 0, n = (size_t)fr->per * sizeof(double);
    for (long i = 0; i < fr->nobj; i++, off += n)
        memcpy(dst + off, fr->arr[i], n);
    return off;
}

static size_t s_copy_list(rt_vt *vt, char *dst)
{
    struct list_frame *fr = rt_vt_bottom(vt);
    size_t off = 0;
    for (struct node *p = fr->head; p; p = p->next, off += sizeof *p)
        memcpy(dst + off, p, sizeof *p);
    return off;
}

/* ===================================================================
 * Measurement
 * =================================================================== */

typedef struct result {
    double cap_best, cap_med, rst_best, rst_med, sum_best, sum_med;
    double cpy_best, cpy_med, cpy_cold_best;
    uint64_t live;
    size_t img;
} result;

static long s_minflt(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

/* Times copy() into a buffer touched before (warm, tm) and into a fresh
 * one (tk, page faults included). */
static void s_reference(rt_vt *vt, size_t (*copy)(rt_vt *, char *), size_t bytes, int reps,
                        double *tm, double *tk)
{
    char *dst = malloc(bytes);
    if (!dst) {
        fprintf(stderr, "bench_image: out of memory\n");
        exit(1);
    }
    memset(dst, 1, bytes);
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        copy(vt, dst);
        tm[r] = bench_now() - t0;
        char *fresh = malloc(bytes);
        if (!fresh) {
            fprintf(stderr, "bench_image: out of memory\n");
            exit(1);
        }
        t0 = bench_now();
        copy(vt, fresh);
        tk[r] = bench_now() - t0;
        free(fresh);
    }
    free(dst);
}

static void s_measure(const char *name, rt_vt *vt, int (*same)(rt_vt *, rt_vt *),
                      size_t (*copy)(rt_vt *, char *), int reps, int ref, result *res)
{
    double *tc = calloc((size_t)reps, sizeof *tc), *tr = calloc((size_t)reps, sizeof *tr);
    double *ts = calloc((size_t)reps, sizeof *ts), *tm = calloc((size_t)reps, sizeof *tm);
    double *tk = calloc((size_t)reps, sizeof *tk);
    size_t len = 0;
    rt_image_info info = {0};
    long flt_cap = 0, flt_rst = 0, gcs = 0;
    for (int r = 0; r < reps; r++) {
        GC_gcollect(); /* each restore starts from a collected heap */
        uint8_t *img;
        long f0 = s_minflt();
        double t0 = bench_now();
        BENCH_CHECK(rt_capture(vt, &img, &len), "rt_capture");
        double t1 = bench_now();
        long f1 = s_minflt(), g1 = (long)GC_get_gc_no();
        rt_vt *copy_vt;
        double t2 = bench_now();
        BENCH_CHECK(rt_restore(M, img, len, &copy_vt), "rt_restore");
        double t3 = bench_now();
        flt_cap += f1 - f0;
        flt_rst += s_minflt() - f1;
        gcs += (long)GC_get_gc_no() - g1;
        tc[r] = t1 - t0;
        tr[r] = t3 - t2;
        ts[r] = tc[r] + tr[r];
        if (r == 0) {
            BENCH_CHECK(rt_image_info_get(img, len, &info), "rt_image_info_get");
            if (!same(vt, copy_vt)) {
                fprintf(stderr, "bench_image: %s: the restored heap differs\n", name);
                exit(1);
            }
        }
        rt_vt_destroy(&copy_vt);
        free(img);
    }
    if (ref)
        s_reference(vt, copy, (size_t)info.live_bytes + 4096, reps, tm, tk);
    double unused;
    bench_stats(tc, reps, &res->cap_best, &res->cap_med);
    bench_stats(tr, reps, &res->rst_best, &res->rst_med);
    bench_stats(ts, reps, &res->sum_best, &res->sum_med);
    if (ref) {
        bench_stats(tm, reps, &res->cpy_best, &res->cpy_med);
        bench_stats(tk, reps, &res->cpy_cold_best, &unused);
    }
    res->live = info.live_bytes;
    res->img = len;
    free(tc);
    free(tr);
    free(ts);
    free(tm);
    free(tk);

    double mb = (double)res->live / 1e6;
    printf("%s: %u objects, live %llu B, image %zu B (image/live %.3f)\n", name, info.nobjects,
           (unsigned long long)res->live, res->img, (double)res->img / (double)res->live);
    printf("%s: capture  best %8.2f ms  median %8.2f ms\n", name, res->cap_best * 1e3,
           res->cap_med * 1e3);
    printf("%s: restore  best %8.2f ms  median %8.2f ms\n", name, res->rst_best * 1e3,
           res->rst_med * 1e3);
    printf("%s: cap+rst  best %8.2f ms  median %8.2f ms  -> %7.1f MB/s best, %7.1f MB/s median\n",
           name, res->sum_best * 1e3, res->sum_med * 1e3, mb / res->sum_best, mb / res->sum_med);
    printf("%s: per run: %.0f page faults in capture, %.0f in restore, %.2f collections in "
           "restore; GC heap %zu MiB\n",
           name, (double)flt_cap / reps, (double)flt_rst / reps, (double)gcs / reps,
           GC_get_heap_size() >> 20);
    printf("%s: time per live byte  best %.3f ns  median %.3f ns\n", name,
           res->sum_best * 1e9 / (double)res->live, res->sum_med * 1e9 / (double)res->live);
    if (ref)
        printf("%s: memcpy (warm dst) best %.2f ms (%.0f MB/s), fresh dst best %.2f ms; "
               "cap+rst / memcpy warm = %.1fx, / memcpy fresh = %.1fx\n",
               name, res->cpy_best * 1e3, mb / res->cpy_best, res->cpy_cold_best * 1e3,
               res->sum_best / res->cpy_best, res->sum_best / res->cpy_cold_best);
    fflush(stdout);
}

/* ===================================================================
 * Memory across cycles
 * =================================================================== */

enum { MEM_IN_PLACE, MEM_NEW_VT, MEM_CAPTURE };

/* One cycle of the given way on *vt (replaced by the new VT for
 * MEM_NEW_VT). */
static void s_mem_cycle(rt_vt **vt, int way)
{
    if (way == MEM_IN_PLACE) {
        BENCH_CHECK(rt_image_torture(*vt, NULL), "rt_image_torture");
        return;
    }
    uint8_t *img;
    size_t len;
    BENCH_CHECK(rt_capture(*vt, &img, &len), "rt_capture");
    if (way == MEM_NEW_VT) {
        rt_vt *n;
        BENCH_CHECK(rt_restore(M, img, len, &n), "rt_restore");
        rt_vt_destroy(vt);
        *vt = n;
    }
    free(img);
}

/* Runs MEM_CYCLES cycles of one way and prints the memory at each power
 * of ten from 100 on; returns RSS after 100,000 over RSS after 100 (0 if
 * it stopped early). */
static double s_mem_way(const char *name, int way)
{
    GC_gcollect();
    size_t rss0 = bench_rss();
    rt_vt *vt = s_make_list(MEM_NODES);
    size_t at100 = 0, at1k = 0, rss = 0;
    long done = 0;
    double t0 = bench_now();
    for (long c = 1; c <= MEM_CYCLES; c++) {
        s_mem_cycle(&vt, way);
        done = c;
        if (c == 100 || c == 1000 || c == 10000 || c == 100000 || c % 1000 == 0) {
            rss = bench_rss();
            if (c == 100)
                at100 = rss;
            if (c == 1000)
                at1k = rss;
            if (c == 100 || c == 1000 || c == 10000 || c == 100000)
                printf("mem.%s: after %6ld cycles: RSS %8.1f MiB, GC heap %8.1f MiB "
                       "(%.1f MiB unmapped)\n",
                       name, c, (double)rss / 1048576.0,
                       (double)(GC_get_heap_size() + GC_get_unmapped_bytes()) / 1048576.0,
                       (double)GC_get_unmapped_bytes() / 1048576.0);
            if (rss > rss0 + MEM_RSS_CAP) {
                printf("mem.%s: stopped after %ld cycles: RSS grew by more than %zu MiB\n", name, c,
                       MEM_RSS_CAP >> 20);
                break;
            }
        }
    }
    double secs = bench_now() - t0;
    long span = done > 1000 ? done - 1000 : 0;
    double per = span && at1k ? ((double)rss - (double)at1k) / (double)span : 0;
    printf("mem.%s: RSS before the VT %.1f MiB; growth per cycle from 1,000 to %ld cycles: "
           "%.0f B; %.1f us per cycle\n",
           name, (double)rss0 / 1048576.0, done, per, secs * 1e6 / (double)done);
    if (!span) /* stopped before 1,000 cycles */
        printf("mem.%s: growth per cycle over the first %ld cycles: %.0f B\n", name, done,
               ((double)rss - (double)rss0) / (double)done);
    fflush(stdout);
    rt_vt_destroy(&vt);
    return done == MEM_CYCLES && at100 ? (double)rss / (double)at100 : 0;
}

/* The ways named by `only` (all if NULL), with a target line for each. */
static void s_mem(const char *only)
{
    static const struct {
        const char *name;
        int way;
    } ways[] = {{"in_place", MEM_IN_PLACE}, {"new_vt", MEM_NEW_VT}, {"capture", MEM_CAPTURE}};
    printf("mem: a VT holding a list of %d nodes (%zu live bytes), %d cycles\n", MEM_NODES,
           (size_t)MEM_NODES * (sizeof(struct node) + sizeof(rt_objhdr)), MEM_CYCLES);
    for (int i = 0; i < 3; i++) {
        if (only && strcmp(only, ways[i].name) != 0)
            continue;
        double r = s_mem_way(ways[i].name, ways[i].way);
        printf("TARGET mem.%s RSS after 100,000 cycles <= 2x after 100: %s%.2fx: %s\n",
               ways[i].name, r ? "" : "did not finish, ", r, r && r <= 2 ? "met" : "MISSED");
    }
}

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "all";
    int reps = argc > 2 ? atoi(argv[2]) : 7;
    int ref = !(argc > 3 && strcmp(argv[3], "noref") == 0);
    if (reps < 1)
        reps = 1;
    rt_init();
    BENCH_CHECK(lev_module_register(&s_mdesc, &M), "lev_module_register");
    if (strcmp(which, "mem") == 0) {
        s_mem(argc > 2 ? argv[2] : NULL);
        return 0;
    }
    result big = {0}, list = {0};
    int do_big = strcmp(which, "list") != 0, do_list = strcmp(which, "big") != 0;
    if (do_big) {
        rt_vt *vt = s_make_big();
        s_measure("image.big", vt, s_same_big, s_copy_big, reps, ref, &big);
        rt_vt_destroy(&vt);
        GC_gcollect();
    }
    if (do_list) {
        rt_vt *vt = s_make_list(LIST_N);
        s_measure("image.list", vt, s_same_list, s_copy_list, reps, ref, &list);
        rt_vt_destroy(&vt);
    }
    if (do_big) {
        double mbs = (double)big.live / 1e6 / big.sum_best;
        printf("TARGET image.big throughput >= 500 MB/s: %.0f MB/s best, %.0f median: %s\n", mbs,
               (double)big.live / 1e6 / big.sum_med, mbs >= 500 ? "met" : "MISSED");
        double ratio = (double)big.img / (double)big.live;
        printf("TARGET image.big image/live <= 1.1: %.3f: %s\n", ratio,
               ratio <= 1.1 ? "met" : "MISSED");
    }
    if (do_big && do_list) {
        double pb = big.sum_best / (double)big.live, pl = list.sum_best / (double)list.live;
        double pbm = big.sum_med / (double)big.live, plm = list.sum_med / (double)list.live;
        printf("TARGET image.list time/byte <= 3x image.big: %.1fx best, %.1fx median: %s\n",
               pl / pb, plm / pbm, pl / pb <= 3 ? "met" : "MISSED");
        printf("INFO image.list image/live: %.3f\n", (double)list.img / (double)list.live);
    }
    return 0;
}
