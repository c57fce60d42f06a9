/* tsp_dist.h - TSPLIB's edge weights (EUC_2D, CEIL_2D, ATT, GEO) with its
 * rounding rules, shared by the instance reader (tsplib.c), the genetic
 * algorithm (ga.c, also task code) and every program of the sample. Header
 * only: each function is small and on the algorithm's hot path.
 *
 * Coordinates are kept as TSPLIB gives them, except GEO: tsp_geo_prepare
 * turns each (latitude, longitude) in TSPLIB's DDD.MM notation into
 * radians once, and tsp_dist then reads those.
 */
#ifndef TSP_DIST_H
#define TSP_DIST_H

#include <math.h>
#include <stdint.h>

/* The edge weight types the sample reads (TSPLIB EDGE_WEIGHT_TYPE). */
typedef enum tsp_metric {
    TSP_EUC_2D = 1, /* Euclidean, rounded to the nearest integer */
    TSP_CEIL_2D,    /* Euclidean, rounded up */
    TSP_ATT,        /* pseudo-Euclidean (att48, att532) */
    TSP_GEO         /* great circle on TSPLIB's idealised sphere */
} tsp_metric;

/* Converts one GEO coordinate (DDD.MM: degrees and minutes) to radians,
 * as TSPLIB's reference code does (PI = 3.141592, truncation). */
static inline double tsp_geo_radians(double v)
{
    const double pi = 3.141592;
    double deg = (double)(int64_t)v;
    double min = v - deg;
    return pi * (deg + 5.0 * min / 3.0) / 180.0;
}

/* The TSPLIB weight of the edge between (xi, yi) and (xj, yj) under metric
 * m; for TSP_GEO the coordinates are radians (tsp_geo_radians). */
static inline int64_t tsp_dist_xy(int m, double xi, double yi, double xj, double yj)
{
    double dx = xi - xj, dy = yi - yj;
    switch (m) {
    case TSP_CEIL_2D:
        return (int64_t)ceil(sqrt(dx * dx + dy * dy));
    case TSP_ATT: {
        double r = sqrt((dx * dx + dy * dy) / 10.0);
        int64_t t = (int64_t)(r + 0.5);
        return (double)t < r ? t + 1 : t;
    }
    case TSP_GEO: {
        const double rrr = 6378.388;
        double q1 = cos(yi - yj), q2 = cos(xi - xj), q3 = cos(xi + xj);
        return (int64_t)(rrr * acos(0.5 * ((1.0 + q1) * q2 - (1.0 - q1) * q3)) + 1.0);
    }
    default:
        return (int64_t)(sqrt(dx * dx + dy * dy) + 0.5);
    }
}

#endif
