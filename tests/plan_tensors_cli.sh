#!/usr/bin/env bash
# `stepsim plan` on the tensor-sizes scenario: resharding TP4 -> TP8 and the KV cache, text and JSON.
set -euo pipefail
stepsim="$1"
out="$("$stepsim" plan scenarios/tensor-sizes.yaml)"
[[ "$out" == *"in a checkpoint 672 MiB"* ]] || { echo "FAIL: 672 MiB in '$out'"; exit 1; }
[[ "$out" == *"1,207,959,552  1.125"* ]] || { echo "FAIL: 1.125 GiB in '$out'"; exit 1; }
# Outputs are captured before matching: `grep -q` may exit early and a still-writing stepsim would
# then die of SIGPIPE, failing the pipeline under pipefail.
json="$("$stepsim" plan scenarios/tensor-sizes.yaml --json)"
[[ "$json" == *'"checkpoint_bytes": 704643072'* ]] || { echo "FAIL: json"; exit 1; }
design="$("$stepsim" plan scenarios/design-case.yaml)"
[[ "$design" == *'114.7 GB / 63.7 MB/s'* ]] || { echo "FAIL: write rate"; exit 1; }
set +e
msg="$("$stepsim" plan scenarios/tensor-sizes.yaml --set plan.reshard.to=20000 2>&1)"
code=$?
set -e
[[ $code -eq 2 && "$msg" == *"plan.reshard.to"* ]] || { echo "FAIL: bad to: $code '$msg'"; exit 1; }
echo ok
