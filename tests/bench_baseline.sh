#!/usr/bin/env bash
# The shipped regression suite against its committed baseline (exact: the simulator is
# deterministic), and that a deliberately changed schedule or setting fails it with a list.
# Usage: bash tests/bench_baseline.sh /path/to/stepsim   (from the source directory)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
suite=bench/suites/pipeline.yaml
baseline=bench/suites/pipeline.baseline.json

# 1. The suite as shipped matches its baseline.
"$stepsim" bench "$suite" --baseline "$baseline" -o "$tmp/now.json" -q >"$tmp/out.txt" ||
  { cat "$tmp/out.txt"; fail "the shipped suite does not match $baseline (regenerate: scripts/bench-baseline.sh)"; }
grep -q "0 regressions" "$tmp/out.txt" || fail "no comparison line"
grep -q "which schedule wins where" "$tmp/out.txt" || fail "no winner summary"
[[ -s "$tmp/now.csv" ]] || fail "no CSV written"

# 2. A deliberately changed schedule: the suite's "1f1b" runs fill-drain's order.
sed "s|^scenario: .*|scenario: $PWD/bench/suites/pipeline-base.yaml|;
     s|^    - 1f1b\$|    - {label: 1f1b, set: {schedule: fill-drain}}|" \
  "$suite" >"$tmp/changed.yaml"
grep -q "label: 1f1b, set: {schedule: fill-drain}" "$tmp/changed.yaml" || fail "could not change the suite's 1f1b"
set +e
"$stepsim" bench "$tmp/changed.yaml" --baseline "$baseline" -o "$tmp/changed.json" -q >"$tmp/out.txt"
rc=$?
set -e
[[ $rc == 4 ]] || { cat "$tmp/out.txt"; fail "a changed schedule exited $rc, expected 4"; }
grep -q "^regressions past tolerance (40):" "$tmp/out.txt" || { cat "$tmp/out.txt"; fail "no list of 40 regressions"; }
grep -q "^  schedule=1f1b stages=16 microbatches=64 time_ratio=1:1:1: peak memory d15 231.000 -> 14720.000 MiB" \
  "$tmp/out.txt" || { cat "$tmp/out.txt"; fail "regression line not readable"; }
if grep -q "^  schedule=zb-h1" "$tmp/out.txt"; then fail "unchanged schedules listed"; fi

# 3. A changed setting (link latency 1 ms -> 2 ms) moves every step time.
set +e
"$stepsim" bench "$suite" --set pipeline.link.latency=2ms --baseline "$baseline" -o "$tmp/lat.json" -q >"$tmp/out.txt"
rc=$?
set -e
[[ $rc == 4 ]] || fail "a changed latency exited $rc, expected 4"
grep -q "^regressions past tolerance (250):" "$tmp/out.txt" || { cat "$tmp/out.txt"; fail "latency: no list"; }
grep -q "^  schedule=1f1b stages=4 microbatches=8 time_ratio=1:1:1: step time 347.000 -> 363.000 ms (+4.61%); bubble 0.3055 -> 0.3361" "$tmp/out.txt" ||
  { cat "$tmp/out.txt"; fail "latency: line not readable"; }

# 4. Shards joined by `bench merge` equal the whole run, byte for byte.
for i in 0 1 2; do "$stepsim" bench "$suite" --shard "$i/3" -j 1 -o "$tmp/shard$i.json" -q >/dev/null; done
"$stepsim" bench merge "$tmp/shard2.json" "$tmp/shard0.json" "$tmp/shard1.json" -o "$tmp/merged.json" \
  --baseline "$baseline" >"$tmp/out.txt"
cmp "$tmp/merged.json" "$baseline" || fail "merged shards differ from the baseline"
cmp "$tmp/merged.csv" bench/suites/pipeline.baseline.csv || fail "merged CSV differs"
set +e
"$stepsim" bench merge "$tmp/shard0.json" -o "$tmp/part.json" >"$tmp/out.txt" 2>&1
rc=$?
set -e
[[ $rc == 4 ]] || fail "merging one of three shards exited $rc, expected 4"
grep -q "hold 94 of the suite's 280 variants" "$tmp/out.txt" || fail "missing-shard message"

# 5. Refused before any variant runs, nothing written: an output naming the baseline read (with
# -o, with --csv, as --write-baseline's own file), and a baseline holding none of the variants
# (an emptied one passed every gate, comparing nothing).
cp bench/suites/pipeline.baseline.json bench/suites/pipeline.baseline.csv "$tmp/"
set +e
err=$("$stepsim" bench "$suite" --baseline "$tmp/pipeline.baseline.json" --csv "$tmp/pipeline.baseline.json" \
  -o "$tmp/r2.json" -q 2>&1 >/dev/null)
rc=$?
[[ $rc == 2 && "$err" == "error: --csv: $tmp/pipeline.baseline.json: this command reads it: give another file" ]] ||
  fail "--csv onto the baseline: $rc $err"
[[ ! -e "$tmp/r2.json" ]] || fail "a refused bench left its -o file"
err=$("$stepsim" bench "$suite" --write-baseline --baseline bench/suites/pipeline.baseline.json -q 2>&1 >/dev/null)
rc=$?
[[ $rc == 2 && "$err" == "error: --write-baseline: bench/suites/pipeline.baseline.json: this command reads it: give another file" ]] ||
  fail "--write-baseline over the baseline read: $rc $err"
python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); j["results"] = []; json.dump(j, open(sys.argv[2], "w"))' \
  "$baseline" "$tmp/empty.json"
err=$("$stepsim" bench "$suite" --baseline "$tmp/empty.json" -o "$tmp/r3.json" -q 2>&1 >/dev/null)
rc=$?
set -e
[[ $rc == 2 && "$err" == "error: $tmp/empty.json: results: the baseline holds none of the 280 variants run here (0 results): nothing would be compared; give this suite's baseline, or write one with --write-baseline" ]] ||
  fail "an empty baseline: $rc $err"
[[ ! -e "$tmp/r3.json" ]] || fail "a refused bench left its -o file"
cmp -s "$tmp/pipeline.baseline.json" "$baseline" && cmp -s "$tmp/pipeline.baseline.csv" bench/suites/pipeline.baseline.csv ||
  fail "a refused bench changed the baseline"
# 6. An edited baseline's figures are refused at their key, not compared as if measured: a
# negative step (it read as a 3e9 % regression), a bubble of -3, messages past an int (wrapped).
set +e
for edit in 'r[0]["step_time_ns"] = -5' 'r[1]["bubble_fraction"] = -3.0' 'r[2]["messages"]["forward"] = 2**40' \
  'r[3]["peak_memory_bytes"][0] = 2**64' 'r[4]["step_time_ns"] = 1.5'; do
  python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); r = [x for x in j["results"] if x["status"] == "ok"]; exec(sys.argv[3]); json.dump(j, open(sys.argv[2], "w"))' \
    "$baseline" "$tmp/edited.json" "$edit"
  err=$("$stepsim" bench "$suite" --baseline "$tmp/edited.json" -o "$tmp/r4.json" -q 2>&1 >/dev/null)
  rc=$?
  case "$edit" in
    *step_time_ns*) want="results\[[0-9]*\]\.step_time_ns: expected a whole number from 0 to 9223372036854775807" ;;
    *bubble*) want="results\[[0-9]*\]\.bubble_fraction: expected a share from 0 to 1" ;;
    *messages*) want="results\[[0-9]*\]\.messages\.forward: expected a whole number from 0 to 2147483647" ;;
    *) want="results\[[0-9]*\]\.peak_memory_bytes: expected a whole number from 0 to 9223372036854775807" ;;
  esac
  [[ $rc == 2 && "$err" =~ ^error:\ $tmp/edited.json:\ $want$ ]] || fail "edited baseline ($edit): $rc $err"
done
set -e
echo "bench baseline: ok"
