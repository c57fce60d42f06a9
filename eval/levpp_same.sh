#!/usr/bin/env bash
# eval/levpp_same.sh - is levpp's output unchanged? Builds the levpp of a
# baseline commit and this tree's, runs both over every C input the tests
# and benchmarks give levpp, and compares what each run gives byte for
# byte: standard output, standard error (diagnostics), exit status and
# every file written. For a change that must not change behaviour (a
# refactoring), every run must be identical.
#
#   eval/levpp_same.sh COMMIT
#
# The inputs: every corpus program (one file, or a directory of several
# in one run), every golden diagnostic's source, the benchmark kernels of
# eval/levpp/, the time-to-safe-point nests, the task-mode sources (one run
# of two inputs) and the programs gen_unbraced writes; each with
# --main-task, without it, and with --main-task --no-auto-poll. Both
# binaries run from the same path with the same arguments, in the same
# directory, so that nothing but their code differs.
#
# Environment: LEV_EVAL_BUILD (this tree's build, default build-eval/; the
# baseline goes in the same name with -base). Prints one line per run that
# differs and a closing count; exits 1 if any run differs.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
top=$PWD

COMMIT=${1:?usage: eval/levpp_same.sh COMMIT}
BUILD=${LEV_EVAL_BUILD:-build-eval}
BASE=$BUILD-base
WORK=$top/$BUILD/levpp-same

build() { # build SRC DIR TARGET...
    local src=$1 dir=$2
    shift 2
    mkdir -p "$dir"
    cmake -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" -DLEV_SANITIZE=OFF >"$dir/eval-configure.log" 2>&1 ||
        { cat "$dir/eval-configure.log"; exit 1; }
    cmake --build "$dir" --target "$@" -j"$(nproc)" >"$dir/eval-build.log" 2>&1 ||
        { cat "$dir/eval-build.log"; exit 1; }
}

echo "== baseline $(git rev-parse --short "$COMMIT") in $BASE, this tree in $BUILD"
rm -rf "$BASE/src"
mkdir -p "$BASE/src"
git archive "$COMMIT" | tar -x -C "$BASE/src"
build "$BASE/src" "$BASE/build" levpp
build . "$BUILD" levpp levpp_gen_unbraced

rm -rf "$WORK"
mkdir -p "$WORK/gen" "$WORK/bin"
"$BUILD/tests/levpp_gen_unbraced" "$WORK/gen" >/dev/null

T=$top/tests/levpp
INC=(-I"$top/leverage")
runs=0
differ=0

# one SIDE NAME DIR ARGS...: runs the SIDE's levpp in DIR with ARGS, in
# which @OUT@ stands for an empty output directory; keeps what it gave in
# $WORK/SIDE/NAME.
one() {
    local side=$1 name=$2 dir=$3 a=() x st=0
    shift 3
    local out=$WORK/out
    rm -rf "$out" && mkdir -p "$out"
    for x in "$@"; do a+=("${x//@OUT@/$out}"); done
    (cd "$dir" && timeout 120 "$WORK/bin/levpp" "${a[@]}") >"$out/.stdout" 2>"$out/.stderr" ||
        st=$?
    echo "$st" >"$out/.status"
    mkdir -p "$WORK/$side"
    mv "$out" "$WORK/$side/$name"
}

# case NAME DIR ARGS...: the same run with each levpp, compared.
case_() {
    local name=$1
    cp "$BASE/build/preproc/levpp" "$WORK/bin/levpp"
    one base "$@"
    cp "$BUILD/preproc/levpp" "$WORK/bin/levpp"
    one this "$@"
    runs=$((runs + 1))
    if ! diff -r "$WORK/base/$name" "$WORK/this/$name" >"$WORK/$name.diff" 2>&1; then
        differ=$((differ + 1))
        echo "DIFFERS $name: $(head -n 3 "$WORK/$name.diff" | tr '\n' ' ')"
    fi
}

# modes NAME DIR INPUT... : the three modes of one run; several inputs
# write into a directory, one into a file.
modes() {
    local name=$1 dir=$2
    shift 2
    local o=@OUT@/out.lev.c
    (($# > 1)) && o=@OUT@
    case_ "mt_$name" "$dir" --main-task "$@" -o "$o" -- "${INC[@]}" -I"$dir" -I"$dir/include"
    case_ "plain_$name" "$dir" "$@" -o "$o" -- "${INC[@]}" -I"$dir" -I"$dir/include"
    case_ "nap_$name" "$dir" --main-task --no-auto-poll "$@" -o "$o" -- \
        "${INC[@]}" -I"$dir" -I"$dir/include"
}

for f in "$T"/corpus/*.c "$T"/diag/*.c "$top"/eval/levpp/*.c "$WORK"/gen/*.c \
    "$T"/ttsp/nests.c "$T"/tasks/*.c; do
    d=$(dirname "$f")
    modes "$(basename "$d")_$(basename "$f" .c)" "$d" "$f"
done
for d in "$T"/corpus/*/ "$T"/diag/dup_a; do
    d=${d%/}
    mapfile -t inputs < <(ls "$d"/*.c)
    modes "dir_$(basename "$d")" "$d" "${inputs[@]}"
done
modes tasks_run "$T/tasks_run" "$T/tasks_run/tasks_a.c" "$T/tasks_run/tasks_b.c"

echo "levpp-same: $runs runs, $differ differ"
((differ == 0))
