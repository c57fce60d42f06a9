#!/usr/bin/env bash
# eval/tsp/faults.sh - the fault evaluation, in the style of the P2P-RPC
# experiments: the same lev-tsp job on the same loopback mesh without
# faults, with transient faults (a worker stopped with SIGSTOP for a few
# seconds, again and again) and with definitive faults (a worker killed
# with SIGKILL every 15 s until half of them are gone, idle spare peers
# taking their place). Reports the time overhead of each against the
# fault-free run and checks that the result is the same valid tour.
# Writes eval/results/faults.{csv,md} and faults_runs.csv. Needs root
# (cgroups). See eval/tsp/README.md.
#
#   eval/tsp/faults.sh [--rounds N] [--workers W] [--quota Q] [--budget GENS]
#                      [--instance FILE] [--islands K] [--epoch-gens G] [--seed S]
#                      [--stop-min S] [--stop-max S] [--stop-every S] [--kill-every S]
#                      [--period-ms MS] [--probe-timeout-ms MS] [--suspect-ms MS]
#                      [--checkpoint-ms MS] [--only KINDS] [--timeout S]
#                      [--traces DIR] [--bin DIR] [--out DIR] [--force] [--help]
#
#   --rounds N          rounds, each a fault-free, a transient and a
#                       definitive run, interleaved (default 2); medians
#   --workers W         the VC's workers (lev-tsp --workers W --vts W;
#                       default 4); the mesh holds W/2 more idle peers
#   --quota Q           CPU quota of every worker peer, in cores (default
#                       0.45: W x Q below the machine's cores)
#   --budget GENS       generations of the job (default 320000)
#   --instance FILE     TSPLIB instance (default samples/tsp/data/pr1002.tsp)
#   --islands K, --epoch-gens G, --seed S   the job (default 8, 1000, 1)
#   --stop-min S, --stop-max S   length of a transient fault, drawn
#                       uniformly between them (default 2 and 3 s)
#   --stop-every S      a transient fault starts every S s (default 6),
#                       the first S/2 s into the run
#   --kill-every S      a definitive fault every S s (default 15)
#   --period-ms, --probe-timeout-ms, --suspect-ms   every levpeer's failure
#                       detector (default 200, 80, 3500: levpeer's own)
#   --checkpoint-ms MS  checkpoint period of the VTs (default 2000)
#   --only KINDS        comma list of free, transient, definitive
#   --timeout S         a run still going after S s fails (default 900)
#   --traces DIR        keep each run's lev-tsp --trace-file (a line per
#                       unit: seconds, VT, island, epoch, units done) and
#                       its faults as DIR/roundR-KIND.{trace,faults}
#   --bin DIR, --out DIR, --force   as figure4.sh
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck disable=SC2034 # read by lib.sh
EV_NAME=faults
. eval/tsp/lib.sh

usage() {
    sed -n '12,37s/^# \{0,1\}//p' "$0"
    exit "${1:-2}"
}

ROUNDS=2 WORKERS=4 QUOTA=0.45 BUDGET=320000
INSTANCE=samples/tsp/data/pr1002.tsp ISLANDS=8 EPOCH_GENS=1000 SEED=1
STOP_MIN=2 STOP_MAX=3 STOP_EVERY=6 KILL_EVERY=15
PERIOD_MS=200 PROBE_MS=80 SUSPECT_MS=3500 CHECKPOINT_MS=2000
ONLY=free,transient,definitive TIMEOUT=900 TRACES=
BIN='' OUT=eval/results FORCE=0
CMDLINE="eval/tsp/faults.sh${*:+ $*}"
while (($#)); do
    case $1 in
    --rounds) ROUNDS=${2:?}; shift ;;
    --workers) WORKERS=${2:?}; shift ;;
    --quota) QUOTA=${2:?}; shift ;;
    --budget) BUDGET=${2:?}; shift ;;
    --instance) INSTANCE=${2:?}; shift ;;
    --islands) ISLANDS=${2:?}; shift ;;
    --epoch-gens) EPOCH_GENS=${2:?}; shift ;;
    --seed) SEED=${2:?}; shift ;;
    --stop-min) STOP_MIN=${2:?}; shift ;;
    --stop-max) STOP_MAX=${2:?}; shift ;;
    --stop-every) STOP_EVERY=${2:?}; shift ;;
    --kill-every) KILL_EVERY=${2:?}; shift ;;
    --period-ms) PERIOD_MS=${2:?}; shift ;;
    --probe-timeout-ms) PROBE_MS=${2:?}; shift ;;
    --suspect-ms) SUSPECT_MS=${2:?}; shift ;;
    --checkpoint-ms) CHECKPOINT_MS=${2:?}; shift ;;
    --only) ONLY=${2:?}; shift ;;
    --timeout) TIMEOUT=${2:?}; shift ;;
    --traces) TRACES=${2:?}; shift ;;
    --bin) BIN=${2:?}; shift ;;
    --out) OUT=${2:?}; shift ;;
    --force) FORCE=1 ;;
    --help | -h) usage 0 ;;
    *) echo "faults: unknown option $1" >&2; usage ;;
    esac
    shift
done
for v in ROUNDS WORKERS BUDGET ISLANDS EPOCH_GENS SEED STOP_EVERY KILL_EVERY PERIOD_MS PROBE_MS SUSPECT_MS TIMEOUT; do
    [[ ${!v} =~ ^[0-9]+$ && ${!v} -gt 0 ]] || ev_die "${v,,} must be a positive integer, not '${!v}'"
done
[[ $CHECKPOINT_MS =~ ^[0-9]+$ ]] || ev_die "--checkpoint-ms must be an integer, not '$CHECKPOINT_MS'"
((WORKERS >= 2)) || ev_die "--workers must be at least 2 (half of them are killed)"
for v in QUOTA STOP_MIN STOP_MAX; do
    [[ ${!v} =~ ^[0-9]*\.?[0-9]+$ ]] || ev_die "${v,,} must be a number, not '${!v}'"
done
awk -v a="$STOP_MIN" -v b="$STOP_MAX" -v q="$QUOTA" 'BEGIN {exit !(a <= b && q > 0 && q <= 1)}' ||
    ev_die "--stop-min must not exceed --stop-max, and 0 < --quota <= 1"
for k in ${ONLY//,/ }; do
    [[ $k == free || $k == transient || $k == definitive ]] || ev_die "--only: unknown kind '$k'"
done
[[ -r $INSTANCE ]] || ev_die "instance $INSTANCE is not readable"
KILLS=$((WORKERS / 2))
PEERS=$((WORKERS + KILLS))

ev_init
ev_packages jq
ev_programs "$BIN"
cg_setup
mkdir -p "$OUT"
[[ -z $TRACES ]] || mkdir -p "$TRACES"
RUNS=$EV_TMP/runs.csv
echo "round,kind,seconds,best,tour_length,rc,faults,lost_peers,resumed" >"$RUNS"
FAULTLOG=$EV_TMP/schedule.log
: >"$FAULTLOG"

cg_group client max
GROUPS_W=()
for ((i = 1; i <= PEERS; i++)); do
    cg_group "p$i" "$QUOTA"
    GROUPS_W+=("p$i")
done
MESH_OPTS=(--period-ms "$PERIOD_MS" --probe-timeout-ms "$PROBE_MS" --suspect-ms "$SUSPECT_MS")

# since T0: seconds since the run started, to the millisecond.
since() { awk -v a="$1" -v b="$(ev_now)" 'BEGIN {printf "%.3f", b - a}'; }

# victim_group EXCLUDE...: the group of a worker that runs VTs of the run
# now (drawn at random among them), or of any worker peer not excluded;
# sets SPREAD to "VTS VTs on HOSTS workers" (where the VTs run now).
victim_group() {
    local hosts=() h i g cand=() nvt
    SPREAD="? VTs on ? workers"
    if mesh_status "$EV_TMP/status.json"; then
        mapfile -t hosts < <(jq -r '[.vcs[].vts[] | select(.state == "running") | .host] | unique | .[]' \
            "$EV_TMP/status.json" 2>/dev/null || true)
        nvt=$(jq '[.vcs[].vts[] | select(.state == "running")] | length' "$EV_TMP/status.json" 2>/dev/null || echo "?")
        SPREAD="$nvt VTs on ${#hosts[@]} workers"
    fi
    for h in "${hosts[@]}"; do
        for ((i = 0; i < ${#MESH_EPS[@]}; i++)); do
            [[ ${MESH_EPS[i]} == "$h" ]] || continue
            g=${MESH_GROUPS[i]}
            [[ " $* " == *" $g "* ]] || cand+=("$g")
        done
    done
    if ((${#cand[@]} == 0)); then
        for g in "${MESH_GROUPS[@]}"; do [[ " $* " == *" $g "* ]] || cand+=("$g"); done
    fi
    VICTIM=
    if ((${#cand[@]})); then VICTIM=${cand[RANDOM % ${#cand[@]}]}; fi
    return 0
}

# wait_until T0 SECS PID: sleeps until SECS after T0, or until PID ends
# (then fails).
wait_until() {
    local i
    for ((i = 0; i < 100000; i++)); do
        ev_alive "$3" || return 1
        awk -v a="$1" -v s="$2" -v b="$(ev_now)" 'BEGIN {exit !(b - a >= s)}' && return 0
        sleep 0.05
    done
    return 1
}

# transient T0 PID: every STOP_EVERY s (the first at STOP_EVERY / 2), a
# worker that runs VTs stops (SIGSTOP to its levpeer and executors) for
# STOP_MIN..STOP_MAX s, then goes on (SIGCONT); until PID ends. The victim
# is chosen a second before (the mesh's status takes time to come).
transient() {
    local t0=$1 pid=$2 n at g='' dur sp=''
    # stopped early: the stopped worker goes on
    trap 'if [[ -n $sp ]]; then kill "$sp" 2>/dev/null; fi; if [[ -n $g ]]; then cg_signal "$g" CONT; fi; exit 0' TERM
    for ((n = 0; n < 10000; n++)); do
        at=$(awk -v e="$STOP_EVERY" -v n="$n" 'BEGIN {print e / 2 + n * e}')
        wait_until "$t0" "$(awk -v a="$at" 'BEGIN {print a - 1}')" "$pid" || break
        victim_group
        g=$VICTIM
        wait_until "$t0" "$at" "$pid" || break
        [[ -n $g ]] || continue
        dur=$(awk -v a="$STOP_MIN" -v b="$STOP_MAX" -v r="$RANDOM" 'BEGIN {printf "%.2f", a + (b - a) * r / 32767}')
        cg_signal "$g" STOP
        echo "$(since "$t0") stop $g for ${dur}s ($SPREAD before)" >>"$EV_TMP/faults"
        sleep "$dur" &
        sp=$!
        wait "$sp" || true
        sp=
        cg_signal "$g" CONT
        echo "$(since "$t0") cont $g" >>"$EV_TMP/faults"
        g=
    done
}

# definitive T0 PID: every KILL_EVERY s, a worker that runs VTs dies
# (SIGKILL to its levpeer and executors), KILLS times; until PID ends. The
# victim is chosen two seconds before.
definitive() {
    local t0=$1 pid=$2 n g killed=()
    for ((n = 1; n <= KILLS; n++)); do
        wait_until "$t0" $((n * KILL_EVERY - 2)) "$pid" || break
        victim_group "${killed[@]}"
        g=$VICTIM
        wait_until "$t0" $((n * KILL_EVERY)) "$pid" || break
        [[ -n $g ]] || break
        cg_signal "$g" KILL
        killed+=("$g")
        echo "$(since "$t0") kill $g ($SPREAD before)" >>"$EV_TMP/faults"
    done
}

# run ROUND KIND: a fresh mesh (the client's peer, PEERS workers of QUOTA
# cores), lev-tsp on it with the faults of KIND injected, timed.
run() {
    local r=$1 kind=$2 t0 pid inj='' rc=0 sec best len faults lost resumed i
    mesh_start client "${GROUPS_W[@]}" -- --rate 100000
    : >"$EV_TMP/faults"
    rm -f "$EV_TMP/run.tour"
    t0=$(ev_now)
    ev_spawn client "$EV_TMP/run.out" "$EV_TMP/run.err" env LEV_PEER="$MESH_CLIENT" \
        "$LEVTSP" "$INSTANCE" --seed "$SEED" --budget "$BUDGET" --islands "$ISLANDS" \
        --epoch-gens "$EPOCH_GENS" --vts "$WORKERS" --workers "$WORKERS" \
        --checkpoint-ms "$CHECKPOINT_MS" --quiet --tour-out "$EV_TMP/run.tour" --svg "$EV_TMP/run.svg" \
        ${TRACES:+--trace-file "$TRACES/round$r-$kind.trace"}
    pid=$EV_PID
    case $kind in
    transient) transient "$t0" "$pid" & inj=$! ;;
    definitive) definitive "$t0" "$pid" & inj=$! ;;
    esac
    [[ -n $inj ]] && EV_PIDS+=("$inj")
    # bounded: a run past TIMEOUT is stopped and fails
    for ((i = 0; i < TIMEOUT * 10; i++)); do
        ev_alive "$pid" || break
        sleep 0.1
    done
    if ev_alive "$pid"; then
        ev_log "$kind run $r still going after $TIMEOUT s: stopped"
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" || rc=$?
    sec=$(since "$t0")
    if [[ -n $inj ]]; then
        kill -TERM "$inj" 2>/dev/null || true
        wait "$inj" 2>/dev/null || true
    fi
    [[ -z $TRACES ]] || cp "$EV_TMP/faults" "$TRACES/round$r-$kind.faults"
    mesh_stop
    best=$(ev_best "$EV_TMP/run.out")
    len=$(ev_tour_length "$INSTANCE" "$EV_TMP/run.tour" 2>>"$EV_TMP/run.err" || echo invalid)
    if [[ $rc != 0 || -z $best ]]; then
        ev_log "lev-tsp ($kind) failed (status $rc):"
        tail -n 5 "$EV_TMP/run.err" >&2
    fi
    faults=$(grep -c -E ' (stop|kill) ' "$EV_TMP/faults" || true)
    read -r lost resumed < <({ grep -o '[0-9]* peer(s) lost so far; [0-9]* VT(s) resumed' "$EV_TMP/run.out" || true; } |
        tail -n 1 | awk '{print $1, $6}') || true
    echo "$r,$kind,$sec,${best:-},$len,$rc,$faults,${lost:-0},${resumed:-0}" >>"$RUNS"
    {
        echo "round $r, $kind: $sec s, best ${best:--}, tour $len, status $rc, $faults faults, ${lost:-0} peers lost, ${resumed:-0} VTs resumed"
        sed 's/^/  /' "$EV_TMP/faults"
    } | tee -a "$FAULTLOG" >&2
}

{
    echo "== faults: $CMDLINE"
    ev_machine
    echo "job: $INSTANCE, budget $BUDGET, islands $ISLANDS, $EPOCH_GENS generations per unit, seed $SEED"
    echo "mesh: the client's peer + $PEERS workers of one core at quota $QUOTA ($WORKERS for the VC, $KILLS spare)"
    echo "failure detector: period $PERIOD_MS ms, probe timeout $PROBE_MS ms, suspect $SUSPECT_MS ms; checkpoints every $CHECKPOINT_MS ms"
} >&2
MACHINE=$(ev_machine)
for ((r = 1; r <= ROUNDS; r++)); do
    for kind in free transient definitive; do
        [[ ",$ONLY," == *",$kind,"* ]] || continue
        ((FORCE)) || ev_wait_quiet 3600
        echo "round $r/$ROUNDS, $kind, load $(cut -d' ' -f1 /proc/loadavg)" >&2
        run "$r" "$kind"
    done
done
cp "$RUNS" "$OUT/faults_runs.csv"

# Medians, overheads, correctness
CSV=$OUT/faults.csv
awk -F, '
function median(k,   n, i, j, t, v) {
    n = cnt[k]; for (i = 1; i <= n; i++) v[i] = val[k, i]
    for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
    return n == 0 ? "nan" : (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2)
}
NR == 1 { next }
{
    k = $2; runs[k]++
    if ($6 == 0) val[k, ++cnt[k]] = $3
    ok = ($6 == 0 && $4 != "" && $4 == $5)
    if (!ok) bad[k]++
    bests[k] = bests[k] (index("/" bests[k] "/", "/" $4 "/") ? "" : (bests[k] == "" ? "" : "/") $4)
    f[k] += $7; lost[k] += $8; res[k] += $9
    if (k == "free" && ok) freebest[$4] = 1
}
END {
    print "kind,runs,seconds_median,overhead_pct,target_pct,faults_per_run,lost_peers_per_run,resumed_per_run,best,valid_tours,same_as_fault_free"
    tf = median("free")
    n = split("free transient definitive", kinds, " ")
    target["transient"] = 5; target["definitive"] = 30
    for (i = 1; i <= n; i++) {
        k = kinds[i]; if (!(k in runs)) continue
        t = median(k)
        over = (k == "free" || tf == "nan" || t == "nan") ? "" : sprintf("%.1f", 100 * (t - tf) / tf)
        same = "yes"; nfree = 0; for (x in freebest) nfree++
        split(bests[k], bb, "/"); for (j in bb) if (!(bb[j] in freebest)) same = "NO"
        if (nfree == 0) same = "n/a"
        printf "%s,%d,%s,%s,%s,%.1f,%.1f,%.1f,%s,%s,%s\n", k, runs[k], t, over, (k in target ? target[k] : ""),
            f[k] / runs[k], lost[k] / runs[k], res[k] / runs[k], bests[k], (k in bad ? "NO" : "yes"), same
    }
}' "$RUNS" >"$CSV"

MD=$OUT/faults.md
{
    echo "# Faults: time overhead and correctness of lev-tsp under transient and definitive faults"
    echo
    echo "Command: \`$CMDLINE\`"
    echo
    echo '```'
    echo "$MACHINE"
    echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo '```'
    echo
    echo "Job: \`lev-tsp $(basename "$INSTANCE") --seed $SEED --budget $BUDGET --islands $ISLANDS --epoch-gens $EPOCH_GENS"
    echo "--vts $WORKERS --workers $WORKERS --checkpoint-ms $CHECKPOINT_MS\`."
    echo "Mesh (loopback, fresh for every run): the client's peer (\`--cores -1\`, no quota) and $PEERS"
    echo "worker peers (\`--cores 1\`, each in a cgroup $CG_MODE CPU group of quota $QUOTA core, equal"
    echo "\`--rate\`): the VC's worker quota is $WORKERS, so $KILLS peers are idle spares."
    echo "Failure detector of every levpeer: \`--period-ms $PERIOD_MS --probe-timeout-ms $PROBE_MS --suspect-ms $SUSPECT_MS\`."
    echo
    echo "- **Transient faults:** from $(awk -v e="$STOP_EVERY" 'BEGIN {print e / 2}') s into the run, every $STOP_EVERY s, a worker that runs"
    echo "  VTs (drawn at random) is stopped (SIGSTOP to its levpeer and executors) for"
    echo "  $STOP_MIN–$STOP_MAX s (uniform), then continued (SIGCONT)."
    echo "- **Definitive faults:** every $KILL_EVERY s, a worker that runs VTs is killed (SIGKILL to its"
    echo "  levpeer and executors), $KILLS times (half of the VC's workers)."
    echo
    echo "Overhead = (median time with faults − median fault-free time) / median fault-free time,"
    echo "over $ROUNDS rounds (each round: a fault-free, a transient and a definitive run)."
    echo "Correct = exit status 0, the TOUR file a permutation whose length (recomputed here) is"
    echo "the printed one, and the same best length as the fault-free run."
    echo
    echo "| run | runs | time (median) | overhead | target | faults / run | peers lost / run | VTs resumed / run | best length | valid tour | same as fault-free |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    tail -n +2 "$CSV" | awk -F, '{
        printf "| %s | %s | %.2f s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3,
            ($4 == "" ? "–" : "**" $4 " %**"), ($5 == "" ? "" : "≤ " $5 " %"), $6, $7, $8, $9, $10, $11
    }'
    echo
    echo "Published (P2P-RPC on XtremWeb, EP): 12 % under transient and 78 % under definitive faults."
    echo
    echo "Every run ([faults_runs.csv](faults_runs.csv)) and the faults as injected, in seconds since"
    echo "the client started:"
    echo
    echo '```'
    cat "$FAULTLOG"
    echo '```'
} >"$MD"

echo "== results: $CSV, $MD" >&2
column -s, -t "$CSV" >&2 || cat "$CSV" >&2
status=0
while IFS=, read -r kind _ _ over target _ _ _ _ valid same; do
    [[ $valid == yes && $same != NO ]] || status=1
    [[ -n $target && -n $over ]] || continue
    printf 'TARGET %s faults: overhead %s %% (<= %s %%): %s; valid tours: %s; same best length: %s\n' "$kind" "$over" "$target" \
        "$(awk -v o="$over" -v t="$target" 'BEGIN {print (o <= t ? "met" : "missed")}')" "$valid" "$same"
done < <(tail -n +2 "$CSV")
exit $status
