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
if [[ ! -f "$build/CMakeCache.txt" || ${#werror[@]} -gt 0 ]]; then
  cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE="$type" "${werror[@]+"${werror[@]}"}" >&2
fi
cmake --build "$build" -j "$jobs" "$@" >&2
