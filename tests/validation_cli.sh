#!/usr/bin/env bash
# check-against on the validation tables (docs/validation.md "Validation"): one calibration per
# accelerator fitted on the rows marked fit=1, the held-out rows within the issue's bounds or
# held at their documented misses.
# Usage: bash tests/validation_cli.sh /path/to/stepsim   (from the source directory)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"

# 1. Validation: one A100 calibration fitted on the rows marked fit=1, the others held out.
"$stepsim" check-against validation/megatron_sc21.csv validation/megatron_korthikanti2022.csv \
  validation/megascale_megatron.csv validation/llama3_405b_meta2024.csv validation/qwen3_235b_moe_modelzoo.csv \
  validation/megatron_moe_layer_h100.csv validation/nemo_llama3_h100_fp8.csv validation/fsdp_across_nodes.csv \
  --json >"$tmp/check.json"
python3 - "$tmp/check.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
files = {f["file"].split("/")[-1]: f for f in d["files"]}
def rows(name): return {r["line"]: r for r in files[name]["rows"]}
# MegaScale: held out within 5 % mean, 10 % max; the decline with scale ranked right.
m = files["megascale_megatron.csv"]
assert m["held_out"]["mean_abs_error"] <= 0.05 and m["held_out"]["max_abs_error"] <= 0.10, m["held_out"]
assert m["fit"]["max_abs_error"] <= 0.10, m["fit"]
assert m["ranking"]["kept"] == m["ranking"]["pairs"], m["ranking"]
# Korthikanti: held out within 5 % mean; every row within 10 % (Table 4's layer times too: rows
# 16-25); ranking kept.
k = files["megatron_korthikanti2022.csv"]
assert k["held_out"]["mean_abs_error"] <= 0.05, k["held_out"]
for line, r in rows("megatron_korthikanti2022.csv").items():
    assert abs(r["error"]) <= 0.10, (line, r)
assert k["ranking"]["kept"] == k["ranking"]["pairs"], k["ranking"]
# SC21 (Megatron-LM of early 2021, before its asynchronous TP all-reduce: overlap_tp_wgrad 0):
# held out within 5 % mean (4.5 %); the known misses of docs/validation.md, each held close so that it
# cannot grow unseen: the 530B ZeRO-3 row on 640 GPUs (line 24, +10.6 %, to 11 %), every other row
# within 10 % (the ZeRO-3 rows at DeepSpeed's 21.3 GB/s gathers, measured apart, and its regather
# of all but a layer's last module; 76.1B +8.7 %); at most the two known pairs flip (76.1B vs
# 145.6B, 530B ZeRO-3 on 640 vs 175B TP x PP on 768); every ZeRO-3 row below the TP x PP row of
# its model and size, and falling with scale.
s = rows("megatron_sc21.csv")
f = files["megatron_sc21.csv"]
assert f["held_out"]["mean_abs_error"] <= 0.05, f["held_out"]
for line, r in s.items():
    assert abs(r["error"]) <= (0.11 if line == 24 else 0.10), (line, r)
assert f["fit"]["max_abs_error"] <= 0.10, f["fit"]
assert f["ranking"]["kept"] >= f["ranking"]["pairs"] - 2, f["ranking"]
for z, p in [(21, 27), (22, 28), (23, 29), (24, 30), (25, 31), (26, 32)]:
    assert s[z]["predicted"] < s[p]["predicted"], (z, p)
assert s[23]["predicted"] < s[22]["predicted"] < s[21]["predicted"]
assert s[26]["predicted"] < s[25]["predicted"] < s[24]["predicted"]
# Every ZeRO-3 row ran, so each fits: gathered by module as DeepSpeed does, the 530B on 640 GPUs
# holds 73.3 GiB of the 76 (by layer, two whole layers and a layer's gradients: 92.0 GiB).
assert [round(s[n]["memory_bytes"] / 2**30, 1) for n in range(21, 27)] == [42.1, 22.8, 13.1, 73.3, 42.2, 25.8], s
assert all(s[n]["memory_bytes"] <= s[n]["usable_bytes"] for n in range(21, 27)), s
# Llama 3 405B on H100, without recompute as the paper says (sec. 3.3.2): no row fitted; predicted
# at the GEMM efficiency the MoE-layer benchmark's rows fit (below), within the issue's bounds (mean
# 5 %, max 10 %) and ranked right; each figure held so that none can move unseen.
l = files["llama3_405b_meta2024.csv"]
lr = rows("llama3_405b_meta2024.csv")
assert not any(r["fit"] for r in lr.values()), lr
assert [round(lr[n]["predicted"], 1) for n in (16, 17, 18)] == [450.2, 416.4, 389.5], lr
assert l["held_out"]["mean_abs_error"] <= 0.05 and l["held_out"]["max_abs_error"] <= 0.10, l["held_out"]
assert l["ranking"]["kept"] == l["ranking"]["pairs"] == 3, l["ranking"]
# The rows need more memory than an H100 has in stepsim's model (the paper's run freed what the
# model keeps; the gradients accumulated whole, zero2_accumulate: whole, take 11.9 and 5.9 GiB of
# it). Each row says so in the JSON.
assert [round(lr[n]["memory_bytes"] / 2**30, 1) for n in (16, 17)] == [88.4, 81.6], lr
assert all(lr[n]["usable_bytes"] == lr[16]["usable_bytes"] for n in (17, 18)), lr
assert round(lr[16]["usable_bytes"] / 2**30, 1) == 74.5, lr
# Qwen3-235B-A22B MoE on H100 (the H100 calibration: the MoE-layer rows' GEMM efficiency, the
# preset's five other dense ones, and the host time per MoE pass and local expert fitted on the 16K
# row, 53.1 us: 0.85 ms a pass at its 16 experts a GPU):
# the held-out rows within the issue's bounds (mean 5 %, max 10 %); ranked right.
q = files["qwen3_235b_moe_modelzoo.csv"]
qr = rows("qwen3_235b_moe_modelzoo.csv")
assert abs(d["calibration"]["h100-sxm"]["moe_host_per_expert"] - 53.06e-6) < 0.05e-6, d["calibration"]
assert [n for n in qr if qr[n]["fit"]] == [15], qr
assert [round(qr[n]["predicted"], 1) for n in (15, 16, 17, 18)] == [295.0, 332.8, 366.6, 394.6], qr
assert all(abs(qr[n]["error"]) <= 0.10 for n in qr), qr
assert q["held_out"]["mean_abs_error"] <= 0.05, q["held_out"]
assert q["ranking"]["kept"] == q["ranking"]["pairs"] == 6, q["ranking"]
# Megatron-LM's MoE layer benchmark on H100 (the MoE block alone): no dense H100 row being fitted,
# its 4 BF16 fit rows fit the GEMM efficiency itself (0.594: 587 TFLOP/s; the experts' share stays
# 1), then the blockwise FP8 GEMMs' share on one FP8 row (0.593: FP8 grouped GEMMs at 1.19x BF16). The
# known misses of docs/validation.md: held-out mean 5.4 %, the Mixtral-like DeepEP forward (line 18)
# -11.4 %, held to 12 %, the other held-out BF16 rows within 10 %, the FP8 ones within 7.5 %;
# each figure held so that none can move unseen.
ml = rows("megatron_moe_layer_h100.csv")
h100 = d["calibration"]["h100-sxm"]
assert round(h100["gemm"], 3) == 0.594 and h100["experts"] == 1.0, h100
assert round(h100["fp8_blockwise"], 3) == 0.593, h100
assert [round(ml[n]["predicted"], 3) for n in range(16, 32)] == \
    [4.057, 7.559, 4.082, 7.584, 7.409, 11.478, 5.698, 9.766,
     3.744, 6.719, 3.769, 6.744, 7.310, 10.782, 5.599, 9.071], ml
assert [n for n in ml if ml[n]["fit"]] == [16, 19, 20, 23, 25], ml
assert abs(ml[18]["error"]) <= 0.12 and all(abs(ml[n]["error"]) <= 0.10 for n in (17, 21, 22)), ml
assert all(abs(ml[n]["error"]) <= 0.075 for n in (24, 26, 27, 28, 29, 30, 31)), ml
# NeMo's dense Llama 3 runs on H100 in FP8 with tensorwise scaling: their GEMM share fitted on the
# 70B row of 25.11 (0.885: FP8 GEMMs at 1.77x BF16, where blockwise grouped ones run at 1.19x);
# the other seven rows held out (two more NeMo containers' and Megatron-LM's README's), 8 to 1,024
# GPUs, within 5 % mean and 10 % max, ranking kept.
assert round(h100["fp8"], 3) == 0.885, h100
nm = rows("nemo_llama3_h100_fp8.csv")
assert [n for n in nm if nm[n]["fit"]] == [26], nm
assert [round(nm[n]["predicted"]) for n in range(25, 33)] == [14229, 1602, 315, 1624, 321, 14349, 1602, 312], nm
# Every run fits, with the FP8 GEMMs' weight copies (docs/precision.md): the 8B on 8 GPUs under
# Megatron-FSDP gathers in FP8 (fp8_param_gather), its shards FP8 and beside a gathered layer only
# its transposes (52.2 -> 50.8 GiB), Megatron-LM's (TP 1, CP 2, zero 1) every layer's (58.9 -> 71.9),
# its 70B and 405B layouts their ranks' (62.4 -> 66.4, 55.9 -> 67.8); NeMo's 70B and 405B keep their
# weights in FP8 (fp8_param_gather), the copies in place of the BF16 weights (62.4, 55.9).
assert [round(nm[n]["memory_bytes"] / 2**30, 1) for n in range(25, 33)] == [50.8, 62.4, 55.9, 62.4, 55.9, 71.9, 66.4, 67.8], nm
assert all(nm[n]["memory_bytes"] <= nm[n]["usable_bytes"] for n in range(25, 33)), nm
n = files["nemo_llama3_h100_fp8.csv"]
assert n["held_out"]["mean_abs_error"] <= 0.05 and n["held_out"]["max_abs_error"] <= 0.10, n["held_out"]
assert n["ranking"]["kept"] == n["ranking"]["pairs"] == 7, n["ranking"]
# FSDP over 64 GPUs of 8 nodes (torchtitan on A100, NeMo AutoModel on H100): no row fitted, each at
# its accelerator's calibration; NCCL's rings striped over each node's NICs put them within 4.1 %
# (at one NIC's share per GPU they read -27 % to -66 %). Lines 23-25, torchtitan's Llama 2 rows,
# were added after the rule, and checked, not used, to make it.
fs = rows("fsdp_across_nodes.csv")
f = files["fsdp_across_nodes.csv"]
assert not any(r["fit"] for r in fs.values()), fs
assert [round(fs[n]["predicted"], 1) for n in range(20, 26)] == [2820.6, 317.5, 837.3, 2208.7, 1930.7, 344.4], fs
assert [round(100 * fs[n]["error"], 1) for n in range(20, 26)] == [-2.9, -4.1, -3.4, 2.2, 0.9, -2.4], fs
# torchtitan's "selective op" rows (recompute: op), added after the two rules above and checked
# without a change: Llama 3 8B -0.4 %, Llama 2 13B +5.2 %, Llama 2 70B at local batch 1 +2.2 %.
assert [round(100 * fs[n]["error"], 1) for n in range(26, 29)] == [-0.4, 5.2, 2.2], fs
assert f["ranking"]["kept"] == f["ranking"]["pairs"] == 10, f["ranking"]
assert f["held_out"]["mean_abs_error"] <= 0.05 and f["held_out"]["max_abs_error"] <= 0.10, f["held_out"]
print("check-against bounds ok")
PY

# MosaicML's MPT rows on FSDP (docs/validation.md "MPT on FSDP"), every row held out at the calibrations
# the other tables fit: the misses held as they are, so that none moves unseen. A100: every run fits
# in stepsim's memory model, as every one ran (PyTorch FSDP's FP32 weights without a BF16 copy, MPT
# without dropout); 5 of the 9 within 10 % of the memory predicted 10-34 % fast, the other 35 within
# 13 %; H100 (2023 software): worst at long sequences.
"$stepsim" check-against validation/megatron_sc21.csv validation/megatron_korthikanti2022.csv \
  validation/megascale_megatron.csv validation/megatron_moe_layer_h100.csv validation/qwen3_235b_moe_modelzoo.csv \
  validation/nemo_llama3_h100_fp8.csv validation/mpt_fsdp_a100.csv validation/mpt_fsdp_h100.csv --json >"$tmp/mpt.json"
python3 - "$tmp/mpt.json" <<'PY' || fail "MPT tables"
import json, sys
d = json.load(open(sys.argv[1]))
files = {f["file"].split("/")[-1]: f for f in d["files"]}
a, h = files["mpt_fsdp_a100.csv"], files["mpt_fsdp_h100.csv"]
assert not any(r["fit"] for r in a["rows"] + h["rows"])
assert len(a["rows"]) == 44 and len(h["rows"]) == 52
assert (round(100 * a["held_out"]["mean_abs_error"], 1), round(100 * a["held_out"]["max_abs_error"], 1)) == (7.7, 34.1), a
assert (a["ranking"]["kept"], a["ranking"]["pairs"]) == (926, 933), a["ranking"]
assert all(r["memory_bytes"] <= r["usable_bytes"] for r in a["rows"]), a
edge = [r for r in a["rows"] if r["memory_bytes"] >= 0.9 * r["usable_bytes"]]
rest = [r for r in a["rows"] if r["memory_bytes"] < 0.9 * r["usable_bytes"]]
assert len(edge) == 9 and sorted(r["error"] > 0.10 for r in edge) == [False] * 4 + [True] * 5, edge
assert max(abs(r["error"]) for r in rest) < 0.13 and round(100 * sum(abs(r["error"]) for r in rest) / 35, 1) == 5.7
assert (round(100 * h["held_out"]["mean_abs_error"], 1), round(100 * h["held_out"]["max_abs_error"], 1)) == (37.4, 144.2), h
assert sum(r["memory_bytes"] > r["usable_bytes"] for r in h["rows"]) == 4, h
r = {x["line"]: x for x in a["rows"]}
assert [round(r[n]["predicted"], 1) for n in (17, 21, 60)] == [400.5, 829.1, 39492.2], r
print("MPT tables ok")
PY

# B200 (Megatron-Bridge's DGX-B200 rows, docs/precision.md "FP8 on Blackwell"): the tensorwise and the
# MXFP8 shares fitted on one 8B row each (2 of 8), the 405B rows (TP 4, CP 2, PP 8 x VP 8, DP 2)
# and the other container's held out within 5 % mean and 10 % max, ranking kept; every run fits
# (the 405B MXFP8 run, its row-wise and column-wise copies the weights, at 139.3 of 167 GiB).
"$stepsim" check-against validation/nemo_llama3_b200_fp8.csv --json >"$tmp/b200.json"
"$stepsim" check-against validation/nemo_llama3_b200_fp8.csv >"$tmp/b200.txt"
python3 - "$tmp/b200.json" <<'PY' || fail "B200 table"
import json, sys
d = json.load(open(sys.argv[1]))
(f,) = d["files"]
r = {x["line"]: x for x in f["rows"]}
assert [n for n in r if r[n]["fit"]] == [26, 27], r
assert [round(r[n]["predicted"], 1) for n in range(26, 34)] == [30624.0, 29521.0, 666.7, 628.2] * 2, r
assert [round(100 * r[n]["error"], 1) for n in range(28, 34)] == [0.9, 0.7, 2.1, 0.5, 0.4, 1.0], r
assert [round(r[n]["memory_bytes"] / 2**30, 1) for n in range(26, 30)] == [105.8, 112.7, 126.7, 139.3], r
assert all(x["memory_bytes"] <= x["usable_bytes"] for x in r.values()), r
assert f["held_out"]["mean_abs_error"] <= 0.05 and f["held_out"]["max_abs_error"] <= 0.10, f["held_out"]
assert f["ranking"]["kept"] == f["ranking"]["pairs"] == 10, f["ranking"]
print("B200 table ok")
PY
has "calibration for b200: gemm 0.700, attention 0.550, memory 0.800, fabric 0.800, network 0.800, contention 0.200, fp8 0.658, fp8_mx 0.626" \
  "$tmp/b200.txt"

# Qwen3 MoE on B200 in MXFP8 beside the dense B200 rows (docs/precision.md "FP8 on Blackwell"): the host
# time each MoE pass exposes fitted on the 30B row of 25.11 (3.41 ms); the 235B on 64 GPUs within
# 4 % (in 163.0 of 167 GiB, its weights in FP8, as it ran), 26.02's 235B on 256 GPUs
# 18.1 % slow: held as they are. The dense rows read as alone (the MoE stage comes after theirs).
"$stepsim" check-against validation/nemo_llama3_b200_fp8.csv validation/nemo_qwen3_moe_b200_fp8.csv --json \
  >"$tmp/b200-moe.json"
python3 - "$tmp/b200-moe.json" "$tmp/b200.json" <<'PY' || fail "B200 MoE table"
import json, sys
d, alone = (json.load(open(f)) for f in sys.argv[1:])
files = {f["file"].split("/")[-1]: f for f in d["files"]}
dense, moe = files["nemo_llama3_b200_fp8.csv"], files["nemo_qwen3_moe_b200_fp8.csv"]
assert [x["predicted"] for x in dense["rows"]] == [x["predicted"] for x in alone["files"][0]["rows"]]
r = {x["line"]: x for x in moe["rows"]}
assert [n for n in r if r[n]["fit"]] == [20], r
assert [round(100 * r[n]["error"], 1) for n in (21, 22, 23)] == [-4.0, -3.3, -18.1], r
assert [round(r[n]["memory_bytes"] / 2**30, 1) for n in (20, 22, 23)] == [86.8, 163.0, 100.4], r
assert (round(100 * moe["held_out"]["mean_abs_error"], 1), round(100 * moe["held_out"]["max_abs_error"], 1)) == (8.5, 18.1)
assert moe["ranking"]["kept"] == moe["ranking"]["pairs"] == 2, moe["ranking"]
print("B200 MoE table ok")
PY
"$stepsim" check-against validation/nemo_llama3_b200_fp8.csv validation/nemo_qwen3_moe_b200_fp8.csv >"$tmp/b200-moe.txt"
has "fp8 0.658, fp8_mx 0.626, moe_host_per_expert 213.1 us" "$tmp/b200-moe.txt"
# ... and without the host time the 30B reads 289 % fast.
"$stepsim" check-against validation/nemo_llama3_b200_fp8.csv validation/nemo_qwen3_moe_b200_fp8.csv \
  --efficiency 0.7,0.55,0.8,0.8,0.8,0.2,1,0.658,0,1,0.626 >"$tmp/b200-moe0.txt"
fig "20 25.11 Qwen3-30B-A3B FP8-MX 8 GPUs 9299 tok/s 36186 +289.1% fit" "$tmp/b200-moe0.txt"

# GB200 NVL72 (the same summary's DGX-GB200 rows, docs/precision.md "FP8 on Blackwell"), fitted as on
# B200 on the 25.11 8B rows, NVFP4 on 26.02's 70B row: the misses held as they are (held out mean
# 7.0 %, max 14.2 %: the 405B runs on 256 GPUs read -8 to -13 %, NVFP4's among them at -10.1 %,
# 25.09's 405B MXFP8 run on 128 +14.2 %), every run fits, the ranking kept.
"$stepsim" check-against validation/nemo_llama3_gb200_fp8.csv --json >"$tmp/gb200.json"
python3 - "$tmp/gb200.json" <<'PY' || fail "GB200 table"
import json, sys
d = json.load(open(sys.argv[1]))
(f,) = d["files"]
r = {x["line"]: x for x in f["rows"]}
assert [n for n in r if r[n]["fit"]] == [25, 26, 35], r
assert [round(100 * r[n]["error"], 1) for n in range(27, 35)] == [-10.4, 0.5, -0.5, -3.2, 13.7, -3.0, -13.0, -8.1], r
assert round(100 * r[36]["error"], 1) == -10.1, r[36]  # 405B NVFP4 on 256, as its MXFP8 and FP8 siblings
assert all(x["memory_bytes"] <= x["usable_bytes"] for x in r.values()), r
assert (round(100 * f["held_out"]["mean_abs_error"], 1), round(100 * f["held_out"]["max_abs_error"], 1)) == (6.9, 13.7), f
assert f["ranking"]["kept"] == f["ranking"]["pairs"] == 17, f["ranking"]
print("GB200 table ok")
PY
# ... and at the B200's shares (the same die): the 405B runs on 256 GPUs within 5 %, the 8B rows and
# 25.09's 405B on 128 fast.
"$stepsim" check-against validation/nemo_llama3_gb200_fp8.csv --efficiency 0.7,0.55,0.8,0.8,0.8,0.2,1,0.658,0,1,0.626 \
  >"$tmp/gb200-b200.txt"
fig "27 25.11 Llama-3.1-405B FP8-CS 256 GPUs 813 tok/s 789.5 -2.9% held out" "$tmp/gb200-b200.txt"
fig "33 26.02 Llama-3.1-405B MXFP8 256 GPUs 786 tok/s 759.7 -3.3% held out" "$tmp/gb200-b200.txt"
fig "34 26.02 Llama-3.1-405B FP8 256 GPUs 793 tok/s 789.5 -0.4% held out" "$tmp/gb200-b200.txt"
fig "25 25.11 Llama-3-8B FP8-CS 8 GPUs 31508 tok/s 33592 +6.6% fit" "$tmp/gb200-b200.txt"
fig "26 25.11 Llama-3-8B FP8-MX 8 GPUs 29789 tok/s 32405 +8.8% fit" "$tmp/gb200-b200.txt"
fig "31 25.09 Llama-3.1-405B FP8-MX 128 GPUs 578 tok/s 728.9 +26.1% held out" "$tmp/gb200-b200.txt"
# Megatron-FSDP with layers' activations on the host (docs/memory.md "Activations on the host"): the 70B
# on 64 GB200 (40 layers) and the 405B on 128 (95) at the table's calibration, every row within 10 %;
# with them on the host a 70B GPU needs 173.9 GiB of the 172 (it ran: 1 % over), without 306.6; the
# 405B 105.7 and 256.7.
"$stepsim" check-against validation/nemo_llama3_gb200_fp8.csv validation/nemo_llama3_fsdp_offload_gb200.csv --json \
  >"$tmp/fsdp-offload.json"
python3 - "$tmp/fsdp-offload.json" <<'PY' || fail "FSDP offload table"
import json, sys
d = json.load(open(sys.argv[1]))
f = d["files"][1]
r = {x["line"]: x for x in f["rows"]}
assert not any(x["fit"] for x in r.values()), r
assert [round(100 * r[n]["error"], 1) for n in (17, 18, 19, 20)] == [-1.0, -8.4, -2.2, -0.9], r
assert [round(r[n]["memory_bytes"] / 2**30, 1) for n in (17, 18, 19, 20)] == [173.9] * 3 + [105.7], r
assert f["held_out"]["max_abs_error"] <= 0.10, f["held_out"]
PY
# GB300 NVL72 (docs/precision.md "FP8 on Blackwell"), fitted as on GB200 (the 25.11 8B rows, 26.02's 70B
# NVFP4 row): every held-out row within 10 % (the mean 6.4 %, missed), the ranking kept; the 70B on
# Megatron-FSDP with 20 layers' activations on the host fits (241.9 GiB of 268), without them not.
"$stepsim" check-against validation/nemo_llama3_gb300_fp8.csv --json >"$tmp/gb300.json"
python3 - "$tmp/gb300.json" <<'PY' || fail "GB300 table"
import json, sys
(f,) = json.load(open(sys.argv[1]))["files"]
r = {x["line"]: x for x in f["rows"]}
assert [n for n in r if r[n]["fit"]] == [20, 21, 28], r
assert [round(100 * r[n]["error"], 1) for n in (22, 23, 24, 25, 26, 27, 29)] == [7.0, -7.9, -3.3, -4.5, -8.5, -5.9, 7.5], r
assert (round(100 * f["held_out"]["mean_abs_error"], 1), round(100 * f["held_out"]["max_abs_error"], 1)) == (6.4, 8.5), f
assert f["ranking"]["kept"] == f["ranking"]["pairs"] == 20, f["ranking"]
assert [round(r[n]["memory_bytes"] / 2**30, 1) for n in (22, 24)] == [241.9, 241.9], r
assert all(x["memory_bytes"] <= x["usable_bytes"] for x in r.values()), r
PY
# DeepSeek-V3 in MXFP8 on 256 B200, GB200 and GB300 and Qwen3 MoE on GB200, GB300 and H100
# (docs/precision.md "DeepSeek-V3 on Blackwell", "Qwen3 MoE on GB200, GB300 and H100"), at each
# accelerator's one calibration (every table together): the MoE host time per local expert fitted
# on each Blackwell's Qwen3-30B row. The misses held as they are: B200's DeepSeek-V3 (32 experts a
# GPU) -8.5 to -23.3 %, the H100 rows +14 to +44 % (the 235B EP-bound); the Blackwell 235B within 7 %.
"$stepsim" check-against validation/*.csv --json >"$tmp/moe-all.json" 2>/dev/null
python3 - "$tmp/moe-all.json" <<'PY' || fail "DeepSeek-V3 and Qwen3 MoE tables"
import json, sys
d = json.load(open(sys.argv[1]))
files = {f["file"].split("/")[-1]: f for f in d["files"]}
f = files["nemo_deepseek_v3_blackwell.csv"]
r = {x["line"]: x for x in f["rows"]}
assert not any(x["fit"] for x in r.values()), r
assert [round(r[n]["predicted"]) for n in range(28, 35)] == [1958, 2158, 2158, 3805, 3805, 4795, 4795], r
assert [round(100 * r[n]["error"], 1) for n in range(28, 35)] == [-8.5, -19.7, -23.3, -3.8, -9.3, 4.0, -3.4], r
assert (round(100 * f["held_out"]["mean_abs_error"], 1), round(100 * f["held_out"]["max_abs_error"], 1)) == (10.3, 23.3), f
assert f["ranking"]["kept"] == f["ranking"]["pairs"] == 6, f["ranking"]
assert [round(r[n]["memory_bytes"] / 2**30, 1) for n in (28, 31, 33)] == [123.3, 133.5, 255.9], r
assert all(x["memory_bytes"] <= x["usable_bytes"] for x in r.values()), r
q = files["nemo_qwen3_moe_gb_h100.csv"]
r = {x["line"]: x for x in q["rows"]}
assert [n for n in r if r[n]["fit"]] == [27, 33], r
assert [round(100 * r[n]["error"], 1) for n in range(28, 43) if n != 33] == [
    -8.9, -8.7, 6.7, -4.3, -6.5, 14.6, 10.6, -1.8, 2.4, 0.4, 18.0, 17.7, 14.0, 44.4], r
assert (round(100 * q["held_out"]["mean_abs_error"], 1), round(100 * q["held_out"]["max_abs_error"], 1)) == (11.4, 44.4), q
assert q["ranking"]["kept"] == q["ranking"]["pairs"] == 35, q["ranking"]
assert [round(r[n]["memory_bytes"] / 2**30, 1) for n in (27, 34, 40)] == [160.9, 259.7, 62.6], r
PY
"$stepsim" check-against validation/*.csv 2>/dev/null >"$tmp/moe-all.txt"
has "fp4 0.428, moe_host_per_expert 171.7 us$" "$tmp/moe-all.txt"
has "fp4 0.534, moe_host_per_expert 119.1 us$" "$tmp/moe-all.txt"
# ... and without the host time the B200 rows read 55 % fast.
"$stepsim" check-against validation/nemo_llama3_b200_fp8.csv validation/nemo_deepseek_v3_blackwell.csv \
  --efficiency 0.7,0.55,0.8,0.8,0.8,0.2,1,0.658,0,1,0.626 2>/dev/null >"$tmp/dsv3-host0.txt"
fig "29 26.02 DeepSeek-V3 B200 MXFP8 256 GPUs 2689 tok/s 4166 +54.9% held out" "$tmp/dsv3-host0.txt"
sed 's/,\(40\|95\)$/,0/' validation/nemo_llama3_fsdp_offload_gb200.csv >"$tmp/no-offload.csv"
"$stepsim" check-against validation/nemo_llama3_gb200_fp8.csv "$tmp/no-offload.csv" >"$tmp/no-offload.txt"
fig "18 25.11 Llama-3-70B FP8-CS FSDP offload 40 64 GPUs 4312 tok/s 3955 -8.3% held out needs 306.6 of 172.0 GiB" "$tmp/no-offload.txt"
fig "20 25.09 Llama-3.1-405B FP8-CS FSDP offload 95 128 GPUs 729 tok/s 722.6 -0.9% held out needs 256.7 of 172.0 GiB" "$tmp/no-offload.txt"

# README's fidelity table says what check-against prints for every file at once: each row naming one
# table gives its held-out mean / max and its ranking as the JSON has them.
"$stepsim" check-against validation/*.csv --json >"$tmp/all.json" 2>/dev/null
python3 - "$tmp/all.json" README.md <<'PY' || fail "README fidelity table"
import json, re, sys
d = json.load(open(sys.argv[1]))
files = {f["file"].split("/")[-1]: f for f in d["files"]}
checked = 0
for line in open(sys.argv[2]):
    cells = [c.strip() for c in line.split("|")[1:-1]]
    if len(cells) != 6: continue
    names = re.findall(r"`([a-z0-9_]+\.csv)`", cells[0])
    if len(names) != 1: continue
    f = files[names[0]]
    m = re.match(r"([0-9.]+) % / ([0-9.]+) %", cells[3])
    if m:
        assert (float(m.group(1)), float(m.group(2))) == (round(100 * f["held_out"]["mean_abs_error"], 1),
                                                          round(100 * f["held_out"]["max_abs_error"], 1)), (names, cells[3])
    k = re.match(r"([0-9,]+) of ([0-9,]+)", cells[4])
    assert k and (int(k.group(1).replace(",", "")), int(k.group(2).replace(",", ""))) == (f["ranking"]["kept"], f["ranking"]["pairs"]), (names, cells[4])
    checked += 1
assert checked == 18, checked
print("README fidelity ok")
PY

# Calibrated on every third row of its own table (docs/validation.md "MPT on FSDP"), the H100 section of
# 2023 comes within 4.3 % on the others; the A100 section does not (its rows at the edge of memory).
for gpu in h100 a100; do
  awk -F, -v OFS=, '/^src,/ {for (i = 1; i <= NF; i++) if ($i == "fit") f = i} /^MPT,/ && (n++ % 3 == 0) {$f = 1} 1' \
    "validation/mpt_fsdp_$gpu.csv" >"$tmp/mpt-$gpu-fit.csv"
  "$stepsim" check-against "$tmp/mpt-$gpu-fit.csv" >"$tmp/mpt-$gpu-fit.txt"
done
has "calibration for h100-sxm: gemm 0.767, attention 0.182, memory 0.333, fabric 0.438, network 0.415, contention 0.416" \
  "$tmp/mpt-h100-fit.txt"
fig "held out: 34 rows, mean |error| 4.3%, max 25.6%" "$tmp/mpt-h100-fit.txt"
fig "20 H100 80GB MPT-30B s8192 AC 8 GPUs 1384 tok/s 1738 +25.6% held out" "$tmp/mpt-h100-fit.txt"
has "calibration for a100-sxm-80gb: gemm 1.000, attention 0.350, memory 0.163, fabric 0.141, network 0.053" \
  "$tmp/mpt-a100-fit.txt"
fig "held out: 29 rows, mean |error| 7.7%, max 69.3%" "$tmp/mpt-a100-fit.txt"

# The table names a row that needs more memory than the GPU has (in stepsim's model) in a last
# column, which a table whose rows all fit does not have.
"$stepsim" check-against validation/llama3_405b_meta2024.csv >"$tmp/l3-memory.txt"
fig "16 Table 4 Llama-3-405B 8K 8192 GPUs 430 TFLOP/s 512.7 +19.2% held out needs 88.4 of 74.5 GiB" "$tmp/l3-memory.txt"
fig "17 Table 4 Llama-3-405B 8K 16384 GPUs 400 TFLOP/s 472.1 +18.0% held out" "$tmp/l3-memory.txt"
has "memory per GPU (stepsim)" "$tmp/l3-memory.txt"
# torchtitan's footnote: Llama 2 70B at local batch 2 ran out of memory on 80 GB A100 with
# selective checkpointing. The shipped full-AC row with every second layer recomputed instead:
{ sed -n '/^src,/p' validation/fsdp_across_nodes.csv
  grep '^TT,Llama 2,Llama-2-70B' validation/fsdp_across_nodes.csv | sed 's/,full,,0,3,/,full,40,0,3,/'; } >"$tmp/tt-oom.csv"
"$stepsim" check-against --efficiency 0.734,0.374,1,0.9,0.601,0.418 "$tmp/tt-oom.csv" >"$tmp/tt-oom.txt"
fig "needs 115.4 of 76.0 GiB" "$tmp/tt-oom.txt"
# ... and with its op policy (the row it reported at local batch 1 instead), 101.9 GiB at 2.
{ sed -n '/^src,/p' validation/fsdp_across_nodes.csv
  grep '^TT,Llama 2,Llama-2-70B FSDP2 selective op' validation/fsdp_across_nodes.csv | sed 's/,64,1,64,op,/,64,2,128,op,/'; } >"$tmp/tt-oom-op.csv"
"$stepsim" check-against --efficiency 0.734,0.374,1,0.9,0.601,0.418 "$tmp/tt-oom-op.csv" >"$tmp/tt-oom-op.txt"
fig "needs 101.9 of 76.0 GiB" "$tmp/tt-oom-op.txt"
# SC21's ZeRO-3 rows gathered by layer instead of by module (DeepSpeed's): the 530B on 640 GPUs,
# which ran, would not fit.
sed 's/,21.3,module$/,21.3,layer/' validation/megatron_sc21.csv >"$tmp/sc21-layer.csv"
"$stepsim" check-against --efficiency 0.734,0.374,1,0.9,0.601,0.418 "$tmp/sc21-layer.csv" >"$tmp/sc21-layer.txt"
fig "24 Table 2 GPT-529.6B ZeRO-3 640 GPUs 138 TFLOP/s 157.5 +14.2% held out needs 92.0 of 76.0 GiB" "$tmp/sc21-layer.txt"
"$stepsim" check-against validation/megascale_megatron.csv >"$tmp/ms-memory.txt"
if grep -q "memory per GPU" "$tmp/ms-memory.txt"; then fail "a memory column where every row fits"; fi
# An accelerator none of whose rows is marked fit=1 is predicted at its preset's efficiencies, and
# says so (an A100 table beside it once ended in "map::at").
# (The Qwen3 table with its fit row unmarked.)
sed 's/,tflops_model,295,1,/,tflops_model,295,0,/' validation/qwen3_235b_moe_modelzoo.csv >"$tmp/qwen3-held.csv"
"$stepsim" check-against validation/megatron_sc21.csv "$tmp/qwen3-held.csv" >"$tmp/mixed.txt"
has "calibration for h100-sxm: gemm 0.700, attention 0.550, memory 0.800, fabric 0.800, network 0.800, contention 0.200" "$tmp/mixed.txt"
has "the preset's own: no row of this accelerator is marked fit=1" "$tmp/mixed.txt"
fig "15 Long context Qwen3-235B-A22B 16K 256 GPUs 295 TFLOP/s 348.8 +18.3% held out" "$tmp/mixed.txt"
"$stepsim" check-against "$tmp/qwen3-held.csv" --json >"$tmp/moe-only.json"
has '"source": "preset"' "$tmp/moe-only.json"
# The Qwen3 16K row as a scenario on the shipped H100 calibration: the table's 295 TFLOP/s, and
# its other rows as variants.
"$stepsim" run scenarios/job-qwen3-235b-16k-256xh100.yaml >"$tmp/q16.txt"
fig "model TFLOP/s per GPU 295.0" "$tmp/q16.txt"
fig "host waits per MoE layer 2.55 ms" "$tmp/q16.txt"
"$stepsim" compare scenarios/job-qwen3-235b-16k-256xh100.yaml >"$tmp/q16-cmp.txt"
# Its variants train longer sequences on the same GPUs: "vs first" compares GPU time per token,
# 1438 / 550 tokens/s per GPU (a step's time, 20.9 times the base's, says nothing of cost).
has "GPU time per token vs first" "$tmp/q16-cmp.txt"
fig "128k 244.141 s +167.9% 537 39.9% 53.6 / 74.5 yes 2.3%" "$tmp/q16-cmp.txt"
"$stepsim" compare scenarios/job-llama70b-64xh100.yaml >"$tmp/l70-cmp.txt"
! grep -q "per token" "$tmp/l70-cmp.txt" || fail "same GPUs and tokens a step: vs first is the step's"
# A user's three runs (a 7B model on 16 H100) that the model cannot fit exactly: fitting all six
# sends four to a bound or far from the preset, which calibrate says on stderr and in the file;
# --fit gemm fits the GEMM rate alone, the other five the preset's, and says nothing.
cat >"$tmp/few.csv" <<'CSV'
tbl,model,L,h,heads,kv,ffn,vocab,seq,mlp,tied,dropout,hw,ngpu,tp,cp,pp,dp,vpp,sched,mbs,gbs,recomp,sp,zero,attention,grad_bytes,overlap_dp,metric,value,fit
lab,7B dp16,32,4096,32,32,11008,32000,4096,swiglu,0,0,h100-sxm,16,1,1,1,16,1,,1,256,none,0,1,flash,4,1,iteration_s,6.1,1
lab,7B tp2 dp8,32,4096,32,32,11008,32000,4096,swiglu,0,0,h100-sxm,16,2,1,1,8,1,,2,256,selective,1,1,flash,4,1,iteration_s,6.5,1
lab,7B pp2 dp8,32,4096,32,32,11008,32000,4096,swiglu,0,0,h100-sxm,16,1,1,2,8,1,1f1b,1,256,none,0,1,flash,4,1,iteration_s,6.9,1
CSV
few_warning="warning: 3 dense rows fitted 6 parameters and attention 0.550 -> 1.000 (its bound), memory 0.800 -> 0.230, fabric 0.800 -> 1.000 (its bound), network 0.800 -> 1.000 (its bound), contention 0.200 -> 0.050 (its bound) moved to a bound or by more than 2x from the preset: the rows do not determine them; fit fewer with --fit (e.g. --fit gemm) or add runs that exercise them"
"$stepsim" calibrate "$tmp/few.csv" -o "$tmp/few.yaml" >"$tmp/few.txt" 2>"$tmp/few.err"
[[ "$(cat "$tmp/few.err")" == "$few_warning" ]] || fail "few rows: $(cat "$tmp/few.err")"
has "^# ${few_warning#warning: }$" "$tmp/few.yaml"
has "^rms residual 3.33%$" "$tmp/few.txt"
"$stepsim" calibrate "$tmp/few.csv" -o "$tmp/few-gemm.yaml" --fit gemm >"$tmp/few-gemm.txt" 2>"$tmp/few-gemm.err"
[[ ! -s "$tmp/few-gemm.err" ]] || fail "--fit gemm warned: $(cat "$tmp/few-gemm.err")"
has "^calibration for h100-sxm: gemm 0.502, attention 0.550, memory 0.800, fabric 0.800, network 0.800, contention 0.200$" \
  "$tmp/few-gemm.txt"
fig "few.csv:4 lab 7B pp2 dp8 16 GPUs 6.9 s 6.551 -5.1%" "$tmp/few-gemm.txt"
"$stepsim" check-against "$tmp/few.csv" --fit gemm,network >"$tmp/few-check.txt"
has "^calibration for h100-sxm: gemm 0.501" "$tmp/few-check.txt"
# Rows stepsim's memory model cannot place (they ran all the same) are named on stderr as calibrate
# fits them: Korthikanti's one-layer rows at 106.0 and 86.2 of 76.0 GiB.
"$stepsim" calibrate validation/megatron_korthikanti2022.csv -o "$tmp/k.yaml" >/dev/null 2>"$tmp/k.err"
has "^warning: 4 of the 19 rows fitted need more memory than the GPU has by stepsim's count: validation/megatron_korthikanti2022.csv:16 (106.0 of 76.0 GiB), " "$tmp/k.err"
# -o -: the YAML alone on stdout, a file a scenario can name; the fit's table on stderr.
"$stepsim" calibrate "$tmp/few.csv" -o - --fit gemm >"$tmp/few-stdout.yaml" 2>"$tmp/few-stdout.err"
cmp "$tmp/few-stdout.yaml" "$tmp/few-gemm.yaml" || fail "calibrate -o -: stdout is not the hardware file"
has "^calibration for h100-sxm: gemm 0.502" "$tmp/few-stdout.err"
run "$stepsim" calibrate "$tmp/few.csv" -o - --fit gemm,bogus
refused "error: --fit: 'bogus' is not one of the six dense efficiencies (gemm, attention, memory, fabric, network, contention)"
run "$stepsim" calibrate "$tmp/few.csv" -o - --fit gemm,gemm
refused "error: --fit: 'gemm' named twice"
run "$stepsim" check-against "$tmp/few.csv" --fit gemm --efficiency 0.7,0.5,0.8,0.8,0.8,0.2
refused "--efficiency excludes --fit"
# With more rows than parameters, the same values are said as what they may stand for.
"$stepsim" calibrate validation/megatron_korthikanti2022.csv -o "$tmp/k.yaml" >/dev/null 2>"$tmp/k.err"
has "^warning: 19 dense rows fitted 6 parameters and network 0.800 -> 0.230, contention 0.200 -> 0.050 (its bound) moved to a bound or by more than 2x from the preset: they may stand for what the model does not time in these runs, or for what they barely exercise (--fit names the parameters to fit)$" "$tmp/k.err"
# A node with 2 NICs (the preset's 8 at their bandwidth otherwise): its data-parallel rows slower.
awk -F, -v OFS=, 'NR == 1 { print $0, "nics"; next } { print $0, 2 }' "$tmp/few.csv" >"$tmp/few-2nics.csv"
"$stepsim" check-against "$tmp/few.csv" --efficiency 0.5,0.55,0.8,0.8,0.8,0.2 >"$tmp/nics8.txt"
"$stepsim" check-against "$tmp/few-2nics.csv" --efficiency 0.5,0.55,0.8,0.8,0.8,0.2 >"$tmp/nics2.txt"
fig "2 lab 7B dp16 16 GPUs 6.1 s 6.293 +3.2% fit" "$tmp/nics8.txt"
fig "2 lab 7B dp16 16 GPUs 6.1 s 6.502 +6.6% fit" "$tmp/nics2.txt"
csv_refused "$tmp/few-2nics.csv" '2s/,2$/,0/' "edited.csv:2: nics: 0 NICs: a node needs at least one"
# calibrate says which stage each row fitted, where they fit more than one (not for one stage).
# (The Llama 3 table with its 8K row marked fit=1: a dense row.)
sed 's/,tflops_model,430,0,/,tflops_model,430,1,/' validation/llama3_405b_meta2024.csv >"$tmp/llama3-fit.csv"
"$stepsim" calibrate "$tmp/llama3-fit.csv" validation/qwen3_235b_moe_modelzoo.csv --fit-rows \
  -o "$tmp/two-stages.yaml" >"$tmp/two-stages.txt"
fig "validation/qwen3_235b_moe_modelzoo.csv:15 Long context Qwen3-235B-A22B 16K 256 GPUs 295 TFLOP/s 295 +0.0% moe_host_per_expert" \
  "$tmp/two-stages.txt"
has "+0.0%  dense six" "$tmp/two-stages.txt"
"$stepsim" calibrate "$tmp/llama3-fit.csv" --fit-rows -o "$tmp/one-stage.yaml" >"$tmp/one-stage.txt"
if grep -q "dense six" "$tmp/one-stage.txt"; then fail "a one-stage calibration names its stage"; fi
# With a dense row fitted, the MoE blocks' rows fit the routed experts' share (at its bound here:
# the Llama row alone puts gemm at 0.564, below the blocks' GEMMs), not gemm.
"$stepsim" calibrate "$tmp/llama3-fit.csv" validation/megatron_moe_layer_h100.csv --fit-rows \
  -o "$tmp/dense-moe.yaml" >"$tmp/dense-moe.txt"
has "calibration for h100-sxm: gemm 0.564, attention 0.542" "$tmp/dense-moe.txt"
fig "validation/megatron_moe_layer_h100.csv:16 moe_perf Mixtral-like a2a BF16 8 GPUs 4.262 ms 4.251 -0.3% experts" \
  "$tmp/dense-moe.txt"
# A file none of whose rows is fitted is not named among the fitted ones.
"$stepsim" calibrate validation/llama3_405b_meta2024.csv validation/qwen3_235b_moe_modelzoo.csv --fit-rows \
  -o "$tmp/held.yaml" >/dev/null
has "fitted to 1 measured rows of validation/qwen3_235b_moe_modelzoo.csv" "$tmp/held.yaml"
if grep -q "llama3" "$tmp/held.yaml"; then fail "calibrate names a file that gave no row"; fi
"$stepsim" calibrate validation/llama3_405b_meta2024.csv --fit-rows -o "$tmp/none.yaml" >"$tmp/none.txt" 2>&1 &&
  fail "calibrate with no row to fit succeeded"
has "no rows to fit: --fit-rows fits only rows marked fit=1, and none is" "$tmp/none.txt"
# The host time alone (no other H100 row: the preset's six held), written to a hardware file in
# whole nanoseconds, which a scenario reads back as the same step as the value set.
"$stepsim" calibrate validation/qwen3_235b_moe_modelzoo.csv --fit-rows -o "$tmp/h100-host.yaml" >/dev/null
has "contention: 0.2000, moe_host_per_expert: 96601ns}" "$tmp/h100-host.yaml"
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set "job_step.hardware={file: $tmp/h100-host.yaml, gpus: 256}" \
  >"$tmp/host-file.txt"
fig "step time 14.964 s" "$tmp/host-file.txt"
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set job_step.hardware.efficiency.moe_host_per_expert=96601ns \
  >"$tmp/host-set.txt"
fig "step time 14.964 s" "$tmp/host-set.txt"
# Full recompute waits three times per layer and micro-batch: forward, its rerun, backward.
fig "host waits per MoE layer 4.64 ms" "$tmp/host-set.txt"
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set job_step.hardware.efficiency.moe_host_per_expert=96601ns --json \
  >"$tmp/host-set.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert abs(d["layer_host_ms"] - 4.636848) < 1e-9, d' \
  "$tmp/host-set.json"
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml --json >"$tmp/host-none.json"
if grep -q layer_host_ms "$tmp/host-none.json"; then fail "layer_host_ms at 0"; fi
# Beside the A100 table alone, the Qwen3 row fits the host time from the H100 preset's efficiencies.
"$stepsim" check-against validation/megatron_sc21.csv validation/qwen3_235b_moe_modelzoo.csv >"$tmp/mixed-fit.txt"
has "contention 0.200, moe_host_per_expert 96.6 us" "$tmp/mixed-fit.txt"
fig "18 Long context Qwen3-235B-A22B 128K 256 GPUs 389 TFLOP/s 393.3 +1.1% held out" "$tmp/mixed-fit.txt"
# The MoE-layer rows alone (no dense row given): they fit the GEMM efficiency itself, 0.594 (a share
# of the preset's unmeasured 0.70 would mean nothing), then the blockwise FP8 share on the FP8 row, 0.593;
# both written to the hardware file, which a scenario reads back as the same step as the values set.
"$stepsim" calibrate validation/megatron_moe_layer_h100.csv --fit-rows -o "$tmp/h100-moe.yaml" >"$tmp/h100-moe.txt"
has "calibration for h100-sxm: gemm 0.594, attention 0.550" "$tmp/h100-moe.txt"
has "contention 0.200, fp8_blockwise 0.593" "$tmp/h100-moe.txt"
has "efficiency: {gemm: 0.5938, attention: 0.5500, memory: 0.8000, fabric: 0.8000, network: 0.8000, contention: 0.2000, fp8_blockwise: 0.5927}" \
  "$tmp/h100-moe.yaml"
# In FP8 this layout (tp 1, 16 experts a GPU) needs 84.0 GiB with the FP8 GEMMs' weight copies: its
# times are what these runs compare, reported as if it fit.
tensorwise=(--set job_step.layout.fp8=true --set job_step.allow_oom=true)
blockwise=("${tensorwise[@]}" --set job_step.layout.fp8_recipe=blockwise)
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set "job_step.hardware={file: $tmp/h100-moe.yaml, gpus: 256}" \
  "${blockwise[@]}" --json >"$tmp/fp8-file.json"
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml "${blockwise[@]}" --json \
  --set job_step.hardware.efficiency.gemm=0.5938 --set job_step.hardware.efficiency.fp8_blockwise=0.5927 >"$tmp/fp8-set.json"
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml "${blockwise[@]}" --json \
  --set job_step.hardware.efficiency.gemm=0.5938 >"$tmp/fp8-unset.json"
# The tensorwise share leaves blockwise GEMMs as they are, and the other way round.
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml "${blockwise[@]}" --json \
  --set job_step.hardware.efficiency.gemm=0.5938 --set job_step.hardware.efficiency.fp8=0.5927 >"$tmp/fp8-other.json"
cmp "$tmp/fp8-unset.json" "$tmp/fp8-other.json" || fail "the tensorwise share moved blockwise GEMMs"
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml "${tensorwise[@]}" --json \
  --set job_step.hardware.efficiency.gemm=0.5938 --set job_step.hardware.efficiency.fp8_blockwise=0.5927 >"$tmp/tw-other.json"
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml "${tensorwise[@]}" --json \
  --set job_step.hardware.efficiency.gemm=0.5938 >"$tmp/tw-unset.json"
cmp "$tmp/tw-unset.json" "$tmp/tw-other.json" || fail "the blockwise share moved tensorwise GEMMs"
python3 - "$tmp/fp8-file.json" "$tmp/fp8-set.json" "$tmp/fp8-unset.json" <<'PY'
import json, sys
f, a, b = (json.load(open(x)) for x in sys.argv[1:])
assert f["step_time_ns"] == a["step_time_ns"] and f["moe_block_forward_ms"] == a["moe_block_forward_ms"], (f, a)
# The share slows every FP8 GEMM (the routed experts' and the attention block's): the step and the MoE block.
assert a["moe_block_forward_ms"] > b["moe_block_forward_ms"] and a["step_time_ns"] > b["step_time_ns"], (a, b)
PY
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set "job_step.hardware.efficiency.experts=0.8374" --json \
  >"$tmp/experts-set.json"
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml --json >"$tmp/experts-unset.json"
python3 - "$tmp/experts-set.json" "$tmp/experts-unset.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
# The share slows the routed experts' GEMMs only: the MoE block by their 1/0.8374 - 1 of its time.
assert a["moe_block_forward_ms"] > b["moe_block_forward_ms"] and a["step_time_ns"] > b["step_time_ns"], (a, b)
assert abs((a["layer_forward_ms"] - a["moe_block_forward_ms"]) - (b["layer_forward_ms"] - b["moe_block_forward_ms"])) < 1e-9
assert round(a["moe_block_forward_ms"], 3) == 6.349 and round(b["moe_block_forward_ms"], 3) == 5.826, (a, b)
PY
set +e
"$stepsim" check-against validation/megatron_moe_layer_h100.csv --efficiency 0.7,0.5,0.8,0.8,0.8,0.2,1.5 \
  >/dev/null 2>"$tmp/eff7.err"
rc=$?
set -e
[[ $rc == 2 ]] || fail "--efficiency experts 1.5: exit $rc"
has "experts 1.5 is not a fraction in \\[0.01, 1]" "$tmp/eff7.err"
"$stepsim" check-against validation/megatron_moe_layer_h100.csv --efficiency 0.814,0.555,0.803,0.82,0.804,0.2,0.713 \
  >"$tmp/eff7.txt"
fig "16 moe_perf Mixtral-like a2a BF16 8 GPUs 4.262 ms 4.109 -3.6% fit" "$tmp/eff7.txt"
# An eighth number, the tensorwise FP8 GEMMs' share: NeMo's FP8 rows as the calibration has them.
"$stepsim" check-against validation/nemo_llama3_h100_fp8.csv --efficiency 0.5938,0.55,0.8,0.8,0.8,0.2,1,0.8752 \
  >"$tmp/eff8.txt"
fig "27 25.11 Llama-3.1-405B FP8-CS 1024 GPUs 292 tok/s 312.7 +7.1% held out" "$tmp/eff8.txt"
has "contention 0.200, fp8 0.875" "$tmp/eff8.txt"
# NeMo's 70B FP8 row as a scenario: the fitted 1,602 tokens/s per GPU, 1.36x what blockwise
# scaling gives and 1.45x BF16 at NeMo's BF16 layout.
"$stepsim" compare scenarios/job-llama3-70b-fp8-64xh100.yaml >"$tmp/l70-fp8.txt"
fig "base 10.227 s +0.0% 1602 36.4% 62.4 / 74.5 yes 10.2% 0.22 s (TP 0.15 PP 0.07)" "$tmp/l70-fp8.txt"
fig "blockwise 13.866 s +35.6% 1182 26.8% 62.4 / 74.5 yes 10.5% 0.07 s" "$tmp/l70-fp8.txt"
fig "bf16 14.929 s +46.0% 1097 49.8% 53.7 / 74.5 yes 5.4% 0.11 s (PP 0.02 DP/ZeRO 0.09)" "$tmp/l70-fp8.txt"
# Forward-backward pairs (overlap.ep_a2a): Megatron-Bridge's Qwen3-235B FP8 recipe with and without
# its EP all-to-all overlap (measured 1,633 tokens/s per GPU); JSON says so; a pipeline without
# virtual stages, and no EP, are refused at the key, in a scenario and in a measured run's row.
"$stepsim" compare scenarios/job-qwen3-235b-fp8-256xh100.yaml >"$tmp/q235-pairs.txt"
fig "base 68.213 s +0.0% 1922 14.4% 65.1 / 74.5 yes 3.5% 27.07 s (TP 0.36 PP 0.87 DP/ZeRO 0.01 EP 25.83)" "$tmp/q235-pairs.txt"
fig "no-overlap 101.577 s +48.9% 1290 9.7% 63.8 / 74.5 yes 1.8% 66.79 s (TP 0.92 PP 0.03 DP/ZeRO 0.01 EP 65.84)" "$tmp/q235-pairs.txt"
"$stepsim" run scenarios/job-qwen3-235b-fp8-256xh100.yaml --json >"$tmp/q235-pairs.json"
has '"overlap_ep_a2a": true' "$tmp/q235-pairs.json"
run "$stepsim" run scenarios/job-qwen3-235b-fp8-256xh100.yaml --set job_step.layout.virtual_stages=1
refused "job_step.layout.overlap.ep_a2a: pairs the steady state of interleaved-1f1b with virtual_stages > 1 under a pipeline (Megatron-Core requires VPP), not 1f1b with one chunk"
run "$stepsim" run scenarios/job-llama70b-64xh100.yaml --set job_step.layout.overlap.ep_a2a=true
[[ $code == 2 && "$err" == *"job_step.layout.overlap.ep_a2a: overlaps the expert all-to-alls of one micro-batch with another's compute: needs ep > 1" ]] ||
  fail "ep_a2a without EP: exit $code: $err"
# The CSV column: the Qwen3 16K row (interleaved, EP 8) with its all-to-alls paired runs faster
# (held out here: the fit row unmarked, at the calibration the H100 file holds).
awk 'NR <= 15' validation/qwen3_235b_moe_modelzoo.csv | sed '14s/$/,overlap_ep_a2a/; 15s/,1,forced balance; dropless 237,0$/,0,forced balance,0,1/' \
  >"$tmp/q-pairs.csv"
awk 'NR <= 15' validation/qwen3_235b_moe_modelzoo.csv | sed '15s/,1,forced balance; dropless 237,0$/,0,forced balance,0/' >"$tmp/q-plain.csv"
h100=0.5938,0.55,0.8,0.8,0.8,0.2,1,0.8724,0.000061,0.5927  # host 61 us an expert: 0.976 ms a pass at 16 a GPU
"$stepsim" check-against "$tmp/q-plain.csv" --efficiency "$h100" >"$tmp/q-plain.txt"
"$stepsim" check-against "$tmp/q-pairs.csv" --efficiency "$h100" >"$tmp/q-pairs.txt"
fig "15 Long context Qwen3-235B-A22B 16K 256 GPUs 295 TFLOP/s 291.4 -1.2% held out" "$tmp/q-plain.txt"
fig "15 Long context Qwen3-235B-A22B 16K 256 GPUs 295 TFLOP/s 311.4 +5.5% held out" "$tmp/q-pairs.txt"
# A tenth, the blockwise FP8 GEMMs' share: the MoE layer's FP8 rows (Transformer Engine's blockwise
# recipe) as a calibration with these values predicts them.
"$stepsim" check-against validation/megatron_moe_layer_h100.csv \
  --efficiency 0.814,0.555,0.803,0.82,0.804,0.2,0.713,1,0,0.604 >"$tmp/eff10.txt"
fig "24 moe_perf Mixtral-like a2a FP8 8 GPUs 3.676 ms 3.731 +1.5% held out" "$tmp/eff10.txt"
has "contention 0.200, experts 0.713, fp8_blockwise 0.604" "$tmp/eff10.txt"
# An eleventh, the MXFP8 GEMMs' share: the B200 table at its fitted shares.
"$stepsim" check-against validation/nemo_llama3_b200_fp8.csv \
  --efficiency 0.7,0.55,0.8,0.8,0.8,0.2,1,0.658,0,1,0.626 >"$tmp/eff11.txt"
has "contention 0.200, fp8 0.658, fp8_mx 0.626" "$tmp/eff11.txt"
fig "29 25.11 Llama-3.1-405B FP8-MX 128 GPUs 624 tok/s 628.4 +0.7% held out" "$tmp/eff11.txt"
# A ninth, the MoE passes' host time per local expert in seconds: the Qwen3 rows as the fitted
# calibration has them (1.34 ms a pass at 16 experts a GPU);
# twelve numbers, a host time past a second or a blockwise share past 1 are refused.
"$stepsim" check-against validation/qwen3_235b_moe_modelzoo.csv \
  --efficiency 0.814,0.555,0.803,0.82,0.804,0.2,0.713,0.604,0.00008375 >"$tmp/eff9.txt"
has "fp8 0.604, moe_host_per_expert 83.8 us" "$tmp/eff9.txt"
fig "16 Long context Qwen3-235B-A22B 32K 256 GPUs 335 TFLOP/s 328.1 -2.1% held out" "$tmp/eff9.txt"
# Thirteen numbers (one past fp4), a share past 1, a host time past a second: each refused.
for bad in 0.7,0.5,0.8,0.8,0.8,0.2,1,0.6,0,1,1,1,1 0.7,0.5,0.8,0.8,0.8,0.2,1,1,0,1.5 0.7,0.5,0.8,0.8,0.8,0.2,1,1,2; do
  set +e
  "$stepsim" check-against validation/qwen3_235b_moe_modelzoo.csv --efficiency "$bad" >/dev/null 2>"$tmp/eff10.err"
  rc=$?
  set -e
  [[ $rc == 2 ]] || fail "--efficiency $bad: exit $rc"
done
has "moe_host_per_expert 2 is not a fraction in" "$tmp/eff10.err"
run "$stepsim" check-against validation/qwen3_235b_moe_modelzoo.csv --efficiency 0.7,0.5,0.8,0.8,0.8,0.2,1,0.6,0,1,1,1,1
[[ $code == 2 ]] && has "expected six to twelve numbers" <(echo "$err") || fail "thirteen numbers: $code $err"
run "$stepsim" check-against validation/nemo_llama3_gb200_fp8.csv --efficiency 0.7,0.55,0.8,0.8,0.8,0.2,1,0.599,0,1,0.555,0.428
fig "36 26.02 Llama-3.1-405B NVFP4 256 GPUs 1076 tok/s 967.4 -10.1% held out" "$tmp/out"  # the fit, rounded
# A bf16_last_layers column: every row's last 4 layers in BF16 (the FP8 rows; BF16 rows ignore it).
awk -F, -v OFS=, '/^src,/ { print $0, "bf16_last_layers"; next } /^[^#]/ { print $0, 4; next } 1' \
  validation/nemo_llama3_gb200_fp8.csv >"$tmp/gb200-bf16.csv"
"$stepsim" check-against "$tmp/gb200-bf16.csv" --efficiency 0.7,0.55,0.8,0.8,0.8,0.2,1,0.599,0,1,0.555,0.428 \
  >"$tmp/gb200-bf16.txt"
fig "35 26.02 Llama-3-70B NVFP4 64 GPUs 4458 tok/s 4136 -7.2% fit" "$tmp/gb200-bf16.txt"
fig "36 26.02 Llama-3.1-405B NVFP4 256 GPUs 1076 tok/s 907.8 -15.6% held out" "$tmp/gb200-bf16.txt"
csv_refused "$tmp/gb200-bf16.csv" 's/,4$/,126/' "edited.csv:25: bf16_last_layers: bf16_first_layers + bf16_last_layers = 0 + 126 leave none of the 32 layers in FP8 (would fit: at most 31 together; or fp8: false)"
run "$stepsim" check-against validation/qwen3_235b_moe_modelzoo.csv --efficiency 0.7,0.5,0.8,0.8,0.8,0.2,1,1,0,1.5
[[ $code == 2 ]] && has "fp8_blockwise 1.5 is not a fraction in \\[0.01, 1]" <(echo "$err") || fail "fp8_blockwise 1.5: $code $err"
set +e
"$stepsim" check-against validation/qwen3_235b_moe_modelzoo.csv --efficiency 0.7,0.5,0.8,0.8,0.8,0.2x >/dev/null \
  2>"$tmp/effx.err"
rc=$?
set -e
[[ $rc == 2 ]] || fail "--efficiency 0.2x: exit $rc"
has "'0.2x' is not a number" "$tmp/effx.err"
# The MoE block's metrics need an MoE model (one line naming the row and the column, exit 2), and
# a job's JSON reports the block's times for an MoE model only.
sed 's/^\(KORTH22,Table 4,22B (1 layer) baseline,.*\),layer_fwd_ms,/\1,moe_fwd_ms,/' validation/megatron_korthikanti2022.csv \
  >"$tmp/dense-moe-metric.csv"
set +e
"$stepsim" check-against "$tmp/dense-moe-metric.csv" >/dev/null 2>"$tmp/dense-moe-metric.err"
rc=$?
set -e
[[ $rc == 2 && $(wc -l <"$tmp/dense-moe-metric.err") == 1 ]] || { cat "$tmp/dense-moe-metric.err"; fail "exit $rc"; }
has "dense-moe-metric.csv:16: metric: moe_fwd_ms needs experts (an MoE block)" "$tmp/dense-moe-metric.err"
"$stepsim" run scenarios/job-llama70b-64xh100.yaml --json >"$tmp/dense.json"
! grep -q moe_block "$tmp/dense.json" || fail "a dense job reports an MoE block"
"$stepsim" run scenarios/job-deepseek-v3-2048xh800.yaml --json >"$tmp/dsv3.json"
python3 - "$tmp/dsv3.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
# DeepSeek-V3's MoE block (its exchange over the network) within its layer (MLA attention, full recompute).
assert round(d["moe_block_forward_ms"], 2) == 11.02 and round(d["moe_block_backward_ms"], 2) == 14.26, d
assert d["moe_block_forward_ms"] < d["layer_forward_ms"], d
PY

# IBM and Meta's runs (validation/fsdp_hsdp_ibm.csv), held out: the HSDP rows on A100 within 2.1 %;
# the known misses (FSDP with long network gathers under the compute, the H100 rows) held as they are.
"$stepsim" check-against validation/megatron_sc21.csv validation/megatron_korthikanti2022.csv \
  validation/megascale_megatron.csv validation/megatron_moe_layer_h100.csv validation/qwen3_235b_moe_modelzoo.csv \
  validation/nemo_llama3_h100_fp8.csv validation/fsdp_hsdp_ibm.csv --json >"$tmp/ibm.json"
python3 - "$tmp/ibm.json" <<'PY' || fail "IBM FSDP table"
import json, sys
d = json.load(open(sys.argv[1]))
f = {x["file"].split("/")[-1]: x for x in d["files"]}["fsdp_hsdp_ibm.csv"]
r = {x["line"]: x for x in f["rows"]}
assert not any(x["fit"] for x in r.values())
assert [round(100 * r[n]["error"], 1) for n in range(23, 30)] == [-2.1, 1.2, -14.7, -19.7, 33.6, 7.5, 3.9], r
assert (f["ranking"]["kept"], f["ranking"]["pairs"]) == (15, 15), f["ranking"]
PY
csv_refused validation/fsdp_hsdp_ibm.csv 's/^\(IBM,Table 1,Llama-2-7B HSDP,.*a100-sxm-80gb,400,128,1,1,128,\)16,/\17,/' "edited.csv:23: dp_replicate: dp_replicate 7 does not divide dp 128"
csv_refused validation/fsdp_hsdp_ibm.csv 's/a100-sxm-80gb,400,128/a100-sxm-80gb,fast,128/' "edited.csv:23: node_gbps: 'fast' is not a positive number"

# 2. calibrate writes a hardware file a scenario can use. The shipped A100 file is the fit on the
# fit=1 rows, and the fit does not depend on the order the files are given in (it converges) nor
# on the threads (-j 1 here; check-against above fitted on every core).
"$stepsim" calibrate validation/megascale_megatron.csv validation/megatron_korthikanti2022.csv validation/megatron_sc21.csv \
  --fit-rows -j 1 -o "$tmp/a100.yaml" >/dev/null
[[ "$(grep '^efficiency' "$tmp/a100.yaml")" == "$(grep '^efficiency' scenarios/hardware/a100-calibrated.yaml)" ]] ||
  fail "calibrate in another file order: $(grep '^efficiency' "$tmp/a100.yaml")"
# The shipped H100 file likewise: the three H100 tables' fit=1 rows, in another order.
"$stepsim" calibrate validation/nemo_llama3_h100_fp8.csv validation/qwen3_235b_moe_modelzoo.csv \
  validation/megatron_moe_layer_h100.csv validation/llama3_405b_meta2024.csv --fit-rows -j 1 -o "$tmp/h100.yaml" >/dev/null
[[ "$(grep '^efficiency' "$tmp/h100.yaml")" == "$(grep '^efficiency' scenarios/hardware/h100-calibrated.yaml)" ]] ||
  fail "H100 calibrate in another file order: $(grep '^efficiency' "$tmp/h100.yaml")"
# ... and the B200 file, its FP8 shares fitted on the 8B rows, one per recipe.
"$stepsim" calibrate validation/nemo_llama3_b200_fp8.csv --fit-rows -j 1 -o "$tmp/b200.yaml" >"$tmp/b200-cal.txt"
[[ "$(grep '^efficiency' "$tmp/b200.yaml")" == "$(grep '^efficiency' scenarios/hardware/b200-calibrated.yaml)" ]] ||
  fail "B200 calibrate: $(grep '^efficiency' "$tmp/b200.yaml")"
fig "validation/nemo_llama3_b200_fp8.csv:27 25.11 Llama-3-8B FP8-MX 8 GPUs 29521 tok/s 29521 +0.0% fp8_mx" "$tmp/b200-cal.txt"
# The GB200 NVFP4 scenario's shares are this table's fit, to three places (they drifted once,
# when the table's model moved and the scenario kept the older fit).
"$stepsim" calibrate validation/nemo_llama3_gb200_fp8.csv --fit-rows -j 1 -o "$tmp/gb200.yaml" >/dev/null
shares=$(python3 -c '
import re, sys
e = dict(re.findall(r"(\w+): ([0-9.]+)", open(sys.argv[1]).read().split("efficiency:")[1]))
print(", ".join(f"{k}: {float(e[k]):.3f}" for k in ("fp8", "fp8_mx", "fp4")))' "$tmp/gb200.yaml")
has "efficiency: {$shares}" scenarios/job-llama3-70b-nvfp4-64xgb200.yaml
"$stepsim" calibrate validation/megascale_megatron.csv --fit-rows -o "$tmp/hw.yaml" >"$tmp/cal.txt"
has "rms residual" "$tmp/cal.txt"
has "efficiency: {gemm:" "$tmp/hw.yaml"
sed "s|file: hardware/a100-calibrated.yaml|file: $tmp/hw.yaml|; s|file: models/|file: $PWD/scenarios/models/|" scenarios/job-gpt3-1024xa100.yaml >"$tmp/gpt3-own.yaml"
"$stepsim" run "$tmp/gpt3-own.yaml" >"$tmp/own.txt"
has "step time" "$tmp/own.txt"

# 3. --export: rows as a job_step scenario (docs/validation.md "A row as a scenario"). The file the docs
# show is the one written; `run` gives the base row's step, `compare` each row's, to the figure
# the header states; a row that does not fit is allowed to (Llama 3 405B at 8K).
mkdir -p "$tmp/doc/out" && ln -s "$PWD/validation" "$tmp/doc/validation"
stepsim_abs="$(cd "$(dirname "$stepsim")" && pwd)/$(basename "$stepsim")"
(cd "$tmp/doc" && "$stepsim_abs" check-against validation/megatron_sc21.csv validation/megatron_korthikanti2022.csv \
  validation/megascale_megatron.csv --export out/sc21-76b-146b.yaml --rows megatron_sc21:16,megatron_sc21:17 \
  >/dev/null 2>&1)
diff <(awk '/^`out\/sc21-76b-146b.yaml`:$/ { on = 1; next } on && /^```yaml$/ { inside = 1; next }
            inside && /^```$/ { exit } inside { print }' docs/validation.md) "$tmp/doc/out/sc21-76b-146b.yaml" ||
  fail "docs/validation.md's exported rows are not what check-against --export writes"
has "a step of 14.775 s$" "$tmp/doc/out/sc21-76b-146b.yaml"
has "a step of 24.272 s (a row the calibration is fitted on)$" "$tmp/doc/out/sc21-76b-146b.yaml"
"$stepsim" run "$tmp/doc/out/sc21-76b-146b.yaml" >"$tmp/row16.txt"
fig "step time 14.775 s" "$tmp/row16.txt"
"$stepsim" compare "$tmp/doc/out/sc21-76b-146b.yaml" >"$tmp/rows.txt"
fig "^megatron_sc21-17 24.272 s" "$tmp/rows.txt"
"$stepsim" check-against validation/llama3_405b_meta2024.csv --export "$tmp/405b.yaml" --rows 16 >/dev/null 2>&1
has "^  allow_oom: true  # needs 88.4 of 74.5 GiB by stepsim's count; the run fit$" "$tmp/405b.yaml"
"$stepsim" run "$tmp/405b.yaml" >"$tmp/405b.txt"
has "does not fit" "$tmp/405b.txt"
# Rows of two tables whose layouts differ in every way: the second's defaults spelt out by their
# words (an even share of layers, the network's DP rate), each row running to its own step.
"$stepsim" check-against validation/megatron_sc21.csv validation/llama3_405b_meta2024.csv --export "$tmp/mixed.yaml" \
  --rows llama3_405b_meta2024:16,megatron_sc21:21 >/dev/null 2>&1
has "first_chunk_layers: even, last_chunk_layers: even" "$tmp/mixed.yaml"
"$stepsim" check-against validation/megatron_sc21.csv validation/llama3_405b_meta2024.csv --export "$tmp/mixed2.yaml" \
  --rows megatron_sc21:21,llama3_405b_meta2024:16 >/dev/null 2>&1
has "dp_bandwidth: none" "$tmp/mixed2.yaml"
"$stepsim" compare "$tmp/mixed.yaml" >"$tmp/mixed.txt"
"$stepsim" compare "$tmp/mixed2.yaml" >"$tmp/mixed2.txt"
step_of() { sed -n "s/^$1 *\([0-9.]* s\).*/\1/p" "$2"; }
[[ "$(step_of base "$tmp/mixed.txt")" == "$(step_of llama3_405b_meta2024-16 "$tmp/mixed2.txt")" &&
  "$(step_of megatron_sc21-21 "$tmp/mixed.txt")" == "$(step_of base "$tmp/mixed2.txt")" ]] ||
  fail "rows exported in either order run to different steps: $(cat "$tmp/mixed.txt" "$tmp/mixed2.txt")"
# A whole table: every row a variant, each to the step check-against predicted (its header's).
"$stepsim" check-against validation/megatron_sc21.csv --export "$tmp/sc21-all.yaml" --rows all >/dev/null 2>&1
has "^name: check-megatron_sc21-11-and-21-more$" "$tmp/sc21-all.yaml"
"$stepsim" compare "$tmp/sc21-all.yaml" >"$tmp/sc21-all.txt"
[[ $(grep -c "^megatron_sc21-" "$tmp/sc21-all.txt") == 21 ]] || fail "--rows all: $(cat "$tmp/sc21-all.txt")"
for line in 16 22 32; do
  want=$(sed -n "/^# megatron_sc21-$line, /{n;s/.*a step of \([0-9.]*\) s.*/\1/p}" "$tmp/sc21-all.yaml")
  fig "^megatron_sc21-$line $want s" "$tmp/sc21-all.txt"
done
run "$stepsim" check-against validation/megatron_sc21.csv --export "$tmp/no.yaml" --rows 10
refused "error: --rows: 10: validation/megatron_sc21.csv has no measured row on line '10' (its rows are on lines 11 to 32: name one, a range FIRST-LAST or all)"
run "$stepsim" check-against validation/megatron_sc21.csv validation/megascale_megatron.csv --export "$tmp/no.yaml" --rows 16
refused "error: --rows: 16: name its file, e.g. megatron_sc21.csv:16 (several files are given)"
run "$stepsim" check-against validation/megatron_sc21.csv --rows 16
refused "error: check-against: --rows requires --export"
run "$stepsim" check-against validation/megatron_sc21.csv --export validation/megatron_sc21.csv --rows 16
refused "error: --export: validation/megatron_sc21.csv: this command reads it: give another file"
[[ ! -e "$tmp/no.yaml" ]] || fail "a refused --export wrote its file"
run "$stepsim" check-against validation/megatron_sc21.csv ./validation/megatron_sc21.csv
refused "error: ./validation/megatron_sc21.csv: given twice (as validation/megatron_sc21.csv): give each table once"
echo "validation: all checks passed"
