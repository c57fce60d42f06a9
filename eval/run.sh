#!/usr/bin/env bash
# eval/run.sh - builds the benchmarks (Release, -O2) in a build tree of
# their own and runs them: capture and restore of a VT (bench_image), the
# resident memory of a VT across 100,000 capture and restore cycles
# (bench_image mem), and the memory of idle VTs and the cost of a VT
# switch (bench_vt). Prints the machine, every figure, and the targets met
# or missed.
#
#   eval/run.sh            build, run everything (about 7 minutes)
#   eval/run.sh profile    build, then perf profiles of capture and restore
#
# Then eval/levpp/run.sh: levpp's output against native code, same build.
#
# Environment: LEV_EVAL_BUILD (build tree, default build-eval/ at the top
# of the source tree), IMAGE_REPS (default 15), VT_REPS (default 9).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

. eval/build.sh # BUILD, eval_build
IMAGE_REPS=${IMAGE_REPS:-15}
VT_REPS=${VT_REPS:-9}
MODE=${1:-run}
# Torture mode would capture at every safe point: never while measuring.
unset LEV_TORTURE LEV_CHECKPOINT_FILE LEV_CHECKPOINT_MS

machine() {
    echo "== machine"
    echo "cores: $(nproc)"
    grep -m1 'model name' /proc/cpuinfo | sed 's/.*: /cpu: /' || true
    awk '/MemTotal/ {printf "memory: %.1f GiB\n", $2 / 1048576}' /proc/meminfo
    echo "kernel: $(uname -r)"
    if [[ -r /sys/kernel/mm/transparent_hugepage/enabled ]]; then
        echo "transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled)"
    fi
    echo "compiler: $(${CC:-cc} --version | head -n1)"
    echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
}

build() {
    echo "== build ($BUILD, Release, -O2)"
    eval_build bench_image bench_vt
}

profile() {
    command -v perf >/dev/null || { echo "run.sh: perf is not installed" >&2; exit 1; }
    local data
    data=$(mktemp -d)
    for what in big list; do
        echo "== perf: bench_image $what (capture + restore, self time)"
        perf record -q -F 2000 -o "$data/$what.data" \
            "$BUILD/eval/bench_image" "$what" 15 noref >/dev/null
        perf report -i "$data/$what.data" --stdio --no-children --sort dso,sym 2>/dev/null |
            grep -E '^ +[0-9]+\.[0-9]+%' | head -n 25 || true
    done
    rm -rf "$data"
}

machine
build
if [[ $MODE == profile ]]; then
    profile
    exit 0
fi

out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "== bench_image (best and median of $IMAGE_REPS)"
"$BUILD/eval/bench_image" all "$IMAGE_REPS" | tee -a "$out"
echo "== bench_image mem (resident memory per cycle; one process per way)"
for way in in_place new_vt capture; do
    "$BUILD/eval/bench_image" mem "$way" | tee -a "$out"
done
echo "== bench_vt (best and median of $VT_REPS)"
"$BUILD/eval/bench_vt" all "$VT_REPS" | tee -a "$out"
echo "== targets"
grep -E '^(TARGET|INFO)' "$out"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
LEV_EVAL_BUILD=$BUILD eval/levpp/run.sh
