#!/usr/bin/env bash
# job_step scenarios from the CLI (docs/job.md): the shipped jobs and their figures. Bad input:
# job_step_errors_cli.sh; check-against on the validation tables: validation_cli.sh.
# Usage: bash tests/job_step_cli.sh /path/to/stepsim   (from the source directory)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"

# 1. The shipped jobs and their figures (deterministic).
"$stepsim" run scenarios/job-llama70b-64xh100.yaml >"$tmp/llama.txt"
fig "step time 15.561 s" "$tmp/llama.txt"
fig "MFU 47.8%" "$tmp/llama.txt"
has "simulated 4 device(s) of one pipeline, 7600 ops, 64 micro-batches" "$tmp/llama.txt"
fig "exposed PP 15.94 ms" "$tmp/llama.txt"
# Blocking pipeline sends (Megatron's default p2p): devices meet at exchanges (tests/lowering [blocking]).
"$stepsim" run scenarios/job-llama70b-64xh100.yaml --set job_step.layout.overlap.pp=false >"$tmp/llama-block.txt"
fig "step time 15.693 s" "$tmp/llama-block.txt"
fig "exposed PP 143.03 ms" "$tmp/llama-block.txt"
# An order written for asynchronous sends deadlocks when they block: refused at the key, exit 2.
set +e
"$stepsim" run scenarios/job-llama70b-64xh100.yaml --set job_step.layout.schedule=zb-h2 \
  --set job_step.layout.virtual_stages=1 --set job_step.layout.overlap.pp=false 2>"$tmp/zbh2.txt"
rc=$?
set -e
[[ $rc == 2 ]] || fail "zb-h2 with blocking sends: exit $rc"
has "job_step.layout.overlap.pp: with blocking pipeline sends (overlap.pp false) schedule 'zb-h2' deadlocks (dependency cycle: " "$tmp/zbh2.txt"
[[ $(wc -l <"$tmp/zbh2.txt") == 1 ]] || fail "zb-h2: more than one line"
"$stepsim" run scenarios/job-gpt3-1024xa100.yaml >"$tmp/gpt3.txt"
fig "step time 28.161 s" "$tmp/gpt3.txt"
fig "hardware TFLOP/s per GPU 156.4" "$tmp/gpt3.txt"
"$stepsim" run scenarios/job-fsdp-8.yaml >"$tmp/fsdp.txt"
fig "step time 5.942 s" "$tmp/fsdp.txt"
fig "exposed DP/ZeRO 22.45 ms" "$tmp/fsdp.txt"
# MoE: expert weights are on dp x cp / ep = 1 rank each, so ZeRO-1 cannot shard their Adam state
# (8.34 GiB, where dividing them by dp too gave 0.59), and their gradients are reduced by nobody.
"$stepsim" run scenarios/job-moe-dualpipe-h800.yaml >"$tmp/moe.txt"
fig "step time 5.956 s" "$tmp/moe.txt"
fig "exposed EP 1.200 s" "$tmp/moe.txt"
fig "optimizer state 8.36" "$tmp/moe.txt"
fig "exposed DP/ZeRO 32.77 ms" "$tmp/moe.txt"
has "ep 64 (dispatch per node, FP8 dispatch)" "$tmp/moe.txt"
# Expert routing (docs/experts.md): figure 10-27's hot experts on half the EP ranks, spread by
# round-robin placement, capped by a capacity factor; a routing that cannot be, at its line.
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml >"$tmp/route.txt"
has "expert routing: 50% of the 128 experts hot at 1.5x the mean, placed contiguous on ep 8; the busiest EP rank computes 1.50x the mean rows" "$tmp/route.txt"
fig "step time 12.863 s" "$tmp/route.txt"
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set job_step.layout.expert_placement=round_robin >"$tmp/route-rr.txt"
has "the busiest EP rank computes 1.00x the mean rows" "$tmp/route-rr.txt"
fig "step time 10.080 s" "$tmp/route-rr.txt"
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set job_step.model.capacity_factor=1.25 --json >"$tmp/route-cap.json"
has '"capacity_rows": 2560' "$tmp/route-cap.json"
has '"dropped_share": 0.125' "$tmp/route-cap.json"
has '"busiest_rank_load": 1.25' "$tmp/route-cap.json"
has '"step_time_ns": 11430863208' "$tmp/route-cap.json"
# compare: the base and each variant, one row each; a variant that does not fit is a row, not an error.
"$stepsim" compare scenarios/job-moe-routing-256xh100.yaml >"$tmp/route-cmp.txt"
fig "base 12.863 s +0.0% 1274 19.1% 68.3 / 74.5 yes 19.2% 3.13 s (PP 0.02 DP/ZeRO 0.39 EP 2.72)" "$tmp/route-cmp.txt"
fig "round-robin 10.080 s -21.6% 1625 24.4% 68.1 / 74.5 yes" "$tmp/route-cmp.txt"
fig "capacity-1.25 11.431 s -11.1% 1433 21.5%" "$tmp/route-cmp.txt"
fig "no-recompute 9.660 s -24.9% 1696 25.4% 181.7 / 74.5 no" "$tmp/route-cmp.txt"
# Expert TP folded (docs/experts.md "Expert tensor parallelism"): at TP 4 the EP group spans 4 nodes
# and the expert TP group gathers 8 copies of every token, unless the experts keep TP 1 and EP
# folds over the TP ranks of a node.
fig "tp4 40.480 s +214.7% 405 6.1% 24.7 / 74.5 yes 6.3% 27.41 s (TP 8.80 PP 0.01 DP/ZeRO 0.08 EP 18.51)" "$tmp/route-cmp.txt"
fig "tp4-expert-tp1 13.003 s +1.1% 1260 18.9% 54.2 / 74.5 yes 11.2% 4.01 s (TP 0.62 PP 0.01 DP/ZeRO 0.87 EP 2.50)" "$tmp/route-cmp.txt"
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set job_step.layout.tp=4 --set job_step.layout.dp=16 \
  --set job_step.layout.sequence_parallel=true --set job_step.layout.expert_tp=1 --set job_step.layout.ep_dispatch=per_node \
  >"$tmp/route-fold.txt"
has "dp 16 ep 8 (expert tp 1, dispatch per node), zero 1" "$tmp/route-fold.txt"
run "$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set job_step.layout.expert_tp=3
[[ $code == 2 && "$err" == "error: --set: job_step.layout.expert_tp: expert_tp 3 does not divide tp 1 (would fit: 1)" ]] ||
  fail "expert_tp 3: exit $code: $err"
"$stepsim" compare scenarios/job-moe-routing-256xh100.yaml --json >"$tmp/route-cmp.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [x["variant"] for x in d]==["base","round-robin","balanced","capacity-1.25","no-recompute","tp4","tp4-expert-tp1"], d; assert d[6]["layout"]["expert_tp"]==1; assert d[2]["step_time_ns"]==10079985527' "$tmp/route-cmp.json" ||
  fail "compare --json: variants"
{ cat scenarios/job-moe-routing-256xh100.yaml; printf '    bad-tp:\n      layout:\n        tp: 3\n'; } >"$tmp/route-var.yaml"
line=$(grep -n '        tp: 3' "$tmp/route-var.yaml" | cut -d: -f1)
run "$stepsim" compare "$tmp/route-var.yaml"
refused "route-var.yaml:$line: job_step.variants.bad-tp.layout.tp: tp 3 does not divide the 64 attention heads"
run "$stepsim" compare scenarios/job-moe-routing-256xh100.yaml --set job_step.variants.balanced.layout.tp=3
[[ $code == 2 && "$err" == "error: --set: job_step.variants.balanced.layout.tp: tp 3 does not divide"* ]] ||
  fail "variant key from --set: exit $code: $err"
{ cat scenarios/job-moe-routing-256xh100.yaml; printf '    base: {layout: {tp: 2}}\n'; } >"$tmp/route-base.yaml"
run "$stepsim" compare "$tmp/route-base.yaml"
refused "job_step.variants.base: 'base' names the scenario's own step in compare's rows"
{ cat scenarios/job-moe-routing-256xh100.yaml; printf '    typo: {layouts: {tp: 2}}\n'; } >"$tmp/route-typo.yaml"
run "$stepsim" compare "$tmp/route-typo.yaml"
refused "job_step.variants.typo.layouts: unknown key; did you mean 'layout'?"
# TP communication overlap (docs/overlap.md "TP communication overlap"): the Llama-70B job's variants.
"$stepsim" compare scenarios/job-llama70b-64xh100.yaml >"$tmp/llama-cmp.txt"
fig "base 15.561 s +0.0% 1053 47.8% 49.5 / 74.5 yes 4.5% 2.82 s (TP 2.74 PP 0.02 DP/ZeRO 0.06)" "$tmp/llama-cmp.txt"
fig "tp-overlap 13.923 s -10.5% 1177 53.4% 49.5 / 74.5 yes 4.9% 0.78 s (TP 0.70 PP 0.02 DP/ZeRO 0.06)" "$tmp/llama-cmp.txt"
fig "no-sp 16.618 s +6.8% 986 44.8% 89.7 / 74.5 no 4.3% 2.37 s (TP 2.30 PP 0.02 DP/ZeRO 0.06)" "$tmp/llama-cmp.txt"
"$stepsim" run scenarios/job-llama70b-64xh100.yaml --set job_step.layout.overlap.tp=true --json >"$tmp/llama-tpo.json"
has '"overlap_tp": true' "$tmp/llama-tpo.json"
has '"step_time_ns": 13922761154' "$tmp/llama-tpo.json"
sed -e 's/    sequence_parallel: true/    sequence_parallel: false\n    overlap: {tp: true}/' \
  -e "s|file: models/|file: $PWD/scenarios/models/|" scenarios/job-llama70b-64xh100.yaml >"$tmp/llama-tpo.yaml"
line=$(grep -n 'overlap: {tp: true}' "$tmp/llama-tpo.yaml" | head -1 | cut -d: -f1)
run "$stepsim" run "$tmp/llama-tpo.yaml"
[[ $code == 2 && $(wc -l <<<"$err") == 1 && "$err" == *"llama-tpo.yaml:$line: job_step.layout.overlap.tp: pipelines the TP all-gathers and reduce-scatters with their GEMMs: needs sp: true"* ]] ||
  fail "overlap.tp without sp: exit $code: $err"
sed 's/hot_load: 1.5}/hot_load: 3}/' scenarios/job-moe-routing-256xh100.yaml >"$tmp/route-bad.yaml"
line=$(grep -n 'routing: {hot_experts' "$tmp/route-bad.yaml" | cut -d: -f1)
run "$stepsim" run "$tmp/route-bad.yaml"
refused "route-bad.yaml:$line: job_step.model.routing.hot_load: 64 hot experts at 3 x the mean need 49152 rows, but the layer dispatches 32768"
run "$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set 'job_step.model.routing={loads: [1, 2]}'
refused "job_step.model.routing.loads: rows per expert depend on the tokens of a micro-batch"
run "$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set job_step.layout.expert_placement=random
refused "job_step.layout.expert_placement: unknown placement 'random' (contiguous, round_robin)"
grep -v -e '^    experts:' -e '^    top_k:' -e '^    expert_ffn:' -e '^    ep:' scenarios/job-moe-routing-256xh100.yaml >"$tmp/route-dense.yaml"
line=$(grep -n '^    routing: {hot_experts' "$tmp/route-dense.yaml" | cut -d: -f1)
run "$stepsim" run "$tmp/route-dense.yaml"
refused "route-dense.yaml:$line: job_step.model.routing: needs experts (a mixture-of-experts model)"
# Selective recompute by module (docs/memory.md): what each drops, at the simulated peak.
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set job_step.layout.recompute=selective \
  --set 'job_step.layout.recompute_modules=[layernorm, moe_act]' --set job_step.allow_oom=true >"$tmp/rm.txt"
has "recompute selective (layernorm, moe_act)" "$tmp/rm.txt"
fig "step time 9.752 s" "$tmp/rm.txt"
fig "activations (peak) 101.34" "$tmp/rm.txt"
# moe reruns the whole block, the combine included: none of its copies' arrays is kept.
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set job_step.layout.recompute=selective \
  --set 'job_step.layout.recompute_modules=[moe]' --set job_step.allow_oom=true >"$tmp/rm-moe.txt"
fig "step time 12.156 s" "$tmp/rm-moe.txt"
fig "activations (peak) 23.72" "$tmp/rm-moe.txt"
"$stepsim" run scenarios/job-deepseek-v3-2048xh800.yaml --set job_step.layout.recompute=selective \
  --set 'job_step.layout.recompute_modules=[layernorm, mla_up_proj, moe_act]' --set job_step.allow_oom=true --json >"$tmp/rm.json"
has '"recompute_modules": \[' "$tmp/rm.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["layout"]["recompute_modules"]==["layernorm","mla_up_proj","moe_act"]; assert d["step_time_ns"]==13831696676, d["step_time_ns"]' "$tmp/rm.json" ||
  fail "DeepSeek-V3 with its recompute modules"
run "$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set job_step.layout.recompute=selective \
  --set 'job_step.layout.recompute_modules=[mla_up_proj]'
refused "job_step.layout.recompute_modules: mla_up_proj recomputes latent attention's up-projections: the model has no mla"
run "$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set job_step.layout.recompute=selective \
  --set 'job_step.layout.recompute_modules=[attention]'
refused "job_step.layout.recompute_modules: unknown module 'attention' (core_attn, layernorm, mla_up_proj, moe_act, mlp, shared_experts, moe)"
# The same job as measured-runs CSV rows (routing and placement columns) gives the scenario's figures.
cols="src,tbl,model,L,h,heads,kv,head_dim,ffn,vocab,seq,mlp,tied,experts,top_k,expert_ffn,hot_experts,hot_load"
cols+=",expert_placement,hw,ngpu,tp,pp,dp,ep,first_chunk_layers,last_chunk_layers,sched,mbs,gbs,recomp,recompute_modules"
cols+=",zero,metric,value,fit"
row="Q,Sec 1,Qwen3-235B,94,4096,64,4,128,12288,151936,4096,swiglu,0,128,8,1536,50%,1.5,PLACE,h100-sxm,256,1,4,64,8,23,23"
row+=",1f1b,1,1024,full,MODULES,1,tokens_per_gpu_s,1270,0"
{ echo "$cols"; echo "${row/PLACE/}" | sed 's/MODULES//'; echo "${row/PLACE/round_robin}" | sed 's/MODULES//'; } >"$tmp/route.csv"
"$stepsim" check-against "$tmp/route.csv" --efficiency 0.7,0.55,0.8,0.8,0.8,0.2 >"$tmp/route-check.txt"
fig "2 Sec 1 Qwen3-235B 256 GPUs 1270 tok/s 1272 +0.1% held out" "$tmp/route-check.txt"
fig "3 Sec 1 Qwen3-235B 256 GPUs 1270 tok/s 1622 +27.8% held out" "$tmp/route-check.txt"
{ echo "$cols"; echo "${row/PLACE/}" | sed 's/,full,MODULES,/,selective,layernorm+attention,/'; } >"$tmp/route-bad.csv"
run "$stepsim" check-against "$tmp/route-bad.csv" --efficiency 0.7,0.55,0.8,0.8,0.8,0.2
refused "route-bad.csv:2: recompute_modules: unknown module 'attention' (core_attn, layernorm"
# A search of the same model states the routing and the recompute modules its layouts share.
cat >"$tmp/route-search.yaml" <<'YAML'
name: route-search
search:
  model: {name: q, layers: 8, hidden: 4096, ffn: 12288, heads: 64, kv_heads: 4, head_dim: 128, vocab: 151936,
          seq: 4096, experts: 128, top_k: 8, expert_ffn: 1536, routing: {hot_experts: 50%, hot_load: 1.5}}
  hardware: {preset: h100-sxm, gpus: 16}
  layout: {tp: 1, pp: 1, ep: [4, 8], zero: 1, micro_batch: 1, global_batch: 64, recompute: [selective],
           recompute_modules: [layernorm, moe_act], expert_tp: 1}
YAML
"$stepsim" search "$tmp/route-search.yaml" >"$tmp/route-search.txt"
has "expert routing: 50% of the 128 experts hot at 1.5x the mean, placed contiguous" "$tmp/route-search.txt"
has "selective recompute: layernorm, moe_act" "$tmp/route-search.txt"
has "routed experts at expert TP 1 (below tp: EP folded over TP)" "$tmp/route-search.txt"
# FP8 activations (docs/precision.md "FP8 activations"): DeepSeek-V3's own recompute with and without.
sel=(--set job_step.layout.recompute=selective --set "job_step.layout.recompute_modules=[layernorm,mla_up_proj,moe_act]")
run "$stepsim" run scenarios/job-deepseek-v3-2048xh800.yaml "${sel[@]}"
refused "needs 104.2 GiB per GPU (weights 6.1, gradients 12.2, optimizer 2.7, activations 77.1, buffers 6.1, of them FP8 weight copies 6.1) but h800 has 74.5 GiB usable; would fit: recompute: full, recompute_layers: 3 (63.9 GiB)"
run "$stepsim" run scenarios/job-deepseek-v3-2048xh800.yaml "${sel[@]}" --set job_step.layout.fp8_activations=false
[[ $code == 2 && "$err" == *"needs 123.8 GiB per GPU"*"activations 96.7,"* ]] ||
  fail "DeepSeek-V3 selective in BF16: exit $code: $err"
# ... and recomputing only the fewest layers of each chunk that fit: 3 of 4, 7 % faster than all.
"$stepsim" run scenarios/job-deepseek-v3-2048xh800.yaml --set job_step.layout.recompute_layers=auto >"$tmp/dsv3-auto.txt"
has "recompute full (the first 3 layers of each chunk, the fewest that fit)" "$tmp/dsv3-auto.txt"
fig "step time 16.939 s" "$tmp/dsv3-auto.txt"
fig "tokens/s per GPU 1814" "$tmp/dsv3-auto.txt"
"$stepsim" run scenarios/job-deepseek-v3-2048xh800.yaml --json >"$tmp/dsv3-fp8.json"
has '"fp8_activations": true' "$tmp/dsv3-fp8.json"
run "$stepsim" run scenarios/job-llama70b-64xh100.yaml --set job_step.layout.fp8_activations=true
[[ $code == 2 && "$err" == "error: --set: job_step.layout.fp8_activations: keeps the inputs of FP8 GEMMs in FP8: needs fp8: true" ]] ||
  fail "fp8_activations without fp8: exit $code: $err"
has '"fp8_recipe": "blockwise"' "$tmp/dsv3-fp8.json"
run "$stepsim" run scenarios/job-llama70b-64xh100.yaml --set job_step.layout.fp8_recipe=blockwise
[[ $code == 2 && "$err" == "error: --set: job_step.layout.fp8_recipe: the FP8 GEMMs' scaling: needs fp8: true" ]] ||
  fail "fp8_recipe without fp8: exit $code: $err"
run "$stepsim" run scenarios/job-gpt3-1024xa100.yaml --set job_step.layout.fp8=true
[[ $code == 2 && "$err" == "error: --set: job_step.layout.fp8: a100-sxm-80gb has no FP8 tensor cores (no FP8 peak): its GEMMs run in BF16 only" ]] ||
  fail "fp8 on A100: exit $code: $err"
# ... and in a measured run's row, at its line and column.
awk -F, 'NR <= 10 {print} NR == 11 {print $0}' validation/megatron_sc21.csv | sed '10s/$/,fp8/; 11s/$/,1/' >"$tmp/a100-fp8.csv"
run "$stepsim" check-against "$tmp/a100-fp8.csv"
[[ $code == 2 && "$err" == "error: $tmp/a100-fp8.csv:11: fp8: a100-sxm-80gb has no FP8 tensor cores (no FP8 peak): its GEMMs run in BF16 only" ]] ||
  fail "fp8 on A100 in a CSV row: exit $code: $err"
run "$stepsim" run scenarios/job-deepseek-v3-2048xh800.yaml --set job_step.layout.fp8_recipe=rowwise
[[ $code == 2 && "$err" == *"job_step.layout.fp8_recipe: unknown fp8_recipe 'rowwise' (tensorwise, blockwise, mxfp8 or nvfp4)" ]] ||
  fail "fp8_recipe rowwise: exit $code: $err"
# FP8 on Blackwell (docs/precision.md "FP8 on Blackwell"): Llama 3.1 405B on 128 B200 as NeMo runs it,
# tensorwise beside MXFP8 and BF16, at the B200 calibration (measured 661 and 624 tokens/s per GPU).
"$stepsim" compare scenarios/job-llama31-405b-fp8-128xb200.yaml >"$tmp/b200.txt"
fig "base 6.144 s +0.0% 667 37.4% 126.7 / 167.0 yes 7.0% 0.20 s (PP 0.05 DP/ZeRO 0.14)" "$tmp/b200.txt"
fig "mxfp8 6.520 s +6.1% 628 35.2% 139.3 / 167.0 yes 8.5% 0.31 s (PP 0.05 DP/ZeRO 0.26)" "$tmp/b200.txt"
fig "bf16 7.743 s +26.0% 529 59.3% 151.6 / 167.0 yes 7.6% 0.31 s (PP 0.05 DP/ZeRO 0.25)" "$tmp/b200.txt"
"$stepsim" run scenarios/job-llama31-405b-fp8-128xb200.yaml --set job_step.layout.fp8_recipe=mxfp8 \
  --set 'job_step.variants={}' --json >"$tmp/b200-mx.json"
python3 - "$tmp/b200-mx.json" <<'PY' || fail "MXFP8 on B200: JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["layout"]["fp8_recipe"] == "mxfp8", d["layout"]
# Blackwell keeps no transpose for tensorwise (1 B a weight); MXFP8 a row-wise and a column-wise
# copy with an E8M0 scale per 32 values (2 x 33 / 32 B): the same weights, 2.0625x the bytes.
PY
"$stepsim" run scenarios/job-llama31-405b-fp8-128xb200.yaml --json >"$tmp/b200-cs.json"
python3 - "$tmp/b200-cs.json" "$tmp/b200-mx.json" <<'PY' || fail "FP8 weight copies on B200"
import json, sys
cs, mx = (json.load(open(f))["memory_bytes"]["fp8_weight_copies"] for f in sys.argv[1:])
assert cs > 0 and mx * 32 == cs * 66, (cs, mx)
PY
# MXFP8 needs Blackwell: refused on an H100 at its key, in a scenario and in a measured run's row.
run "$stepsim" run scenarios/job-llama3-70b-fp8-64xh100.yaml --set job_step.layout.fp8_recipe=mxfp8
[[ $code == 2 && "$err" == "error: --set: job_step.layout.fp8_recipe: mxfp8 needs Blackwell's block-scaled tensor cores (b200, gb200, gb300); h100-sxm is hopper: tensorwise or blockwise would run" ]] ||
  fail "mxfp8 on H100: exit $code: $err"
sed '26s/,b200,8,/,h100-sxm,8,/' validation/nemo_llama3_b200_fp8.csv | sed '27s/,b200,8,/,h100-sxm,8,/' >"$tmp/mx-h100.csv"
run "$stepsim" check-against "$tmp/mx-h100.csv"
[[ $code == 2 && "$err" == "error: $tmp/mx-h100.csv:27: fp8_recipe: mxfp8 needs Blackwell's block-scaled tensor cores (b200, gb200, gb300); h100-sxm is hopper: tensorwise or blockwise would run" ]] ||
  fail "mxfp8 on H100 in a CSV row: exit $code: $err"
# An accelerator's architecture can be set over its preset's (a B200 told it is a Hopper keeps
# the transposes and refuses MXFP8); an unknown one is refused at its key.
hopper=(--set 'job_step.hardware={preset: b200, gpus: 128, accelerator: {architecture: hopper}}')
run "$stepsim" run scenarios/job-llama31-405b-fp8-128xb200.yaml "${hopper[@]}" --set 'job_step.variants={}' \
  --set job_step.layout.fp8_recipe=mxfp8
[[ $code == 2 && "$err" == *"b200 is hopper: tensorwise or blockwise would run" ]] || fail "architecture hopper: $code $err"
run "$stepsim" run scenarios/job-llama31-405b-fp8-128xb200.yaml \
  --set 'job_step.hardware={preset: b200, gpus: 128, accelerator: {architecture: volta}}'
[[ $code == 2 && "$err" == *"job_step.hardware.accelerator.architecture: unknown architecture 'volta' (ampere, ada, hopper or blackwell)" ]] ||
  fail "architecture volta: $code $err"
"$stepsim" run scenarios/job-llama31-405b-fp8-128xb200.yaml "${hopper[@]}" --set 'job_step.variants={}' --json \
  >"$tmp/b200-hopper.json"
python3 - "$tmp/b200-cs.json" "$tmp/b200-hopper.json" <<'PY' || fail "architecture hopper: transposes"
import json, sys
bw, hop = (json.load(open(f))["memory_bytes"]["fp8_weight_copies"] for f in sys.argv[1:])
assert hop == 2 * bw, (bw, hop)
PY

# The Llama-70B job and its tp-overlap variant as measured-runs CSV rows (column overlap_tp);
# overlap_tp without sp is refused at the row and column.
cols="src,tbl,model,L,h,heads,kv,head_dim,ffn,vocab,seq,mlp,tied,hw,ngpu,tp,pp,dp,vpp,sched,mbs,gbs,recomp,sp,zero"
cols+=",overlap_tp,metric,value,fit"
row="L,a,Llama-70B,80,8192,64,8,128,28672,128256,8192,swiglu,0,h100-sxm,64,8,4,2,5,interleaved-1f1b,1,128,selective"
{ echo "$cols"; echo "$row,1,1,0,tokens_per_gpu_s,1053,0"; echo "$row,1,1,1,tokens_per_gpu_s,1177,0"; } >"$tmp/tpo.csv"
"$stepsim" check-against "$tmp/tpo.csv" --efficiency 0.7,0.55,0.8,0.8,0.8,0.2 >"$tmp/tpo-check.txt"
fig "2 a Llama-70B 64 GPUs 1053 tok/s 1052 -0.1% held out" "$tmp/tpo-check.txt"
fig "3 a Llama-70B 64 GPUs 1177 tok/s 1175 -0.2% held out" "$tmp/tpo-check.txt"
echo "$row,0,1,1,tokens_per_gpu_s,1184,0" >>"$tmp/tpo.csv"
run "$stepsim" check-against "$tmp/tpo.csv" --efficiency 0.7,0.55,0.8,0.8,0.8,0.2
refused "tpo.csv:4: overlap_tp: pipelines the TP all-gathers"
{ echo "$cols,expert_tp"; echo "$row,1,1,0,tokens_per_gpu_s,1059,0,1"; } >"$tmp/etp.csv"
run "$stepsim" check-against "$tmp/etp.csv" --efficiency 0.7,0.55,0.8,0.8,0.8,0.2
refused "etp.csv:2: expert_tp: expert_tp splits routed experts: the model has none"
# CP communication (docs/layouts.md "Context-parallel communication"): the long-context job gathered,
# and by heads on a layout whose heads divide; the JSON names it; heads that do not divide refused.
"$stepsim" run scenarios/job-long-context.yaml --set job_step.layout.cp_comm=all_gather >"$tmp/cp-ag.txt"
has "cp 4 (all_gather)" "$tmp/cp-ag.txt"
fig "step time 30.628 s" "$tmp/cp-ag.txt"
fig "exposed CP 1.467 s" "$tmp/cp-ag.txt"
"$stepsim" run scenarios/job-long-context.yaml --set job_step.layout.cp_comm=a2a --set job_step.layout.tp=2 \
  --set job_step.layout.dp=4 --json >"$tmp/cp-a2a.json"
has '"comm": "a2a"' "$tmp/cp-a2a.json"
has '"step_time_ns": 28267793665' "$tmp/cp-a2a.json"
run "$stepsim" run scenarios/job-long-context.yaml --set job_step.layout.cp_comm=a2a
refused "error: --set: job_step.layout.cp_comm: cp_comm a2a splits the heads over tp x cp = 4 x 4 = 16 ranks"
# ... blamed at a variant's cp_comm, its own line, not the base's cp.
{ sed '/^  variants:/,$d' scenarios/job-long-context.yaml; printf '  variants:\n    ulysses: {layout: {cp_comm: a2a}}\n'; } >"$tmp/ulysses.yaml"
run "$stepsim" compare "$tmp/ulysses.yaml"
refused "ulysses.yaml:$(grep -n 'ulysses:' "$tmp/ulysses.yaml" | cut -d: -f1): job_step.variants.ulysses.layout.cp_comm: cp_comm a2a splits the heads"
"$stepsim" compare scenarios/job-long-context.yaml >"$tmp/cp-cmp.txt"
fig "contiguous 45.132 s +53.4% 1452" "$tmp/cp-cmp.txt"
fig "all-gather 30.628 s +4.1% 2140 34.9% 26.9 / 74.5 yes 0.2% 3.17 s (TP 1.64 DP/ZeRO 0.06 CP 1.47)" "$tmp/cp-cmp.txt"
fig "tp2-a2a 28.268 s -3.9% 2318 37.8% 50.9 / 74.5 yes 0.2% 0.92 s (TP 0.54 DP/ZeRO 0.07 CP 0.31)" "$tmp/cp-cmp.txt"
# Named attention kernels on Hopper (docs/attention.md "Attention kernels"): FlashAttention-2 at 0.63 and
# 0.61 of cuDNN's long-sequence speed (forward, backward), FlashAttention-3 at 1.17 and 1.09x; the
# header names the kernel, the JSON too.
fig "flash2 42.451 s +44.3% 1544 25.2% 26.9 / 74.5 yes 0.2% 1.70 s (TP 1.64 DP/ZeRO 0.06)" "$tmp/cp-cmp.txt"
fig "flash3 27.161 s -7.7% 2413 39.4% 26.9 / 74.5 yes 0.2% 1.70 s (TP 1.64 DP/ZeRO 0.06)" "$tmp/cp-cmp.txt"
"$stepsim" run scenarios/job-long-context.yaml --set job_step.layout.attention=flash2 >"$tmp/fa2.txt"
fig "recompute full, sequence parallel, FlashAttention-2$" "$tmp/fa2.txt"
# One layer's passes by kind of kernel (docs/attention.md, "Attention kernels"): the attention is most of
# it at 128K tokens, a full recompute's rerun in the backward; --json gives the parts.
has "^one layer on one GPU, one micro-batch (ms)$" "$tmp/fa2.txt"
fig "forward 4.66 25.90 0.48 2.27 33.31" "$tmp/fa2.txt"
fig "backward 14.50 93.35 1.19 3.41 112.45" "$tmp/fa2.txt"
# The kernel under the layer table (docs/attention.md "Attention kernels"): what runs, its head
# dimension, the keys a query attends, CP's ring calls, and the share of the BF16 peak it reaches:
# FlashAttention-2 at 0.55 x 0.63 x 512 / (512 + 0.5 + 4 x 1.1) forward.
has "^attention: FlashAttention-2, head dim 128, 65,537 keys a query in 4 calls (CP's ring): 34.3 % of the BF16 peak forward, 33.0 % backward$" "$tmp/fa2.txt"
python3 -c 'print(round(100 * 0.55 * 0.63 * (65536.5 / 128) / (65536.5 / 128 + 0.5 + 4 * 1.1), 1))' | grep -qx 34.3 || fail "FlashAttention-2's share"
"$stepsim" run scenarios/job-long-context.yaml --set job_step.model.head_dim=64 >"$tmp/hd64.txt"
has "^attention: cuDNN's fused attention, head dim 64, 65,537 keys a query in 4 calls (CP's ring): 38.7 % of the BF16 peak forward, 44.7 % backward$" "$tmp/hd64.txt"
"$stepsim" run scenarios/job-long-context.yaml --set job_step.layout.cp_comm=all_gather --json >"$tmp/ag.json"
python3 - "$tmp/ag.json" <<'PY' || fail "attention_rate"
import json, sys
a = json.load(open(sys.argv[1]))["attention_rate"]
assert (a["kernel"], a["head_dim"], a["keys_per_query"], a["calls"]) == ("cudnn", 128, 65536.5, 1), a
t = 65536.5 / 128
assert abs(a["forward"] - 0.55 * t / (t + 0.5 + 1.0)) < 1e-12 and abs(a["backward"] - 0.55 * t / (t + 0.5 + 3.0)) < 1e-12, a
PY
"$stepsim" run scenarios/job-gpt3-1024xa100.yaml >"$tmp/gpt3-attn.txt"
has "^attention: unfused attention (batched GEMMs), head dim 128, 2,048 keys a query: 35.5 % of the BF16 peak$" "$tmp/gpt3-attn.txt"
# A hybrid pattern's attention layers; a model of Gated DeltaNet layers only has no line, no key.
"$stepsim" run scenarios/job-nemotron-h-56b-256xh100.yaml >"$tmp/nh-attn.txt"
has "^attention: cuDNN's fused attention, head dim 128, 4,097 keys a query: 52.5 % of the BF16 peak forward, 49.6 % backward$" "$tmp/nh-attn.txt"
"$stepsim" run scenarios/job-qwen3-next-80b-128xh100.yaml --set job_step.model.linear_attention.full_attention_interval=0 \
  >"$tmp/gdn-only.txt"
grep -q "^attention:" "$tmp/gdn-only.txt" && fail "a model without softmax attention named its kernel"
"$stepsim" run scenarios/job-qwen3-next-80b-128xh100.yaml --set job_step.model.linear_attention.full_attention_interval=0 \
  --json | grep -q '"attention_rate"' && fail "a model without softmax attention has attention_rate"
"$stepsim" run scenarios/job-long-context.yaml --set job_step.layout.attention=flash2 --json >"$tmp/fa2.json"
python3 - "$tmp/fa2.json" <<'PY' || fail "layer_parts_ms"
import json, sys
d = json.load(open(sys.argv[1]))
p = d["layer_parts_ms"]
for pass_, total in (("forward", d["layer_forward_ms"]), ("backward", d["layer_backward_ms"])):
    assert abs(sum(p[pass_].values()) - total) < 1e-9 * total, (pass_, p[pass_], total)
assert round(p["forward"]["attention"], 2) == 25.90 and p["forward"]["host"] == 0, p
PY
"$stepsim" run scenarios/job-nemotron-h-56b-256xh100.yaml >"$tmp/nh-layer.txt"
has "^the mean layer on one GPU, one micro-batch (ms)$" "$tmp/nh-layer.txt"
has "GEMMs  attention, scan  memory-bound" "$tmp/nh-layer.txt"
"$stepsim" run scenarios/job-qwen3-next-80b-128xh100.yaml >"$tmp/q3n-layer.txt"
has "^one softmax layer on one GPU, one micro-batch (ms)$" "$tmp/q3n-layer.txt"
has "^ *GEMMs  attention  memory-bound  host    EP  total$" "$tmp/q3n-layer.txt"
fig "forward 0.92 0.30 0.39 0.85 2.69 5.14" "$tmp/q3n-layer.txt"
"$stepsim" run scenarios/job-long-context.yaml --set job_step.layout.attention=flash3 --json >"$tmp/fa3.json"
layout_key "$tmp/fa3.json" attention '"flash3"'
"$stepsim" run scenarios/job-long-context.yaml --json >"$tmp/fa-own.json"
layout_key "$tmp/fa-own.json" attention absent
run "$stepsim" run scenarios/job-long-context.yaml --set job_step.layout.cp_comm=ring
[[ $code == 2 && "$err" == "error: --set: job_step.layout.cp_comm: unknown cp_comm 'ring' (p2p, all_gather or a2a)" ]] ||
  fail "unknown cp_comm: exit $code: $err"
# A search with TP overlap in its base applies it where SP is on, and says so.
cat >"$tmp/tpo-search.yaml" <<'YAML'
name: tpo-search
search:
  model: {name: d, layers: 8, hidden: 8192, ffn: 28672, heads: 64, kv_heads: 8, head_dim: 128, vocab: 128256, seq: 8192}
  hardware: {preset: h100-sxm, gpus: 16}
  layout: {tp: [4, 8], pp: 1, zero: 1, micro_batch: 1, global_batch: 64, recompute: [selective],
           sequence_parallel: [true, false], overlap: {tp: true}}
YAML
"$stepsim" search "$tmp/tpo-search.yaml" >"$tmp/tpo-search.txt"
has "TP communication overlapped with the GEMMs where sequence parallel" "$tmp/tpo-search.txt"
"$stepsim" search "$tmp/tpo-search.yaml" --set search.layout.cp_comm=a2a >"$tmp/a2a-search.txt"
has "context parallelism by a2a" "$tmp/a2a-search.txt"
fig "1 16 4 1 1 4 1 - 1 selective yes 2.783 s 60.2% 24.9 2.2% 0.06 s (DP 0.06)" "$tmp/tpo-search.txt"
fig "4 16 8 1 1 2 1 - 1 selective no 3.524 s 47.6% 19.2 1.2% 0.50 s (TP 0.45 DP 0.04)" "$tmp/tpo-search.txt"
# The whole DeepSeek-V3 (docs/job.md): 61 layers in 16 DualPipe stages of 1 and 4 layers, MLA,
# dense first layers, a prediction module; an MLA key without its siblings is refused at the key.
"$stepsim" run scenarios/job-deepseek-v3-2048xh800.yaml >"$tmp/dsv3.txt"
has "tp 1 pp 16 (layers per chunk 1, 15 x 4) dp 128 ep 64" "$tmp/dsv3.txt"
fig "step time 18.253 s" "$tmp/dsv3.txt"
has "recompute full, FP8 GEMMs (blockwise scaling), Adam moments in BF16" "$tmp/dsv3.txt"
fig "tokens/s per GPU 1683" "$tmp/dsv3.txt"
# With the validation's H100 calibration (an H800 is an H100 with less bandwidth; docs/job.md).
h100=()
for kv in gemm=0.814 attention=0.555 memory=0.803 fabric=0.82 network=0.804 experts=0.713; do
  h100+=(--set "job_step.hardware.efficiency.$kv")
done
"$stepsim" run scenarios/job-deepseek-v3-2048xh800.yaml "${h100[@]}" >"$tmp/dsv3-h100.txt"
fig "tokens/s per GPU 1653" "$tmp/dsv3-h100.txt"
# ... and with its FP8 share (Transformer Engine's blockwise grouped GEMMs, not DeepSeek's kernels).
"$stepsim" run scenarios/job-deepseek-v3-2048xh800.yaml "${h100[@]}" --set job_step.hardware.efficiency.fp8_blockwise=0.604 \
  >"$tmp/dsv3-h100-fp8.txt"
fig "tokens/s per GPU 1299" "$tmp/dsv3-h100-fp8.txt"
# ... and with its MoE host time (a Megatron-Core run's, 1.34 ms a pass at its 4 experts a GPU) instead.
"$stepsim" run scenarios/job-deepseek-v3-2048xh800.yaml "${h100[@]}" --set job_step.hardware.efficiency.moe_host_per_expert=335us \
  >"$tmp/dsv3-h100-host.txt"
fig "tokens/s per GPU 1495" "$tmp/dsv3-h100-host.txt"
run "$stepsim" run scenarios/job-deepseek-v3-2048xh800.yaml --set 'job_step.model.mla={kv_lora_rank: 512}'
refused "job_step.model.mla.qk_nope_head_dim: missing"
run "$stepsim" run scenarios/job-deepseek-v3-2048xh800.yaml --set job_step.layout.zero=3
refused "job_step.layout.zero: multi-token prediction (mtp_layers) is modelled on a pipeline's last chunk"
# The same run as a measured-runs CSV row (MoE, MLA and MTP columns), at the preset's efficiencies.
cols="src,tbl,model,L,h,heads,ffn,vocab,seq,mlp,tied,experts,top_k,expert_ffn,shared_expert_ffn,dense_layers,node_limit"
cols+=",mtp_layers,q_lora_rank,kv_lora_rank,qk_nope_head_dim,qk_rope_head_dim,v_head_dim,hw,ngpu,tp,pp,dp,ep"
cols+=",first_chunk_layers,sched,mbs,gbs,recomp,zero,fp8,ep_dispatch,fp8_dispatch,adam_moment_bytes,metric,value,fit"
cols+=",dropout"
printf '%s\n%s\n' "$cols" "DSV3,Sec 1,DeepSeek-V3,61,7168,128,18432,129280,4096,swiglu,0,256,8,2048,2048,3,4,1,1536,512,128,64,128,h800,2048,1,16,128,64,1,dualpipe,1,15360,full,1,1,per_node,1,2,tokens_per_gpu_s,1543,0,0" >"$tmp/dsv3.csv"
"$stepsim" check-against "$tmp/dsv3.csv" --efficiency 0.7,0.55,0.8,0.8,0.8,0.2 >"$tmp/dsv3-check.txt"
fig "2 Sec 1 DeepSeek-V3 2048 GPUs 1543 tok/s 1683 +9.1% held out" "$tmp/dsv3-check.txt"
sed 's/,256,8,2048,2048,3,4,1,/,0,8,2048,2048,3,4,1,/' "$tmp/dsv3.csv" >"$tmp/dsv3-dense.csv"
run "$stepsim" check-against "$tmp/dsv3-dense.csv" --efficiency 0.7,0.55,0.8,0.8,0.8,0.2
refused "dsv3-dense.csv:2: top_k: needs experts (a mixture-of-experts model)"
# The same tokens sent as Megatron-Core's all-to-all does: every routed copy in BF16 (docs/job.md).
"$stepsim" run scenarios/job-moe-dualpipe-h800.yaml --set job_step.layout.ep_dispatch=all_to_all \
  --set job_step.layout.fp8_dispatch=false --json >"$tmp/moe-a2a.json"
has '"ep_dispatch": "all_to_all"' "$tmp/moe-a2a.json"
has '"step_time_ns": 11029894753' "$tmp/moe-a2a.json"
# Its first two layers dense (docs/job.md): no all-to-all there, more weights on device 0.
"$stepsim" run scenarios/job-moe-dualpipe-h800.yaml --set job_step.model.dense_layers=2 >"$tmp/moe-dense.txt"
fig "step time 5.669 s" "$tmp/moe-dense.txt"
fig "weights 7.15" "$tmp/moe-dense.txt"
run "$stepsim" run scenarios/job-moe-dualpipe-h800.yaml --set job_step.model.dense_layers=32
refused "job_step.model.dense_layers: 32 dense layers leave none of the 32 layers an MoE layer"
run "$stepsim" run scenarios/job-moe-dualpipe-h800.yaml --set job_step.layout.ep=128
refused "job_step.layout.ep: ep 128 does not divide dp x cp = 64 (experts are sharded over data-parallel ranks; would fit: 1, 2, 4, 8, 16, 32, 64)"
# Uneven chunks (docs/layouts.md): Llama 3 405B's 126 layers on 16 devices x 8 chunks, the ends
# holding only the embedding and the head; the 16,384-GPU row of the paper's Table 4 (DP 128,
# 16 micro-batches) is 7.0 % slower per GPU, as the paper's 430 -> 400 TFLOP/s.
"$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml >"$tmp/l405.txt"
has "tp 8 pp 16 (v 8) (layers per chunk 0, 126 x 1, 0) dp 64" "$tmp/l405.txt"
fig "step time 13.648 s" "$tmp/l405.txt"
fig "model TFLOP/s per GPU 378.8" "$tmp/l405.txt"
fig "memory per GPU (pipeline rank 1 of 16, the most loaded)" "$tmp/l405.txt"
# ... and every rank beneath it: rank 0, without the layers of its empty first chunk, holds less.
fig "^ 0 5.68 11.37 0.53 3.53 0.50 21.61$" "$tmp/l405.txt"
fig "^ 1 5.94 11.88 0.56 4.47 0.50 23.33$" "$tmp/l405.txt"
[[ $(sed -n '/^memory by pipeline rank (GiB)$/,/^$/p' "$tmp/l405.txt" | grep -c '^ *[0-9]') == 16 ]] ||
  fail "16 pipeline ranks' memory"
"$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml --set job_step.hardware.gpus=16384 \
  --set job_step.layout.dp=128 >"$tmp/l405-16k.txt"
fig "model TFLOP/s per GPU 352.2" "$tmp/l405-16k.txt"
"$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml --json >"$tmp/l405.json"
python3 - "$tmp/l405.json" <<'PY' || fail "chunk_layers and every rank's memory in the JSON"
import json, sys
j = json.load(open(sys.argv[1]))
c = j["layout"]["chunk_layers"]
assert len(c) == 128 and c[0] == 0 and c[-1] == 0 and set(c[1:-1]) == {1}, c
ranks, most = j["memory_by_rank_bytes"], j["memory_bytes"]
assert [r["pipeline_rank"] for r in ranks] == list(range(16))
assert all(r["total"] == sum(r[k] for k in ("weights", "gradients", "optimizer", "activations", "buffers")) for r in ranks)
top = max(ranks, key=lambda r: r["total"])
assert top["total"] == most["total"] and top["pipeline_rank"] == most["pipeline_rank"] == 1, (top, most)
PY
run "$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml --set job_step.layout.virtual_stages=1 \
  --set job_step.layout.first_chunk_layers=6 --set job_step.layout.last_chunk_layers=6
refused "job_step.layout.first_chunk_layers: the 126 layers less 12 at the ends leave 114 for the other 14 chunks: not an equal share (would fit: ends holding 0, 14, 28, 42, 56, 70, 84, 98, 112 layers together)"
# Partial recompute (docs/layouts.md): 1F1B with 7 | 14 x 8 | 7 layers, the first 4 of each chunk recomputed.
l405v1=(--set job_step.layout.virtual_stages=1 --set job_step.layout.first_chunk_layers=7 --set job_step.layout.last_chunk_layers=7)
"$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml "${l405v1[@]}" --set job_step.layout.recompute_layers=4 >"$tmp/l405-part.txt"
has "recompute full (the first 4 layers of each chunk)" "$tmp/l405-part.txt"
fig "step time 16.240 s" "$tmp/l405-part.txt"
fig "activations (peak) 31.67" "$tmp/l405-part.txt"
run "$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml --set job_step.layout.recompute=none --set job_step.layout.recompute_layers=2
refused "job_step.layout.recompute_layers: recomputes the first layers of each chunk whole: needs recompute: full"
# recompute_layers: auto, the fewest layers of each chunk that fit: at PP 2 (v 8, the ends empty) the
# analytic memory, a lower bound, takes fewer than fit at the simulated peak, and the run takes one
# more at a time: 7, as given by hand; 6 is over at the simulated peak (74.7 GiB). (The gradients
# reduce-scattered every micro-batch: accumulated whole they alone take 94.5 GiB.) With one layer
# per chunk it is all or nothing (every layer); with the ends at 7 and v 1, one.
p2=(--set job_step.layout.pp=2 --set job_step.layout.dp=512 --set job_step.layout.zero2_accumulate=sharded)
"$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml "${p2[@]}" --set job_step.layout.recompute_layers=auto >"$tmp/l405-auto.txt"
has "recompute full (the first 7 layers of each chunk, the fewest that fit)" "$tmp/l405-auto.txt"
fig "step time 15.540 s" "$tmp/l405-auto.txt"
fig "total 67.69" "$tmp/l405-auto.txt"
"$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml "${p2[@]}" --set job_step.layout.recompute_layers=7 >"$tmp/l405-7.txt"
diff <(sed 1,2d "$tmp/l405-auto.txt") <(sed 1,2d "$tmp/l405-7.txt") || fail "recompute_layers auto is not 7"
"$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml "${p2[@]}" --set job_step.layout.recompute_layers=auto --json >"$tmp/l405-auto.json"
layout_key "$tmp/l405-auto.json" recompute_layers 7
layout_key "$tmp/l405-auto.json" recompute_layers_auto true
"$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml "${p2[@]}" --set job_step.layout.recompute_layers=7 --json >"$tmp/l405-7.json"
layout_key "$tmp/l405-7.json" recompute_layers 7
layout_key "$tmp/l405-7.json" recompute_layers_auto absent
"$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml --json >"$tmp/l405-all.json"
layout_key "$tmp/l405-all.json" recompute_layers absent
run "$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml "${p2[@]}" --set job_step.layout.recompute_layers=6
refused "job_step.layout: needs 74.7 GiB per GPU at the simulated peak (pipeline rank 1)"
"$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml --set job_step.layout.recompute_layers=auto >"$tmp/l405-all.txt"
has "recompute full (every layer: the fewest that fit)" "$tmp/l405-all.txt"
"$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml "${l405v1[@]}" --set job_step.layout.recompute_layers=auto >"$tmp/l405-none.txt"
has "recompute full (the first layer of each chunk, the fewest that fit)" "$tmp/l405-none.txt"
fig "step time 14.360 s" "$tmp/l405-none.txt"
run "$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.recompute_layers=auto
refused "job_step.layout.recompute_layers: auto recomputes the fewest layers of each chunk that fit, whole: needs recompute: full"
# The search keeps the ends: auto pp and v are those whose other chunks share the rest evenly.
cat >"$tmp/s405.yaml" <<EOF
name: s405
search:
  model: {file: $PWD/scenarios/models/llama3-405b.yaml}
  hardware: {preset: h100-sxm, gpus: 8192}
  layout: {tp: 8, pp: auto, virtual_stages: auto, first_chunk_layers: 0, last_chunk_layers: 0, micro_batch: 1,
           recompute: [full], zero: [2], zero2_accumulate: whole, sequence_parallel: true, global_batch: 2048}
  top: 3
EOF
"$stepsim" search "$tmp/s405.yaml" >"$tmp/s405.txt"
fig "28 layouts considered: 14 pruned by divisibility" "$tmp/s405.txt"
fig "1 8192 8 16 8 64 2 interleaved-1f1b 1 full yes 13.648 s 38.3%" "$tmp/s405.txt"
# A CSV's names are read as the YAML's: an unknown attention kernel is refused (it was read as flash).
awk -F, 'NR == 1 {print $0 ",attention"} NR == 2 {print $0 ",unfsued"}' "$tmp/dsv3.csv" >"$tmp/dsv3-attn.csv"
run "$stepsim" check-against "$tmp/dsv3-attn.csv" --efficiency 0.7,0.55,0.8,0.8,0.8,0.2
refused "dsv3-attn.csv:2: attention: unknown attention kernel 'unfsued' (flash, flash2, flash3 or unfused)"
# A search's recompute_layers applies to its full-recompute layouts; with none of them it is refused.
sed 's/recompute: \[full\]/recompute: [none], recompute_layers: 2/' "$tmp/s405.yaml" >"$tmp/s405-none.yaml"
run "$stepsim" search "$tmp/s405-none.yaml"
refused "search.layout.recompute_layers: recomputes the first layers of each chunk whole: the recompute list has no full"
sed 's/recompute: \[full\]/recompute: [full], recompute_layers: 1/' "$tmp/s405.yaml" >"$tmp/s405-part.yaml"
"$stepsim" search "$tmp/s405-part.yaml" >"$tmp/s405-part.txt"
fig "1 8192 8 16 8 64 2 interleaved-1f1b 1 full yes 13.648 s 38.3%" "$tmp/s405-part.txt"
run "$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml --set job_step.layout.first_chunk_layers=-1
refused "job_step.layout.first_chunk_layers"
"$stepsim" run scenarios/job-gpt3-1024xa100.yaml --json >"$tmp/gpt3.json"
has "\"step_time_ns\": 28160618531" "$tmp/gpt3.json"
# overlap.tp_wgrad (docs/overlap.md "TP in the backward"): without SP, the backward's TP all-reduces
# wait for Megatron-LM of early 2021 (28.161 -> 28.685 s, exposed TP 1.802 -> 2.702 s); the JSON
# names it where it applies; a value not true or false refused at the key.
"$stepsim" run scenarios/job-gpt3-1024xa100.yaml >"$tmp/gpt3-async.txt"
"$stepsim" run scenarios/job-gpt3-1024xa100.yaml --set job_step.layout.overlap.tp_wgrad=false >"$tmp/gpt3-sync.txt"
fig "step time 28.161 s" "$tmp/gpt3-async.txt"
fig "exposed TP 1.802 s" "$tmp/gpt3-async.txt"
fig "step time 28.685 s" "$tmp/gpt3-sync.txt"
fig "exposed TP 2.702 s" "$tmp/gpt3-sync.txt"
! grep -q overlap_tp_wgrad "$tmp/gpt3.json" || fail "overlap_tp_wgrad named at its default"
"$stepsim" run scenarios/job-gpt3-1024xa100.yaml --set job_step.layout.overlap.tp_wgrad=false --json >"$tmp/gpt3-sync.json"
layout_key "$tmp/gpt3-sync.json" overlap_tp_wgrad false
run "$stepsim" run scenarios/job-gpt3-1024xa100.yaml --set job_step.layout.overlap.tp_wgrad=maybe
refused "job_step.layout.overlap.tp_wgrad: 'maybe' is not true or false"
has '"by_kind"' "$tmp/gpt3.json"
has '"pipeline_rank": 0' "$tmp/gpt3.json"
"$stepsim" run scenarios/job-llama70b-64xh100.yaml --trace "$tmp/trace.json" >/dev/null
has '"name":"d0 collectives"' "$tmp/trace.json"
has '"name":"d3 dp"' "$tmp/trace.json"
# (Their speed is measured in bench/job_step_bench.cpp, not here.)
# The design desk through the job path with the book's assumptions (40 % MFU, no contention):
# the book's 78.9 s (32 cards) and 52.8 s (48 cards); contention 0 is accepted, -0.1 is not.
book='job_step.hardware.efficiency={gemm: 0.56, attention: 0.56, contention: 0}'
"$stepsim" run scenarios/job-design-qwen3-4090.yaml --set "$book" >"$tmp/desk32.txt"
fig "step time 79.167 s" "$tmp/desk32.txt"
"$stepsim" run scenarios/job-design-qwen3-4090.yaml --set "$book" --set job_step.hardware.gpus=48 >"$tmp/desk48.txt"
fig "step time 52.980 s" "$tmp/desk48.txt"
fig "MFU 39.4%" "$tmp/desk48.txt"
run "$stepsim" run scenarios/job-design-qwen3-4090.yaml --set 'job_step.hardware.efficiency.contention=-0.1'
refused "contention: -0.1 is not a share of time"

# 2. Long context (docs/layouts.md): balanced CP chunks, the pairs per rank; resharding TP 4 -> 8.
"$stepsim" run scenarios/job-long-context.yaml >"$tmp/lc.txt"
fig "causal sequence of 131,072 tokens has s(s+1)/2 = 8,590,000,128 attention pairs; cp 4" "$tmp/lc.txt"
fig "0 0, 7 2,147,500,032 25.0% 536,887,296 6.3%" "$tmp/lc.txt"
fig "3 3, 4 2,147,500,032 25.0% 3,758,112,768 43.7%" "$tmp/lc.txt"
fig "balanced 2,147,500,032 pairs (1.00x the mean), contiguous 3,758,112,768 (1.75x); this layout: balanced" "$tmp/lc.txt"
fig "old shard 3,072 rows (24 MiB of weights); new shard 1,536 rows (12 MiB)" "$tmp/lc.txt"
fig "1 0 1536-3071 1,536 12 84" "$tmp/lc.txt"
"$stepsim" run scenarios/job-long-context.yaml --set job_step.layout.cp_split=contiguous >"$tmp/lc-con.txt"
bal_ms=$("$stepsim" run scenarios/job-long-context.yaml --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["step_time_ns"])')
con_ms=$("$stepsim" run scenarios/job-long-context.yaml --set job_step.layout.cp_split=contiguous --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["step_time_ns"])')
(( con_ms > bal_ms )) || fail "contiguous CP ($con_ms ns) should be slower than balanced ($bal_ms ns)"
has "this layout: contiguous" "$tmp/lc-con.txt"
# Without CP at TP 2 it is over memory: the narrowest CP that fits offered, over fewer DP ranks.
run "$stepsim" run scenarios/job-long-context.yaml --set job_step.layout.tp=2 --set job_step.layout.cp=1 \
  --set job_step.layout.dp=16
refused "job_step.layout: needs 126.2 GiB per GPU (weights 7.6, gradients 15.3, optimizer 2.9, activations 18.5, buffers 81.9) but h100-sxm has 74.5 GiB usable; would fit: cp: 4, dp: 4 (50.9 GiB)"
"$stepsim" run scenarios/job-long-context.yaml --json >"$tmp/lc.json"
python3 - "$tmp/lc.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["context_parallel"]
assert c["causal_pairs"] == 131072 * 131073 // 2, c["causal_pairs"]
assert [r["pairs"] for r in c["balanced"]] == [131072 * 131073 // 8] * 4
assert c["balanced"][1]["chunks"] == [1, 6]
assert d["reshard"]["from"] == 4 and d["reshard"]["to"] == 8
PY

# 3. DualPipe and DualPipe-V through the job path (a Llama-70B-shaped pipeline of 4 stages).
"$stepsim" run scenarios/job-llama70b-64xh100.yaml --set job_step.layout.virtual_stages=1 \
  --set job_step.layout.schedule=dualpipe-v --json >"$tmp/dpv.json"
"$stepsim" run scenarios/job-llama70b-64xh100.yaml --set job_step.layout.virtual_stages=1 \
  --set job_step.layout.schedule=1f1b --json >"$tmp/1f1b.json"
"$stepsim" run scenarios/job-llama70b-64xh100.yaml --set job_step.layout.virtual_stages=1 \
  --set job_step.layout.schedule=dualpipe --set job_step.allow_oom=true --json >"$tmp/dual.json"
# `run --schedule` on a job step sets its layout's schedule, as --set does (byte for byte); a
# scenario with no pipeline is refused at --schedule.
"$stepsim" run scenarios/job-llama70b-64xh100.yaml --set job_step.layout.virtual_stages=1 --schedule dualpipe-v \
  --json | cmp - "$tmp/dpv.json" || { echo "FAIL: run --schedule on a job step" >&2; exit 1; }
if "$stepsim" run scenarios/dp-buckets.yaml --schedule 1f1b >/dev/null 2>"$tmp/err.txt"; then exit 1; fi
grep -qx "error: --schedule: scenarios/dp-buckets.yaml has no pipeline to schedule (a pipeline or job_step scenario has)" \
  "$tmp/err.txt" || { cat "$tmp/err.txt"; echo "FAIL: --schedule without a pipeline" >&2; exit 1; }
python3 - "$tmp/dpv.json" "$tmp/1f1b.json" "$tmp/dual.json" <<'PY'
import json, sys
v, one, dual = (json.load(open(p)) for p in sys.argv[1:])
assert v["bubble"] < one["bubble"] and v["step_time_ns"] < one["step_time_ns"], (v["bubble"], one["bubble"])
assert dual["memory_bytes"]["weights"] == 2 * one["memory_bytes"]["weights"]
print("dualpipe: ok")
PY
# TP across nodes runs, with a warning on stderr.
"$stepsim" run scenarios/job-gpt3-1024xa100.yaml --set job_step.layout.tp=16 --set job_step.layout.dp=8 \
  --set job_step.allow_oom=true 2>"$tmp/tp16.err" >/dev/null
[[ "$(cat "$tmp/tp16.err")" == "warning: scenarios/job-gpt3-1024xa100.yaml: job_step.layout.tp: tp 16 spans 2 nodes of 8 GPUs: its collectives cross the network" ]] ||
  fail "tp 16: $(cat "$tmp/tp16.err")"
"$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.hardware.gpus=12 --set job_step.layout.global_batch=60 \
  2>"$tmp/gpus12.err" >/dev/null
[[ "$(cat "$tmp/gpus12.err")" == "warning: scenarios/job-fsdp-8.yaml: job_step.hardware.gpus: 12 GPUs fill 1 node of 8 and part of another; groups are placed as on full nodes" ]] ||
  fail "12 GPUs: $(cat "$tmp/gpus12.err")"
# A step on its preset's own efficiencies says so; on a calibration it does not (and is slower).
"$stepsim" run scenarios/job-fsdp-8.yaml >"$tmp/preset.txt"
has "^efficiencies: the h100-sxm preset's, not calibrated (stepsim calibrate fits them to measured runs; docs/calibration.md)$" "$tmp/preset.txt"
fig "step time 5.942 s" "$tmp/preset.txt"
"$stepsim" run scenarios/job-fsdp-8.yaml --set 'job_step.hardware={file: hardware/h100-calibrated.yaml, gpus: 8}' >"$tmp/calibrated.txt"
! grep -q "^efficiencies:" "$tmp/calibrated.txt" || fail "a calibrated step called uncalibrated"
fig "step time 6.725 s" "$tmp/calibrated.txt"
# A variant's preset over the base's hardware file replaces the file (gpus kept).
cat >"$tmp/preset-over-file.yaml" <<YAML
job_step:
  model: {file: $PWD/scenarios/models/llama3-8b.yaml}
  hardware: {file: $PWD/scenarios/hardware/h100-calibrated.yaml, gpus: 8}
  layout: {fsdp: true, micro_batch: 1, global_batch: 64}
  variants:
    preset: {hardware: {preset: h100-sxm}}
YAML
"$stepsim" compare "$tmp/preset-over-file.yaml" >"$tmp/preset-over-file.txt"
fig "base 6.794 s +0.0%" "$tmp/preset-over-file.txt"
fig "preset 6.012 s -11.5% 10901 56.7% 60.3 / 74.5 yes" "$tmp/preset-over-file.txt"
# The bubble's share owed to uneven stages: rank 7 of the FP8 Llama-3-70B step carries the LM head.
"$stepsim" run scenarios/job-llama3-70b-fp8-64xh100.yaml >"$tmp/uneven.txt"
fig "bubble (compute idle) 10.2%" "$tmp/uneven.txt"
has "^  uneven stages (rank 7)       7.5%$" "$tmp/uneven.txt"
"$stepsim" run scenarios/job-llama3-70b-fp8-64xh100.yaml --json >"$tmp/uneven.json"
python3 - "$tmp/uneven.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["busiest_rank"] == 7 and round(j["stage_imbalance"], 4) == 0.0753, j
assert 0 < j["stage_imbalance"] < j["bubble"], j
# The FP8 GEMMs' weight copies (docs/precision.md): 2 B per weight of each rank's linear modules, 10
# layers at TP 4 = 4,278,190,080 B on every rank, a part of the weights (the recipe keeps them in
# FP8: fp8_param_gather), not added again: with the embedding's BF16 weights on rank 0, as many
# bytes as its gradients; no buffers but rank 7's (the head's logits).
m = j["memory_bytes"]
assert m["fp8_weight_copies"] == 2 * 10 * (8192 * 10240 + 8192 * 8192 + 3 * 8192 * 28672) // 4, m
assert m["weights"] == m["gradients"] and m["buffers"] == 0 and m["fp8_weight_copies"] < m["weights"], m
ranks = j["memory_by_rank_bytes"]
assert [r["fp8_weight_copies"] for r in ranks] == [m["fp8_weight_copies"]] * 8, ranks
assert all(r["total"] == sum(r[k] for k in ("weights", "gradients", "optimizer", "activations", "buffers")) for r in ranks)
assert ranks[7]["buffers"] > 0 and [r["buffers"] for r in ranks[:7]] == [0] * 7, ranks
PY
fig "memory per GPU (pipeline rank 0 of 8, the most loaded)" "$tmp/uneven.txt"
# The weights kept in FP8 (fp8_param_gather): the FP8 copies are the weights, beside the
# embedding (rank 0) and the head (rank 7), which stay BF16.
has "^weights              4.47$" "$tmp/uneven.txt"
has "^  FP8 weights        3.98$" "$tmp/uneven.txt"
has "^buffers              0.00$" "$tmp/uneven.txt"
has "^total               62.39$" "$tmp/uneven.txt"
fig "rank weights of them FP8 gradients optimizer activations buffers total" "$tmp/uneven.txt"
fig "^ 0 4.47 3.98 4.47 13.42 40.02 0.00 62.39$" "$tmp/uneven.txt"
fig "^ 7 4.47 3.98 4.47 13.42 28.21 1.96 52.54$" "$tmp/uneven.txt"
# Blockwise (the scenario's variant): 2 x (1 + 4 / 16,384) B a weight; BF16 GEMMs keep none (the
# bf16 variant; a BF16 step's table has no such line and no such column).
"$stepsim" compare scenarios/job-llama3-70b-fp8-64xh100.yaml --json >"$tmp/l70-variants.json"
python3 - "$tmp/l70-variants.json" <<'PY'
import json, sys
v = {e["variant"]: e["memory_bytes"] for e in json.load(open(sys.argv[1]))}
w = 10 * (8192 * 10240 + 8192 * 8192 + 3 * 8192 * 28672) // 4
assert v["base"]["fp8_weight_copies"] == 2 * w == 4278190080, v["base"]
assert v["blockwise"]["fp8_weight_copies"] == 2 * w + 2 * 4 * w // (128 * 128) == 4279234560, v["blockwise"]
assert v["bf16"]["fp8_weight_copies"] == 0, v["bf16"]
PY
! grep -q "FP8" "$tmp/llama.txt" || fail "FP8 weight copies shown for BF16 GEMMs"
# Qwen3-235B in FP8: rank 1 holds 12 layers, attention at TP 2 and its EP rank's 4 experts (the
# router's weights stay BF16): 2 x 12 x 111,149,056 = 2,667,577,344 B.
"$stepsim" run scenarios/job-qwen3-235b-fp8-256xh100.yaml --json >"$tmp/q235-mem.json"
python3 - "$tmp/q235-mem.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
layer = (4096 * (8192 + 2 * 512) + 8192 * 4096) // 2 + 4 * 3 * 4096 * 1536
assert layer == 111149056
ranks = j["memory_by_rank_bytes"]
assert [r["fp8_weight_copies"] for r in ranks] == [2 * n * layer for n in (11, 12, 12, 12, 12, 12, 12, 11)], ranks
assert j["memory_bytes"]["pipeline_rank"] == 1 and j["memory_bytes"]["fp8_weight_copies"] == 2667577344, j["memory_bytes"]
PY
# Under 1 % it is not shown (a balanced pipeline), and a step without a pipeline has none.
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml >"$tmp/even.txt"
! grep -q "uneven stages" "$tmp/even.txt" || fail "uneven stages shown under 1 %"
"$stepsim" run scenarios/job-fsdp-8.yaml --json | grep -q stage_imbalance && fail "an FSDP step has stage_imbalance"
# compare --schedules on a job step: a row per schedule, each with chunks it can run (v = 1 for the
# one-chunk schedules under a 5-chunk interleaved step); a refusal of its own run is the error.
"$stepsim" compare scenarios/job-llama70b-64xh100.yaml --schedules 1f1b,dualpipe,interleaved-1f1b >"$tmp/sched.txt"
fig "1f1b v=1 16.115 s +3.6% 1017 46.2% 46.3 / 74.5 yes 7.8%" "$tmp/sched.txt"
fig "dualpipe v=1 13.528 s -13.1% 1211 55.0% 65.3 / 74.5 yes 4.8%" "$tmp/sched.txt"
fig "interleaved-1f1b 15.561 s +0.0%" "$tmp/sched.txt"
run "$stepsim" compare scenarios/job-gpt3-1024xa100.yaml --schedules dualpipe-v
refused "error: --schedules: dualpipe-v v=1: with blocking pipeline sends (overlap.pp false) schedule 'dualpipe-v' deadlocks"
run "$stepsim" compare scenarios/rl-stages.yaml --schedules 1f1b
refused "error: --schedules: a 'rl' scenario compares its variants, not schedules"
# A node or network other than the preset's is said under the heading (step and search); the
# preset's is not.
! grep -q "^node and network" "$tmp/preset.txt" || fail "the preset's network said as changed"
"$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.hardware.network.nics=2 \
  --set 'job_step.hardware.network.tiers=[{name: leaf, nodes: 16}, {name: spine, oversubscription: 3}]' >"$tmp/nics.txt"
has "^node and network, not the h100-sxm preset's: 8 GPUs a node on NVLink 450 GB/s per GPU; 2 NICs of 400 Gbit/s a node; tiers leaf 16 nodes, spine the rest 3:1$" "$tmp/nics.txt"
"$stepsim" search scenarios/search-first-try.yaml --set search.hardware.network.nics=4 >"$tmp/nics-search.txt"
has "^node and network, not the" "$tmp/nics-search.txt"
# NVFP4 (Llama 3 70B on 64 GB200, the GB200 table's shares): 4-bit GEMMs at the FP4 peak, the LM head
# in BF16; the same layout in MXFP8 measured 3,613 tokens/s. Refused without FP4 tensor cores.
"$stepsim" compare scenarios/job-llama3-70b-nvfp4-64xgb200.yaml >"$tmp/nvfp4.txt"
has "sequence parallel, NVFP4 GEMMs (the LM head in BF16)$" "$tmp/nvfp4.txt"
fig "base 7.351 s +0.0% 4457 20.0% 125.0 / 172.0 yes" "$tmp/nvfp4.txt"
fig "mxfp8 9.349 s +27.2% 3505 31.5% 125.3 / 172.0 yes" "$tmp/nvfp4.txt"
# The last 4 layers kept in BF16 (bf16_last_layers): all on the pipeline's last chunk, which then
# holds the others up (the bubble 7.2 -> 12.1 %).
fig "last4-bf16 7.922 s +7.8% 4136 18.6% 125.0 / 172.0 yes 12.1%" "$tmp/nvfp4.txt"
"$stepsim" run scenarios/job-llama3-70b-nvfp4-64xgb200.yaml --set job_step.layout.bf16_first_layers=1 \
  --set job_step.layout.bf16_last_layers=4 >"$tmp/bf16-layers.txt"
has ", NVFP4 GEMMs (the first layer, the last 4 layers and the LM head in BF16)$" "$tmp/bf16-layers.txt"
"$stepsim" run scenarios/job-llama3-70b-nvfp4-64xgb200.yaml --set job_step.layout.fp8_recipe=mxfp8 \
  --set job_step.layout.bf16_first_layers=1 --set job_step.layout.bf16_last_layers=1 --json >"$tmp/bf16-layers.json"
layout_key "$tmp/bf16-layers.json" bf16_first_layers 1
layout_key "$tmp/bf16-layers.json" bf16_last_layers 1
"$stepsim" run scenarios/job-llama3-70b-nvfp4-64xgb200.yaml --set job_step.layout.fp8_recipe=mxfp8 \
  --set job_step.layout.bf16_first_layers=1 --set job_step.layout.bf16_last_layers=1 >"$tmp/bf16-layers.txt"
has ", FP8 GEMMs (MXFP8 scaling; the first and last layers in BF16)$" "$tmp/bf16-layers.txt"
"$stepsim" run scenarios/job-llama3-70b-nvfp4-64xgb200.yaml --json >"$tmp/bf16-layers.json"
layout_key "$tmp/bf16-layers.json" bf16_last_layers absent
"$stepsim" search scenarios/job-llama3-70b-nvfp4-64xgb200.yaml --set job_step.layout.bf16_last_layers=4 \
  --set search.top=1 2>/dev/null >"$tmp/bf16-search.txt"
has "^NVFP4 GEMMs (the last 4 layers and the LM head in BF16); MFU against the FP4 peak$" "$tmp/bf16-search.txt"
run "$stepsim" run scenarios/job-llama3-70b-nvfp4-64xgb200.yaml --set job_step.layout.bf16_first_layers=40 \
  --set job_step.layout.bf16_last_layers=40
refused "job_step.layout.bf16_last_layers: bf16_first_layers + bf16_last_layers = 40 + 40 leave none of the 80 layers in FP8 (would fit: at most 79 together; or fp8: false)"
run "$stepsim" run scenarios/job-llama3-70b-nvfp4-64xgb200.yaml --set job_step.layout.bf16_last_layers=-1
refused "job_step.layout.bf16_last_layers:"
run "$stepsim" run scenarios/job-llama3-70b-fp8-64xh100.yaml --set job_step.layout.fp8_recipe=nvfp4
refused "error: --set: job_step.layout.fp8_recipe: nvfp4 needs FP4 tensor cores (b200, gb200, gb300); h100-sxm has none (no FP4 peak)"
# Sliding-window attention (Gemma 3 27B at 128K on 64 H100): 52 of 62 layers within 1,024 tokens;
# under CP's p2p each fetches the halo of 1,023 keys before its rank's chunks instead of the ring.
"$stepsim" compare scenarios/job-gemma3-27b-128k-64xh100.yaml >"$tmp/gemma.txt"
has "gemma3-27b (62 layers, 52 of them within a 1,024-token window, h 5376, seq 131072)" "$tmp/gemma.txt"
fig "base 38.559 s +0.0% 1700 33.8%" "$tmp/gemma.txt"
fig "no-window 68.548 s +77.8% 956 35.0%" "$tmp/gemma.txt"
fig "all-gather 48.390 s +25.5% 1354 26.9% 34.9 / 74.5 yes 0.4% 19.02 s (TP 8.76 DP/ZeRO 0.21 CP 10.05)" "$tmp/gemma.txt"
"$stepsim" run scenarios/job-gemma3-27b-128k-64xh100.yaml >"$tmp/gemma-run.txt"
fig "exposed CP 143.21 ms" "$tmp/gemma-run.txt"
has "52 windowed layers (1,024-token window): 133,693,952 pairs a sequence; the most loaded rank (balanced) 33,554,432 pairs and a halo of 2,046 keys held by other ranks" "$tmp/gemma-run.txt"
"$stepsim" run scenarios/job-gemma3-27b-128k-64xh100.yaml --json >"$tmp/gemma.json"
python3 - "$tmp/gemma.json" <<'PY' || fail "gemma --json: the windowed layers' CP shares"
import json, sys
w = json.load(open(sys.argv[1]))["context_parallel"]["windowed"]
assert (w["layers"], w["window"], w["pairs"]) == (52, 1024, 133693952), w
assert [r["halo"] for r in w["ranks"]] == [1023, 2046, 2046, 1023], w["ranks"]
PY
# Gated DeltaNet hybrids (Qwen3-Next-80B-A3B on 128 H100 as the ModelZoo ran it): at 4,096 tokens
# the hybrid a little slower than every layer softmax, at 32,768 faster; the model file is the
# scenario's model; the measured-runs row is the scenario's base.
"$stepsim" compare scenarios/job-qwen3-next-80b-128xh100.yaml >"$tmp/qnext.txt"
has "qwen3-next-80b-a3b (48 layers, 36 of them Gated DeltaNet, h 2048, seq 4096)" "$tmp/qnext.txt"
fig "base 1.507 s +0.0% 5436 12.8% 53.9 / 74.5 yes 17.4%" "$tmp/qnext.txt"
fig "all-softmax 1.453 s -3.5% 5636 14.1%" "$tmp/qnext.txt"
fig "32k 8.622 s +43.0% 3800 12.2%" "$tmp/qnext.txt"
fig "32k-all-softmax 11.241 s +86.5% 2915 17.3%" "$tmp/qnext.txt"
# EP inside a node puts 64 experts on each GPU: four times the host time a pass (moe_host_per_expert).
fig "ep8 1.725 s +14.5% 4748" "$tmp/qnext.txt"
fig "mtp 1.735 s +15.1% 4722 12.2% 53.9 / 74.5 yes 25.0%" "$tmp/qnext.txt"
"$stepsim" run scenarios/job-qwen3-next-80b-128xh100.yaml >"$tmp/qnext-run.txt"
fig "softmax layer fwd / bwd 5.14 / 6.93 ms" "$tmp/qnext-run.txt"
fig "Gated DeltaNet layer fwd / bwd 5.43 / 7.30 ms" "$tmp/qnext-run.txt"
src="$(pwd)"
sed "s|^  model: {name: qwen3-next-80b-a3b.*|  model: {file: $src/scenarios/models/qwen3-next-80b-a3b.yaml}|; /^          vocab: 151936, qk_norm/d; /^          shared_expert_ffn: 512/d; /^          linear_attention:/d; /^                             conv_kernel_dim/d; s|{file: hardware/|{file: $src/scenarios/hardware/|; /^  variants:/,\$d" \
  scenarios/job-qwen3-next-80b-128xh100.yaml >"$tmp/qnext-file.yaml"
"$stepsim" run "$tmp/qnext-file.yaml" --json >"$tmp/qnext-file.json"
"$stepsim" run scenarios/job-qwen3-next-80b-128xh100.yaml --json >"$tmp/qnext.json"
python3 - "$tmp/qnext.json" "$tmp/qnext-file.json" <<'PY' || fail "qwen3-next: the model file and the scenario's model differ"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert a["step_time_ns"] == b["step_time_ns"] == 1506978492, (a["step_time_ns"], b["step_time_ns"])
assert [(k["layer"], round(k["forward_ms"], 2), round(k["backward_ms"], 2)) for k in a["layer_kinds"]] == \
    [("softmax", 5.14, 6.93), ("Gated DeltaNet", 5.43, 7.30)], a["layer_kinds"]
assert (round(a["layer_forward_ms"], 2), round(a["layer_backward_ms"], 2)) == (5.14, 6.93), a
PY
"$stepsim" check-against validation/megatron_moe_layer_h100.csv validation/qwen3_235b_moe_modelzoo.csv \
  validation/nemo_llama3_h100_fp8.csv validation/qwen3_next_modelzoo.csv >"$tmp/qnext-check.txt"
fig "13 Qwen3-Next Qwen3-Next-80B-A3B 128 GPUs 2.2 s 1.507 -31.5% held out" "$tmp/qnext-check.txt"
# The row's Gated DeltaNet columns: the others need linear_value_heads; a bad one named by its column.
csv_refused validation/qwen3_next_modelzoo.csv 's/,1,16,32,128,128,4,4,/,1,16,,128,128,4,4,/' \
  "edited.csv:13: linear_key_heads: needs linear_value_heads (a Gated DeltaNet model)"
csv_refused validation/qwen3_next_modelzoo.csv 's/,1,16,32,128,128,4,4,/,1,16,24,128,128,4,4,/' \
  "edited.csv:13: linear_value_heads: 24 value heads are not a multiple of the 16 key heads"
# Mamba-2 hybrids (docs/attention.md "Mamba-2 hybrids"): Nemotron-H-56B on 256 H100 in FP8, beside BF16,
# TP 4 x PP 2 and 32K with CP 4; the step's layer kinds; the model file is the scenario's model;
# the measured table (held out, missed) and its columns.
"$stepsim" compare scenarios/job-nemotron-h-56b-256xh100.yaml >"$tmp/nh.txt"
has "nemotron-h-56b (118 layers: 54 Mamba-2, 10 attention, 54 MLP, h 8192, seq 8192) on 256 x h100-sxm" "$tmp/nh.txt"
fig "base 12.498 s +0.0% 1966 33.7% 58.4 / 74.5 yes 3.3% 0.88 s (TP 0.47 DP/ZeRO 0.41)" "$tmp/nh.txt"
fig "bf16 17.796 s +42.4% 1381 47.3%" "$tmp/nh.txt"
fig "tp4-pp2 11.954 s -4.3% 2056 35.2% 73.7 / 74.5 yes 7.0%" "$tmp/nh.txt"
fig "32k-cp4 18.647 s +49.2% 1318 23.4% 58.4 / 74.5 yes 2.2% 6.35 s (TP 0.47 DP/ZeRO 0.41 CP 5.46)" "$tmp/nh.txt"
"$stepsim" run scenarios/job-nemotron-h-56b-256xh100.yaml >"$tmp/nh-run.txt"
fig "Mamba-2 layer fwd / bwd 1.45 / 3.02 ms" "$tmp/nh-run.txt"
fig "attention layer fwd / bwd 1.10 / 1.99 ms" "$tmp/nh-run.txt"
fig "MLP layer fwd / bwd 1.41 / 2.67 ms" "$tmp/nh-run.txt"
sed "s|^  model: {name: nemotron-h-56b.*|  model: {file: $src/scenarios/models/nemotron-h-56b.yaml}|; /^          vocab: 131072/d; /^          mamba:/d; /^          hybrid_override_pattern/d; /^            -M\*-M/d; s|{file: hardware/|{file: $src/scenarios/hardware/|; /^  variants:/,\$d" \
  scenarios/job-nemotron-h-56b-256xh100.yaml >"$tmp/nh-file.yaml"
"$stepsim" run "$tmp/nh-file.yaml" --json >"$tmp/nh-file.json"
"$stepsim" run scenarios/job-nemotron-h-56b-256xh100.yaml --json >"$tmp/nh.json"
python3 - "$tmp/nh.json" "$tmp/nh-file.json" <<'PY' || fail "nemotron-h: the model file and the scenario's model differ"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert a["step_time_ns"] == b["step_time_ns"] == 12497638345, (a["step_time_ns"], b["step_time_ns"])
assert a["model_parameters"] == b["model_parameters"] == 56324350464, a["model_parameters"]
assert [(k["layer"], round(k["forward_ms"], 2), round(k["backward_ms"], 2)) for k in a["layer_kinds"]] == \
    [("Mamba-2", 1.45, 3.02), ("attention", 1.10, 1.99), ("MLP", 1.41, 2.67)], a["layer_kinds"]
assert (round(a["layer_forward_ms"], 2), round(a["layer_backward_ms"], 2)) == (1.40, 2.77), a
PY
"$stepsim" check-against validation/megatron_moe_layer_h100.csv validation/nemo_llama3_h100_fp8.csv \
  validation/nemotron_h_dgxc.csv >"$tmp/nh-check.txt"
# The run kept its weights in FP8 (fp8_param_gather): its 32-GPU layout fits, as it did.
fig "23 1f6d9f40 Nemotron-H 56B FP8 32 GPUs 15.12 s 12.2 -19.3% held out$" "$tmp/nh-check.txt"
fig "26 1f6d9f40 Nemotron-H 56B FP8 256 GPUs 15.89 s 12.24 -23.0% held out" "$tmp/nh-check.txt"
fig "held out: 7 rows, mean |error| 21.1%, max 23.0%" "$tmp/nh-check.txt"
# A row as a scenario: the mixer's keys and the pattern written back, quoted where it starts with *.
"$stepsim" check-against validation/megatron_moe_layer_h100.csv validation/nemo_llama3_h100_fp8.csv \
  validation/nemotron_h_dgxc.csv --export "$tmp/nh-row.yaml" --rows nemotron_h_dgxc:26 >/dev/null
has "mlp: relu2, mamba: {num_heads: 256, head_dim: 64, state_size: 256, n_groups: 8, conv_kernel: 4}, hybrid_override_pattern: M-M-M-M\*-M" "$tmp/nh-row.yaml"
"$stepsim" run "$tmp/nh-row.yaml" >"$tmp/nh-row.txt"
has "fp8: true, grad_bytes: 2, fp8_param_gather: true}" "$tmp/nh-row.yaml"
fig "step time 12.237 s" "$tmp/nh-row.txt"
has "FP8 GEMMs (tensorwise scaling; FP8 weights, gathered in FP8)" "$tmp/nh-row.txt"
sed 's/,M-M-M-M\*-M-M/,*-M-M-M*-M-M/' validation/nemotron_h_dgxc.csv >"$tmp/nh-star.csv"
"$stepsim" check-against "$tmp/nh-star.csv" --export "$tmp/nh-star.yaml" --rows 23 >/dev/null
has 'hybrid_override_pattern: "\*-M-M-M\*-M' "$tmp/nh-star.yaml"
"$stepsim" run "$tmp/nh-star.yaml" >"$tmp/nh-star.txt"
has "(118 layers: 53 Mamba-2, 11 attention, 54 MLP, h 8192, seq 8192)" "$tmp/nh-star.txt"
csv_refused validation/nemotron_h_dgxc.csv 's/,256,64,256,8,4,/,,64,256,8,4,/' \
  "edited.csv:23: mamba_head_dim: needs mamba_heads (a Mamba-2 model)"
csv_refused validation/nemotron_h_dgxc.csv 's/,256,64,256,8,4,/,256,64,256,3,4,/' \
  "edited.csv:23: mamba_n_groups: 3 groups do not divide the 256 heads (Megatron-Core's MambaMixer shares each group's B and C among its heads)"
csv_refused validation/nemotron_h_dgxc.csv 's/,M-M-M-M\*-/,M-M-M-MX-/' \
  "edited.csv:23: hybrid_override_pattern: 'X' at position 8 is none of M (Mamba-2)"
# Without a pattern every layer is a Mamba-2 mixer and an MLP.
cat >"$tmp/mamba-mlp.yaml" <<EOF
job_step:
  model: {name: mamba2-mlp, layers: 24, hidden: 2048, ffn: 8192, heads: 16, vocab: 32000, seq: 4096, mlp: gelu,
          mamba: {num_heads: 64, head_dim: 64, state_size: 128, n_groups: 1}}
  hardware: {preset: h100-sxm, gpus: 8}
  layout: {tp: 1, dp: 8, global_batch: 64}
EOF
"$stepsim" run "$tmp/mamba-mlp.yaml" >"$tmp/mamba-mlp.txt"
has "mamba2-mlp (24 layers, each Mamba-2 and an MLP, h 2048, seq 4096)" "$tmp/mamba-mlp.txt"
fig "step time 674.21 ms" "$tmp/mamba-mlp.txt"
# Nemotron 3 Nano's model file (Mamba-2, attention and MoE layers) on 32 H100, EP 8.
cat >"$tmp/nano.yaml" <<EOF
job_step:
  model: {file: $src/scenarios/models/nemotron-3-nano-30b-a3b.yaml}
  hardware: {file: $src/scenarios/hardware/h100-calibrated.yaml, gpus: 32}
  layout: {dp: 32, ep: 8, zero: 1, micro_batch: 1, global_batch: 256, recompute: selective,
           recompute_modules: [layernorm, moe]}
EOF
"$stepsim" run "$tmp/nano.yaml" >"$tmp/nano.txt"
# The model files' parameters, as their cards count them: 31.6B, 8.1B.
"$stepsim" run "$tmp/nano.yaml" --json >"$tmp/nano.json"
cat >"$tmp/nh8.yaml" <<EOF
job_step:
  model: {file: $src/scenarios/models/nemotron-h-8b.yaml}
  hardware: {file: $src/scenarios/hardware/h100-calibrated.yaml, gpus: 8}
  layout: {dp: 8, zero: 1, micro_batch: 1, global_batch: 64, recompute: full}
EOF
"$stepsim" run "$tmp/nh8.yaml" --json >"$tmp/nh8.json"
python3 - "$tmp/nano.json" "$tmp/nh8.json" <<'PY' || fail "the Nemotron model files' parameters, Nano's host waits"
import json, sys
assert [json.load(open(f))["model_parameters"] for f in sys.argv[1:3]] == [31577937344, 8100852736]
# The host waits of the pattern's MoE layer (E): moe_host_per_expert 53.056 us for each of the 16
# experts a GPU holds, 0.849 ms forward, twice in the backward with the MoE block recomputed.
assert abs(json.load(open(sys.argv[1]))["layer_host_ms"] - 2.546688) < 1e-9
PY
has "nemotron-3-nano-30b-a3b (52 layers: 23 Mamba-2, 6 attention, 23 MoE, h 2688, seq 8192)" "$tmp/nano.txt"
fig "MoE layer fwd / bwd 5.73 / 13.93 ms" "$tmp/nano.txt"
fig "step time 5.479 s" "$tmp/nano.txt"
# Qwen3.5-397B-A17B's model file in a search: EP 16 folded to expert TP 1 the fastest.
"$stepsim" search scenarios/search-moe-256xh100.yaml --set 'search.model={file: models/qwen3.5-397b-a17b.yaml}' \
  --set search.layout.first_chunk_layers=even --set search.layout.last_chunk_layers=even \
  --set 'search.layout.ep=[8,16,32]' --set search.top=3 >"$tmp/q35.txt"
has "qwen3.5-397b-a17b (60 layers, 45 of them Gated DeltaNet, h 4096, seq 4096) on 256 x h100-sxm" "$tmp/q35.txt"
fig "1 256 2 4 1 32 16 1 1 1f1b 1 full yes 15.054 s 12.2% 71.1" "$tmp/q35.txt"
# The optimizer on the host (docs/memory.md "The optimizer on the host"): Qwen3-8B over one host of 8
# RTX 4090 fits only with it, the host holding 15.26 GiB of each card's shard.
"$stepsim" compare scenarios/job-offload-8x4090.yaml >"$tmp/off.txt"
fig "base 300.101 s +0.0% 1310 41.8% 17.4 / 22.0 yes" "$tmp/off.txt"
fig "optimizer-on-gpu 299.092 s -0.3% 1315 41.9% 28.9 / 22.0 no" "$tmp/off.txt"
has ", recompute full, optimizer on the host" "$tmp/off.txt"
"$stepsim" run scenarios/job-offload-8x4090.yaml >"$tmp/off-run.txt"
fig "optimizer state 0.00" "$tmp/off-run.txt"
has "optimizer on the host: 15.26 GiB a GPU, 122.1 of 512.0 GiB a node; gradients down 0.168 s (BF16 converted to FP32 on the GPU, sent in FP32), Adam 0.800 s in host memory (38.4 GB/s a GPU of the node's 307.2), BF16 weights up 0.080 s: 1.047 s a step" "$tmp/off-run.txt"
fig "optimizer 1.047 s 0.3%" "$tmp/off-run.txt"
# One card to the socket: the book's rule sends BF16 and converts on the host.
"$stepsim" run scenarios/job-offload-8x4090.yaml --set job_step.hardware.node.gpus=1 >"$tmp/off-one.txt"
has "gradients down 0.100 s (sent in BF16, converted to FP32 on the host), Adam 0.100 s in host memory (307.2 GB/s a GPU of the node's 307.2)" "$tmp/off-one.txt"
"$stepsim" run scenarios/job-offload-8x4090.yaml --json >"$tmp/off.json"
layout_key "$tmp/off.json" offload_optimizer true
python3 - "$tmp/off.json" <<'PY' || fail "the host optimizer's JSON"
import json, sys
h = json.load(open(sys.argv[1]))["host_optimizer"]
assert h["host_bytes_per_gpu"] == 16381444096 and h["host_bytes_per_node"] == 8 * 16381444096, h
assert h["host_capacity_bytes"] == 512 * 2**30 and h["fits"] and h["converted_on"] == "gpu", h
assert abs(h["total_s"] - (h["gradients_down_s"] + h["adam_s"] + h["weights_up_s"])) < 1e-12, h
assert round(h["adam_s"], 4) == 0.7999, h
PY
"$stepsim" run scenarios/job-fsdp-8.yaml --json >"$tmp/fsdp.json"
python3 -c 'import json,sys; assert "host_optimizer" not in json.load(open(sys.argv[1]))' "$tmp/fsdp.json" ||
  fail "host_optimizer without offload"
layout_key "$tmp/fsdp.json" offload_optimizer absent
# Refused: over the host's memory; without a sharded optimizer; with FP32 weights as the master.
run "$stepsim" run scenarios/job-offload-8x4090.yaml --set job_step.allow_oom=false \
  --set job_step.hardware.node.host_memory=100GiB
refused "job_step.layout.offload_optimizer: the optimizer on the host needs 122.1 GiB of a node's host memory (8 GPUs' shards) but the node has 100.0 GiB"
run "$stepsim" run scenarios/job-offload-8x4090.yaml --set job_step.layout.zero=0
refused "job_step.layout.offload_optimizer: steps each GPU's shard of the optimizer on its host"
run "$stepsim" run scenarios/job-offload-8x4090.yaml --set job_step.layout.master_weights=model
refused "needs master_weights: optimizer"
# Without it, the 8-card layout is offered the host.
run "$stepsim" run scenarios/job-offload-8x4090.yaml --set job_step.allow_oom=false \
  --set job_step.layout.offload_optimizer=false
refused "would fit: offload_optimizer: true, offload_fraction: 0.61 (21.9 GiB)"
# That share: 61 % of each card's shard on the host, the rest stepped on the card beside it.
"$stepsim" run scenarios/job-offload-8x4090.yaml --set job_step.layout.offload_fraction=0.61 >"$tmp/off-61.txt"
has ", recompute full, 61 % of the optimizer on the host" "$tmp/off-61.txt"
fig "optimizer state 4.46" "$tmp/off-61.txt"
fig "total 21.91" "$tmp/off-61.txt"
fig "step time 299.693 s" "$tmp/off-61.txt"
has "optimizer on the host (61 % of it): 9.31 GiB a GPU, 74.5 of 512.0 GiB a node;" "$tmp/off-61.txt"
has ": 0.639 s a step, beside the GPU's 39 % in 0.015 s" "$tmp/off-61.txt"
"$stepsim" run scenarios/job-offload-8x4090.yaml --set job_step.layout.offload_fraction=0.61 --json >"$tmp/off-61.json"
layout_key "$tmp/off-61.json" offload_fraction 0.61
python3 -c 'import json,sys; h=json.load(open(sys.argv[1]))["host_optimizer"]; assert h["fraction"] == 0.61 and h["total_s"] == max(h["host_s"], h["gpu_s"]), h' "$tmp/off-61.json" ||
  fail "the host optimizer's share in JSON"
run "$stepsim" run scenarios/job-offload-8x4090.yaml --set job_step.layout.offload_fraction=1.5
refused "job_step.layout.offload_fraction: 1.5 is not a share of the optimizer: above 0, at most 1"
# `auto`: the smallest share that fits, as the refusal names it.
"$stepsim" run scenarios/job-offload-8x4090.yaml --set job_step.layout.offload_fraction=auto >"$tmp/off-auto.txt"
has ", recompute full, 61 % of the optimizer on the host (the smallest share that fits)" "$tmp/off-auto.txt"
fig "step time 299.693 s" "$tmp/off-auto.txt"
"$stepsim" run scenarios/job-offload-8x4090.yaml --set job_step.layout.offload_fraction=auto --json >"$tmp/off-auto.json"
layout_key "$tmp/off-auto.json" offload_fraction 0.61
layout_key "$tmp/off-auto.json" offload_fraction_auto true
run "$stepsim" run scenarios/job-offload-8x4090.yaml --set job_step.layout.offload_fraction=most
refused "job_step.layout.offload_fraction: 'most': expected a share of the optimizer in (0, 1], or auto (the smallest that fits)"
run "$stepsim" search scenarios/job-offload-8x4090.yaml --set job_step.layout.offload_fraction=auto
refused "search.layout.offload_fraction: auto (the smallest share that fits) is a job step's"
# ... unless the host cannot hold the shards either: then CP 4 over DP 2 (each card a quarter of
# the sequence's activations, ZeRO's shards still over all 8).
run "$stepsim" run scenarios/job-offload-8x4090.yaml --set job_step.allow_oom=false \
  --set job_step.layout.offload_optimizer=false --set job_step.hardware.node.host_memory=64GiB
refused "but rtx4090 has 22.0 GiB usable; would fit: cp: 4, dp: 2 (19.5 GiB)"
# Activations on the host (docs/memory.md "Activations on the host"): Llama-3-8B at 32K tokens on 8
# H100 fits with the first 22 layers' activations on the host, the fewest that fit.
"$stepsim" compare scenarios/job-offload-activations-8xh100.yaml >"$tmp/act.txt"
has ", sequence parallel, activations of the first 22 layers on the host (the fewest that fit)" "$tmp/act.txt"
fig "base 20.118 s +0.0% 6515 46.6% 72.8 / 74.5 yes" "$tmp/act.txt"
fig "on the GPU 17.518 s -12.9% 7482 53.5% 117.4 / 74.5 no" "$tmp/act.txt"
fig "recompute auto 21.418 s +6.5% 6120 43.8% 73.6 / 74.5 yes" "$tmp/act.txt"
fig "tp 4 18.991 s -5.6% 6902 49.4% 64.3 / 74.5 yes" "$tmp/act.txt"
"$stepsim" run scenarios/job-offload-activations-8xh100.yaml >"$tmp/act-run.txt"
fig "activations (peak) 23.50" "$tmp/act-run.txt"
fig "activations to and from the host 2.601 s 12.9%" "$tmp/act-run.txt"
fig "host link (activations) 2.601 s 12.9%" "$tmp/act-run.txt"
has "activations on the host: the first 22 of 32 layers, 46.75 GiB a GPU, 374.0 of 1862.6 GiB a node; the layers' activations on the GPU at most 23.38 GiB (68.00 without); a micro-batch's copies 0.980 s each way (51.2 GB/s), the compute waiting 0.323 s in its forward and 0.002 s in its backward: 2.601 s a step" "$tmp/act-run.txt"
# A count: the first 24 layers; TP 4 fits without (auto: none).
"$stepsim" run scenarios/job-offload-activations-8xh100.yaml --set job_step.layout.offload_activations=24 >"$tmp/act-24.txt"
has ", sequence parallel, activations of the first 24 layers on the host" "$tmp/act-24.txt"
fig "step time 20.836 s" "$tmp/act-24.txt"
fig "total 68.56" "$tmp/act-24.txt"
"$stepsim" run scenarios/job-offload-activations-8xh100.yaml --set job_step.layout.tp=4 >"$tmp/act-tp4.txt"
has ", sequence parallel, no activations on the host (it fits without)" "$tmp/act-tp4.txt"
"$stepsim" run scenarios/job-offload-activations-8xh100.yaml --json >"$tmp/act.json"
layout_key "$tmp/act.json" offload_activations 22
layout_key "$tmp/act.json" offload_activations_auto true
python3 - "$tmp/act.json" <<'PY' || fail "the host activations' JSON"
import json, sys
d = json.load(open(sys.argv[1]))
h = d["host_activations"]
assert h["layers"] == 22 and h["host_bytes_per_node"] == 8 * h["host_bytes_per_gpu"] and h["fits"], h
assert h["link_bytes_per_s"] == 51.2e9 and abs(h["copy_s"] - h["host_bytes_per_gpu"] / 51.2e9) < 1e-12, h
assert abs(h["step_wait_s"] - 8 * (h["forward_wait_s"] + h["backward_wait_s"])) < 1e-12, h
assert d["memory_bytes"]["activations"] < h["layers_bytes_without"], d["memory_bytes"]
PY
python3 -c 'import json,sys; assert "host_activations" not in json.load(open(sys.argv[1]))' "$tmp/fsdp.json" ||
  fail "host_activations without offload"
layout_key "$tmp/fsdp.json" offload_activations absent
# Refused where Megatron-Core refuses it, at or past the model's layers, over the host's memory.
# Too few layers on the host: the fewest that fit offered first (recompute would need none there);
# on the GPU alone, recompute comes first, as a user would try it.
run "$stepsim" run scenarios/job-offload-activations-8xh100.yaml --set job_step.layout.offload_activations=8
refused "job_step.layout: needs 102.6 GiB per GPU (weights 7.5, gradients 15.0, optimizer 11.2, activations 53.2, buffers 15.7) but h100-sxm has 74.5 GiB usable; would fit: offload_activations: 22 (72.8 GiB)"
run "$stepsim" run scenarios/job-offload-activations-8xh100.yaml --set job_step.layout.offload_activations=0
refused "would fit: recompute: full, recompute_layers: 23 (73.6 GiB)"
# ... unless the hosts cannot hold 22 layers' (374.0 GiB a node): then CP 2 over DP 2.
run "$stepsim" run scenarios/job-offload-activations-8xh100.yaml --set job_step.layout.offload_activations=8 \
  --set job_step.hardware.node.host_memory=256GiB
refused "would fit: cp: 2, dp: 2 (68.1 GiB)"
# One GPU and a small host: no single change fits.
run "$stepsim" run scenarios/job-offload-activations-8xh100.yaml --set job_step.hardware.gpus=1 \
  --set job_step.layout.tp=1 --set job_step.layout.sequence_parallel=false --set job_step.layout.offload_activations=8 \
  --set job_step.hardware.node.host_memory=64GiB
refused "needs 272.4 GiB per GPU (weights 15.0, gradients 29.9, optimizer 89.7, activations 106.5, buffers 31.3) but h100-sxm has 74.5 GiB usable; no single change of recompute, zero, micro_batch, pp, cp, offload_optimizer or offload_activations fits"
run "$stepsim" run scenarios/job-offload-activations-8xh100.yaml --set job_step.layout.offload_activations=32
refused "job_step.layout.offload_activations: 32 of the 32 layers: the last layer's activations stay on the GPU"
run "$stepsim" run scenarios/job-offload-activations-8xh100.yaml --set job_step.layout.pp=2
refused "job_step.layout.offload_activations: copies layers' activations to the host without a pipeline"
run "$stepsim" run scenarios/job-offload-activations-8xh100.yaml --set job_step.layout.offload_activations=most
refused "job_step.layout.offload_activations: 'most': expected a count of layers (the model's first) or auto (the fewest that fit)"
run "$stepsim" run scenarios/job-offload-activations-8xh100.yaml --set job_step.hardware.node.host_memory=256GiB
refused "job_step.layout.offload_activations: the activations on the host needs 374.0 GiB of a node's host memory (8 GPUs' activations) but the node has 256.0 GiB"
# Searched around (its `auto` opens the key): each layout without a pipeline or recompute takes the
# fewest layers that fit; FSDP over TP 2 with 14 layers' activations on the host is the fastest.
"$stepsim" search scenarios/job-offload-activations-8xh100.yaml --csv "$tmp/act-search.csv" >"$tmp/act-search.txt"
has "tp, pp, virtual_stages, schedule, micro_batch, recompute, zero, sequence_parallel, offload_activations searched" "$tmp/act-search.txt"
fig " 1 8 2 1 1 4 fsdp - 1 none (host 14) yes 17.801 s 52.7% 73.8 0.1%" "$tmp/act-search.txt"
fig " 3 8 4 2 1 1 0 dualpipe-v 1 none yes 18.551 s 50.6% 69.5 4.5%" "$tmp/act-search.txt"
python3 - "$tmp/act-search.csv" <<'PY' || fail "the search's offload_activations column"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows[0]["offload_activations"] == "14" and rows[0]["zero"] == "3", rows[0]
assert all(r["offload_activations"] == "0" for r in rows if r["pp"] != "1" or r["recompute"] != "none"), rows
PY
"$stepsim" search scenarios/job-offload-activations-8xh100.yaml --json >"$tmp/act-search.json"
python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["top"]; assert t[0]["offload_activations"] == 14 and "offload_activations" not in t[2], t[:3]' "$tmp/act-search.json" ||
  fail "the search's offload_activations in JSON"
run "$stepsim" search scenarios/job-offload-activations-8xh100.yaml --set search.layout.offload_activations=32
refused "search.layout.offload_activations: 32 of the 32 layers: the last layer's activations stay on the GPU (at most 31)"
echo "job_step: all checks passed"
