#!/usr/bin/env bash
# End-to-end: the stepsim command on the book scenario, its JSON, its trace and its exit codes.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"

out="$("$stepsim" compare scenarios/book-pipeline.yaml)"
echo "$out"
grep -qE '^fill-drain +337\.000 +96\.000' <<<"$out" || fail "fill-drain row"
grep -qE '^1f1b +347\.000 +106\.000' <<<"$out" || fail "1f1b row"
grep -qE '^zb-h1 +283\.000 +42\.000' <<<"$out" || fail "zb-h1 row"

json="$("$stepsim" compare scenarios/book-pipeline.yaml --json)"
grep -q '"step_time_ms": 347.0' <<<"$json" || fail "json 1f1b step"
grep -q '"peak_resident_microbatches": 8' <<<"$json" || fail "json resident"

"$stepsim" run scenarios/book-pipeline.yaml --trace "$tmp/t.json" >/dev/null
grep -q '"traceEvents"' "$tmp/t.json" || fail "trace written"
"$stepsim" validate scenarios/book-pipeline.yaml | grep >/dev/null ": ok" || fail "validate"

expect_exit() {  # code, then the command
  local want="$1"; shift
  set +e; "$@" >"$tmp/out" 2>"$tmp/err"; local got=$?; set -e
  [[ "$got" == "$want" ]] || { cat "$tmp/err"; fail "exit $got, want $want: $*"; }
}
expect_exit 2 "$stepsim" run scenarios/book-pipeline.yaml --schedule nosuch
grep -q "unknown schedule 'nosuch'" "$tmp/err" || fail "unknown schedule message"
expect_exit 2 "$stepsim" run scenarios/book-pipeline.yaml --set pipeline.time.forward=10
grep -q "pipeline.time.forward: '10' has no unit" "$tmp/err" || fail "unit-less message"
expect_exit 2 "$stepsim" run "$tmp/missing.yaml"
cat >"$tmp/dead.yaml" <<'YAML'
pipeline:
  stages: 2
  microbatches: 2
  time: {forward: 1ms, backward: 2ms}
  actions: ["0F0 0B0 0F1 0B1", "1F1 1B1 1F0 1B0"]
YAML
expect_exit 3 "$stepsim" run "$tmp/dead.yaml"
grep -q "stuck at 0B0" "$tmp/err" || fail "deadlock names stuck op"
# Same input, same bytes.
"$stepsim" run scenarios/book-pipeline.yaml --json >"$tmp/a"
"$stepsim" run scenarios/book-pipeline.yaml --json >"$tmp/b"
cmp -s "$tmp/a" "$tmp/b" || fail "output not deterministic"
echo "cli_pipeline: ok"
