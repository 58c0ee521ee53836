#!/usr/bin/env bash
# End-to-end: the five-schedule comparison (plus ZB-H2 and DualPipe-V), capacity ranking,
# CSV export and import in PyTorch's notation, traces for every schedule, and clear errors.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
book=scenarios/book-pipeline.yaml

out="$("$stepsim" compare "$book")"
echo "$out"
grep -qE '^fill-drain +337\.000 +96\.000' <<<"$out" || fail "fill-drain row"
grep -qE '^1f1b +347\.000 +106\.000' <<<"$out" || fail "1f1b row"
grep -qE '^interleaved-1f1b v=2 +297\.667 +56\.667 .* 1329\.9 .* 56/56 ' <<<"$out" || fail "interleaved row"
grep -qE '^zb-h1 +283\.000 +42\.000' <<<"$out" || fail "zb-h1 row"
grep -qE '^zb-h2 +274\.000 +33\.000 .* 7 7 7 7 ' <<<"$out" || fail "zb-h2 row"
grep -qE '^dualpipe +270\.000 +29\.000 .* 5 5 5 5 .* 24/24 +2$' <<<"$out" || fail "dualpipe row (two parameter copies)"
grep -qE '^dualpipe-v +' <<<"$out" || fail "dualpipe-v row"

# The schedules run side by side: the same table, notes and JSON on one thread or two, and an
# explicit list's first failing schedule stops it as when they ran one after another.
base=bench/suites/pipeline-base.yaml
for args in "--set pipeline.stages=5 --set pipeline.microbatches=7" "--set pipeline.microbatches=64 --json"; do
  # shellcheck disable=SC2086
  [[ "$("$stepsim" compare "$base" $args -j 1 2>&1)" == "$("$stepsim" compare "$base" $args -j 2 2>&1)" ]] ||
    fail "compare $args: -j 1 and -j 2 differ"
done
err="$("$stepsim" compare "$base" --set pipeline.microbatches=7 --schedules 1f1b,dualpipe,zb-h2 -j 2 2>&1)" && fail "m=7 dualpipe"
grep -q "pipeline.schedule: dualpipe: dualpipe splits the micro-batches into two halves" <<<"$err" || fail "first error: $err"

# The wrap-around hop free: the interleaved order gains 0.667 ms.
"$stepsim" compare "$book" --schedules interleaved-1f1b --set pipeline.link.wrap_latency=0ms |
  grep -qE '^interleaved-1f1b v=2 +297\.000 +56\.000' || fail "free wrap hop"
# virtual_stages chooses the interleaved chunks; the other schedules keep their placement.
v4="$("$stepsim" compare "$book" --set pipeline.virtual_stages=4)"
grep -qE '^interleaved-1f1b v=4 .* 120/120 ' <<<"$v4" || fail "v=4 row"
grep -qE '^1f1b +347\.000' <<<"$v4" || fail "1f1b still compared with v=4"

# With 1 GiB per device only 1F1B fits; it is ranked first, the rest fastest first.
cap="$("$stepsim" compare "$book" --set pipeline.memory.capacity=1GiB)"
echo "$cap"
rows="$(sed -n '/^----/,$p' <<<"$cap" | tail -n +2)"
head -1 <<<"$rows" | grep >/dev/null -E '^1f1b .* yes$' || fail "1f1b first and fits"
[[ "$(grep -c ' yes$' <<<"$rows")" == 1 ]] || fail "only 1f1b fits"
sed -n 2p <<<"$rows" | grep >/dev/null -E '^dualpipe .* no \(\+202\.0 MiB\)$' || fail "fastest infeasible next"

# Export a schedule as PyTorch CSV, import it as a custom schedule: same step.
"$stepsim" export-schedule "$book" --schedule dualpipe -o "$tmp/dualpipe.csv"
head -1 "$tmp/dualpipe.csv" | grep >/dev/null '^0F0,0F1,0F2,3F4,3I4,3W4,3F5,(0F3;3B5)OVERLAP_F_B,' || fail "dualpipe csv row"
[[ "$(wc -l <"$tmp/dualpipe.csv")" == 4 ]] || fail "one row per device"
sed -e '/schedule: 1f1b/d' -e 's|^  layers: 36|  actions_csv: dualpipe.csv|' "$book" >"$tmp/custom.yaml"
grep -q 'actions_csv' "$tmp/custom.yaml" || fail "scenario rewrite"
"$stepsim" run "$tmp/custom.yaml" | grep >/dev/null 'step time 270.000 ms' || fail "imported dualpipe step"
"$stepsim" compare "$tmp/custom.yaml" | grep >/dev/null -E '^custom +270\.000' || fail "custom row in compare"
"$stepsim" export-schedule "$book" --schedule 1f1b >"$tmp/1f1b.csv"
head -1 "$tmp/1f1b.csv" | grep >/dev/null $'^0F0,0F1,0F2,0F3,0B0,0F4,0B1,0F5,0B2,0F6,0B3,0F7,0B4,0B5,0B6,0B7\r$' ||
  fail "1f1b csv to stdout"

# A trace for every schedule.
for s in fill-drain 1f1b interleaved-1f1b zb-h1 zb-h2 dualpipe dualpipe-v; do
  "$stepsim" run "$book" --schedule "$s" --trace "$tmp/$s.json" >/dev/null
  grep -q '"traceEvents"' "$tmp/$s.json" || fail "trace for $s"
done
grep -q '"cat":"overlap"' "$tmp/dualpipe.json" || fail "dualpipe trace shows overlapped pairs"

expect_exit() {  # code, then the command
  local want="$1"; shift
  set +e; "$@" >"$tmp/out" 2>"$tmp/err"; local got=$?; set -e
  [[ "$got" == "$want" ]] || { cat "$tmp/err"; fail "exit $got, want $want: $*"; }
}
expect_exit 2 "$stepsim" run "$book" --schedule dualpipe --set pipeline.microbatches=9
grep -q 'pipeline.schedule: dualpipe: dualpipe splits the micro-batches into two halves: microbatches must be even (got 9)' "$tmp/err" ||
  fail "dualpipe odd m message"
expect_exit 2 "$stepsim" run "$book" --schedule interleaved-1f1b --set pipeline.microbatches=6
grep -q 'microbatches (6) must be a multiple of stages (4)' "$tmp/err" || fail "interleaved m message"
expect_exit 2 "$stepsim" compare "$book" --schedules 1f1b,nosuch
expect_exit 2 "$stepsim" run "$book" --set 'pipeline.chunk_layers=[5,5]' --schedule interleaved-1f1b
grep -q 'pipeline.chunk_layers: lists 2 chunks' "$tmp/err" || fail "chunk_layers message"
printf '0F0,0B0\n1F0,1Z0\n' >"$tmp/bad.csv"
printf 'pipeline:\n  stages: 2\n  microbatches: 1\n  actions_csv: bad.csv\n  time: {forward: 1ms, backward: 2ms}\n' >"$tmp/bad.yaml"
expect_exit 2 "$stepsim" run "$tmp/bad.yaml"
grep -q "bad.yaml:4: pipeline.actions_csv: .*bad.csv: row 2, column 2: '1Z0': unknown op letter 'Z'" "$tmp/err" || fail "csv error location"
printf '0F0,0B0,0F1,0B1\n1F1,1B1,1F0,1B0\n' >"$tmp/dead.csv"
sed 's/bad.csv/dead.csv/; s/microbatches: 1/microbatches: 2/' "$tmp/bad.yaml" >"$tmp/dead.yaml"
expect_exit 3 "$stepsim" run "$tmp/dead.yaml"
grep -q "stuck at 1F1 waiting on send 0F1" "$tmp/err" || fail "deadlock names ops"
echo "cli_schedules: ok"
