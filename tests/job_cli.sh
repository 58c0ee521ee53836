#!/usr/bin/env bash
# `stepsim job` end to end: tables, JSON, traces, determinism across threads, input errors.
set -euo pipefail
bin="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

out="$("$bin" job scenarios/job-design-48.yaml --runs 200 2>/dev/null)"
grep -q "deadline 30.00 d: met in 100.0% of runs -> meets" <<<"$out"
grep -q "P90" <<<"$out"
out="$("$bin" job scenarios/job-design-32.yaml --runs 200 2>/dev/null)"
grep -q -- "-> misses" <<<"$out"

# Same seed: byte-identical output with one thread or two; a different seed differs.
"$bin" job scenarios/job-design-48.yaml --runs 300 --seed 5 --threads 1 --json >"$tmp/a.json" 2>/dev/null
"$bin" job scenarios/job-design-48.yaml --runs 300 --seed 5 --threads 2 --json >"$tmp/b.json" 2>/dev/null
cmp "$tmp/a.json" "$tmp/b.json"
"$bin" job scenarios/job-design-48.yaml --runs 300 --seed 6 --json >"$tmp/c.json" 2>/dev/null
! cmp -s "$tmp/a.json" "$tmp/c.json"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['verdict']=='meets' and d['runs']==300" "$tmp/a.json"

# Trace: valid JSON with collapsed step slices, saves and a failure.
"$bin" job scenarios/job-async-save.yaml --trace "$tmp/t.json" >/dev/null 2>&1
python3 - "$tmp/t.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = [e.get("name", "") for e in ev if e["ph"] == "X"]
assert any(n.startswith("steps ") for n in names), names
assert "failure" in names and any(n.startswith("commit @") for n in names), names
assert any(e["ph"] == "C" and e["name"] == "pending snapshots" for e in ev)
PY

# Progress and timing go to stderr, not stdout.
"$bin" job scenarios/job-storage.yaml >"$tmp/o.txt" 2>"$tmp/e.txt"
grep -q "job: 1 runs of job-storage" "$tmp/e.txt"
! grep -q "job: 1 runs" "$tmp/o.txt"

# Bad input: exit 2 with file:line: key.
set +e
"$bin" job scenarios/job-design-48.yaml --set job.checkpoint.every=soon >/dev/null 2>"$tmp/err.txt"
code=$?
set -e
[[ $code -eq 2 ]]
grep -q "job.checkpoint.every" "$tmp/err.txt"
set +e
"$bin" job scenarios/book-pipeline.yaml >/dev/null 2>"$tmp/err.txt"
code=$?
set -e
[[ $code -eq 2 ]]
grep -q "needs a 'job' section" "$tmp/err.txt"
echo "job_cli: ok"
