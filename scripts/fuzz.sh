#!/usr/bin/env bash
# scripts/fuzz.sh SECONDS [MUTANTS]: hostile input for the scenario loader (docs/fuzzing.md).
#  1. builds build-fuzz/ with clang: stepsim_fuzz (libFuzzer) and stepsim, both under
#     AddressSanitizer + UBSan;
#  2. runs libFuzzer for SECONDS on the loaders + `validate` checks (scenarios, search scenarios,
#     measured-run CSVs), the shipped scenarios and validation tables as seed corpus (new inputs
#     in build-fuzz/corpus/, crashes, hangs and OOMs in build-fuzz/artifacts/);
#  3. runs MUTANTS (default 1000) mutated shipped scenarios and tables through the sanitized stepsim
#     (scripts/mutate_scenarios.py), offenders saved into tests/fuzz_regressions/.
# Exits 1 if either found something. STEPSIM_JOBS: build jobs (default 1); FUZZ_SEED: the seed.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:?usage: scripts/fuzz.sh SECONDS [MUTANTS]}"
mutants="${2:-1000}"
build="${STEPSIM_FUZZ_BUILD_DIR:-$root/build-fuzz}"
seed="${FUZZ_SEED:-1}"
gen=()
if command -v ninja >/dev/null 2>&1; then gen=(-G Ninja); fi
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS=-gline-tables-only -DCMAKE_CXX_COMPILER=clang++ \
    -DSTEPSIM_FUZZ=ON >&2 || exit 1
fi
cmake --build "$build" -j "${STEPSIM_JOBS:-1}" --target stepsim_fuzz stepsim >&2 || exit 1

cd "$root"  # `file:` references in inputs resolve against scenarios/
mkdir -p "$build/corpus" "$build/artifacts"
export ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}"
# -fork=1 with the ignore_* flags: a crash, timeout or OOM is kept in artifacts/ and the run goes
# on for the whole time instead of stopping at the first find.
"$build/stepsim_fuzz" "$build/corpus" scenarios validation -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -max_len=8192 -seed="$seed" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
  -artifact_prefix="$build/artifacts/" -print_final_stats=1 2>"$build/fuzz.log"
fuzz_rc=$?
grep -E "^#[0-9]+.*(DONE|exec/s)|INFO: fuzzed for|stat::|crashes|ooms|timeouts" "$build/fuzz.log" | tail -n 5
found="$(find "$build/artifacts" -type f | wc -l)"
echo "libFuzzer: exit $fuzz_rc, $found artifact(s) in $build/artifacts (log: $build/fuzz.log)"

python3 "$root/scripts/mutate_scenarios.py" "$build/stepsim" -n "$mutants" --seed "$seed" --timeout 10
mutate_rc=$?
[[ $fuzz_rc -eq 0 && $found -eq 0 && $mutate_rc -eq 0 ]]
