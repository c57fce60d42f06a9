# eval/build.sh - sourced by the eval run scripts: eval_build TARGET...
# configures the eval build tree ($BUILD, default build-eval/ at the top
# of the source tree: Release, -O2, no sanitizers) and builds the targets
# named, printing the logs only when a step fails. The caller has cd'ed to
# the top of the source tree.

BUILD=${LEV_EVAL_BUILD:-build-eval}

eval_build() {
    mkdir -p "$BUILD"
    cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" -DLEV_SANITIZE=OFF >"$BUILD/eval-configure.log" 2>&1 ||
        { cat "$BUILD/eval-configure.log"; exit 1; }
    cmake --build "$BUILD" --target "$@" -j"$(nproc)" >"$BUILD/eval-build.log" 2>&1 ||
        { cat "$BUILD/eval-build.log"; exit 1; }
}
