# shellcheck shell=bash disable=SC2154
# eval/curve/lib.sh - what the CurveZMQ benchmarks (run.sh, msg.sh) share:
# starting a levpeer and waiting for a mesh to form. Sourced; the caller
# sets $levpeer, $levctl and $tmp, and an array pids for its clean-up.

# curve_peer NAME HOST [ARGS...]: starts a levpeer listening on HOST (its
# output and log in $tmp/NAME.*), adds it to pids, and sets $ep once it
# is ready; exits with its log if it is not within 10 s.
curve_peer() {
    local name=$1 host=$2 i
    shift 2
    "$levpeer" --listen "tcp://$host:0" --log-level warn "$@" >"$tmp/$name.out" 2>"$tmp/$name.log" &
    pids+=($!)
    for ((i = 0; i < 200; i++)); do
        ep=$(head -n1 "$tmp/$name.out" 2>/dev/null || true)
        [[ $ep == tcp://* ]] && return 0
        sleep 0.05
    done
    cat "$tmp/$name.log" >&2
    exit 1
}

# curve_alive EP N [KEY]: waits (bounded: 30 s) until the peer at EP sees
# N peers alive (asked with the mesh key KEY, if given); exits saying what
# it sees if it does not.
curve_alive() {
    local i n
    for ((i = 0; i < 150; i++)); do
        n=$(LEV_MESH_KEY=${3:-} "$levctl" status --peer "$1" --json --timeout 1000 2>/dev/null |
            grep -o '"state": *"alive"' | wc -l) || n=0
        ((n >= $2)) && return 0
        sleep 0.2
    done
    echo "${0##*/}: the mesh of $1 did not form; it sees:" >&2
    LEV_MESH_KEY=${3:-} "$levctl" status --peer "$1" --timeout 1000 >&2 || true
    exit 1
}
