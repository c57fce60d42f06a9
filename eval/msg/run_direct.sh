#!/usr/bin/env bash
# eval/msg/run_direct.sh - builds bench_direct (Release, -O2, in the eval
# build tree) and runs it: the path of a message between VTs with direct
# messages and causal logging (two executor processes running the peer
# controller's engine, and a deployer taking their determinants) beside
# plain libzmq between two processes (eval/README.md, "Direct messages").
# Takes under a minute.
#
#   eval/msg/run_direct.sh [ROUNDS] [SIZE] [deplog|threads|own]
#
# deplog: every message also goes to the deployer, which keeps a copy and
# acknowledges it, senders waiting beyond a window of 256 (the variant of
# docs/DIRECT_MESSAGES.md in which the deployer logs what the VTs send).
# threads: each VT on a thread of its own, handing what it sends to its
# executor's loop (a queue and an eventfd) and taking what it receives
# from it (a condition variable), as an executor's VTs do.
# own: as threads, but a VT's thread sends on a socket of its own itself
# (a DEALER that only sends, under its executor's lock), while the loop
# receives on a ROUTER and hands the VT what the engine delivered.
#
# Environment: LEV_EVAL_BUILD (build tree, default build-eval/ at the top
# of the source tree).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

. eval/build.sh
eval_build bench_direct
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
"$BUILD/eval/bench_direct" "$@"
