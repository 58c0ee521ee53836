#!/usr/bin/env bash
# The simulator's own speed: builds Release, runs the Google Benchmark suite (bench/*.cpp) and
# times a 1,000-variant regression suite, then counts instructions with callgrind -- a figure
# that does not move with machine load, so a regression shows even on a busy machine.
# Usage: scripts/bench.sh [extra stepsim_bench flags]   (STEPSIM_BENCH_REPS=3 repetitions;
#        STEPSIM_BENCH_CALLGRIND=0 skips valgrind)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${STEPSIM_BUILD_DIR:-$root/build}"
STEPSIM_BUILD_TYPE=Release "$root/scripts/build.sh" --target stepsim stepsim_bench
cd "$root"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "== $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $(date -u +%Y-%m-%dT%H:%MZ);" \
     "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "== Google Benchmark (median of ${STEPSIM_BENCH_REPS:-3}; items_per_second = simulated ops/s on one core)"
"$build/stepsim_bench" --benchmark_repetitions="${STEPSIM_BENCH_REPS:-3}" --benchmark_report_aggregates_only=true \
  --benchmark_counters_tabular=true "$@" 2>&1 | grep -v -e '_mean' -e '_stddev' -e '_cv' -e 'Library was built as DEBUG'

echo
echo "== stepsim bench on bench/suites/scale-1000.yaml (1,000 variants, all cores)"
/usr/bin/time -f "   %e s wall, %U s user, max RSS %M KB" \
  "$build/stepsim" bench bench/suites/scale-1000.yaml -q -o "$tmp/scale.json" >/dev/null

if [[ "${STEPSIM_BENCH_CALLGRIND:-1}" == "1" ]] && command -v valgrind >/dev/null; then
  # 1F1B, p = 64, m = 256: 2pm + p compute ops and 2(p-1)m transfers.
  p=64 m=256
  ops=$((2 * p * m + p + 2 * (p - 1) * m))
  echo
  echo "== callgrind: instructions for 1F1B p=$p m=$m ($ops ops), one 'stepsim run' with a trace"
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$build/stepsim" run bench/suites/pipeline-base.yaml \
    --set pipeline.stages=$p --set pipeline.microbatches=$m --json --trace "$tmp/trace.json" >/dev/null 2>"$tmp/cg.err"
  bytes=$(stat -c %s "$tmp/trace.json")
  callgrind_annotate --inclusive=yes "$tmp/cg.out" 2>/dev/null >"$tmp/cg.txt"
  ir() { grep -m1 -F "$1" "$tmp/cg.txt" | awk '{gsub(",", "", $1); print $1}'; }
  total=$(grep -m1 'PROGRAM TOTALS' "$tmp/cg.txt" | awk '{gsub(",", "", $1); print $1}')
  printf '   %-34s %14s %12s\n' "phase" "instructions" "per op"
  for phase in "stepsim::plan_for(" "stepsim::lower(" "stepsim::run(stepsim::OpGraph&)" "stepsim::measure(" \
               "stepsim::cli::pipeline_trace"; do
    n=$(ir "$phase")
    printf '   %-34s %14s %12.1f\n' "${phase%%(*}" "${n:-0}" "$(echo "${n:-0} / $ops" | bc -l)"
  done
  printf '   %-34s %14s %12.1f\n' "whole process" "$total" "$(echo "$total / $ops" | bc -l)"
  printf '   trace: %d bytes, %.1f instructions per byte\n' "$bytes" "$(echo "$(ir stepsim::cli::pipeline_trace) / $bytes" | bc -l)"
fi
