#!/usr/bin/env bash
# Sets up if needed, builds everything, and runs the whole test suite with ctest.
# With CI=true the build treats warnings as errors (-DSTEPSIM_WERROR=ON, see scripts/build.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
build="${STEPSIM_BUILD_DIR:-$root/build}"
cd "$build"
ctest --output-on-failure -j "${STEPSIM_JOBS:-$(nproc)}" "$@"
