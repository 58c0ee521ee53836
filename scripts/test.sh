#!/usr/bin/env bash
# Sets up if needed, builds everything, and runs the whole test suite with ctest.
# With CI=true the build treats warnings as errors (-DSTEPSIM_WERROR=ON, see scripts/build.sh).
# --sanitize: the same under AddressSanitizer + UndefinedBehaviorSanitizer, in build-sanitize/
# (any report fails the test that hit it). --tsan: under ThreadSanitizer, in build-tsan/ (a data
# race in the threads of sweeps, bench, job, search or a trace's writer fails the test that ran
# it). Other arguments go to ctest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sanitizer=""
case "${1:-}" in
  --sanitize) sanitizer=SANITIZE; default_build="$root/build-sanitize"; shift ;;
  --tsan) sanitizer=TSAN; default_build="$root/build-tsan"; shift ;;
esac
"$root/scripts/setup.sh"
if [[ -n $sanitizer ]]; then
  build="${STEPSIM_BUILD_DIR:-$default_build}"
  gen=()
  if command -v ninja >/dev/null 2>&1; then gen=(-G Ninja); fi
  if [[ ! -f "$build/CMakeCache.txt" ]]; then
    # -O1: the sanitizers' checks stay, the build and the slower tests stay affordable. File by
    # file (no unity batches): a file that leans on another's includes fails here.
    cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
      -DCMAKE_CXX_FLAGS=-g1 -DSTEPSIM_$sanitizer=ON -DSTEPSIM_UNITY=OFF >&2
  fi
  cmake --build "$build" -j "${STEPSIM_JOBS:-$(nproc)}" >&2
  # Leaks are not errors here (one-shot command-line runs); everything else aborts.
  export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:${ASAN_OPTIONS:-}"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
  export TSAN_OPTIONS="halt_on_error=1:abort_on_error=1:${TSAN_OPTIONS:-}"
else
  "$root/scripts/build.sh"
  build="${STEPSIM_BUILD_DIR:-$root/build}"
fi
cd "$build"
echo "test: running $(ctest -N "$@" | sed -n 's/^Total Tests: //p') tests with ctest (about 5 min on 2 cores)" >&2
ctest --output-on-failure -j "${STEPSIM_JOBS:-$(nproc)}" "$@"
