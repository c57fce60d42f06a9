/* tsplib.c - the TSP instances of the sample (tsplib.h): the TSPLIB
 * reader with errors naming file, line and field, TSPLIB's published
 * optima, random instances, tours checked, written and read in TSPLIB's
 * TOUR format, and SVG pictures of tours.
 */
#include "tsplib.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsp_dist.h"
#include "tsp_job.h"

/* ------------------------------------------------------------------ */
/* Text helpers                                                        */
/* ------------------------------------------------------------------ */

/* Formats an error into err[errlen] (if any) and returns -1. */
static int s_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int s_fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Reads the whole file at path into a NUL-terminated buffer the caller
 * frees; NULL with the reason in err when it cannot. */
static char *s_slurp(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        s_fail(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        char *more = realloc(buf, 2 * cap + 1);
        if (!more) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = more;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf) {
        s_fail(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    if (bad) {
        free(buf);
        s_fail(err, errlen, "%s: read error", path);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Cuts the next line out of *cur (ending it with NUL, dropping CR and
 * surrounding blanks); NULL at the end of the text. */
static char *s_line(char **cur)
{
    char *s = *cur;
    if (!s || !*s)
        return NULL;
    char *e = strchr(s, '\n');
    *cur = e ? e + 1 : s + strlen(s);
    if (e)
        *e = '\0';
    while (*s && isspace((unsigned char)*s))
        s++;
    size_t l = strlen(s);
    while (l > 0 && isspace((unsigned char)s[l - 1]))
        s[--l] = '\0';
    return s;
}

/* Splits a header line "KEY: value" / "KEY : value" / "KEY" into its key
 * (upper-cased in place) and value (NULL when there is no colon). */
static void s_split(char *line, char **key, char **value)
{
    char *colon = strchr(line, ':');
    *value = NULL;
    if (colon) {
        *colon = '\0';
        char *v = colon + 1;
        while (*v && isspace((unsigned char)*v))
            v++;
        *value = v;
    }
    size_t l = strlen(line);
    while (l > 0 && isspace((unsigned char)line[l - 1]))
        line[--l] = '\0';
    for (char *p = line; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    *key = line;
}

/* Parses a whole decimal integer; 0 or -1. */
static int s_int(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || errno)
        return -1;
    while (*end && isspace((unsigned char)*end))
        end++;
    if (*end)
        return -1;
    *out = v;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Known optima                                                        */
/* ------------------------------------------------------------------ */

static const struct {
    const char *name;
    int64_t opt;
} s_optima[] = {
    {"a280", 2579},      {"att48", 10628},    {"att532", 27686},  {"berlin52", 7542},
    {"ch130", 6110},     {"ch150", 6528},     {"d198", 15780},    {"eil51", 426},
    {"eil76", 538},      {"eil101", 629},     {"gr96", 55209},    {"kroA100", 21282},
    {"kroB100", 22141},  {"kroC100", 20749},  {"kroD100", 21294}, {"kroE100", 22068},
    {"kroA150", 26524},  {"kroA200", 29368},  {"lin105", 14379},  {"lin318", 42029},
    {"pcb442", 50778},   {"pr76", 108159},    {"pr1002", 259045}, {"rat99", 1211},
    {"rat783", 8806},    {"st70", 675},       {"tsp225", 3916},   {"u1060", 224094},
    {"ulysses16", 6859}, {"ulysses22", 7013}, {"rd100", 7910},    {"pr2392", 378032},
};

/* TSPLIB's published optimum of the instance called name; -1 if unknown. */
static int64_t s_known_optimum(const char *name)
{
    for (size_t i = 0; i < sizeof s_optima / sizeof s_optima[0]; i++)
        if (strcmp(s_optima[i].name, name) == 0)
            return s_optima[i].opt;
    return -1;
}

/* ------------------------------------------------------------------ */
/* Instances                                                           */
/* ------------------------------------------------------------------ */

/* Header keywords read and ignored: they do not change the instance. */
static const char *const s_harmless[] = {"DISPLAY_DATA_TYPE", "EDGE_WEIGHT_FORMAT",
                                         "EDGE_DATA_FORMAT", "NODE_COORD_TYPE"};
/* Sections the sample cannot read. */
static const char *const s_sections[] = {
    "EDGE_WEIGHT_SECTION", "DISPLAY_DATA_SECTION", "FIXED_EDGES_SECTION", "EDGE_DATA_SECTION",
    "DEPOT_SECTION",       "DEMAND_SECTION",       "TOUR_SECTION"};

static int s_in(const char *const *list, size_t count, const char *key)
{
    for (size_t i = 0; i < count; i++)
        if (strcmp(list[i], key) == 0)
            return 1;
    return 0;
}

static int s_metric(const char *v)
{
    if (strcmp(v, "EUC_2D") == 0)
        return TSP_EUC_2D;
    if (strcmp(v, "CEIL_2D") == 0)
        return TSP_CEIL_2D;
    if (strcmp(v, "ATT") == 0)
        return TSP_ATT;
    if (strcmp(v, "GEO") == 0)
        return TSP_GEO;
    return 0;
}

/* Fills inst->geo from inst->xy for a GEO instance; 0 or -1 (memory). */
static int s_geo_prepare(tsp_instance *inst)
{
    if (inst->metric != TSP_GEO)
        return 0;
    inst->geo = malloc(2 * (size_t)inst->n * sizeof *inst->geo);
    if (!inst->geo)
        return -1;
    for (size_t i = 0; i < 2 * (size_t)inst->n; i++)
        inst->geo[i] = tsp_geo_radians(inst->xy[i]);
    return 0;
}

/* Reads one node line "i x y" of NODE_COORD_SECTION into inst, marking i
 * in seen; 0 or -1 with the error. */
static int s_node(const char *path, int ln, char *line, tsp_instance *inst, uint8_t *seen,
                  char *err, size_t errlen)
{
    char *p = line, *end;
    errno = 0;
    long long id = strtoll(p, &end, 10);
    if (end == p || (*end && !isspace((unsigned char)*end)))
        return s_fail(err, errlen, "%s:%d: NODE_COORD_SECTION: node number: '%s' is not a number",
                      path, ln, line);
    if (id < 1 || id > inst->n)
        return s_fail(err, errlen,
                      "%s:%d: NODE_COORD_SECTION: node number %lld is out of range (1 to %d)", path,
                      ln, id, (int)inst->n);
    if (seen[id - 1])
        return s_fail(err, errlen, "%s:%d: NODE_COORD_SECTION: node %lld is repeated", path, ln,
                      id);
    double v[2];
    for (int k = 0; k < 2; k++) {
        p = end;
        while (*p && isspace((unsigned char)*p))
            p++;
        if (!*p)
            return s_fail(err, errlen,
                          "%s:%d: NODE_COORD_SECTION: node %lld: %s coordinate is missing", path,
                          ln, id, k ? "y" : "x");
        errno = 0;
        v[k] = strtod(p, &end);
        if (end == p || (*end && !isspace((unsigned char)*end)) || errno || !isfinite(v[k])) {
            char tok[32];
            size_t l = strcspn(p, " \t");
            snprintf(tok, sizeof tok, "%.*s", (int)(l < 31 ? l : 31), p);
            return s_fail(
                err, errlen,
                "%s:%d: NODE_COORD_SECTION: node %lld: %s coordinate '%s' is not a number", path,
                ln, id, k ? "y" : "x", tok);
        }
    }
    while (*end && isspace((unsigned char)*end))
        end++;
    if (*end)
        return s_fail(err, errlen,
                      "%s:%d: NODE_COORD_SECTION: node %lld: unexpected '%s' after the coordinates",
                      path, ln, id, end);
    seen[id - 1] = 1;
    inst->xy[2 * (id - 1)] = v[0];
    inst->xy[2 * (id - 1) + 1] = v[1];
    return 0;
}

/* The header keyword of line ln (key, value) applied to inst; 0, 1 for
 * NODE_COORD_SECTION, 2 for EOF, or -1 with the error. */
static int s_keyword(const char *path, int ln, const char *key, const char *value,
                     tsp_instance *inst, char *err, size_t errlen)
{
    if (strcmp(key, "NODE_COORD_SECTION") == 0)
        return 1;
    if (strcmp(key, "EOF") == 0)
        return 2;
    if (s_in(s_sections, sizeof s_sections / sizeof s_sections[0], key))
        return s_fail(err, errlen, "%s:%d: %s is not supported (only NODE_COORD_SECTION)", path, ln,
                      key);
    if (!value)
        return s_fail(err, errlen, "%s:%d: %s: unknown keyword (expected KEY: value)", path, ln,
                      key);
    if (strcmp(key, "NAME") == 0) {
        snprintf(inst->name, sizeof inst->name, "%s", value);
    } else if (strcmp(key, "COMMENT") == 0) {
        if (!inst->comment[0])
            snprintf(inst->comment, sizeof inst->comment, "%s", value);
    } else if (strcmp(key, "TYPE") == 0) {
        if (strcmp(value, "TSP") != 0)
            return s_fail(err, errlen, "%s:%d: TYPE: %s is not supported (only TSP)", path, ln,
                          value);
    } else if (strcmp(key, "DIMENSION") == 0) {
        int64_t d;
        if (s_int(value, &d) != 0)
            return s_fail(err, errlen, "%s:%d: DIMENSION: '%s' is not a whole number", path, ln,
                          value);
        if (d < 5 || d > TSP_CITIES_MAX)
            return s_fail(err, errlen, "%s:%d: DIMENSION: %" PRId64 " is out of range (5 to %d)",
                          path, ln, d, TSP_CITIES_MAX);
        if (inst->n && inst->n != d)
            return s_fail(err, errlen, "%s:%d: DIMENSION: given twice", path, ln);
        inst->n = (int32_t)d;
    } else if (strcmp(key, "EDGE_WEIGHT_TYPE") == 0) {
        inst->metric = s_metric(value);
        if (!inst->metric)
            return s_fail(
                err, errlen,
                "%s:%d: EDGE_WEIGHT_TYPE: %s is not supported (EUC_2D, CEIL_2D, ATT, GEO)", path,
                ln, value);
    } else if (strcmp(key, "OPTIMUM") == 0) {
        int64_t o;
        if (s_int(value, &o) != 0 || o <= 0)
            return s_fail(err, errlen, "%s:%d: OPTIMUM: '%s' is not a positive whole number", path,
                          ln, value);
        inst->optimum = o;
    } else if (strcmp(key, "NODE_COORD_TYPE") == 0 && strcmp(value, "TWOD_COORDS") != 0) {
        return s_fail(err, errlen, "%s:%d: NODE_COORD_TYPE: %s is not supported (TWOD_COORDS)",
                      path, ln, value);
    } else if (!s_in(s_harmless, sizeof s_harmless / sizeof s_harmless[0], key)) {
        return s_fail(err, errlen, "%s:%d: %s: unknown keyword", path, ln, key);
    }
    return 0;
}

/* The reader's body over the text of the file; see tsp_load. */
static int s_parse(const char *path, char *text, tsp_instance *inst, char *err, size_t errlen)
{
    char *cur = text, *line;
    int ln = 0, nodes = 0, in_nodes = 0, saw_coords = 0, last = 0;
    uint8_t *seen = NULL;
    int rc = 0;
    while (rc == 0 && (line = s_line(&cur)) != NULL) {
        ln++;
        last = ln;
        if (!*line)
            continue;
        if (in_nodes && nodes < inst->n &&
            (isdigit((unsigned char)*line) || *line == '+' || *line == '-' || *line == '.')) {
            rc = s_node(path, ln, line, inst, seen, err, errlen);
            nodes++;
            in_nodes = nodes < inst->n;
            continue;
        }
        if (in_nodes) {
            rc =
                s_fail(err, errlen,
                       "%s:%d: NODE_COORD_SECTION: %d nodes, but DIMENSION says %d (found '%.20s')",
                       path, ln, nodes, (int)inst->n, line);
            break;
        }
        if (saw_coords && isdigit((unsigned char)*line)) {
            rc = s_fail(err, errlen, "%s:%d: NODE_COORD_SECTION: more nodes than DIMENSION (%d)",
                        path, ln, (int)inst->n);
            break;
        }
        char *key, *value;
        s_split(line, &key, &value);
        int k = s_keyword(path, ln, key, value, inst, err, errlen);
        if (k < 0) {
            rc = -1;
        } else if (k == 2) {
            break;
        } else if (k == 1) {
            if (saw_coords)
                rc = s_fail(err, errlen, "%s:%d: NODE_COORD_SECTION: given twice", path, ln);
            else if (!inst->n)
                rc = s_fail(err, errlen, "%s:%d: NODE_COORD_SECTION: comes before DIMENSION", path,
                            ln);
            else if (!(inst->xy = calloc(2 * (size_t)inst->n, sizeof *inst->xy)) ||
                     !(seen = calloc((size_t)inst->n, 1)))
                rc = s_fail(err, errlen, "%s: out of memory", path);
            saw_coords = 1;
            in_nodes = 1;
        }
    }
    free(seen);
    if (rc != 0)
        return rc;
    if (ln == 0 || (!saw_coords && !inst->n && !inst->metric && !inst->name[0]))
        return s_fail(err, errlen, "%s: the file is empty", path);
    if (!inst->n)
        return s_fail(err, errlen, "%s: DIMENSION is missing", path);
    if (!inst->metric)
        return s_fail(err, errlen, "%s: EDGE_WEIGHT_TYPE is missing", path);
    if (!saw_coords)
        return s_fail(err, errlen, "%s: NODE_COORD_SECTION is missing", path);
    if (in_nodes)
        return s_fail(err, errlen,
                      "%s:%d: NODE_COORD_SECTION: %d nodes, but DIMENSION says %d (the file ends)",
                      path, last, nodes, (int)inst->n);
    return 0;
}

/* Refuses a coordinate whose distances, or a tour's length, would not
 * fit an int64_t: beyond +-TSP_COORD_MAX in the plane, beyond +-360
 * (DDD.MM degrees) for GEO. 0, or -1 with the error naming the node. */
static int s_bounds(const char *path, const tsp_instance *inst, char *err, size_t errlen)
{
    double max = inst->metric == TSP_GEO ? 360.0 : TSP_COORD_MAX;
    for (int32_t i = 0; i < inst->n; i++)
        for (int k = 0; k < 2; k++)
            if (fabs(inst->xy[2 * i + k]) > max)
                return s_fail(err, errlen,
                              "%s: NODE_COORD_SECTION: node %d: %s coordinate %g is beyond "
                              "+-%g%s",
                              path, (int)i + 1, k ? "y" : "x", inst->xy[2 * i + k], max,
                              inst->metric == TSP_GEO ? " (GEO: degrees.minutes)" : "");
    return 0;
}

int tsp_load(const char *path, tsp_instance *inst, char *err, size_t errlen)
{
    memset(inst, 0, sizeof *inst);
    inst->optimum = -1;
    size_t len = 0;
    char *text = s_slurp(path, &len, err, errlen);
    if (!text)
        return -1;
    int rc = s_parse(path, text, inst, err, errlen);
    free(text);
    if (rc == 0)
        rc = s_bounds(path, inst, err, errlen);
    if (rc == 0 && s_geo_prepare(inst) != 0)
        rc = s_fail(err, errlen, "%s: out of memory", path);
    if (rc != 0) {
        tsp_free(inst);
        return -1;
    }
    if (!inst->name[0]) {
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        size_t l = strcspn(base, ".");
        snprintf(inst->name, sizeof inst->name, "%.*s", (int)(l < 63 ? l : 63), base);
    }
    if (inst->optimum < 0)
        inst->optimum = s_known_optimum(inst->name);
    return 0;
}

int tsp_random(int32_t n, uint64_t seed, tsp_instance *inst)
{
    memset(inst, 0, sizeof *inst);
    inst->optimum = -1;
    if (n < 5 || n > TSP_CITIES_MAX)
        return -1;
    inst->n = n;
    inst->metric = TSP_EUC_2D;
    snprintf(inst->name, sizeof inst->name, "random-%d-%" PRIu64, (int)n, seed);
    snprintf(inst->comment, sizeof inst->comment,
             "%d cities uniform in a square of side 1000000, seed %" PRIu64, (int)n, seed);
    inst->xy = malloc(2 * (size_t)n * sizeof *inst->xy);
    if (!inst->xy)
        return -1;
    uint64_t x = seed;
    for (size_t i = 0; i < 2 * (size_t)n; i++) {
        uint64_t z = (x += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        inst->xy[i] = (double)(z % 1000000u);
    }
    return 0;
}

void tsp_free(tsp_instance *inst)
{
    if (!inst)
        return;
    free(inst->xy);
    free(inst->geo);
    memset(inst, 0, sizeof *inst);
    inst->optimum = -1;
}

const double *tsp_coords(const tsp_instance *inst)
{
    return inst->metric == TSP_GEO ? inst->geo : inst->xy;
}

int64_t tsp_tour_length(const tsp_instance *inst, const int32_t *tour)
{
    const double *xy = tsp_coords(inst);
    int32_t n = inst->n;
    int64_t len = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t a = tour[i], b = tour[i + 1 == n ? 0 : i + 1];
        len += tsp_dist_xy(inst->metric, xy[2 * a], xy[2 * a + 1], xy[2 * b], xy[2 * b + 1]);
    }
    return len;
}

int tsp_tour_check(const tsp_instance *inst, const int32_t *tour, char *err, size_t errlen)
{
    int32_t n = inst->n;
    uint8_t *seen = calloc((size_t)n, 1);
    if (!seen)
        return s_fail(err, errlen, "out of memory checking the tour");
    int rc = 0;
    for (int32_t i = 0; i < n && rc == 0; i++) {
        int32_t c = tour[i];
        if (c < 0 || c >= n)
            rc = s_fail(err, errlen, "tour position %d: city %d is out of range (0 to %d)", (int)i,
                        (int)c, (int)n - 1);
        else if (seen[c])
            rc = s_fail(err, errlen, "tour position %d: city %d is repeated", (int)i, (int)c);
        else
            seen[c] = 1;
    }
    free(seen);
    return rc;
}

/* ------------------------------------------------------------------ */
/* TOUR files                                                          */
/* ------------------------------------------------------------------ */

/* Closes f after writing; 0, or -1 naming path when anything failed. */
static int s_close(FILE *f, const char *path, char *err, size_t errlen)
{
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return s_fail(err, errlen, "%s: write error: %s", path, strerror(errno));
    return 0;
}

int tsp_tour_write(const tsp_instance *inst, const int32_t *tour, int64_t length, const char *path,
                   char *err, size_t errlen)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return s_fail(err, errlen, "%s: %s", path, strerror(errno));
    fprintf(f, "NAME : %s.tour\n", inst->name);
    fprintf(f, "COMMENT : Length %" PRId64 "\n", length);
    fprintf(f, "TYPE : TOUR\n");
    fprintf(f, "DIMENSION : %d\n", (int)inst->n);
    fprintf(f, "TOUR_SECTION\n");
    for (int32_t i = 0; i < inst->n; i++)
        fprintf(f, "%d\n", (int)tour[i] + 1);
    fprintf(f, "-1\nEOF\n");
    return s_close(f, path, err, errlen);
}

/* Reads the TOUR_SECTION ids of the text at cur into tour; see
 * tsp_tour_read. */
static int s_tour_ids(const char *path, char *cur, int ln, const tsp_instance *inst, int32_t *tour,
                      uint8_t *seen, char *err, size_t errlen)
{
    int32_t count = 0;
    char *line;
    while ((line = s_line(&cur)) != NULL) {
        ln++;
        char *p = line;
        while (*p) {
            char *end;
            errno = 0;
            long long id = strtoll(p, &end, 10);
            if (end == p || (*end && !isspace((unsigned char)*end)))
                return s_fail(err, errlen, "%s:%d: TOUR_SECTION: '%s' is not a city number", path,
                              ln, p);
            if (id == -1) {
                if (count != inst->n)
                    return s_fail(err, errlen,
                                  "%s:%d: TOUR_SECTION: %d cities, but the instance has %d", path,
                                  ln, (int)count, (int)inst->n);
                return 0;
            }
            if (id < 1 || id > inst->n)
                return s_fail(err, errlen,
                              "%s:%d: TOUR_SECTION: city %lld is out of range (1 to %d)", path, ln,
                              id, (int)inst->n);
            if (seen[id - 1])
                return s_fail(err, errlen, "%s:%d: TOUR_SECTION: city %lld is repeated", path, ln,
                              id);
            seen[id - 1] = 1;
            tour[count++] = (int32_t)(id - 1);
            p = end;
            while (*p && isspace((unsigned char)*p))
                p++;
        }
    }
    return s_fail(err, errlen, "%s:%d: TOUR_SECTION: the file ends before -1", path, ln);
}

int tsp_tour_read(const tsp_instance *inst, const char *path, int32_t *tour, char *err,
                  size_t errlen)
{
    size_t len;
    char *text = s_slurp(path, &len, err, errlen);
    if (!text)
        return -1;
    uint8_t *seen = calloc((size_t)inst->n, 1);
    char *cur = text, *line;
    int ln = 0, rc = 1;
    if (!seen)
        rc = s_fail(err, errlen, "%s: out of memory", path);
    while (rc == 1 && (line = s_line(&cur)) != NULL) {
        ln++;
        if (!*line)
            continue;
        char *key, *value;
        s_split(line, &key, &value);
        int64_t d;
        if (strcmp(key, "TOUR_SECTION") == 0)
            rc = s_tour_ids(path, cur, ln, inst, tour, seen, err, errlen);
        else if (strcmp(key, "TYPE") == 0 && (!value || strcmp(value, "TOUR") != 0))
            rc = s_fail(err, errlen, "%s:%d: TYPE: '%s' is not TOUR", path, ln, value ? value : "");
        else if (strcmp(key, "DIMENSION") == 0 && (!value || s_int(value, &d) != 0 || d != inst->n))
            rc = s_fail(err, errlen, "%s:%d: DIMENSION: '%s' is not the instance's %d", path, ln,
                        value ? value : "", (int)inst->n);
        else if (strcmp(key, "EOF") == 0 || !value)
            rc = s_fail(err, errlen, "%s:%d: %s: unexpected before TOUR_SECTION", path, ln, key);
    }
    if (rc == 1)
        rc = s_fail(err, errlen, "%s: TOUR_SECTION is missing", path);
    free(seen);
    free(text);
    return rc;
}

/* ------------------------------------------------------------------ */
/* SVG pictures                                                        */
/* ------------------------------------------------------------------ */

/* Writes s to f with XML's special characters escaped. */
static void s_xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\t')
                fputc(*s, f);
        }
    }
}

int tsp_svg_write(const tsp_instance *inst, const int32_t *tour, int64_t length, const char *path,
                  char *err, size_t errlen)
{
    int32_t n = inst->n;
    const double *xy = inst->xy;
    int geo = inst->metric == TSP_GEO; /* latitude, longitude: plot (lon, lat) */
    double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
    for (int32_t i = 0; i < n; i++) {
        double x = geo ? xy[2 * i + 1] : xy[2 * i], y = geo ? xy[2 * i] : xy[2 * i + 1];
        x0 = fmin(x0, x);
        x1 = fmax(x1, x);
        y0 = fmin(y0, y);
        y1 = fmax(y1, y);
    }
    double span = fmax(x1 - x0, y1 - y0);
    if (!(span > 0))
        span = 1;
    const double side = 1000.0, margin = 20.0, head = 40.0;
    double scale = side / span;
    double wpx = (x1 - x0) * scale + 2 * margin, hpx = (y1 - y0) * scale + 2 * margin + head;
    double r = n > 2000 ? 1.0 : n > 500 ? 1.8 : 3.0;
    FILE *f = fopen(path, "w");
    if (!f)
        return s_fail(err, errlen, "%s: %s", path, strerror(errno));
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
            "height=\"%.0f\">\n",
            wpx, hpx, wpx, hpx);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    fprintf(f, "<text x=\"%.0f\" y=\"28\" font-family=\"sans-serif\" font-size=\"20\">", margin);
    s_xml_text(f, inst->name);
    fprintf(f, ": %d cities, length %" PRId64, (int)n, length);
    if (inst->optimum > 0)
        fprintf(f, ", gap %.2f%% to the optimum %" PRId64,
                100.0 * (double)(length - inst->optimum) / (double)inst->optimum, inst->optimum);
    fprintf(f, "</text>\n");
    /* y grows downwards in SVG: flip it */
    fprintf(f,
            "<polygon fill=\"none\" stroke=\"#1f5fa8\" stroke-width=\"%.1f\" "
            "stroke-linejoin=\"round\" points=\"",
            n > 500 ? 1.0 : 1.5);
    for (int32_t i = 0; i < n; i++) {
        int32_t c = tour[i];
        double x = geo ? xy[2 * c + 1] : xy[2 * c], y = geo ? xy[2 * c] : xy[2 * c + 1];
        fprintf(f, "%s%.1f,%.1f", i ? " " : "", margin + (x - x0) * scale,
                head + margin + (y1 - y) * scale);
    }
    fprintf(f, "\"/>\n<g fill=\"#c0392b\">\n");
    for (int32_t c = 0; c < n; c++) {
        double x = geo ? xy[2 * c + 1] : xy[2 * c], y = geo ? xy[2 * c] : xy[2 * c + 1];
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\"/>\n", margin + (x - x0) * scale,
                head + margin + (y1 - y) * scale, r);
    }
    fprintf(f, "</g>\n</svg>\n");
    return s_close(f, path, err, errlen);
}
