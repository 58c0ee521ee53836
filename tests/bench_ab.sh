#!/usr/bin/env bash
# bench/ab.py, the paired timing of two binaries: its table, what one option costs (--b-args,
# --remove), and that it refuses to time binaries whose outputs differ or that fail.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
small=(run bench/suites/pipeline-base.yaml --set pipeline.stages=4 --set pipeline.microbatches=8 --json)

# The same binary as A and B: identical outputs, one row each, four pairs.
out="$(python3 bench/ab.py -n 4 "$stepsim" "$stepsim" -- "${small[@]}" 2>/dev/null)"
[[ "$(grep -cF "$stepsim " <<<"$out")" == 2 ]] || fail "one row per binary: $out"
grep -Eq "^B / A CPU, per pair: median [0-9.]+ \(quartiles [0-9.]+ - [0-9.]+\); B used less CPU in [0-4] of 4 pairs; outputs identical$" <<<"$out"
grep -Eq "^B / A wall, per pair: median [0-9.]+ \(quartiles [0-9.]+ - [0-9.]+\)$" <<<"$out"

# What a trace costs: B is the same binary with --trace; the old file is removed before each run
# (one round, A then B: B's file is there after it).
out="$(python3 bench/ab.py -n 1 --b-args="--trace $tmp/t.pftrace" --remove "$tmp/t.pftrace" "$stepsim" "$stepsim" \
  -- "${small[@]}" 2>/dev/null)"
grep -qF "$stepsim --trace $tmp/t.pftrace " <<<"$out" || fail "B's row names its option: $out"
[[ -s "$tmp/t.pftrace" ]] || fail "B wrote no trace"

# A B whose results differ (one more micro-batch) is refused: exit 1, naming it.
cat >"$tmp/other" <<SH
#!/usr/bin/env bash
exec "$stepsim" "\$@" --set pipeline.microbatches=9
SH
chmod +x "$tmp/other"
run python3 bench/ab.py -n 2 "$stepsim" "$tmp/other" -- "${small[@]}"
[[ $code == 1 ]] || fail "differing outputs: exit $code"
grep -qF "ab: $tmp/other's output differs from $stepsim's first (round 1)" <<<"$err"

# A command that fails is not timed.
run python3 bench/ab.py -n 2 "$stepsim" "$stepsim" -- run no-such-file.yaml
[[ $code == 1 ]] || fail "a failing command: exit $code"
grep -qF "ab: $stepsim exited with 2 (round 1)" <<<"$err"
echo "bench_ab: ok"
