#!/usr/bin/env bash
# The rl scenarios through the CLI: their figures, --set, --html and --gantt pictures, bad input.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"

# run / --json / --trace / --html / validate for every rl file: tests/kind_contract.sh.

# The base row's own columns (s/batch, learned/s, model/s, bottleneck), not any 4.500 in the table:
# verification at 6/s with 75% kept limits the learner to 4.5/s (figure 10-36).
row="$("$stepsim" run scenarios/rl-stages.yaml | awk '$1 == "12/6/8" {print $5, $7, $8, $9}')"
[[ "$row" == "4.000 4.500 4.500 verification" ]] ||
  { echo "FAIL: rl-stages base row: s/batch learned/s model/s bottleneck = '$row', want '4.000 4.500 4.500 verification'"; exit 1; }
"$stepsim" run scenarios/rl-sync-async.yaml | grep >/dev/null '11/15' || { echo "FAIL: 11/15 not in the table"; exit 1; }
"$stepsim" run scenarios/rl-interrupted.yaml --trace "$tmp/t.json" > /dev/null
grep -q '"learning queue"' "$tmp/t.json" || { echo "FAIL: no queue counter in the trace"; exit 1; }

# --set reaches the rl section; bad values name the file or --set and the key, exit 2.
row="$("$stepsim" run scenarios/rl-stages.yaml --set rl.verification.workers=2 | awk '$1 == "12/6/8" {print $4, $7, $9}')"
[[ "$row" == "1/2/1 8.000 learning" ]] || { echo "FAIL: --set rl.verification.workers: base row '$row'"; exit 1; }
set +e
msg="$("$stepsim" run scenarios/rl-stages.yaml --set rl.learning.rate=fast 2>&1)"
code=$?
set -e
[[ $code -eq 2 ]] || { echo "FAIL: bad rate exit $code"; exit 1; }
[[ "$msg" == *"rl.learning.rate"* ]] || { echo "FAIL: message '$msg'"; exit 1; }
# --html and --gantt (drawn by the scenario-kind registry from the loops' timelines): one verify bar
# per generated trajectory, "(kept)" on as many as the JSON's verified_kept, per loop variant.
"$stepsim" run scenarios/rl-stages.yaml --html "$tmp/rl.html" > /dev/null
"$stepsim" run scenarios/rl-stages.yaml --json > "$tmp/rl.json"
read -r generated kept <<<"$(python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["loops"]; print(sum(x["trajectories"]["generated"] for x in l), sum(x["trajectories"]["verified_kept"] for x in l))' "$tmp/rl.json")"
[[ $(grep -o '<title>verify trajectory [0-9]* ([a-z]*)' "$tmp/rl.html" | wc -l) -eq $generated ]] || { echo "FAIL: rl --html verify bars != $generated"; exit 1; }
[[ $(grep -o '<title>verify trajectory [0-9]* (kept)' "$tmp/rl.html" | wc -l) -eq $kept ]] || { echo "FAIL: rl --html kept bars != $kept"; exit 1; }
"$stepsim" run scenarios/rl-stages.yaml --gantt --width 120 > "$tmp/rl-gantt.txt"
grep -q "^2x generation: loop: 16 batches in 66.3 s" "$tmp/rl-gantt.txt" || { echo "FAIL: rl --gantt title"; cat "$tmp/rl-gantt.txt"; exit 1; }
[[ $(grep -c "^generator 1 " "$tmp/rl-gantt.txt") -eq 1 ]] || { echo "FAIL: rl --gantt: generator 1 only in the 2x generation loop"; exit 1; }
"$stepsim" run scenarios/rl-shared-card.yaml --gantt > "$tmp/card.txt"
grep -q "^shared card, order " "$tmp/card.txt" || { echo "FAIL: rl --gantt shared card"; exit 1; }
"$stepsim" run scenarios/rl-weight-distribution.yaml --html "$tmp/w.html" > /dev/null
grep -q "sender 0 link" "$tmp/w.html" || { echo "FAIL: rl --html weight distribution"; exit 1; }
echo ok
