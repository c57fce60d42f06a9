#!/usr/bin/env bash
# repeat.sh - runs the whole suite of a build tree several times over, to
# show that no test depends on the machine's speed: every test must pass
# every time, also while other processes keep every core busy. Not a test
# itself (ctest does not run it); run it after a change to a test.
#
# usage: tests/repeat.sh [--busy] [--times N] BUILD_DIR [CTEST_ARGS...]
#   --busy      keep one busy process per core running for the whole run
#   --times N   runs of each test (ctest --repeat until-fail:N), default 5
#
# Prints ctest's summary; exits with ctest's status.
set -euo pipefail

usage() {
    sed -n '7,10s/^# \{0,1\}//p' "$0" >&2
    exit 2
}

busy=0 times=5
while (($#)) && [[ $1 == --* ]]; do
    case $1 in
    --busy) busy=1 ;;
    --times)
        (($# >= 2)) || usage
        times=$2
        shift
        ;;
    *) usage ;;
    esac
    shift
done
(($# >= 1)) && [[ -d $1 && $times =~ ^[1-9][0-9]*$ ]] || usage
build=$1
shift

hogs=()
stop_hogs() {
    ((${#hogs[@]})) && kill "${hogs[@]}" 2>/dev/null || true
    ((${#hogs[@]})) && wait "${hogs[@]}" 2>/dev/null || true
}
trap stop_hogs EXIT
if ((busy)); then
    for ((i = 0; i < $(nproc); i++)); do
        # a busy loop that ends by itself after an hour at the latest
        timeout 3600 sh -c 'while :; do :; done' &
        hogs+=($!)
    done
    echo "repeat.sh: ${#hogs[@]} busy processes running"
fi

jobs=$(nproc 2>/dev/null || echo 2)
status=0
ctest --test-dir "$build" --output-on-failure --no-tests=error -j"$jobs" --timeout 600 \
    --repeat until-fail:"$times" "$@" || status=$?
exit $status
