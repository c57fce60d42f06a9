#!/usr/bin/env bash
# eval/conformance/run.sh - levpp on a public C conformance suite,
# c-testsuite (https://github.com/c-testsuite/c-testsuite): its
# single-exec programs, tests/single-exec/NNNNN.c, each a `main` that
# exits 0 and prints what NNNNN.c.expected holds. For each program:
#
#   native     gcc -std=gnu11 -O1 -w, run (10 s); a program that does not
#              build, does not exit 0 or does not print its .expected is
#              "native fails" and left out of the rest
#   levpp      levpp --main-task (60 s)
#   build      gcc -std=gnu11 -O1 and the WRONG_CODE errors of
#              tests/levpp/driver_common.sh on levpp's output, against
#              libleverage; a WRONG_CODE warning the original program
#              itself draws from gcc stays a warning for that program;
#              then clang -fsyntax-only with the WRONG_CODE errors, for
#              a program clang takes so
#   run        the transformed program plainly (60 s), then with
#              LEV_TORTURE=1 (300 s: a capture and a restore at every safe
#              point): standard output and exit status must be the native
#              run's
#
# Each program gets exactly one class:
#
#   passed        identical output and status, plainly and under torture
#   refused       levpp exited non-zero (its first diagnostic is kept)
#   refused at capture
#                 the plain run is identical, but under torture the
#                 runtime refused a capture and named why (a pointer into
#                 the C library's memory, such as a FILE *, live at a safe
#                 point): the program is not mobile there, and says so
#   uncompilable  levpp accepted it, gcc or clang rejected its output
#   wrong         output or status differs plainly or under torture
#                 (crashes and runtime failures included)
#   timed out     levpp, gcc or a transformed run hit its time limit
#   native fails  (above)
#
# usage: eval/conformance/run.sh SUITE_DIR [-j N] [--levpp PATH] [--build DIR] [--out DIR]
#   SUITE_DIR     a checkout of c-testsuite (or its tests/single-exec)
#   -j N          programs processed at once (default 2)
#   --levpp PATH  the levpp to measure (default BUILD/preproc/levpp)
#   --build DIR   the build tree holding libleverage and its headers
#                 (default build/ at the top of the source tree)
#   --out DIR     where results and the work directory go (default
#                 ${TMPDIR:-/tmp}/levpp-conformance; not in the source tree)
#
# Writes OUT/results.tsv (program, class, first diagnostic or first
# difference), OUT/refusals.txt, OUT/uncompilable.txt and OUT/wrong.txt
# (each reason with its file, line and numbers stripped, counted, with
# its programs), keeps every program's files in OUT/work/NNNNN/, and
# prints the summary line and the share passed of the programs that pass
# natively. Environment: NATIVE_LIMIT, LEVPP_LIMIT, BUILD_LIMIT, RUN_LIMIT,
# TORTURE_LIMIT (seconds; defaults 10, 60, 120, 60, 300), CC (default gcc),
# CLANG (default clang).
set -euo pipefail

usage() {
    sed -n '/^# usage:/,/^#$/s/^# \{0,1\}//p' "$0" >&2
    exit 2
}

NATIVE_LIMIT=${NATIVE_LIMIT:-10}
LEVPP_LIMIT=${LEVPP_LIMIT:-60}
BUILD_LIMIT=${BUILD_LIMIT:-120}
RUN_LIMIT=${RUN_LIMIT:-60}
TORTURE_LIMIT=${TORTURE_LIMIT:-300}
CC=${CC:-gcc}
CLANG=${CLANG:-clang}
export LC_ALL=C # plain quotes in gcc's messages
# As in tests/levpp/driver_common.sh: warnings that mean the code does
# something other than its source says, errors when levpp's output is built.
WRONG_CODE=(-Werror=implicit-function-declaration -Werror=incompatible-pointer-types
    -Werror=int-conversion -Werror=return-type)

# describe STATUS LIMIT: how a run ended.
describe() {
    case $1 in
    124) echo "timed out after ${2}s" ;;
    1[3-9][0-9] | 2[0-5][0-9]) echo "killed by signal $(($1 - 128)) ($(kill -l $(($1 - 128)) 2>/dev/null || echo '?'))" ;;
    *) echo "exit status $1" ;;
    esac
}

# first_error FILE: the first error line of a compiler's or levpp's
# output, else its first line; tabs and newlines made spaces.
first_error() {
    local line
    line=$(grep -m1 -E '(^|: )(fatal )?error:' "$1" || head -n1 "$1" || true)
    printf '%s' "${line//$'\t'/ }"
}

# result CLASS DETAIL: the program's line of results.tsv; ends the worker.
result() {
    printf '%s\t%s\t%s\n' "$name" "$1" "${2//$'\t'/ }" >"$dir/result"
    exit 0
}

# transformed LABEL LIMIT ENV...: runs the transformed program with ENV
# set, for at most LIMIT seconds, and compares it with the native run.
transformed() {
    local label=$1 limit=$2 st=0 detail
    shift 2
    env "$@" timeout -k 5 "$limit" ./lev >"$label.out" 2>"$label.err" </dev/null || st=$?
    ((st != 124)) || result "timed out" "$label: $(describe "$st" "$limit")"
    if ((st != native_st)) && [[ $label == torture ]] && grep -q 'state cannot be captured' "$label.err"; then
        result "refused at capture" "$(head -n1 "$label.err" | sed 's/^[^:]*: //')"
    elif ((st != native_st)); then
        detail="$label: $(describe "$st" "$limit") (native $native_st)"
    elif ! cmp -s native.out "$label.out"; then
        detail="$label: output differs: $(diff native.out "$label.out" | grep -m2 '^[<>]' | tr '\n\t' '  ' || true)"
    else
        return 0
    fi
    [[ -s $label.err ]] && detail+="; stderr: $(head -c 300 "$label.err" | head -n1)"
    result wrong "$detail"
}

# worker NAME: one program, in its own directory of the work directory.
worker() {
    name=$1
    dir=$WORK/$name
    mkdir -p "$dir"
    cd "$dir"
    cp "$SUITE/$name.c" "$name.c"
    local st flags=() f

    # Native build and run.
    st=0
    timeout -k 5 "$BUILD_LIMIT" "$CC" -std=gnu11 -O1 -w "$name.c" -o native -lm >native.build 2>&1 || st=$?
    ((st == 0)) || result "native fails" "gcc: $(describe "$st" "$BUILD_LIMIT"): $(first_error native.build)"
    st=0
    timeout -k 5 "$NATIVE_LIMIT" ./native >native.out 2>native.err </dev/null || st=$?
    native_st=$st
    ((st == 0)) || result "native fails" "run: $(describe "$st" "$NATIVE_LIMIT")"
    if [[ -e $SUITE/$name.c.expected ]] && ! cmp -s native.out "$SUITE/$name.c.expected"; then
        result "native fails" "run: output differs from $name.c.expected"
    fi

    # levpp.
    st=0
    timeout -k 5 "$LEVPP_LIMIT" "$LEVPP" --main-task "$name.c" -o "$name.lev.c" -- "-I$INCLUDE" >levpp.log 2>&1 || st=$?
    case $st in
    0) ;;
    124) result "timed out" "levpp: $(describe "$st" "$LEVPP_LIMIT")" ;;
    *)
        if grep -q -E '(^|: )(fatal )?error:' levpp.log; then
            result refused "$(first_error levpp.log)"
        fi
        result refused "levpp: $(describe "$st" "$LEVPP_LIMIT"), no diagnostic: $(first_error levpp.log)"
        ;;
    esac

    # The WRONG_CODE warnings the original program does not draw are errors.
    "$CC" -std=gnu11 -O1 -c -o /dev/null "${WRONG_CODE[@]}" "$name.c" >native.wrongcode 2>&1 || true
    for f in "${WRONG_CODE[@]}"; do
        grep -q -F -- "[$f]" native.wrongcode || flags+=("$f")
    done
    st=0
    timeout -k 5 "$BUILD_LIMIT" "$CC" -std=gnu11 -O1 "${flags[@]}" "-I$INCLUDE" "$name.lev.c" -o lev \
        "$LIB" "-Wl,-rpath,$(dirname "$LIB")" -lm >lev.build 2>&1 || st=$?
    case $st in
    0) ;;
    124) result "timed out" "gcc: $(describe "$st" "$BUILD_LIMIT")" ;;
    *) result uncompilable "$(first_error lev.build)" ;;
    esac
    # clang too, where it takes the original with the WRONG_CODE errors.
    if "$CLANG" -std=gnu11 -fsyntax-only "${WRONG_CODE[@]}" "$name.c" >native.clang 2>&1; then
        st=0
        timeout -k 5 "$BUILD_LIMIT" "$CLANG" -std=gnu11 -fsyntax-only "${WRONG_CODE[@]}" \
            "-I$INCLUDE" "$name.lev.c" >lev.clang 2>&1 || st=$?
        case $st in
        0) ;;
        124) result "timed out" "clang: $(describe "$st" "$BUILD_LIMIT")" ;;
        *) result uncompilable "clang: $(first_error lev.clang)" ;;
        esac
    fi

    transformed plain "$RUN_LIMIT" -u LEV_TORTURE
    transformed torture "$TORTURE_LIMIT" LEV_TORTURE=1
    result passed ""
}

if [[ ${1:-} == --worker ]]; then
    (($# == 2)) || usage
    worker "$2"
fi

# The command line.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
suite='' jobs=2 levpp='' build=$top/build out=${TMPDIR:-/tmp}/levpp-conformance
while (($#)); do
    case $1 in
    -j | --levpp | --build | --out)
        (($# >= 2)) || usage
        case $1 in
        -j) jobs=$2 ;;
        --levpp) levpp=$2 ;;
        --build) build=$2 ;;
        --out) out=$2 ;;
        esac
        shift 2
        ;;
    -j[0-9]*)
        jobs=${1#-j}
        shift
        ;;
    -*) usage ;;
    *)
        [[ -z $suite ]] || usage
        suite=$1
        shift
        ;;
    esac
done
[[ -n $suite && $jobs =~ ^[1-9][0-9]*$ ]] || usage
[[ -d $suite/tests/single-exec ]] && suite=$suite/tests/single-exec
[[ -d $suite ]] || { echo "no such directory: $suite" >&2; exit 2; }
SUITE=$(cd "$suite" && pwd)
build=$(cd "$build" && pwd)
LEVPP=$(realpath "${levpp:-$build/preproc/levpp}")
LIB=$build/leverage/libleverage.so
INCLUDE=$build/leverage/include
for f in "$LEVPP" "$LIB" "$INCLUDE/leverage.h"; do
    [[ -e $f ]] || { echo "missing: $f (cmake --build BUILD --target levpp leverage)" >&2; exit 2; }
done
OUT=$(realpath -m "$out")
case $OUT/ in
"$top"/*) echo "--out must be outside the source tree: $OUT" >&2; exit 2 ;;
esac
mkdir -p "$OUT"
WORK=$OUT/work
rm -rf "$WORK"
mkdir -p "$WORK"
unset LEV_TORTURE LEV_CHECKPOINT_FILE LEV_CHECKPOINT_MS LEV_RESUME
export SUITE LEVPP LIB INCLUDE WORK CC CLANG NATIVE_LIMIT LEVPP_LIMIT BUILD_LIMIT RUN_LIMIT TORTURE_LIMIT

names=()
for f in "$SUITE"/*.c; do
    [[ -e $f ]] && names+=("$(basename "$f" .c)")
done
((${#names[@]})) || { echo "no programs in $SUITE" >&2; exit 2; }
total=${#names[@]}

echo "suite: $SUITE ($total programs)"
echo "levpp: $LEVPP"
echo "runtime: $LIB"
echo "compiler: $("$CC" --version | head -n1)"
echo "jobs: $jobs; work: $WORK"
start=$SECONDS
printf '%s\n' "${names[@]}" | xargs -P "$jobs" -n 1 "$here/run.sh" --worker ||
    echo "warning: some programs' runs failed in the harness itself (counted as wrong)" >&2

# Results.
results=$OUT/results.tsv
for n in "${names[@]}"; do
    if [[ -s $WORK/$n/result ]]; then
        cat "$WORK/$n/result"
    else
        printf '%s\t%s\t%s\n' "$n" "wrong" "harness: no result"
    fi
done >"$results"

# reasons CLASS: the details of CLASS, with the file, line and column,
# other numbers and quoted names stripped ('x' becomes 'N'), counted,
# most frequent first, each with its programs.
reasons() {
    awk -F'\t' -v class="$1" -v q="'" '
        $2 == class {
            r = $3
            sub(/^[^ :]*:[0-9]+:[0-9]+: /, "", r)
            sub(/^(fatal )?error: /, "", r)
            gsub(/0x[0-9a-fA-F]+/, "N", r)
            gsub(/[0-9]+/, "N", r)
            gsub(q "[^" q " ]*" q, q "N" q, r)
            n[r]++
            p[r] = p[r] " " $1
        }
        END { for (r in n) printf "%d\t%s\t%s\n", n[r], r, p[r] }
    ' "$results" | sort -t$'\t' -k1,1nr -k2,2 |
        awk -F'\t' '{ printf "%4d  %s\n      programs:%s\n", $1, $2, $3 }'
}
{
    reasons refused
    echo "at capture (under torture):"
    reasons "refused at capture"
} >"$OUT/refusals.txt"
reasons uncompilable >"$OUT/uncompilable.txt"
reasons wrong >"$OUT/wrong.txt"

count() { awk -F'\t' -v c="$1" '$2 == c { n++ } END { print n + 0 }' "$results"; }
passed=$(count passed) nfail=$(count "native fails")
echo "time: $((SECONDS - start)) s"
echo "passed $passed / refused $(count refused) / refused at capture $(count "refused at capture") / wrong $(count wrong) / uncompilable $(count uncompilable) / timed out $(count "timed out") / native fails $nfail (of $total)"
if ((total > nfail)); then
    awk -v p="$passed" -v n="$((total - nfail))" 'BEGIN { printf "passed: %.1f %% of the %d programs that pass natively\n", 100 * p / n, n }'
fi
echo "results: $results; reasons: $OUT/refusals.txt, $OUT/uncompilable.txt, $OUT/wrong.txt"
