#!/usr/bin/env bash
# Issue 17, part B (docs/limits.md): a scenario past the budget is refused before it allocates,
# with one line naming the estimate and the key to change (exit 2); input files are read with a
# size cap (/dev/zero, a FIFO, a directory refused at once); outputs are never half-written and a
# failed write says why (exit 1), stdout included.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
# run_capped CMD...: `run` (sets $code, $out, $err) with CMD held to 10 s and 2 GB of address
# space: each refusal must come back within them. A sanitized build (STEPSIM_SANITIZED=1, set by
# CMake) cannot start under `ulimit -v`: there the sanitizer (ASan or TSan) holds the resident size
# to 2 GB instead, and --max-memory's default is half the machine's memory rather than half of the
# ulimit.
if [[ "${STEPSIM_SANITIZED:-0}" == 1 ]]; then
  within_limits() (
    export ASAN_OPTIONS="${ASAN_OPTIONS:-}:hard_rss_limit_mb=2000"
    export TSAN_OPTIONS="${TSAN_OPTIONS:-}:hard_rss_limit_mb=2000"
    timeout 10 "$@"
  )
  default_max_memory='--max-memory '
else
  within_limits() (ulimit -v 2000000; timeout 10 "$@")
  default_max_memory='--max-memory 1.0 GB'
fi
run_capped() { run within_limits "$@"; }
expect() {  # expect CODE TEXT: exit CODE and TEXT in stderr, which is one line
  [[ $code == "$1" ]] || fail "exit $code, expected $1 (stderr: $err)"
  [[ "$err" == *"$2"* ]] || fail "'$2' not in stderr: $err"
  [[ $(printf '%s\n' "$err" | wc -l) == 1 ]] || fail "more than one line on stderr: $err"
}
sc=scenarios/book-pipeline.yaml

# -j past what the system will make: the threads it cannot start leave the work to the others
# (std::terminate before: each thread's 8 MB stack under a 1.5 GB address-space limit). Not under
# the sanitizers, which cannot start under `ulimit -v`.
if [[ "${STEPSIM_SANITIZED:-0}" != 1 ]]; then
  "$stepsim" bench bench/suites/scale-1000.yaml -q -j 2 -o "$tmp/two.json" >/dev/null || fail "bench -j 2"
  run bash -c "ulimit -v 1500000; exec $stepsim bench bench/suites/scale-1000.yaml -q -j 1000000 -o $tmp/many.json"
  [[ $code == 0 ]] || fail "bench -j 1000000 under ulimit -v: exit $code ($err)"
  cmp -s "$tmp/two.json" "$tmp/many.json" || fail "bench -j 1000000: other results"
  run bash -c "ulimit -v 1500000; exec $stepsim plan scenarios/design-case.yaml --sweep cards=8:256:8 \
    --sweep efficiency=20%:60%:1% --csv -j 2147483647"
  [[ $code == 0 && "$(wc -l <<<"$out")" == 1313 ]] || fail "plan --sweep -j 2147483647 under ulimit -v: exit $code ($err)"
  # A --max-memory raised past what the process may allocate: the allocation that fails is said
  # as that, exit 2 (it ended in "error: std::bad_alloc", exit 1).
  run bash -c "ulimit -v 1500000; exec $stepsim run $sc --max-memory 100TB --set pipeline.microbatches=5e7"
  expect 2 "error: out of memory: --max-memory 100.0 TB is more than this process may allocate (1.5 GB: the memory, or ulimit -v): lower it, or make the scenario smaller"
  "$stepsim" job scenarios/job-design-48.yaml --runs 300 -j 2 --json >"$tmp/job2.json" 2>/dev/null || fail "job -j 2"
  run bash -c "ulimit -v 1500000; exec $stepsim job scenarios/job-design-48.yaml --runs 300 -j 1024 --json"
  [[ $code == 0 && "$out" == "$(cat "$tmp/job2.json")" ]] || fail "job -j 1024 under ulimit -v: exit $code ($err)"
  # A streamed trace's writing thread that cannot start (a 4 GB stack, the default a thread gets
  # from `ulimit -s`, under a 3 GB address space): the command writes the trace itself, the same.
  "$stepsim" run $sc --set pipeline.microbatches=2000 --trace "$tmp/threaded.pftrace" >/dev/null || fail "trace"
  run bash -c "ulimit -s 4000000; ulimit -v 3000000; exec $stepsim run $sc --set pipeline.microbatches=2000 \
    --trace $tmp/alone.pftrace"
  [[ $code == 0 ]] || fail "a trace without its thread: exit $code ($err)"
  cmp -s "$tmp/threaded.pftrace" "$tmp/alone.pftrace" || fail "a trace without its thread: other bytes"
fi

# No budget: each of these allocated until bad_alloc, or ran for 50 minutes.
# A Gantt chart's rows are drawn at its width, a node's divisors enumerated: both bounded.
run_capped "$stepsim" run $sc --gantt --width 100000000
expect 2 "error: --width: 100000000 columns is too wide; the chart takes at most 10000"
run_capped "$stepsim" run $sc --gantt --width 39
expect 2 "error: --width: 39 columns is too narrow; the chart needs at least 40"
run_capped "$stepsim" search scenarios/search-design-desk.yaml --set search.hardware.node.gpus=2147483647
expect 2 "error: --set: search.hardware.node.gpus: 2147483647 GPUs in a node: at most 4096"
run_capped "$stepsim" run $sc --set pipeline.microbatches=1000000000
expect 2 "error: --set: pipeline.microbatches: too large: about 1.6e+10 ops and 6.4 TB of memory, over --max-ops 1000000000: make it smaller or raise --max-ops"
# A list of 8,000,000 values (16 MB, under the file cap) cost yaml-cpp 3.9 GB to load: refused as
# it is read, at the key holding it, within the caps (a search file, a bench suite alike).
python3 -c "import sys; print('search:\n  model: qwen3-8b\n  hardware: {preset: h100-sxm, gpus: 8}\n  layout:\n    global_batch: 8\n    tp: [' + ','.join(['1'] * 8000000) + ']')" >"$tmp/biglist.yaml"
run_capped "$stepsim" search "$tmp/biglist.yaml"
expect 2 "error: $tmp/biglist.yaml:6: search.layout.tp: more than 1,000,000 YAML values (lists and maps count too): a scenario this large is refused (docs/limits.md)"
sed 's/^  schedule: .*$/  schedule: custom\n  actions: [["30000000F0"], [], [], []]/' $sc >"$tmp/token.yaml"
grep -q 30000000F0 "$tmp/token.yaml" || fail "the token scenario was not made"
run_capped "$stepsim" run "$tmp/token.yaml"
expect 2 "pipeline.actions[0]: '30000000F0': stage 30000000 is too large (at most 32766)"
run_capped "$stepsim" run $sc --set pipeline.stages=256 --set pipeline.microbatches=65536
expect 2 "pipeline.microbatches: too large: about 6.7e+07 ops and 26.8 GB of memory, over $default_max_memory"
# A job step's micro-batches (found by the mutation run: 2^31 sequences ran for minutes).
run_capped "$stepsim" run scenarios/job-gpt3-1024xa100.yaml --set job_step.layout.global_batch=2147483648
expect 2 "job_step.layout.global_batch: too large: about 9.4e+10 ops and 37.8 TB of memory, over --max-ops 1000000000"
run_capped "$stepsim" search scenarios/search-gpt3-1024xa100.yaml --set search.layout.global_batch=2147483648
expect 2 "search.layout.global_batch: too large: about"
run_capped "$stepsim" job scenarios/job-stragglers.yaml --runs 2 --set job.stragglers.steps=4294967297
expect 2 "job.stragglers.steps: too large: about 2.1e+11 events, over --max-ops 1000000000"
run_capped "$stepsim" job scenarios/job-1024.yaml --set job.steps=2147483647
expect 2 "job.steps: 2147483647 steps of 10.0 s exceed the 73 years a run can simulate"
run_capped "$stepsim" job scenarios/job-1024.yaml --set job.cards=4294967297
expect 2 "error: --set: job.cards: interruptions (every 6.8 ms on average) come faster than a checkpoint segment of 17.3 min completes (more than 1e15 tries each): no run would finish within --max-ops 1000000000; save more often or use fewer cards"
run_capped "$stepsim" job scenarios/job-1024.yaml --set job.rollback_every=1s
expect 2 "error: --set: job.rollback_every: interruptions (every 1000 ms on average) come faster than a checkpoint segment"
run_capped "$stepsim" check-against validation/megatron_sc21.csv --efficiency 1e-300,1,1,1,1,1
expect 2 "error: --efficiency: gemm 1e-300 is not a fraction in [0.01, 1]"
# Segments retried e^(rate x length) times: refused before any run (it took 10 s and blamed job.cards).
run_capped "$stepsim" job scenarios/job-stragglers.yaml --set job.card_mtbf=0.0337d --runs 1
expect 2 "error: --set: job.card_mtbf: interruptions (every 60.7 s on average) come faster than a checkpoint segment of 32.1 min completes (about 6.1e+13 tries each)"
# One run would fit, 1,000 do not, because --set made every segment retried: the key --set changed is
# blamed, with why (it was blamed at job.runs, the line the user had not touched). The memory is run
# 0's record at its bound (run0_record_bytes), not its events.
run_capped "$stepsim" job scenarios/job-1024.yaml --set job.restore=2d
expect 2 "error: --set: job.restore: too large: about 8.1e+09 ops and 7.3 MB of memory, over --max-ops 1000000000 for the runs: interruptions (every 7.90 h on average) come faster than a checkpoint segment of 2.01 d completes (about 4.5e+02 tries each); save more often, or fewer runs"
run_capped "$stepsim" job scenarios/job-1024.yaml --set job.runs=100000000
expect 2 "error: --set: job.runs: too large: about 1.9e+12 ops"
# A plan's batch past what an int counts: the cards it keeps busy stay an int (they had wrapped
# negative: "keep at most -2147483648 busy", blamed at a case), and the simulation its shape asks
# for is blamed at the batch --set changed.
run_capped "$stepsim" plan scenarios/design-case.yaml --set plan.task.sequences_per_step=2147483648
expect 2 "error: --set: plan.task.sequences_per_step: too large: 67108864 micro-batches x 38 units are about 7.7e+09 ops per card"
# A figure past what time holds, from the one key --set changed: that key is blamed, not the
# section it sits in (file:line: job).
run_capped "$stepsim" job scenarios/job-design-32.yaml --set job.checkpoint.storage=1B/s
expect 2 "error: --set: job.checkpoint.storage: too large: 114670295040 bytes at 1 bytes/s would exceed 292 years"
run_capped "$stepsim" job scenarios/job-input.yaml --set job.input.rate=1e-12
expect 2 "error: --set: job.input.rate: too large: the input period"
run_capped "$stepsim" job scenarios/design-case.yaml --set plan.task.tokens=1e18
expect 2 "error: --set: plan.task.tokens: too large: the training time (steps x step time) would exceed 292 years"
# Thousands of variants are read in time linear in the file: each variant's merged section used
# to take in the whole document's YAML nodes (3,000 job_step variants: minutes; 2,000 RL loops: 80 s).
{
  printf 'name: many\njob_step:\n  model: {name: t, layers: 4, hidden: 64, ffn: 256, heads: 4, vocab: 1000, seq: 128}\n'
  printf '  hardware: {preset: h100-sxm, gpus: 8}\n  layout: {tp: 1, pp: 1, zero: 1, global_batch: 8}\n  variants:\n'
  for i in $(seq 0 2999); do printf '    v%d: {layout: {micro_batch: 1}}\n' "$i"; done
} >"$tmp/variants.yaml"
run_capped "$stepsim" compare "$tmp/variants.yaml"
[[ $code == 0 && $(grep -c '^v[0-9]' <<<"$out") == 3000 ]] || fail "3,000 job_step variants: exit $code, $err"
awk '{print} /^  variants:$/ {for (i = 0; i < 2000; i++) printf "    - {name: v%d, generation: {workers: 2}}\n", i}' \
  scenarios/rl-stages.yaml >"$tmp/rl-many.yaml"
run_capped "$stepsim" validate "$tmp/rl-many.yaml"
[[ $code == 0 ]] || fail "2,000 RL variants: exit $code, $err"
# A suite of 10^9 variants: refused before a single one is listed.
{
  echo "name: huge"
  echo "scenario: $PWD/bench/suites/pipeline-base.yaml"
  echo "axes:"
  for k in 1 2 3 4 5 6 7 8 9; do echo "  pipeline.memory.message$k: [1B, 2B, 3B, 4B, 5B, 6B, 7B, 8B, 9B, 10B]"; done
} >"$tmp/suite.yaml"
run_capped "$stepsim" bench "$tmp/suite.yaml"
expect 2 "$tmp/suite.yaml:3: axes: too large: about 6.4e+10 ops"

# --max-ops / --max-memory: anywhere on the line, both forms; the default is the machine's.
run_capped "$stepsim" --max-ops 100 run $sc
expect 2 "pipeline.microbatches: too large: about 1.3e+02 ops and 51.5 KB of memory, over --max-ops 100"
run_capped "$stepsim" run $sc --max-memory=10KB
expect 2 "over --max-memory 10.0 KB: make it smaller or raise --max-memory"
run_capped "$stepsim" run $sc --max-ops 0
expect 2 "--max-ops: must be at least 1 (got 0)"
run_capped "$stepsim" run $sc --max-ops 1000 --json
[[ $code == 0 ]] || fail "a scenario within --max-ops failed: $err"
# The op limit behind the estimates: a graph never holds more ops than the budget (the RL loop
# has no estimate of its own); the data-parallel step counts its compute ops against it first.
run_capped "$stepsim" run scenarios/rl-stages.yaml --max-ops 50
expect 2 "too large: more than 50 ops in one simulated graph: make the scenario smaller or raise --max-ops / --max-memory"
run_capped "$stepsim" run scenarios/zero3-design-48.yaml --max-ops 50
expect 2 "zero3-design-48.yaml:31: data_parallel.microbatches: too large: 8 micro-batches x 38 units are about 9.1e+02 ops per card, over the op limit 50"

# Input files: a size cap, and no devices or pipes.
sed 's|^  schedule: .*$|  schedule: custom\n  actions_csv: /dev/zero|' $sc >"$tmp/zero.yaml"
run_capped "$stepsim" run "$tmp/zero.yaml"
expect 2 "pipeline.actions_csv: '/dev/zero': is not a regular file (a device or a pipe)"
mkfifo "$tmp/fifo.yaml"
run_capped "$stepsim" run "$tmp/fifo.yaml"
expect 2 "$tmp/fifo.yaml: is not a regular file (a device or a pipe)"
run_capped "$stepsim" validate /dev/zero
expect 2 "/dev/zero: is not a regular file"
truncate -s 65M "$tmp/big.yaml"
run_capped "$stepsim" validate "$tmp/big.yaml"
expect 2 "$tmp/big.yaml: larger than the 64 MiB an input file may have"
run_capped "$stepsim" bench merge /dev/zero -o "$tmp/m.json"
expect 2 "/dev/zero: is not a regular file"

# Output: stdout and files on a full device, with the reason; exit 1.
run_capped "$stepsim" run $sc
[[ $code == 0 ]] || fail "run failed: $err"
table="$out"
"$stepsim" run $sc >/dev/full 2>"$tmp/err"; code=$?; err="$(cat "$tmp/err")"
expect 1 "error: cannot write to stdout: No space left on device"
run_capped "$stepsim" export-schedule $sc -o /dev/full
expect 1 "error: cannot write /dev/full: No space left on device"
run_capped "$stepsim" run $sc --trace /dev/full
expect 1 "error: cannot write /dev/full: No space left on device"
run_capped "$stepsim" run $sc --html "$tmp/missing/report.html"
expect 2 "error: --html: $tmp/missing/report.html: no folder $tmp/missing to write it in"
mkdir "$tmp/dir.html"
run_capped "$stepsim" run $sc --html "$tmp/dir.html"
expect 2 "error: --html: $tmp/dir.html: is a folder: give a file's name (in it, say)"

# A page or chart of more than 200,000 bars is refused before anything is written (it took 9 GB for
# an HTML page of 1,000,000 micro-batches, 3.9 GB for a 60-column Gantt chart): the trace is the way.
run_capped "$stepsim" run $sc --set pipeline.microbatches=60000 --trace "$tmp/big.json" --html "$tmp/big.html"
expect 2 "error: --html: 840,004 bars to draw, past the 200,000 a page or chart draws: write --trace FILE.pftrace (streamed to the file) and open it in ui.perfetto.dev"
[[ ! -e "$tmp/big.json" && ! -e "$tmp/big.html" ]] || fail "a refused page left files"
run_capped "$stepsim" run $sc --set pipeline.microbatches=60000 --gantt
expect 2 "error: --gantt: 840,004 bars to draw, past the 200,000 a page or chart draws: write --trace FILE.pftrace (streamed to the file) and open it in ui.perfetto.dev"
run_capped "$stepsim" run scenarios/rl-stages.yaml --set rl.batch_size=24000 --html "$tmp/rl.html"
expect 2 "error: --html: 2,304,160 bars to draw, past the 200,000 a page or chart draws: write --trace FILE.pftrace (streamed to the file) and open it in ui.perfetto.dev"

# A file beside the report cannot go to standard output, into the report: usage error, exit 2.
for opt in --html --trace; do
  run_capped "$stepsim" run $sc $opt -
  expect 2 "error: run: $opt: '-' would write it into the report on standard output: give a file name"
done
run_capped "$stepsim" job scenarios/job-async-save.yaml --trace -
expect 2 "error: job: --trace: '-' would write it into the report on standard output: give a file name"

# A failed write keeps the old file whole and leaves no temporary file (also as root: a file
# size limit, with SIGXFSZ ignored so that the write fails with EFBIG).
for opt in --html --trace; do
  echo "the old file" >"$tmp/old.out"
  (trap '' XFSZ; ulimit -f 4; "$stepsim" run scenarios/zero3-design-48.yaml $opt "$tmp/old.out") >/dev/null 2>"$tmp/err"
  code=$?; err="$(cat "$tmp/err")"
  expect 1 "error: cannot write $tmp/old.out: File too large"
  [[ "$(cat "$tmp/old.out")" == "the old file" ]] || fail "$opt: the old file was changed"
  [[ -z "$(ls "$tmp" | grep 'old.out.')" ]] || fail "$opt: a temporary file was left: $(ls "$tmp")"
done
# A write that succeeds replaces the file, with ordinary permissions.
run_capped "$stepsim" export-schedule $sc -o "$tmp/old.out"
[[ $code == 0 && "$(head -c 5 "$tmp/old.out")" != "the o" ]] || fail "export-schedule did not replace the file"
[[ "$(stat -c %a "$tmp/old.out")" == "644" ]] || fail "permissions $(stat -c %a "$tmp/old.out"), expected 644"
run_capped "$stepsim" run $sc
[[ "$out" == "$table" ]] || fail "the table changed between runs"
echo "hostile_budget: ok"
