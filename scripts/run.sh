#!/usr/bin/env bash
# Sets up if needed, builds, and runs the default scenario (the book's pipeline comparison).
# Extra arguments replace the default command, e.g. scripts/run.sh run scenarios/book-pipeline.yaml --gantt
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh" --target stepsim
build="${STEPSIM_BUILD_DIR:-$root/build}"
cd "$root"
if (($# == 0)); then
  set -- compare scenarios/book-pipeline.yaml
fi
exec "$build/stepsim" "$@"
