#!/usr/bin/env bash
# Regenerates the committed baselines of the regression suites (bench/suites/*.yaml that name a
# `baseline`). Run it after a deliberate change to a schedule or to the model -- e.g. when new
# schedules join bench/suites/pipeline.yaml -- and commit the new *.baseline.json/.csv with it.
# Review `git diff bench/suites` first: every changed line is a variant whose figures moved.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/build.sh" --target stepsim
build="${STEPSIM_BUILD_DIR:-$root/build}"
cd "$root"
suites=("$@")
if ((${#suites[@]} == 0)); then
  for s in bench/suites/*.yaml; do
    grep -q '^baseline:' "$s" && suites+=("$s")
  done
fi
for s in "${suites[@]}"; do
  "$build/stepsim" bench "$s" --write-baseline --quiet >/dev/null
  echo "bench-baseline: $s -> $(sed -n 's/^baseline: *//p' "$s")" >&2
done
git -C "$root" --no-pager diff --stat -- bench/suites || true
