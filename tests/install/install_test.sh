#!/usr/bin/env bash
# install_test.sh - installs a Leverage build into a scratch prefix, then
# builds a small program against that prefix and runs it: once with
# pkg-config and cc, once with a CMake project that uses find_package;
# where levpp is installed, that project's programs also carry a task
# module embedded by leverage_add_tasks, and load it.
#
# usage: install_test.sh BUILD_DIR WORK_DIR LIBDIR INCLUDEDIR CMAKE CC [FLAGS]
#   LIBDIR, INCLUDEDIR  install directories relative to the prefix
#   FLAGS               compile and link flags every consumer needs (the
#                       sanitizers of a sanitized build), a CMake ;-list
set -euo pipefail

if (($# < 6)); then
    sed -n '8,11s/^# \{0,1\}//p' "$0" >&2
    exit 2
fi
build=$1 work=$2 libdir=$3 incdir=$4 cmake=$5 cc=$6 flags=${7:-}
flags=${flags//;/ }
src=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/consumer
prefix=$work/prefix
lib=$prefix/$libdir

fail() {
    echo "install test: FAIL: $*" >&2
    exit 1
}
step() { echo "== $*"; }

# Runs a command with a time limit, its output in LOG, shown only on failure.
logged() {
    local log=$1 limit=$2
    shift 2
    if ! timeout "$limit" "$@" >"$log" 2>&1; then
        cat "$log" >&2
        fail "$* (log: $log)"
    fi
}

# Runs a consumer program and compares what it prints with the message the
# installed lev_errors.h gives LEV_EINVAL.
check_run() {
    local name=$1 out
    shift
    out=$(timeout 30 "$@") || fail "$name exited with status $?"
    [[ $out == "$expected" ]] || fail "$name printed '$out', expected '$expected'"
    echo "$name: $out"
}

rm -rf "$work"
mkdir -p "$work"

step "install into $prefix"
logged "$work/install.log" 120 "$cmake" --install "$build" --prefix "$prefix"
for f in "$incdir"/leverage.h "$incdir"/lev_abi.h "$incdir"/lev_errors.h "$incdir"/lev_task.h \
    "$incdir"/lev_client.h \
    "$libdir"/libleverage.so "$libdir"/libleverage.a "$libdir"/pkgconfig/leverage.pc \
    "$libdir"/cmake/Leverage/LeverageConfig.cmake \
    "$libdir"/cmake/Leverage/LeverageConfigVersion.cmake \
    "$libdir"/cmake/Leverage/LeverageTargets.cmake; do
    [[ -e $prefix/$f ]] || fail "not installed: $f"
done
soname=$(objdump -p "$lib/libleverage.so" | awk '$1 == "SONAME" { print $2 }')
[[ $soname == libleverage.so.[0-9]* ]] || fail "libleverage.so has SONAME '$soname'"
[[ -e $lib/$soname ]] || fail "not installed: $libdir/$soname"

msg=$(sed -n 's/.*X(EINVAL, *-[0-9][0-9]*, *"\([^"]*\)").*/\1/p' "$prefix/$incdir/lev_errors.h")
[[ -n $msg ]] || fail "no message for EINVAL in the installed lev_errors.h"
expected="LEV_EINVAL: $msg"

step "only the public API is exported"
# Besides lev_*: the linker's own symbols, and ASan's markers of exported
# globals in a sanitized build.
extra=$(nm -D --defined-only "$lib/libleverage.so" | awk '{ print $NF }' |
    grep -Ev '^(lev_|LEV_|_init$|_fini$|_edata$|_end$|__bss_start$|__odr_asan)' || true)
[[ -z $extra ]] || fail "libleverage.so exports symbols outside the API:" "$(tr '\n' ' ' <<<"$extra")"

step "pkg-config and cc"
export PKG_CONFIG_PATH=$lib/pkgconfig
[[ $(pkg-config --variable=prefix leverage) == "$prefix" ]] ||
    fail "leverage.pc names prefix '$(pkg-config --variable=prefix leverage)'"
# shellcheck disable=SC2046,SC2086 # both are lists of flags
logged "$work/cc.log" 120 "$cc" $flags "$src/consumer.c" -o "$work/consumer-pc" \
    $(pkg-config --cflags --libs leverage)
check_run consumer-pc env LD_LIBRARY_PATH="$lib" "$work/consumer-pc"

step "CMake find_package(Leverage)"
logged "$work/cmake-configure.log" 120 "$cmake" -S "$src" -B "$work/consumer-build" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags"
grep -q "Leverage_DIR: $lib/cmake/Leverage\$" "$work/cmake-configure.log" ||
    fail "find_package did not take Leverage from $prefix: $(grep Leverage_DIR "$work/cmake-configure.log")"
logged "$work/cmake-build.log" 120 "$cmake" --build "$work/consumer-build"
check_run consumer_shared "$work/consumer-build/consumer_shared"
check_run consumer_static "$work/consumer-build/consumer_static"

if [[ -x $prefix/bin/levpp ]]; then
    step "leverage_add_tasks with the installed levpp: the module is carried"
    for prog in consumer_tasks consumer_tasks_static; do
        exe=$work/consumer-build/$prog
        module=$work/consumer-build/lib${prog}_tasks.so
        [[ -x $exe && -f $module ]] || fail "$prog or its module lib${prog}_tasks.so was not built"
        # Embedded: the program runs the same once the module file is gone.
        rm -f "$module"
        out=$(timeout 30 "$exe" 2>&1) || fail "$prog without its module file: $out"
        [[ $out == "task module loaded" ]] || fail "$prog printed '$out'"
        echo "$prog: $out"
    done
    exe=$work/consumer-build/consumer_tasks_noexport
    [[ -x $exe ]] || fail "consumer_tasks_noexport was not built"
    if out=$(timeout 30 "$exe" 2>&1); then
        fail "consumer_tasks_noexport loaded a module that cannot reach its runtime: $out"
    fi
    [[ $out == *"operation not supported"*ENABLE_EXPORTS* ]] ||
        fail "consumer_tasks_noexport failed without saying why: $out"
    echo "consumer_tasks_noexport: refused, as it must be"
fi

echo "install test: ok"
