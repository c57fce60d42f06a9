#!/usr/bin/env bash
# eval/msg/run.sh - builds bench_msg and levpeer (Release, -O2, in the
# eval build tree) and runs them: VT-to-VT round trips and streams between
# two workers beside plain libzmq between two processes, and global lock
# round trips with 8 VTs (eval/README.md, "Messages and global
# variables"). Takes a minute or two.
#
#   eval/msg/run.sh [ROUNDS] [SIZE]
#
# Environment: LEV_EVAL_BUILD (build tree, default build-eval/ at the top
# of the source tree).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

BUILD=${LEV_EVAL_BUILD:-build-eval}
mkdir -p "$BUILD"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" -DLEV_SANITIZE=OFF >"$BUILD/eval-configure.log" 2>&1 ||
    { cat "$BUILD/eval-configure.log"; exit 1; }
cmake --build "$BUILD" --target bench_msg levpeer -j"$(nproc)" >"$BUILD/eval-build.log" 2>&1 ||
    { cat "$BUILD/eval-build.log"; exit 1; }
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
"$BUILD/eval/bench_msg" "$@"
