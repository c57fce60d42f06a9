#!/usr/bin/env bash
# eval/sizes.sh - the largest source files and functions of the project's
# own code (preproc/, runtime/, leverage/, peercontroller/), to watch how
# easy the code stays to enter. A function is counted from the line of
# its name to its closing brace in column 0 (the project's layout, which
# .clang-format keeps).
#
#   eval/sizes.sh [N]     the N largest of each (default 5)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
n=${1:-5}
mapfile -t files < <(git ls-files -- preproc runtime leverage peercontroller | grep -E '\.[ch]$')
echo "== largest files (lines)"
wc -l "${files[@]}" | grep -v ' total$' | sort -rn | head -n "$n"
echo "== largest functions (lines)"
awk 'FNR == 1 { start = 0 }
     /^[A-Za-z_].*\(/ && !/;[ \t]*$/ && !start { sig = $0; start = FNR }
     /^}/ && start {
         name = sig; sub(/\(.*/, "", name); k = split(name, w, /[ *]+/)
         print FNR - start + 1, FILENAME ":" w[k]; start = 0
     }' "${files[@]}" | sort -rn | head -n "$n"
