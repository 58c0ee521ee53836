#!/usr/bin/env bash
# How real frameworks shard, gather and recompute, from the CLI (docs/job.md): DeepSpeed 0.3's
# ZeRO-3 rate and gathers by module, FSDP's FP32 master weights, HSDP's replicas, ZeRO-3's weights
# kept gathered, torchtitan's recompute by op; a hardware file beside the scenario's network. Each
# with its figures, its JSON and CSV keys, and its refusals at their keys.
# Usage: bash tests/job_step_frameworks_cli.sh /path/to/stepsim   (from the source directory)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"

# A framework slower than the network (docs/validation.md "Collectives across nodes"): DeepSpeed 0.3's
# ZeRO-3 rate and its gathers by module (a recomputed layer's again); a cap that is not a
# bandwidth, a fetch that is neither, each at its key.
"$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.recompute=full --set job_step.layout.dp_bandwidth=21.3GB/s \
  --set job_step.layout.zero3_fetch=module >"$tmp/ds.txt"
has "recompute full, DP collectives at most 21.3 GB/s, ZeRO-3 gathers by module (recomputed layers' weights again)" "$tmp/ds.txt"
fig "step time 19.221 s" "$tmp/ds.txt"
fig "exposed DP/ZeRO 10.232 s" "$tmp/ds.txt"
"$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.recompute=full --set job_step.layout.zero3_fetch=module \
  --json >"$tmp/ds.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["layout"]; assert d["zero3_fetch"] == "module" and "dp_bandwidth_bytes_per_s" not in d, d' \
  "$tmp/ds.json" || fail "zero3_fetch in the JSON"
"$stepsim" run scenarios/job-fsdp-8.yaml --json >"$tmp/fsdp.json"
layout_key "$tmp/fsdp.json" zero3_fetch absent
run "$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.zero3_fetch=tensor
refused "job_step.layout.zero3_fetch: unknown zero3_fetch 'tensor' (layer or module)"
run "$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.dp_bandwidth=0GB/s
refused "job_step.layout.dp_bandwidth: '0GB/s' must be positive"
sed 's/,2,tflops_sc21,144,1,ZeRO-3 without model parallelism,21.3,module$/,2,tflops_sc21,144,1,ZeRO-3 without model parallelism,fast,module/' \
  validation/megatron_sc21.csv >"$tmp/dpbw.csv"
run "$stepsim" check-against "$tmp/dpbw.csv"
refused "dpbw.csv:21: dp_bandwidth_gbs: 'fast' is not a positive number"
sed 's/,2,tflops_sc21,144,1,ZeRO-3 without model parallelism,21.3,module$/,2,tflops_sc21,144,1,ZeRO-3 without model parallelism,1e-12,module/' \
  validation/megatron_sc21.csv >"$tmp/dpbw0.csv"
run "$stepsim" check-against "$tmp/dpbw0.csv"
refused "dpbw0.csv:21: dp_bandwidth_gbs: 1e-12 GB/s is under a byte a second"
sed 's/,2,tflops_sc21,144,1,ZeRO-3 without model parallelism,21.3,module$/,2,tflops_sc21,144,1,ZeRO-3 without model parallelism,21.3,tensor/' \
  validation/megatron_sc21.csv >"$tmp/fetch.csv"
run "$stepsim" check-against "$tmp/fetch.csv"
refused "fetch.csv:21: zero3_fetch: unknown zero3_fetch 'tensor' (layer or module)"
# FP32 weights as the master (PyTorch FSDP's mixed precision, docs/memory.md "Where the master
# weights are"): 4 B of weights, 8 B of Adam state instead of 2 + 12, in the header, the JSON and
# the memory table; a value that is neither, at its key (YAML, --set, CSV cell).
"$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.master_weights=model >"$tmp/mw.txt"
has "recompute none, FP32 weights as the master (BF16 copies to compute)" "$tmp/mw.txt"
fig "weights 3.74" "$tmp/mw.txt"
fig "optimizer state 7.48" "$tmp/mw.txt"
fig "gradients 3.74" "$tmp/mw.txt"
fig "total 58.07" "$tmp/mw.txt"
fig "step time 5.942 s" "$tmp/mw.txt"
"$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.master_weights=model --json >"$tmp/mw.json"
layout_key "$tmp/mw.json" master_weights '"model"'
layout_key "$tmp/fsdp.json" master_weights absent
run "$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.master_weights=fp32
refused "job_step.layout.master_weights: unknown master_weights 'fp32' (optimizer or model)"
csv_refused validation/fsdp_across_nodes.csv 's/^\(TT,.*\),model,0$/\1,fp32,0/' "edited.csv:20: master_weights: unknown master_weights 'fp32' (optimizer or model)"
"$stepsim" search scenarios/search-design-desk.yaml --set search.layout.master_weights=model >"$tmp/mw-search.txt" 2>/dev/null
has "FP32 weights as the master, cast to BF16 to compute (no BF16 copy kept beside them)" "$tmp/mw-search.txt"
# HSDP (docs/memory.md "HSDP"): sharded in each node, 16 replicas, against FSDP over all 128 GPUs;
# in the header and the JSON; refusals at dp_replicate; a layout too big names the replicas that fit.
"$stepsim" compare scenarios/job-hsdp-128xa100.yaml >"$tmp/hsdp.txt"
has "tp 1 pp 1 dp 128 (HSDP: 16 replicas, each sharding over 8), zero 3" "$tmp/hsdp.txt"
fig "base 2.263 s +0.0% 3620 49.7% 47.8 / 76.0 yes" "$tmp/hsdp.txt"
fig "shard-over-32 2.458 s +8.6% 3333 45.8% 38.4 / 76.0 yes" "$tmp/hsdp.txt"
fig "fsdp-all-128 2.416 s +6.8% 3391 46.6% 36.1 / 76.0 yes" "$tmp/hsdp.txt"
"$stepsim" run scenarios/job-hsdp-128xa100.yaml --json >"$tmp/hsdp.json"
layout_key "$tmp/hsdp.json" dp_replicate 16
layout_key "$tmp/fsdp.json" dp_replicate absent
run "$stepsim" run scenarios/job-hsdp-128xa100.yaml --set job_step.layout.dp_replicate=5
refused "job_step.layout.dp_replicate: dp_replicate 5 does not divide dp 128 (would fit: 1, 2, 4, 8, 16, 32, 64)"
run "$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.fsdp=false --set job_step.layout.dp_replicate=2
refused "job_step.layout.dp_replicate: replicates ZeRO's shards over groups of data-parallel ranks: needs zero 1-3"
run "$stepsim" run scenarios/job-hsdp-128xa100.yaml --set job_step.layout.micro_batch=4 --set job_step.layout.global_batch=512
refused "would fit: dp_replicate: 8 (75.7 GiB)"
# Beside a hardware file, the scenario's network applies: at a DGX A100's 25 GB/s a NIC, faster.
"$stepsim" run scenarios/job-hsdp-128xa100.yaml --set job_step.hardware.network.nic_bandwidth=25GB/s >"$tmp/hsdp-dgx.txt"
fig "step time 1.983 s" "$tmp/hsdp-dgx.txt"
"$stepsim" run scenarios/job-hsdp-128xa100.yaml --set job_step.hardware.efficiency.contention=0 >"$tmp/hsdp-c0.txt"
fig "step time 1.872 s" "$tmp/hsdp-c0.txt"
run "$stepsim" run scenarios/job-hsdp-128xa100.yaml --set job_step.hardware.efficiency.contention=2
refused "job_step.hardware.efficiency.contention: 2 is not a share of time"
# FSDP keeping each layer's gathered weights from forward to backward (reshard_after_forward=False).
"$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.keep_gathered=true >"$tmp/kept.txt"
has ", ZeRO-3 weights kept gathered from forward to backward" "$tmp/kept.txt"
fig "step time 5.883 s" "$tmp/kept.txt"
fig "buffers 23.19" "$tmp/kept.txt"
"$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.keep_gathered=true --json >"$tmp/kept.json"
layout_key "$tmp/kept.json" keep_gathered true
layout_key "$tmp/fsdp.json" keep_gathered absent
run "$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.keep_gathered=sometimes
refused "job_step.layout.keep_gathered"
# ... a CSV column too: IBM's 34B row (line 25) with its weights kept runs faster than as measured.
sed '22s/$/,keep_gathered/; 23,24s/$/,0/; 25s/$/,1/; 26,$s/$/,0/' validation/fsdp_hsdp_ibm.csv >"$tmp/kept.csv"
"$stepsim" check-against --efficiency 0.734,0.374,1,0.9,0.601,0.418 "$tmp/kept.csv" >"$tmp/kept-check.txt"
tr -s ' ' <"$tmp/kept-check.txt" | grep "^25 Table 1 Llama-2-34B FSDP 128 GPUs" | grep -v " 595.9 " >/dev/null ||
  { cat "$tmp/kept-check.txt"; fail "keep_gathered column"; }
# torchtitan's recompute by op (docs/memory.md "Recompute by op"): in the header and the JSON; a
# block it is not defined for, refused at the key.
"$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.recompute=op >"$tmp/op.txt"
has "recompute op (torchtitan's: every second matmul rerun)" "$tmp/op.txt"
fig "step time 6.571 s" "$tmp/op.txt"
fig "HFU 57.0%" "$tmp/op.txt"
fig "activations (peak) 15.56" "$tmp/op.txt"
fig "buffers 9.63" "$tmp/op.txt"
"$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.recompute=op --json >"$tmp/op.json"
layout_key "$tmp/op.json" recompute '"op"'
run "$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set job_step.layout.recompute=op
refused "job_step.layout.recompute: op checkpoints a dense block's matmuls in torchtitan's order: the model has experts, mla, linear_attention or mamba"
run "$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.recompute=op --set job_step.layout.attention=unfused
refused "job_step.layout.recompute: op saves FlashAttention's output (torchtitan's SDPA): needs a fused attention (flash, flash2, flash3)"
# A search tries op where recompute lists it: between none and full in time and memory.
cat >"$tmp/op-search.yaml" <<YAML
name: op-search
search:
  model: {file: $PWD/scenarios/models/llama3-8b.yaml}
  hardware: {preset: h100-sxm, gpus: 8}
  layout: {tp: 1, zero: 3, micro_batch: 1, global_batch: 64, recompute: [none, op, full]}
YAML
"$stepsim" search "$tmp/op-search.yaml" >"$tmp/op-search.txt" 2>/dev/null
fig "1 8 1 1 1 8 fsdp - 1 none no 6.012 s 56.7% 60.3" "$tmp/op-search.txt"
fig "2 8 1 1 1 8 fsdp - 1 op no 6.641 s 51.3% 42.4" "$tmp/op-search.txt"
fig "3 8 1 1 1 8 fsdp - 1 full no 7.763 s 43.9% 29.4" "$tmp/op-search.txt"
run "$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.recompute=ops
refused "unknown recompute 'ops' (none, selective, op or full)"

# ... and in a measured-runs row, at its column.
{ sed -n '/^src,/p' validation/qwen3_235b_moe_modelzoo.csv
  grep '^MZ,Long context,Qwen3-235B-A22B 16K,' validation/qwen3_235b_moe_modelzoo.csv | sed 's/,selective,layernorm+moe,/,op,,/'; } >"$tmp/op-moe.csv"
run "$stepsim" check-against "$tmp/op-moe.csv"
refused "op-moe.csv:2: recomp: op checkpoints a dense block's matmuls in torchtitan's order"

# A search states them under its first line, as every setting its layouts share.
"$stepsim" search scenarios/search-design-desk.yaml --set search.layout.zero3_fetch=module \
  --set search.layout.dp_bandwidth=10GB/s >"$tmp/ds-search.txt" 2>/dev/null
has "data-parallel collectives at most 10 GB/s per GPU" "$tmp/ds-search.txt"
has "zero 3: weights gathered module by module, a recomputed layer's again before its backward" "$tmp/ds-search.txt"

# ZeRO 2 over micro-batches (docs/memory.md "ZeRO 2 over micro-batches"): DeepSpeed's every-micro-batch
# reduce-scatters cost 2.4 % of the step and hold 1/64 of the gradients zero 1 holds whole;
# accumulated whole it is zero 1, figure for figure. The header, the JSON, a bad value at its key
# (YAML through --set, a CSV cell).
"$stepsim" compare scenarios/job-zero-8b-64xh100.yaml >"$tmp/z2.txt"
has "recompute none, gradients reduce-scattered every micro-batch" "$tmp/z2.txt"
has "simulated 1 device(s) of one pipeline, 41 ops, 8 micro-batches per pipeline" "$tmp/z2.txt"
fig "base 5.940 s +0.0% 11034 57.4% 58.7 / 74.5 yes 3.5% 0.21 s (DP/ZeRO 0.21)" "$tmp/z2.txt"
fig "zero 2 whole 5.802 s -2.3% 11296 58.8% 88.2 / 74.5 no 1.2% 0.07 s (DP/ZeRO 0.07)" "$tmp/z2.txt"
fig "zero 1 5.802 s -2.3% 11296 58.8% 88.2 / 74.5 no 1.2% 0.07 s (DP/ZeRO 0.07)" "$tmp/z2.txt"
fig "zero 3 6.133 s +3.3% 10685 55.6% 45.6 / 74.5 yes 0.9% 0.06 s (DP/ZeRO 0.06)" "$tmp/z2.txt"
"$stepsim" run scenarios/job-zero-8b-64xh100.yaml >"$tmp/z2run.txt"
fig "gradients 0.47" "$tmp/z2run.txt"
fig "exposed DP/ZeRO 208.02 ms" "$tmp/z2run.txt"
"$stepsim" run scenarios/job-zero-8b-64xh100.yaml --set job_step.layout.zero2_accumulate=whole --set job_step.allow_oom=true >"$tmp/z2whole.txt"
has "gradients accumulated whole, reduce-scattered once" "$tmp/z2whole.txt"
fig "gradients 29.92" "$tmp/z2whole.txt"
"$stepsim" run scenarios/job-zero-8b-64xh100.yaml --json >"$tmp/z2.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["layout"]; assert d["zero2_accumulate"] == "sharded", d' \
  "$tmp/z2.json" || fail "zero2_accumulate in the JSON"
layout_key "$tmp/fsdp.json" zero2_accumulate absent
run "$stepsim" run scenarios/job-zero-8b-64xh100.yaml --set job_step.layout.zero2_accumulate=partial
refused "job_step.layout.zero2_accumulate: unknown zero2_accumulate 'partial' (sharded or whole)"
sed 's/,tflops_model,430,0,BF16 MFU 43%,0,whole$/,tflops_model,430,0,BF16 MFU 43%,0,halves/' \
  validation/llama3_405b_meta2024.csv >"$tmp/z2.csv"
run "$stepsim" check-against "$tmp/z2.csv"
refused "z2.csv:16: zero2_accumulate: unknown zero2_accumulate 'halves' (sharded or whole)"
sed 's/,tflops_model,430,0,BF16 MFU 43%,0,whole$/,tflops_model,430,0,BF16 MFU 43%,0,sharded/' \
  validation/llama3_405b_meta2024.csv >"$tmp/z2s.csv"
"$stepsim" check-against "$tmp/z2s.csv" validation/megatron_moe_layer_h100.csv >"$tmp/z2s.txt" 2>/dev/null
fig "16 Table 4 Llama-3-405B 8K 8192 GPUs 430 TFLOP/s 379.1 -11.8% held out" "$tmp/z2s.txt"

echo "job_step frameworks: all checks passed"
