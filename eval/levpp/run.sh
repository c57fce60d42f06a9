#!/usr/bin/env bash
# eval/levpp/run.sh - the cost of levpp's rewriting on hot code. Each
# program here is ordinary C with a `main`; it is built twice with -O2:
# natively, and through `levpp --main-task` against the in-tree runtime
# (polls armed, no checkpoint taken: LEV_TORTURE and the checkpoint
# variables are unset). Both must print the same output. Then:
#
#   time      the program's own timing of its kernel (`ns N` on standard
#             error), REPS runs of each variant interleaved (native,
#             transformed, native, ...); best and median of each and their
#             ratios (transformed / native)
#   callgrind instructions of the kernel at a smaller size: the count of
#             a run at that size minus the count of a run with an empty
#             kernel (so start-up, runtime set-up and allocation cancel
#             out), transformed / native
#   ttsp      time to safe point of the transformed program at the timed
#             size, as the runtime measures it (LEV_TTSP_REPORT=1: the
#             timer requests a poll at every tick, 1 ms, and the safe point
#             that honours it records the time since): maximum and p99, in
#             the worker's CPU time and in wall time
#
# usage: eval/levpp/run.sh [NAME...]    (default: every program)
# Environment: LEV_EVAL_BUILD (build tree, default build-eval/ at the top
# of the source tree, shared with eval/run.sh), REPS (default 7),
# CALLGRIND=0 to skip the instruction counts, KEEP=DIR to keep the
# generated code and binaries in DIR, LEVPP=PATH to transform with another
# levpp (e.g. an older one, for before/after figures).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
top=$PWD
BUILD=${LEV_EVAL_BUILD:-build-eval}
REPS=${REPS:-7}
CALLGRIND=${CALLGRIND:-1}
unset LEV_TORTURE LEV_CHECKPOINT_FILE LEV_CHECKPOINT_MS LEV_RESUME

# name | arguments timed | arguments for callgrind | the same with an empty kernel
BENCHES=(
    "matmul|640 1|160 1|160 0"
    "nbody|5000000|100000|0"
    "gafit|500 100 400|500 100 20|500 100 0"
    "fib|32|24|1"
    "spectral|1000 10|100 10|100 0"
    "fannkuch|10 1|8 1|8 0"
    "mandelbrot|1000 1|150 1|150 0"
    "listwalk|100000 300|10000 30|10000 0"
    "crc|1000000 100|100000 10|100000 0"
    "spmv|200000 50|20000 10|20000 0"
    "isort|14000 1|2000 1|2000 0"
    "nest3|100 1000 1000|10 100 100|0 100 100"
)
# BENCH_SPEC="PATH.c|targs|cgargs|cg0args" measures one C file of your own
# instead (eval/levpp/measure.sh sets it).
if [[ -n ${BENCH_SPEC:-} ]]; then
    BENCHES=("$BENCH_SPEC")
fi

echo "== machine"
echo "cores: $(nproc); $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
echo "compiler: $(${CC:-cc} --version | head -n1)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

echo "== build ($BUILD: levpp and libleverage, Release, -O2)"
mkdir -p "$BUILD"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" -DLEV_SANITIZE=OFF >"$BUILD/eval-configure.log" 2>&1 ||
    { cat "$BUILD/eval-configure.log"; exit 1; }
targets=(leverage)
[[ -n ${LEVPP:-} ]] || targets+=(levpp)
cmake --build "$BUILD" --target "${targets[@]}" -j"$(nproc)" >"$BUILD/eval-levpp-build.log" 2>&1 ||
    { cat "$BUILD/eval-levpp-build.log"; exit 1; }
BUILD=$(cd "$BUILD" && pwd)
LEVPP=${LEVPP:-$BUILD/preproc/levpp}
LIB=$BUILD/leverage/libleverage.so
INC=$BUILD/leverage/include
CC=${CC:-cc}
CFLAGS=(-std=gnu11 -O2 -g)

if [[ -n ${KEEP:-} ]]; then
    mkdir -p "$KEEP"
    work=$(cd "$KEEP" && pwd)
else
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi

# ns_of PROG ARGS...: the kernel time the program reports.
ns_of() {
    local err
    err=$("$@" 2>&1 >/dev/null) || { echo "run.sh: $* failed: $err" >&2; exit 1; }
    sed -n 's/^ns //p' <<<"$err"
}

# best / median of numbers on standard input.
stats() { sort -n | awk '{v[NR] = $1} END {printf "%d %d\n", v[1], v[int((NR + 1) / 2)]}'; }

# instructions PROG ARGS...: Ir of a run under callgrind.
instructions() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
        sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'
}

names=("$@")
rows=()
for spec in "${BENCHES[@]}"; do
    IFS='|' read -r name targs cgargs cg0args <<<"$spec"
    if [[ $name == */* || $name == *.c ]]; then
        src=$(realpath "$name")
        name=$(basename "$name" .c)
    else
        src=$top/eval/levpp/$name.c
    fi
    if ((${#names[@]})) && [[ " ${names[*]} " != *" $name "* ]]; then
        continue
    fi
    d=$work/$name
    mkdir -p "$d"
    "$CC" "${CFLAGS[@]}" "$src" -o "$d/native" -lm
    "$LEVPP" --main-task "$src" -o "$d/$name.lev.c" -- -I"$INC" >"$d/levpp.log" 2>&1 ||
        { cat "$d/levpp.log"; exit 1; }
    "$CC" "${CFLAGS[@]}" -I"$INC" "$d/$name.lev.c" "$LIB" -Wl,-rpath,"$(dirname "$LIB")" -lm \
        -o "$d/lev" >"$d/build.log" 2>&1 || { cat "$d/build.log"; exit 1; }
    # shellcheck disable=SC2086 # the arguments are words
    if ! cmp -s <("$d/native" $targs 2>/dev/null) <("$d/lev" $targs 2>/dev/null); then
        echo "run.sh: $name: the transformed program's output differs from the native one's" >&2
        exit 1
    fi
    echo "== $name ($targs): $REPS runs of each, interleaved"
    : >"$d/native.ns"
    : >"$d/lev.ns"
    for ((r = 0; r < REPS; r++)); do
        # shellcheck disable=SC2086
        ns_of "$d/native" $targs >>"$d/native.ns"
        # shellcheck disable=SC2086
        ns_of "$d/lev" $targs >>"$d/lev.ns"
    done
    read -r nb nm < <(stats <"$d/native.ns")
    read -r lb lm < <(stats <"$d/lev.ns")
    rb=$(awk -v a="$lb" -v b="$nb" 'BEGIN {printf "%.3f", a / b}')
    rm_=$(awk -v a="$lm" -v b="$nm" 'BEGIN {printf "%.3f", a / b}')
    printf '  native      best %8.2f ms  median %8.2f ms\n' "$(awk -v v="$nb" 'BEGIN {print v / 1e6}')" \
        "$(awk -v v="$nm" 'BEGIN {print v / 1e6}')"
    printf '  transformed best %8.2f ms  median %8.2f ms\n' "$(awk -v v="$lb" 'BEGIN {print v / 1e6}')" \
        "$(awk -v v="$lm" 'BEGIN {print v / 1e6}')"
    echo "  time ratio  best ${rb}x  median ${rm_}x"
    cg='-'
    if ((CALLGRIND)) && command -v valgrind >/dev/null; then
        # shellcheck disable=SC2086
        n1=$(instructions "$d/native" $cgargs)
        # shellcheck disable=SC2086
        n0=$(instructions "$d/native" $cg0args)
        # shellcheck disable=SC2086
        l1=$(instructions "$d/lev" $cgargs)
        # shellcheck disable=SC2086
        l0=$(instructions "$d/lev" $cg0args)
        cg=$(awk -v a=$((l1 - l0)) -v b=$((n1 - n0)) 'BEGIN {printf "%.3f", a / b}')
        echo "  callgrind ($cgargs minus $cg0args): native $((n1 - n0)), transformed $((l1 - l0)) instructions: ${cg}x"
    fi
    # time to safe point: the runtime's own histogram (LEV_TTSP_REPORT),
    # the timer asking every running VT for a poll at each tick
    # shellcheck disable=SC2086
    tt=$(LEV_TTSP_REPORT=1 "$d/lev" $targs 2>&1 >/dev/null | sed -n 's/^lev-ttsp: //p')
    ttsp=$(awk '{for (i = 1; i < NF; i += 2) v[$i] = $(i + 1)}
        END {printf "%.3f / %.3f ms (CPU), %.3f / %.3f ms (wall), %d polls",
             v["cpu_max_ns"] / 1e6, v["cpu_p99_ns"] / 1e6, v["wall_max_ns"] / 1e6,
             v["wall_p99_ns"] / 1e6, v["count"]}' <<<"$tt")
    echo "  time to safe point, max / p99: $ttsp"
    ttcell=$(awk '{for (i = 1; i < NF; i += 2) v[$i] = $(i + 1)}
        END {printf "%.3f / %.3f | %.3f / %.3f", v["cpu_max_ns"] / 1e6, v["cpu_p99_ns"] / 1e6,
             v["wall_max_ns"] / 1e6, v["wall_p99_ns"] / 1e6}' <<<"$tt")
    rows+=("| $name | ${rb}x | ${rm_}x | ${cg}x | $ttcell |")
done

echo "== summary (transformed / native; time to safe point in ms)"
echo "| kernel | time, best | time, median | callgrind instructions | TTSP CPU max / p99 | TTSP wall max / p99 |"
echo "| --- | --- | --- | --- | --- | --- |"
printf '%s\n' "${rows[@]}"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
