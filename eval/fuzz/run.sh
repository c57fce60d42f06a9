#!/usr/bin/env bash
# eval/fuzz/run.sh - long runs of the libFuzzer harnesses of tests/fuzz
# (the wire, the membership codec, the image loaders, the TSPLIB reader,
# levpp on C text): builds them in build-fuzz/ with clang (-DLEV_FUZZ=ON),
# fuzzes each for SECONDS from its committed corpus (copied: the corpus
# in the tree is not changed), with its dictionary tests/fuzz/NAME.dict
# if it has one, and prints the executions, the speed, the corpus grown
# and the crashes found, one table row per harness. A crash's input is
# kept in the run's directory, to be added to tests/fuzz/corpus/NAME once
# fixed (ctest replays it from there).
#
#   eval/fuzz/run.sh [SECONDS [HARNESS...]]     (default 60 s, all)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

secs=${1:-60}
shift || true
names=("$@")
((${#names[@]})) || names=(wire membership image tsplib levpp)
[[ $secs =~ ^[0-9]+$ ]] && ((secs > 0)) || { echo "run.sh: SECONDS is a positive number" >&2; exit 2; }
command -v clang >/dev/null || { echo "run.sh: clang is not installed (run.sh test installs it)" >&2; exit 1; }

if [[ ! -f build-fuzz/CMakeCache.txt ]]; then
    CC=clang cmake -S . -B build-fuzz -DLEV_FUZZ=ON >/dev/null
fi
cmake --build build-fuzz -j"$(nproc)" --target fuzz_all >/dev/null

out=$(mktemp -d /tmp/lev-fuzz-XXXXXX)
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "runs kept in $out; $secs s per harness, one process, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| harness | executions | per second | corpus (seeds -> after) | crashes |"
echo "|---|---|---|---|---|"
for n in "${names[@]}"; do
    [[ -x build-fuzz/tests/fuzz_$n ]] || { echo "run.sh: no harness '$n'" >&2; exit 2; }
    mkdir -p "$out/$n/corpus" "$out/$n/crashes"
    cp tests/fuzz/corpus/"$n"/* "$out/$n/corpus/"
    seeds=$(find "$out/$n/corpus" -type f | wc -l)
    dict=()
    [[ -f tests/fuzz/$n.dict ]] && dict=(-dict="$PWD/tests/fuzz/$n.dict")
    rc=0
    (cd "$out/$n/crashes" &&
        "$OLDPWD/build-fuzz/tests/fuzz_$n" -max_total_time="$secs" -max_len=65536 "${dict[@]}" \
            -print_final_stats=1 ../corpus) >"$out/$n/log" 2>&1 || rc=$?
    execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$out/$n/log" | tail -1)
    speed=$(awk '/stat::average_exec_per_sec/ {print $2}' "$out/$n/log" | tail -1)
    after=$(find "$out/$n/corpus" -type f | wc -l)
    crashes=$(find "$out/$n/crashes" -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' | wc -l)
    echo "| $n | ${execs:-?} | ${speed:-?} | $seeds -> $after | $crashes$( ((rc)) && echo " (exit $rc, $out/$n/log)") |"
done
