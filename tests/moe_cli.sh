#!/usr/bin/env bash
# The moe scenarios through the CLI: their figures, --set, --html and --gantt pictures, bad input.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"

# run / --json / --trace / --html / validate for every moe file: tests/kind_contract.sh.
cmp_json="$("$stepsim" compare scenarios/moe-routing.yaml --json)"
[[ "$cmp_json" == *'"variant": "balanced"'* ]] || { echo "FAIL: compare --json has no balanced variant"; exit 1; }

# Figure 10-27: 65,536 dispatches, 512 rows per expert; the busiest card has 1.5x the mean;
# balanced routing shortens expert compute by a third.
out="$("$stepsim" run scenarios/moe-routing.yaml)"
[[ "$out" == *"65,536 dispatches, 512 rows per expert"* ]] || { echo "FAIL: dispatches in '$out'"; exit 1; }
[[ "$out" == *"busiest card 0: 6,144 rows, 1.50 x the mean card"* ]] || { echo "FAIL: busiest card in '$out'"; exit 1; }
cmp128="$("$stepsim" compare scenarios/moe-routing.yaml)"
grep -E '^balanced .* -33\.3% ' <<< "$cmp128" > /dev/null || { echo "FAIL: balanced is not -33.3%"; exit 1; }
cmp2="$("$stepsim" compare scenarios/moe-two-experts.yaml)"
grep -E '^balanced .* -33\.3% ' <<< "$cmp2" > /dev/null || { echo "FAIL: 64/64 is not -33.3%"; exit 1; }

# --set reaches the moe section; bad values name the file or --set and the key, exit 2.
[[ "$("$stepsim" run scenarios/moe-routing.yaml --set moe.routing=balanced)" == *'1.00 x the mean card'* ]] ||
  { echo "FAIL: --set moe.routing"; exit 1; }
for bad in moe.cards=12 moe.top_k=200 moe.placement=striped; do
  set +e
  msg="$("$stepsim" run scenarios/moe-routing.yaml --set "$bad" 2>&1)"
  code=$?
  set -e
  [[ $code -eq 2 ]] || { echo "FAIL: $bad exit $code ($msg)"; exit 1; }
  [[ "$msg" == *"${bad%%=*}"* ]] || { echo "FAIL: $bad message '$msg'"; exit 1; }
done
# --html and --gantt (the scenario-kind registry draws moe layers from their timelines): one bar
# per expert op and two per card link (dispatch, combine): 16 cards x (8 experts + 2) = 160.
"$stepsim" run scenarios/moe-routing.yaml --html "$tmp/x.html" > "$tmp/table.txt"
bars="$(grep -o '<rect class="bar"' "$tmp/x.html" | wc -l)"
[[ $bars -eq 160 ]] || { echo "FAIL: moe --html draws $bars bars, expected 160"; exit 1; }
layer="$("$stepsim" run scenarios/moe-routing.yaml --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["layer_ms"])')"
"$stepsim" run scenarios/moe-routing.yaml --gantt --width 100 > "$tmp/gantt.txt"
rows="$(grep -c '^card [0-9]* ' "$tmp/gantt.txt")"
[[ $rows -eq 16 ]] || { echo "FAIL: moe --gantt has $rows card rows, expected 16"; exit 1; }
grep -q "base: layer $(printf '%.1f' "$layer") ms, busiest card 0 (1.50x the mean rows)" "$tmp/gantt.txt" ||
  { echo "FAIL: moe --gantt title (layer $layer ms)"; cat "$tmp/gantt.txt"; exit 1; }
"$stepsim" compare scenarios/moe-routing.yaml --gantt --width 100 > "$tmp/cgantt.txt"
[[ $(grep -c "^[a-z0-9.-]*: layer " "$tmp/cgantt.txt") -eq 5 ]] || { echo "FAIL: moe compare --gantt: not 5 runs"; exit 1; }
echo ok
