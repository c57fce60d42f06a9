#!/usr/bin/env bash
# eval/mesh/run.sh - builds bench_mesh and levpeer (Release, -O2, in the
# eval build tree) and runs them: recovery after kill -9 of a worker,
# checkpoint shipping of a VT with 16 MiB live, VT starts through a
# 4-peer mesh, and where 24 VTs go on 24 identical peers, all on
# loopback (eval/README.md, "The mesh: recovery, checkpoint shipping,
# starts"; eval/rate/README.md for placement). Takes a few minutes.
#
#   eval/mesh/run.sh [recovery|shipping|handover|starts|placement|all] [ROUNDS]
#   eval/mesh/run.sh resume [ROUNDS]   the hand-over of an image to resume
#                                     (bench_resume: bytes against a memfd)
#
# Environment: LEV_EVAL_BUILD (build tree, default build-eval/ at the top
# of the source tree).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

. eval/build.sh
if [[ ${1:-} == resume ]]; then
    eval_build bench_resume
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    "$BUILD/eval/bench_resume" "${@:2}"
    exit
fi
eval_build bench_mesh levpeer
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
"$BUILD/eval/bench_mesh" "$@"
