# shellcheck shell=bash
# shellcheck disable=SC2154  # work, here, cc... are run_checks.sh's
# shellcheck disable=SC2317  # the conditions are called through await
# stdio_checks.sh - the checks stdio_out and stdio_in of run_checks.sh:
# the standard streams of a --main-task program across a SIGKILL and a
# resume in a new process, for every stream, every kind of file behind it
# and every buffering. Sourced by run_checks.sh, whose fail, lev_build and
# $work it uses, with the helpers of proc_common.sh.
#
#   stdio_out  checks/stdio/stdio_out.c prints 41 lines to stdout or
#              stderr; for each stream x kind (a file: `> out` then `>>
#              out`; a pipe; a terminal, made by script(1) when there is
#              one) x buffering (default, setvbuf line, full, none), run
#              with a checkpoint file and held after line 30:
#              - killed once an image taken there is on disk and resumed
#                from it, its output going on into the same place: the
#                41 lines, each once;
#              - held again after line 35, killed once an image taken
#                there is on disk, and resumed from the image of line 30
#                (a roll-back): a file has the 41 lines once (the
#                resumed run cuts it back to its size at that image), a
#                pipe or terminal lines 1-35, then 31-41.
#              And the issue's case: short lines on stdout, fully
#              buffered, to a file and to a pipe, killed at line 30:
#              41 of 41 lines (11 before the fix).
#   stdio_in   checks/stdio/stdio_in.c reads 20,000 lines of its stdin
#              item by item (getline, fgets, fread, scanf, getchar, a mix
#              of them with peeks and bytes pushed back), each with every
#              buffering, held after item 5,000 (or at the end of the
#              input), killed once an image taken there is on disk and
#              resumed: from the same file, its output must be the native
#              run's (a byte pushed back and pending at the image
#              included); from a pipe, unbuffered, fed with the bytes
#              after those the program took: the native output too; from a
#              pipe with bytes read ahead, every capture must fail, naming
#              stdin; a resume whose stdin is a pipe or a shorter file than
#              the program read must fail, naming stdin.

STDIO_LINES=41

# so_launch FIRST KIND STREAM DEST ENV...: starts $prog with the
# arguments in ${prog_args[@]} and the environment assignments ENV in the
# background, its stream STREAM (out or err) going to DEST: KIND file
# (opened with `>` when FIRST is 1, else `>>`), pipe (a FIFO that cat
# copies onto the end of DEST) or tty (the terminal script(1) makes,
# copied onto the end of DEST); the other stream goes to side.txt, stdin
# comes from /dev/null. Sets run (the program's pid) and helper (cat's or
# script's pid, or empty).
so_launch() {
    local first=$1 kind=$2 stream=$3 dest=$4
    shift 4
    local cmd=(env "$@" "$prog" "${prog_args[@]}")
    helper=''
    ((first)) && [[ $kind != file ]] && : >"$dest"
    case $kind in
    file)
        if ((first)) && [[ $stream == out ]]; then
            "${cmd[@]}" >"$dest" 2>>side.txt </dev/null &
        elif ((first)); then
            "${cmd[@]}" 2>"$dest" >>side.txt </dev/null &
        elif [[ $stream == out ]]; then
            "${cmd[@]}" >>"$dest" 2>>side.txt </dev/null &
        else
            "${cmd[@]}" 2>>"$dest" >>side.txt </dev/null &
        fi
        run=$!
        ;;
    pipe)
        rm -f fifo
        mkfifo fifo
        cat fifo >>"$dest" &
        helper=$!
        if [[ $stream == out ]]; then
            "${cmd[@]}" >fifo 2>>side.txt </dev/null &
        else
            "${cmd[@]}" 2>fifo >>side.txt </dev/null &
        fi
        run=$!
        ;;
    tty)
        rm -f tty.pid
        script -qfec "echo \$\$ >tty.pid; exec $(printf '%q ' "${cmd[@]}")" /dev/null \
            </dev/null >>"$dest" 2>>side.txt &
        helper=$!
        tty_started() { [[ -s tty.pid ]] || ! kill -0 "$helper" 2>/dev/null; }
        await tty_started
        run=$(cat tty.pid 2>/dev/null || echo 0)
        ;;
    esac
}

# so_alive: whether the program runs.
so_alive() { kill -0 "$run" 2>/dev/null; }

# so_image_after MARKER: waits for file MARKER, then for a checkpoint
# image written after it (ck.img changes: images are written before the
# program goes on), while the program runs; fails if it ended.
so_image_after() {
    local marker=$1 sum0=''
    so_marked() { [[ -e $marker ]] || ! so_alive; }
    await so_marked && [[ -e $marker ]] || return 1
    [[ -e ck.img ]] && sum0=$(cksum <ck.img)
    so_newer() { { [[ -e ck.img ]] && [[ $(cksum <ck.img) != "$sum0" ]]; } || ! so_alive; }
    await so_newer && so_alive
}

# so_kill KIND: kills the program with SIGKILL and waits for it and its
# helper; fails if it had ended by itself.
so_kill() {
    if [[ $1 == tty ]]; then
        kill -9 "$run" 2>/dev/null || return 1
        wait "$helper" 2>/dev/null || true
        return 0
    fi
    stop "$run" || return 1
    [[ -z $helper ]] || wait "$helper" 2>/dev/null || true
}

# so_finish KIND: waits (LIMIT seconds at most) for the program to end by
# itself and for its helper; sets status (124: killed after LIMIT).
so_finish() {
    so_ended() { ! so_alive; }
    local st=0
    status=0
    if ! await so_ended; then
        kill -9 "$run" 2>/dev/null || true
        status=124
    fi
    if [[ $1 == tty ]]; then
        wait "$helper" 2>/dev/null || st=$?
    else
        wait "$run" 2>/dev/null || st=$?
        [[ -z $helper ]] || wait "$helper" 2>/dev/null || true
    fi
    ((status)) || status=$st
}

# so_one KIND STREAM MODE WIDTH ROLLBACK: one run of stdio_out (see the
# top) in a directory of its own; 0, or 1 after fail.
so_one() {
    local kind=$1 stream=$2 mode=$3 width=$4 rollback=$5 label d
    label="std$stream to a $kind, $mode buffering"
    d=$work/stdio_out/$kind-$stream-$mode-$width
    if ((rollback)); then
        label+=", rolled back"
        d+=-back
    fi
    mkdir -p "$d"
    cd "$d" || return 1
    touch hold1 hold2
    prog_args=("$stream" "$mode" "$width" 30 $((rollback ? 35 : 0)))
    so_launch 1 "$kind" "$stream" dest.txt LEV_CHECKPOINT_FILE="$d/ck.img" LEV_CHECKPOINT_MS=20
    so_image_after reached30 ||
        { so_kill "$kind" || true; fail "$label: no image after line 30 within ${LIMIT}s: $(head -n 3 side.txt)"; return 1; }
    local back=ck.img
    if ((rollback)); then
        # a link to the image of line 30, whole: the runtime writes each
        # image to a new file it renames over ck.img
        ln -f ck.img ck30.img
        back=ck30.img
        rm hold1
        so_image_after reached35 ||
            { so_kill "$kind" || true; fail "$label: no image after line 35 within ${LIMIT}s: $(head -n 3 side.txt)"; return 1; }
    fi
    so_kill "$kind" || { fail "$label: the run ended by itself: $(head -n 3 side.txt)"; return 1; }
    local killed
    killed=$(tr -d '\r' <dest.txt | wc -l)
    rm -f hold1 hold2
    so_launch 0 "$kind" "$stream" dest.txt LEV_RESUME="$d/$back"
    so_finish "$kind"
    ((status == 0)) || { fail "$label: the resumed run ended with status $status: $(head -n 3 side.txt)"; return 1; }
    local native=$work/stdio_out/native$width.out want
    want=$native
    if ((rollback)) && [[ $kind != file ]]; then
        want=$d/want.out
        { head -n 35 "$native"; tail -n +31 "$native"; } >"$want"
    fi
    tr -d '\r' <dest.txt >got.out
    cmp -s "$want" got.out ||
        { fail "$label: killed with $killed lines out, then resumed; the output differs from the expected one:
$(diff "$want" got.out | sed -n '1,8s/^/  /p')
$(sed -n '1,3s/^/  stderr: /p' side.txt)"; return 1; }
    [[ $kind == tty || ! -s side.txt ]] || { fail "$label: the other stream got: $(head -n 3 side.txt)"; return 1; }
    so_runs=$((so_runs + 1))
}

# std_build NAME: in the directory $work/NAME, checks/stdio/NAME.c built
# natively (./native) and from levpp's output (./lev, also $prog).
std_build() {
    local dir=$work/$1 src=$here/checks/stdio/$1.c
    mkdir -p "$dir"
    cd "$dir" || return 1
    "$cc" "${CFLAGS[@]}" -Werror "${FLAGS[@]}" "$src" -o native >native-build.log 2>&1 ||
        { fail "native build: $(head -n 3 native-build.log)"; return 1; }
    lev_build "$1" "$src" || return 1
    prog=$dir/lev
}

check_stdio_out() {
    std_build stdio_out || return 1
    local width
    for width in 0 1; do
        timeout "$LIMIT" ./native out default "$width" 0 0 >"native$width.out" </dev/null ||
            { fail "the native run failed"; return 1; }
        (($(wc -l <"native$width.out") == STDIO_LINES)) ||
            { fail "the native run printed $(wc -l <"native$width.out") lines"; return 1; }
    done
    local kinds=(file pipe) kind stream mode rollback note=''
    if command -v script >/dev/null; then
        kinds+=(tty)
    else
        note='; no script(1): no terminal'
    fi
    so_runs=0
    # The issue's case: short lines, fully buffered, killed at line 30.
    for kind in file pipe; do
        so_one "$kind" out default 0 0 || return 1
    done
    for kind in "${kinds[@]}"; do
        for stream in out err; do
            for mode in default line full none; do
                for rollback in 0 1; do
                    so_one "$kind" "$stream" "$mode" 1 "$rollback" || return 1
                done
            done
        done
    done
    echo "PASS $check ($so_runs runs: stdout and stderr to a ${kinds[*]}, each buffering, killed at" \
        "an image and rolled back to an older one; the issue's case, short lines to a file and a" \
        "pipe killed at line 30: $STDIO_LINES of $STDIO_LINES lines$note)"
}

# si_launch FIRST INPUT ENV...: starts $prog with ${prog_args[@]} and the
# environment assignments ENV in the background, its stdout appended to
# out.txt (emptied first when FIRST is 1), its stderr to err.txt, its
# stdin from file INPUT, or when INPUT is `pipe:FILE`
# from a pipe that cat fills with FILE. Sets run and helper.
si_launch() {
    local first=$1 input=$2
    shift 2
    local cmd=(env "$@" "$prog" "${prog_args[@]}")
    helper=''
    ((first)) && : >out.txt
    if [[ $input == pipe:* ]]; then
        rm -f fifo
        mkfifo fifo
        cat "${input#pipe:}" >fifo 2>/dev/null &
        helper=$!
        "${cmd[@]}" >>out.txt 2>>err.txt <fifo &
    else
        "${cmd[@]}" >>out.txt 2>>err.txt <"$input" &
    fi
    run=$!
}

# si_native STYLE MODE HOLD PEND: the native output for these arguments
# into native-STYLE-MODE-HOLD-PEND.out (once, in the directory of the
# native runs, where the file `reached` it writes stays); echoes its path.
si_native() {
    local dir=$work/stdio_in/native.d
    local f=$dir/$1-$2-$3-$4.out
    mkdir -p "$dir"
    [[ -s $f ]] || (cd "$dir" && timeout "$LIMIT" ../native "$@" <../in.txt >"$f") || return 1
    echo "$f"
}

# si_one KIND STYLE MODE HOLD PEND: one run of stdio_in (see the top): a
# run with a checkpoint file, its stdin a file (KIND file), or a pipe
# (pipe: resumed from a pipe fed with the bytes after those the program
# took; refused: every capture must fail), held after item HOLD, killed
# once an image taken there is on disk (or a capture failed) and resumed.
# 0, or 1 after fail.
si_one() {
    local kind=$1 style=$2 mode=$3 hold=$4 pend=$5
    local label="stdin from a ${kind/refused/pipe}, $style, $mode buffering, hold at ${hold/#0/the end}, $pend pending"
    local d=$work/stdio_in/$kind-$style-$mode-$hold-$pend native
    mkdir -p "$d"
    cd "$d" || return 1
    native=$(si_native "$style" "$mode" "$hold" "$pend") || { fail "$label: the native run failed"; return 1; }
    touch hold
    prog_args=("$style" "$mode" "$hold" "$pend")
    local in=$work/stdio_in/in.txt
    # A refused case reads a pipe that cat fills with one write of less
    # than a pipe's capacity before the first read can take anything: its
    # reads, so what is read ahead at the hold, are the same on every run.
    [[ $kind == refused ]] && in=$work/stdio_in/in_small.txt
    [[ $kind == file ]] || in=pipe:$in
    si_launch 1 "$in" LEV_CHECKPOINT_FILE="$d/ck.img" LEV_CHECKPOINT_MS=20
    if [[ $kind == refused ]]; then
        si_refused() { grep -q 'stdin is a pipe' err.txt || ! so_alive; }
        local ok=0
        await so_marked_reached && await si_refused && so_alive && ok=1
        so_kill pipe || true
        ((ok)) && grep -q "stdin is a pipe (.*fifo) with [0-9]* bytes\? read ahead but not consumed" err.txt ||
            { fail "$label: no capture refused naming stdin: $(head -n 3 err.txt)"; return 1; }
        si_refusals=$((si_refusals + 1))
        return 0
    fi
    so_image_after reached ||
        { so_kill pipe || true; fail "$label: no image after the hold within ${LIMIT}s: $(head -n 3 err.txt)"; return 1; }
    so_kill pipe || { fail "$label: the run ended by itself: $(head -n 3 err.txt)"; return 1; }
    # From a pipe, a capture taken where a byte was read ahead (scanf
    # looks one past its word) fails, and says so; nothing else may.
    local other
    other=$(grep -v 'stdin is a pipe (.*) with 1 byte read ahead but not consumed' err.txt || true)
    [[ $kind == pipe && -z $other || ! -s err.txt ]] ||
        { fail "$label: stderr of the first run: $(head -n 3 err.txt)"; return 1; }
    : >err.txt
    rm -f hold
    in=$work/stdio_in/in.txt
    if [[ $kind == pipe ]]; then
        tail -c +$(($(cat reached) + 1)) "$in" >rest.txt
        in=pipe:$d/rest.txt
    fi
    si_launch 0 "$in" LEV_RESUME="$d/ck.img"
    so_finish pipe
    ((status == 0)) || { fail "$label: the resumed run ended with status $status: $(head -n 3 err.txt)"; return 1; }
    cmp -s "$native" out.txt ||
        { fail "$label: killed and resumed; the output differs from the native one:
$(diff "$native" out.txt | sed -n '1,8s/^/  /p')
$(sed -n '1,3s/^/  stderr: /p' err.txt)"; return 1; }
    [[ ! -s err.txt ]] || { fail "$label: stderr of the resumed run: $(head -n 3 err.txt)"; return 1; }
    si_runs=$((si_runs + 1))
}

# so_marked_reached: file `reached` exists, or the program ended.
so_marked_reached() { [[ -e reached ]] || ! so_alive; }

# si_wrong_stdin: an image of a program that had read its stdin from a
# file, resumed with a pipe, then with a shorter file, then with the file:
# the first two must fail naming stdin and leave the output alone.
si_wrong_stdin() {
    local d=$work/stdio_in/wrong label="resume with another stdin"
    mkdir -p "$d"
    cd "$d" || return 1
    local native
    native=$(si_native getline default 5000 none) || { fail "$label: the native run failed"; return 1; }
    touch hold
    prog_args=(getline default 5000 none)
    local in=$work/stdio_in/in.txt
    si_launch 1 "$in" LEV_CHECKPOINT_FILE="$d/ck.img" LEV_CHECKPOINT_MS=20
    so_image_after reached && so_kill pipe ||
        { so_kill pipe || true; fail "$label: no image after the hold: $(head -n 3 err.txt)"; return 1; }
    rm -f hold
    cp out.txt before.txt
    head -c 1000 "$in" >short.txt
    local how
    for how in pipe:$in short.txt; do
        : >err.txt
        si_launch 0 "$how" LEV_RESUME="$d/ck.img"
        so_finish pipe
        local want="this process's stdin is a pipe"
        [[ $how == short.txt ]] && want="this process's stdin has only 1000 bytes"
        ((status == 2)) && grep -q "cannot resume from .*stdin (.*in.txt) up to byte [0-9]*.*$want" err.txt ||
            { fail "$label ($how): status $status, expected 2 and a message saying \"$want\": $(head -n 3 err.txt)"; return 1; }
        cmp -s before.txt out.txt || { fail "$label ($how): the output changed"; return 1; }
    done
    : >err.txt
    si_launch 0 "$in" LEV_RESUME="$d/ck.img"
    so_finish pipe
    ((status == 0)) && cmp -s "$native" out.txt ||
        { fail "$label: resumed with the file: status $status, output $(diff "$native" out.txt | head -n 3)"; return 1; }
}

check_stdio_in() {
    std_build stdio_in || return 1
    # 20,000 lines "N WORD", of 3 to 30 bytes.
    awk 'BEGIN { for (i = 1; i <= 20000; i++) { w = ""; for (k = 0; k < (i * 7) % 23 + 1; k++)
        w = w sprintf("%c", 97 + (i + k) % 26); print i, w } }' >in.txt
    # Its first 2,500 lines (43,910 bytes), for the refused pipes: item
    # 1,000 ends at byte 16,889, not at a multiple of a stdin buffer
    # (4,096 bytes, or the 1,000 of MODE full).
    head -n 2500 in.txt >in_small.txt
    si_runs=0 si_refusals=0
    local style mode
    for style in getline fgets fread scanf getchar mix; do
        for mode in default line full none; do
            si_one file "$style" "$mode" 5000 none || return 1
        done
    done
    for mode in default none; do
        si_one file mix "$mode" 5000 same || return 1
        si_one file mix "$mode" 5000 other || return 1
    done
    si_one file getline default 0 none || return 1
    si_one file mix full 0 same || return 1
    si_one file mix full 0 other || return 1
    # Unbuffered, a pipe has nothing read ahead at a safe point but after
    # a peek or scanf's look past its word.
    for style in getline fgets fread getchar mix; do
        si_one pipe "$style" none 5000 none || return 1
    done
    si_one pipe mix none 5000 other || return 1
    si_one refused scanf none 1000 none || return 1
    si_one refused mix none 1000 same || return 1
    for mode in default full; do
        si_one refused getline "$mode" 1000 none || return 1
    done
    si_wrong_stdin || return 1
    local n
    n=$(grep -c '^item' "$(si_native getline default 5000 none)")
    echo "PASS $check ($si_runs runs resumed with the native output, getline's of $n items;" \
        "$si_refusals pipes with bytes read ahead refused; a resume with a pipe or a shorter file refused)"
}
