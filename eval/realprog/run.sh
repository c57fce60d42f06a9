#!/usr/bin/env bash
# run.sh - real C programs, written by other people, through levpp
# unmodified: for each program, the lines of C given to levpp, what levpp
# says, and if it accepts them whether levpp's output compiles (with the
# WRONG_CODE errors of tests/levpp/driver_common.sh), prints the same
# output and exits with the same status as the native build plainly, with
# LEV_TORTURE=1, and after a SIGKILL and a resume in a new process, and the
# time of levpp's build over the native build's. Prints a Markdown table
# and writes it to OUT/table.md. See README.md beside this script.
#
# usage: eval/realprog/run.sh [OPTIONS] SRC_DIR [PROGRAM...]
#   SRC_DIR          the clones, as eval/realprog/fetch.sh SRC_DIR makes them
#                    (SRC_DIR/cJSON, SRC_DIR/lz4, ...)
#   PROGRAM          only these, of either set (tuned: cjson lz4 miniz bbc
#                    lua c4 tiny-regex-c monocypher chibicc; held-out: zlib
#                    jsmn heatshrink qoi lodepng c-ray tinyexpr parson)
#   --set SET        without PROGRAMs, the programs of SET: tuned (the
#                    default: the programs levpp was tuned on), held-out
#                    (programs kept apart to measure it on code it was not
#                    tuned for), all
#   --opt LEVEL      the optimization flag of every build (default: -O1 for
#                    the tuned set, as its figures were taken; -O2 for the
#                    held-out set, which its drivers' sizes are made for)
#   --out DIR        work and result directory (default: a new one under /tmp)
#   --build DIR      the build tree: DIR/preproc/levpp, DIR/leverage/
#                    libleverage.so, DIR/leverage/include (default: build/
#                    at the top of the repository)
#   --cc CC          the C compiler (default gcc)
#   --reps N         timed runs of each build, alternately (default 5); the
#                    table gives the ratio of the medians and of the bests,
#                    and the geometric mean of the medians' ratios
#   --limit S        seconds any one levpp run, build, run or awaited
#                    condition may take (default 120)
#   --sparse N       a LEV_TORTURE=1 run that times out is done again with
#                    LEV_TORTURE=N, every N-th safe point (default 10000)
set -euo pipefail

usage() {
    sed -n '/^# usage:/,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//p}' "$0" >&2
    exit 2
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
# await, lines_in, spawn, stop
# shellcheck source=../../tests/levpp/proc_common.sh
source "$top/tests/levpp/proc_common.sh"
out='' build=$top/build cc=gcc reps=5 LIMIT=120 TORTURE_SPARSE=10000 set=tuned opt=''
while (($#)) && [[ $1 == --* ]]; do
    (($# >= 2)) || usage
    case $1 in
    --out) out=$2 ;;
    --build) build=$2 ;;
    --cc) cc=$2 ;;
    --reps) reps=$2 ;;
    --limit) LIMIT=$2 ;;
    --sparse) TORTURE_SPARSE=$2 ;;
    --set) set=$2 ;;
    --opt) opt=$2 ;;
    *) usage ;;
    esac
    shift 2
done
(($# >= 1)) || usage
src=$(realpath "$1")
shift
build=$(realpath "$build")
levpp=$build/preproc/levpp
lib=$build/leverage/libleverage.so
inc=$build/leverage/include
drv=$here/drivers
for f in "$levpp" "$lib" "$inc/leverage.h"; do
    [[ -e $f ]] || { echo "run.sh: no $f (cmake --build BUILD --target levpp leverage)" >&2; exit 1; }
done
if [[ -z $out ]]; then
    out=$(mktemp -d /tmp/realprog.XXXXXX)
else
    mkdir -p "$out"
    out=$(realpath "$out")
fi
case $out/ in
"$top"/*) echo "run.sh: --out must be outside the repository" >&2; exit 2 ;;
esac

case $set in
tuned | held-out | all) ;;
*) usage ;;
esac
# As in tests/levpp/driver_common.sh: warnings that mean the code does
# something other than its source says are errors in levpp's output.
WRONG_CODE=(-Werror=implicit-function-declaration -Werror=incompatible-pointer-types
    -Werror=int-conversion -Werror=return-type)

# ===================================================================
# The programs
# ===================================================================
# Each prog_NAME sets:
#   DIR      its clone, under SRC_DIR
#   SRCS     its files given to levpp, relative to SRC_DIR/DIR; FILE=NAME.c
#            gives a copy of FILE named NAME.c (a header-only library's
#            implementation, C in a .cpp file), made in the work directory
#   DRV      our own files given to levpp (drivers/), if any
#   FLAGS    compiler flags for levpp and both builds (-I relative to the
#            clone; @GEN@ is a directory of generated headers)
#   LIBS     libraries for both links
#   PLAIN    arguments of the plain run, also the timed one
#   TORTURE  arguments of the LEV_TORTURE=1 run (a smaller run)
#   RESUME   arguments of a run that never ends by itself, a line at a time
#   NORM     a sed script applied to every output before it is compared
#            (what varies between two native runs)
# In arguments, @SRC@ is the clone and @DRV@ the drivers directory.
# The tuned set: the programs levpp's output was measured and tuned on.
PROGRAMS=(cjson lz4 miniz bbc lua c4 tiny-regex-c monocypher chibicc)
# The held-out set: programs kept apart, to measure levpp on code it was
# not tuned for (README.md, "The held-out set"); defined after the tuned
# ones.
HELD_OUT=(zlib jsmn heatshrink qoi lodepng c-ray tinyexpr parson)

prog_cjson() {
    DIR=cJSON SRCS=(cJSON.c cJSON_Utils.c) DRV=(cjson_driver.c)
    FLAGS=(-I.) LIBS=(-lm)
    PLAIN='600 16' TORTURE='3 8' RESUME='0 12' NORM=''
}
prog_lz4() {
    DIR=lz4 SRCS=(lib/lz4.c lib/lz4hc.c lib/lz4frame.c lib/xxhash.c) DRV=(lz4_driver.c)
    FLAGS=(-Ilib) LIBS=()
    PLAIN='60' TORTURE='2 4' RESUME='0 64' NORM=''
}
prog_miniz() {
    # miniz_export.h is generated by miniz's CMake build; the one in @GEN@
    # defines MINIZ_EXPORT as nothing (a static build).
    DIR=miniz SRCS=(miniz.c miniz_tdef.c miniz_tinfl.c miniz_zip.c) DRV=(miniz_driver.c)
    FLAGS=(-I. -I@GEN@) LIBS=()
    PLAIN='40' TORTURE='2 8' RESUME='0 32' NORM=''
}
prog_bbc() {
    # The engine's own main is renamed bbc_main; the driver's main calls
    # the engine (see drivers/bbc_driver.c).
    DIR=bbc SRCS=(src/bbc.c) DRV=(bbc_driver.c)
    FLAGS=(-Dmain=bbc_main) LIBS=()
    PLAIN='12 4' TORTURE='4 2' RESUME='0 3' NORM='s/Time: [0-9-]*/Time: T/'
}
prog_lua() {
    DIR=lua
    SRCS=(lapi.c lauxlib.c lbaselib.c lcode.c lcorolib.c lctype.c ldblib.c ldebug.c ldo.c ldump.c
        lfunc.c lgc.c linit.c liolib.c llex.c lmathlib.c lmem.c loadlib.c lobject.c lopcodes.c
        loslib.c lparser.c lstate.c lstring.c lstrlib.c ltable.c ltablib.c ltm.c lua.c lundump.c
        lutf8lib.c lvm.c lzio.c)
    DRV=() FLAGS=(-I. -DLUA_USE_LINUX) LIBS=(-lm -ldl)
    PLAIN='@DRV@/bench.lua 250 5000' TORTURE='@DRV@/bench.lua 2 200' RESUME='@DRV@/bench.lua 0 2000' NORM=''
}
prog_c4() {
    DIR=c4 SRCS=(c4.c) DRV=() FLAGS=() LIBS=()
    PLAIN='@DRV@/c4_bench.c 25' TORTURE='@SRC@/c4.c @SRC@/hello.c' RESUME='@DRV@/c4_bench.c 0' NORM=''
}
prog_tiny-regex-c() {
    DIR=tiny-regex-c SRCS=(re.c) DRV=(re_driver.c)
    FLAGS=(-I.) LIBS=()
    PLAIN='80' TORTURE='2 10' RESUME='0 100' NORM=''
}
prog_monocypher() {
    # The library and its optional Ed25519/SHA-512 file.
    DIR=monocypher SRCS=(src/monocypher.c src/optional/monocypher-ed25519.c) DRV=(monocypher_driver.c)
    FLAGS=(-Isrc -Isrc/optional) LIBS=()
    PLAIN='60' TORTURE='2 4' RESUME='0 12' NORM=''
}
prog_chibicc() {
    # The compiler proper (-cc1) compiling one of its own files to
    # assembly on standard output. It writes its output only once it has
    # compiled the whole file, so there is no resume check here: see
    # README.md for the kill and resume done by hand.
    DIR=chibicc
    SRCS=(codegen.c hashmap.c main.c parse.c preprocess.c strings.c tokenize.c type.c unicode.c)
    DRV=() FLAGS=(-I.) LIBS=()
    PLAIN='-cc1 -I@SRC@/include -cc1-input @SRC@/parse.c -cc1-output - @SRC@/parse.c'
    TORTURE='-cc1 -I@SRC@/include -I@SRC@/test -cc1-input @SRC@/test/arith.c -cc1-output - @SRC@/test/arith.c'
    RESUME='' NORM=''
}

# --- The held-out set (built at -O2; sizes for 0.5-3 s natively) ---
prog_zlib() {
    # The library without its gz* file functions.
    DIR=zlib
    SRCS=(adler32.c compress.c crc32.c deflate.c infback.c inffast.c inflate.c inftrees.c trees.c
        uncompr.c zutil.c)
    DRV=(zlib_driver.c) FLAGS=(-I.) LIBS=()
    PLAIN='12' TORTURE='1 16' RESUME='0 64' NORM=''
}
prog_jsmn() {
    # A header-only library: jsmn.h, copied as jsmn.c, is the
    # implementation; the driver includes it with JSMN_HEADER.
    DIR=jsmn SRCS=(jsmn.h=jsmn.c) DRV=(jsmn_driver.c)
    FLAGS=(-I.) LIBS=()
    PLAIN='15' TORTURE='2 16 2' RESUME='0 64 4' NORM=''
}
prog_heatshrink() {
    DIR=heatshrink SRCS=(heatshrink_encoder.c heatshrink_decoder.c) DRV=(heatshrink_driver.c)
    FLAGS=(-I.) LIBS=()
    PLAIN='25 1024' TORTURE='2 16' RESUME='0 64' NORM=''
}
prog_qoi() {
    # qoi.h, copied as qoi.c, is compiled with QOI_IMPLEMENTATION; the
    # driver #undefs it to include the declarations only.
    DIR=qoi SRCS=(qoi.h=qoi.c) DRV=(qoi_driver.c)
    FLAGS=(-I. -DQOI_IMPLEMENTATION -DQOI_NO_STDIO) LIBS=()
    PLAIN='60 1024' TORTURE='2 64' RESUME='0 256' NORM=''
}
prog_lodepng() {
    # lodepng.cpp is C as well: copied as lodepng.c.
    DIR=lodepng SRCS=(lodepng.cpp=lodepng.c) DRV=(lodepng_driver.c)
    FLAGS=(-I. -DLODEPNG_NO_COMPILE_DISK) LIBS=()
    PLAIN='15 512' TORTURE='1 48' RESUME='0 128' NORM=''
}
prog_c-ray() {
    # c-ray-f, the filter version (no SDL): the scene of the repository
    # rendered to a PPM image on standard output. It writes the image only
    # once it is rendered, so there is no resume check.
    DIR=c-ray SRCS=(c-ray-f.c) DRV=() FLAGS=() LIBS=(-lm)
    PLAIN='-s 2000x1500 -i @SRC@/scene' TORTURE='-s 40x30 -i @SRC@/scene' RESUME='' NORM=''
}
prog_tinyexpr() {
    DIR=tinyexpr SRCS=(tinyexpr.c) DRV=(tinyexpr_driver.c)
    FLAGS=(-I.) LIBS=(-lm)
    PLAIN='20' TORTURE='1 10 4' RESUME='0 40 10' NORM=''
}
prog_parson() {
    DIR=parson SRCS=(parson.c) DRV=(parson_driver.c)
    FLAGS=(-I.) LIBS=(-lm)
    PLAIN='40 2000' TORTURE='1 40' RESUME='0 200' NORM=''
}

# ===================================================================
# Runs
# ===================================================================

# timed OUT ERR CMD...: run, and sets $ms to its wall time in milliseconds.
timed() {
    local t0 t1
    t0=$(date +%s%N)
    run "$@"
    t1=$(date +%s%N)
    ms=$(((t1 - t0) / 1000000))
}

norm() { if [[ -n $NORM ]]; then sed -e "$NORM" "$1"; else cat "$1"; fi; }

# same A B: the normalized outputs A and B are equal.
same() { cmp -s <(norm "$1") <(norm "$2"); }

describe() {
    case $1 in
    124) echo "timed out after ${LIMIT}s" ;;
    1[3-9][0-9] | 2[0-5][0-9]) echo "signal $(($1 - 128))" ;;
    *) echo "exit $1" ;;
    esac
}

# verdict LABEL OUT STATUS WANT_OUT WANT_STATUS ERR: a table cell.
verdict() {
    local o=$2 st=$3 want=$4 wst=$5 err=$6 line
    if ((st == wst)) && same "$want" "$o"; then
        echo yes
        return
    fi
    line=$(diff <(norm "$want") <(norm "$o") | grep -m1 '^[<>]' || true)
    echo "no ($(describe "$st"), native $(describe "$wst"); ${line:+first difference: ${line:0:60}; }stderr: $(head -c 80 "$err" | tr '\n' ' '))"
}

# args STRING: the words of an argument string, @SRC@ and @DRV@ replaced.
args() {
    local w
    ARGS=()
    for w in $1; do
        w=${w//@SRC@/$src/$DIR}
        ARGS+=("${w//@DRV@/$drv}")
    done
}

# resume_check ARGS...: as tests/levpp/run_corpus.sh does it: ./lev with
# ARGS and a checkpoint file, killed once an image newer than its third
# line is on disk, resumed with LEV_RESUME in a new process and killed once
# it has printed as many lines; its lines must be the native output from
# a line between 4 and the kill on. Sets $cell.
resume_check() {
    local ck=$PWD/ck.img sum0='' killed_at n2 first='' at want
    rm -f "$ck"
    spawn run1.out run1.err env LEV_CHECKPOINT_FILE="$ck" LEV_CHECKPOINT_MS=20 ./lev "$@"
    local run1=$pid
    three_lines_and_image() {
        { (($(lines_in run1.out) >= 3)) && [[ -s $ck ]]; } || ! kill -0 "$run1" 2>/dev/null
    }
    if await three_lines_and_image && [[ -s $ck ]]; then
        sum0=$(cksum <"$ck")
    fi
    newer_image() { [[ $(cksum <"$ck") != "$sum0" ]] || ! kill -0 "$run1" 2>/dev/null; }
    if [[ -z $sum0 ]] || ! await newer_image; then
        stop "$run1" || true
        cell="no (no checkpoint after three lines: $(head -c 80 run1.err | tr '\n' ' '))"
        return
    fi
    if ! stop "$run1"; then
        cell="no (the checkpointed run ended by itself: $(head -c 80 run1.err | tr '\n' ' '))"
        return
    fi
    killed_at=$(lines_in run1.out)
    spawn run2.out run2.err env LEV_RESUME="$ck" ./lev 1 1
    local run2=$pid
    enough_resumed() { (($(lines_in run2.out) >= killed_at)) || ! kill -0 "$run2" 2>/dev/null; }
    await enough_resumed || true
    if ! stop "$run2"; then
        cell="no (the resumed run ended by itself after $(lines_in run2.out) lines: $(head -c 80 run2.err | tr '\n' ' '))"
        return
    fi
    n2=$(lines_in run2.out)
    if ((n2 < killed_at)); then
        cell="no (the resumed run printed $n2 of $killed_at lines: $(head -c 80 run2.err | tr '\n' ' '))"
        return
    fi
    n2=$killed_at
    head -n "$n2" run2.out | norm /dev/stdin >resumed.out
    want=$((2 * killed_at + 1))
    { timeout "$LIMIT" ./native "$@" </dev/null 2>native-long.err || true; } |
        head -n "$want" | norm /dev/stdin >long.out || true
    if (($(lines_in long.out) < want)); then
        cell="no (the native run printed only $(lines_in long.out) lines)"
        return
    fi
    if ! cmp -s <(head -n "$killed_at" long.out) <(head -n "$killed_at" run1.out | norm /dev/stdin); then
        cell="no (the checkpointed run's output is not a prefix of the native one's)"
        return
    fi
    for at in $(awk -v lo=4 -v hi=$((killed_at + 1)) 'NR == FNR { if (FNR == 1) l = $0; next }
            FNR >= lo && FNR <= hi && $0 == l { print FNR }' resumed.out long.out); do
        if cmp -s <(tail -n +"$at" long.out | head -n "$n2") resumed.out; then
            first=$at
            break
        fi
    done
    if [[ -z $first ]]; then
        cell="no (killed after line $killed_at; the resumed lines are not the native output from any line 4..$((killed_at + 1)): $(head -c 60 run2.out | tr '\n' ' '))"
        return
    fi
    cell="yes (killed after line $killed_at, resumed at line $first, $n2 lines compared)"
}

# best_median MS...: the least and the median of some numbers (the upper
# median of an even count).
best_median() {
    printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[1], v[int(NR / 2) + 1] }'
}

# level_of NAME: the optimization flag of a program's builds without
# --opt: -O2 for the held-out set, -O1 for the tuned one.
level_of() {
    if [[ " ${HELD_OUT[*]} " == *" $1 "* ]]; then echo -O2; else echo -O1; fi
}

# md TEXT: TEXT as one Markdown table cell.
md() {
    local t=${1//|/\\|}
    printf '%s' "${t//$'\n'/ }"
}

# The message of each error line of levpp, its location and levpp's own
# prefix dropped.
messages() {
    sed -n 's/^.*error: //p' "$1" | sed 's/^levpp: //'
}

# The class of a message: quoted names replaced by '…'.
classes() {
    messages "$1" | sed "s/'[^']*'/'…'/g"
}

# ===================================================================
# One program
# ===================================================================
ROWS=() RATIOS=()
check() {
    local name=$1 w f
    DIR='' SRCS=() DRV=() FLAGS=() LIBS=() PLAIN='' TORTURE='' RESUME='' NORM=''
    "prog_$name"
    local wd=$out/$name
    rm -rf "$wd"
    mkdir -p "$wd/out" "$wd/gen"
    cd "$wd"
    echo '#define MINIZ_EXPORT' >gen/miniz_export.h
    local pd=$src/$DIR
    local row_lines='' row_levpp='' row_errs='' row_cc='-' row_plain='-' row_tort='-' row_res='-' row_time='-'
    local row_native='-'
    local files=() orig=()
    for f in "${SRCS[@]}"; do orig+=("$pd/${f%%=*}"); done
    for f in "${DRV[@]}"; do orig+=("$drv/$f"); done
    for f in "${orig[@]}"; do
        [[ -f $f ]] || {
            ROWS+=("| $name | - | no such file: SRC_DIR/$DIR/${f#"$pd/"} | | | | | | | |")
            return
        }
    done
    # FILE=NAME.c: a copy of FILE named NAME.c, in the work directory.
    mkdir -p "$wd/src"
    for f in "${SRCS[@]}"; do
        if [[ $f == *=* ]]; then
            cp "$pd/${f%%=*}" "$wd/src/${f#*=}"
            files+=("$wd/src/${f#*=}")
        else
            files+=("$pd/$f")
        fi
    done
    for f in "${DRV[@]}"; do files+=("$drv/$f"); done
    # The optimization level: --opt, else the set's.
    local CFLAGS=(-std=gnu11 "${opt:-$(level_of "$name")}")
    local up=0 ours=0
    for f in "${SRCS[@]}"; do up=$((up + $(wc -l <"$pd/${f%%=*}"))); done
    for f in "${DRV[@]}"; do ours=$((ours + $(wc -l <"$drv/$f"))); done
    row_lines=$up
    ((ours == 0)) || row_lines+=" + $ours"
    local flags=()
    for w in "${FLAGS[@]}"; do
        w=${w//@GEN@/$wd/gen}
        [[ $w == -I* && $w != -I/* ]] && w=-I$pd/${w#-I}
        flags+=("$w")
    done

    # Native build and the plain run's reference. A WRONG_CODE error that
    # the program's own sources trip natively is no error of levpp's: it is
    # left a warning in both builds, and said in the compiles column.
    local nat=ok wrong=("${WRONG_CODE[@]}") tripped=() x
    if ! timeout "$LIMIT" "$cc" "${CFLAGS[@]}" "${wrong[@]}" "${flags[@]}" "${files[@]}" "${LIBS[@]}" -o native \
        >native-build.log 2>&1; then
        wrong=()
        for x in "${WRONG_CODE[@]}"; do
            if grep -q -e "\[$x\]" native-build.log; then
                tripped+=("${x#-Werror=}")
            else
                wrong+=("$x")
            fi
        done
        timeout "$LIMIT" "$cc" "${CFLAGS[@]}" "${wrong[@]}" "${flags[@]}" "${files[@]}" "${LIBS[@]}" \
            -o native >native-build.log 2>&1 ||
            nat="native build failed: $(grep -m1 error native-build.log || head -n 1 native-build.log)"
    fi

    # levpp.
    local lst=0 outarg=$wd/out
    ((${#files[@]} > 1)) || outarg=$wd/out/$name.lev.c
    timeout "$LIMIT" "$levpp" --main-task "${files[@]}" -o "$outarg" -- -I"$inc" "${flags[@]}" \
        >levpp.out 2>levpp.err || lst=$?
    local nerr
    nerr=$(grep -c 'error:' levpp.err || true)
    classes levpp.err | sort | uniq -c | sort -rn >errors.txt
    row_levpp="exit $lst, $nerr errors"
    ((lst < 124)) || row_levpp="$(describe "$lst"), $nerr errors"
    row_errs=$(messages levpp.err | awk '{ c = $0; gsub(/\047[^\047]*\047/, "…", c) } !seen[c]++ && n++ < 3 { printf "%s• %s", (n > 1 ? " " : ""), $0 }')

    if [[ $nat != ok ]]; then
        row_native=$nat
    else
        args "$PLAIN"
        run native.out native.err ./native "${ARGS[@]}"
        row_native="$(describe "$status")"
    fi

    if ((lst == 0)); then
        local gen=("$outarg")
        [[ -d $outarg ]] && gen=("$outarg"/*.c)
        if timeout "$LIMIT" "$cc" "${CFLAGS[@]}" "${wrong[@]}" -I"$inc" "${flags[@]}" "${gen[@]}" \
            "${LIBS[@]}" "$lib" "-Wl,-rpath,$(dirname "$lib")" -o lev >lev-build.log 2>&1; then
            row_cc=yes
            local nw
            nw=$(grep -c 'warning:' lev-build.log || true)
            ((nw == 0)) || row_cc+=" ($nw warnings)"
            ((${#tripped[@]} == 0)) || row_cc+=" (${tripped[*]}: a warning, as the sources trip it natively)"
        else
            row_cc="no: $(grep -m1 -E 'error|undefined' lev-build.log | sed 's/^[^ ]*: //' | cut -c 1-100 || true)"
        fi
    fi
    if [[ $row_cc == yes* && $nat == ok ]]; then
        # Plain runs, timed, alternately; the first pair is compared.
        args "$PLAIN"
        local k nst lst2 ms_n=() ms_l=()
        for ((k = 1; k <= reps; k++)); do
            timed "native.$k.out" "native.$k.err" ./native "${ARGS[@]}"
            nst=$status
            ms_n+=("$ms")
            timed "lev.$k.out" "lev.$k.err" ./lev "${ARGS[@]}"
            lst2=$status
            ms_l+=("$ms")
            if ((k == 1)); then
                row_plain=$(verdict plain lev.1.out "$lst2" native.1.out "$nst" lev.1.err)
                [[ $row_plain == yes ]] || break
            fi
        done
        if [[ $row_plain == yes ]]; then
            local med_n med_l best_n best_l
            read -r best_n med_n < <(best_median "${ms_n[@]}")
            read -r best_l med_l < <(best_median "${ms_l[@]}")
            row_time=$(awk -v l="$med_l" -v n="$med_n" -v bl="$best_l" -v bn="$best_n" 'BEGIN {
                printf "%.2f (%.2f s / %.2f s); best %.2f", l / (n ? n : 1), l / 1000, n / 1000, bl / (bn ? bn : 1) }')
            RATIOS+=("$(awk -v l="$med_l" -v n="$med_n" 'BEGIN { printf "%.6f", l / (n ? n : 1) }')")
        fi

        args "$TORTURE"
        run native-t.out native-t.err ./native "${ARGS[@]}"
        local tst=$status
        run torture.out torture.err stdbuf -oL env LEV_TORTURE=1 ./lev "${ARGS[@]}"
        row_tort=$(verdict torture torture.out "$status" native-t.out "$tst" torture.err)
        if ((status == 124)); then
            # Too slow at every safe point: said so, with how far it got,
            # and checked at every TORTURE_SPARSE-th safe point instead.
            local k
            k=$(lines_in torture.out)
            row_tort="no: timed out after ${LIMIT}s ($k of $(lines_in native-t.out) lines"
            same <(head -n "$k" torture.out) <(head -n "$k" native-t.out) && row_tort+=", as native" ||
                row_tort+=", not as native"
            run torture-sparse.out torture-sparse.err env LEV_TORTURE="$TORTURE_SPARSE" ./lev "${ARGS[@]}"
            row_tort+="); LEV_TORTURE=$TORTURE_SPARSE: $(verdict torture torture-sparse.out "$status" native-t.out \
                "$tst" torture-sparse.err)"
        fi

        if [[ -n $RESUME ]]; then
            args "$RESUME"
            local cell=''
            resume_check "${ARGS[@]}"
            row_res=$cell
        fi
    fi
    ROWS+=("| $name | $row_lines | $(md "$row_levpp") | $(md "$row_errs") | $(md "$row_cc") | $(md "$row_plain") | $(md "$row_tort") | $(md "$row_res") | $(md "$row_time") | $(md "$row_native") |")
    cd "$out"
}

selected=("$@")
if ((${#selected[@]} == 0)); then
    case $set in
    tuned) selected=("${PROGRAMS[@]}") ;;
    held-out) selected=("${HELD_OUT[@]}") ;;
    all) selected=("${PROGRAMS[@]}" "${HELD_OUT[@]}") ;;
    esac
fi
for name in "${selected[@]}"; do
    declare -F "prog_$name" >/dev/null || { echo "run.sh: no program $name (${PROGRAMS[*]})" >&2; exit 2; }
done
for name in "${selected[@]}"; do
    echo "run.sh: $name" >&2
    check "$name"
done

{
    echo "levpp $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$top" diff --quiet HEAD 2>/dev/null || echo ' (modified tree)'), $("$cc" --version | head -n 1), ${opt:--O1 tuned, -O2 held-out}, load average $(cut -d" " -f1-3 /proc/loadavg) at the end, $(date -u +%Y-%m-%d)"
    echo
    echo "| program | lines of C (upstream + ours) | levpp | first distinct errors | compiles | plain | LEV_TORTURE=1 | kill + resume | time lev / native: medians of $reps, alternated (lev / native); ratio of the bests | native plain run |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${ROWS[@]}"
    if ((${#RATIOS[@]})); then
        echo
        printf '%s\n' "${RATIOS[@]}" | awk '{ s += log($1); n++ } END {
            printf "Geometric mean of the time ratios (medians) of the %d programs timed: %.3f\n", n, exp(s / n) }'
    fi
} >"$out/table.md"

# Errors of every refused program, grouped by message (names as '…').
{
    for name in "${selected[@]}"; do
        [[ -s $out/$name/errors.txt ]] || continue
        echo "## $name"
        echo
        sed 's/^ *\([0-9]*\) /\1\t/' "$out/$name/errors.txt"
        echo
    done
} >"$out/errors.md"

cat "$out/table.md"
echo >&2
echo "run.sh: table in $out/table.md, errors grouped by message in $out/errors.md, each program's files in $out/NAME/" >&2
