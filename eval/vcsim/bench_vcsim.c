/* bench_vcsim.c - the long run of the simulator of whole virtual
 * computers (tests/pc/vcsim.h): seed after seed, each run a VC on a
 * simulated mesh with a mix of faults drawn from a scenario, until a
 * budget of runs or of wall-clock seconds is spent. Prints the simulated
 * VC-hours, the faults injected by kind and by combination, and every
 * invariant violation with the seed that replays it
 * (VCSIM_SEED=<seed> test_vcsim t_<scenario>).
 *
 *   bench_vcsim [SECONDS [FIRST_SEED]]      default: 60 s from seed 1
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vcsim.h"

typedef struct scenario {
    const char *name;
    vs_opts o;
    uint64_t runs, vtms, violations, failed_allowed;
    uint64_t first_bad[4];
    char why[4][160];
} scenario;

static double s_secs(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int s_cmp(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* What a pause or a crash of one worker costs the VC, in simulated time:
 * the same seeds with and without a pause of exactly pause_ms (or a crash
 * of the kind `crashes`), the VC's run time against the fault-free one,
 * less the pause itself. */
static void s_fault_cost(int suspect_ms, unsigned kind, int pause_ms, int crashes, int seeds)
{
    static long long extra[1000];
    int n = 0, rolled = 0;
    for (int i = 0; i < seeds && i < 1000; i++) {
        vs_opts o = {.peers = 4, .seed = 5000 + (uint64_t)i, .suspect_ms = suspect_ms};
        vs_report a, b;
        if (!vs_run(&o, &a))
            continue;
        o.kinds = kind;
        o.faults = 1;
        o.pause_ms = pause_ms;
        o.crashes = crashes;
        if (!vs_run(&o, &b))
            continue;
        extra[n++] = (long long)b.sim_ms - (long long)a.sim_ms - pause_ms;
        rolled += b.resumes + b.restarts > 0;
    }
    qsort(extra, (size_t)n, sizeof extra[0], s_cmp);
    char what[32];
    snprintf(what, sizeof what, "%s",
             crashes == VS_CRASH_HOST ? "crash of the host" : "crash of the process");
    if (kind == VS_F_PAUSE)
        snprintf(what, sizeof what, "pause %d ms", pause_ms);
    if (n)
        printf("| %d ms | %s | %d | %+lld | %+lld | %+lld | %d |\n", suspect_ms, what, n,
               extra[n / 2], extra[n * 9 / 10], extra[n - 1], rolled);
}

int main(int argc, char **argv)
{
    double budget = argc > 1 ? atof(argv[1]) : 60.0;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
    scenario sc[] = {
        {.name = "fault_free", .o = {.peers = 4}},
        {.name = "crash", .o = {.peers = 4, .kinds = VS_F_CRASH, .faults = 1}},
        {.name = "pause", .o = {.peers = 4, .kinds = VS_F_PAUSE, .faults = 1}},
        {.name = "restart", .o = {.peers = 4, .kinds = VS_F_RESTART, .faults = 1}},
        {.name = "stall_crash",
         .o = {.peers = 4, .kinds = VS_F_PAUSE | VS_F_CRASH, .faults = 2, .within_ckpt = true}},
        {.name = "two_crashes",
         .o = {.peers = 4, .kinds = VS_F_CRASH | VS_F_RESTART, .faults = 2, .within_ckpt = true}},
        {.name = "one_replica",
         .o = {.peers = 4, .replicas = 1, .kinds = VS_F_CRASH, .faults = 2, .within_ckpt = true}},
        {.name = "network",
         .o = {.peers = 5,
               .kinds = VS_F_LOSS | VS_F_DUP | VS_F_PARTITION | VS_F_REORDER,
               .faults = 2}},
        {.name = "takeover", .o = {.peers = 4, .kinds = VS_F_TAKEOVER, .faults = 1}},
        {.name = "mixed",
         .o = {.peers = 6,
               .vts = 10,
               .kinds =
                   VS_F_CRASH | VS_F_RESTART | VS_F_PAUSE | VS_F_LOSS | VS_F_DUP | VS_F_REORDER,
               .faults = 2,
               .within_ckpt = true}},
        {.name = "puts",
         .o = {.peers = 5,
               .vts = 8,
               .puts = true,
               .kinds = VS_F_CRASH | VS_F_RESTART | VS_F_PAUSE | VS_F_LOSS | VS_F_DUP |
                        VS_F_PARTITION | VS_F_REORDER,
               .faults = 2,
               .within_ckpt = true}},
        {.name = "reads",
         .o = {.peers = 5,
               .vts = 8,
               .reads = true,
               .kinds = VS_F_CRASH | VS_F_RESTART | VS_F_PAUSE | VS_F_LOSS | VS_F_DUP |
                        VS_F_PARTITION | VS_F_REORDER,
               .faults = 2,
               .within_ckpt = true}},
    };
    int nsc = (int)(sizeof sc / sizeof sc[0]);
    uint64_t faults[VS_F_KINDS] = {0}, combos[VS_F_KINDS][VS_F_KINDS] = {{0}};
    uint64_t sim_ms = 0, runs = 0;
    double t0 = s_secs();
    for (uint64_t k = 0; s_secs() - t0 < budget; k++) {
        scenario *s = &sc[k % (uint64_t)nsc];
        vs_opts o = s->o;
        o.seed = seed + k;
        vs_report r;
        bool ok = vs_run(&o, &r);
        runs++;
        s->runs++;
        sim_ms += r.sim_ms;
        s->vtms += r.sim_ms;
        s->failed_allowed += ok ? (uint64_t)r.failed : 0;
        int kinds[VS_F_KINDS] = {0}, nk = 0;
        for (int i = 0; i < VS_F_KINDS; i++) {
            faults[i] += r.faults[i];
            if (r.faults[i])
                kinds[nk++] = i;
        }
        if (nk == 1 && r.faults[kinds[0]] >= 2)
            combos[kinds[0]][kinds[0]]++;
        for (int a = 0; a < nk; a++)
            for (int b = a + 1; b < nk; b++)
                combos[kinds[a]][kinds[b]]++;
        if (!ok) {
            if (s->violations < 4) {
                s->first_bad[s->violations] = o.seed;
                snprintf(s->why[s->violations], sizeof s->why[0], "%.150s", r.why);
            }
            s->violations++;
        }
    }
    printf("## What a pause or a crash costs\n\n");
    printf("A worker of a 4-peer mesh paused, or crashed, once mid-run; the VC's run time against "
           "the same seed without the fault, less the pause (ms of simulated time), for three "
           "suspicion timeouts (3500 ms is the default); a crashed process is confirmed dead "
           "at once by its refused port, a crashed host only by the timeout:\n\n");
    printf("| suspicion | fault | runs | median | 90th %% | max | runs with a VT moved |\n"
           "|---|---|---|---|---|---|---|\n");
    const int susp[] = {1000, 3500, 4000};
    for (size_t k = 0; k < sizeof susp / sizeof susp[0]; k++) {
        s_fault_cost(susp[k], VS_F_PAUSE, 500, 0, 100);
        s_fault_cost(susp[k], VS_F_PAUSE, 3000, 0, 100);
        s_fault_cost(susp[k], VS_F_PAUSE, 5000, 0, 100);
        s_fault_cost(susp[k], VS_F_CRASH, 0, VS_CRASH_PROCESS, 100);
        s_fault_cost(susp[k], VS_F_CRASH, 0, VS_CRASH_HOST, 100);
    }
    printf("\n## The simulator's long run\n\n");
    printf("%llu runs in %.0f s of this machine: %.2f simulated VC-hours (one VC per run)\n\n",
           (unsigned long long)runs, s_secs() - t0, (double)sim_ms / 3.6e6);
    printf("| scenario | runs | simulated hours | VTs failed (allowed) | violations | first "
           "seeds |\n|---|---|---|---|---|---|\n");
    for (int i = 0; i < nsc; i++) {
        scenario *s = &sc[i];
        char seeds[128] = "";
        size_t off = 0;
        for (uint64_t v = 0; v < s->violations && v < 4; v++)
            off += (size_t)snprintf(seeds + off, sizeof seeds - off, "%s%llu", v ? ", " : "",
                                    (unsigned long long)s->first_bad[v]);
        printf("| %s | %llu | %.2f | %llu | %llu | %s |\n", s->name, (unsigned long long)s->runs,
               (double)s->vtms / 3.6e6, (unsigned long long)s->failed_allowed,
               (unsigned long long)s->violations, seeds);
    }
    printf("\nFaults injected, by kind:");
    for (int i = 0; i < VS_F_KINDS; i++)
        printf(" %s %llu%s", vs_fault_name(i), (unsigned long long)faults[i],
               i + 1 < VS_F_KINDS ? "," : "\n");
    printf("\nRuns with two faults, by combination:");
    bool any = false;
    for (int a = 0; a < VS_F_KINDS; a++)
        for (int b = a; b < VS_F_KINDS; b++)
            if (combos[a][b]) {
                printf("%s %s+%s %llu", any ? "," : "", vs_fault_name(a), vs_fault_name(b),
                       (unsigned long long)combos[a][b]);
                any = true;
            }
    printf("%s\n\nViolations, first of each scenario:\n\n", any ? "" : " none");
    for (int i = 0; i < nsc; i++)
        for (uint64_t v = 0; v < sc[i].violations && v < 1; v++)
            printf("- %s, seed %llu: %s\n", sc[i].name, (unsigned long long)sc[i].first_bad[v],
                   sc[i].why[v]);
    return 0;
}
