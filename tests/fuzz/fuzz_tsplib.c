/* fuzz_tsplib.c - the TSP sample's TSPLIB reader on any bytes
 * (samples/tsp/tsplib.h): an instance (tsp_load) and a tour against a
 * known instance (tsp_tour_read). A refusal leaves the instance empty and
 * names its cause; a taken instance has only finite coordinates within
 * its bounds, and the length of a tour through it is computed (UBSan
 * sees any conversion that would not fit); a taken tour visits every
 * city once. Input: u8 which (even: instance,
 * odd: tour), then the file's bytes (written to a memfd, read by path).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "tsplib.h"

/* A path naming a memfd holding p[n]; its fd in *fd. */
static const char *s_file(const uint8_t *p, size_t n, int *fd, char *path, size_t cap)
{
    *fd = memfd_create("fuzz", 0);
    if (*fd < 0 || (n && write(*fd, p, n) != (ssize_t)n))
        fuzz_fail("memfd", "cannot hold the input");
    snprintf(path, cap, "/proc/self/fd/%d", *fd);
    return path;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static tsp_instance known;
    static int init;
    if (!init) {
        if (tsp_random(52, 7, &known))
            fuzz_fail("tsp_random", "no instance");
        init = 1;
    }
    if (!size)
        return 0;
    int fd;
    char path[64], err[256];
    s_file(data + 1, size - 1, &fd, path, sizeof path);
    if (!(data[0] & 1)) {
        tsp_instance inst;
        memset(&inst, 0, sizeof inst);
        err[0] = 0;
        if (tsp_load(path, &inst, err, sizeof err)) {
            if (!err[0])
                fuzz_fail("tsp_load", "refused without a reason");
        } else {
            const double *xy = tsp_coords(&inst);
            for (int32_t i = 0; i < 2 * inst.n; i++)
                if (!isfinite(xy[i]) || fabs(inst.xy[i]) > TSP_COORD_MAX)
                    fuzz_fail("tsp_load", "a coordinate that is not finite or not bounded");
            int32_t *tour = malloc((size_t)inst.n * sizeof *tour);
            for (int32_t i = 0; tour && i < inst.n; i++)
                tour[i] = i;
            if (tour) /* every distance, and their sum, within an int64_t */
                tsp_tour_length(&inst, tour);
            free(tour);
            tsp_free(&inst);
        }
    } else {
        int32_t *tour = calloc((size_t)known.n, sizeof *tour);
        err[0] = 0;
        if (tsp_tour_read(&known, path, tour, err, sizeof err)) {
            if (!err[0])
                fuzz_fail("tsp_tour_read", "refused without a reason");
        } else if (tsp_tour_check(&known, tour, err, sizeof err)) {
            fuzz_fail("tsp_tour_read", "took a tour that is not one");
        }
        free(tour);
    }
    close(fd);
    return 0;
}

void fuzz_seeds(void (*emit)(const char *name, const void *p, size_t n))
{
    static const char berlin[] = "NAME : mini8\nTYPE : TSP\nCOMMENT : fuzz seed\nDIMENSION : 8\n"
                                 "EDGE_WEIGHT_TYPE : EUC_2D\nNODE_COORD_SECTION\n1 565.0 575.0\n"
                                 "2 25.0 185.0\n3 345.0 750.0\n4 945.0 685.0\n5 845.0 655.0\n"
                                 "6 880.0 660.0\n7 25.0 230.0\n8 525.0 1000.0\nEOF\n";
    static const char geo[] = "NAME: geo6\nTYPE: TSP\nDIMENSION: 6\nEDGE_WEIGHT_TYPE: GEO\n"
                              "NODE_COORD_SECTION\n1 38.24 20.42\n2 39.57 26.15\n3 40.56 25.32\n"
                              "4 36.26 23.12\n5 33.48 10.54\n6 37.56 12.19\nEOF\n";
    static const char att[] = "NAME : att5\nDIMENSION : 5\nEDGE_WEIGHT_TYPE : ATT\nOPTIMUM : 10\n"
                              "NODE_COORD_SECTION\n1 6734 1453\n2 2233 10\n3 5530 1424\n"
                              "4 401 841\n5 3082 1644\n";
    const struct {
        const char *name, *text;
    } inst[] = {{"inst_euc", berlin}, {"inst_geo", geo}, {"inst_att", att}};
    for (size_t i = 0; i < sizeof inst / sizeof *inst; i++) {
        size_t n = strlen(inst[i].text);
        uint8_t *b = malloc(n + 1);
        b[0] = 0;
        memcpy(b + 1, inst[i].text, n);
        emit(inst[i].name, b, n + 1);
        free(b);
    }
    char tour[2048];
    int k =
        snprintf(tour, sizeof tour, "%cNAME : t\nTYPE : TOUR\nDIMENSION : 52\nTOUR_SECTION\n", 1);
    for (int i = 1; i <= 52; i++)
        k += snprintf(tour + k, sizeof tour - (size_t)k, "%d\n", i);
    k += snprintf(tour + k, sizeof tour - (size_t)k, "-1\nEOF\n");
    emit("tour_52", tour, (size_t)k);
}
