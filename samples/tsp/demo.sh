#!/usr/bin/env bash
# demo.sh - the main job of Leverage (`./run.sh main`): a local mesh of
# levpeer processes runs the TSP genetic algorithm, and one worker is
# killed with SIGKILL in the middle of the run; its VTs resume on the other
# workers from their checkpoints and the run ends with the same tour it
# would have found without the fault.
#
#   demo.sh BUILD_DIR [INSTANCE [LEV-TSP OPTIONS...]]
#
# INSTANCE defaults to the sample's pr1002.tsp (1,002 cities). The mesh: one peer for the
# client (it deploys, offers no core) and LEV_DEMO_WORKERS (default 3)
# workers of one core each, on loopback, with keys: every connection is
# CurveZMQ with the demo's mesh key pair (made once with `levctl keygen`
# in BUILD_DIR/tsp-demo/keys/), which the client uses too. The tour and
# its picture go to BUILD_DIR/tsp-demo/.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd "${1:?usage: demo.sh BUILD_DIR [INSTANCE [OPTIONS...]]}" && pwd)
shift
instance=${1:-$here/data/pr1002.tsp}
(($#)) && shift
workers=${LEV_DEMO_WORKERS:-3}

levpeer=$build/peercontroller/levpeer
levctl=$build/peercontroller/levctl
levtsp=$build/samples/tsp/lev-tsp
for p in "$levpeer" "$levctl" "$levtsp"; do
    [[ -x $p ]] || { echo "demo: $p was not built" >&2; exit 1; }
done

out=$build/tsp-demo
mkdir -p "$out/keys"
[[ -f $out/keys/mesh.key ]] || "$levctl" keygen "$out/keys/mesh" >/dev/null
export LEV_MESH_KEY=$out/keys/mesh.key # lev-tsp's and levctl's keys: the mesh's own pair
run=$(mktemp -d)
pids=()
cleanup() {
    local pid i
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do
        for ((i = 0; i < 100; i++)); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.05
        done
        kill -KILL "$pid" 2>/dev/null || true
    done
    rm -rf "$run"
}
trap cleanup EXIT

# start_peer NAME ARGS...: starts a levpeer on a free loopback port and
# sets $endpoint to the endpoint it prints once it is ready.
start_peer() {
    local name=$1 i
    shift
    "$levpeer" --listen tcp://127.0.0.1:0 --key "$LEV_MESH_KEY" --period-ms 300 \
        --probe-timeout-ms 250 --suspect-ms 900 --log-level warn "$@" \
        >"$run/$name.out" 2>"$run/$name.log" &
    pids+=($!)
    echo $! >"$run/$name.pid"
    disown $! # its death by the killer is no news
    for ((i = 0; i < 300; i++)); do
        endpoint=$(head -n1 "$run/$name.out" 2>/dev/null || true)
        [[ $endpoint == tcp://* ]] && return 0
        kill -0 "${pids[-1]}" 2>/dev/null || break
        sleep 0.05
    done
    echo "demo: levpeer $name did not start:" >&2
    cat "$run/$name.log" >&2
    exit 1
}

start_peer client --cores -1
client=$endpoint
declare -A worker_pid
for ((w = 1; w <= workers; w++)); do
    start_peer "worker$w" --cores 1 --join "$client"
    worker_pid[$endpoint]=$(cat "$run/worker$w.pid")
done
echo "demo: a mesh of $((workers + 1)) levpeers on loopback, CurveZMQ with the key pair in $out/keys: the client's peer $client and $workers workers of one core each"

# The killer: once a third of the run's units are done and every VT holds
# a checkpoint, it kills the worker that runs the most VTs.
killer() {
    local i status done total host victim=
    for ((i = 0; i < 6000; i++)); do
        sleep 0.1
        [[ -f $run/progress ]] || continue
        read -r done total _ <"$run/progress" || continue
        ((total > 0 && done * 3 >= total)) || continue
        status=$("$levctl" status --peer "$client" --json --timeout 2000 2>/dev/null | tr -d ' \n') ||
            continue
        [[ $status == *'"task":"tsp_worker"'* ]] || continue
        [[ $status == *'"checkpoint_age_ms":-1'* ]] && continue
        host=$(grep -o '"state":"running","host":"[^"]*"' <<<"$status" | sed 's/.*"host":"\(.*\)"/\1/' |
            sort | uniq -c | sort -rn | awk '{print $2}' | head -n1)
        victim=${worker_pid[$host]:-}
        [[ -n $victim ]] && break
    done
    [[ -n $victim ]] || return 0
    printf '\ndemo: killing worker %s (pid %s) with SIGKILL in the middle of the run; it runs VT(s) %s\n' \
        "$host" "$victim" \
        "$(grep -o '"id":[0-9]*,"task":"tsp_worker","state":"running","host":"'"$host"'"' <<<"$status" |
            sed 's/"id":\([0-9]*\).*/\1/' | paste -sd' ')"
    kill -KILL "$victim"
}
killer &
killer_pid=$!

name=$(basename "$instance" .tsp)
rc=0
LEV_PEER=$client "$levtsp" "$instance" --tour-out "$out/$name.tour" --svg "$out/$name.svg" \
    --progress-file "$run/progress" "$@" || rc=$?
kill "$killer_pid" 2>/dev/null || true
exit $rc
