#!/usr/bin/env bash
# eval/curve/run.sh - what CurveZMQ costs the TSP job: two loopback
# meshes side by side, each a client's peer and two workers of one core,
# one without keys (LEV_INSECURE=1) and one with a mesh key pair (every
# connection CurveZMQ, the client admitted by key); the same lev-tsp job
# on each in turn, ROUNDS times, alternating which goes first. Prints
# each run and the medians with their ratio.
#
#   eval/curve/run.sh [ROUNDS [BUDGET]]       (default 3, 64000 generations)
#
# Environment: LEV_EVAL_BUILD (build tree, default build-eval/).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
. eval/build.sh
eval_build levpeer levctl lev-tsp
rounds=${1:-3}
budget=${2:-64000}
[[ $rounds =~ ^[0-9]+$ && $budget =~ ^[0-9]+$ ]] || { echo "usage: run.sh [ROUNDS [BUDGET]]" >&2; exit 2; }
levpeer=$BUILD/peercontroller/levpeer levctl=$BUILD/peercontroller/levctl
levtsp=$BUILD/samples/tsp/lev-tsp
tmp=$(mktemp -d /tmp/lev-curve-XXXXXX)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
"$levctl" keygen "$tmp/mesh" >/dev/null

. eval/curve/lib.sh
LEV_INSECURE=1 curve_peer plain 127.0.0.1 --cores -1
plain=$ep
LEV_INSECURE=1 curve_peer plain1 127.0.0.1 --cores 1 --join "$plain"
LEV_INSECURE=1 curve_peer plain2 127.0.0.1 --cores 1 --join "$plain"
curve_peer keyed 127.0.0.1 --cores -1 --key "$tmp/mesh.key"
keyed=$ep
curve_peer keyed1 127.0.0.1 --cores 1 --key "$tmp/mesh.key" --join "$keyed"
curve_peer keyed2 127.0.0.1 --cores 1 --key "$tmp/mesh.key" --join "$keyed"
curve_alive "$plain" 3
curve_alive "$keyed" 3 "$tmp/mesh.key"

# run MESH: one lev-tsp job on it; prints its wall time in s.
run() {
    local t0 t1
    t0=$(date +%s.%N)
    if [[ $1 == keyed ]]; then
        LEV_PEER=$keyed LEV_MESH_KEY=$tmp/mesh.key "$levtsp" samples/tsp/data/pr1002.tsp \
            --budget "$budget" --vts 2 --quiet --tour-out "$tmp/t.tour" --svg "$tmp/t.svg" >"$tmp/run.out"
    else
        LEV_PEER=$plain "$levtsp" samples/tsp/data/pr1002.tsp --budget "$budget" --vts 2 \
            --quiet --tour-out "$tmp/t.tour" --svg "$tmp/t.svg" >"$tmp/run.out"
    fi
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}'
}
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown); load $(cut -d' ' -f1-3 /proc/loadavg)"
p=() k=()
for ((r = 1; r <= rounds; r++)); do
    if ((r % 2)); then a=$(run plain); b=$(run keyed); else b=$(run keyed); a=$(run plain); fi
    p+=("$a") k+=("$b")
    echo "round $r: without keys $a s, CurveZMQ $b s ($(tail -n1 "$tmp/run.out"))"
done
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
mp=$(median "${p[@]}") mk=$(median "${k[@]}")
echo "| lev-tsp pr1002, $budget generations, 2 VTs on 2 workers | without keys | CurveZMQ | ratio |"
echo "|---|---|---|---|"
awk -v a="$mp" -v b="$mk" 'BEGIN {printf "| wall time (s), median of the rounds | %.3f | %.3f | %.3fx |\n", a, b, b / a}'
