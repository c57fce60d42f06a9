#!/usr/bin/env bash
# run_checks.sh - checks of levpp that are not one program or one golden
# diagnostic.
#
#   compdb  `-p BUILD_DIR`: checks/compdb/compdb.c needs a -I and a -D that
#           only a compile_commands.json (written into the scratch
#           directory) gives. With -p levpp must succeed and its output
#           build and print the value the -D implies; a -U after `--`
#           must undo the database's -D; without -p levpp must fail
#           with the missing header's error and leave no output. Paths in
#           the entry (the input, -I/-isystem/-iquote DIR) are relative to
#           its directory.
#   line    `#line`: checks/line_error.c, transformed, then compiled with
#           -Werror=pointer-arith: every error the compiler reports must be in
#           line_error.c (none in the generated file) on a line marked
#           `levpp-line-error`, and every marked line must get one.
#   moving  torture moves memory: each checks/moving/NAME.c follows a
#           pointer it hid in an integer across a safe point. Built from
#           levpp's output, it must run plainly as it does natively (exit
#           status 0, same output); under LEV_TORTURE=1 and =7, where
#           every object and frame moves and the old memory is poison,
#           it must not (a signal, a non-zero exit or other output); a
#           line `moving-expects: TEXT` in NAME.c asks for TEXT in the
#           torture runs' standard error as well.
#   exit    checks/exit/exit_resume.c registers atexit functions, then
#           runs until a file exists: run with a checkpoint file, killed
#           with SIGKILL once an image taken after its third line is on
#           disk (no function may have run), then resumed in a new process
#           and told to stop: the functions registered before the
#           checkpoint must run at its exit, the last registered first.
#   jumps   a longjmp the runtime must refuse: each checks/jumps/NAME.c
#           (undefined in C, so not run natively), built from levpp's
#           output, must abort (SIGABRT) plainly and under LEV_TORTURE=1,
#           printing the text of its line `jumps-expects: TEXT` on
#           standard error.
#   stdio_out, stdio_in  the standard streams across a SIGKILL and a
#           resume: every stream, kind of file and buffering (see
#           stdio_checks.sh).
#
# usage: run_checks.sh OPTIONS CHECK...   (options as in run_corpus.sh)
#   --levpp PATH  --cc CC  --lib PATH  --include DIRS  --flags FLAGS  --work DIR
#
# Prints one line per check (PASS or FAIL with the reason);
# exits 1 if any check failed.
set -euo pipefail

usage() {
    sed -n '/^# usage:/,/^#   --levpp/s/^# \{0,1\}//p' "$0" >&2
    exit 2
}

LIMIT=60 # seconds any one run or build may take
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=driver_common.sh
source "$here/driver_common.sh"
# shellcheck source=proc_common.sh
source "$here/proc_common.sh"
# shellcheck source=stdio_checks.sh
source "$here/stdio_checks.sh"

failures=0
fail() {
    echo "FAIL $check: $*"
    failures=$((failures + 1))
    return 1
}

# levpp_run ERR ARGS...: runs levpp from the current directory; sets $status.
levpp_run() {
    local err=$1
    shift
    status=0
    timeout "$LIMIT" "$levpp" "$@" >/dev/null 2>"$err" </dev/null || status=$?
}

# sane ERR: no crash, no sanitizer report in levpp's run.
sane() {
    ((status < 124)) || { fail "levpp ended with status $status: $(head -n 3 "$1")"; return 1; }
    ! grep -Eq 'ERROR: (Address|Memory|Thread|UndefinedBehavior)Sanitizer|runtime error: ' "$1" ||
        { fail "sanitizer report: $(grep -Em1 'Sanitizer|runtime error' "$1")"; return 1; }
}

# db DIR DIRECTORY COMMAND FILE: writes DIR/compile_commands.json, one entry.
db() {
    mkdir -p "$1"
    printf '[\n  {\n    "directory": "%s",\n    "command": "%s",\n    "file": "%s"\n  }\n]\n' \
        "$2" "$3" "$4" >"$1/compile_commands.json"
}

check_compdb() {
    local src=$here/checks/compdb dir=$work/compdb
    mkdir -p "$dir/run"
    cd "$dir/run" # not the database's directory: its paths are its own
    local input=$src/compdb.c

    # Without -p: the header is missing; a clean refusal, nothing written.
    mkdir -p "$dir/none"
    levpp_run "$dir/none.err" --main-task "$input" -o "$dir/none/compdb.lev.c" -- "${INCS[@]}"
    sane "$dir/none.err" || return 1
    ((status != 0)) || { fail "without -p levpp accepted it"; return 1; }
    grep -Eq '^[^ ]*compdb\.c:5:10: (fatal )?error: .*compdb_scale\.h' "$dir/none.err" ||
        { fail "without -p: no missing-header error at compdb.c:5:10: $(head -n 3 "$dir/none.err")"; return 1; }
    [[ -z $(ls -A "$dir/none") ]] || { fail "without -p levpp left output behind: $(ls -A "$dir/none")"; return 1; }

    # With -p, in the form CMake writes: relative -I, absolute input last.
    db "$dir/build" "$src" "$cc -Iinclude -DCOMPDB_FACTOR=2 -o compdb.o -c $input" "$input"
    build_and_run "with -p" "18" -p "$dir/build" || { fail "$last_failure"; return 1; }
    # Flags after `--` come after the database's: -U undoes its -D.
    mkdir -p "$dir/undef"
    levpp_run "$dir/undef.err" --main-task -p "$dir/build" "$input" -o "$dir/undef/compdb.lev.c" \
        -- "${INCS[@]}" -UCOMPDB_FACTOR
    sane "$dir/undef.err" || return 1
    ((status != 0)) && grep -q 'COMPDB_FACTOR comes from the compilation database' "$dir/undef.err" ||
        { fail "-U after -- did not come after the database's -D (levpp exit status $status)"; return 1; }
    [[ -z $(ls -A "$dir/undef") ]] || { fail "levpp left output behind: $(ls -A "$dir/undef")"; return 1; }

    # Hand-written forms: the input relative to the entry's directory and
    # not last, and -I, -isystem, -iquote with the directory as a separate
    # argument (relative to the entry's directory).
    db "$dir/rel" "$src" "$cc -c compdb.c -o compdb.o -Iinclude -DCOMPDB_FACTOR=2" "$input"
    build_and_run "with -p (input relative, not last)" "18" -p "$dir/rel" ||
        { fail "$last_failure"; return 1; }
    local opt
    for opt in -I -isystem -iquote; do
        db "$dir/sep$opt" "$src" "$cc $opt include -DCOMPDB_FACTOR=2 -o compdb.o -c $input" "$input"
        build_and_run "with -p ($opt DIR)" "18" -p "$dir/sep$opt" || { fail "$last_failure"; return 1; }
    done
    echo "PASS $check"
}

# build_and_run LABEL EXPECTED LEVPP_ARGS...: levpp --main-task on
# compdb.c with the arguments (and the installed headers, unless `--` is
# among them), then its output built and run: it must print EXPECTED.
# Returns 1 with the reason in $last_failure.
last_failure=''
build_and_run() {
    local label=$1 want=$2
    shift 2
    local args=("$@") d
    [[ " ${args[*]} " == *" -- "* ]] || args+=(-- "${INCS[@]}")
    d=$work/compdb/out_${label//[^a-zA-Z0-9]/_}
    mkdir -p "$d"
    levpp_run "$d/levpp.err" --main-task "$here/checks/compdb/compdb.c" -o "$d/compdb.lev.c" "${args[@]}"
    last_failure="$label: levpp exit status $status: $(head -n 2 "$d/levpp.err" | tr '\n' ' ')"
    ((status == 0)) && ! grep -Eq 'ERROR: (Address|Memory|Thread|UndefinedBehavior)Sanitizer|runtime error: ' "$d/levpp.err" || return 1
    "$cc" "${CFLAGS[@]}" "${FLAGS[@]}" "${INCS[@]}" "-I$here/checks/compdb/include" \
        -DCOMPDB_FACTOR=2 "$d/compdb.lev.c" "${LINK[@]}" -o "$d/prog" \
        >"$d/build.log" 2>&1 || {
        last_failure="$label: the output does not build: $(grep -m3 error "$d/build.log" | tr '\n' ' ')"
        return 1
    }
    local got
    got=$(timeout "$LIMIT" "$d/prog" 2>&1) || true
    [[ $got == "$want" ]] || { last_failure="$label: printed '$got', expected '$want'"; return 1; }
}

check_line() {
    local src=$here/checks/line_error.c dir=$work/line
    mkdir -p "$dir"
    cd "$dir"
    levpp_run levpp.err --main-task "$src" -o line_error.lev.c -- "${INCS[@]}"
    sane levpp.err || return 1
    ((status == 0)) || { fail "levpp refused it: $(head -n 3 levpp.err)"; return 1; }
    # The output builds; with -Werror=pointer-arith, the errors must be the user's.
    "$cc" "${CFLAGS[@]}" "${FLAGS[@]}" "${INCS[@]}" -c line_error.lev.c -o ok.o >ok.log 2>&1 ||
        { fail "the output does not build: $(grep -m3 error ok.log)"; return 1; }
    if "$cc" "${CFLAGS[@]}" "${FLAGS[@]}" "${INCS[@]}" -Werror=pointer-arith -c line_error.lev.c -o bad.o \
        >bad.log 2>&1; then
        fail "the output built with -Werror=pointer-arith"
        return 1
    fi
    local want got stray
    want=$(grep -n '/\* levpp-line-error \*/' "$src" | cut -d: -f1 | sort -n | xargs)
    got=$(sed -nE 's/^([^ :]*):([0-9]+):[0-9]+: error: .*/\1 \2/p' bad.log)
    stray=$(grep -v '^[^ ]*line_error\.c ' <<<"$got" || true)
    [[ -z $stray ]] || { fail "errors outside line_error.c: $(head -n 3 <<<"$stray" | tr '\n' ' ')"; return 1; }
    got=$(awk '{print $2}' <<<"$got" | sort -n -u | xargs)
    [[ $got == "$want" ]] ||
        { fail "errors on lines ${got:-(none)} of line_error.c, expected on $want:
$(grep -m4 'error: ' bad.log | sed 's/^/  /')"; return 1; }
    echo "PASS $check (errors on lines $want)"
}

# lev_build NAME SRC: levpp --main-task on SRC, built into ./lev.
lev_build() {
    local name=$1 src=$2
    levpp_run levpp.err --main-task "$src" -o "$name.lev.c" -- "${INCS[@]}"
    sane levpp.err || return 1
    ((status == 0)) || { fail "$name: levpp refused it: $(head -n 3 levpp.err)"; return 1; }
    "$cc" "${CFLAGS[@]}" "${WRONG_CODE[@]}" "${FLAGS[@]}" "${INCS[@]}" "$name.lev.c" "${LINK[@]}" \
        -o lev >lev-build.log 2>&1 ||
        { fail "$name: the output does not build: $(grep -m3 error lev-build.log)"; return 1; }
}

# moving_one NAME: the checks of `moving` on checks/moving/NAME.c.
moving_one() {
    local name=$1 src=$here/checks/moving/$1.c st
    "$cc" "${CFLAGS[@]}" -Werror "${FLAGS[@]}" "$src" -o native >native-build.log 2>&1 ||
        { fail "$name: native build: $(head -n 3 native-build.log)"; return 1; }
    st=0
    timeout "$LIMIT" ./native >native.out 2>native.err </dev/null || st=$?
    ((st == 0)) && [[ -s native.out ]] ||
        { fail "$name: the native run ended with status $st: $(head -n 3 native.err)"; return 1; }
    lev_build "$name" "$src" || return 1
    st=0
    timeout "$LIMIT" ./lev >lev.out 2>lev.err </dev/null || st=$?
    ((st == 0)) && cmp -s native.out lev.out ||
        { fail "$name: the plain run (status $st) differs from the native one: $(head -n 3 lev.err)"; return 1; }
    local every got='' expects
    expects=$(sed -n 's/.*moving-expects: \(.*[^ ]\) *\*\/.*/\1/p' "$src" | head -n 1)
    for every in 1 7; do
        st=0
        # (the group's stderr takes the shell's report of the signal)
        { env LEV_TORTURE=$every timeout "$LIMIT" ./lev >torture.out 2>torture.err </dev/null || st=$?; } 2>/dev/null
        ((st != 124)) || { fail "$name: LEV_TORTURE=$every timed out"; return 1; }
        if ((st == 0)) && cmp -s native.out torture.out; then
            fail "$name: LEV_TORTURE=$every did not see the hidden pointer (same output, status 0)"
            return 1
        fi
        if [[ -n $expects ]] && ! grep -qF -- "$expects" torture.err; then
            fail "$name: LEV_TORTURE=$every did not report \"$expects\": $(head -n 3 torture.err)"
            return 1
        fi
        got+="${got:+,} LEV_TORTURE=$every $( ((st > 128)) && echo "signal $((st - 128))" || echo "status $st")"
    done
    moving_note+="${moving_note:+; }$name:$got"
}

check_moving() {
    local dir=$work/moving name
    moving_note=''
    for name in hidden_heap hidden_frame untyped_ptr overlay_header std_redirect; do
        mkdir -p "$dir/$name"
        cd "$dir/$name"
        moving_one "$name" || return 1
    done
    echo "PASS $check ($moving_note)"
}

check_exit() {
    local src=$here/checks/exit/exit_resume.c dir=$work/exit
    mkdir -p "$dir"
    cd "$dir"
    lev_build exit_resume "$src" || return 1
    local ck=$dir/ck.img stopfile=$dir/stop sum0
    rm -f "$ck" "$stopfile"
    LEV_CHECKPOINT_FILE=$ck LEV_CHECKPOINT_MS=20 spawn run1.out run1.err ./lev "$stopfile"
    local run1=$pid
    three_lines_and_image() { { (($(lines_in run1.out) >= 3)) && [[ -s $ck ]]; } || ! kill -0 "$run1" 2>/dev/null; }
    await three_lines_and_image && kill -0 "$run1" 2>/dev/null ||
        { fail "no checkpoint after three lines: $(head -n 3 run1.err)"; return 1; }
    sum0=$(cksum <"$ck")
    newer_image() { [[ $(cksum <"$ck") != "$sum0" ]] || ! kill -0 "$run1" 2>/dev/null; }
    await newer_image && stop "$run1" ||
        { fail "no second checkpoint, or the run ended by itself: $(head -n 3 run1.err)"; return 1; }
    ! grep -q '^exit:' run1.out || { fail "a function ran in the killed process"; return 1; }
    touch "$stopfile"
    run run2.out run2.err env LEV_RESUME="$ck" ./lev
    ((status == 0)) || { fail "the resumed run ended with status $status: $(head -n 3 run2.err)"; return 1; }
    local last want
    last=$(sed -n 's/^round \([0-9]*\) .*/\1/p' run2.out | tail -n 1)
    [[ -n $last ]] || last=$(sed -n 's/^round \([0-9]*\) .*/\1/p' run1.out | tail -n 1)
    want=$(printf 'exit: third\nexit: second after round %s\nexit: first' "$last")
    [[ $(grep '^exit:' run2.out) == "$want" ]] ||
        { fail "the resumed run's exit functions printed '$(grep '^exit:' run2.out | tr '\n' '|')', expected '${want//$'\n'/|}'"; return 1; }
    echo "PASS $check (killed after line $(lines_in run1.out), resumed until round $last)"
}

# jumps_one NAME: the checks of `jumps` on checks/jumps/NAME.c.
jumps_one() {
    local name=$1 src=$here/checks/jumps/$1.c st every expects
    lev_build "$name" "$src" || return 1
    expects=$(sed -n 's/.*jumps-expects: \(.*[^ ]\) *\*\/.*/\1/p' "$src" | head -n 1)
    [[ -n $expects ]] || { fail "$name: no jumps-expects line"; return 1; }
    for every in 0 1; do
        st=0
        { env LEV_TORTURE=$every timeout "$LIMIT" ./lev >run.out 2>run.err </dev/null || st=$?; } 2>/dev/null
        ((st == 134)) ||
            { fail "$name: LEV_TORTURE=$every ended with status $st, not SIGABRT: $(head -n 3 run.err)"; return 1; }
        grep -qF -- "$expects" run.err ||
            { fail "$name: LEV_TORTURE=$every did not report \"$expects\": $(head -n 3 run.err)"; return 1; }
    done
}

check_jumps() {
    local dir=$work/jumps name
    for name in returned no_marker damaged; do
        mkdir -p "$dir/$name"
        cd "$dir/$name"
        jumps_one "$name" || return 1
    done
    echo "PASS $check (returned, no_marker, damaged: aborted with their messages)"
}

for check in "$@"; do
    case $check in
    compdb) check_compdb || true ;;
    line) check_line || true ;;
    moving) check_moving || true ;;
    exit) check_exit || true ;;
    jumps) check_jumps || true ;;
    stdio_out) check_stdio_out || true ;;
    stdio_in) check_stdio_in || true ;;
    *) fail "unknown check" || true ;;
    esac
    cd "$work"
done
((failures == 0)) || { echo "$failures of $# failed"; exit 1; }
