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

# A run of 4,000,000 steps saving every 40: the trace holds run 0's first 100,000 of its 400,003
# events (a run's record is bounded), says so on stderr, and marks where it stops.
"$stepsim" job scenarios/job-async-save.yaml --set job.steps=4000000 --trace "$tmp/long.json" >/dev/null 2>"$tmp/long.err"
grep -qF "trace: run 0's first 100000 of 400003 events and 49999 of 200001 pending-snapshot levels (a run's record is bounded)" \
  "$tmp/long.err" || fail "long run's trace note: $(cat "$tmp/long.err")"
python3 - "$tmp/long.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
assert sum(e["ph"] == "C" and e["name"] == "pending snapshots" for e in ev) == 49999
notes = [e for e in ev if e.get("cat") == "note"]
assert len(notes) == 1 and notes[0]["name"].startswith("run 0's first 100000 of 400003 events"), notes
assert notes[0]["ts"] >= max(e["ts"] + e.get("dur", 0) for e in ev if e["ph"] == "X" and e.get("cat") != "note")
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
# With the job step's variants, one job per variant (the base first), each on its own step: the
# base meets IBM's 60 days, sharding over 32 GPUs misses them and over all 128 puts them at risk
# (docs/job-runs.md).
"$stepsim" job scenarios/job-hsdp-128xa100.yaml >"$tmp/hsdp.txt" 2>/dev/null
grep -q "job-hsdp-128xa100, base: 2098084 steps of 2.3 s on 128 cards; 500 runs, seed 1" "$tmp/hsdp.txt" ||
  { cat "$tmp/hsdp.txt"; fail "job step's run header"; }
grep -qF "step: the job_step simulated (llama2-7b on 128 x a100-sxm-80gb: tp 1 pp 1 dp 128 (HSDP: 16 replicas, each sharding over 8), zero 3, 1f1b, micro-batch 2, global batch 256, recompute none, FP32 weights as the master (BF16 copies to compute))" "$tmp/hsdp.txt" ||
  fail "job step's source line"
grep -q "pause 11.6 s (write 11.6 s)" "$tmp/hsdp.txt" || fail "job step's snapshot"
tr -s ' ' <"$tmp/hsdp.txt" | grep "^56.06 d 56.05 d 56.39 d 56.65 d 55.39 d 56.87 d" >/dev/null || fail "job step's completion"
grep -q "^job-hsdp-128xa100: one job per job_step variant, each on its own simulated step$" "$tmp/hsdp.txt" ||
  fail "variants' cases heading"
fig "^base 128 2.3 s 56.06 d 56.39 d 56.65 d 60.00 d 100.0% meets$" "$tmp/hsdp.txt"
fig "^shard-over-32 128 2.5 s 60.89 d 61.24 d 61.51 d 60.00 d 0.0% misses$" "$tmp/hsdp.txt"
fig "^fsdp-all-128 128 2.4 s 59.85 d 60.19 d 60.44 d 60.00 d 72.6% at risk$" "$tmp/hsdp.txt"
"$stepsim" job scenarios/job-hsdp-128xa100.yaml --json >"$tmp/hsdp.json" 2>/dev/null
python3 - "$tmp/hsdp.json" <<'PY' || fail "job step's JSON"
import json, sys
cases = json.load(open(sys.argv[1]))
assert [c["case"] for c in cases] == ["base", "shard-over-32", "fsdp-all-128"], [c["case"] for c in cases]
d = cases[0]
assert d["step_source"] == "job_step: llama2-7b on 128 x a100-sxm-80gb: tp 1 pp 1 dp 128 (HSDP: 16 replicas, each sharding over 8), zero 3, 1f1b, micro-batch 2, global batch 256, recompute none, FP32 weights as the master (BF16 copies to compute)", d["step_source"]
assert d["cards"] == 128 and d["steps"] == 2098084 and d["step_time_s"] == 2.262677, d["step_time_s"]
assert abs(d["checkpoint"]["write_s"] - 12 * 6738415616 / 7e9) < 1e-5, d["checkpoint"]
# Each variant on its own step (the compare rows': 2.458 and 2.416 s).
assert [c["step_time_s"] for c in cases[1:]] == [2.457563, 2.415533], [c["step_time_s"] for c in cases[1:]]
assert "(HSDP: 4 replicas, each sharding over 32)" in cases[1]["step_source"], cases[1]["step_source"]
PY
run "$stepsim" job scenarios/job-hsdp-128xa100.yaml --case nope
refused "error: --case: no case named 'nope' (cases: base, shard-over-32, fsdp-all-128)"
run "$stepsim" job scenarios/job-hsdp-128xa100.yaml --trace "$tmp/j.json"
refused "error: --trace: a trace shows one case: pick it with --case NAME (base, shard-over-32, fsdp-all-128)"
"$stepsim" job scenarios/job-hsdp-128xa100.yaml --case fsdp-all-128 --runs 20 >"$tmp/one.txt" 2>/dev/null
grep -q "^job-hsdp-128xa100, fsdp-all-128: 2098084 steps of 2.4 s on 128 cards; 20 runs, seed 1" "$tmp/one.txt" ||
  { cat "$tmp/one.txt"; fail "--case of a variant"; }
# Cases of other card counts and global batches: each its own cards, steps from the tokens at its
# global batch, and recoverable state.
"$stepsim" job scenarios/job-hsdp-128xa100.yaml --runs 20 --json \
  --set 'job_step.variants={half: {hardware: {gpus: 64}, layout: {dp_replicate: 8, global_batch: 128}}}' \
  >"$tmp/half.json" 2>/dev/null
python3 - "$tmp/half.json" <<'PY' || fail "a variant of 64 GPUs and global batch 128"
import json, sys
base, half = json.load(open(sys.argv[1]))
assert half["case"] == "half" and half["cards"] == 64 and half["steps"] == 2 * base["steps"] - 1, (half["cards"], half["steps"], base["steps"])
PY
# every: young: Young's optimum sqrt(2 c M) for the case's pause (11.55 s) and MTBF (337 d / 128
# = 2.63 d): 2,292 s, 1,013 steps of 2.263 s; each variant its own.
"$stepsim" job scenarios/job-hsdp-128xa100.yaml --runs 20 --set job.checkpoint.every=young >"$tmp/young.txt" 2>/dev/null
grep -q "checkpoint: sync every 1013 steps (38.2 min of steps; Young's optimum 38.2 min), pause 11.6 s" "$tmp/young.txt" ||
  { cat "$tmp/young.txt"; fail "every: young"; }
"$stepsim" job scenarios/job-hsdp-128xa100.yaml --runs 20 --set job.checkpoint.every=young --json >"$tmp/young.json" 2>/dev/null
python3 - "$tmp/young.json" <<'PY' || fail "every: young in the JSON"
import json, math, sys
base = json.load(open(sys.argv[1]))[0]["checkpoint"]
want = math.sqrt(2 * 12 * 6738415616 / 7e9 * 337 * 86400 / 128)
assert abs(base["young_interval_s"] - want) < 1, (base, want)
assert base["every_steps"] == round(want / 2.262677), base
PY
run "$stepsim" job scenarios/job-hsdp-128xa100.yaml --set job.checkpoint.every=young --set job.card_mtbf=null
refused "job.checkpoint.every: young balances saves against interruptions: give card_mtbf (or rollback_every)"
# A reserve that outlasts the deadline, refused as a plan and a search refuse it (it was a run
# that missed by design).
run "$stepsim" job scenarios/job-1024.yaml --runs 2 --set job.deadline=1d --set job.reserved=2d
refused "error: --set: job.reserved: the 2.0 d reserved must be shorter than the 24.0 h deadline"
# Async saves that do not pause training have no Young's interval (sqrt(2 x 0 x M) = 0: a save every
# step, which used to end at the work guard blamed at job.cards): refused at the mode --set gave.
run "$stepsim" job scenarios/job-hsdp-128xa100.yaml --set job.checkpoint.every=young --set job.checkpoint.mode=async
refused "error: --set: job.checkpoint.mode: async saves with every: young need copy, the training pause Young's interval sqrt(2 x pause x MTBF) is set by (e.g. copy: 2s); without one it is 0, a save every step"
"$stepsim" job scenarios/job-hsdp-128xa100.yaml --runs 5 --set job.checkpoint.every=young --set job.checkpoint.mode=async \
  --set job.checkpoint.copy=2s >"$tmp/young-async.txt" 2>/dev/null || fail "async young with a copy"
has "checkpoint: async every .* steps (.* Young's optimum" "$tmp/young-async.txt"
# A step whose schedule cannot run (blocking sends deadlock DualPipe-V) is refused at its key, the
# base's or the variant's, exit 2 (it used to end in an unkeyed message, exit 1).
run "$stepsim" job scenarios/job-llama70b-64xh100.yaml --runs 10 --set 'job={tokens: 1e10}' \
  --set job_step.layout.schedule=dualpipe-v --set job_step.layout.virtual_stages=1 --set job_step.layout.overlap.pp=false
refused "job_step.layout.overlap.pp: with blocking pipeline sends (overlap.pp false) schedule 'dualpipe-v' deadlocks"
run "$stepsim" job scenarios/job-llama70b-64xh100.yaml --runs 10 --set 'job={tokens: 1e10}' \
  --set 'job_step.variants={bad: {layout: {schedule: dualpipe-v, virtual_stages: 1, overlap: {pp: false}}}}'
refused "job_step.variants.bad.layout.overlap.pp: variant 'bad': with blocking pipeline sends (overlap.pp false)"
# The job's own `cards` (the cards whose failures count) is every case's: more cards fail more
# often, so each case takes longer than on its own GPUs (56.06 / 60.89 / 59.85 d above).
"$stepsim" job scenarios/job-hsdp-128xa100.yaml --set job.cards=140 --runs 100 >"$tmp/cards.txt"
fig "^base 140 2.3 s 56.15 d" "$tmp/cards.txt"
fig "^shard-over-32 140 2.5 s 60.98 d" "$tmp/cards.txt"
fig "^fsdp-all-128 140 2.4 s 59.93 d" "$tmp/cards.txt"
# Tokens are read as every count is (cli::whole_number): written out, as 2.2e12 or with a suffix K,
# M, B or T (capitals), exactly; whole, at least 1, below 2^63; a search's task alike. 2.2T is the
# scenario's 2.2e12, and 15T gives the run 15000000000000 gives: 15e12 / (256 x 4,096) tokens a
# step = 14,305,115 steps.
"$stepsim" job scenarios/job-hsdp-128xa100.yaml --runs 20 --json >"$tmp/tokens-e12.json" 2>/dev/null
"$stepsim" job scenarios/job-hsdp-128xa100.yaml --runs 20 --json --set job.tokens=2.2T >"$tmp/tokens-T.json" 2>/dev/null
cmp -s "$tmp/tokens-e12.json" "$tmp/tokens-T.json" || fail "job.tokens: 2.2T is not 2.2e12"
"$stepsim" job scenarios/job-hsdp-128xa100.yaml --runs 20 --set job.tokens=15T >"$tmp/tokens-15T.txt" 2>/dev/null
"$stepsim" job scenarios/job-hsdp-128xa100.yaml --runs 20 --set job.tokens=15000000000000 >"$tmp/tokens-15e12.txt" 2>/dev/null
has "job-hsdp-128xa100, base: 14305115 steps of 2.3 s on 128 cards; 20 runs, seed 1" "$tmp/tokens-15T.txt"
cmp -s "$tmp/tokens-15T.txt" "$tmp/tokens-15e12.txt" || fail "job.tokens: 15T is not 15000000000000"
run "$stepsim" job scenarios/job-hsdp-128xa100.yaml --set job.tokens=2.5
refused "error: --set: job.tokens: '2.5' is not a whole number"
run "$stepsim" job scenarios/job-hsdp-128xa100.yaml --set job.tokens=1.0001K
refused "error: --set: job.tokens: '1.0001K' is not a whole number"
run "$stepsim" job scenarios/job-hsdp-128xa100.yaml --set job.tokens=-2T
refused "error: --set: job.tokens: must be at least 1 (got -2000000000000)"
run "$stepsim" job scenarios/job-hsdp-128xa100.yaml --set job.tokens=9999999T
refused "error: --set: job.tokens: '9999999T' is too large (at most 9223372036854775807)"
run "$stepsim" job scenarios/job-hsdp-128xa100.yaml --set job.tokens=15t
refused "error: --set: job.tokens: '15t' is not a whole number (a count's suffixes are K, M, B and T, in capitals)"
run "$stepsim" search scenarios/search-design-desk.yaml --set search.task.tokens=1e19
refused "error: --set: search.task.tokens: '1e19' is too large (at most 9223372036854775807)"
# A variant that does not fit is named and not run.
"$stepsim" job scenarios/job-hsdp-128xa100.yaml --runs 20 \
  --set 'job_step.variants={huge: {layout: {micro_batch: 64, global_batch: 8192}}}' >"$tmp/huge.txt" 2>"$tmp/huge.err"
grep -q "skipped huge: needs .* of 76.0 GiB per GPU (does not fit)" "$tmp/huge.err" || { cat "$tmp/huge.err"; fail "a variant that does not fit"; }
! grep -q "^huge " "$tmp/huge.txt" || fail "a variant that does not fit, run"
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
refused "job.tokens: 7629394531250 steps of 2.3 s exceed the 73 years a run can simulate"
{ cat scenarios/design-case.yaml
  printf 'job_step:\n  model: qwen3-8b\n  hardware: {preset: rtx4090, gpus: 48}\n  layout: {fsdp: true, global_batch: 384}\n'; } >"$tmp/both.yaml"
run "$stepsim" job "$tmp/both.yaml"
refused "both.yaml:70: job: the scenario's plan and job_step both give a step: keep one of them beside the job"
# A case asked for that does not fit: one line, its name once, nothing run.
printf '%s\n' "job_step:" "  model: {name: tiny-1b, layers: 22, hidden: 2048, ffn: 5632, heads: 32, kv_heads: 4, vocab: 32000, seq: 2048}" \
  "  hardware: {preset: rtx4090, gpus: 8}" "  layout: {zero: 2, micro_batch: 4, global_batch: 256}" \
  "  variants: {ddp: {layout: {zero: 0}}}" "job: {tokens: 3.0e10, card_mtbf: 100d, restore: 5min}" >"$tmp/ddp.yaml"
run "$stepsim" job "$tmp/ddp.yaml" --case ddp --runs 2
refused "error: --case: ddp: needs 30.4 of 22.0 GiB per GPU: does not fit, nothing to run"
[[ $(wc -l <<<"$err") == 1 ]] || fail "--case ddp: $err"
# A search's words for a checkpoint, in a job, and a job's in a search, are named; durations may
# be written out.
run "$stepsim" job scenarios/job-design-48.yaml --set job.checkpoint.interval=2h
refused "error: --set: job.checkpoint.interval: unknown key; this section calls it 'every'"
run "$stepsim" search scenarios/search-design-desk.yaml --set search.checkpoint.storage=2GB/s
refused "error: --set: search.checkpoint.storage: unknown key; this section calls it 'bandwidth'"
"$stepsim" job scenarios/job-design-48.yaml --runs 2 --set 'job.checkpoint.every=2 hours' --json >"$tmp/h1.json"
"$stepsim" job scenarios/job-design-48.yaml --runs 2 --set 'job.checkpoint.every=2h' --json >"$tmp/h2.json"
cmp -s "$tmp/h1.json" "$tmp/h2.json" || fail "'2 hours' is not 2h"
# Where one run fits but not the runs asked for, the runs are named (it blamed job.steps).
run "$stepsim" job scenarios/job-1024.yaml --runs 1000000
refused "error: --runs: too large: about 1.9e+10 ops and 350.6 KB of memory, over --max-ops 1000000000: fewer runs, or raise --max-ops"
run "$stepsim" job scenarios/job-1024.yaml --set job.runs=1000000
refused "error: --set: job.runs: too large: about 1.9e+10 ops"
# The estimate counts each compared interval's own segments (a shorter interval: more events),
# and each run's share of the guard is by the longest pass: 50K runs (7e8 events estimated, 1.3e9
# at 70K) run where they used to stop at run 0's even share, blamed on job.cards.
"$stepsim" job scenarios/job-1024.yaml --runs 50K -j 2 --json >"$tmp/50k.json" || fail "--runs 50K"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["runs"] == 50000' "$tmp/50k.json" || fail "--runs 50K: runs"
run "$stepsim" job scenarios/job-1024.yaml --runs 70K
refused "error: --runs: too large: about 1.3e+09 ops and 350.6 KB of memory, over --max-ops 1000000000: fewer runs, or raise --max-ops"
# A seed is a whole number below 2^63, read as given (CLI11 saturated 2^64 and more to 2^63 - 1,
# every such seed the same runs, and printed its range's 309 digits for -1), as every count option
# reads one (whole_number: 4096, 2.2e12, 15T).
run "$stepsim" job scenarios/job-1024.yaml --seed -1 --runs 2
refused "error: job: --seed: must be at least 0 (got -1) (\`stepsim job --help\` lists the options)"
run "$stepsim" job scenarios/job-1024.yaml --seed abc --runs 2
refused "error: job: --seed: 'abc' is not a whole number"
run "$stepsim" job scenarios/job-1024.yaml --seed 99999999999999999999 --runs 2
refused "error: job: --seed: '99999999999999999999' is too large (at most 9223372036854775807)"
# A save or a commit that outlasts the time between interruptions: saving more often would not
# help, so the save is blamed (it was the MTBF, "save more often"): a sync save's 1000-day commit
# record before any run, an async snapshot that never commits after run 0 gives up.
run "$stepsim" job scenarios/job-1024.yaml --set job.card_mtbf=1h --set job.checkpoint.commit=1000d --runs 20
refused "error: --set: job.checkpoint.commit: interruptions (every 3.5 s on average) come faster than a checkpoint segment of 1000.01 d completes (more than 1e15 tries each): a save's pause (1000.00 d) and the restore (2.0 min) alone take longer: no run would finish within --max-ops 1000000000; shorten them, or use fewer cards"
run "$stepsim" job scenarios/job-async-save.yaml --set job.card_mtbf=1h --set job.cards=10 --set job.steps=100000 \
  --set job.checkpoint.commit=1000d --runs 20
refused "error: --set: job.checkpoint.commit: run 0 has not finished after 422.9 days (40 steps done): a snapshot counts once written and committed, 1000.00 d after its capture, no sooner than the 6.0 min between interruptions on average: none counts; shorten the commit record (or the write), or use fewer cards"
# Count options take a count's forms: --runs 2K is --runs 2000, --seed 1e3 is --seed 1000.
"$stepsim" job scenarios/job-1024.yaml --runs 2K --seed 1e3 -j 1 --json >"$tmp/runs-2k.json"
"$stepsim" job scenarios/job-1024.yaml --runs 2000 --seed 1000 -j 1 --json >"$tmp/runs-2000.json"
cmp -s "$tmp/runs-2k.json" "$tmp/runs-2000.json" || fail "--runs 2K --seed 1e3 is not --runs 2000 --seed 1000"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["runs"] == 2000 and d["seed"] == 1000, d' "$tmp/runs-2k.json" ||
  fail "--runs 2K: not 2000 runs"
run "$stepsim" job scenarios/job-1024.yaml --runs 1.5
refused "error: job: --runs: '1.5' is not a whole number"
run "$stepsim" job scenarios/job-1024.yaml --runs 2M
refused "error: job: --runs: '2M' is too large (at most 1000000)"
"$stepsim" job scenarios/job-1024.yaml --seed 9223372036854775807 --runs 2 --json >"$tmp/seed.json"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["seed"] == 9223372036854775807' "$tmp/seed.json" ||
  fail "the largest seed"
echo "job_cli: ok"
