/* bench_membership.c - the membership protocol at scale, simulated: for
 * 32, 256 and 1,024 peers (or the sizes given), a few seeds each, the
 * time to converge, to suspect a killed peer everywhere and to hold it
 * dead everywhere, and the messages and bytes a peer sends per period in
 * the steady state (the scenario of tests/pc/membership_sim.h). With
 * `slow`: a mesh of N peers (default 16) one of which handles every
 * message it receives 100 to 600 ms late, 30 s: the false suspicions it
 * raises and how often the others come to hold it and the healthy peers
 * SUSPECT, without local health awareness, with it (the default), and
 * with Lifeguard's suspicion timeout too (6 s falling to 1 s).
 *
 *   bench_membership [SEEDS [N...]]     default: 3 seeds, 32 256 1024
 *   bench_membership slow [SEEDS [N]]   default: 5 seeds, 16 peers
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "membership_sim.h"

/* The slow-peer comparison: one row per seed and setting, then totals. */
static int s_slow(int seeds, int n)
{
    static const char *names[3] = {"off", "on", "on, suspicion 6 s to 1 s"};
    unsigned long long tot[3][4] = {{0}};
    printf("| peers | seed | local health | false suspicions raised | healthy peers held suspect "
           "| slow peer held suspect | deaths | its health at the end |\n");
    printf("| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |\n");
    for (int seed = 1; seed <= seeds; seed++) {
        for (int k = 0; k < 3; k++) {
            msim_opts o = {.n = n,
                           .seed = 200 + (uint64_t)seed,
                           .start_spread_ms = 500,
                           .slow_peer = 5 % n,
                           .slow_min_ms = 100,
                           .slow_max_ms = 600};
            o.members.health_max = k ? 0 : -1;
            o.members.suspect_ms = 1000; /* as measured before the default became 3.5 s */
            o.members.suspect_max_ms = k == 2 ? 6000 : 0;
            msim_slow_result r;
            if (msim_slow(&o, 5000, 30000, &r)) {
                fprintf(stderr, "bench_membership: %d peers: out of memory\n", n);
                return 1;
            }
            printf("| %d | %d | %s | %llu | %llu | %llu | %llu | %d |\n", n, 200 + seed, names[k],
                   (unsigned long long)r.raised, (unsigned long long)r.false_views,
                   (unsigned long long)r.slow_views, (unsigned long long)r.deaths, r.health);
            tot[k][0] += r.raised;
            tot[k][1] += r.false_views;
            tot[k][2] += r.slow_views;
            tot[k][3] += r.deaths;
            fflush(stdout);
        }
    }
    for (int k = 0; k < 3; k++)
        printf("| %d | all | %s | %llu | %llu | %llu | %llu | |\n", n, names[k], tot[k][0],
               tot[k][1], tot[k][2], tot[k][3]);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "slow")) {
        int seeds = argc > 2 ? atoi(argv[2]) : 5, n = argc > 3 ? atoi(argv[3]) : 16;
        if (seeds < 1 || seeds > 100 || n < 2 || n > 4096) {
            fprintf(stderr, "usage: bench_membership slow [SEEDS [N]]\n");
            return 2;
        }
        return s_slow(seeds, n);
    }
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
            /* at a suspicion timeout of 1 s, the figures of eval/README.md
             * (the daemon's default is PC_MEMBERS_SUSPECT_MS): dead
             * everywhere comes that much later at the default */
            msim_opts o = {.n = sizes[k],
                           .seed = (uint64_t)seed,
                           .start_spread_ms = 1000,
                           .members.suspect_ms = 1000};
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
