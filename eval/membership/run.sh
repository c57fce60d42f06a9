#!/usr/bin/env bash
# eval/membership/run.sh - builds bench_membership (Release, -O2, in the
# eval build tree) and runs it: the membership protocol on simulated
# meshes of 32, 256 and 1,024 peers, a few seeds each, as a Markdown table
# (eval/README.md, "Membership at scale"). The figures are in simulated
# time, so they do not depend on the machine; the run takes a minute or
# two of CPU, mostly the 1,024 peers.
#
#   eval/membership/run.sh [SEEDS [N...]]     default: 3 seeds, 32 256 1024
#   eval/membership/run.sh slow [SEEDS [N]]   a slow peer, local health off
#                                             and on (README.md); default 5
#                                             seeds of 16 peers
#
# Environment: LEV_EVAL_BUILD (build tree, default build-eval/ at the top
# of the source tree).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

. eval/build.sh
eval_build bench_membership
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
"$BUILD/eval/bench_membership" "$@"
