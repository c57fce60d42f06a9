/* pi.c - the Monte Carlo pi sample: a client of Leverage. It opens a
 * virtual computer (on the levpeer named by LEV_PEER, or on a peer
 * embedded in this process, which joins the mesh of LEV_JOIN when set),
 * starts one VT per share of the points, prints their progress reports,
 * joins them and prints the estimate of pi.
 *
 *   lev_sample_pi [VTS [POINTS]]     defaults: 8 VTs, 80,000,000 points
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leverage.h"

typedef struct pi_arg {
    uint64_t points;
    uint64_t seed;
} pi_arg;

static pthread_mutex_t s_mu = PTHREAD_MUTEX_INITIALIZER;

static void s_report(lev_vt_id vt, const void *buf, size_t len, void *ctx)
{
    (void)ctx;
    uint32_t pct = 0;
    if (len != sizeof pct)
        return;
    memcpy(&pct, buf, sizeof pct);
    pthread_mutex_lock(&s_mu);
    if (pct == 50 || pct == 100)
        printf("  VT %" PRIu64 ": %u%%\n", vt, pct);
    pthread_mutex_unlock(&s_mu);
}

int main(int argc, char **argv)
{
    int nvt = argc > 1 ? atoi(argv[1]) : 8;
    uint64_t points = argc > 2 ? strtoull(argv[2], NULL, 10) : 80000000ull;
    if (nvt < 1 || nvt > 4096 || points < (uint64_t)nvt) {
        fprintf(stderr, "usage: lev_sample_pi [VTS (1..4096) [POINTS (>= VTS)]]\n");
        return 2;
    }
    lev_vc *vc = NULL;
    int rc = lev_vc_open(&vc, NULL);
    if (rc) {
        fprintf(stderr, "lev_sample_pi: cannot open a virtual computer: %s: %s\n", lev_strerror(rc),
                lev_errdetail());
        return 1;
    }
    lev_vc_on_report(vc, s_report, NULL);
    lev_vt_id *ids = calloc((size_t)nvt, sizeof *ids);
    if (!ids)
        return 1;
    printf("%d VTs, %" PRIu64 " points\n", nvt, points);
    for (int i = 0; i < nvt; i++) {
        pi_arg a = {points / (uint64_t)nvt + (i < (int)(points % (uint64_t)nvt)),
                    0x9E3779B97F4A7C15ull * (uint64_t)(i + 1)};
        if ((rc = lev_vt_start(vc, "pi_count", &a, sizeof a, &ids[i]))) {
            fprintf(stderr, "lev_sample_pi: start: %s: %s\n", lev_strerror(rc), lev_errdetail());
            return 1;
        }
    }
    uint64_t in = 0;
    for (int i = 0; i < nvt; i++) {
        void *res = NULL;
        size_t len = 0;
        rc = lev_vt_join(vc, ids[i], &res, &len, -1);
        if (rc || len != sizeof(uint64_t)) {
            fprintf(stderr, "lev_sample_pi: VT %" PRIu64 ": %s: %s\n", ids[i], lev_strerror(rc),
                    lev_errdetail());
            return 1;
        }
        uint64_t n;
        memcpy(&n, res, sizeof n);
        free(res);
        in += n;
    }
    printf("pi ~ %.6f (%" PRIu64 " of %" PRIu64 " points inside)\n",
           4.0 * (double)in / (double)points, in, points);
    free(ids);
    lev_vc_close(&vc);
    return 0;
}
