# shellcheck shell=bash
# shellcheck disable=SC2034  # the variables set here are used by the scripts that source it
# common.sh - what run.sh and trial.sh share: the build tree's levpp,
# runtime and headers, the work directory, the WRONG_CODE errors and how
# an exit status reads. Sourced; the caller sets top (the repository),
# build and out (its options), and LIMIT (the seconds of a run).

# rp_tree SCRIPT: levpp, lib and inc of the build tree $build (made a
# full path), or a message naming what is missing.
rp_tree() {
    build=$(realpath "$build")
    levpp=$build/preproc/levpp lib=$build/leverage/libleverage.so inc=$build/leverage/include
    local f
    for f in "$levpp" "$lib" "$inc/leverage.h"; do
        [[ -e $f ]] || { echo "$1: no $f (cmake --build BUILD --target levpp leverage)" >&2; exit 1; }
    done
}

# rp_out SCRIPT PREFIX: the work directory $out, made (a new one,
# /tmp/PREFIX.XXXXXX, if empty) and a full path; never inside the
# repository $top.
rp_out() {
    if [[ -z $out ]]; then
        out=$(mktemp -d "/tmp/$2.XXXXXX")
    else
        mkdir -p "$out"
        out=$(realpath "$out")
    fi
    # shellcheck disable=SC2154  # top: the caller's
    case $out/ in
    "$top"/*) echo "$1: --out must be outside the repository" >&2; exit 2 ;;
    esac
}

# As in tests/levpp/driver_common.sh: warnings that mean the code does
# something other than its source says are errors in levpp's output.
WRONG_CODE=(-Werror=implicit-function-declaration -Werror=incompatible-pointer-types
    -Werror=int-conversion -Werror=return-type)

# describe STATUS: how a run bounded by `timeout $LIMIT` ended.
describe() {
    case $1 in
    124) echo "timed out after ${LIMIT}s" ;;
    1[3-9][0-9] | 2[0-5][0-9]) echo "signal $(($1 - 128))" ;;
    *) echo "exit $1" ;;
    esac
}
