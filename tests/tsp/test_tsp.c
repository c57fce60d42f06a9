/* test_tsp.c - the TSP sample's instances and genetic algorithm: the
 * TSPLIB reader on every data file and on each kind of bad input, TSPLIB's
 * distances, TOUR files, SVG pictures, the command line, the island GA's
 * determinism, its state check and its quality on berlin52.
 *
 *   test_tsp                          runs the tests (cmocka)
 *   test_tsp check-tour TSP TOUR LEN  exits 0 if TOUR is a valid tour of
 *                                     TSP whose length is LEN (the ctest of
 *                                     lev-tsp-seq uses it)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ga.h"
#include "tsp_cli.h"
#include "tsp_dist.h"
#include "tsp_job.h"
#include "tsplib.h"

#ifndef TSP_DATA_DIR
#error "TSP_DATA_DIR must name samples/tsp/data"
#endif

static char s_dir[256]; /* scratch directory of the run */

/* A path in the scratch directory. */
static const char *s_path(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", s_dir, name);
    return buf[k];
}

/* Writes text to the scratch file name; returns its path. */
static const char *s_file(const char *name, const char *text)
{
    const char *p = s_path(name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return p;
}

static void s_load_data(const char *name, tsp_instance *inst)
{
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/%s.tsp", TSP_DATA_DIR, name);
    if (tsp_load(path, inst, err, sizeof err) != 0)
        fail_msg("%s", err);
}

/* ------------------------------------------------------------------ */
/* The reader                                                          */
/* ------------------------------------------------------------------ */

static void t_data_files(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int32_t n;
        int64_t opt;
    } files[] = {{"berlin52", 52, 7542}, {"st70", 70, 675},   {"kroA100", 100, 21282},
                 {"ch150", 150, 6528},   {"a280", 280, 2579}, {"pr1002", 1002, 259045}};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        tsp_instance inst;
        s_load_data(files[i].name, &inst);
        assert_string_equal(inst.name, files[i].name);
        assert_int_equal(inst.n, files[i].n);
        assert_int_equal(inst.metric, TSP_EUC_2D);
        assert_int_equal(inst.optimum, files[i].opt);
        assert_non_null(inst.xy);
        assert_null(inst.geo);
        assert_ptr_equal(tsp_coords(&inst), inst.xy);
        tsp_free(&inst);
    }
    /* berlin52's first city, and the last */
    tsp_instance b;
    s_load_data("berlin52", &b);
    assert_true(b.xy[0] == 565.0 && b.xy[1] == 575.0);
    assert_true(b.xy[102] == 1740.0 && b.xy[103] == 245.0);
    tsp_free(&b);
}

/* Expects tsp_load of text to fail with every piece of want (| apart)
 * in its message. */
static void s_refused(const char *name, const char *text, const char *want)
{
    tsp_instance inst;
    char err[512] = "";
    const char *p = text ? s_file(name, text) : s_path(name);
    int rc = tsp_load(p, &inst, err, sizeof err);
    if (rc == 0)
        fail_msg("%s was accepted", name);
    assert_int_equal(inst.n, 0);
    assert_null(inst.xy);
    char copy[256];
    snprintf(copy, sizeof copy, "%s", want);
    for (char *tok = strtok(copy, "|"); tok; tok = strtok(NULL, "|"))
        if (!strstr(err, tok))
            fail_msg("%s: error '%s' lacks '%s'", name, err, tok);
}

#define HEAD5 "NAME: five\nTYPE: TSP\nDIMENSION: 5\nEDGE_WEIGHT_TYPE: EUC_2D\n"

static void t_bad_inputs(void **state)
{
    (void)state;
    s_refused("missing.tsp", NULL, "missing.tsp: No such file or directory");
    s_refused("empty.tsp", "", "empty.tsp: the file is empty");
    s_refused("blank.tsp", "\n\n  \n", "blank.tsp: the file is empty");
    s_refused("atsp.tsp", "NAME: x\nTYPE: ATSP\n", "atsp.tsp:2: TYPE: ATSP is not supported");
    s_refused("hcp.tsp", "NAME: x\nTYPE : HCP\n", "hcp.tsp:2: TYPE: HCP is not supported");
    s_refused("explicit.tsp", "NAME: x\nTYPE: TSP\nDIMENSION: 5\nEDGE_WEIGHT_TYPE: EXPLICIT\n",
              "explicit.tsp:4: EDGE_WEIGHT_TYPE: EXPLICIT is not supported (EUC_2D, CEIL_2D, "
              "ATT, GEO)");
    s_refused("ews.tsp", HEAD5 "EDGE_WEIGHT_SECTION\n1 2 3\n",
              "ews.tsp:5: EDGE_WEIGHT_SECTION is not supported");
    s_refused("nodim.tsp",
              "NAME: x\nTYPE: TSP\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\n",
              "nodim.tsp:4: NODE_COORD_SECTION: comes before DIMENSION");
    s_refused("nodim2.tsp", "NAME: x\nTYPE: TSP\nEDGE_WEIGHT_TYPE: EUC_2D\n",
              "nodim2.tsp: DIMENSION is missing");
    s_refused("noewt.tsp",
              "NAME: x\nDIMENSION: 5\nNODE_COORD_SECTION\n1 0 0\n2 1 0\n3 2 0\n4 3 0\n5 4 0\nEOF\n",
              "noewt.tsp: EDGE_WEIGHT_TYPE is missing");
    s_refused("dim.tsp", "NAME: x\nDIMENSION: many\n", "dim.tsp:2: DIMENSION: 'many' is not");
    s_refused("coord.tsp", HEAD5 "NODE_COORD_SECTION\n1 0 0\n2 1 abc\n",
              "coord.tsp:7: NODE_COORD_SECTION: node 2: y coordinate 'abc' is not a number");
    s_refused("coordx.tsp", HEAD5 "NODE_COORD_SECTION\n1 0 0\n2 1x 5\n",
              "coordx.tsp:7:|node 2: x coordinate '1x' is not a number");
    s_refused("short.tsp", HEAD5 "NODE_COORD_SECTION\n1 0 0\n2 1\n",
              "short.tsp:7:|node 2: y coordinate is missing");
    s_refused("extra.tsp", HEAD5 "NODE_COORD_SECTION\n1 0 0 9\n", "extra.tsp:6:|unexpected '9'");
    s_refused("range.tsp", HEAD5 "NODE_COORD_SECTION\n1 0 0\n6 1 1\n",
              "range.tsp:7: NODE_COORD_SECTION: node number 6 is out of range (1 to 5)");
    s_refused("repeat.tsp", HEAD5 "NODE_COORD_SECTION\n1 0 0\n2 1 1\n1 2 2\n",
              "repeat.tsp:8: NODE_COORD_SECTION: node 1 is repeated");
    s_refused("fewer.tsp", HEAD5 "NODE_COORD_SECTION\n1 0 0\n2 1 1\n3 2 2\nEOF\n",
              "fewer.tsp:9: NODE_COORD_SECTION: 3 nodes, but DIMENSION says 5");
    s_refused("fewer2.tsp", HEAD5 "NODE_COORD_SECTION\n1 0 0\n2 1 1\n",
              "fewer2.tsp:7: NODE_COORD_SECTION: 2 nodes, but DIMENSION says 5 (the file ends)");
    s_refused("more.tsp",
              HEAD5 "NODE_COORD_SECTION\n1 0 0\n2 1 1\n3 2 2\n4 3 3\n5 4 4\n6 5 5\nEOF\n",
              "more.tsp:11: NODE_COORD_SECTION: more nodes than DIMENSION (5)");
    s_refused("unknown.tsp", "NAME: x\nCOLOUR: blue\n", "unknown.tsp:2: COLOUR: unknown keyword");
    s_refused("nocoords.tsp", HEAD5 "EOF\n", "nocoords.tsp: NODE_COORD_SECTION is missing");
    /* coordinates whose distances or tour lengths would not fit an int64_t
     * (found by fuzz_tsplib: a GEO value of 3.6e97 cast to an integer) */
    const char *big[] = {"1e10", "-1e10", "9.3e18", "3.55e97", "1000000001"};
    const char *metrics[] = {"EUC_2D", "CEIL_2D", "ATT"};
    for (size_t m = 0; m < 3; m++)
        for (size_t b = 0; b < sizeof big / sizeof *big; b++)
            for (int axis = 0; axis < 2; axis++) {
                char text[512], want[128];
                snprintf(text, sizeof text,
                         "NAME: x\nDIMENSION: 5\nEDGE_WEIGHT_TYPE: %s\nNODE_COORD_SECTION\n"
                         "1 0 0\n2 1 1\n3 %s %s\n4 3 3\n5 4 4\nEOF\n",
                         metrics[m], axis ? "2" : big[b], axis ? big[b] : "2");
                snprintf(want, sizeof want, "node 3: %s coordinate|is beyond +-1e+09",
                         axis ? "y" : "x");
                s_refused("far.tsp", text, want);
            }
    s_refused("geo.tsp",
              "NAME: x\nDIMENSION: 5\nEDGE_WEIGHT_TYPE: GEO\nNODE_COORD_SECTION\n1 0 0\n"
              "2 1 1\n3 2 3.55e97\n4 3 3\n5 4 4\nEOF\n",
              "geo.tsp: NODE_COORD_SECTION: node 3: y coordinate 3.55e+97 is beyond +-360 (GEO");
    s_refused("geo2.tsp",
              "NAME: x\nDIMENSION: 5\nEDGE_WEIGHT_TYPE: GEO\nNODE_COORD_SECTION\n1 0 0\n"
              "2 1 1\n3 -360.5 3\n4 3 3\n5 4 4\nEOF\n",
              "node 3: x coordinate -360.5 is beyond +-360");
}

static void t_formats_accepted(void **state)
{
    (void)state;
    /* CRLF, `KEY : v`, lower-case keys, leading blanks, tabs, exponents,
     * an OPTIMUM line, harmless keys, no EOF, trailing blank lines */
    const char *p = s_file("ok.tsp", "NAME : five\r\ntype : TSP\r\nCOMMENT: a test\r\n"
                                     "DIMENSION : 5\r\nEDGE_WEIGHT_TYPE : CEIL_2D\r\n"
                                     "DISPLAY_DATA_TYPE: COORD_DISPLAY\r\nOPTIMUM: 42\r\n"
                                     "NODE_COORD_SECTION\r\n  3\t1.5e3 2\r\n1 0 0\r\n"
                                     "2 -1 +4.25\r\n5 1e1 1E1\r\n4 0.5 .5\r\n\r\n\r\n");
    tsp_instance inst;
    char err[512];
    if (tsp_load(p, &inst, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_string_equal(inst.name, "five");
    assert_string_equal(inst.comment, "a test");
    assert_int_equal(inst.n, 5);
    assert_int_equal(inst.metric, TSP_CEIL_2D);
    assert_int_equal(inst.optimum, 42);
    assert_true(inst.xy[4] == 1500.0 && inst.xy[5] == 2.0);
    assert_true(inst.xy[2] == -1.0 && inst.xy[3] == 4.25);
    assert_true(inst.xy[8] == 10.0 && inst.xy[9] == 10.0);
    assert_true(inst.xy[6] == 0.5 && inst.xy[7] == 0.5);
    tsp_free(&inst);
    /* no NAME: the file's name; an unknown NAME: no optimum */
    p = s_file("noname.tsp", "TYPE: TSP\nDIMENSION: 5\nEDGE_WEIGHT_TYPE: ATT\nNODE_COORD_SECTION\n"
                             "1 0 0\n2 1 0\n3 2 0\n4 3 0\n5 4 0\n");
    if (tsp_load(p, &inst, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_string_equal(inst.name, "noname");
    assert_int_equal(inst.optimum, -1);
    assert_int_equal(inst.metric, TSP_ATT);
    tsp_free(&inst);
    /* GEO: radians in geo, used by tsp_coords */
    p = s_file("geo.tsp", "NAME: ulysses22\nTYPE: TSP\nDIMENSION: 5\nEDGE_WEIGHT_TYPE: GEO\n"
                          "NODE_COORD_SECTION\n1 38.24 20.42\n2 39.57 26.15\n3 40.56 25.32\n"
                          "4 36.26 23.12\n5 33.48 10.54\nEOF\n");
    if (tsp_load(p, &inst, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(inst.metric, TSP_GEO);
    assert_int_equal(inst.optimum, 7013); /* by NAME */
    assert_non_null(inst.geo);
    assert_ptr_equal(tsp_coords(&inst), inst.geo);
    assert_true(inst.geo[0] == tsp_geo_radians(38.24));
    int32_t t01[5] = {0, 1, 2, 3, 4};
    int64_t len = tsp_tour_length(&inst, t01);
    assert_true(len > 509); /* its first edge is 509 */
    tsp_free(&inst);
}

/* ------------------------------------------------------------------ */
/* Distances                                                           */
/* ------------------------------------------------------------------ */

static void t_distances(void **state)
{
    (void)state;
    /* EUC_2D rounds to the nearest, CEIL_2D up */
    assert_int_equal(tsp_dist_xy(TSP_EUC_2D, 0, 0, 3, 4.1), 5);
    assert_int_equal(tsp_dist_xy(TSP_CEIL_2D, 0, 0, 3, 4.1), 6);
    assert_int_equal(tsp_dist_xy(TSP_CEIL_2D, 0, 0, 3, 4), 5);
    assert_int_equal(tsp_dist_xy(TSP_EUC_2D, 0, 0, 1, 1), 1);   /* 1.414 */
    assert_int_equal(tsp_dist_xy(TSP_EUC_2D, 0, 0, 1.5, 2), 3); /* 2.5 rounds up */
    /* ATT: r = sqrt(d^2 / 10), rounded up unless whole: sqrt(10) = 3.16 -> 4 */
    assert_int_equal(tsp_dist_xy(TSP_ATT, 0, 0, 10, 0), 4);
    assert_int_equal(tsp_dist_xy(TSP_ATT, 0, 0, 30, 40), 16); /* 15.81 -> 16 */
    assert_int_equal(tsp_dist_xy(TSP_ATT, 0, 0, 0, 30), 10);  /* sqrt(90) = 9.49 */
    /* GEO: Berlin to Paris, and ulysses22's first edge (TSPLIB's values) */
    double b0 = tsp_geo_radians(52.31), b1 = tsp_geo_radians(13.24);
    double p0 = tsp_geo_radians(48.52), p1 = tsp_geo_radians(2.20);
    assert_int_equal(tsp_dist_xy(TSP_GEO, b0, b1, p0, p1), 879);
    assert_int_equal(tsp_dist_xy(TSP_GEO, tsp_geo_radians(38.24), tsp_geo_radians(20.42),
                                 tsp_geo_radians(39.57), tsp_geo_radians(26.15)),
                     509);
    /* DDD.MM: 52.30 is 52 degrees 30 minutes */
    assert_true(tsp_geo_radians(52.30) > tsp_geo_radians(52.29));
    assert_true(tsp_geo_radians(-52.30) < 0);
}

/* ------------------------------------------------------------------ */
/* Tours and pictures                                                  */
/* ------------------------------------------------------------------ */

static void t_tour_files(void **state)
{
    (void)state;
    tsp_instance inst;
    s_load_data("berlin52", &inst);
    int32_t tour[52], back[52];
    for (int i = 0; i < 52; i++)
        tour[i] = (i * 7) % 52;
    char err[512];
    assert_int_equal(tsp_tour_check(&inst, tour, err, sizeof err), 0);
    int64_t len = tsp_tour_length(&inst, tour);
    const char *p = s_path("b.tour");
    assert_int_equal(tsp_tour_write(&inst, tour, len, p, err, sizeof err), 0);
    assert_int_equal(tsp_tour_read(&inst, p, back, err, sizeof err), 0);
    assert_memory_equal(tour, back, sizeof tour);
    FILE *f = fopen(p, "r");
    char text[4096];
    size_t got = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[got] = '\0';
    assert_non_null(strstr(text, "TYPE : TOUR\n"));
    assert_non_null(strstr(text, "DIMENSION : 52\nTOUR_SECTION\n1\n8\n"));
    assert_non_null(strstr(text, "\n-1\nEOF\n"));
    /* bad tours */
    tour[3] = tour[4];
    assert_int_equal(tsp_tour_check(&inst, tour, err, sizeof err), -1);
    assert_non_null(strstr(err, "is repeated"));
    tour[3] = 52;
    assert_int_equal(tsp_tour_check(&inst, tour, err, sizeof err), -1);
    assert_non_null(strstr(err, "out of range"));
    p = s_file("bad.tour", "NAME: x\nTYPE: TOUR\nDIMENSION: 52\nTOUR_SECTION\n1\n2\n2\n");
    assert_int_equal(tsp_tour_read(&inst, p, back, err, sizeof err), -1);
    assert_non_null(strstr(err, "bad.tour:7: TOUR_SECTION: city 2 is repeated"));
    p = s_file("dim.tour", "TYPE: TOUR\nDIMENSION: 51\nTOUR_SECTION\n1\n-1\n");
    assert_int_equal(tsp_tour_read(&inst, p, back, err, sizeof err), -1);
    assert_non_null(strstr(err, "dim.tour:2: DIMENSION"));
    p = s_file("few.tour", "TYPE: TOUR\nTOUR_SECTION\n1 2 3\n-1\n");
    assert_int_equal(tsp_tour_read(&inst, p, back, err, sizeof err), -1);
    assert_non_null(strstr(err, "few.tour:4: TOUR_SECTION: 3 cities, but the instance has 52"));
    tsp_free(&inst);
}

static void t_svg(void **state)
{
    (void)state;
    tsp_instance inst;
    s_load_data("pr1002", &inst);
    int32_t *tour = malloc(1002 * sizeof *tour);
    for (int i = 0; i < 1002; i++)
        tour[i] = i;
    char err[512];
    const char *p = s_path("t.svg");
    int64_t len = tsp_tour_length(&inst, tour);
    assert_int_equal(tsp_svg_write(&inst, tour, len, p, err, sizeof err), 0);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    static char text[1 << 17];
    size_t got = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[got] = '\0';
    assert_true(strncmp(text, "<svg ", 5) == 0);
    assert_true(got > 9 && strcmp(text + got - 7, "</svg>\n") == 0);
    assert_non_null(strstr(text, "viewBox=\"0 0 "));
    assert_non_null(strstr(text, "pr1002: 1002 cities, length"));
    assert_non_null(strstr(text, "gap "));
    assert_non_null(strstr(text, "<polygon "));
    size_t circles = 0;
    for (const char *q = text; (q = strstr(q, "<circle ")); q++)
        circles++;
    assert_int_equal(circles, 1002);
    /* special characters in the name are escaped */
    snprintf(inst.name, sizeof inst.name, "a<b&c");
    assert_int_equal(tsp_svg_write(&inst, tour, len, p, err, sizeof err), 0);
    f = fopen(p, "r");
    got = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[got] = '\0';
    assert_non_null(strstr(text, "a&lt;b&amp;c"));
    assert_int_equal(tsp_svg_write(&inst, tour, len, "/nonexistent-dir/x.svg", err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "/nonexistent-dir/x.svg: "));
    free(tour);
    tsp_free(&inst);
}

/* ------------------------------------------------------------------ */
/* The command line                                                    */
/* ------------------------------------------------------------------ */

static int s_parse(unsigned flags, tsp_opts *o, int argc, ...)
{
    char *argv[16];
    va_list ap;
    va_start(ap, argc);
    argv[0] = "prog";
    for (int i = 1; i < argc; i++)
        argv[i] = va_arg(ap, char *);
    va_end(ap);
    FILE *keep = stderr;
    stderr = fopen("/dev/null", "w");
    int rc = tsp_cli_parse(argc, argv, "prog", flags, o);
    fclose(stderr);
    stderr = keep;
    return rc;
}

static void t_cli(void **state)
{
    (void)state;
    tsp_opts o;
    assert_int_equal(s_parse(0, &o, 2, "x.tsp"), -1);
    assert_string_equal(o.instance, "x.tsp");
    assert_int_equal(o.seed, 1);
    assert_int_equal(o.islands, 8);
    assert_int_equal(o.budget, 0);
    assert_null(o.tour_out);
    assert_int_equal(s_parse(0, &o, 9, "--seed", "7", "x.tsp", "--budget=500", "--islands", "3",
                             "--svg=p.svg", "--quiet"),
                     -1);
    assert_int_equal(o.seed, 7);
    assert_int_equal(o.budget, 500);
    assert_int_equal(o.islands, 3);
    assert_string_equal(o.svg, "p.svg");
    assert_int_equal(o.quiet, 1);
    assert_int_equal(s_parse(0, &o, 2, "--bogus"), 2);
    assert_int_equal(s_parse(0, &o, 3, "x.tsp", "--seed"), 2);
    assert_int_equal(s_parse(0, &o, 3, "x.tsp", "--islands=0"), 2);
    assert_int_equal(s_parse(0, &o, 3, "x.tsp", "--budget=ten"), 2);
    assert_int_equal(s_parse(0, &o, 3, "x.tsp", "y.tsp"), 2);
    assert_int_equal(s_parse(0, &o, 1), 2);
    assert_int_equal(s_parse(0, &o, 3, "x.tsp", "--vts=2"), 2); /* lev-tsp only */
    assert_int_equal(s_parse(TSP_CLI_DISTRIBUTED, &o, 4, "x.tsp", "--vts=2", "--checkpoint-ms=250"),
                     -1);
    assert_int_equal(o.vts, 2);
    assert_int_equal(o.checkpoint_ms, 250);
    /* the job: defaults, overrides, epochs spending the budget */
    tsp_instance inst;
    s_load_data("st70", &inst);
    assert_int_equal(s_parse(0, &o, 6, "st70.tsp", "--pop=10", "--epoch-gens=7", "--budget", "100"),
                     -1);
    void *job;
    size_t len;
    assert_int_equal(tsp_cli_job(&o, &inst, &job, &len), 0);
    const double *xy;
    const char *why;
    assert_int_equal(tsp_job_check(job, len, &xy, &why), 0);
    tsp_job j;
    memcpy(&j, job, sizeof j);
    assert_int_equal(j.ga.pop, 10);
    assert_int_equal(j.ga.gens, 7);
    assert_int_equal(j.islands, 8);
    assert_int_equal(j.epochs, 2); /* 8 x 7 x 2 >= 100 */
    assert_true(xy[0] == inst.xy[0]);
    ((tsp_job *)job)->n = 3;
    assert_int_equal(tsp_job_check(job, len, &xy, &why), -1);
    free(job);
    tsp_free(&inst);
}

/* ------------------------------------------------------------------ */
/* The genetic algorithm                                               */
/* ------------------------------------------------------------------ */

/* Runs islands x epochs of the job rule on inst (migrant: the previous
 * island's best of the previous epoch); returns the best length, its
 * tour in best. */
static int64_t s_ga_run(const tsp_instance *inst, const ga_params *p, int32_t islands,
                        int32_t epochs, uint64_t seed, int32_t *best)
{
    ga_world *w = ga_world_new(inst->n, inst->metric, tsp_coords(inst), p);
    assert_non_null(w);
    size_t sb = ga_island_bytes(w);
    char *st = malloc(sb * (size_t)islands);
    int32_t n = inst->n;
    int32_t *mig = malloc(2 * (size_t)islands * (size_t)n * sizeof *mig);
    for (int32_t i = 0; i < islands; i++)
        ga_island_init(w, st + sb * (size_t)i, seed, i);
    int64_t bl = INT64_MAX;
    for (int32_t e = 0; e < epochs; e++) {
        int32_t *prev = mig + (size_t)((e + 1) % 2) * (size_t)islands * (size_t)n;
        int32_t *cur = mig + (size_t)(e % 2) * (size_t)islands * (size_t)n;
        bl = INT64_MAX;
        for (int32_t i = 0; i < islands; i++) {
            const int32_t *m = e ? prev + (size_t)((i + islands - 1) % islands) * (size_t)n : NULL;
            ga_island_epoch(w, st + sb * (size_t)i, m);
            assert_int_equal(ga_island_epochs(st + sb * (size_t)i), e + 1);
            int64_t l = ga_island_best(w, st + sb * (size_t)i, cur + (size_t)i * (size_t)n);
            if (l < bl) {
                bl = l;
                memcpy(best, cur + (size_t)i * (size_t)n, (size_t)n * sizeof *best);
            }
        }
    }
    free(mig);
    free(st);
    ga_world_destroy(&w);
    assert_null(w);
    return bl;
}

static void t_ga_determinism(void **state)
{
    (void)state;
    tsp_instance inst;
    s_load_data("kroA100", &inst);
    ga_params p;
    ga_params_default(&p, inst.n);
    p.gens = 5;
    ga_world *w1 = ga_world_new(inst.n, inst.metric, tsp_coords(&inst), &p);
    ga_world *w2 = ga_world_new(inst.n, inst.metric, tsp_coords(&inst), &p);
    size_t sb = ga_island_bytes(w1);
    char *a = malloc(sb), *b = malloc(sb), *c = malloc(sb);
    /* w2 runs another island first: its scratch must not matter */
    ga_island_init(w2, c, 9, 3);
    ga_island_epoch(w2, c, NULL);
    ga_island_init(w1, a, 5, 0);
    ga_island_init(w2, b, 5, 0);
    assert_memory_equal(a, b, sb);
    int32_t mig[100];
    ga_island_best(w2, c, mig);
    ga_island_epoch(w1, a, mig);
    ga_island_epoch(w2, b, mig);
    ga_island_epoch(w1, a, NULL);
    ga_island_epoch(w2, b, NULL);
    assert_memory_equal(a, b, sb);
    assert_int_equal(ga_island_epochs(a), 2);
    const char *why = NULL;
    assert_int_equal(ga_island_check(w1, a, sb, &why), 0);
    /* another island, another seed: other populations */
    ga_island_init(w1, c, 5, 1);
    assert_memory_not_equal(a, c, sb);
    ga_island_init(w1, c, 6, 0);
    assert_memory_not_equal(a, c, sb);
    int32_t t[100];
    int64_t l = ga_island_best(w1, a, t);
    char err[256];
    assert_int_equal(tsp_tour_check(&inst, t, err, sizeof err), 0);
    assert_int_equal(tsp_tour_length(&inst, t), l);
    assert_int_equal(ga_tour_length(w1, t), l);
    free(a);
    free(b);
    free(c);
    ga_world_destroy(&w1);
    ga_world_destroy(&w2);
    ga_world_destroy(&w2); /* harmless */
    tsp_free(&inst);
}

static void t_ga_check(void **state)
{
    (void)state;
    tsp_instance inst;
    s_load_data("st70", &inst);
    ga_params p;
    ga_params_default(&p, inst.n);
    ga_world *w = ga_world_new(inst.n, inst.metric, tsp_coords(&inst), &p);
    size_t sb = ga_island_bytes(w);
    char *s = malloc(sb), *d = malloc(sb);
    ga_island_init(w, s, 1, 0);
    const char *why = NULL;
    assert_int_equal(ga_island_check(w, s, sb, &why), 0);
    assert_int_equal(ga_island_check(w, s, sb - 1, &why), -1);
    assert_non_null(strstr(why, "size"));
    assert_int_equal(ga_island_check(w, s, 10, &why), -1);
    assert_non_null(strstr(why, "shorter than its header"));
    assert_int_equal(ga_island_check(w, NULL, 0, &why), -1);
    /* the first word is the magic number */
    memcpy(d, s, sb);
    d[0] ^= 1;
    assert_int_equal(ga_island_check(w, d, sb, &why), -1);
    assert_non_null(strstr(why, "magic"));
    /* n and pop follow it */
    memcpy(d, s, sb);
    int32_t v = 71;
    memcpy(d + 4, &v, 4);
    assert_int_equal(ga_island_check(w, d, sb, &why), -1);
    assert_non_null(strstr(why, "n differs"));
    /* a city repeated in a chromosome: the tours follow the 56-byte header */
    memcpy(d, s, sb);
    int32_t *tours = (int32_t *)(d + 56);
    tours[70 + 5] = tours[70 + 6];
    assert_int_equal(ga_island_check(w, d, sb, &why), -1);
    assert_non_null(strstr(why, "not a permutation"));
    memcpy(d, s, sb);
    tours[3] = 70;
    assert_int_equal(ga_island_check(w, d, sb, &why), -1);
    assert_non_null(strstr(why, "not a permutation"));
    /* a length that is not its chromosome's: the last 8 bytes */
    memcpy(d, s, sb);
    d[sb - 8] ^= 4;
    assert_int_equal(ga_island_check(w, d, sb, &why), -1);
    assert_non_null(strstr(why, "length"));
    /* swapping two cities keeps a permutation but changes the length */
    memcpy(d, s, sb);
    int32_t x = tours[0];
    tours[0] = tours[35];
    tours[35] = x;
    assert_int_equal(ga_island_check(w, d, sb, &why), -1);
    assert_non_null(strstr(why, "length"));
    /* parameters */
    ga_params q = p;
    q.pop = 1;
    assert_int_equal(ga_params_check(&q, 70, &why), -1);
    assert_non_null(strstr(why, "pop"));
    q = p;
    q.tournament = 0;
    assert_int_equal(ga_params_check(&q, 70, &why), -1);
    assert_null(ga_world_new(4, TSP_EUC_2D, inst.xy, &p));
    assert_null(ga_world_new(70, 9, inst.xy, &p));
    free(s);
    free(d);
    ga_world_destroy(&w);
    tsp_free(&inst);
}

/* The neighbour lists from the grid equal those of comparing every pair
 * (distance, then index), with many ties: cities on a coarse lattice,
 * repeated points, a line, under each plane metric. */
static void t_ga_neighbours(void **state)
{
    (void)state;
    enum { N = 1500 };
    static double xy[2 * N];
    uint64_t r = 12345;
    for (int i = 0; i < N; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        int kind = i % 3;
        xy[2 * i] = kind == 2 ? (double)(i % 97) * 3.0 : (double)((r >> 33) % 40) * 10.0;
        xy[2 * i + 1] = kind == 2 ? 5.0 : (double)((r >> 45) % 40) * 10.0;
    }
    const int metrics[] = {TSP_EUC_2D, TSP_CEIL_2D, TSP_ATT};
    for (size_t mi = 0; mi < sizeof metrics / sizeof metrics[0]; mi++) {
        ga_params p;
        ga_params_default(&p, N);
        ga_world *w = ga_world_new(N, metrics[mi], xy, &p);
        assert_non_null(w);
        for (int a = 0; a < N; a++) {
            int32_t nk = 0;
            const int32_t *nb = ga_world_neighbours(w, a, &nk);
            int32_t best[16] = {0};
            int64_t bd[16] = {0};
            int have = 0;
            for (int b = 0; b < N; b++) {
                if (b == a)
                    continue;
                int64_t d =
                    tsp_dist_xy(metrics[mi], xy[2 * a], xy[2 * a + 1], xy[2 * b], xy[2 * b + 1]);
                if (have == nk && d >= bd[nk - 1])
                    continue;
                int k = have < nk ? have++ : nk - 1;
                for (; k > 0 && bd[k - 1] > d; k--) {
                    best[k] = best[k - 1];
                    bd[k] = bd[k - 1];
                }
                best[k] = b;
                bd[k] = d;
            }
            for (int k = 0; k < nk; k++)
                if (nb[k] != best[k])
                    fail_msg("metric %d, city %d: neighbour %d is %d, not %d", metrics[mi], a, k,
                             nb[k], best[k]);
        }
        ga_world_destroy(&w);
    }
}

static void t_ga_berlin52(void **state)
{
    (void)state;
    tsp_instance inst;
    s_load_data("berlin52", &inst);
    ga_params p;
    ga_params_default(&p, inst.n);
    p.gens = 20;
    int32_t best[52];
    int64_t l = s_ga_run(&inst, &p, 4, 5, 3, best);
    assert_int_equal(l, 7542);
    assert_int_equal(tsp_tour_length(&inst, best), 7542);
    /* the same run again gives the same tour */
    int32_t again[52];
    assert_int_equal(s_ga_run(&inst, &p, 4, 5, 3, again), 7542);
    assert_memory_equal(best, again, sizeof best);
    tsp_free(&inst);
}

static void t_ga_geo_att(void **state)
{
    (void)state;
    /* small GEO (distance matrix) and ATT instances: valid tours whose
     * lengths tsplib recomputes */
    tsp_instance inst;
    char err[512];
    const char *p = s_file("geo8.tsp", "NAME: g8\nTYPE: TSP\nDIMENSION: 8\nEDGE_WEIGHT_TYPE: GEO\n"
                                       "NODE_COORD_SECTION\n1 38.24 20.42\n2 39.57 26.15\n"
                                       "3 40.56 25.32\n4 36.26 23.12\n5 33.48 10.54\n"
                                       "6 37.56 12.19\n7 38.42 13.11\n8 37.52 20.44\n");
    if (tsp_load(p, &inst, err, sizeof err) != 0)
        fail_msg("%s", err);
    ga_params gp;
    ga_params_default(&gp, inst.n);
    gp.gens = 3;
    int32_t best[8];
    int64_t l = s_ga_run(&inst, &gp, 2, 2, 1, best);
    assert_int_equal(tsp_tour_check(&inst, best, err, sizeof err), 0);
    assert_int_equal(tsp_tour_length(&inst, best), l);
    tsp_free(&inst);
    assert_int_equal(tsp_random(300, 4, &inst), 0);
    inst.metric = TSP_ATT;
    ga_params_default(&gp, inst.n);
    gp.gens = 2;
    int32_t *b = malloc(300 * sizeof *b);
    l = s_ga_run(&inst, &gp, 2, 2, 1, b);
    assert_int_equal(tsp_tour_check(&inst, b, err, sizeof err), 0);
    assert_int_equal(tsp_tour_length(&inst, b), l);
    free(b);
    tsp_free(&inst);
}

/* ------------------------------------------------------------------ */

/* The check-tour mode: 0 if the TOUR file is a valid tour of the TSPLIB
 * instance with the length given, else 1 with the reason. */
static int s_check_tour(const char *tsp, const char *tourfile, const char *len)
{
    tsp_instance inst;
    char err[512];
    if (tsp_load(tsp, &inst, err, sizeof err) != 0) {
        fprintf(stderr, "check-tour: %s\n", err);
        return 1;
    }
    int32_t *tour = malloc((size_t)inst.n * sizeof *tour);
    int rc = 1;
    if (tsp_tour_read(&inst, tourfile, tour, err, sizeof err) != 0)
        fprintf(stderr, "check-tour: %s\n", err);
    else if (tsp_tour_length(&inst, tour) != strtoll(len, NULL, 10))
        fprintf(stderr, "check-tour: the tour's length is %lld, not %s\n",
                (long long)tsp_tour_length(&inst, tour), len);
    else
        rc = 0;
    free(tour);
    tsp_free(&inst);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "check-tour") == 0)
        return s_check_tour(argv[2], argv[3], argv[4]);
    snprintf(s_dir, sizeof s_dir, "/tmp/test_tsp.XXXXXX");
    if (!mkdtemp(s_dir)) {
        perror("mkdtemp");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_data_files),
        cmocka_unit_test(t_bad_inputs),
        cmocka_unit_test(t_formats_accepted),
        cmocka_unit_test(t_distances),
        cmocka_unit_test(t_tour_files),
        cmocka_unit_test(t_svg),
        cmocka_unit_test(t_cli),
        cmocka_unit_test(t_ga_determinism),
        cmocka_unit_test(t_ga_check),
        cmocka_unit_test(t_ga_neighbours),
        cmocka_unit_test(t_ga_berlin52),
        cmocka_unit_test(t_ga_geo_att),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "test_tsp: could not remove %s\n", s_dir);
    return rc;
}
