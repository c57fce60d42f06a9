#!/usr/bin/env bash
# resume_test.sh - whole-program checkpoints. Runs prog_count natively and
# under LEV_TORTURE (same output, same exit status); runs it with a
# checkpoint file, kills it with SIGKILL once a checkpoint taken after its
# third step is on disk (the run would never end by itself), resumes it in
# a new process with LEV_RESUME (other arguments and environment: those of
# the image must win), lets it end at a step chosen after the kill, and
# checks that the resumed run continues the sequence and ends like a
# native run that stops at the same step.
# Then missing, damaged and foreign images: a message that names the file
# and the problem, exit status 2, no crash.
#
# usage: resume_test.sh PROG PROG_OTHER WORK_DIR
set -euo pipefail

if (($# != 3)); then
    sed -n '11s/^# \{0,1\}//p' "$0" >&2
    exit 2
fi
prog=$(realpath "$1") other=$(realpath "$2") work=$3
N=200 W=2000      # steps of a few milliseconds each
LIMIT=60          # seconds any awaited condition may take

fail() {
    echo "resume test: FAIL: $*" >&2
    exit 1
}
step() { echo "== $*"; }

rm -rf "$work"
mkdir -p "$work"
cd "$work"

# run, await
# shellcheck source=levpp/proc_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/levpp/proc_common.sh"

steps_in() { grep -c '^step [0-9]* [0-9a-f]\{16\}$' "$1" || true; }

step "native run"
run native.out native.err env PROG_COUNT_TAG=first "$prog" $N $W
native_status=$status
((native_status >= 10 && native_status <= 16)) ||
    fail "native run exited with $native_status: $(cat native.err)"
(($(steps_in native.out) == N)) || fail "native run printed $(steps_in native.out) steps, not $N"
grep -q '^result [0-9a-f]\{16\} argc 3 tag first$' native.out || fail "native run has no result line"

step "torture runs"
run small.out small.err "$prog" 30 20
small_status=$status
for every in 1 3; do
    run torture.out torture.err env LEV_TORTURE=$every "$prog" 30 20
    ((status == small_status)) ||
        fail "LEV_TORTURE=$every: exit status $status, native $small_status: $(cat torture.err)"
    cmp -s small.out torture.out || fail "LEV_TORTURE=$every: output differs from the native run"
done

step "checkpointed run, killed with SIGKILL"
# With N = 0 and no file $last, the run never ends by itself: the kill
# cannot come too late, however fast the machine.
ck=$work/ck.img last=$work/last_step
PROG_COUNT_TAG=first LEV_CHECKPOINT_FILE=$ck LEV_CHECKPOINT_MS=20 \
    "$prog" 0 $W "$last" >run1.out 2>run1.err </dev/null &
pid=$!
alive() { kill -0 $pid 2>/dev/null; }
three_steps_and_image() { { (($(steps_in run1.out) >= 3)) && [[ -s $ck ]]; } || ! alive; }
await three_steps_and_image && alive || fail "no checkpoint after three steps: $(cat run1.err)"
sum0=$(cksum <"$ck")
newer_image() { [[ $(cksum <"$ck") != "$sum0" ]] || ! alive; }
await newer_image && alive || fail "no second checkpoint: $(cat run1.err)"
kill -9 $pid
status=0
wait $pid 2>/dev/null || status=$?
((status == 128 + 9)) || fail "the run ended by itself with status $status: $(cat run1.err)"
killed_at=$(steps_in run1.out)
[[ ! -e $ck.tmp ]] || echo "   (killed while writing $ck.tmp: the image itself is whole)"

# From here on the program stops after step $stop: the native reference
# and the resumed run both end there.
stop=$((killed_at + 20))
echo $stop >"$last"
run ref.out ref.err env PROG_COUNT_TAG=first "$prog" 0 $W "$last"
ref_status=$status
(($(steps_in ref.out) == stop)) || fail "reference run printed $(steps_in ref.out) steps, not $stop"
head -n "$killed_at" ref.out | cmp -s - <(grep '^step ' run1.out | head -n "$killed_at") ||
    fail "the killed run's output is not a prefix of the native run's"

step "resumed in a new process"
ck2=$work/ck2.img
run run2.out run2.err env PROG_COUNT_TAG=second LEV_RESUME="$ck" LEV_CHECKPOINT_FILE="$ck2" \
    LEV_CHECKPOINT_MS=20 "$prog" 5
((status == ref_status)) ||
    fail "resumed run exited with $status, native $ref_status: $(cat run2.err)"
first=$(head -n 1 run2.out | awk '$1 == "step" { print $2 }')
[[ -n $first ]] || fail "resumed run printed no step first: $(head -n 3 run2.out)"
((first >= 4)) || fail "resumed run began at step $first: it did not continue from the checkpoint"
((first <= killed_at + 1)) || fail "resumed run began at step $first, after the killed run's $killed_at"
tail -n +"$first" ref.out | cmp -s - run2.out ||
    fail "resumed output does not continue the native sequence from step $first"
[[ -s $ck2 ]] || fail "the resumed run wrote no checkpoint of its own"
echo "   killed after step $killed_at, resumed at step $first, ended at step $stop; result and exit status $status match"

step "missing, damaged and foreign images"
size=$(stat -c %s "$ck")
: >empty.img
head -c $((size / 2)) "$ck" >truncated.img
cp "$ck" flipped.img
printf '\xff' | dd of=flipped.img bs=1 seek=$((size * 2 / 3)) conv=notrunc status=none
cp "$ck" header.img
printf '\x00\x00\x00\x00' | dd of=header.img bs=1 seek=8 conv=notrunc status=none
head -c 4096 /dev/urandom >garbage.img
# expect_error FILE PATTERN [PROG]: resuming from FILE fails cleanly.
expect_error() {
    local file=$1 pattern=$2 p=${3:-$prog}
    run bad.out bad.err env LEV_RESUME="$file" "$p" 5 5
    ((status == 2)) || fail "resume from $file: exit status $status, not 2: $(cat bad.err)"
    grep -qF -- "$file" bad.err || fail "resume from $file: the message does not name it: $(cat bad.err)"
    grep -q -- "$pattern" bad.err || fail "resume from $file: no '$pattern' in: $(cat bad.err)"
    [[ ! -s bad.out ]] || fail "resume from $file: the program ran: $(head -n 2 bad.out)"
    echo "   $(head -n 1 bad.err)"
}
expect_error "$work/missing.img" "No such file"
expect_error "$work/empty.img" "damaged"
expect_error "$work/truncated.img" "damaged"
expect_error "$work/flipped.img" "damaged"
expect_error "$work/header.img" "damaged\|version"
expect_error "$work/garbage.img" "damaged"
expect_error "$work" "not a regular file"
expect_error "$ck" "does not match" "$other"
run bad.out bad.err env LEV_CHECKPOINT_MS=soon "$prog" 5 5
((status == 2)) && grep -q LEV_CHECKPOINT_MS bad.err || fail "a bad LEV_CHECKPOINT_MS is not refused"

echo "resume test: ok"
