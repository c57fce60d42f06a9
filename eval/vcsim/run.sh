#!/usr/bin/env bash
# eval/vcsim/run.sh - builds bench_vcsim (Release, in the eval build tree)
# and runs the simulator of whole virtual computers for a budget of
# seconds: simulated VC-hours, faults by kind and combination, and the
# invariant violations with the seeds that replay them
# (eval/vcsim/README.md). Figures are in simulated time.
#
#   eval/vcsim/run.sh [SECONDS [FIRST_SEED]]     default: 60 s from seed 1
#
# Environment: LEV_EVAL_BUILD (build tree, default build-eval/ at the top
# of the source tree).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

. eval/build.sh
eval_build bench_vcsim
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
"$BUILD/eval/bench_vcsim" "$@"
