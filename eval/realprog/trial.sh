#!/usr/bin/env bash
# trial.sh - the external trial of issue 25 ("levpp on real C it has
# never seen"), run again: builds of real C programs, each made of the
# sources and flags its own build files use (a library without a main
# of its own with its own tool, or else a driver of ours), given to
# levpp --main-task unmodified. For each build: what levpp says; whether
# its output compiles with gcc (the WRONG_CODE errors of
# tests/levpp/driver_common.sh) and passes clang -fsyntax-only with the
# same errors; and whether it prints the same output and exits with the
# same status as the native build plainly, under LEV_TORTURE=1 (a capture
# and a restore at every safe point) on a small input, and when it is
# killed with SIGKILL once a checkpoint is on disk and resumed from it in a
# new process, standard output a file. Prints a Markdown table and writes
# it to OUT/table.md. See eval/README.md, "Real programs, second trial
# (issue 25)".
#
# usage: eval/realprog/trial.sh [OPTIONS] SRC_DIR [BUILD...]
#   SRC_DIR          checkouts, named as fetch.sh names them: zlib bzip2
#                    xxHash yyjson parson jsmn tinyexpr heatshrink lodepng
#                    qoi c-ray zstd mujs brotli lua54, at the commits of
#                    eval/realprog/fetch.sh (fetch.sh SRC_DIR NAME...)
#   BUILD            only these (default: all; names in BUILDS below)
#   --out DIR        work and result directory (default: a new one under /tmp)
#   --build DIR      the build tree: DIR/preproc/levpp, DIR/leverage/
#                    libleverage.so, DIR/leverage/include (default: build/
#                    at the top of the repository)
#   --cc CC          the C compiler (default gcc; clang checks the output too)
#   --limit S        seconds any one levpp run, build, run or awaited
#                    condition may take (default 300)
#   --sparse N       a LEV_TORTURE=1 run that times out is done again with
#                    LEV_TORTURE=N, every N-th safe point (default 1000)
set -euo pipefail

usage() {
    sed -n '/^# usage:/,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//p}' "$0" >&2
    exit 2
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
# await, lines_in, run, stop
# shellcheck source=../../tests/levpp/proc_common.sh
source "$top/tests/levpp/proc_common.sh"
# rp_tree, rp_out, WRONG_CODE, describe
# shellcheck source=common.sh
source "$here/common.sh"
out='' build=$top/build cc=gcc LIMIT=300 SPARSE=1000
while (($#)) && [[ $1 == --* ]]; do
    (($# >= 2)) || usage
    case $1 in
    --out) out=$2 ;;
    --build) build=$2 ;;
    --cc) cc=$2 ;;
    --limit) LIMIT=$2 ;;
    --sparse) SPARSE=$2 ;;
    *) usage ;;
    esac
    shift 2
done
(($# >= 1)) || usage
src=$(realpath "$1")
shift
rp_tree trial.sh
CLANG=${LEV_CLANG:-clang}
command -v "$CLANG" >/dev/null || { echo "trial.sh: no $CLANG" >&2; exit 2; }
rp_out trial.sh trial

# ===================================================================
# The builds
# ===================================================================
# Each b_NAME sets:
#   DIR      the checkout, under SRC_DIR
#   SRCS     files given to levpp, relative to it (globs allowed);
#            FILE=NAME.c gives a copy of FILE named NAME.c
#   DRV      drivers of ours given to levpp (drivers/), if any
#   FLAGS    flags of levpp and both builds (-I relative to the checkout)
#   STD      the -std= of the program's build (default gnu11)
#   LIBS     libraries of both links
#   GEN      a header the program's build generates, FILE=TEXT: made in a
#            directory of its own, -I@GEN@ in FLAGS
#   PLAIN    arguments of the plain run; TORTURE of the LEV_TORTURE=1 run
#            (small); RESUME of the run killed and resumed (long enough
#            for two checkpoints). A word <FILE is standard input (else
#            /dev/null); @SRC@ is the checkout, @DRV@ drivers/, @DATA@
#            the inputs made below.
BUILDS=(zlib minigzip bzip2-lib bzip2 xxhsum xxhsum-unit yyjson parson jsmn tinyexpr heatshrink
    lodepng qoi tweetnacl c-ray zstd mujs brotli lua zstd-nolegacy)

ZLIB=(adler32.c compress.c crc32.c deflate.c gzclose.c gzlib.c gzread.c gzwrite.c infback.c inffast.c
    inflate.c inftrees.c trees.c uncompr.c zutil.c)
BZLIB=(blocksort.c huffman.c crctable.c randtable.c compress.c decompress.c bzlib.c)
XSUM=(cli/xxhsum.c cli/xsum_os_specific.c cli/xsum_output.c cli/xsum_sanity_check.c cli/xsum_bench.c)

b_zlib() { # the library (configure's flags), with our driver
    DIR=zlib SRCS=("${ZLIB[@]}") DRV=(zlib_driver.c) FLAGS=(-I. -D_LARGEFILE64_SOURCE=1 -DHAVE_HIDDEN)
    PLAIN='2' TORTURE='1 16' RESUME='3'
}
b_minigzip() { # zlib's test/minigzip, stdin to stdout
    DIR=zlib SRCS=(test/minigzip.c "${ZLIB[@]}") FLAGS=(-I. -D_LARGEFILE64_SOURCE=1 -DHAVE_HIDDEN)
    PLAIN='-9 <@DATA@/text-4m' TORTURE='-6 <@DATA@/text-64k' RESUME='-9 <@DATA@/text-16m'
}
# bz_version.h as CMake makes it from bz_version.h.in and the project's
# VERSION.
BZGEN='bz_version.h=#define BZ_VERSION "1.1.0"'
b_bzip2-lib() { # libbz2 with its own dlltest.c (minibz2), stdin to stdout
    DIR=bzip2 SRCS=("${BZLIB[@]}" dlltest.c) FLAGS=(-I. -I@GEN@) GEN=$BZGEN
    PLAIN='<@DATA@/text-4m' TORTURE='-1 <@DATA@/text-16k' RESUME='<@DATA@/text-4m'
}
b_bzip2() { # the command line tool
    DIR=bzip2 SRCS=("${BZLIB[@]}" bzip2.c) FLAGS=(-I. -I@GEN@ -DBZ_LCCWIN32=0 -DBZ_UNIX) GEN=$BZGEN
    PLAIN='-c <@DATA@/text-4m' TORTURE='-1 -c <@DATA@/text-16k' RESUME='-c <@DATA@/text-4m'
}
b_xxhsum() { # the Makefile's xxhsum: xxhash.c and cli/*.c
    DIR=xxHash SRCS=(xxhash.c "${XSUM[@]}") FLAGS=(-I.)
    PLAIN='-H0 @DATA@/text-4m @DATA@/text-16k' TORTURE='-H3 <@DATA@/text-16k'
    RESUME="-H1$(printf ' @DATA@/text-64m%.0s' {1..24})"
}
b_xxhsum-unit() { # the Makefile's xxhsum_inlinedXXH: one unit, XXH_INLINE_ALL
    DIR=xxHash SRCS=(cli/xxhsum.c) FLAGS=(-I. -DXXH_INLINE_ALL)
    PLAIN='-H2 @DATA@/text-4m @DATA@/text-16k' TORTURE='-H0 <@DATA@/text-16k'
    RESUME="-H1$(printf ' @DATA@/text-64m%.0s' {1..24})"
}
b_yyjson() { # the library with its own misc/jsoninfo.c
    DIR=yyjson SRCS=(src/yyjson.c misc/jsoninfo.c) FLAGS=(-Isrc)
    PLAIN='@DATA@/doc-4m.json' TORTURE='@DATA@/doc-16k.json' RESUME='@DATA@/doc-64m.json'
}
b_parson() {
    DIR=parson SRCS=(parson.c) DRV=(parson_driver.c) FLAGS=(-I.) LIBS=(-lm)
    PLAIN='4 2000' TORTURE='1 40' RESUME='12 2000'
}
b_jsmn() { # header-only: jsmn.h as jsmn.c
    DIR=jsmn SRCS=(jsmn.h=jsmn.c) DRV=(jsmn_driver.c) FLAGS=(-I.)
    PLAIN='2' TORTURE='2 16 2' RESUME='6'
}
b_tinyexpr() {
    DIR=tinyexpr SRCS=(tinyexpr.c) DRV=(tinyexpr_driver.c) FLAGS=(-I.) LIBS=(-lm)
    PLAIN='2' TORTURE='1 10 4' RESUME='6'
}
b_heatshrink() { # the command line tool, stdin to stdout (Makefile: dynamic allocation)
    DIR=heatshrink SRCS=(heatshrink.c heatshrink_encoder.c heatshrink_decoder.c) STD=c99
    FLAGS=(-I. -DHEATSHRINK_DYNAMIC_ALLOC=1)
    PLAIN='-e -w 11 -l 4 <@DATA@/text-4m' TORTURE='-e -w 8 -l 4 <@DATA@/text-16k'
    RESUME='-e -w 12 -l 5 <@DATA@/text-4m'
}
b_lodepng() { # lodepng.cpp is C: as lodepng.c
    DIR=lodepng SRCS=(lodepng.cpp=lodepng.c) DRV=(lodepng_driver.c) FLAGS=(-I. -DLODEPNG_NO_COMPILE_DISK)
    PLAIN='2 512' TORTURE='1 48' RESUME='4 512'
}
b_qoi() { # header-only: qoi.h as qoi.c
    DIR=qoi SRCS=(qoi.h=qoi.c) DRV=(qoi_driver.c) FLAGS=(-I. -DQOI_IMPLEMENTATION -DQOI_NO_STDIO)
    PLAIN='8 1024' TORTURE='2 64' RESUME='24 1024'
}
b_tweetnacl() { # one of the first trial's builds; no copy of it here, so none defined
    DIR=tweetnacl
}
b_c-ray() { # c-ray-f, the scene of the repository as a PPM image on stdout
    DIR=c-ray SRCS=(c-ray-f.c) STD=c99 LIBS=(-lm)
    PLAIN='-s 400x300 -i @SRC@/scene' TORTURE='-s 40x30 -i @SRC@/scene' RESUME='-s 800x600 -i @SRC@/scene'
}
b_zstd() { # make zstd-nomt ZSTD_NO_ASM=1 HAVE_ZLIB=0 HAVE_LZMA=0 HAVE_LZ4=0, stdin to stdout
    DIR=zstd
    SRCS=('lib/common/*.c' 'lib/compress/*.c' 'lib/decompress/*.c' 'lib/dictBuilder/*.c'
        'lib/legacy/zstd_v0[5-7].c' 'programs/*.c')
    FLAGS=(-Ilib -Ilib/common -Ilib/compress -Ilib/legacy -Ilib/dictBuilder -Iprograms -DXXH_NAMESPACE=ZSTD_
        -DDEBUGLEVEL=0 -DZSTD_DISABLE_ASM -DZSTD_LEGACY_SUPPORT=5 -DBACKTRACE_ENABLE=0)
    PLAIN='-q -c -3 <@DATA@/text-4m' TORTURE='-q -c -1 <@DATA@/text-16k' RESUME='-q -c -19 <@DATA@/text-4m'
}
b_zstd-nolegacy() { # not in the first trial: make zstd-nolegacy, without lib/legacy
    b_zstd
    SRCS=('lib/common/*.c' 'lib/compress/*.c' 'lib/decompress/*.c' 'lib/dictBuilder/*.c' 'programs/*.c')
    FLAGS=("${FLAGS[@]/-DZSTD_LEGACY_SUPPORT=5/-DZSTD_LEGACY_SUPPORT=0}")
}
b_mujs() { # the Makefile's release build: one.c (every js*.c) and main.c
    DIR=mujs SRCS=(one.c main.c) STD=c99 FLAGS=(-I.) LIBS=(-lm)
    PLAIN='@DATA@/bench.js 4' TORTURE='@DATA@/bench.js 1' RESUME='@DATA@/bench.js 24'
}
b_brotli() { # CMake's brotli tool: c/tools/brotli.c and c/{common,dec,enc}/*.c
    DIR=brotli SRCS=(c/tools/brotli.c 'c/common/*.c' 'c/dec/*.c' 'c/enc/*.c') FLAGS=(-Ic/include) LIBS=(-lm)
    PLAIN='-c -q 9 <@DATA@/text-4m' TORTURE='-c -q 2 <@DATA@/text-16k' RESUME='-c -q 11 <@DATA@/text-1m'
}
b_lua() { # Lua 5.4: the interpreter (lua.c and the libraries), running drivers/bench.lua
    DIR=lua54
    SRCS=(lapi.c lauxlib.c lbaselib.c lcode.c lcorolib.c lctype.c ldblib.c ldebug.c ldo.c ldump.c lfunc.c
        lgc.c linit.c liolib.c llex.c lmathlib.c lmem.c loadlib.c lobject.c lopcodes.c loslib.c lparser.c
        lstate.c lstring.c lstrlib.c ltable.c ltablib.c ltm.c lua.c lundump.c lutf8lib.c lvm.c lzio.c)
    STD=c99 FLAGS=(-I. -DLUA_USE_LINUX) LIBS=(-lm -ldl)
    PLAIN='@DRV@/bench.lua 20 2000' TORTURE='@DRV@/bench.lua 2 200' RESUME='@DRV@/bench.lua 60 2000'
}

selected=("$@")
((${#selected[@]})) || selected=("${BUILDS[@]}")
for name in "${selected[@]}"; do
    declare -F "b_$name" >/dev/null || { echo "trial.sh: no build $name (${BUILDS[*]})" >&2; exit 2; }
done

# ===================================================================
# Inputs
# ===================================================================
data=$out/data
mkdir -p "$data"
# text-SIZE: SIZE bytes of lines of words and numbers from a seeded
# generator (text that compresses about as C source does).
text() {
    local f=$data/text-$1
    [[ -s $f ]] && return
    awk -v n="$2" 'BEGIN { split("int char static return if else for while struct const void size_t " \
        "buf len ptr node next count value state error table hash = == + - * ; { } ( ) [ ] ,", w, " ")
        s = 11; for (len = 0; len < n; len += length(line)) { line = ""; k = 3 + len % 9
        for (j = 0; j < k; j++) { s = (s * 1103515245 + 12345) % 2147483648; r = int(s / 65536)
            line = line (j ? " " : "") (r % 5 ? w[1 + r % 36] : r % 1000) }
        line = substr(line "\n", 1, n - len); printf "%s", line } }' >"$f"
}
# doc-SIZE.json: an array of records of every JSON type.
doc() {
    local f=$data/doc-$1.json
    [[ -s $f ]] && return
    awk -v n="$2" 'BEGIN { s = 7; printf "[\n"; for (i = 0; len < n; i++) {
        s = (s * 1103515245 + 12345) % 2147483648
        r = sprintf("%s{\"id\": %d, \"name\": \"item \\u00e9 %d\", \"ratio\": %.6f, \"ok\": %s, \"tags\": [\"a\", %d, null, -%d.5e-3], \"more\": {\"n\": null}}",
            i ? ",\n" : "", i, s % 977, s / 2147483648, s % 2 ? "true" : "false", s % 31, s % 7)
        printf "%s", r; len += length(r) }
        printf "\n]\n" }' >"$f"
}
text 16k 16384
text 64k 65536
text 1m 1048576
text 4m 4194304
text 16m 16777216
text 64m 67108864
doc 16k 16384
doc 4m 4194304
doc 64m 67108864
# mujs: a script of ours, ROUNDS from its argument: objects, closures,
# strings, arrays sorted, JSON and regular expressions; a line a round.
cat >"$data/bench.js" <<'EOF'
var rounds = Number(scriptArgs[0] || 1);
function rng(s) { return function () { s = (s * 1103515245 + 12345) % 2147483648; return s; }; }
for (var r = 1; r <= rounds; r++) {
    var next = rng(r), a = [], h = 0, words = {};
    for (var i = 0; i < 20000; i++) a.push({ k: next() % 1000, s: "w" + (next() % 97) });
    a.sort(function (x, y) { return x.k - y.k || (x.s < y.s ? -1 : x.s > y.s ? 1 : 0); });
    for (i = 0; i < a.length; i++) { h = (h * 31 + a[i].k) % 1000003; words[a[i].s] = (words[a[i].s] || 0) + 1; }
    var text = JSON.stringify(a.slice(0, 2000)), back = JSON.parse(text);
    var m = text.match(/"w[0-9]+"/g).length, parts = text.split(",").length;
    print(r, a.length, h, Object.keys(words).length, text.length, back.length, m, parts);
}
EOF

# ===================================================================
# One build
# ===================================================================
# args STRING: ARGS and IN (standard input) from an argument string.
args() {
    local w
    ARGS=() IN=/dev/null
    for w in $1; do
        w=${w//@SRC@/$src/$DIR}
        w=${w//@DRV@/$here/drivers}
        w=${w//@DATA@/$data}
        if [[ $w == '<'* ]]; then IN=${w#<}; else ARGS+=("$w"); fi
    done
}

# ran OUT STATUS ERR WANT WANT_STATUS: "yes", or what differs.
ran() {
    local o=$1 st=$2 err=$3 want=$4 wst=$5
    if ((st == wst)) && cmp -s "$want" "$o"; then
        echo yes
        return
    fi
    local d
    d=$(cmp "$want" "$o" 2>&1 | head -n 1 | sed 's/^.*differ: //') || true
    echo "no: $(describe "$st") (native $(describe "$wst")), ${d:-same output}, $(wc -c <"$o") of $(wc -c <"$want") bytes; stderr: $(head -c 160 "$err" | tr '\n' ' ')"
}

# native_run LABEL: the native build's output and status with ARGS < IN.
native_run() {
    nst=0
    timeout "$LIMIT" ./native "${ARGS[@]}" <"$IN" >"$1.native" 2>"$1.native.err" || nst=$?
}

# resume_check [any]: ./lev with a checkpoint every 20 ms, its output to
# a file, killed with SIGKILL once an image is on disk that was written
# after its first output (with "any": after its start) and a newer one,
# then LEV_RESUME in a new process, the same stdin, the same output file
# (cut back by the runtime to its size at the image); the file and the
# status must be the native run's. A program whose output comes only at
# its end is checked with "any" once its first run has ended. Sets $cell.
resume_check() {
    local ck=$PWD/ck.img sum0='' rst=0 run1
    rm -f "$ck" resume.out
    env LEV_CHECKPOINT_FILE="$ck" LEV_CHECKPOINT_MS=20 ./lev "${ARGS[@]}" <"$IN" >resume.out 2>resume1.err &
    run1=$!
    first_image() {
        { [[ -s $ck ]] && { [[ ${1-} == any ]] || [[ -s resume.out ]]; }; } || ! kill -0 "$run1" 2>/dev/null
    }
    await first_image "${1-}" || true
    [[ ! -s $ck ]] || sum0=$(cksum <"$ck")
    newer_or_end() { [[ $(cksum <"$ck") != "$sum0" ]] || ! kill -0 "$run1" 2>/dev/null; }
    [[ -z $sum0 ]] || await newer_or_end || true
    if ! stop "$run1"; then
        if [[ -z ${1-} && -s $ck ]]; then
            resume_check any
            return
        fi
        cell="no: the checkpointed run ended before two images ($(head -c 160 resume1.err | tr '\n' ' '))"
        return
    fi
    local at
    at=$(wc -c <resume.out)
    timeout "$LIMIT" env LEV_RESUME="$ck" ./lev <"$IN" >>resume.out 2>resume2.err || rst=$?
    cell=$(ran resume.out "$rst" resume2.err resume.native "$nst")
    [[ $cell != yes ]] || cell="yes (killed at $at of $(wc -c <resume.native) bytes)"
}

ROWS=()
check() {
    local name=$1 f w
    DIR='' SRCS=() DRV=() FLAGS=() STD=gnu11 LIBS=() GEN='' PLAIN='' TORTURE='' RESUME=''
    "b_$name"
    local pd=$src/$DIR wd=$out/$name
    local c_lev='-' c_cc='-' c_plain='-' c_tort='-' c_res='-' given
    given="$(printf '%s ' "${SRCS[@]%%=*}")${DRV[*]:++ ${DRV[*]}}"
    if [[ ! -d $pd ]] || ((${#SRCS[@]} == 0)); then
        ROWS+=("| $name | - | not available | no SRC_DIR/$DIR or no sources | - | - | - | - |")
        return
    fi
    rm -rf "$wd"
    mkdir -p "$wd/src" "$wd/out" "$wd/gen"
    [[ -z $GEN ]] || printf '%s\n' "${GEN#*=}" >"$wd/gen/${GEN%%=*}"
    cd "$pd"
    local files=()
    for f in "${SRCS[@]}"; do
        if [[ $f == *=* ]]; then
            cp "${f%%=*}" "$wd/src/${f#*=}"
            files+=("$wd/src/${f#*=}")
        else
            for w in $f; do files+=("$pd/$w"); done
        fi
    done
    for f in "${DRV[@]}"; do files+=("$here/drivers/$f"); done
    given="$given (${#files[@]} files)"
    cd "$wd"
    local flags=()
    for w in "${FLAGS[@]}"; do
        w=${w//@GEN@/$wd/gen}
        [[ $w == -I* && $w != -I/* ]] && w=-I$pd/${w#-I}
        flags+=("$w")
    done
    local CF=(-std="$STD" -O2)

    # The native build; a WRONG_CODE error its own sources trip is left a
    # warning in both builds.
    local wrong=("${WRONG_CODE[@]}") x
    if ! timeout "$LIMIT" "$cc" "${CF[@]}" "${wrong[@]}" "${flags[@]}" "${files[@]}" "${LIBS[@]}" -o native \
        >native-build.log 2>&1; then
        wrong=()
        for x in "${WRONG_CODE[@]}"; do grep -q -e "\[$x\]" native-build.log || wrong+=("$x"); done
        timeout "$LIMIT" "$cc" "${CF[@]}" "${wrong[@]}" "${flags[@]}" "${files[@]}" "${LIBS[@]}" -o native \
            >native-build.log 2>&1 || {
            ROWS+=("| $name | $given | - | native build failed: $(grep -m1 error native-build.log) | - | - | - | - |")
            return
        }
    fi

    local lst=0 outarg=$wd/out
    ((${#files[@]} > 1)) || outarg=$wd/out/$name.lev.c
    timeout "$LIMIT" "$levpp" --main-task "${files[@]}" -o "$outarg" -- -I"$inc" "${flags[@]}" \
        >levpp.out 2>levpp.err || lst=$?
    if ((lst != 0)); then
        c_lev="refused ($(describe "$lst"), $(grep -c 'error:' levpp.err || true) errors): $(grep -m1 'error:' levpp.err |
            sed "s|$pd/||g; s|$here/||g" || true)"
    else
        c_lev=accepted
        local gen=("$outarg")
        [[ -d $outarg ]] && gen=("$outarg"/*.c)
        if ! timeout "$LIMIT" "$cc" "${CF[@]}" "${wrong[@]}" -I"$inc" "${flags[@]}" "${gen[@]}" "${LIBS[@]}" \
            "$lib" "-Wl,-rpath,$(dirname "$lib")" -o lev >lev-build.log 2>&1; then
            c_cc="no ($cc): $(grep -m1 -E 'error|undefined' lev-build.log | sed "s|$pd/||g; s|$wd/||g")"
        elif ! timeout "$LIMIT" "$CLANG" -fsyntax-only "${CF[@]}" "${wrong[@]}" -I"$inc" "${flags[@]}" \
            "${gen[@]}" >clang.log 2>&1; then
            c_cc="no (clang): $(grep -m1 'error' clang.log | sed "s|$pd/||g; s|$wd/||g")"
        else
            c_cc=yes
        fi
    fi
    if [[ $c_cc == yes ]]; then
        local st=0
        args "$PLAIN"
        native_run plain
        timeout "$LIMIT" ./lev "${ARGS[@]}" <"$IN" >plain.lev 2>plain.err || st=$?
        c_plain=$(ran plain.lev "$st" plain.err plain.native "$nst")

        args "$TORTURE"
        native_run torture
        st=0
        timeout "$LIMIT" env LEV_TORTURE=1 ./lev "${ARGS[@]}" <"$IN" >torture.lev 2>torture.err || st=$?
        c_tort=$(ran torture.lev "$st" torture.err torture.native "$nst")
        if ((st == 124)); then
            st=0
            timeout "$LIMIT" env LEV_TORTURE="$SPARSE" ./lev "${ARGS[@]}" <"$IN" >sparse.lev 2>sparse.err || st=$?
            c_tort="LEV_TORTURE=1 timed out after ${LIMIT}s; LEV_TORTURE=$SPARSE: $(ran sparse.lev "$st" \
                sparse.err torture.native "$nst")"
        fi

        args "$RESUME"
        native_run resume
        local cell=''
        resume_check
        c_res=$cell
    fi
    local result=passed
    if [[ $c_lev != accepted ]]; then
        result=refused
    elif [[ $c_cc != yes ]]; then
        result=uncompilable
    elif [[ "$c_plain$c_tort$c_res" == *'cannot be captured'* ]]; then
        result='refused at capture'
    elif [[ $c_plain != yes || $c_tort != yes || $c_res != yes* ]]; then
        result=wrong
    fi
    ROWS+=("| $name | $given | $result | ${c_lev//|/\\|} | ${c_cc//|/\\|} | ${c_plain//|/\\|} | ${c_tort//|/\\|} | ${c_res//|/\\|} |")
}

for name in "${selected[@]}"; do
    echo "trial.sh: $name" >&2
    check "$name"
    cd "$out"
done
{
    echo "levpp $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?'), $("$cc" --version | head -n 1), $(date -u +%Y-%m-%d)"
    echo
    echo "| build | files given to levpp | result | levpp | compiles (gcc, clang) | plain | LEV_TORTURE=1 | kill + resume |"
    echo "|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${ROWS[@]}"
} >"$out/table.md"
cat "$out/table.md"
