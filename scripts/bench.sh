#!/usr/bin/env bash
# The simulator's own speed (docs/performance.md): builds Release, runs the Google Benchmark suite
# (bench/*.cpp), then measures the whole `stepsim` process -- CPU time and peak RSS per op from
# 260k to 16.6M ops and for an unfolded 16,384-card ZeRO-3 step (25M ops), --trace against
# the run without it, the Python reference model side by side, the 1,000-variant suite on 1
# and 2 jobs -- and counts instructions with callgrind (a figure that does not move with load).
# Usage: scripts/bench.sh [extra stepsim_bench flags]
#   STEPSIM_BENCH_REPS=3 repetitions; STEPSIM_BENCH_CALLGRIND=0 skips valgrind;
#   STEPSIM_BENCH_LARGE=0 skips the 16.6M-op and ZeRO-3 runs (0.8 and 1.4 GB of RAM).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${STEPSIM_BUILD_DIR:-$root/build}"
STEPSIM_BUILD_TYPE=Release "$root/scripts/build.sh" --target stepsim stepsim_bench
cd "$root"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
stepsim="$build/stepsim"

echo "== $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $(date -u +%Y-%m-%dT%H:%MZ);" \
     "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "== Google Benchmark (median of ${STEPSIM_BENCH_REPS:-3}; items_per_second = simulated ops/s on one core)"
"$build/stepsim_bench" --benchmark_repetitions="${STEPSIM_BENCH_REPS:-3}" --benchmark_report_aggregates_only=true \
  --benchmark_counters_tabular=true "$@" 2>&1 | grep -v -e '_mean' -e '_stddev' -e '_cv' -e 'Library was built as DEBUG'

# 1F1B at p = 64 has 2pm + p compute ops and 2(p-1)m transfers.
ops_of() { echo $((2 * 64 * $1 + 64 + 2 * 63 * $1)); }
run_case() {  # m [extra args]: one whole `stepsim run --json` on pipeline-base at p = 64
  local m="$1"; shift
  /usr/bin/time -f "%U %S %M %e" -o "$tmp/time" "$stepsim" run bench/suites/pipeline-base.yaml \
    --set pipeline.stages=64 --set pipeline.microbatches="$m" --json "$@" >/dev/null
  read -r user sys rss wall <"$tmp/time"
  cpu=$(echo "$user + $sys" | bc -l)
}
echo
echo "== whole process: stepsim run --json, 1F1B p=64 (CPU = user + sys; RSS = peak resident)"
printf '   %-8s %11s %9s %14s %10s %9s\n' m ops CPU-s "M ops/CPU-s" "RSS MB" "B/op"
sizes=(1024 4096 16384)
[[ "${STEPSIM_BENCH_LARGE:-1}" == "1" ]] && sizes+=(65536)
for m in "${sizes[@]}"; do
  run_case "$m"
  ops=$(ops_of "$m")
  printf '   %-8s %11s %9.2f %14.1f %10.0f %9.1f\n' "$m" "$ops" "$cpu" "$(echo "$ops / $cpu / 1000000" | bc -l)" \
    "$(echo "$rss / 1024" | bc -l)" "$(echo "$rss * 1024 / $ops" | bc -l)"
done

if [[ "${STEPSIM_BENCH_LARGE:-1}" == "1" ]]; then
  echo
  echo "== whole process: an unfolded 16,384-card ZeRO-3 step (zero3-design-48.yaml, fold off)"
  /usr/bin/time -f "%U %S %M" -o "$tmp/time" "$stepsim" --verbose run scenarios/zero3-design-48.yaml \
    --set data_parallel.cards=16384 --set data_parallel.fold=false --json 2>"$tmp/z3.err" >/dev/null
  read -r user sys rss <"$tmp/time"
  ops=$(sed -n 's/.*: \([0-9]*\) ops simulated.*/\1/p' "$tmp/z3.err")
  cpu=$(echo "$user + $sys" | bc -l)
  printf '   %s ops: %.2f CPU-s (%.2f user), %.1f M ops/CPU-s, peak RSS %d MB, %.1f B/op\n' "$ops" "$cpu" "$user" \
    "$(echo "$ops / $cpu / 1000000" | bc -l)" $((rss / 1024)) "$(echo "$rss * 1024 / $ops" | bc -l)"
fi

echo
echo "== --trace: the same run with its trace streamed to a file, Chrome JSON and Perfetto (p=64, m=4096)"
# The trace's bytes are written by a second thread: wall time (what the user waits for, 10 ms
# resolution) beside CPU time. For pairs that a loaded machine does not skew, see bench/ab.py.
run_case 4096; base=$cpu; base_rss=$rss; base_wall=$wall
for out in trace.json trace.pftrace; do
  rm -f "$tmp/$out"
  run_case 4096 --trace "$tmp/$out"; with=$cpu
  bytes=$(stat -c %s "$tmp/$out")
  printf '   %-13s run %.2f CPU-s, run --trace %.2f CPU-s (%.2fx), wall %.2f -> %.2f s; ' \
    "$out" "$base" "$with" "$(echo "$with / $base" | bc -l)" "$base_wall" "$wall"
  printf 'trace %.0f MB, %.0f MB/s of extra CPU; peak RSS %d -> %d MB\n' \
    "$(echo "$bytes / 1000000" | bc -l)" "$(echo "$bytes / 1000000 / ($with - $base + 0.001)" | bc -l)" \
    $((base_rss / 1024)) $((rss / 1024))
done

echo
echo "== against the Python reference model of the same rules (bench/reference/pipeline_model.py)"
python3 bench/reference/side_by_side.py "$stepsim" 64 1024 3

echo
echo "== stepsim bench on bench/suites/scale-1000.yaml (1,000 variants), --jobs 1 and 2"
# Wall time from the clock in nanoseconds (time's %e has 10 ms steps, 5 % of this run), best of 3.
for j in 1 2; do
  best=
  for _ in 1 2 3; do
    t0=$(date +%s%N)
    /usr/bin/time -f "%U %S %M" -o "$tmp/time" "$stepsim" bench bench/suites/scale-1000.yaml -q -j "$j" \
      -o "$tmp/scale$j.json" >/dev/null
    t1=$(date +%s%N)
    wall=$(echo "($t1 - $t0) / 1000000000" | bc -l)
    if [[ -z "$best" ]] || (($(echo "$wall < $best" | bc -l))); then best=$wall; fi
  done
  read -r user sys rss <"$tmp/time"
  eval "wall$j=$best"
  printf '   --jobs %d: %6.3f s wall (best of 3), %6.2f s user, max RSS %d MB\n' "$j" "$best" "$user" $((rss / 1024))
done
cmp -s "$tmp/scale1.json" "$tmp/scale2.json" && same="identical results" || same="RESULTS DIFFER"
printf '   speed-up on 2 jobs: %.2fx (%s)\n' "$(echo "$wall1 / $wall2" | bc -l)" "$same"

if [[ "${STEPSIM_BENCH_CALLGRIND:-1}" == "1" ]] && command -v valgrind >/dev/null; then
  p=64 m=256
  ops=$((2 * p * m + p + 2 * (p - 1) * m))
  echo
  echo "== callgrind: instructions for 1F1B p=$p m=$m ($ops ops), one 'stepsim run --json --trace'"
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$stepsim" run bench/suites/pipeline-base.yaml \
    --set pipeline.stages=$p --set pipeline.microbatches=$m --json --trace "$tmp/trace.json" >/dev/null 2>"$tmp/cg.err"
  bytes=$(stat -c %s "$tmp/trace.json")
  # --threshold=100: every function, so that a phase below the default 99 % cut still shows.
  callgrind_annotate --inclusive=yes --threshold=100 "$tmp/cg.out" 2>/dev/null >"$tmp/cg.txt"
  ir() { { grep -m1 -F "$1" "$tmp/cg.txt" || echo 0; } | awk '{gsub(",", "", $1); print $1 + 0}'; }
  total=$(ir 'PROGRAM TOTALS')
  printf '   %-34s %14s %12s\n' "phase" "instructions" "per op"
  for phase in "stepsim::plan_for(" "stepsim::lower(" "stepsim::run(stepsim::OpGraph&)" "stepsim::measure(" \
               "stepsim::cli::write_trace_file("; do
    n=$(ir "$phase")
    printf '   %-34s %14s %12.1f\n' "${phase%%(*}" "$n" "$(echo "$n / $ops" | bc -l)"
  done
  printf '   %-34s %14s %12.1f\n' "whole process" "$total" "$(echo "$total / $ops" | bc -l)"
  printf '   trace: %d bytes, %.1f instructions per byte\n' "$bytes" \
    "$(echo "$(ir stepsim::cli::write_trace_file\() / $bytes" | bc -l)"
fi
