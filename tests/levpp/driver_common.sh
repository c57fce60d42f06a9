# shellcheck shell=bash
# shellcheck disable=SC2034  # the variables set here are used by the scripts that source it
# driver_common.sh - what run_corpus.sh and run_checks.sh share: their
# options (--levpp, --cc, --lib, --include, --flags, --work, before the
# items), and from them the compiler flags, the include flags, the link
# line and a fresh work directory. Sourced; the caller defines usage().

levpp='' cc='' lib='' include='' flags='' work=''
while (($#)) && [[ $1 == --* ]]; do
    if [[ $1 == *=* ]]; then # --option=VALUE (VALUE may be empty)
        opt=${1%%=*} val=${1#*=}
        shift
    else
        (($# >= 2)) || usage
        opt=$1 val=$2
        shift 2
    fi
    case $opt in
    --levpp) levpp=$(realpath "$val") ;;
    --cc) cc=$val ;;
    --lib) lib=$(realpath "$val") ;;
    --include) include=$val ;;
    --flags) flags=$val ;;
    --work) work=$val ;;
    *) usage ;;
    esac
done
[[ -n $levpp && -n $cc && -n $lib && -n $work ]] && (($#)) || usage

read -r -a FLAGS <<<"${flags//;/ }"
INCS=()
IFS=: read -r -a dirs <<<"$include"
for d in "${dirs[@]}"; do
    [[ -n $d ]] && INCS+=("-I$d")
done
CFLAGS=(-std=gnu11 -O2 -g -Wall -Wextra)
# Warnings that mean the code does something other than its source says:
# errors when levpp's output is built.
WRONG_CODE=(-Werror=implicit-function-declaration -Werror=incompatible-pointer-types
    -Werror=int-conversion -Werror=return-type)
LINK=("$lib" "-Wl,-rpath,$(dirname "$lib")")
# The second compiler levpp's output must satisfy: clang -fsyntax-only with
# the WRONG_CODE errors, so that an output only one of gcc and clang
# rejects is caught (run.sh installs clang; LEV_CLANG names another).
CLANG=${LEV_CLANG:-clang}
command -v "$CLANG" >/dev/null || { echo "$0: no $CLANG (the second compiler of levpp's output)" >&2; exit 2; }

rm -rf "$work"
mkdir -p "$work"
work=$(realpath "$work")
