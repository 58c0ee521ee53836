#!/usr/bin/env bash
# The CLI on data_parallel scenarios: run (table, JSON, trace), compare, validate, bad input.
# Usage: bash tests/data_parallel_cli.sh /path/to/stepsim   (from the source directory)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"

out="$("$stepsim" run scenarios/zero3-design-48.yaml)"
grep -q "48 identical ranks folded" <<<"$out" || fail "run does not say the ranks are folded"
grep -q "step 52.825 s" <<<"$out" || fail "design step time: $out"

json="$("$stepsim" run scenarios/zero3-design-48.yaml --json --trace "$tmp/z48.json")"
for key in step_time_ms link_time_s link_time_ms exposed_comm_ms resources ranks; do
  grep -q "\"$key\"" <<<"$json" || fail "JSON lacks $key"
done
grep -q '"link_time_s": 12.048' <<<"$json" || fail "link time in JSON: $json"
grep -q '"traceEvents"' "$tmp/z48.json" || fail "trace not written"
grep -q '"AG embedding fwd mb0"' "$tmp/z48.json" || fail "trace lacks the first gather"

# Same input, byte-identical output.
"$stepsim" run scenarios/dp-buckets.yaml --json --trace "$tmp/a.json" >"$tmp/a.out"
"$stepsim" run scenarios/dp-buckets.yaml --json --trace "$tmp/b.json" >"$tmp/b.out"
cmp -s "$tmp/a.out" "$tmp/b.out" && cmp -s "$tmp/a.json" "$tmp/b.json" || fail "output not deterministic"

cmp_out="$("$stepsim" compare scenarios/dp-buckets.yaml)"
grep -q "one-bucket" <<<"$cmp_out" && grep -q "2.550 ms" <<<"$cmp_out" || fail "compare of buckets: $cmp_out"
"$stepsim" compare scenarios/dp-overlap-order.yaml --json | grep >/dev/null '"exposed_comm_ms": 0.5' || fail "dx-first exposed time"
"$stepsim" validate scenarios/zero3-design-32.yaml >/dev/null || fail "validate"

# --set reaches the section; a straggler unfolds the ranks.
"$stepsim" run scenarios/zero3-design-48.yaml --set data_parallel.stragglers.5=1.02 | grep >/dev/null "all 48 simulated" \
  || fail "straggler did not unfold"

# Bad input: exit 2 with file:line: key.
printf 'data_parallel:\n  cards: 4\n  prefetsh: 1\n' >"$tmp/bad.yaml"
run "$stepsim" run "$tmp/bad.yaml"
[[ $code -eq 2 ]] || fail "bad key exit code $code"
grep -q "bad.yaml:3: data_parallel.prefetsh" <<<"$err" || fail "bad key message: $err"
printf 'data_parallel:\n  cards: 4\n  layers: {a: {backward: 1ms, gradients: 1MiB}}\n' >"$tmp/nolink.yaml"
run "$stepsim" run "$tmp/nolink.yaml"
[[ $code -eq 2 ]] || fail "missing link bandwidth exit code $code: $err"
grep -q "data_parallel" <<<"$err" || fail "missing link bandwidth message: $err"
echo ok
