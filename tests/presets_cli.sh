#!/usr/bin/env bash
# `stepsim presets`: the accelerator presets a job_step names, as a table and as JSON (docs/job.md
# "Schema"); every preset it lists runs a job step under its name.
# Usage: bash tests/presets_cli.sh /path/to/stepsim   (from the source directory)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"

"$stepsim" presets >"$tmp/presets.txt"
fig "h100-sxm hopper 989.4 1,978.9 none 3,350 80 74.5 132 8 450 8 400" "$tmp/presets.txt"
fig "a100-sxm-80gb ampere 312 none none 2,039 80 76 108 8 300 8 200" "$tmp/presets.txt"
fig "b200 blackwell 2,250 4,500 9,000 8,000 180 167 148 8 900 8 400" "$tmp/presets.txt"
fig "gb200 blackwell 2,500 5,000 10,000 8,000 186 172 148 72 900 72 400" "$tmp/presets.txt"
fig "gb300 blackwell 2,500 5,000 15,000 8,000 288 268 160 72 900 72 800" "$tmp/presets.txt"
fig "rtx4090 ada 165.2 330.3 none 1,008 24 22 128 8 none (PCIe) 8 200" "$tmp/presets.txt"
has "efficiencies, every preset's (uncalibrated): gemm 0.70, attention 0.55, memory 0.80, fabric 0.80, network 0.80, contention 0.20" \
  "$tmp/presets.txt"
has "attention: flash runs each architecture's own fused kernel at its efficiency (cuDNN's on Hopper and Blackwell, FlashAttention-2 on Ampere and Ada)" \
  "$tmp/presets.txt"
"$stepsim" presets --json >"$tmp/presets.json"
python3 - "$tmp/presets.json" >"$tmp/names.txt" <<'PY' || fail "presets JSON"
import json, sys
d = json.load(open(sys.argv[1]))
names = [p["name"] for p in d["presets"]]
assert names == ["a100-sxm-80gb", "h100-sxm", "h800", "h200", "b200", "gb200", "gb300", "rtx4090"], names
g = d["presets"][5]
assert g["architecture"] == "blackwell" and g["peak_fp8_flops"] == 5e15 and g["node"]["gpus"] == 72, g
assert g["peak_fp4_flops"] == 1e16 and d["presets"][1]["peak_fp4_flops"] == 0, g
assert g["network"]["nic_bandwidth_bytes_per_s"] == 50_000_000_000 and g["usable_memory_bytes"] == 172 * 2**30, g
assert d["presets"][0]["peak_fp8_flops"] == 0, d["presets"][0]
# The attention kernels each runs, at their long-sequence speed against its own, forward and
# backward (docs/attention.md "Attention kernels").
k = {p["name"]: p["attention_kernels"] for p in d["presets"]}
same = {"forward": 1.0, "backward": 1.0}
assert k["h100-sxm"] == {"flash": same, "flash2": {"forward": 0.63, "backward": 0.61},
                         "flash3": {"forward": 1.17, "backward": 1.09}}, k["h100-sxm"]
assert k["a100-sxm-80gb"] == {"flash": same, "flash2": same, "flash3": None}, k["a100-sxm-80gb"]
assert k["b200"] == {"flash": same, "flash2": None, "flash3": None}, k["b200"]
print("\n".join(names))
PY
# Each listed preset is one a job step takes, and its step names it.
while read -r name; do
  "$stepsim" run scenarios/job-fsdp-8.yaml --set "job_step.hardware={preset: $name, gpus: 8}" \
    --set job_step.allow_oom=true >"$tmp/run-$name.txt"
  has "on 8 x $name:" "$tmp/run-$name.txt"
done <"$tmp/names.txt"
# Its options are its own: anything else is a usage error.
run "$stepsim" presets --csv
[[ $code == 2 && "$err" == *"--csv"* ]] || fail "presets --csv: exit $code: $err"
echo "presets: all checks passed"
