/* bench_membership.c - the membership protocol at scale, simulated: for
 * 32, 256 and 1,024 peers (or the sizes given), a few seeds each, the
 * time to converge, to suspect a killed peer everywhere and to hold it
 * dead everywhere, and the messages and bytes a peer sends per period in
 * the steady state (the scenario of tests/pc/membership_sim.h).
 *
 *   bench_membership [SEEDS [N...]]     default: 3 seeds, 32 256 1024
 */
#include <stdio.h>
#include <stdlib.h>

#include "membership_sim.h"

int main(int argc, char **argv)
{
    int seeds = argc > 1 ? atoi(argv[1]) : 3;
    int sizes[16] = {32, 256, 1024};
    int nsizes = 3;
    if (argc > 2) {
        nsizes = 0;
        for (int i = 2; i < argc && nsizes < 16; i++)
            sizes[nsizes++] = atoi(argv[i]);
    }
    if (seeds < 1 || seeds > 100) {
        fprintf(stderr, "usage: bench_membership [SEEDS [N...]]\n");
        return 2;
    }
    printf("| peers | seed | converge | suspected everywhere | dead everywhere | msgs/peer/period "
           "| bytes/peer/period | of which push-pull |\n");
    printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (int k = 0; k < nsizes; k++) {
        for (int seed = 1; seed <= seeds; seed++) {
            msim_opts o = {.n = sizes[k], .seed = (uint64_t)seed, .start_spread_ms = 1000};
            msim_result r;
            if (msim_scenario(&o, 30000, 10000, &r)) {
                fprintf(stderr, "bench_membership: %d peers: out of memory\n", sizes[k]);
                return 1;
            }
            printf("| %d | %d | %.0f ms | %.0f ms | %.0f ms | %.2f | %.0f | %.0f |\n", sizes[k],
                   seed, r.converge_ms, r.suspect_ms, r.dead_ms, r.msgs, r.bytes, r.sync_bytes);
            if (r.refused)
                printf("(%llu messages refused)\n", (unsigned long long)r.refused);
            fflush(stdout);
        }
    }
    return 0;
}
