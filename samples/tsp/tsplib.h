/* tsplib.h - TSP instances for the sample (tsplib.c): TSPLIB files read
 * with errors that name the line and the field, random Euclidean
 * instances, known optima, tours checked and written in TSPLIB's TOUR
 * format, and pictures of tours as SVG. Plain C; no Leverage.
 */
#ifndef TSP_TSPLIB_H
#define TSP_TSPLIB_H

#include <stddef.h>
#include <stdint.h>

/* An instance: n cities and how far apart they are. */
typedef struct tsp_instance {
    char name[64]; /* NAME, or "random-N-SEED" */
    char comment[128];
    int32_t n;       /* DIMENSION */
    int32_t metric;  /* tsp_metric (tsp_dist.h) */
    int64_t optimum; /* known optimal length; -1 when unknown */
    double *xy;      /* n (x, y) pairs as written; malloc'd */
    double *geo;     /* GEO only: n (latitude, longitude) in radians */
} tsp_instance;

/* The largest coordinate a planar instance may have: its distances, and
 * a tour's length, then fit an int64_t (GEO's are bounded by +-360). */
#define TSP_COORD_MAX 1e9

/* Reads the TSPLIB file at path into *inst (TYPE TSP, EDGE_WEIGHT_TYPE
 * EUC_2D, CEIL_2D, ATT or GEO, NODE_COORD_SECTION; headers as `KEY: v` or
 * `KEY : v`; an OPTIMUM header line is taken as the known optimum, else
 * the built-in table of TSPLIB's published optima by NAME). Returns 0, or
 * -1 with a sentence in err[errlen] naming the file, the line and the
 * field at fault ("st70.tsp:5: EDGE_WEIGHT_TYPE: EXPLICIT is not
 * supported (EUC_2D, CEIL_2D, ATT, GEO)"; a coordinate beyond the
 * bounds above names its node); *inst is then empty. */
int tsp_load(const char *path, tsp_instance *inst, char *err, size_t errlen);

/* Makes a random EUC_2D instance of n cities (n >= 5) uniform in a square
 * of side 1,000,000, from seed; 0, or -1 when memory runs out. */
int tsp_random(int32_t n, uint64_t seed, tsp_instance *inst);

/* Frees what *inst holds and empties it; accepts an empty instance. */
void tsp_free(tsp_instance *inst);

/* The coordinates the algorithm takes: the (x, y) pairs, or for GEO the
 * radians. Owned by inst. */
const double *tsp_coords(const tsp_instance *inst);

/* Length of the closed tour (n cities from 0) in inst. */
int64_t tsp_tour_length(const tsp_instance *inst, const int32_t *tour);

/* Returns 0 if tour[n] is a permutation of 0..n-1, else -1 with the first
 * fault in err[errlen]. */
int tsp_tour_check(const tsp_instance *inst, const int32_t *tour, char *err, size_t errlen);

/* Writes tour to path in TSPLIB's TOUR format (NAME, COMMENT with the
 * length, TYPE : TOUR, DIMENSION, TOUR_SECTION, cities from 1, -1, EOF).
 * 0, or -1 with the reason in err[errlen]. */
int tsp_tour_write(const tsp_instance *inst, const int32_t *tour, int64_t length, const char *path,
                   char *err, size_t errlen);

/* Reads a TOUR file of inst into tour[n] (cities from 0); 0 or -1 with
 * the file, line and field at fault in err[errlen]. */
int tsp_tour_read(const tsp_instance *inst, const char *path, int32_t *tour, char *err,
                  size_t errlen);

/* Writes an SVG picture of tour (the cities and the closed path, scaled to
 * fit, with the instance's name, the length and the gap as a title) to
 * path; 0, or -1 with the reason in err[errlen]. */
int tsp_svg_write(const tsp_instance *inst, const int32_t *tour, int64_t length, const char *path,
                  char *err, size_t errlen);

#endif
