#!/usr/bin/env bash
# eval/tsp/run.sh - what levpp's rewriting costs the TSP sample's genetic
# algorithm: eval/tsp/bench_ga.c (one island's init and epochs, as a unit
# of lev-tsp runs them) built with samples/tsp/ga.c twice with -O2:
# natively, and through `levpp --main-task` (bench_ga.c and ga.c, polls
# armed, no checkpoint taken) against the in-tree runtime. Both must print
# the same best length. Then REPS runs of each, interleaved: best and
# median kernel times and their ratios (transformed / native), and the
# callgrind instruction counts of one run of each.
#
# usage: eval/tsp/run.sh [INSTANCE [GENS [EPOCHS]]]
#        (default samples/tsp/data/pr1002.tsp 200 2)
# Environment: LEV_EVAL_BUILD (build tree, default build-eval/), REPS
# (default 9), CALLGRIND=0 to skip the instruction counts, KEEP=DIR to
# keep the generated code and binaries.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
top=$PWD
REPS=${REPS:-9}
CALLGRIND=${CALLGRIND:-1}
inst=$(realpath "${1:-samples/tsp/data/pr1002.tsp}")
gens=${2:-200}
epochs=${3:-2}
unset LEV_TORTURE LEV_CHECKPOINT_FILE LEV_CHECKPOINT_MS LEV_RESUME

# shellcheck source=eval/build.sh
source eval/build.sh
echo "== machine"
echo "cores: $(nproc); $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
echo "compiler: $(${CC:-cc} --version | head -n1)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== build ($BUILD: levpp and libleverage, Release, -O2)"
eval_build leverage levpp
BUILD=$(cd "$BUILD" && pwd)
LIB=$BUILD/leverage/libleverage.so
INC=$BUILD/leverage/include
CC=${CC:-cc}
CFLAGS=(-std=gnu11 -O2 -g)
S=$top/samples/tsp

if [[ -n ${KEEP:-} ]]; then
    mkdir -p "$KEEP"
    work=$(cd "$KEEP" && pwd)
else
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work/gen"
"$CC" "${CFLAGS[@]}" -I"$S" eval/tsp/bench_ga.c "$S/ga.c" "$S/tsplib.c" -lm -o "$work/native"
"$BUILD/preproc/levpp" --main-task eval/tsp/bench_ga.c "$S/ga.c" -o "$work/gen" -- -I"$INC" -I"$S" \
    >"$work/levpp.log" 2>&1 || { cat "$work/levpp.log"; exit 1; }
"$CC" "${CFLAGS[@]}" -I"$INC" -I"$S" "$work"/gen/*.lev.c "$S/tsplib.c" "$LIB" \
    -Wl,-rpath,"$(dirname "$LIB")" -lm -o "$work/lev"

args=("$inst" "$gens" "$epochs")
if ! cmp -s <("$work/native" "${args[@]}" 2>/dev/null) <("$work/lev" "${args[@]}" 2>/dev/null); then
    echo "run.sh: the transformed bench_ga's best length differs from the native one's" >&2
    exit 1
fi
ns_of() { "$@" 2>&1 >/dev/null | sed -n 's/^ns //p'; }
stats() { sort -n | awk '{v[NR] = $1} END {printf "%d %d\n", v[1], v[int((NR + 1) / 2)]}'; }
echo "== bench_ga $(basename "$inst") $gens generations x $epochs epochs: $REPS runs of each, interleaved"
: >"$work/native.ns"
: >"$work/lev.ns"
for ((r = 0; r < REPS; r++)); do
    ns_of "$work/native" "${args[@]}" >>"$work/native.ns"
    ns_of "$work/lev" "${args[@]}" >>"$work/lev.ns"
done
read -r nb nm < <(stats <"$work/native.ns")
read -r lb lm < <(stats <"$work/lev.ns")
printf '  native      best %8.2f ms  median %8.2f ms\n' "$(awk -v v="$nb" 'BEGIN {print v / 1e6}')" \
    "$(awk -v v="$nm" 'BEGIN {print v / 1e6}')"
printf '  transformed best %8.2f ms  median %8.2f ms\n' "$(awk -v v="$lb" 'BEGIN {print v / 1e6}')" \
    "$(awk -v v="$lm" 'BEGIN {print v / 1e6}')"
echo "  time ratio  best $(awk -v a="$lb" -v b="$nb" 'BEGIN {printf "%.3f", a / b}')x" \
    " median $(awk -v a="$lm" -v b="$nm" 'BEGIN {printf "%.3f", a / b}')x"
if ((CALLGRIND)) && command -v valgrind >/dev/null; then
    ir() {
        valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
            sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'
    }
    # the same run with 0 epochs: start-up, world and init cancel out
    n1=$(ir "$work/native" "${args[@]}")
    n0=$(ir "$work/native" "$inst" "$gens" 0)
    l1=$(ir "$work/lev" "${args[@]}")
    l0=$(ir "$work/lev" "$inst" "$gens" 0)
    echo "  callgrind, epochs only: native $((n1 - n0)), transformed $((l1 - l0)) instructions:" \
        "$(awk -v a=$((l1 - l0)) -v b=$((n1 - n0)) 'BEGIN {printf "%.3f", a / b}')x"
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
