#!/usr/bin/env bash
# What the scenario-kind registry promises for every step scenario shipped (pipeline,
# data_parallel, rl, moe, job_step): `run` prints a table, `--json` is valid and the same twice,
# `--trace` writes a Chrome trace, `--html` a page, `compare` and `validate` succeed. The kinds'
# own figures are asserted in their own tests (cli_pipeline.sh, rl_cli.sh, moe_cli.sh, ...).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"

checked=0
for f in scenarios/*.yaml; do
  kind="$(grep -oE '^(pipeline|data_parallel|rl|moe|job_step):' "$f" | head -1 | tr -d :)" || true
  [[ -n "$kind" ]] || continue
  "$stepsim" run "$f" > "$tmp/table.txt" || fail "$f: run"
  [[ -s "$tmp/table.txt" ]] || fail "$f: run printed nothing"
  "$stepsim" run "$f" --json > "$tmp/a.json"
  "$stepsim" run "$f" --json > "$tmp/b.json"
  cmp -s "$tmp/a.json" "$tmp/b.json" || fail "$f: --json is not deterministic"
  python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/a.json" || fail "$f: --json is not JSON"
  if grep -q '"kind":' "$tmp/a.json"; then
    grep -q "\"kind\": \"$kind\"" "$tmp/a.json" || fail "$f: --json kind is not $kind"
  fi
  "$stepsim" run "$f" --trace "$tmp/trace.json" > /dev/null
  python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["traceEvents"]' "$tmp/trace.json" ||
    fail "$f: --trace is not a Chrome trace with events"
  "$stepsim" run "$f" --html "$tmp/page.html" > /dev/null
  grep -q '</html>' "$tmp/page.html" || fail "$f: --html"
  # Captured before matching: `grep -q` may exit early and kill a still-writing stepsim (SIGPIPE).
  out="$("$stepsim" compare "$f")" || fail "$f: compare"
  [[ -n "$out" ]] || fail "$f: compare printed nothing"
  # compare --trace: every row's run, its processes named after the row ("zb-h1: device 0"); a
  # job step without variants compares as it runs, its trace the run's.
  "$stepsim" compare "$f" --trace "$tmp/compare.json" > /dev/null || fail "$f: compare --trace"
  if ! cmp -s "$tmp/compare.json" "$tmp/trace.json"; then
    python3 - "$tmp/compare.json" <<'PY' || fail "$f: compare --trace"
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
names = [e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"]
assert names and all(": " in n for n in names), names[:4]
assert any(e["ph"] == "X" for e in events)
PY
  fi
  [[ "$("$stepsim" validate "$f")" == "$f: ok" ]] || fail "$f: validate"
  checked=$((checked + 1))
done
# A pipeline compared under two schedules: its trace holds each schedule's own run, slice for
# slice, one after the other (the first row's processes first).
for s in 1f1b zb-h1; do
  "$stepsim" run scenarios/book-pipeline.yaml --schedule "$s" --trace "$tmp/$s.json" > /dev/null
done
"$stepsim" compare scenarios/book-pipeline.yaml --schedules 1f1b,zb-h1 --trace "$tmp/both.json" > /dev/null
python3 - "$tmp/1f1b.json" "$tmp/zb-h1.json" "$tmp/both.json" <<'PY' || fail "compare --trace of two schedules"
import json, sys
def load(path, prefix=""):
    events = json.load(open(path))["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    slices = sorted((procs[e["pid"]], e["name"], e["ts"], e["dur"]) for e in events if e["ph"] == "X")
    return procs, slices
_, a = load(sys.argv[1])
_, b = load(sys.argv[2])
procs, both = load(sys.argv[3])
want = sorted([("1f1b: " + p, n, t, d) for p, n, t, d in a] + [("zb-h1: " + p, n, t, d) for p, n, t, d in b])
assert both == want, (len(both), len(want))
names = [procs[p] for p in sorted(procs)]
assert names[0].startswith("1f1b: ") and names[-1].startswith("zb-h1: "), names
PY
# 17 step scenarios ship today; fewer means the kind detection above broke.
[[ $checked -ge 17 ]] || fail "only $checked step scenarios found"
echo "ok: $checked step scenarios"
