#!/usr/bin/env bash
# Configures and builds stepsim (Release by default) into build/ (or $STEPSIM_BUILD_DIR).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${STEPSIM_BUILD_DIR:-$root/build}"
type="${STEPSIM_BUILD_TYPE:-Release}"
jobs="${STEPSIM_JOBS:-$(nproc)}"
gen=()
if command -v ninja >/dev/null 2>&1; then gen=(-G Ninja); fi
# In CI (CI=true, as .ci/run's environment sets it) warnings are errors.
werror=()
if [[ "${CI:-}" == "true" ]]; then werror=(-DSTEPSIM_WERROR=ON); fi
start=$SECONDS
if [[ ! -f "$build/CMakeCache.txt" || ${#werror[@]} -gt 0 ]]; then
  echo "build: configuring $type in $build" >&2
  cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE="$type" "${werror[@]+"${werror[@]}"}" >/dev/null
fi
# A cold build compiles about 190 files: about 4 minutes on 2 cores (7 CPU-minutes), seconds when
# little changed. Say so before the compiler's lines start.
echo "build: compiling with $jobs job(s) (a cold build takes about 4 min on 2 cores)" >&2
cmake --build "$build" -j "$jobs" "$@" >&2
echo "build: done in $((SECONDS - start)) s: $build/stepsim" >&2
