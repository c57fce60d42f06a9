#!/usr/bin/env bash
# eval/compare.sh - bench_image of a baseline commit and of this tree, side
# by side in one run: both built Release (-O2) from the same benchmark
# source (this tree's eval/bench_image.c, put into the baseline's source),
# then ROUNDS rounds, each running the baseline's and this tree's
# `bench_image all REPS noref` one after the other, and last
# `bench_image mem` of each way for both. Prints every figure labelled
# `base` or `this`. Then, unless LEVPP_EVAL=0, eval/levpp/run.sh twice
# with this tree's runtime: with the baseline's levpp, then with this
# tree's, so the overhead ratios and the time to safe point (measured by
# this runtime either way) of the two pre-processors stand side by side.
#
#   eval/compare.sh COMMIT [ROUNDS]      (default 3 rounds)
#
# Environment: LEV_EVAL_BUILD (this tree's build, default build-eval/; the
# baseline goes in the same name with -base), IMAGE_REPS (default 9).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

COMMIT=${1:?usage: eval/compare.sh COMMIT [ROUNDS]}
ROUNDS=${2:-3}
BUILD=${LEV_EVAL_BUILD:-build-eval}
BASE=$BUILD-base
IMAGE_REPS=${IMAGE_REPS:-9}
unset LEV_TORTURE LEV_CHECKPOINT_FILE LEV_CHECKPOINT_MS

build() { # build SRC DIR
    mkdir -p "$2"
    cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" -DLEV_SANITIZE=OFF >"$2/eval-configure.log" 2>&1 ||
        { cat "$2/eval-configure.log"; exit 1; }
    cmake --build "$2" --target bench_image levpp -j"$(nproc)" >"$2/eval-build.log" 2>&1 ||
        { cat "$2/eval-build.log"; exit 1; }
}

echo "== baseline $(git rev-parse --short "$COMMIT") in $BASE, this tree in $BUILD"
rm -rf "$BASE/src"
mkdir -p "$BASE/src"
git archive "$COMMIT" | tar -x -C "$BASE/src"
cp eval/bench_image.c eval/bench.h "$BASE/src/eval/"
if ! (build "$BASE/src" "$BASE/build") >/dev/null; then
    # The runtime's internal names differ between the two trees: the
    # baseline keeps its own benchmark source, and what differs in it is
    # shown, so a reader can tell it is the same benchmark.
    echo "== this tree's bench_image.c does not build in the baseline; it keeps its own:"
    git archive "$COMMIT" eval/bench_image.c eval/bench.h | tar -x -C "$BASE/src"
    git diff --stat "$COMMIT" -- eval/bench_image.c eval/bench.h
    git diff "$COMMIT" -- eval/bench_image.c eval/bench.h | grep -E '^[-+][^-+]' || true
fi
build "$BASE/src" "$BASE/build"
build . "$BUILD"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

for ((r = 1; r <= ROUNDS; r++)); do
    for side in base this; do
        bin=$BUILD/eval/bench_image
        [[ $side == base ]] && bin=$BASE/build/eval/bench_image
        echo "== round $r: $side"
        "$bin" all "$IMAGE_REPS" noref | grep -E 'cap\+rst|collections|per live byte|^TARGET' |
            sed "s/^/$side /"
    done
done
for way in in_place new_vt capture; do
    for side in base this; do
        bin=$BUILD/eval/bench_image
        [[ $side == base ]] && bin=$BASE/build/eval/bench_image
        "$bin" mem "$way" | grep -E 'after 100000|stopped|per cycle|^TARGET' | sed "s/^/$side /"
    done
done
if [[ ${LEVPP_EVAL:-1} != 0 ]]; then
    echo "== levpp: the baseline's pre-processor, this runtime"
    LEV_EVAL_BUILD=$BUILD LEVPP="$(cd "$BASE/build" && pwd)/preproc/levpp" eval/levpp/run.sh | sed 's/^/base /'
    echo "== levpp: this tree's pre-processor, this runtime"
    LEV_EVAL_BUILD=$BUILD eval/levpp/run.sh | sed 's/^/this /'
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
