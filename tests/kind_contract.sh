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
  [[ "$("$stepsim" validate "$f")" == "$f: ok" ]] || fail "$f: validate"
  checked=$((checked + 1))
done
# 17 step scenarios ship today; fewer means the kind detection above broke.
[[ $checked -ge 17 ]] || fail "only $checked step scenarios found"
echo "ok: $checked step scenarios"
