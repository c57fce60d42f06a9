#!/usr/bin/env bash
# eval/curve/msg.sh - what CurveZMQ costs messages between VTs: two
# loopback meshes side by side, each of two deployers (one relaying the
# VTs' messages, one with --messages direct, whose executors send them to
# each other) and two workers of one core, one mesh without keys
# (LEV_INSECURE=1) and one with a mesh key pair (every connection
# CurveZMQ, the executors' direct links too, the client admitted by key).
# ROUNDS times, both meshes are started afresh and `bench_msg pairs`
# (eval/msg/bench_msg.c) runs on each in turn, alternating which goes
# first: between two VTs on different workers, the round trip of a
# SIZE-byte message and the throughput of a one-way stream of them,
# relayed and direct. Prints each round, then a table of the medians with
# their ratios.
#
#   eval/curve/msg.sh [ROUNDS [SIZE]]       (default 5, 1024 bytes)
#
# Fresh meshes each round, so that no round inherits another's state (a
# worker's daemon once grew by gigabytes over a direct stream: eval/README.md,
# "What CurveZMQ costs the TSP job and messages"). The largest resident
# size of a levpeer of each mesh is printed, and the run stops if one
# passes LEV_MSG_RSS_MB (default 8192).
#
# Environment: LEV_EVAL_BUILD (build tree, default build-eval/),
# LEV_MSG_RSS_MB.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
. eval/build.sh
eval_build levpeer levctl bench_msg
rounds=${1:-5}
size=${2:-1024}
if ! [[ $rounds =~ ^[0-9]+$ && $size =~ ^[0-9]+$ ]] || ((rounds < 1 || rounds > 250 || size < 1 || size > 1048576)); then
    echo "usage: msg.sh [ROUNDS (1..250) [SIZE (1..1048576)]]" >&2
    exit 2
fi
levpeer=$BUILD/peercontroller/levpeer levctl=$BUILD/peercontroller/levctl
bench=$BUILD/eval/bench_msg
tmp=$(mktemp -d /tmp/lev-curve-msg-XXXXXX)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$tmp"' EXIT
"$levctl" keygen "$tmp/mesh" >/dev/null
rss_limit=${LEV_MSG_RSS_MB:-8192}
export LEV_EXEC_NICE=0 # executors at normal priority, as bench_msg's own meshes

. eval/curve/lib.sh
declare -A mesh_of rss_max
# peer NAME [ARGS...]: a levpeer on this round's $host, of mesh NAME's prefix.
peer() {
    curve_peer "$1" "$host" "${@:2}"
    mesh_of[${pids[-1]}]=${1%%-*}
}
# mesh NAME [ARGS...]: a relaying deployer, two workers and a deployer
# with --messages direct; sets $relay and $direct to the deployers.
mesh() {
    local name=$1
    shift
    peer "$name-relay" --cores -1 --messages relay "$@"
    relay=$ep
    peer "$name-w1" --cores 1 --join "$relay" "$@"
    peer "$name-w2" --cores 1 --join "$relay" "$@"
    peer "$name-direct" --cores -1 --messages direct --join "$relay" "$@"
    direct=$ep
}
# meshes_up R, meshes_down: both meshes of round R started, and once
# formed their deployers in $plain_relay...; stopped (SIGTERM, then
# SIGKILL after 5 s). Each mesh of each round has a loopback address of
# its own (127.0.R.1, 127.0.R.2): a port a stopped peer frees can then not
# be taken by a peer of a later mesh, which the stopped mesh's last
# messages or reconnections would reach.
meshes_up() {
    host=127.0.$1.1
    LEV_INSECURE=1 mesh plain
    plain_relay=$relay plain_direct=$direct
    host=127.0.$1.2
    mesh keyed --key "$tmp/mesh.key"
    keyed_relay=$relay keyed_direct=$direct
    curve_alive "$plain_relay" 4
    curve_alive "$plain_direct" 4
    curve_alive "$keyed_relay" 4 "$tmp/mesh.key"
    curve_alive "$keyed_direct" 4 "$tmp/mesh.key"
}
meshes_down() {
    local p i
    kill "${pids[@]}" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
        kill -0 "${pids[@]}" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "${pids[@]}" 2>/dev/null || true
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    pids=()
}

# run MESH: one round of bench_msg pairs on it; appends "MESH PATH MEASURE
# VALUE" lines to $tmp/all.
run() {
    local rc=0
    if [[ $1 == keyed ]]; then
        LEV_MESH_KEY=$tmp/mesh.key "$bench" pairs 1 "$size" "$keyed_relay" "$keyed_direct" >"$tmp/run.out" || rc=$?
    else
        "$bench" pairs 1 "$size" "$plain_relay" "$plain_direct" >"$tmp/run.out" || rc=$?
    fi
    if ((rc)); then
        echo "msg.sh: bench_msg failed on the mesh $1 (status $rc) after:" >&2
        cat "$tmp/run.out" >&2
        for f in "$tmp/$1"-*.log; do echo "== ${f##*/}" && tail -n 5 "$f"; done >&2
        exit 1
    fi
    sed "s/^/$1 /" "$tmp/run.out" >>"$tmp/all"
    rss_check
}
# rss_check: the largest resident size of each mesh's levpeers so far, in
# MB; stops the run past the limit (a daemon that grows without bound
# would take the machine's memory).
rss_check() {
    local p m k
    for p in "${pids[@]}"; do
        m=$(($(ps -o rss= -p "$p" 2>/dev/null || echo 0) / 1024))
        k=${mesh_of[$p]}
        ((m <= ${rss_max[$k]:-0})) || rss_max[$k]=$m
        if ((m > rss_limit)); then
            echo "msg.sh: a levpeer of the mesh $k holds $m MB (over $rss_limit MB): stopped" >&2
            exit 1
        fi
    done
}
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "messages of $size bytes between two VTs on different workers; $rounds rounds, alternating"
: >"$tmp/all"
for ((r = 1; r <= rounds; r++)); do
    meshes_up "$r"
    if ((r % 2)); then run plain; run keyed; else run keyed; run plain; fi
    meshes_down
    tail -n 8 "$tmp/all" | awk -v r="$r" '{v[$1 " " $2 " " $3] = $4}
        END {printf "round %d: round trip (us) relayed %s / %s, direct %s / %s; stream (msgs/s) relayed %s / %s, direct %s / %s (without keys / CurveZMQ)\n", r,
             v["plain relay round_trip_us"], v["keyed relay round_trip_us"], v["plain direct round_trip_us"], v["keyed direct round_trip_us"],
             v["plain relay stream_msgs_per_s"], v["keyed relay stream_msgs_per_s"], v["plain direct stream_msgs_per_s"], v["keyed direct stream_msgs_per_s"]}'
done
echo "load at end $(cut -d' ' -f1-3 /proc/loadavg); largest levpeer resident size: without keys ${rss_max[plain]:-?} MB, CurveZMQ ${rss_max[keyed]:-?} MB"
echo
echo "| $size-byte messages, VT to VT on two workers, median of $rounds | without keys | CurveZMQ | ratio |"
echo "|---|---|---|---|"
# median MESH PATH MEASURE
median() {
    awk -v m="$1" -v p="$2" -v k="$3" '$1 == m && $2 == p && $3 == k {print $4}' "$tmp/all" | sort -g |
        awk '{v[NR] = $1} END {if (NR == 0) print "nan"; else print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
for p in relay direct; do
    a=$(median plain "$p" round_trip_us) b=$(median keyed "$p" round_trip_us)
    awk -v p="$p" -v a="$a" -v b="$b" 'BEGIN {printf "| round trip, %s (us) | %.1f | %.1f | %.2fx |\n", (p == "relay" ? "relayed" : "direct"), a, b, b / a}'
done
for p in relay direct; do
    a=$(median plain "$p" stream_msgs_per_s) b=$(median keyed "$p" stream_msgs_per_s)
    awk -v p="$p" -v a="$a" -v b="$b" -v s="$size" 'BEGIN {printf "| stream, %s (msgs/s; MB/s) | %d; %.1f | %d; %.1f | %.2fx |\n", (p == "relay" ? "relayed" : "direct"), a, a * s / 1e6, b, b * s / 1e6, b / a}'
done
