#!/usr/bin/env bash
# `stepsim plan` from the command line: the book's table, JSON, sweeps, exit codes, determinism.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
scenario=scenarios/design-case.yaml

out="$("$stepsim" plan "$scenario")"
grep -q "with checkpoint overhead and 5 reserved days (days)          34.3 (misses)  24.6 (meets)" <<<"$out" || fail "verdict row"
grep -q "48 cards: meets the 30-day deadline" <<<"$out" || fail "verdict line"

# Same input, same bytes.
[[ "$("$stepsim" plan "$scenario")" == "$out" ]] || fail "output is not deterministic"

# (Outputs are captured before grep -q: with pipefail, grep closing the pipe early would fail it.)
json="$("$stepsim" plan "$scenario" --json)"
grep -q '"completion_days": 24.6' <<<"$json" || fail "JSON completion"

csv="$("$stepsim" plan "$scenario" --sweep cards=16:64:8 --sweep efficiency=0.30:0.50:0.05 --csv)"
[[ "$(wc -l <<<"$csv")" -eq 36 ]] || fail "sweep CSV should have 35 rows and a header"
grep -q "^48,0.4,48," <<<"$csv" || fail "sweep CSV row for 48 cards at 40%"
# A range whose next step would pass INT64_MAX ends at its last value (it wrapped and grew without
# end); a step too small to count is too many values, not one (the count cast past size_t).
csv="$(timeout 20 "$stepsim" plan "$scenario" --sweep interval=1s:9223372036s:4611686018s --csv)"
[[ "$(cut -d, -f1 <<<"$csv" | tr '\n' ' ')" == "interval 1s 4.61169e+09s " ]] || fail "a range near INT64_MAX: $csv"
if err="$("$stepsim" plan "$scenario" --sweep efficiency=0.1:0.9:1e-20 2>&1)"; then fail "a step of 1e-20 ran"; fi
[[ "$err" == "error: --sweep: efficiency: too many values" ]] || fail "a step of 1e-20: $err"
table="$("$stepsim" plan "$scenario" --sweep cards=16:64:8 --sweep efficiency=0.30:0.50:0.05)"
grep -q "18 of 35 combinations fit in memory and meet the deadline" <<<"$table" || fail "sweep summary"
# A sweep on 1 and 2 threads: the same bytes (5,248 combinations, 82 runs of 64 for the threads).
grid=(--sweep cards=8:256:8 --sweep efficiency=20%:60%:1% --sweep interval=30min,1h,2h,4h)
one="$("$stepsim" plan "$scenario" "${grid[@]}" --csv -j 1 | md5sum)"
two="$("$stepsim" plan "$scenario" "${grid[@]}" --csv -j 2 | md5sum)"
[[ "$one" == "$two" ]] || fail "sweep CSV differs between -j 1 and -j 2"

# Efficiency 30%: the 48-card plan misses (70.2 s per step over the 67.2 s budget).
slow="$("$stepsim" plan "$scenario" --set plan.compute.efficiency=30%)"
grep -q "step time (s) .* 70.2" <<<"$slow" || fail "30% efficiency"

# Bad input: one line naming the key, exit 2.
set +e
err="$("$stepsim" plan "$scenario" --sweep card=1:2:1 2>&1 >/dev/null)"; code=$?
set -e
[[ $code -eq 2 ]] || fail "bad sweep key should exit 2 (got $code)"
grep -q "did you mean 'cards'" <<<"$err" || fail "bad sweep key message: $err"
set +e
"$stepsim" plan scenarios/book-pipeline.yaml >/dev/null 2>&1; code=$?
set -e
[[ $code -eq 2 ]] || fail "a scenario without a plan should exit 2 (got $code)"

bill="$("$stepsim" plan scenarios/resource-bill.yaml)"
grep -q "21,638,400 / 10,000,000" <<<"$bill" || fail "resource bill"
# checkpoint.compare without cards: the plan's cases' (the table was left out, silently); without
# intervals, refused at the key.
"$stepsim" plan scenarios/design-case.yaml --set 'plan.checkpoint.compare={intervals: [600s, 1800s]}' >"$tmp/ckcmp.txt"
fig "^ 32 2.78% 1.02% 5460 s: 0.61%$" "$tmp/ckcmp.txt"
fig "^ 48 2.80% 1.08% 4458 s: 0.75%$" "$tmp/ckcmp.txt"
run "$stepsim" plan scenarios/design-case.yaml --set 'plan.checkpoint.compare={cards: [8]}'
refused "error: --set: plan.checkpoint.compare.intervals: missing: the checkpoint intervals to compare"

# A job step's preset names are taken for the cards the plan's table has; one it has not is named as such.
"$stepsim" plan scenarios/design-case.yaml --set plan.accelerator=h100-sxm >"$tmp/h100sxm.txt"
"$stepsim" plan scenarios/design-case.yaml --set plan.accelerator=h100 >"$tmp/h100.txt"
cmp -s "$tmp/h100sxm.txt" "$tmp/h100.txt" || fail "h100-sxm is not the plan's h100"
run "$stepsim" plan scenarios/design-case.yaml --set plan.accelerator=h800
refused "error: --set: plan.accelerator: 'h800' is a job_step preset the plan's table does not have (it has: rtx4090, a100, h100, b200; a job_step scenario takes every preset)"

# Two cases of one name (a column heading and a --case name each): refused.
run "$stepsim" plan scenarios/design-case.yaml --set 'plan.cases=[{name: a, cards: 32}, {name: a, cards: 48}]'
refused "error: --set: plan.cases[1].name: 'a' names two cases: give each its own"

# Counts written with K, M, B, T (or an exponent) are the numbers written out: the scale-out's 1T
# parameters and 20T tokens, its 16,384 cards as 16.384K, and a sweep's cards alike (1.6K: 1,600);
# a count that is not whole is refused at its line.
sed 's/parameters: 1000000000000/parameters: 1T/; s/tokens: 20000000000000 /tokens: 20T/; s/cards: 16384/cards: 16.384K/' \
  scenarios/scale-out.yaml >"$tmp/scale-out.yaml"
grep -q "parameters: 1T" "$tmp/scale-out.yaml" && grep -q "tokens: 20T" "$tmp/scale-out.yaml" &&
  grep -q "cards: 16.384K" "$tmp/scale-out.yaml" || fail "the edit of scale-out.yaml"
"$stepsim" plan "$tmp/scale-out.yaml" >"$tmp/scale-out-T.txt"
"$stepsim" plan scenarios/scale-out.yaml >"$tmp/scale-out.txt"
cmp -s "$tmp/scale-out-T.txt" "$tmp/scale-out.txt" || fail "1T parameters / 20T tokens / 16.384K cards are not the numbers"
grep -q "^a100 40% 679 123655$" <(tr -s ' ' <"$tmp/scale-out-T.txt") || fail "scale-out's figures: $(cat "$tmp/scale-out-T.txt")"
run "$stepsim" plan "$scenario" --sweep cards=32,1.6K
refused "error: --sweep: cards: 1600 cards exceed the batch: 384 sequences per step keep at most 384 busy"
sed -i 's/tokens: 20T/tokens: 20.5000000000001T/' "$tmp/scale-out.yaml"
run "$stepsim" plan "$tmp/scale-out.yaml"
refused "scale-out.yaml:8: plan.scale_out.tokens: '20.5000000000001T' is not a whole number"

echo ok
