#!/usr/bin/env bash
# run_corpus.sh - differential tests of levpp. Each corpus program is built
# natively and run; then transformed with `levpp --main-task`, built
# against libleverage (gcc with the WRONG_CODE errors of driver_common.sh;
# clang -fsyntax-only with the same errors must accept it too) and run
# plainly, under LEV_TORTURE=1 and under
# LEV_TORTURE=7: standard output and exit status must equal the native
# run's. A program whose source holds a line `levpp-test: resume ARGS...`
# is also run with ARGS and a checkpoint file, killed with SIGKILL once a
# checkpoint taken after its third line of output is on disk, and resumed
# with LEV_RESUME in a new process, which is killed once it has printed as
# many lines as the first run: its output must be exactly the native
# output from the line after the checkpoint on, and the killed run must
# have printed every line before it (its output is fully buffered, as
# into any file: a capture flushes it). With ARGS a program must
# never end by itself (e.g. a round count of 0 meaning "until killed"), so
# no run depends on the machine's speed. Programs print only deterministic
# text and flush where they may be killed.
#
# usage: run_corpus.sh OPTIONS ITEM...   (an option: --NAME VALUE or --NAME=VALUE)
#   --levpp PATH     the levpp program
#   --cc CC          the C compiler
#   --lib PATH       libleverage.so (its directory becomes the rpath)
#   --include DIRS   the installed headers' directories, ':'-separated
#   --flags FLAGS    flags for every compile and link (sanitizers), a
#                    CMake ;-list or space-separated
#   --work DIR       scratch directory, emptied first
#   ITEM             relative to this script's directory:
#     corpus/NAME.c          a one-file program
#     corpus/NAME            a directory: a program of all its *.c files,
#                            its subdirectories' too
#     corpus/pending/NAME.c  a program levpp may still refuse: refusal must
#                            be a clean `file:line:col: error:` and a
#                            non-zero exit; if accepted, checked as above
#     /DIR/NAME.c            a one-file program anywhere (absolute path: a
#                            generated one), checked as corpus/NAME.c
#     diag/NAME.expected     a golden diagnostic (format below)
#     diag/pending/NAME.expected  a golden diagnostic levpp does not meet
#                            yet: checked the same way and reported
#                            (PENDING), never a failure
#
# Golden diagnostics: diag/NAME.expected goes with diag/NAME.c. levpp runs
# in the directory of NAME.expected as
# `levpp --main-task NAME.c -o OUT/NAME.lev.c -- CLANG_FLAGS`, or with the
# arguments of a line `# args: ARGS...` (which then replace all of it: no
# input, no -o), in which @OUT@ stands for the output directory OUT,
# @WORK@ for a scratch directory holding a regular file `plain` and an
# empty directory `empty`, and a word @INCS@ for the -I flags of the
# installed headers. It must exit non-zero (not by a signal; exactly N
# with a line `# status: N`), print no sanitizer error (leak reports
# aside: run with detect_leaks=0), leave OUT, @WORK@ and that directory
# as they were (no output, no OUT.tmp), and print on standard error, in
# order, a line matching each line of the expected file that is neither
# blank nor a `#` comment:
#
#   FILE:LINE:COL: error: PHRASE[ | PHRASE...]
#   levpp: error: PHRASE[ | PHRASE...]      (errors with no source location)
#   FILE:LINE:COL: warning: PHRASE[ | PHRASE...]
#
# With `# status: 0` levpp must succeed instead (warnings): its output is
# then allowed in OUT, a leftover OUT/*.tmp is not.
#
# Everything up to `error:` (or `warning:`) must begin the printed line exactly, once the
# printed line is normalised: directories dropped from the file name, the
# path of levpp shortened to `levpp`, clang's `fatal error:` read as
# `error:`. The rest of the printed line must contain one of the PHRASEs
# (case-insensitive). Other lines of standard error (notes, further
# errors) are allowed: the test asserts location and reason, not wording.
#
# Prints one line per item (PASS, REFUSED, FAIL with a short diff or the
# reason); exits 1 if any item failed.
set -euo pipefail

usage() {
    sed -n '/^# usage:/,/^#$/s/^# \{0,1\}//p' "$0" >&2
    exit 2
}

LIMIT=60 # seconds any one run, build or awaited condition may take
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=driver_common.sh
source "$here/driver_common.sh"
# shellcheck source=proc_common.sh
source "$here/proc_common.sh"

failures=0
# Reasons are collected per item; the first one fails it.
fail() {
    echo "FAIL $item: $*"
    failures=$((failures + 1))
    return 1
}

# describe STATUS: how a run ended, for messages.
describe() {
    case $1 in
    124) echo "timed out after ${LIMIT}s" ;;
    1[3-9][0-9] | 2[0-5][0-9]) echo "killed by signal $(($1 - 128)) ($(kill -l $(($1 - 128)) 2>/dev/null || echo '?'))" ;;
    *) echo "exit status $1" ;;
    esac
}

# same LABEL OUT STATUS: compares a run with the native one.
same() {
    local label=$1 out=$2 st=$3
    if ((st != native_status)) || ! cmp -s native.out "$out"; then
        fail "$label: $(describe "$st") (native $native_status), output diff:
$(diff -u --label native --label "$label" native.out "$out" | sed -n '3,14p')
$(sed -n '1,5s/^/  stderr: /p' "${out%.out}.err")"
        return 1
    fi
}

# The ARGS of a `levpp-test: KEY ARGS...` line in the sources, if any.
spec() {
    sed -n "s/.*levpp-test: $1 \\([^*]*\\).*/\\1/p" "${srcs[@]}" | head -n 1 | sed 's/ *$//'
}

# ===================================================================
# Programs
# ===================================================================

# refused ERR OUTDIR: levpp refused cleanly (called when it exited non-zero).
refused() {
    local err=$1 out=$2
    ((levpp_status < 124)) || { fail "levpp $(describe $levpp_status): $(head -n 3 "$err")"; return 1; }
    grep -Eq '^[^ :]+:[0-9]+:[0-9]+: (fatal )?error: ' "$err" ||
        { fail "levpp refused without a file:line:col: error: line: $(head -n 3 "$err")"; return 1; }
    [[ -z $(ls -A "$out") ]] || { fail "levpp left output behind: $(ls -A "$out")"; return 1; }
}

# resume_check PROG ARGS...: checkpoint, SIGKILL, resume in a new process.
# With ARGS the program must never end by itself, so nothing here depends
# on the machine's speed: every run is stopped by a kill once an event has
# happened (lines printed, a checkpoint on disk), and each wait is bounded
# by LIMIT seconds.
resume_check() {
    local prog=$1
    shift
    local ck=$PWD/ck.img
    # Its output fully buffered, as to any file: what it printed before an
    # image is in run1.out once the image is on disk (a capture writes the
    # standard streams out first), so a resume that starts after the
    # last line seen plus one means lines were lost.
    spawn_buffered run1.out run1.err env LEV_CHECKPOINT_FILE="$ck" LEV_CHECKPOINT_MS=20 "$prog" "$@"
    local run1=$pid
    # Three lines, then an image written after them: the first image seen
    # once three lines are out may be older than them, so wait for the
    # next one. Each wait also stops when the run ends.
    three_lines_and_image() {
        { (($(lines_in run1.out) >= 3)) && [[ -s $ck ]]; } || ! kill -0 "$run1" 2>/dev/null
    }
    local sum0=''
    if await three_lines_and_image && [[ -s $ck ]]; then
        sum0=$(cksum <"$ck")
    fi
    newer_image() { [[ $(cksum <"$ck") != "$sum0" ]] || ! kill -0 "$run1" 2>/dev/null; }
    if [[ -z $sum0 ]] || ! await newer_image; then
        stop "$run1" || true
        fail "resume: no checkpoint file after three lines of output within ${LIMIT}s: $(head -n 3 run1.err)"
        return 1
    fi
    if ! stop "$run1"; then
        fail "resume: the run with $* ended by itself ($(lines_in run1.out) lines); with its resume
  arguments a program must run until it is killed: $(head -n 3 run1.err)"
        return 1
    fi
    local killed_at
    killed_at=$(lines_in run1.out)

    # Other arguments and environment: those of the image must win. The
    # resumed run starts at a line from 4 to killed_at + 1; once it has
    # printed killed_at lines it has gone at least three past the kill.
    spawn run2.out run2.err env LEV_RESUME="$ck" "$prog" 1 1
    local run2=$pid
    enough_resumed() { (($(lines_in run2.out) >= killed_at)) || ! kill -0 "$run2" 2>/dev/null; }
    await enough_resumed || true
    if ! stop "$run2"; then
        fail "resume: the resumed run ended by itself after $(lines_in run2.out) lines:
$(head -n 3 run2.out | sed 's/^/  > /')
$(head -n 3 run2.err | sed 's/^/  stderr: /')"
        return 1
    fi
    local n2
    n2=$(lines_in run2.out)
    if ((n2 < killed_at)); then
        fail "resume: the resumed run printed $n2 of $killed_at lines within ${LIMIT}s: $(head -n 3 run2.err)"
        return 1
    fi
    # Compared: its first killed_at lines (it may have printed more before
    # the kill).
    n2=$killed_at
    head -n "$n2" run2.out >resumed.out

    # The native run, as far as any alignment can reach. Killed by SIGPIPE
    # once head has its lines.
    local want=$((2 * killed_at + 1))
    { timeout "$LIMIT" ./native "$@" </dev/null 2>native-long.err || true; } |
        head -n "$want" >long.out || true
    (($(lines_in long.out) == want)) ||
        { fail "resume: the native run with $* printed only $(lines_in long.out) lines"; return 1; }
    cmp -s <(head -n "$killed_at" long.out) <(head -n "$killed_at" run1.out) ||
        { fail "resume: the killed run's output is not a prefix of the native one's:
$(diff <(head -n "$killed_at" long.out) <(head -n "$killed_at" run1.out) | sed -n '1,6s/^/  /p')"; return 1; }

    # Where the resumed output starts in the native one: a line from 4 to
    # killed_at + 1 equal to its first line, from which all n2 lines match.
    local first='' at
    for at in $(awk -v lo=4 -v hi=$((killed_at + 1)) 'NR == FNR { if (FNR == 1) l = $0; next }
            FNR >= lo && FNR <= hi && $0 == l { print FNR }' resumed.out long.out); do
        if cmp -s <(tail -n +"$at" long.out | head -n "$n2") resumed.out; then
            first=$at
            break
        fi
    done
    if [[ -z $first ]]; then
        fail "resume: killed after line $killed_at; the resumed run's $n2 lines are not the native
  output from any line between 4 and $((killed_at + 1)); its first lines:
$(head -n 3 run2.out | sed 's/^/  > /')
$(head -n 3 run2.err | sed 's/^/  stderr: /')"
        return 1
    fi
    resume_note="killed after line $killed_at, resumed at line $first, compared $n2 lines"
}

# check_program ITEM: the differential checks of one program.
check_program() {
    local path=$here/$item pending=0 name out
    [[ $item == /* ]] && path=$item
    [[ $item == */pending/* ]] && pending=1
    name=${item#corpus/}
    [[ $item == /* ]] && name=$(basename "$item")
    name=${name%.c}
    name=${name//\//_}
    srcs=()
    if [[ -d $path ]]; then
        # its *.c files, in subdirectories too (a/util.c and b/util.c: the
        # outputs a/util.lev.c and b/util.lev.c)
        mapfile -t srcs < <(find "$path" -name '*.c' | LC_ALL=C sort)
        progdir=$path
        out=$work/$name/out
    else
        srcs=("$path")
        progdir=$(dirname "$path")
        out=$work/$name/out/$name.lev.c
    fi
    ((${#srcs[@]})) && [[ -e ${srcs[0]} ]] || { fail "no sources"; return 1; }
    mkdir -p "$work/$name/out"
    cd "$work/$name"

    local args
    args=$(spec args)
    # shellcheck disable=SC2086 # the arguments are words
    set -- $args

    "$cc" "${CFLAGS[@]}" -Werror "${FLAGS[@]}" "${srcs[@]}" -o native >native-build.log 2>&1 ||
        { fail "native build: $(head -n 5 native-build.log)"; return 1; }
    run native.out native.err ./native "$@"
    native_status=$status
    ((native_status < 124)) || { fail "native run $(describe $native_status)"; return 1; }

    levpp_status=0
    timeout "$LIMIT" "$levpp" --main-task "${srcs[@]}" -o "$out" -- "${INCS[@]}" "-I$progdir" \
        >levpp.out 2>levpp.err || levpp_status=$?
    if ((levpp_status != 0)); then
        if ((pending)); then
            refused levpp.err "$work/$name/out" || return 1
            echo "REFUSED $item: $(grep -Em1 'error: ' levpp.err)"
            return 0
        fi
        ((levpp_status < 124)) || { fail "levpp $(describe $levpp_status): $(head -n 3 levpp.err)"; return 1; }
        fail "levpp refused it ($(describe $levpp_status)): $(head -n 3 levpp.err)"
        return 1
    fi
    local gen=("$out")
    [[ -d $out ]] && mapfile -t gen < <(find "$out" -name '*.c' | LC_ALL=C sort)
    # The warnings that reveal wrong code are errors in levpp's output.
    "$cc" "${CFLAGS[@]}" "${WRONG_CODE[@]}" "${FLAGS[@]}" "${INCS[@]}" "-I$progdir" "${gen[@]}" \
        "${LINK[@]}" -o lev >lev-build.log 2>&1 ||
        { fail "build of levpp's output: $(grep -m5 -E 'error|undefined' lev-build.log)"; return 1; }
    "$CLANG" -std=gnu11 -fsyntax-only "${WRONG_CODE[@]}" "${INCS[@]}" "-I$progdir" "${gen[@]}" \
        >lev-clang.log 2>&1 ||
        { fail "clang on levpp's output: $(grep -m5 -E 'error' lev-clang.log)"; return 1; }
    local warnings
    warnings=$(grep -c 'warning:' lev-build.log || true)

    run lev.out lev.err ./lev "$@"
    same transformed lev.out $status || return 1
    for every in 1 7; do
        run torture$every.out torture$every.err env LEV_TORTURE=$every ./lev "$@"
        same "LEV_TORTURE=$every" torture$every.out $status || return 1
    done

    resume_note=''
    local resume
    resume=$(spec resume)
    if [[ -n $resume ]]; then
        # shellcheck disable=SC2086 # the arguments are words
        resume_check ./lev $resume || return 1
    fi
    local note=$resume_note
    ((warnings == 0)) || note+="${note:+; }$warnings warnings building levpp's output"
    echo "PASS $item${note:+ ($note)}"
}

# ===================================================================
# Golden diagnostics
# ===================================================================

# A listing of a directory and the checksums of its files, to see that a
# refused run changed nothing in it (one cksum for all the files).
snapshot() {
    (cd "$1" && {
        find . ! -type f | LC_ALL=C sort
        find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r cksum
    })
}

# check_diag ITEM: levpp's errors for one diag/NAME.expected.
check_diag() {
    local expected=$here/$item name dir
    name=$(basename "$item" .expected)
    dir=$(dirname "$expected")
    [[ -f $expected ]] || { fail "no such file"; return 1; }
    local wdir=$work/${item//\//_}
    wdir=${wdir%.expected}
    local out=$wdir/out
    mkdir -p "$out" "$wdir/empty"
    echo "a regular file" >"$wdir/plain"
    local argline want
    argline=$(sed -n 's/^# args: //p' "$expected")
    want=$(sed -n 's/^# status: *\([0-9]*\).*/\1/p' "$expected" | head -n 1)
    local cmd=() word
    if [[ -n $argline ]]; then
        # shellcheck disable=SC2086 # the arguments are words
        for word in $argline; do
            if [[ $word == @INCS@ ]]; then
                cmd+=("${INCS[@]}")
            else
                word=${word//@OUT@/$out}
                cmd+=("${word//@WORK@/$wdir}")
            fi
        done
    else
        cmd=(--main-task "$name.c" -o "$out/$name.lev.c" -- "${INCS[@]}")
    fi
    local before_work before_dir
    before_work=$(snapshot "$wdir")
    before_dir=$(snapshot "$dir")
    levpp_status=0
    (cd "$dir" && timeout "$LIMIT" "$levpp" "${cmd[@]}") >"$wdir/stdout" \
        2>"$wdir/stderr" || levpp_status=$?
    local err=$wdir/stderr
    ((levpp_status < 124)) || { fail "levpp $(describe $levpp_status): $(head -n 3 "$err")"; return 1; }
    local report
    report=$(grep -Em1 'ERROR: (Address|Memory|Thread|UndefinedBehavior)Sanitizer|runtime error: ' "$err" || true)
    [[ -z $report ]] || { fail "sanitizer report: $report"; return 1; }
    if [[ $want == 0 ]]; then
        ((levpp_status == 0)) || { fail "levpp refused it ($(describe $levpp_status)): $(head -n 3 "$err")"; return 1; }
        [[ -z $(find "$out" -name '*.tmp') ]] || { fail "levpp left a temporary behind: $(ls -A "$out")"; return 1; }
    else
        ((levpp_status != 0)) || { fail "levpp accepted it"; return 1; }
        [[ -z $want ]] || ((levpp_status == want)) ||
            { fail "levpp $(describe $levpp_status), expected exit status $want: $(head -n 3 "$err")"; return 1; }
        [[ -z $(ls -A "$out") ]] || { fail "levpp left output behind: $(ls -A "$out")"; return 1; }
        [[ $(snapshot "$wdir" | grep -Ev ' \./std(out|err)$') == "$before_work" ]] ||
            { fail "levpp left something in its scratch directory: $(ls -A "$wdir" "$wdir/empty")"; return 1; }
    fi
    [[ $(snapshot "$dir") == "$before_dir" ]] ||
        { fail "levpp changed its working directory: $(diff <(echo "$before_dir") <(snapshot "$dir") | sed -n '2,4p')"; return 1; }

    # Normalised standard error, one line per line.
    local norm=()
    mapfile -t norm < <(sed -E -e "s#${levpp//#/\\#}#levpp#g" -e 's#^[^ :]*/levpp:#levpp:#' \
        -e 's#^[^ :]*/([^/ :]+:[0-9]+:[0-9]+: )#\1#' -e 's#(^|: )fatal error: #\1error: #' "$err")
    local at=0 line prefix phrases matched i p first='' kind
    while IFS= read -r line; do
        [[ -z ${line//[[:space:]]/} || $line == \#* ]] && continue
        if [[ $line == *"error: "* ]]; then
            kind=error
        elif [[ $line == *"warning: "* ]]; then
            kind=warning
        else
            fail "bad line in $item: $line"
            return 1
        fi
        prefix=${line%%"$kind: "*}$kind:
        phrases=${line#*"$kind: "}
        matched=0
        for ((i = at; i < ${#norm[@]}; i++)); do
            [[ ${norm[i]} == "$prefix"* ]] || continue
            IFS='|' read -r -a alts <<<"$phrases"
            for p in "${alts[@]}"; do
                p=$(sed 's/^ *//; s/ *$//' <<<"$p")
                if [[ -n $p ]] && grep -qiF -- "$p" <<<"${norm[i]#"$prefix"}"; then
                    matched=1
                    break
                fi
            done
            ((matched)) && break
        done
        ((matched)) || {
            fail "expected '$line'; levpp ($(describe $levpp_status)) printed:
$(sed -n '1,6s/^/  /p' "$err")"
            return 1
        }
        at=$((i + 1))
        first=${first:-${norm[i]}}
    done <"$expected"
    ((at > 0)) || { fail "$item lists no diagnostic"; return 1; }
    echo "PASS $item: $first"
}

# check_pending ITEM: a diag/pending/ item, reported and never failed.
check_pending() {
    local before=$failures res
    res=$(failures=0 check_diag) || true
    if [[ $res == PASS* ]]; then
        echo "PENDING $item: now passes; move it to diag/"
    else
        echo "PENDING $item: ${res#FAIL "$item": }"
    fi
    failures=$before
}

# ===================================================================
# Main
# ===================================================================

for item in "$@"; do
    case $item in
    diag/pending/*.expected) check_pending ;;
    diag/*.expected) check_diag || true ;;
    corpus/* | /*.c) check_program || true ;;
    *) fail "unknown item" || true ;;
    esac
    cd "$work"
done
((failures == 0)) || { echo "$failures of $# failed"; exit 1; }
