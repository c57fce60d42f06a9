# shellcheck shell=bash
# proc_common.sh - running, waiting for events and killing processes, for the
# scripts that run programs in the background (tests/levpp/run_corpus.sh,
# tests/resume_test.sh, eval/realprog/run.sh). Sourced; the caller sets
# LIMIT, the most seconds any awaited condition may take.

# await CMD...: polls CMD every 10 ms until it succeeds, for at most LIMIT
# seconds (then fails).
await() {
    local end=$((SECONDS + LIMIT))
    until "$@"; do
        ((SECONDS < end)) || return 1
        sleep 0.01
    done
}

# run OUT ERR CMD...: runs CMD with no standard input for at most LIMIT
# seconds, its output to OUT and ERR; sets $status (124: timed out).
run() {
    local out=$1 err=$2
    shift 2
    status=0
    timeout "$LIMIT" "$@" >"$out" 2>"$err" </dev/null || status=$?
}

# lines_in FILE: its line count, 0 while it does not exist.
lines_in() { if [[ -e $1 ]]; then wc -l <"$1"; else echo 0; fi; }

# spawn OUT ERR CMD...: starts CMD in the background, its standard output
# line-buffered so that every line printed is in OUT at once (a process
# that is not checkpointed keeps in its buffer what it printed last); sets
# $pid. stdbuf preloads a library, which a sanitized program accepts only
# if told to.
spawn() {
    local out=$1 err=$2
    shift 2
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
        stdbuf -oL "$@" >"$out" 2>"$err" </dev/null &
    pid=$!
}

# spawn_buffered OUT ERR CMD...: spawn, with standard output fully
# buffered into OUT, as a program's output to a file is: for a program
# that writes checkpoints, which flush its standard streams before each
# image is written, so that every line printed before an image on disk is
# in OUT (the lines printed since may still be in the buffer, and die
# with the process if it is killed).
spawn_buffered() {
    local out=$1 err=$2
    shift 2
    "$@" >"$out" 2>"$err" </dev/null &
    pid=$!
}

# stop PID: kills PID with SIGKILL and reaps it; fails if it had ended by
# itself (its status is then not that of a SIGKILL).
stop() {
    local st=0
    kill -9 "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || st=$?
    ((st == 128 + 9))
}
