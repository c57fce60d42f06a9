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

. eval/build.sh
eval_build bench_msg levpeer
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
"$BUILD/eval/bench_msg" "$@"
