#!/usr/bin/env bash
# style.sh - the style checks of the test suite: the project's C sources
# must be formatted as the checked-in .clang-format says, no source file of
# the product may grow past 1,200 lines, and cppcheck must find nothing in
# them with the checks chosen below.
#
# usage: style.sh BUILD_DIR
#   BUILD_DIR  a configured build tree; its compile_commands.json gives
#              cppcheck every file the build compiles with its real flags,
#              including the code levpp generates for the tests
#
# What is checked, and why:
#   clang-format  every .c and .h that the project writes: runtime/,
#                 preproc/, leverage/, samples/, eval/ and tests/, except
#                 the inputs of levpp's corpus, diagnostics and checks
#                 (tests/levpp/corpus, diag, checks): they are C as other
#                 people write it, odd layouts on purpose. Generated code
#                 keeps the user's layout (#line maps it back), so it is
#                 not formatted.
#   size          no file of preproc/, runtime/, leverage/ or
#                 peercontroller/ over 1,200 lines
#   cppcheck      --enable=warning,portability,performance: real defects
#                 (uninitialised reads, bad format strings, sizeof mistakes,
#                 non-portable casts), not opinions. Every file of the build
#                 is analysed with its own flags (compile_commands.json),
#                 the generated task modules of the tests included; inputs
#                 of levpp's tests that are compiled natively are too. A
#                 finding is fixed, or silenced on its line with a
#                 `cppcheck-suppress ID` comment saying why. One check is
#                 off in generated code (*.lev.c) only: nullPointer, which
#                 takes the unevaluated operand of `__typeof__(fr->x)`, with
#                 which levpp declares a frame's C locals, for a read of a
#                 null frame pointer.
#
# Prints each finding; exits 1 if there is any.
set -euo pipefail

build=${1:?usage: style.sh BUILD_DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"
status=0

# --- format ---------------------------------------------------------------
mapfile -t sources < <(git ls-files -- '*.c' '*.h' 2>/dev/null ||
    find runtime preproc leverage samples eval tests -name '*.[ch]')
formatted=()
for f in "${sources[@]}"; do
    case $f in
    tests/levpp/corpus/* | tests/levpp/diag/* | tests/levpp/checks/*) ;;
    *) formatted+=("$f") ;;
    esac
done
if ! clang-format --dry-run --Werror "${formatted[@]}" 2>"$build/style-format.log"; then
    echo "style: FAIL: files differ from .clang-format (fix: clang-format -i FILE):"
    grep -Eo '^[^: ]+\.[ch]:[0-9]+:[0-9]+: ' "$build/style-format.log" | cut -d: -f1 | sort -u |
        sed 's/^/  /'
    status=1
else
    echo "style: clang-format: ${#formatted[@]} files as .clang-format says"
fi

# --- size -------------------------------------------------------------------
# A source file of the product is one subsystem a reader can take in: past
# MAX_LINES it is split (eval/sizes.sh lists the largest files and
# functions).
MAX_LINES=1200
big=$(git ls-files -- preproc runtime leverage peercontroller 2>/dev/null | grep -E '\.[ch]$' |
    xargs -r wc -l | grep -v ' total$' | awk -v max=$MAX_LINES '$1 > max { print "  " $2 " (" $1 " lines)" }')
if [[ -n $big ]]; then
    echo "style: FAIL: source files over $MAX_LINES lines, to split by subsystem:"
    echo "$big"
    status=1
else
    echo "style: size: no source file over $MAX_LINES lines"
fi

# --- cppcheck ---------------------------------------------------------------
[[ -f $build/compile_commands.json ]] || {
    echo "style: FAIL: no $build/compile_commands.json" >&2
    exit 1
}
mkdir -p "$build/cppcheck"
if ! cppcheck -q --project="$build/compile_commands.json" \
    --cppcheck-build-dir="$build/cppcheck" \
    --enable=warning,portability,performance --inline-suppr \
    --suppress=missingIncludeSystem --suppress='nullPointer:*.lev.c' --error-exitcode=1 \
    --template='{file}:{line}:{column}: {severity}: {message} [{id}]' \
    -j"$(nproc 2>/dev/null || echo 2)" 2>"$build/style-cppcheck.log"; then
    echo "style: FAIL: cppcheck:"
    grep -E '^[^ ]+:[0-9]+:[0-9]+: ' "$build/style-cppcheck.log" | sort -u | sed 's/^/  /'
    status=1
else
    echo "style: cppcheck: no findings"
fi
exit "$status"
