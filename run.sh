#!/usr/bin/env bash
# run.sh - the entry point: installs the Debian packages Leverage needs,
# builds it, and runs its main job or its test suite.
#
#   ./run.sh main [INSTANCE [OPTIONS...]]
#                            build (build/), run the TSP demo: a local mesh
#                            of levpeers, one worker killed mid-run
#                            (samples/tsp/demo.sh)
#   ./run.sh test            build (build/), run the test suite; then build
#                            with ASan+UBSan (build-asan/) and run it again;
#                            then the fuzzing harnesses with clang
#                            (build-fuzz/), a short run each; then the
#                            threaded parts under ThreadSanitizer
#                            (build-tsan/)
#
# Needs no standard input; exits non-zero on any failure.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"

# Debian packages for building and testing (the install test uses
# pkg-config, and nm and objdump from binutils; the style test uses
# clang-format and cppcheck, Debian 12's versions 14 and 2.10; the
# fuzzing harnesses clang and its libFuzzer runtime).
PACKAGES=(
    cmake gcc make pkg-config binutils git
    libgc-dev libtpl-dev libzmq3-dev libczmq-dev libsodium-dev libclang-19-dev libcmocka-dev
    clang-format cppcheck clang libclang-rt-14-dev
    iproute2 iptables libnetfilter-queue-dev
)

JOBS=$(nproc 2>/dev/null || echo 2)
TEST_TIMEOUT=300 # seconds, for a test that sets no TIMEOUT of its own

usage() {
    sed -n '4,10s/^# \{0,1\}//p' "$0" >&2
    exit 2
}

# Installs whichever of PACKAGES are missing; silent when none is.
install_packages() {
    local missing=() pkg sudo=()
    for pkg in "${PACKAGES[@]}"; do
        if [[ $(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null) != "install ok installed" ]]; then
            missing+=("$pkg")
        fi
    done
    ((${#missing[@]})) || return 0

    if ((EUID != 0)); then
        if ! command -v sudo >/dev/null; then
            echo "run.sh: missing Debian packages: ${missing[*]}" >&2
            echo "run.sh: not root and no sudo; install them and run again" >&2
            exit 1
        fi
        sudo=(sudo)
    fi
    echo "run.sh: installing ${missing[*]}"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q </dev/null
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q "${missing[@]}" </dev/null
}

# build DIR [CMAKE_ARGS...]: configures DIR with warnings as errors and
# builds every target.
build() {
    local dir=$1
    shift
    cmake -S . -B "$dir" -DLEV_WERROR=ON "$@"
    cmake --build "$dir" -j"$JOBS"
}

run_ctest() {
    ctest --test-dir "$1" --output-on-failure --no-tests=error \
        -j2 --timeout "$TEST_TIMEOUT"
}

cmd_main() {
    build build -DLEV_SANITIZE=OFF
    exec samples/tsp/demo.sh build "$@"
}

cmd_test() {
    build build -DLEV_SANITIZE=OFF
    run_ctest build

    # detect_leaks=0: LeakSanitizer does not scan the Boehm GC heap, so it
    # reports malloc'd blocks that are reachable only from GC objects as
    # leaks. detect_stack_use_after_return=0: that mode moves locals to a
    # fake stack that the collector does not scan, so it would free objects
    # still in use. halt_on_error=1: the first report fails the test. The
    # build needs them too: it runs the sanitized levpp.
    export ASAN_OPTIONS="detect_leaks=0:detect_stack_use_after_return=0:halt_on_error=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
    export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
    build build-asan -DLEV_SANITIZE=ON
    run_ctest build-asan

    # the libFuzzer harnesses (tests/fuzz), built with clang: a short run each
    CC=clang cmake -S . -B build-fuzz -DLEV_FUZZ=ON
    cmake --build build-fuzz -j"$JOBS" --target fuzz_all
    ctest --test-dir build-fuzz -L fuzz --output-on-failure --no-tests=error -j2 \
        --timeout "$TEST_TIMEOUT"

    # the threaded parts (executor, daemon, client) under ThreadSanitizer:
    # the tests labelled tsan; each test sets its TSAN_OPTIONS
    cmake -S . -B build-tsan -DLEV_WERROR=ON -DLEV_TSAN=ON
    cmake --build build-tsan -j"$JOBS" --target tsan_all
    ctest --test-dir build-tsan -L tsan --output-on-failure --no-tests=error -j2 \
        --timeout "$TEST_TIMEOUT"
}

(($# >= 1)) || usage
cmd=$1
shift
case $cmd in
main)
    install_packages
    cmd_main "$@"
    ;;
test)
    (($# == 0)) || usage
    install_packages
    cmd_test
    ;;
*) usage ;;
esac
