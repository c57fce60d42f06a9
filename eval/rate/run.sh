#!/usr/bin/env bash
# eval/rate/run.sh - what a levpeer offers the mesh, start after start:
# the cores and the per-core rate it announces (peercontroller/capacity.c)
# on this machine idle, beside one CPU hog per core, in a cgroup with a
# CPU quota of 0.45 core, and both; the minimum, median and maximum of
# the rate and its spread (max / min - 1); and 24 levpeers started at
# once, each measuring while the others do. The target: within +-10 % from
# run to run, and a quota of q cores announced as q of one core's rate.
# The quota rows need root and a writable cgroup CPU controller (v1 or
# v2); without them they are left out, and the script says so.
#
#   eval/rate/run.sh [RUNS]      default 10 starts per condition
#
# Environment: LEVPEER (a levpeer binary to measure instead of the one
# built here, e.g. an older build, for a side-by-side), LEV_EVAL_BUILD
# (build tree, default build-eval/ at the top of the source tree).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

RUNS=${1:-10}
[[ $RUNS =~ ^[0-9]+$ ]] && ((RUNS >= 1 && RUNS <= 1000)) || {
    echo "rate: RUNS is a number of starts from 1 to 1000, not '$RUNS'" >&2
    exit 2
}
EV_NAME=rate
. eval/build.sh
. eval/tsp/lib.sh
ev_init
if [[ -z ${LEVPEER:-} ]]; then
    eval_build levpeer
    LEVPEER=$BUILD/peercontroller/levpeer
fi
[[ -x $LEVPEER ]] || ev_die "no levpeer at $LEVPEER"
CG_PERIOD_US=100000
QUOTA=0.45
HOGS=()

hogs_start() {
    local i
    for ((i = 0; i < $(nproc); i++)); do
        sh -c 'while :; do :; done' &
        HOGS+=($!)
        EV_PIDS+=($!)
    done
}

hogs_stop() {
    local p
    for p in "${HOGS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${HOGS[@]}"; do wait "$p" 2>/dev/null || true; done
    HOGS=()
}

# one_start GROUP: starts levpeer in GROUP ("" for none) and waits for it
# to be ready (mesh_peer, bounded), stops it, and prints "CORES RATE" from
# its log line "ready: N cores, rate R".
one_start() {
    local g=$1 line
    mesh_peer peer "$g" --log-level info
    ev_stop_pids 5 "$EV_PID"
    line=$(grep -m1 -o 'ready: [0-9]* cores, rate [0-9]*' "$EV_TMP/peer.log" || true)
    [[ -n $line ]] || {
        cat "$EV_TMP/peer.log" >&2
        ev_die "levpeer did not say what it offers"
    }
    awk '{print $2, $5}' <<<"$line"
}

# condition NAME GROUP: RUNS starts; one table row.
condition() {
    local name=$1 g=$2 k rates=() cores=()
    for ((k = 0; k < RUNS; k++)); do
        read -r c r < <(one_start "$g")
        cores+=("$c")
        rates+=("$r")
    done
    printf '%s\n' "${rates[@]}" | sort -n | awk -v name="$name" -v n="$RUNS" \
        -v cores="$(printf '%s\n' "${cores[@]}" | sort -u | paste -sd/)" '
        { v[NR] = $1 }
        END {
            med = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
            printf "| %s | %d | %s | %d | %d | %d | %.1f %% |\n", name, n, cores, v[1], med, v[NR],
                (v[NR] / v[1] - 1) * 100
        }'
}

# together N: N levpeers started at once (as a mesh's peers start on one
# machine); one row of the rates they announce.
together() {
    local n=$1 i k pids=() rates=() line
    for ((i = 0; i < n; i++)); do
        ev_spawn "" "$EV_TMP/t$i.out" "$EV_TMP/t$i.log" "$LEVPEER" --listen tcp://127.0.0.1:0 \
            --log-level info
        disown "$EV_PID"
        pids+=("$EV_PID")
    done
    for ((i = 0; i < n; i++)); do
        for ((k = 0; k < 600; k++)); do
            grep -q 'ready: ' "$EV_TMP/t$i.log" 2>/dev/null && break
            ev_alive "${pids[i]}" || break
            sleep 0.05
        done
        line=$(grep -m1 -o 'ready: [0-9]* cores, rate [0-9]*' "$EV_TMP/t$i.log" || true)
        [[ -n $line ]] || ev_die "levpeer $i of $n did not say what it offers"
        rates+=("$(awk '{print $5}' <<<"$line")")
    done
    ev_stop_pids 5 "${pids[@]}"
    printf '%s\n' "${rates[@]}" | sort -n | awk -v n="$n" '
        { v[NR] = $1 }
        END {
            med = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
            printf "| %d peers started at once | %d | - | %d | %d | %d | %.1f %% |\n", n, n, v[1],
                med, v[NR], (v[NR] / v[1] - 1) * 100
        }'
}

echo "levpeer: $LEVPEER"
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| condition | starts | cores offered | rate min | median | max | spread |"
echo "|---|---|---|---|---|---|---|"
condition "idle" ""
together 24
hogs_start
condition "beside $(nproc) CPU hogs" ""
hogs_stop
# a CPU controller to make groups in: v1's cpu hierarchy, or v2's with cpu
cpu_controller() {
    local r
    awk '$3 == "cgroup" && $4 ~ /(^|,)cpu(,|$)/ {f = 1} END {exit !f}' /proc/mounts && return 0
    for r in $(awk '$3 == "cgroup2" {print $2}' /proc/mounts); do
        grep -qw cpu "$r/cgroup.controllers" 2>/dev/null && return 0
    done
    return 1
}

if [[ $(id -u) == 0 ]] && cpu_controller; then
    cg_setup
    cg_group q "$QUOTA"
    condition "quota $QUOTA core" q
    hogs_start
    condition "quota $QUOTA core, beside $(nproc) CPU hogs" q
    hogs_stop
else
    echo
    echo "(no quota rows: they need root and a writable cgroup CPU controller)"
fi
