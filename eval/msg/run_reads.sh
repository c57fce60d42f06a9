#!/usr/bin/env bash
# eval/msg/run_reads.sh - builds bench_reads, levpeer and lagrelay
# (Release, in the eval build tree) and runs bench_reads: a global read
# answered near the reader against one answered at the deployer, on
# loopback and with 20 ms one way between peers (docs/GLOBAL_READS.md,
# eval/README.md). Takes a minute or two.
#
#   eval/msg/run_reads.sh [ROUNDS] [SIZE]
#
# Environment: LEV_EVAL_BUILD (build tree, default build-eval/ at the top
# of the source tree).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

. eval/build.sh
eval_build bench_reads levpeer lagrelay
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
rounds=${1:-5}
size=${2:-1024}
"$BUILD/eval/bench_reads" "$rounds" 0 "$size"
echo
"$BUILD/eval/bench_reads" "$rounds" 20 "$size"
