#!/usr/bin/env bash
# seq_cli.sh - lev-tsp-seq as a user runs it: a small run on berlin52
# whose last line has the documented shape and whose TOUR file is a valid
# tour of the length printed (checked by test_tsp check-tour), and bad
# input refused with exit status 2 and a message naming the problem.
#
# usage: seq_cli.sh LEV_TSP_SEQ TEST_TSP DATA_DIR WORK_DIR
set -euo pipefail
seq=$1 checker=$2 data=$3 work=$4
rm -rf "$work"
mkdir -p "$work"
cd "$work"
fail() {
    echo "seq_cli: FAIL: $*" >&2
    exit 1
}

# A run: progress, then `picture FILE`, then the last line.
"$seq" "$data/berlin52.tsp" --seed 3 --budget 2000 --tour-out T.tour --svg S.svg >out.txt ||
    fail "lev-tsp-seq exited $?"
last=$(tail -n 1 out.txt)
[[ $last =~ ^best\ ([0-9]+)\ gap\ ([0-9]+\.[0-9]{2})%\ tour\ T\.tour$ ]] ||
    fail "last line '$last' is not 'best LENGTH gap PCT% tour T.tour'"
len=${BASH_REMATCH[1]}
grep -qx 'picture S.svg' out.txt || fail "no 'picture S.svg' line"
grep -q '^epoch ' out.txt || fail "no progress line"
"$checker" check-tour "$data/berlin52.tsp" T.tour "$len" || fail "T.tour is not a tour of length $len"
head -c 5 S.svg | grep -q '^<svg ' || fail "S.svg does not start with <svg"
tail -n 1 S.svg | grep -qx '</svg>' || fail "S.svg does not end with </svg>"
echo "seq_cli: run: $last"

# The same options give the same result; --quiet prints only the last line.
"$seq" "$data/berlin52.tsp" --seed 3 --budget=2000 --tour-out=T2.tour --svg=S2.svg --quiet >q.txt
[[ $(wc -l <q.txt) -eq 1 ]] || fail "--quiet printed more than the last line"
[[ $(cut -d' ' -f1-4 q.txt) == "$(echo "$last" | cut -d' ' -f1-4)" ]] || fail "same seed, other result"
cmp -s T.tour T2.tour || fail "same seed, other tour"

# Default file names: NAME.tour and NAME.svg in the current directory.
"$seq" random:30 --budget 50 --quiet >r.txt
grep -qx 'best [0-9]* gap n/a tour random-30-1.tour' r.txt || fail "random:30: $(cat r.txt)"
[[ -s random-30-1.svg ]] || fail "random:30: no random-30-1.svg"

# --help: usage on standard output, status 0.
"$seq" --help >h.txt || fail "--help exited $?"
grep -q '^usage: lev-tsp-seq INSTANCE' h.txt || fail "--help printed no usage"

# expect_2 WHAT PATTERN ARGS...: exit status 2 and PATTERN on standard error.
expect_2() {
    local what=$1 pattern=$2
    shift 2
    local rc=0
    "$seq" "$@" >o.txt 2>e.txt || rc=$?
    [[ $rc -eq 2 ]] || fail "$what: exit status $rc, not 2"
    grep -q -- "$pattern" e.txt || fail "$what: '$(cat e.txt)' lacks '$pattern'"
    echo "seq_cli: $what: $(head -n 1 e.txt)"
}
: >empty.tsp
printf 'NAME: x\nTYPE: TSP\nDIMENSION: 5\nEDGE_WEIGHT_TYPE: EXPLICIT\n' >explicit.tsp
printf 'NAME: x\nTYPE: TSP\nDIMENSION: 5\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\n2 x 1\n' >bad.tsp
expect_2 "nonexistent path" "nope.tsp: No such file or directory" nope.tsp
expect_2 "empty file" "empty.tsp: the file is empty" empty.tsp
expect_2 "unknown EDGE_WEIGHT_TYPE" "explicit.tsp:4: EDGE_WEIGHT_TYPE: EXPLICIT is not supported" explicit.tsp
expect_2 "malformed line" "bad.tsp:7: NODE_COORD_SECTION: node 2: x coordinate 'x' is not a number" bad.tsp
expect_2 "bad option" "unknown option '--frobnicate'" "$data/berlin52.tsp" --frobnicate
expect_2 "bad value" "--islands: 'many' is not a whole number" "$data/berlin52.tsp" --islands many
expect_2 "lev-tsp option" "unknown option '--vts=2'" "$data/berlin52.tsp" --vts=2
expect_2 "no instance" "no INSTANCE given"
expect_2 "bad random" "random:2: N is not a whole number from 5" random:2
echo "seq_cli: ok"
