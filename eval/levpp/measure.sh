#!/usr/bin/env bash
# eval/levpp/measure.sh - the measurement of eval/levpp/run.sh on a C file
# of your own, kept outside the project: built natively and through
# `levpp --main-task`, outputs compared, time and callgrind ratios and the
# time to safe point reported the same way. The program must time its
# kernel itself and print `ns N` on standard error (see the kernels here).
#
# usage: eval/levpp/measure.sh FILE.c 'TIMED ARGS' ['CALLGRIND ARGS' 'EMPTY-KERNEL ARGS']
# Without the last two, no instruction counts are taken. The environment
# of run.sh applies (REPS, KEEP, LEVPP, LEV_EVAL_BUILD).
set -euo pipefail
if (($# != 2 && $# != 4)); then
    sed -n '8s/^# \{0,1\}//p' "$0" >&2
    exit 2
fi
file=$(realpath "$1")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if (($# == 4)); then
    BENCH_SPEC="$file|$2|$3|$4" exec "$here/run.sh"
fi
BENCH_SPEC="$file|$2||" CALLGRIND=0 exec "$here/run.sh"
