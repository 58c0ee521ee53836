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
echo "job_cli: ok"
