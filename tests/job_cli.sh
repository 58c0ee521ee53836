#!/usr/bin/env bash
# `stepsim job` end to end: tables, JSON, traces, determinism across threads, input errors.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"

out="$("$stepsim" job scenarios/job-design-48.yaml --runs 200 2>/dev/null)"
grep -q "deadline 30.00 d: met in 100.0% of runs -> meets" <<<"$out"
grep -q "P90" <<<"$out"
out="$("$stepsim" job scenarios/job-design-32.yaml --runs 200 2>/dev/null)"
grep -q -- "-> misses" <<<"$out"

# Same seed: byte-identical output with one thread or two; a different seed differs.
"$stepsim" job scenarios/job-design-48.yaml --runs 300 --seed 5 --threads 1 --json >"$tmp/a.json" 2>/dev/null
"$stepsim" job scenarios/job-design-48.yaml --runs 300 --seed 5 -j 2 --json >"$tmp/b.json" 2>/dev/null
cmp "$tmp/a.json" "$tmp/b.json"
"$stepsim" job scenarios/job-design-48.yaml --runs 300 --seed 6 --json >"$tmp/c.json" 2>/dev/null
! cmp -s "$tmp/a.json" "$tmp/c.json"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['verdict']=='meets' and d['runs']==300" "$tmp/a.json"

# Trace: valid JSON with collapsed step slices, saves and a failure.
"$stepsim" job scenarios/job-async-save.yaml --trace "$tmp/t.json" >/dev/null 2>&1
python3 - "$tmp/t.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = [e.get("name", "") for e in ev if e["ph"] == "X"]
assert any(n.startswith("steps ") for n in names), names
assert "failure" in names and any(n.startswith("commit @") for n in names), names
assert any(e["ph"] == "C" and e["name"] == "pending snapshots" for e in ev)
PY

# Progress and timing go to stderr, not stdout.
"$stepsim" job scenarios/job-storage.yaml >"$tmp/o.txt" 2>"$tmp/e.txt"
grep -q "job: 1 run of job-storage" "$tmp/e.txt"
! grep -q "job: 1 runs" "$tmp/o.txt"

# Bad input: exit 2 with file:line: key.
run "$stepsim" job scenarios/job-design-48.yaml --set job.checkpoint.every=soon
[[ $code -eq 2 ]] || fail "bad checkpoint interval: exit $code"
grep -q "job.checkpoint.every" <<<"$err" || fail "bad checkpoint interval: $err"
run "$stepsim" job scenarios/book-pipeline.yaml
[[ $code -eq 2 ]] || fail "no job section: exit $code"
grep -q "needs a 'job' section" <<<"$err" || fail "no job section: $err"
# A job step's whole run (docs/job-runs.md): its step simulated, its GPUs the cards, its
# recoverable state the snapshot (12 B a parameter of Llama 2 7B, 6,738,415,616 of them), its
# tokens at its global batch of 256 x 4,096 tokens; a steps / tokens / plan clash refused by key.
"$stepsim" job scenarios/job-hsdp-128xa100.yaml >"$tmp/hsdp.txt" 2>/dev/null
grep -q "job-hsdp-128xa100: 2098084 steps of 2.2 s on 128 cards; 500 runs, seed 1" "$tmp/hsdp.txt" ||
  { cat "$tmp/hsdp.txt"; fail "job step's run header"; }
grep -qF "step: the job_step simulated (llama2-7b on 128 x a100-sxm-80gb: tp 1 pp 1 dp 128 (HSDP: 16 replicas, each sharding over 8), zero 3, 1f1b, micro-batch 2, global batch 256, recompute none, FP32 weights as the master (BF16 copies to compute))" "$tmp/hsdp.txt" ||
  fail "job step's source line"
grep -q "pause 11.6 s (write 11.6 s)" "$tmp/hsdp.txt" || fail "job step's snapshot"
tr -s ' ' <"$tmp/hsdp.txt" | grep -q "^55.43 d 55.42 d 55.75 d 56.02 d 54.77 d 56.19 d" || fail "job step's completion"
"$stepsim" job scenarios/job-hsdp-128xa100.yaml --json >"$tmp/hsdp.json" 2>/dev/null
python3 - "$tmp/hsdp.json" <<'PY' || fail "job step's JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["step_source"] == "job_step: llama2-7b on 128 x a100-sxm-80gb: tp 1 pp 1 dp 128 (HSDP: 16 replicas, each sharding over 8), zero 3, 1f1b, micro-batch 2, global batch 256, recompute none, FP32 weights as the master (BF16 copies to compute)", d["step_source"]
assert d["cards"] == 128 and d["steps"] == 2098084 and d["step_time_s"] == 2.237316, d["step_time_s"]
assert abs(d["checkpoint"]["write_s"] - 12 * 6738415616 / 7e9) < 1e-5, d["checkpoint"]
PY
run "$stepsim" job scenarios/job-hsdp-128xa100.yaml --set job.steps=1000
refused "job.tokens: give the run's 'tokens' (trained at the job_step's global batch) or its 'steps', one of them"
run "$stepsim" job scenarios/job-design-48.yaml --set job.tokens=1e9
refused "job.tokens: counts steps at a job_step's global batch: the scenario has none"
run "$stepsim" job scenarios/job-hsdp-128xa100.yaml --set job.stragglers.compute=2s
refused "job.stragglers: the job_step's simulated step is the step: give step_time to use stragglers"
"$stepsim" job scenarios/job-hsdp-128xa100.yaml --set job.step_time=3s --runs 20 >"$tmp/given.txt" 2>/dev/null
grep -q "2098084 steps of 3.0 s on 128 cards" "$tmp/given.txt" && ! grep -q "job_step simulated" "$tmp/given.txt" ||
  fail "a given step time over the job step's"
run "$stepsim" job scenarios/job-hsdp-128xa100.yaml --set job.tokens=8e18
refused "job.tokens: 7629394531250 steps of 2.2 s exceed the 73 years a run can simulate"
{ cat scenarios/design-case.yaml
  printf 'job_step:\n  model: qwen3-8b\n  hardware: {preset: rtx4090, gpus: 48}\n  layout: {fsdp: true, global_batch: 384}\n'; } >"$tmp/both.yaml"
run "$stepsim" job "$tmp/both.yaml"
refused "both.yaml:70: job: the scenario's plan and job_step both give a step: keep one of them beside the job"
echo "job_cli: ok"
