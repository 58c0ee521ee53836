#!/usr/bin/env bash
# The bounds on a check-against or calibrate run's whole work (docs/calibration.md, "Limits of check-against and calibrate"): at most
# 10,000 measured rows over all the files given, at most 1,000 rows to fit, and the simulated ops
# of every row's simulations (its prediction, and its fit's) within --max-ops; each refused at the
# first row past it, with its file and line. Cheap rows (Korthikanti's one-layer 22B row: 296 ops a
# simulation), so that the runs at the limits take a second or so. And the progress line: on a
# terminal, for a run that may take long, never with --json.
# Usage: bash tests/check_against_limits.sh /path/to/stepsim   (from the source directory)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"

header="src,tbl,model,L,h,heads,kv,ffn,vocab,seq,hw,ngpu,tp,pp,dp,vpp,sched,mbs,gbs,recomp,sp,zero,overlap_dp,overlap_pp,attention,grad_bytes,metric,value,fit,notes"
row() {  # FIT
  echo "KORTH22,Table 4,22B (1 layer) baseline,48,6144,64,64,24576,51200,2048,a100-sxm-80gb,8,8,1,1,1,1f1b,4,4,none,0,0,0,0,unfused,4,layer_fwd_ms,7.7,$1,no recompute"
}
table() {  # FILE ROWS FIT
  { echo "$header"; for ((i = 0; i < $2; i++)); do row "$3"; done; } >"$1"
}
given="--efficiency 0.7,0.5,0.8,0.8,0.8,0.2"

# 10,000 rows over all the files: two tables of 5,000 are checked; one more row is refused at
# its line (the header is line 1: the 5,001st row is line 5,002).
table "$tmp/a.csv" 5000 0
table "$tmp/b.csv" 5000 0
table "$tmp/c.csv" 5001 0
run "$stepsim" check-against "$tmp/a.csv" "$tmp/b.csv" $given
[[ $code == 0 ]] || fail "10,000 rows over two files: exit $code: $err"
run "$stepsim" check-against "$tmp/a.csv" "$tmp/c.csv" $given
refused "$tmp/c.csv:5002: more than 10,000 measured rows in the files given: each is simulated (published tables have tens); check the rest in another run"

# The same 10,000 rows as 10,000 one-row files: each file's "given twice" check is one stat, not
# one per file read before it (every file against every other took over a minute).
mkdir "$tmp/many"
for ((i = 0; i < 10000; i++)); do printf '%s\n%s\n' "$header" "$(row 0)" >"$tmp/many/m$i.csv"; done
run timeout 60 "$stepsim" check-against "$tmp"/many/m*.csv $given
[[ $code == 0 ]] || fail "10,000 one-row files: exit $code: $err"
ln -s "$tmp/many/m7.csv" "$tmp/many-link.csv"
run "$stepsim" check-against "$tmp"/many/m*.csv "$tmp/many-link.csv" $given
refused "$tmp/many-link.csv: given twice (as $tmp/many/m7.csv): give each table once"
rm -r "$tmp/many"

# 1,000 rows to fit: check-against fits the rows marked fit=1, calibrate every row (or, with
# --fit-rows, those marked).
table "$tmp/fit1000.csv" 1000 1
table "$tmp/fit1001.csv" 1001 1
run "$stepsim" check-against "$tmp/fit1000.csv"
[[ $code == 0 ]] || fail "1,000 rows to fit: exit $code: $err"
run "$stepsim" check-against "$tmp/fit1001.csv"
refused "$tmp/fit1001.csv:1002: fit: more than 1,000 rows to fit: each is simulated up to 97 times (the validation tables fit 1 to 52 rows); mark fewer rows fit=1"
run "$stepsim" check-against "$tmp/fit1001.csv" $given  # given efficiencies: nothing to fit
[[ $code == 0 ]] || fail "1,001 rows at given efficiencies: exit $code: $err"
run "$stepsim" calibrate "$tmp/fit1000.csv" --fit gemm -o "$tmp/fit.yaml"
[[ $code == 0 && -s "$tmp/fit.yaml" ]] || fail "calibrate on 1,000 rows: exit $code: $err"
run "$stepsim" calibrate "$tmp/c.csv" --fit gemm -o "$tmp/none.yaml"
refused "$tmp/c.csv:1002: fit: more than 1,000 rows to fit: each is simulated up to 37 times (the validation tables fit 1 to 52 rows); fit a sample: mark its rows fit=1 and give --fit-rows"
[[ ! -e "$tmp/none.yaml" ]] || fail "a refused calibrate wrote its file"

# The simulated ops over the run: 296 a simulation of the row, 10 rows predicted at given
# efficiencies are 2,960; a row to fit is its prediction and up to 97 fit simulations (the six
# dense efficiencies): 98 x 296 = 29,008.
table "$tmp/ten.csv" 10 0
run "$stepsim" check-against "$tmp/ten.csv" $given --max-ops 2960
[[ $code == 0 ]] || fail "2,960 ops within --max-ops 2960: exit $code: $err"
run "$stepsim" check-against "$tmp/ten.csv" $given --max-ops 2959
refused "$tmp/ten.csv:11: too large: the rows up to this one need about 3e+03 simulated ops (10 simulations: each row once), over --max-ops 2959 (10^9 by default: a minute or three on a core): give fewer or smaller rows, or raise --max-ops"
table "$tmp/one.csv" 1 1
run "$stepsim" check-against "$tmp/one.csv" --max-ops 29008
[[ $code == 0 ]] || fail "a fit row within --max-ops 29008: exit $code: $err"
run "$stepsim" check-against "$tmp/one.csv" --max-ops 29007
refused "$tmp/one.csv:2: too large: the rows up to this one need about 2.9e+04 simulated ops (98 simulations: each row once, the 1 to fit up to 97 times more), over --max-ops 29007"
run "$stepsim" calibrate "$tmp/one.csv" -o "$tmp/one.yaml" --max-ops 29007
refused "$tmp/one.csv:2: too large: the rows up to this one need about 2.9e+04 simulated ops (98 simulations"
[[ ! -e "$tmp/one.yaml" ]] || fail "a refused calibrate wrote its file"

# Progress on a terminal (`script` gives one), on stderr: MegaScale's table may take 8 predictions
# and 2 fit rows x 97 simulations (202; about 2e7 ops); the fit stops early and counts whole. Not
# for a short run (the MoE-layer table: 224 ops), nor with --json; never on stdout.
if command -v script >/dev/null; then
  script -qec "$stepsim check-against validation/megascale_megatron.csv >$tmp/megascale.out" /dev/null >"$tmp/tty.txt" </dev/null
  grep -q "check-against: 202/202 simulations (100%)" "$tmp/tty.txt" || fail "no progress: $(cat -v "$tmp/tty.txt")"
  if grep -q "simulations (" "$tmp/megascale.out"; then fail "progress on stdout"; fi
  script -qec "$stepsim check-against validation/megascale_megatron.csv --json >/dev/null" /dev/null >"$tmp/tty.txt" </dev/null
  if grep -q "simulations (" "$tmp/tty.txt"; then fail "progress with --json"; fi
  script -qec "$stepsim check-against validation/megatron_moe_layer_h100.csv >/dev/null" /dev/null >"$tmp/tty.txt" </dev/null
  if grep -q "simulations (" "$tmp/tty.txt"; then fail "progress for a short run"; fi
  script -qec "$stepsim calibrate validation/megascale_megatron.csv -o $tmp/megascale.yaml >/dev/null" /dev/null >"$tmp/tty.txt" </dev/null
  grep -q "calibrate: 784/784 simulations (100%)" "$tmp/tty.txt" || fail "no calibrate progress: $(cat -v "$tmp/tty.txt")"
fi
run "$stepsim" check-against validation/megascale_megatron.csv
if grep -q "simulations (" "$tmp/err"; then fail "progress without a terminal"; fi
echo "check_against_limits: ok"
