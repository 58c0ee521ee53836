#!/usr/bin/env bash
# Hostile numbers (issue 17, part A): every reproducer exits 2 with one line that names the file,
# line and key (or --set and the key), or "too large: ... would exceed 292 years" for a time past
# the int64-nanosecond limit. No crash, no wrapped count, no nonsense figure with exit 0.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
# expect CODE TEXT: exit CODE, TEXT in stderr, stderr one line, nothing on stdout.
expect() {
  [[ $code == "$1" ]] || fail "exit $code, expected $1 (stdout: ${out:0:300}; stderr: $err)"
  [[ "$err" == *"$2"* ]] || fail "'$2' not in stderr: $err"
  [[ "$(printf '%s\n' "$err" | wc -l)" == 1 ]] || fail "more than one line: $err"
  [[ -z "$out" ]] || fail "output on stdout: ${out:0:300}"
}
book=scenarios/book-pipeline.yaml
pipe() {  # pipe FILE BODY: a pipeline scenario
  printf 'pipeline:\n%s\n' "$2" >"$tmp/$1"
}

# R1: times past the limit.
pipe r1.yaml '  stages: 2
  microbatches: 2
  time: {forward: 60000d, backward: 1ms}'
run "$stepsim" run "$tmp/r1.yaml"; expect 2 "r1.yaml:2: pipeline: too large: 0F1 at 5184000000000000000 ns plus 5184000000000000000 ns"
[[ "$err" == *"would exceed 292 years"* ]] || fail "R1: $err"
run "$stepsim" run "$book" --set pipeline.link.latency=10000d; expect 2 "would exceed 292 years"
run "$stepsim" export-schedule "$tmp/r1.yaml" -o "$tmp/r1.csv"; [[ $code == 0 ]] || fail "export needs no times: $err"
run "$stepsim" run scenarios/zero3-design-48.yaml --set data_parallel.link_bandwidth=1B/s
expect 2 "error: --set: data_parallel.link_bandwidth: too large: card 0 AG layer 21 fwd mb0"
[[ "$err" == *"would exceed 292 years"* ]] || fail "1B/s: $err"

# R2: stage 2^31 - 1 in a custom action, inline and in a CSV cell.
pipe r2.yaml '  stages: 1
  microbatches: 1
  actions: ["2147483647F0"]
  time: {forward: 1ms, backward: 1ms}'
run "$stepsim" run "$tmp/r2.yaml"
expect 2 "r2.yaml:4: pipeline.actions[0]: '2147483647F0': stage 2147483647 is too large (at most 32766)"
printf '2147483647F0,0B0\n' >"$tmp/r2.csv"
pipe r2csv.yaml '  stages: 1
  microbatches: 1
  actions_csv: r2.csv
  time: {forward: 1ms, backward: 1ms}'
run "$stepsim" run "$tmp/r2csv.yaml"; expect 2 "r2csv.yaml:4: pipeline.actions_csv: "
[[ "$err" == *"stage 2147483647 is too large"* ]] || fail "R2 csv: $err"

# Overflow that used to print nonsense with exit 0.
run "$stepsim" plan scenarios/design-case.yaml --set plan.checkpoint.card_mtbf=1ns
expect 2 "error: --set: plan.checkpoint.card_mtbf: too large: the training time"
run "$stepsim" run scenarios/zero3-design-48.yaml --set data_parallel.efficiency=1e-9%
expect 2 "error: --set: data_parallel.efficiency: too large: a fused backward (input + weight) would exceed 292 years"
sed 's/mfu: \[40%, 50%\]/mfu: [1e-300]/' scenarios/scale-out.yaml >"$tmp/scale.yaml"
grep -q '1e-300' "$tmp/scale.yaml" || fail "scale-out rewrite"
run "$stepsim" plan "$tmp/scale.yaml"; expect 2 ": plan: too large: the compute time"
run "$stepsim" run scenarios/zero3-design-48.yaml --set data_parallel.cards=2147483647
# A correct answer: the identical ranks fold into one, the hosts are counted in 64 bits.
[[ $code == 0 ]] || fail "cards=2^31-1: exit $code: $err"
[[ "$out" == *"ZeRO-3 over 2147483647 cards (268435456 hosts of up to 8)"* ]] || fail "hosts: ${out:0:300}"

# Counts: parsed as 64-bit and range-checked, never truncated.
sed 's/microbatches: 8/microbatches: 4294967304/' "$book" >"$tmp/mb.yaml"
run "$stepsim" run "$tmp/mb.yaml"
expect 2 "mb.yaml:7: pipeline.microbatches: '4294967304' is too large (at most 2147483647)"
sed 's/stages: 4/stages: 4294967297/' "$book" >"$tmp/st.yaml"
run "$stepsim" run "$tmp/st.yaml"; expect 2 "st.yaml:6: pipeline.stages: '4294967297' is too large (at most 2147483647)"
run "$stepsim" run "$book" --set pipeline.stages=2147483648
expect 2 "error: --set: pipeline.stages: '2147483648' is too large (at most 2147483647)"
run "$stepsim" run "$book" --set pipeline.microbatches=99999999999999999999
expect 2 "--set: pipeline.microbatches: '99999999999999999999' is too large"
run "$stepsim" job scenarios/job-1024.yaml --set job.steps=9223372036854775808
expect 2 "--set: job.steps: '9223372036854775808' is too large (at most 9223372036854775807)"

# Numbers: finite, in range.
run "$stepsim" run scenarios/zero3-design-48.yaml --set data_parallel.efficiency=1e400
expect 2 "--set: data_parallel.efficiency: '1e400' is out of range for a number"
run "$stepsim" run scenarios/zero3-design-48.yaml --set data_parallel.efficiency=nan
expect 2 "--set: data_parallel.efficiency: 'nan' is not a finite number"
run "$stepsim" plan scenarios/design-case.yaml --set plan.compute.efficiency=inf
expect 2 "--set: plan.compute.efficiency: 'inf' is not a finite number"

# A bench suite of 16 axes of 16 values: 2^64 variants, refused (it wrapped to "0 variants").
cp bench/suites/pipeline-base.yaml "$tmp/base.yaml"
{
  echo "name: huge"
  echo "scenario: base.yaml"
  echo "axes:"
  for a in $(seq 1 16); do echo "  x.a$a: [$(seq -s, 1 16)]"; done
} >"$tmp/huge.yaml"
run "$stepsim" bench "$tmp/huge.yaml" -o "$tmp/huge.json"
expect 2 "huge.yaml:4: axes: too many variants: 16 x 16 x 16 x 16 x 16 x 16 x 16 x 16 x 16 x 16 x 16 x 16 x 16 x 16 x 16 x 16 is more than 9223372036854775807"
[[ ! -e "$tmp/huge.json" ]] || fail "huge suite wrote results"

# YAML: duplicate keys, a second document, a map where a value is expected.
pipe dup.yaml '  stages: 4
  microbatches: 8
  stages: 2
  time: {forward: 1ms, backward: 2ms}'
run "$stepsim" run "$tmp/dup.yaml"
expect 2 "dup.yaml:4: pipeline.stages: appears twice in one map (first on line 2); give each key once"
pipe dup2.yaml '  stages: 4
  microbatches: 8
  time: {forward: 1ms, backward: 2ms, forward: 3ms}'
run "$stepsim" run "$tmp/dup2.yaml"; expect 2 "dup2.yaml:4: pipeline.time.forward: appears twice"
run "$stepsim" run "$book" --set 'pipeline.time={forward: 1ms, forward: 2ms, backward: 1ms}'
expect 2 "error: --set: pipeline.time.forward: appears twice in one map"
{ cat "$book"; printf -- '---\npipeline: {stages: 9}\n'; } >"$tmp/docs.yaml"
run "$stepsim" run "$tmp/docs.yaml"; expect 2 "docs.yaml:20: ---: a second YAML document"
pipe tmap.yaml '  stages: 4
  microbatches: {a: 1}
  time: {forward: 1ms, backward: 2ms}'
run "$stepsim" run "$tmp/tmap.yaml"; expect 2 "tmap.yaml:3: pipeline.microbatches: expected a whole number"
pipe amap.yaml '  stages: 1
  microbatches: 1
  actions: [[0F0, {a: 1}]]
  time: {forward: 1ms, backward: 2ms}'
run "$stepsim" run "$tmp/amap.yaml"; expect 2 "amap.yaml:4: pipeline.actions[0][1]: expected an action like 0F3"

# Found by the 10,000-mutant run (tests/fuzz_regressions/A-*): sums past int64 and a rate that
# rounded to zero ended in UBSan reports (signed overflow, division by zero, a double past int64).
run "$stepsim" job scenarios/job-storage.yaml --runs 2 --set job.checkpoint.storage=0.0000001GB/s
expect 2 "error: --set: job.checkpoint.storage: too large: the checkpoint writes of a run would exceed 292 years of simulated time"
run "$stepsim" run scenarios/rl-stages.yaml --set 'rl.learning={workers: 1, rate: 9223372036854775808/s}'
expect 2 "rl.learning.rate: '9223372036854775808/s' is too large: at most 1000000000/s (one item per nanosecond)"
run "$stepsim" run scenarios/rl-weight-distribution.yaml --set rl.weight_transfer.size=4294967297GiB
expect 2 "rl.weight_transfer.size: too large: 16 receivers x the size would exceed 8 EiB of traffic"
run "$stepsim" job scenarios/job-input.yaml --runs 2 --set 'job.input.pauses=[{worker: 0, at: 600s, for: 4294967297s}]'
expect 2 "error: --set: job.input.pauses: too large: the input pipeline's refill would exceed 292 years of simulated time"

run "$stepsim" plan scenarios/resource-bill.yaml --set plan.model.parameters=1e18
expect 2 "plan.model.parameters: 1e+18 is too large: at most 1e+15 parameters"

run "$stepsim" job scenarios/job-input.yaml --runs 2 --set job.input.rate=0.0000001
expect 2 "error: --set: job.input.rate: too large: the input pipeline's batches would exceed 292 years of simulated time"

run "$stepsim" job scenarios/job-stragglers.yaml --runs 2 --set job.stragglers.sigma=4294967297s
expect 2 "job.stragglers.sigma: too large: 2000 steps of up to compute + other + 12 sigma would exceed 146 years of waits"
run "$stepsim" job scenarios/job-input.yaml --runs 2 --set job.input.workers=4294967297
expect 2 "job.input.workers: 4294967297 is too many: at most 1000000 input workers"

# Jobs (models/model_limits.hpp): a model or layout past the limits is refused at its key, in a
# scenario and in a measured-run CSV alike. These used to crash or print wrapped figures.
job=scenarios/job-llama70b-64xh100.yaml
run "$stepsim" run "$job" --set job_step.layout.dp=2147483647  # was "tp x pp x dp x cp = ... = -32"
expect 2 "--set: job_step.layout.dp: 2147483647 is past the largest layout stepsim takes (1000000)"
run "$stepsim" run "$job" --set job_step.layout.pp=1000000000  # was "pp x virtual_stages = ... = 705032704"
expect 2 "--set: job_step.layout.pp: 1000000000 is past the largest layout stepsim takes (1000000)"
run "$stepsim" run "$job" --set job_step.hardware.gpus=99999999999
expect 2 "--set: job_step.hardware.gpus: '99999999999' is too large (at most 1000000)"
printf 'job_step:\n  model: {layers: 80, hidden: 1000000000000000, heads: 64, vocab: 128256}\n  hardware: {preset: h100-sxm}\n  layout: {dp: 8, global_batch: 8}\n' >"$tmp/wide.yaml"
run "$stepsim" run "$tmp/wide.yaml"  # was "needs 2311649781.8 GiB ... optimizer -8589934592.0"
expect 2 "wide.yaml:2: job_step.model.hidden: '1000000000000000' is too large (at most 1048576)"
run "$stepsim" search scenarios/search-gpt3-1024xa100.yaml --set search.layout.grad_bytes=3  # an error, not "no layout"
expect 2 "--set: search.layout.grad_bytes: gradients are reduced in BF16 (2) or FP32 (4)"
header="$(grep -m1 '^src,' validation/megatron_sc21.csv)"
row() {  # row TP HEADS: SC21's GPT-1.7B row with those cells
  printf '%s\nSC21,Table 1,GPT-1.7B,24,2304,%s,24,9216,51200,2048,a100-sxm-80gb,32,%s,1,32,1,1f1b,16,512,full,0,0,1,0,0,unfused,2,tflops_sc21,137,1,\n' \
    "$header" "$2" "$1" >"$tmp/rows.csv"
}
row 0 24; run "$stepsim" check-against "$tmp/rows.csv"  # was SIGFPE
expect 2 "rows.csv:2: tp: must be at least 1 (got 0)"
row 4294967297 24; run "$stepsim" check-against "$tmp/rows.csv"  # was read as tp 1
expect 2 "rows.csv:2: tp: '4294967297' is too large (at most 2147483647)"
row 1 0; run "$stepsim" check-against "$tmp/rows.csv"  # was "too large: ... 292 years" with no row
expect 2 "rows.csv:2: heads: must be at least 1 (got 0)"
row -1 -2; run "$stepsim" check-against "$tmp/rows.csv"  # a size below 0 said "at least 0", the bound of any cell
expect 2 "rows.csv:2: heads: must be at least 1 (got -2)"
row 1 24; sed "s/,1f1b,16,512,/,1f1b,1,2147483616,/" "$tmp/rows.csv" >"$tmp/gbs.csv"  # 2^26 micro-batches: ran for minutes
run "$stepsim" check-against "$tmp/gbs.csv"; expect 2 "gbs.csv:2: gbs: too large: about "

# Found by setting every number of the shipped scenarios to 1e30, 2^31 - 1 and 2^63 - 1 under the
# sanitizers: each used to overflow (UBSan), allocate without bound or run for minutes.
run "$stepsim" run "$job" --set 'job_step.hardware.accelerator={memory: 1e30GB}'
expect 2 "--set: job_step.hardware.accelerator.memory: '1e30GB' is too large"
run "$stepsim" run scenarios/zero3-design-48.yaml --set data_parallel.microbatches=2147483647
expect 2 "--set: data_parallel.microbatches: too large: 2147483647 micro-batches x 38 units are about 2.4e+11 ops per card"
run "$stepsim" run scenarios/zero3-design-32.yaml --set data_parallel.nic.count=2147483647
expect 2 "data_parallel.nic: 2147483647 NICs of 25000000000 bytes/s are too many to add up"
run "$stepsim" plan scenarios/resource-bill.yaml --set plan.memory.state_bytes.master=2147483647
expect 2 "--set: plan.memory.state_bytes.master: 2147483647 bytes per parameter is too many (at most 64)"
run "$stepsim" plan scenarios/resource-bill.yaml --set plan.model.layers=2147483647
expect 2 "--set: plan.model.layers: '2147483647' is too large (at most 65536)"
run "$stepsim" plan scenarios/design-case.yaml --set plan.task.sequence=9223372036854775807
expect 2 "--set: plan.task.sequence: '9223372036854775807' is too large (at most 134217728)"
run "$stepsim" run scenarios/rl-stages.yaml --set rl.generation.workers=2147483647
expect 2 "--set: rl.generation.workers: 2147483647 is too many: at most 1000000 workers"
run "$stepsim" search scenarios/search-design-desk.yaml --set search.hardware.gpus.step=9223372036854775807
expect 2 "--set: search.hardware.gpus.step: '9223372036854775807' is too large (at most 1000000)"
run "$stepsim" job scenarios/job-input.yaml --runs 2 --set job.input.prefetch=9223372036854775807
expect 2 "--set: job.input.prefetch: '9223372036854775807' is too large (at most 1099511627776)"
run "$stepsim" run scenarios/moe-two-experts.yaml --set 'moe.routing={loads: [9223372036854775807, 32]}'
expect 2 "--set: moe.routing.loads: the rows add up to more than the 128 that 128 tokens x top-1 dispatch"
sed 's/shape: \[12288, 4096\]/shape: [12288, 9223372036854775807]/' scenarios/tensor-sizes.yaml >"$tmp/tensor.yaml"
grep -q 9223372036854775807 "$tmp/tensor.yaml" || fail "tensor-sizes rewrite"
run "$stepsim" plan "$tmp/tensor.yaml"; expect 2 "tensor.yaml:13: plan.reshard.shape[1]: expected a whole number from 1 to 16777216"
# Its recorded run kept every event (19 GB, refused at job.steps); bounded now, the run fits.
run "$stepsim" job scenarios/job-async-save.yaml --runs 2 --set job.steps=2147483647
[[ $code == 0 && "$out" == "job-async-save: 2147483647 steps of 500 ms on 1 card; 2 runs, seed 1"* ]] ||
  fail "job.steps recorded run: exit $code: $err"

# A figure past what time or bytes can hold, found reading a section or running it: refused at
# the section, its file and line named (it was "error: too large: ..." alone).
run "$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set job_step.model.seq=134217728 --set job_step.layout.attention=unfused
expect 2 "scenarios/job-moe-routing-256xh100.yaml:13: job_step: too large: a layer's activations would exceed 1 EiB"
run "$stepsim" run scenarios/moe-routing.yaml --set moe.efficiency=1e-300%
expect 2 "error: --set: moe.efficiency: too large: an expert row's compute time would exceed 292 years"
run "$stepsim" job scenarios/job-storage.yaml --set job.checkpoint.size=4294967297GB
expect 2 "error: --set: job.checkpoint.size: too large: the checkpoint writes of a run would exceed 292 years"
run "$stepsim" search scenarios/search-design-desk.yaml --set search.hardware.efficiency.gemm=1e-300
expect 2 "error: --set: search.hardware.efficiency.gemm: 1e-300 is not an efficiency (a fraction in [0.01, 1], e.g. 0.7 or 70%)"

# Shipped scenarios still load: no false duplicate or document errors.
for f in scenarios/*.yaml bench/suites/*.yaml; do
  run "$stepsim" validate "$f"
  [[ "$err" != *"appears twice"* && "$err" != *"second YAML document"* ]] || fail "$f: $err"
done
# Red team, session 41: a plan's tokens at 2^63 - 1 went through a double (rounded to 2^63, cast:
# "a deadline needs a task with tokens"); now too large at the key, as 4.6e18 was.
run "$stepsim" plan scenarios/design-case.yaml --set plan.task.tokens=9223372036854775807
refused "plan.task.tokens: too large: the training time (steps x step time) would exceed 292 years"
# Bytes per element are 1 to 8 (2B read as two billion bytes planned 3e9 GiB a card).
run "$stepsim" plan scenarios/design-case.yaml --set plan.memory.workspace=null --set plan.memory.activation_bytes=2B
refused "plan.memory.activation_bytes: '2B' is too large (at most 8)"
run "$stepsim" plan scenarios/design-case.yaml --set plan.memory.workspace=null --set plan.memory.logit_bytes=9
refused "plan.memory.logit_bytes: '9' is too large (at most 8)"
# A sweep's zero step is the step's fault, not the value's.
run "$stepsim" plan scenarios/design-case.yaml --sweep efficiency=0.3:0.5:0
refused "--sweep: efficiency: the step must be positive"
run "$stepsim" plan scenarios/design-case.yaml --sweep cards=32:64:0
refused "--sweep: cards: the step must be positive"
# An exponent and a suffix together are named as such; scale-out cards have the cards' bound.
run "$stepsim" run scenarios/job-llama70b-64xh100.yaml --set job_step.layout.global_batch=1e3K
refused "job_step.layout.global_batch: '1e3K' is not a whole number (an exponent or a suffix K, M, B, T, not both)"
run "$stepsim" plan scenarios/scale-out.yaml --set plan.scale_out.cards=9223372036854775807
refused "plan.scale_out.cards: '9223372036854775807' is too large (at most 1000000)"
echo "hostile_arith: ok"
