#!/usr/bin/env bash
# job_step scenarios from the CLI (docs/job.md): the shipped jobs' figures, bad input as one
# file:line: key: message line with exit 2, and check-against's bounds on the validation tables.
# Usage: bash tests/job_step_cli.sh /path/to/stepsim   (from the source directory)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
has() { grep -q -- "$1" "$2" || { cat "$2"; fail "expected '$1' in $2"; }; }
# Figures are checked with runs of spaces squeezed (tables align with them).
fig() { tr -s ' ' <"$2" | grep -q -- "$1" || { cat "$2"; fail "expected '$1' in $2"; }; }
# layout_key FILE KEY VALUE: a run's JSON `layout` has KEY = VALUE (JSON text), or, with VALUE
# "absent", has no KEY.
layout_key() {
  python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["layout"]; k,v=sys.argv[2],sys.argv[3]
assert (k not in l) if v == "absent" else (k in l and l[k] == json.loads(v)), (k, l.get(k))' "$1" "$2" "$3" ||
    fail "layout.$2 in $1: expected $3"
}

# 1. The shipped jobs and their figures (deterministic).
"$stepsim" run scenarios/job-llama70b-64xh100.yaml >"$tmp/llama.txt"
fig "step time 15.235 s" "$tmp/llama.txt"
fig "MFU 48.8%" "$tmp/llama.txt"
has "simulated 4 device(s) of one pipeline, 7600 ops, 64 micro-batches" "$tmp/llama.txt"
fig "exposed PP 15.94 ms" "$tmp/llama.txt"
# Blocking pipeline sends (Megatron's default p2p): devices meet at exchanges (tests/lowering [blocking]).
"$stepsim" run scenarios/job-llama70b-64xh100.yaml --set job_step.layout.overlap.pp=false >"$tmp/llama-block.txt"
fig "step time 15.368 s" "$tmp/llama-block.txt"
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
fig "step time 28.420 s" "$tmp/gpt3.txt"
fig "hardware TFLOP/s per GPU 155.0" "$tmp/gpt3.txt"
"$stepsim" run scenarios/job-fsdp-8.yaml >"$tmp/fsdp.txt"
fig "step time 5.860 s" "$tmp/fsdp.txt"
fig "exposed DP/ZeRO 22.45 ms" "$tmp/fsdp.txt"
# MoE: expert weights are on dp x cp / ep = 1 rank each, so ZeRO-1 cannot shard their Adam state
# (8.34 GiB, where dividing them by dp too gave 0.59), and their gradients are reduced by nobody.
"$stepsim" run scenarios/job-moe-dualpipe-h800.yaml >"$tmp/moe.txt"
fig "step time 5.807 s" "$tmp/moe.txt"
fig "exposed EP 1.200 s" "$tmp/moe.txt"
fig "optimizer state 8.36" "$tmp/moe.txt"
fig "exposed DP/ZeRO 32.77 ms" "$tmp/moe.txt"
has "ep 64 (dispatch per node, FP8 dispatch)" "$tmp/moe.txt"
# Expert routing (docs/job.md): figure 10-27's hot experts on half the EP ranks, spread by
# round-robin placement, capped by a capacity factor; a routing that cannot be, at its line.
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml >"$tmp/route.txt"
has "expert routing: 50% of the 128 experts hot at 1.5x the mean, placed contiguous on ep 8; the busiest EP rank computes 1.50x the mean rows" "$tmp/route.txt"
fig "step time 12.694 s" "$tmp/route.txt"
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set job_step.layout.expert_placement=round_robin >"$tmp/route-rr.txt"
has "the busiest EP rank computes 1.00x the mean rows" "$tmp/route-rr.txt"
fig "step time 9.924 s" "$tmp/route-rr.txt"
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set job_step.model.capacity_factor=1.25 --json >"$tmp/route-cap.json"
has '"capacity_rows": 2560' "$tmp/route-cap.json"
has '"dropped_share": 0.125' "$tmp/route-cap.json"
has '"busiest_rank_load": 1.25' "$tmp/route-cap.json"
has '"step_time_ns": 11262815123' "$tmp/route-cap.json"
# compare: the base and each variant, one row each; a variant that does not fit is a row, not an error.
"$stepsim" compare scenarios/job-moe-routing-256xh100.yaml >"$tmp/route-cmp.txt"
fig "base 12.694 s +0.0% 1291 19.4% 68.3 / 74.5 yes 19.2% 3.13 s (DP/ZeRO 0.39 EP 2.72)" "$tmp/route-cmp.txt"
fig "round-robin 9.924 s -21.8% 1651 24.8% 68.1 / 74.5 yes" "$tmp/route-cmp.txt"
fig "capacity-1.25 11.263 s -11.3% 1455 21.8%" "$tmp/route-cmp.txt"
fig "no-recompute 9.524 s -25.0% 1720 25.8% 181.7 / 74.5 no" "$tmp/route-cmp.txt"
# Expert TP folded (docs/job.md "Expert tensor parallelism"): at TP 4 the EP group spans 4 nodes
# unless the experts keep TP 1 and EP folds over the TP ranks of a node.
fig "tp4 87.302 s +587.8% 188 2.8% 24.7 / 74.5 yes 6.3% 74.40 s (TP 1.27 EP 73.04)" "$tmp/route-cmp.txt"
fig "tp4-expert-tp1 12.831 s +1.1% 1277 19.1% 54.2 / 74.5 yes 11.3% 4.10 s (TP 0.62 DP/ZeRO 0.97 EP 2.50)" "$tmp/route-cmp.txt"
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set job_step.layout.tp=4 --set job_step.layout.dp=16 \
  --set job_step.layout.sequence_parallel=true --set job_step.layout.expert_tp=1 --set job_step.layout.ep_dispatch=per_node \
  >"$tmp/route-fold.txt"
has "dp 16 ep 8 (expert tp 1, dispatch per node), zero 1" "$tmp/route-fold.txt"
run "$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set job_step.layout.expert_tp=3
[[ $code == 2 && "$err" == "error: --set: job_step.layout.expert_tp: expert_tp 3 does not divide tp 1 (would fit: 1)" ]] ||
  fail "expert_tp 3: exit $code: $err"
"$stepsim" compare scenarios/job-moe-routing-256xh100.yaml --json >"$tmp/route-cmp.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [x["variant"] for x in d]==["base","round-robin","balanced","capacity-1.25","no-recompute","tp4","tp4-expert-tp1"], d; assert d[6]["layout"]["expert_tp"]==1; assert d[2]["step_time_ns"]==9924179015' "$tmp/route-cmp.json" ||
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
# TP communication overlap (docs/job.md "TP communication overlap"): the Llama-70B job's variants.
"$stepsim" compare scenarios/job-llama70b-64xh100.yaml >"$tmp/llama-cmp.txt"
fig "base 15.235 s +0.0% 1075 48.8% 49.5 / 74.5 yes 4.6% 2.77 s (TP 2.69)" "$tmp/llama-cmp.txt"
fig "tp-overlap 13.818 s -9.3% 1186 53.8% 49.5 / 74.5 yes 5.0% 0.78 s (TP 0.70)" "$tmp/llama-cmp.txt"
fig "no-sp 16.651 s +9.3% 984 44.7% 89.7 / 74.5 no 4.3% 2.77 s (TP 2.69)" "$tmp/llama-cmp.txt"
"$stepsim" run scenarios/job-llama70b-64xh100.yaml --set job_step.layout.overlap.tp=true --json >"$tmp/llama-tpo.json"
has '"overlap_tp": true' "$tmp/llama-tpo.json"
has '"step_time_ns": 13818183104' "$tmp/llama-tpo.json"
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
# Selective recompute by module (docs/job.md): what each drops, at the simulated peak.
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set job_step.layout.recompute=selective \
  --set 'job_step.layout.recompute_modules=[layernorm, moe_act]' --set job_step.allow_oom=true >"$tmp/rm.txt"
has "recompute selective (layernorm, moe_act)" "$tmp/rm.txt"
fig "step time 9.616 s" "$tmp/rm.txt"
fig "activations (peak) 101.34" "$tmp/rm.txt"
# moe reruns the whole block, the combine included: none of its copies' arrays is kept.
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set job_step.layout.recompute=selective \
  --set 'job_step.layout.recompute_modules=[moe]' --set job_step.allow_oom=true >"$tmp/rm-moe.txt"
fig "step time 12.009 s" "$tmp/rm-moe.txt"
fig "activations (peak) 23.72" "$tmp/rm-moe.txt"
"$stepsim" run scenarios/job-deepseek-v3-2048xh800.yaml --set job_step.layout.recompute=selective \
  --set 'job_step.layout.recompute_modules=[layernorm, mla_up_proj, moe_act]' --set job_step.allow_oom=true --json >"$tmp/rm.json"
has '"recompute_modules": \[' "$tmp/rm.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["layout"]["recompute_modules"]==["layernorm","mla_up_proj","moe_act"]; assert d["step_time_ns"]==13416809510, d["step_time_ns"]' "$tmp/rm.json" ||
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
fig "2 Sec 1 Qwen3-235B 256 GPUs 1270 tok/s 1289 +1.5% held out" "$tmp/route-check.txt"
fig "3 Sec 1 Qwen3-235B 256 GPUs 1270 tok/s 1648 +29.8% held out" "$tmp/route-check.txt"
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
# FP8 activations (docs/job.md "FP8 activations"): DeepSeek-V3's own recompute with and without.
sel=(--set job_step.layout.recompute=selective --set "job_step.layout.recompute_modules=[layernorm,mla_up_proj,moe_act]")
run "$stepsim" run scenarios/job-deepseek-v3-2048xh800.yaml "${sel[@]}"
refused "needs 98.2 GiB per GPU at the simulated peak (pipeline rank 2) (weights 6.1, gradients 12.2, optimizer 2.7, activations 77.3, buffers 0.0)"
run "$stepsim" run scenarios/job-deepseek-v3-2048xh800.yaml "${sel[@]}" --set job_step.layout.fp8_activations=false
[[ $code == 2 && "$err" == *"needs 117.8 GiB per GPU"*"activations 96.8,"* ]] ||
  fail "DeepSeek-V3 selective in BF16: exit $code: $err"
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
[[ $code == 2 && "$err" == *"job_step.layout.fp8_recipe: unknown fp8_recipe 'rowwise' (tensorwise or blockwise)" ]] ||
  fail "fp8_recipe rowwise: exit $code: $err"
# The Llama-70B job and its tp-overlap variant as measured-runs CSV rows (column overlap_tp);
# overlap_tp without sp is refused at the row and column.
cols="src,tbl,model,L,h,heads,kv,head_dim,ffn,vocab,seq,mlp,tied,hw,ngpu,tp,pp,dp,vpp,sched,mbs,gbs,recomp,sp,zero"
cols+=",overlap_tp,metric,value,fit"
row="L,a,Llama-70B,80,8192,64,8,128,28672,128256,8192,swiglu,0,h100-sxm,64,8,4,2,5,interleaved-1f1b,1,128,selective"
{ echo "$cols"; echo "$row,1,1,0,tokens_per_gpu_s,1074,0"; echo "$row,1,1,1,tokens_per_gpu_s,1184,0"; } >"$tmp/tpo.csv"
"$stepsim" check-against "$tmp/tpo.csv" --efficiency 0.7,0.55,0.8,0.8,0.8,0.2 >"$tmp/tpo-check.txt"
fig "2 a Llama-70B 64 GPUs 1074 tok/s 1074 -0.0% held out" "$tmp/tpo-check.txt"
fig "3 a Llama-70B 64 GPUs 1184 tok/s 1184 -0.0% held out" "$tmp/tpo-check.txt"
echo "$row,0,1,1,tokens_per_gpu_s,1184,0" >>"$tmp/tpo.csv"
run "$stepsim" check-against "$tmp/tpo.csv" --efficiency 0.7,0.55,0.8,0.8,0.8,0.2
refused "tpo.csv:4: overlap_tp: pipelines the TP all-gathers"
{ echo "$cols,expert_tp"; echo "$row,1,1,0,tokens_per_gpu_s,1074,0,1"; } >"$tmp/etp.csv"
run "$stepsim" check-against "$tmp/etp.csv" --efficiency 0.7,0.55,0.8,0.8,0.8,0.2
refused "etp.csv:2: expert_tp: expert_tp splits routed experts: the model has none"
# CP communication (docs/job.md "Context-parallel communication"): the long-context job gathered,
# and by heads on a layout whose heads divide; the JSON names it; heads that do not divide refused.
"$stepsim" run scenarios/job-long-context.yaml --set job_step.layout.cp_comm=all_gather >"$tmp/cp-ag.txt"
has "cp 4 (all_gather)" "$tmp/cp-ag.txt"
fig "step time 30.456 s" "$tmp/cp-ag.txt"
fig "exposed CP 1.467 s" "$tmp/cp-ag.txt"
"$stepsim" run scenarios/job-long-context.yaml --set job_step.layout.cp_comm=a2a --set job_step.layout.tp=2 \
  --set job_step.layout.dp=4 --json >"$tmp/cp-a2a.json"
has '"comm": "a2a"' "$tmp/cp-a2a.json"
has '"step_time_ns": 28139' "$tmp/cp-a2a.json"
run "$stepsim" run scenarios/job-long-context.yaml --set job_step.layout.cp_comm=a2a
refused "job-long-context.yaml:18: job_step.layout.cp: cp_comm a2a splits the heads over tp x cp = 4 x 4 = 16 ranks"
"$stepsim" compare scenarios/job-long-context.yaml >"$tmp/cp-cmp.txt"
fig "contiguous 44.701 s +54.2% 1466" "$tmp/cp-cmp.txt"
fig "all-gather 30.456 s +5.1% 2152 35.1% 26.9 / 74.5 yes 0.2% 3.17 s (TP 1.64 CP 1.47)" "$tmp/cp-cmp.txt"
fig "tp2-a2a 28.139 s -2.9% 2329 38.0% 50.9 / 74.5 yes 0.2% 0.92 s (TP 0.54 CP 0.31)" "$tmp/cp-cmp.txt"
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
fig "1 16 4 1 1 4 1 - 1 selective yes 2.762 s 60.7% 24.9 2.2% 0.06 s (DP 0.06)" "$tmp/tpo-search.txt"
fig "4 16 8 1 1 2 1 - 1 selective no 3.530 s 47.5% 19.2 1.2% 0.57 s (TP 0.53 DP 0.04)" "$tmp/tpo-search.txt"
# The whole DeepSeek-V3 (docs/job.md): 61 layers in 16 DualPipe stages of 1 and 4 layers, MLA,
# dense first layers, a prediction module; an MLA key without its siblings is refused at the key.
"$stepsim" run scenarios/job-deepseek-v3-2048xh800.yaml >"$tmp/dsv3.txt"
has "tp 1 pp 16 (layers per chunk 1, 15 x 4) dp 128 ep 64" "$tmp/dsv3.txt"
fig "step time 17.758 s" "$tmp/dsv3.txt"
has "recompute full, FP8 GEMMs (blockwise scaling), Adam moments in BF16" "$tmp/dsv3.txt"
fig "tokens/s per GPU 1730" "$tmp/dsv3.txt"
# With the validation's H100 calibration (an H800 is an H100 with less bandwidth; docs/job.md).
h100=()
for kv in gemm=0.814 attention=0.555 memory=0.803 fabric=0.82 network=0.804 experts=0.713; do
  h100+=(--set "job_step.hardware.efficiency.$kv")
done
"$stepsim" run scenarios/job-deepseek-v3-2048xh800.yaml "${h100[@]}" >"$tmp/dsv3-h100.txt"
fig "tokens/s per GPU 1698" "$tmp/dsv3-h100.txt"
# ... and with its FP8 share (Transformer Engine's blockwise grouped GEMMs, not DeepSeek's kernels).
"$stepsim" run scenarios/job-deepseek-v3-2048xh800.yaml "${h100[@]}" --set job_step.hardware.efficiency.fp8_blockwise=0.604 \
  >"$tmp/dsv3-h100-fp8.txt"
fig "tokens/s per GPU 1326" "$tmp/dsv3-h100-fp8.txt"
# ... and with its MoE host time (a Megatron-Core run's) instead.
"$stepsim" run scenarios/job-deepseek-v3-2048xh800.yaml "${h100[@]}" --set job_step.hardware.efficiency.moe_host=1340us \
  >"$tmp/dsv3-h100-host.txt"
fig "tokens/s per GPU 1531" "$tmp/dsv3-h100-host.txt"
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
fig "2 Sec 1 DeepSeek-V3 2048 GPUs 1543 tok/s 1730 +12.1% held out" "$tmp/dsv3-check.txt"
sed 's/,256,8,2048,2048,3,4,1,/,0,8,2048,2048,3,4,1,/' "$tmp/dsv3.csv" >"$tmp/dsv3-dense.csv"
run "$stepsim" check-against "$tmp/dsv3-dense.csv" --efficiency 0.7,0.55,0.8,0.8,0.8,0.2
refused "dsv3-dense.csv:2: top_k: needs experts (a mixture-of-experts model)"
# The same tokens sent as Megatron-Core's all-to-all does: every routed copy in BF16 (docs/job.md).
"$stepsim" run scenarios/job-moe-dualpipe-h800.yaml --set job_step.layout.ep_dispatch=all_to_all \
  --set job_step.layout.fp8_dispatch=false --json >"$tmp/moe-a2a.json"
has '"ep_dispatch": "all_to_all"' "$tmp/moe-a2a.json"
has '"step_time_ns": 10973198601' "$tmp/moe-a2a.json"
# Its first two layers dense (docs/job.md): no all-to-all there, more weights on device 0.
"$stepsim" run scenarios/job-moe-dualpipe-h800.yaml --set job_step.model.dense_layers=2 >"$tmp/moe-dense.txt"
fig "step time 5.522 s" "$tmp/moe-dense.txt"
fig "weights 7.15" "$tmp/moe-dense.txt"
run "$stepsim" run scenarios/job-moe-dualpipe-h800.yaml --set job_step.model.dense_layers=32
refused "job_step.model.dense_layers: 32 dense layers leave none of the 32 layers an MoE layer"
run "$stepsim" run scenarios/job-moe-dualpipe-h800.yaml --set job_step.layout.ep=128
refused "job_step.layout.ep: ep 128 does not divide dp x cp = 64 (experts are sharded over data-parallel ranks; would fit: 1, 2, 4, 8, 16, 32, 64)"
# Uneven chunks (docs/job.md): Llama 3 405B's 126 layers on 16 devices x 8 chunks, the ends
# holding only the embedding and the head; the 16,384-GPU row of the paper's Table 4 (DP 128,
# 16 micro-batches) is 7.0 % slower per GPU, as the paper's 430 -> 400 TFLOP/s.
"$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml >"$tmp/l405.txt"
has "tp 8 pp 16 (v 8) (layers per chunk 0, 126 x 1, 0) dp 64" "$tmp/l405.txt"
fig "step time 13.525 s" "$tmp/l405.txt"
fig "model TFLOP/s per GPU 382.2" "$tmp/l405.txt"
fig "memory per GPU (pipeline rank 1 of 16, the most loaded)" "$tmp/l405.txt"
"$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml --set job_step.hardware.gpus=16384 \
  --set job_step.layout.dp=128 >"$tmp/l405-16k.txt"
fig "model TFLOP/s per GPU 355.3" "$tmp/l405-16k.txt"
"$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml --json >"$tmp/l405.json"
python3 - "$tmp/l405.json" <<'PY' || fail "chunk_layers in the JSON layout"
import json, sys
c = json.load(open(sys.argv[1]))["layout"]["chunk_layers"]
assert len(c) == 128 and c[0] == 0 and c[-1] == 0 and set(c[1:-1]) == {1}, c
PY
run "$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml --set job_step.layout.virtual_stages=1 \
  --set job_step.layout.first_chunk_layers=6 --set job_step.layout.last_chunk_layers=6
refused "job_step.layout.first_chunk_layers: the 126 layers less 12 at the ends leave 114 for the other 14 chunks: not an equal share (would fit: ends holding 0, 14, 28, 42, 56, 70, 84, 98, 112 layers together)"
# Partial recompute (docs/job.md): 1F1B with 7 | 14 x 8 | 7 layers, the first 4 of each chunk recomputed.
l405v1=(--set job_step.layout.virtual_stages=1 --set job_step.layout.first_chunk_layers=7 --set job_step.layout.last_chunk_layers=7)
"$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml "${l405v1[@]}" --set job_step.layout.recompute_layers=4 >"$tmp/l405-part.txt"
has "recompute full (the first 4 layers of each chunk)" "$tmp/l405-part.txt"
fig "step time 16.075 s" "$tmp/l405-part.txt"
fig "activations (peak) 31.67" "$tmp/l405-part.txt"
run "$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml --set job_step.layout.recompute=none --set job_step.layout.recompute_layers=2
refused "job_step.layout.recompute_layers: recomputes the first layers of each chunk whole: needs recompute: full"
# recompute_layers: auto, the fewest layers of each chunk that fit: at PP 2 (v 8, the ends empty) the
# analytic memory, a lower bound, takes fewer than fit at the simulated peak, and the run takes one
# more at a time: 7, as given by hand; 6 is over at the simulated peak (74.7 GiB). With one layer per
# chunk it is all or nothing (every layer); with the ends at 7 and v 1, none.
p2=(--set job_step.layout.pp=2 --set job_step.layout.dp=512)
"$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml "${p2[@]}" --set job_step.layout.recompute_layers=auto >"$tmp/l405-auto.txt"
has "recompute full (the first 7 layers of each chunk, the fewest that fit)" "$tmp/l405-auto.txt"
fig "step time 13.576 s" "$tmp/l405-auto.txt"
fig "total 67.69" "$tmp/l405-auto.txt"
"$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml "${p2[@]}" --set job_step.layout.recompute_layers=7 >"$tmp/l405-7.txt"
diff <(sed 1,2d "$tmp/l405-auto.txt") <(sed 1,2d "$tmp/l405-7.txt") || fail "recompute_layers auto is not 7"
run "$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml "${p2[@]}" --set job_step.layout.recompute_layers=6
refused "job_step.layout: needs 74.7 GiB per GPU at the simulated peak (pipeline rank 1)"
"$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml --set job_step.layout.recompute_layers=auto >"$tmp/l405-all.txt"
has "recompute full (every layer: the fewest that fit)" "$tmp/l405-all.txt"
"$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml "${l405v1[@]}" --set job_step.layout.recompute_layers=auto >"$tmp/l405-none.txt"
has "recompute full (no layer: the fewest that fit)" "$tmp/l405-none.txt"
fig "step time 13.588 s" "$tmp/l405-none.txt"
run "$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.recompute_layers=auto
refused "job_step.layout.recompute_layers: auto recomputes the fewest layers of each chunk that fit, whole: needs recompute: full"
# The search keeps the ends: auto pp and v are those whose other chunks share the rest evenly.
cat >"$tmp/s405.yaml" <<EOF
name: s405
search:
  model: {file: $PWD/scenarios/models/llama3-405b.yaml}
  hardware: {preset: h100-sxm, gpus: 8192}
  layout: {tp: 8, pp: auto, virtual_stages: auto, first_chunk_layers: 0, last_chunk_layers: 0, micro_batch: 1,
           recompute: [full], zero: [2], sequence_parallel: true, global_batch: 2048}
  top: 3
EOF
"$stepsim" search "$tmp/s405.yaml" >"$tmp/s405.txt"
fig "28 layouts considered: 14 pruned by divisibility" "$tmp/s405.txt"
fig "1 8192 8 16 8 64 2 interleaved-1f1b 1 full yes 13.525 s 38.6%" "$tmp/s405.txt"
# A CSV's names are read as the YAML's: an unknown attention kernel is refused (it was read as flash).
awk -F, 'NR == 1 {print $0 ",attention"} NR == 2 {print $0 ",unfsued"}' "$tmp/dsv3.csv" >"$tmp/dsv3-attn.csv"
run "$stepsim" check-against "$tmp/dsv3-attn.csv" --efficiency 0.7,0.55,0.8,0.8,0.8,0.2
refused "dsv3-attn.csv:2: attention: unknown attention kernel 'unfsued' (flash or unfused)"
# A search's recompute_layers applies to its full-recompute layouts; with none of them it is refused.
sed 's/recompute: \[full\]/recompute: [none], recompute_layers: 2/' "$tmp/s405.yaml" >"$tmp/s405-none.yaml"
run "$stepsim" search "$tmp/s405-none.yaml"
refused "search.layout.recompute_layers: recomputes the first layers of each chunk whole: the recompute list has no full"
sed 's/recompute: \[full\]/recompute: [full], recompute_layers: 1/' "$tmp/s405.yaml" >"$tmp/s405-part.yaml"
"$stepsim" search "$tmp/s405-part.yaml" >"$tmp/s405-part.txt"
fig "1 8192 8 16 8 64 2 interleaved-1f1b 1 full yes 13.525 s 38.6%" "$tmp/s405-part.txt"
run "$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml --set job_step.layout.first_chunk_layers=-1
refused "job_step.layout.first_chunk_layers"
"$stepsim" run scenarios/job-gpt3-1024xa100.yaml --json >"$tmp/gpt3.json"
has "\"step_time_ns\": 28419726970" "$tmp/gpt3.json"
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
fig "step time 78.372 s" "$tmp/desk32.txt"
"$stepsim" run scenarios/job-design-qwen3-4090.yaml --set "$book" --set job_step.hardware.gpus=48 >"$tmp/desk48.txt"
fig "step time 52.450 s" "$tmp/desk48.txt"
fig "MFU 39.8%" "$tmp/desk48.txt"
run "$stepsim" run scenarios/job-design-qwen3-4090.yaml --set 'job_step.hardware.efficiency.contention=-0.1'
refused "contention: -0.1 is not a share of time"

# 2. Bad input: one line naming file, line and key, exit 2.
bad() {  # bad NAME 'yaml' 'expected message'
  printf '%s\n' "$2" >"$tmp/$1.yaml"
  set +e
  "$stepsim" run "$tmp/$1.yaml" >"$tmp/$1.out" 2>"$tmp/$1.err"
  local rc=$?
  set -e
  [[ $rc == 2 ]] || { cat "$tmp/$1.err"; fail "$1 exited $rc, expected 2"; }
  [[ $(wc -l <"$tmp/$1.err") == 1 ]] || { cat "$tmp/$1.err"; fail "$1: more than one line"; }
  has "$3" "$tmp/$1.err"
}
head='job_step:
  model: {layers: 96, hidden: 12288, ffn: 49152, heads: 96, vocab: 51200, seq: 2048, mlp: gelu, dropout: true}'
bad preset "$head
  hardware: {preset: h100, gpus: 64}
  layout: {tp: 8, pp: 8, global_batch: 64}" "preset.yaml:3: job_step.hardware.preset: unknown preset 'h100'; did you mean 'h100-sxm'?"
bad preset2 "$head
  hardware: {preset: a100, gpus: 64}
  layout: {tp: 8, pp: 8, global_batch: 64}" "job_step.hardware.preset: unknown preset 'a100'; did you mean 'a100-sxm-80gb'?"
bad heads "$head
  hardware: {preset: a100-sxm-80gb, gpus: 640}
  layout: {tp: 10, pp: 8, global_batch: 64}" "job_step.layout.tp: tp 10 does not divide the 96 attention heads and 96 key/value heads (would fit: 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48)"
bad layers "$head
  hardware: {preset: a100-sxm-80gb, gpus: 560}
  layout: {tp: 8, pp: 7, global_batch: 70}" "job_step.layout.pp: 96 layers do not split into pp x virtual_stages = 7 x 1 = 7 equal chunks"
bad gpus "$head
  hardware: {preset: a100-sxm-80gb, gpus: 256}
  layout: {tp: 8, pp: 8, dp: 2, global_batch: 64}" "job_step.layout.dp: tp x pp x dp x cp = 8 x 8 x 2 x 1 = 128 but the cluster has 256 GPUs (would fit: dp 4)"
bad oom "$head
  hardware: {preset: a100-sxm-80gb, gpus: 64}
  layout: {tp: 8, pp: 8, micro_batch: 4, global_batch: 64, attention: unfused}" "oom.yaml:4: job_step.layout: needs 253.9 GiB per GPU (weights 5.2, gradients 10.4, optimizer 31.3, activations 207.0, buffers 0.0) but a100-sxm-80gb has 76.0 GiB usable; would fit: recompute: full (67.0 GiB)"
moe='job_step:
  model: {layers: 8, hidden: 7168, ffn: 18432, heads: 128, vocab: 129280, seq: 4096, experts: 256, top_k: 8, expert_ffn: 2048}
  hardware: {preset: h800, gpus: 64}'
bad dispatch "$moe
  layout: {dp: 64, ep: 64, global_batch: 64, ep_dispatch: by_node}" "dispatch.yaml:4: job_step.layout.ep_dispatch: unknown ep_dispatch 'by_node' (all_to_all or per_node)"
bad fp8dispatch "$moe
  layout: {dp: 64, ep: 64, global_batch: 64, fp8_dispatch: true}" "fp8dispatch.yaml:4: job_step.layout.fp8_dispatch: FP8 dispatch sends the inputs of FP8 expert GEMMs: needs fp8: true"
bad nodelimit "${head/mlp: gelu/node_limit: 4}
  hardware: {preset: a100-sxm-80gb, gpus: 64}
  layout: {tp: 8, pp: 8, global_batch: 64}" "nodelimit.yaml:2: job_step.model.node_limit: needs experts (a mixture-of-experts model)"
bad shared "${head/mlp: gelu/shared_expert_ffn: 2048}
  hardware: {preset: a100-sxm-80gb, gpus: 64}
  layout: {tp: 8, pp: 8, global_batch: 64}" "shared.yaml:2: job_step.model.shared_expert_ffn: needs experts (a mixture-of-experts model)"
bad nodelimit0 "${moe/expert_ffn: 2048/expert_ffn: 2048, node_limit: 0}
  layout: {dp: 64, ep: 64, global_batch: 64}" "nodelimit0.yaml:2: job_step.model.node_limit: must be at least 1 (got 0)"
bad devicelimit "${moe/expert_ffn: 2048/expert_ffn: 2048, node_limit: 4, device_limit: 3}
  layout: {dp: 64, ep: 64, global_batch: 64}" "devicelimit.yaml:2: job_step.model.device_limit: a token's experts are limited to nodes or to devices, not both"
bad devicelimit9 "${moe/expert_ffn: 2048/expert_ffn: 2048, device_limit: 9}
  layout: {dp: 64, ep: 64, global_batch: 64}" "devicelimit9.yaml:2: job_step.model.device_limit: device_limit 9 is past top_k 8: a token's 8 experts lie on at most 8 devices"
bad devicelimitdense "${head/mlp: gelu/device_limit: 3}
  hardware: {preset: a100-sxm-80gb, gpus: 64}
  layout: {tp: 8, pp: 8, global_batch: 64}" "devicelimitdense.yaml:2: job_step.model.device_limit: needs experts (a mixture-of-experts model)"
bad fusiondense "$head
  hardware: {preset: a100-sxm-80gb, gpus: 64}
  layout: {tp: 8, pp: 8, global_batch: 64, permute_fusion: true}" "fusiondense.yaml:4: job_step.layout.permute_fusion: fuses an MoE block's token shuffles: needs a mixture-of-experts model"
bad experts "${moe/gpus: 64/gpus: 64, efficiency: {experts: 1.5}}
  layout: {dp: 64, ep: 64, global_batch: 64}" "experts.yaml:3: job_step.hardware.efficiency.experts: 1.5 is not an efficiency (a fraction in (0, 1], e.g. 0.7 or 70%)"
bad moehost "${moe/gpus: 64/gpus: 64, efficiency: {moe_host: 2s}}
  layout: {dp: 64, ep: 64, global_batch: 64}" "moehost.yaml:3: job_step.hardware.efficiency.moe_host: 2 s per MoE pass is more than a second"
bad fp8share "${moe/gpus: 64/gpus: 64, efficiency: {fp8: 0}}
  layout: {dp: 64, ep: 64, global_batch: 64}" "fp8share.yaml:3: job_step.hardware.efficiency.fp8: 0 is not an efficiency (a fraction in (0, 1], e.g. 0.7 or 70%)"
bad schedule "$head
  hardware: {preset: a100-sxm-80gb, gpus: 64}
  layout: {tp: 8, pp: 8, schedule: 1f1c, global_batch: 64}" "job_step.layout.schedule: unknown schedule '1f1c'; did you mean '1f1b'?"
# Fits by the analytic lower bound (rank 0's 20.9 GiB of activations: 46.3 GiB), not at the
# simulated peak, where ZB-H1's last rank holds its deferred weight-gradient inputs and the
# logits (47.4 GiB): refused after the run, at the same key.
run "$stepsim" run scenarios/job-llama70b-64xh100.yaml --set job_step.layout.schedule=zb-h1 \
  --set job_step.layout.virtual_stages=1 --set job_step.hardware.accelerator.usable_memory=47GiB
[[ $code == 2 && $(wc -l <<<"$err") == 1 && "$err" == *"job-llama70b-64xh100.yaml:12: job_step.layout: needs 47.4 GiB per GPU at the simulated peak (pipeline rank 3) (weights 4.2, gradients 8.5, optimizer 12.7, activations 21.0, buffers 1.0) but h100-sxm has 47.0 GiB usable; would fit: recompute: full (26.9 GiB)"* ]] ||
  fail "over memory at the simulated peak: exit $code: $err"
printf '%s\n' "$head
  hardware: {preset: a100-sxm-80gb, gpus: 64}
  layout: {tp: 8, pp: 1, dp: 8, global_batch: 64}
  allow_oom: true" >"$tmp/allow.yaml"
"$stepsim" run "$tmp/allow.yaml" >"$tmp/allow.out"
has "(does not fit)" "$tmp/allow.out"

# A framework slower than the network (docs/job.md "Collectives across nodes"): DeepSpeed 0.3's
# ZeRO-3 rate and its gathers by module (a recomputed layer's again); a cap that is not a
# bandwidth, a fetch that is neither, each at its key.
"$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.recompute=full --set job_step.layout.dp_bandwidth=21.3GB/s \
  --set job_step.layout.zero3_fetch=module >"$tmp/ds.txt"
has "recompute full, DP collectives at most 21.3 GB/s, ZeRO-3 gathers by module (recomputed layers' weights again)" "$tmp/ds.txt"
fig "step time 19.221 s" "$tmp/ds.txt"
fig "exposed DP/ZeRO 19.209 s" "$tmp/ds.txt"
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
# FP32 weights as the master (PyTorch FSDP's mixed precision, docs/job.md "Where the master
# weights are"): 4 B of weights, 8 B of Adam state instead of 2 + 12, in the header, the JSON and
# the memory table; a value that is neither, at its key (YAML, --set, CSV cell).
"$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.master_weights=model >"$tmp/mw.txt"
has "recompute none, FP32 weights as the master (BF16 copies to compute)" "$tmp/mw.txt"
fig "weights 3.74" "$tmp/mw.txt"
fig "optimizer state 7.48" "$tmp/mw.txt"
fig "gradients 3.74" "$tmp/mw.txt"
fig "total 58.07" "$tmp/mw.txt"
fig "step time 5.859 s" "$tmp/mw.txt"
"$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.master_weights=model --json >"$tmp/mw.json"
layout_key "$tmp/mw.json" master_weights '"model"'
layout_key "$tmp/fsdp.json" master_weights absent
run "$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.master_weights=fp32
refused "job_step.layout.master_weights: unknown master_weights 'fp32' (optimizer or model)"
csv_refused validation/fsdp_across_nodes.csv 's/^\(TT,.*\),model,0$/\1,fp32,0/' "edited.csv:20: master_weights: unknown master_weights 'fp32' (optimizer or model)"
"$stepsim" search scenarios/search-design-desk.yaml --set search.layout.master_weights=model >"$tmp/mw-search.txt" 2>/dev/null
has "FP32 weights as the master, cast to BF16 to compute (no BF16 copy kept beside them)" "$tmp/mw-search.txt"
# HSDP (docs/job.md "HSDP"): sharded in each node, 16 replicas, against FSDP over all 128 GPUs;
# in the header and the JSON; refusals at dp_replicate; a layout too big names the replicas that fit.
"$stepsim" compare scenarios/job-hsdp-128xa100.yaml >"$tmp/hsdp.txt"
has "tp 1 pp 1 dp 128 (HSDP: 16 replicas, each sharding over 8), zero 3" "$tmp/hsdp.txt"
fig "base 2.237 s +0.0% 3662 50.3% 47.8 / 76.0 yes" "$tmp/hsdp.txt"
fig "shard-over-32 2.443 s +9.2% 3354 46.1% 38.4 / 76.0 yes" "$tmp/hsdp.txt"
fig "fsdp-all-128 2.399 s +7.2% 3415 46.9% 36.1 / 76.0 yes" "$tmp/hsdp.txt"
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
fig "step time 1.948 s" "$tmp/hsdp-dgx.txt"
"$stepsim" run scenarios/job-hsdp-128xa100.yaml --set job_step.hardware.efficiency.contention=0 >"$tmp/hsdp-c0.txt"
fig "step time 1.836 s" "$tmp/hsdp-c0.txt"
run "$stepsim" run scenarios/job-hsdp-128xa100.yaml --set job_step.hardware.efficiency.contention=2
refused "job_step.hardware.efficiency.contention: 2 is not a share of time"
# FSDP keeping each layer's gathered weights from forward to backward (reshard_after_forward=False).
"$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.keep_gathered=true >"$tmp/kept.txt"
has ", ZeRO-3 weights kept gathered from forward to backward" "$tmp/kept.txt"
fig "step time 5.800 s" "$tmp/kept.txt"
fig "buffers 23.19" "$tmp/kept.txt"
"$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.keep_gathered=true --json >"$tmp/kept.json"
layout_key "$tmp/kept.json" keep_gathered true
layout_key "$tmp/fsdp.json" keep_gathered absent
run "$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.keep_gathered=sometimes
refused "job_step.layout.keep_gathered"
# ... a CSV column too: IBM's 34B row (line 25) with its weights kept runs faster than as measured.
sed '22s/$/,keep_gathered/; 23,24s/$/,0/; 25s/$/,1/; 26,$s/$/,0/' validation/fsdp_hsdp_ibm.csv >"$tmp/kept.csv"
"$stepsim" check-against --efficiency 0.734,0.374,1,0.9,0.601,0.418 "$tmp/kept.csv" >"$tmp/kept-check.txt"
tr -s ' ' <"$tmp/kept-check.txt" | grep "^25 Table 1 Llama-2-34B FSDP 128 GPUs" | grep -qv " 595.9 " ||
  { cat "$tmp/kept-check.txt"; fail "keep_gathered column"; }
# IBM and Meta's runs (validation/fsdp_hsdp_ibm.csv), held out: the HSDP rows on A100 within 1 %;
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
assert [round(100 * r[n]["error"], 1) for n in range(23, 30)] == [-1.0, -0.6, -14.8, -20.1, 42.1, 11.7, 7.2], r
assert (f["ranking"]["kept"], f["ranking"]["pairs"]) == (15, 15), f["ranking"]
PY
csv_refused validation/fsdp_hsdp_ibm.csv 's/^\(IBM,Table 1,Llama-2-7B HSDP,.*a100-sxm-80gb,400,128,1,1,128,\)16,/\17,/' "edited.csv:23: dp_replicate: dp_replicate 7 does not divide dp 128"
csv_refused validation/fsdp_hsdp_ibm.csv 's/a100-sxm-80gb,400,128/a100-sxm-80gb,fast,128/' "edited.csv:23: node_gbps: 'fast' is not a positive number"
# torchtitan's recompute by op (docs/job.md "Recompute by op"): in the header and the JSON; a
# block it is not defined for, refused at the key.
"$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.recompute=op >"$tmp/op.txt"
has "recompute op (torchtitan's: every second matmul rerun)" "$tmp/op.txt"
fig "step time 6.489 s" "$tmp/op.txt"
fig "HFU 57.7%" "$tmp/op.txt"
fig "activations (peak) 15.56" "$tmp/op.txt"
fig "buffers 9.63" "$tmp/op.txt"
"$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.recompute=op --json >"$tmp/op.json"
layout_key "$tmp/op.json" recompute '"op"'
run "$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set job_step.layout.recompute=op
refused "job_step.layout.recompute: op checkpoints a dense block's matmuls in torchtitan's order: the model has experts or mla"
run "$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.recompute=op --set job_step.layout.attention=unfused
refused "job_step.layout.recompute: op saves FlashAttention's output (torchtitan's SDPA): needs attention: flash"
# A search tries op where recompute lists it: between none and full in time and memory.
cat >"$tmp/op-search.yaml" <<YAML
name: op-search
search:
  model: {file: $PWD/scenarios/models/llama3-8b.yaml}
  hardware: {preset: h100-sxm, gpus: 8}
  layout: {tp: 1, zero: 3, micro_batch: 1, global_batch: 64, recompute: [none, op, full]}
YAML
"$stepsim" search "$tmp/op-search.yaml" >"$tmp/op-search.txt" 2>/dev/null
fig "1 8 1 1 1 8 fsdp - 1 none no 5.929 s 57.5% 60.3" "$tmp/op-search.txt"
fig "2 8 1 1 1 8 fsdp - 1 op no 6.558 s 52.0% 42.4" "$tmp/op-search.txt"
fig "3 8 1 1 1 8 fsdp - 1 full no 7.668 s 44.5% 29.4" "$tmp/op-search.txt"
run "$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.recompute=ops
refused "unknown recompute 'ops' (none, selective, op or full)"

# ... and in a measured-runs row, at its column.
{ sed -n '/^src,/p' validation/qwen3_235b_moe_modelzoo.csv
  grep '^MZ,Long context,Qwen3-235B-A22B 16K,' validation/qwen3_235b_moe_modelzoo.csv | sed 's/,selective,layernorm+moe,/,op,,/'; } >"$tmp/op-moe.csv"
run "$stepsim" check-against "$tmp/op-moe.csv"
refused "op-moe.csv:2: recomp: op checkpoints a dense block's matmuls in torchtitan's order"

# A header names only columns a row is read from, each once (a misspelt one would leave its
# setting at the default, unseen), and a row has no more cells than the header has columns.
csv_refused validation/megatron_sc21.csv 's/,zero3_fetch$/,zero3_fech/' "edited.csv:10: zero3_fech: unknown column 'zero3_fech'; did you mean 'zero3_fetch'?"
csv_refused validation/megatron_sc21.csv 's/^src,tbl,model,/src,tbl,tp,/' "edited.csv:10: tp: column 'tp' named twice"
csv_refused validation/megatron_sc21.csv 's/,21.3,module$/,21.3,module,1/' "edited.csv:21: 33 cells where the header names 32 columns"
# A spreadsheet's byte-order mark and Windows line ends read as the plain file.
{ printf '\xef\xbb\xbf'; sed 's/$/\r/' validation/megascale_megatron.csv; } >"$tmp/bom.csv"
"$stepsim" check-against validation/megascale_megatron.csv >"$tmp/plain.txt"
"$stepsim" check-against "$tmp/bom.csv" | sed "s#$tmp/bom.csv#validation/megascale_megatron.csv#" | diff - "$tmp/plain.txt" >/dev/null ||
  fail "a byte-order mark or CRLF line ends change a measured-runs table"

# A search states them under its first line, as every setting its layouts share.
"$stepsim" search scenarios/search-design-desk.yaml --set search.layout.zero3_fetch=module \
  --set search.layout.dp_bandwidth=10GB/s >"$tmp/ds-search.txt" 2>/dev/null
has "data-parallel collectives at most 10 GB/s per GPU" "$tmp/ds-search.txt"
has "zero 3: weights gathered module by module, a recomputed layer's again before its backward" "$tmp/ds-search.txt"

# 3. Validation: one A100 calibration fitted on the rows marked fit=1, the others held out.
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
# SC21: the known misses of docs/job.md, each held close so that it cannot grow unseen: the
# held-out mean 5.04 % (to 5.1 %) and 76.1B (line 16, +10.03 %, to 10.5 %); every other row within
# 10 % (the ZeRO-3 rows at DeepSpeed's 21.3 GB/s gathers, measured apart, and its regather of all
# but a layer's last module); at most the one known pair flips (76.1B vs 145.6B); every ZeRO-3 row
# below the TP x PP row of its model and size, and falling with scale.
s = rows("megatron_sc21.csv")
f = files["megatron_sc21.csv"]
assert f["held_out"]["mean_abs_error"] <= 0.051, f["held_out"]
for line, r in s.items():
    assert abs(r["error"]) <= (0.105 if line == 16 else 0.10), (line, r)
assert f["fit"]["max_abs_error"] <= 0.10, f["fit"]
assert f["ranking"]["kept"] >= f["ranking"]["pairs"] - 1, f["ranking"]
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
assert [round(lr[n]["predicted"], 1) for n in (16, 17, 18)] == [454.8, 420.4, 391.7], lr
assert l["held_out"]["mean_abs_error"] <= 0.05 and l["held_out"]["max_abs_error"] <= 0.10, l["held_out"]
assert l["ranking"]["kept"] == l["ranking"]["pairs"] == 3, l["ranking"]
# Row 1's layout needs more memory than an H100 has in stepsim's model (the paper's run freed
# what the model keeps); the 16-micro-batch rows fit. Each row says so in the JSON.
assert [round(lr[n]["memory_bytes"] / 2**30, 1) for n in (16, 17)] == [76.7, 69.8], lr
assert all(lr[n]["usable_bytes"] == lr[16]["usable_bytes"] for n in (17, 18)), lr
assert round(lr[16]["usable_bytes"] / 2**30, 1) == 74.5, lr
# Qwen3-235B-A22B MoE on H100 (the H100 calibration: the MoE-layer rows' GEMM efficiency, the
# preset's five other dense ones, and the host time per MoE pass fitted on the 16K row, 0.97 ms):
# the held-out rows within the issue's bounds (mean 5 %, max 10 %); ranked right.
q = files["qwen3_235b_moe_modelzoo.csv"]
qr = rows("qwen3_235b_moe_modelzoo.csv")
assert abs(d["calibration"]["h100-sxm"]["moe_host"] - 0.9761e-3) < 0.5e-6, d["calibration"]
assert [n for n in qr if qr[n]["fit"]] == [15], qr
assert [round(qr[n]["predicted"], 1) for n in (15, 16, 17, 18)] == [295.0, 335.4, 372.6, 404.2], qr
assert all(abs(qr[n]["error"]) <= 0.10 for n in qr), qr
assert q["held_out"]["mean_abs_error"] <= 0.05, q["held_out"]
assert q["ranking"]["kept"] == q["ranking"]["pairs"] == 6, q["ranking"]
# Megatron-LM's MoE layer benchmark on H100 (the MoE block alone): no dense H100 row being fitted,
# its 4 BF16 fit rows fit the GEMM efficiency itself (0.594: 587 TFLOP/s; the experts' share stays
# 1), then the blockwise FP8 GEMMs' share on one FP8 row (0.593: FP8 grouped GEMMs at 1.19x BF16). The
# known misses of docs/job.md: held-out mean 5.4 %, the Mixtral-like DeepEP forward (line 18)
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
# 70B row of 25.11 (0.875: FP8 GEMMs at 1.75x BF16, where blockwise grouped ones run at 1.19x);
# the other seven rows held out (two more NeMo containers' and Megatron-LM's README's), 8 to 1,024
# GPUs, within 5 % mean and 10 % max, ranking kept.
assert round(h100["fp8"], 3) == 0.873, h100
nm = rows("nemo_llama3_h100_fp8.csv")
assert [n for n in nm if nm[n]["fit"]] == [22], nm
assert [round(nm[n]["predicted"]) for n in range(21, 29)] == [14175, 1602, 312, 1625, 321, 14702, 1602, 312], nm
n = files["nemo_llama3_h100_fp8.csv"]
assert n["held_out"]["mean_abs_error"] <= 0.05 and n["held_out"]["max_abs_error"] <= 0.10, n["held_out"]
assert n["ranking"]["kept"] == n["ranking"]["pairs"] == 7, n["ranking"]
# FSDP over 64 GPUs of 8 nodes (torchtitan on A100, NeMo AutoModel on H100): no row fitted, each at
# its accelerator's calibration; NCCL's rings striped over each node's NICs put them within 4 %
# (at one NIC's share per GPU they read -27 % to -66 %). Lines 23-25, torchtitan's Llama 2 rows,
# were added after the rule, and checked, not used, to make it.
fs = rows("fsdp_across_nodes.csv")
f = files["fsdp_across_nodes.csv"]
assert not any(r["fit"] for r in fs.values()), fs
assert [round(fs[n]["predicted"], 1) for n in range(20, 26)] == [2864.9, 318.7, 846.6, 2231.3, 1949.5, 344.5], fs
assert [round(100 * fs[n]["error"], 1) for n in range(20, 26)] == [-1.3, -3.7, -2.3, 3.2, 1.9, -2.4], fs
# torchtitan's "selective op" rows (recompute: op), added after the two rules above and checked
# without a change: Llama 3 8B +1.0 %, Llama 2 13B +6.1 %, Llama 2 70B at local batch 1 +1.9 %.
assert [round(100 * fs[n]["error"], 1) for n in range(26, 29)] == [1.0, 6.1, 1.9], fs
assert f["ranking"]["kept"] == f["ranking"]["pairs"] == 10, f["ranking"]
assert f["held_out"]["mean_abs_error"] <= 0.05 and f["held_out"]["max_abs_error"] <= 0.10, f["held_out"]
print("check-against bounds ok")
PY

# MosaicML's MPT rows on FSDP (docs/job.md "MPT on FSDP"), every row held out at the calibrations
# the other tables fit: the misses held as they are, so that none moves unseen. A100: every run fits
# in stepsim's memory model, as every one ran (PyTorch FSDP's FP32 weights without a BF16 copy, MPT
# without dropout); 8 of the 9 within 10 % of the memory predicted 11-41 % fast, the other 35 within
# 19 %; H100 (2023 software): worst at long sequences.
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
assert (round(100 * a["held_out"]["mean_abs_error"], 1), round(100 * a["held_out"]["max_abs_error"], 1)) == (10.5, 40.9), a
assert (a["ranking"]["kept"], a["ranking"]["pairs"]) == (923, 933), a["ranking"]
assert all(r["memory_bytes"] <= r["usable_bytes"] for r in a["rows"]), a
edge = [r for r in a["rows"] if r["memory_bytes"] >= 0.9 * r["usable_bytes"]]
rest = [r for r in a["rows"] if r["memory_bytes"] < 0.9 * r["usable_bytes"]]
assert len(edge) == 9 and sorted(r["error"] > 0.10 for r in edge) == [False] + [True] * 8, edge
assert max(abs(r["error"]) for r in rest) < 0.19 and round(100 * sum(abs(r["error"]) for r in rest) / 35, 1) == 8.1
assert (round(100 * h["held_out"]["mean_abs_error"], 1), round(100 * h["held_out"]["max_abs_error"], 1)) == (40.8, 146.0), h
assert sum(r["memory_bytes"] > r["usable_bytes"] for r in h["rows"]) == 4, h
r = {x["line"]: x for x in a["rows"]}
assert [round(r[n]["predicted"], 1) for n in (17, 21, 60)] == [400.9, 834.0, 41501.6], r
print("MPT tables ok")
PY

# Calibrated on every third row of its own table (docs/job.md "MPT on FSDP"), the H100 section of
# 2023 comes within 3.3 % on the others; the A100 section does not (its rows at the edge of memory).
for gpu in h100 a100; do
  awk -F, -v OFS=, '/^src,/ {for (i = 1; i <= NF; i++) if ($i == "fit") f = i} /^MPT,/ && (n++ % 3 == 0) {$f = 1} 1' \
    "validation/mpt_fsdp_$gpu.csv" >"$tmp/mpt-$gpu-fit.csv"
  "$stepsim" check-against "$tmp/mpt-$gpu-fit.csv" >"$tmp/mpt-$gpu-fit.txt"
done
has "calibration for h100-sxm: gemm 0.769, attention 0.175, memory 0.257, fabric 0.594, network 0.627, contention 0.594" \
  "$tmp/mpt-h100-fit.txt"
fig "held out: 34 rows, mean |error| 3.2%, max 25.4%" "$tmp/mpt-h100-fit.txt"
fig "20 H100 80GB MPT-30B s8192 AC 8 GPUs 1384 tok/s 1736 +25.4% held out" "$tmp/mpt-h100-fit.txt"
has "calibration for a100-sxm-80gb: gemm 1.000, attention 0.342, memory 0.147, fabric 0.160, network 0.055" \
  "$tmp/mpt-a100-fit.txt"
fig "held out: 29 rows, mean |error| 7.3%, max 67.9%" "$tmp/mpt-a100-fit.txt"

# The table names a row that needs more memory than the GPU has (in stepsim's model) in a last
# column, which a table whose rows all fit does not have.
"$stepsim" check-against validation/llama3_405b_meta2024.csv >"$tmp/l3-memory.txt"
fig "16 Table 4 Llama-3-405B 8K 8192 GPUs 430 TFLOP/s 518.7 +20.6% held out needs 76.7 of 74.5 GiB" "$tmp/l3-memory.txt"
fig "17 Table 4 Llama-3-405B 8K 16384 GPUs 400 TFLOP/s 477.4 +19.3% held out" "$tmp/l3-memory.txt"
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
fig "15 Long context Qwen3-235B-A22B 16K 256 GPUs 295 TFLOP/s 354.1 +20.0% held out" "$tmp/mixed.txt"
"$stepsim" check-against "$tmp/qwen3-held.csv" --json >"$tmp/moe-only.json"
has '"source": "preset"' "$tmp/moe-only.json"
# The Qwen3 16K row as a scenario on the shipped H100 calibration: the table's 295 TFLOP/s, and
# its other rows as variants.
"$stepsim" run scenarios/job-qwen3-235b-16k-256xh100.yaml >"$tmp/q16.txt"
fig "model TFLOP/s per GPU 295.0" "$tmp/q16.txt"
fig "host waits per MoE layer 2.93 ms" "$tmp/q16.txt"
"$stepsim" compare scenarios/job-qwen3-235b-16k-256xh100.yaml >"$tmp/q16-cmp.txt"
fig "128k 238.336 s +1992.3% 550 40.9% 53.6 / 74.5 yes 2.3%" "$tmp/q16-cmp.txt"
# calibrate says which stage each row fitted, where they fit more than one (not for one stage).
# (The Llama 3 table with its 8K row marked fit=1: a dense row.)
sed 's/,tflops_model,430,0,/,tflops_model,430,1,/' validation/llama3_405b_meta2024.csv >"$tmp/llama3-fit.csv"
"$stepsim" calibrate "$tmp/llama3-fit.csv" validation/qwen3_235b_moe_modelzoo.csv --fit-rows \
  -o "$tmp/two-stages.yaml" >"$tmp/two-stages.txt"
fig "validation/qwen3_235b_moe_modelzoo.csv:15 Long context Qwen3-235B-A22B 16K 256 GPUs 295 TFLOP/s 295 +0.0% moe_host" \
  "$tmp/two-stages.txt"
has "-0.0%  dense six" "$tmp/two-stages.txt"
"$stepsim" calibrate "$tmp/llama3-fit.csv" --fit-rows -o "$tmp/one-stage.yaml" >"$tmp/one-stage.txt"
if grep -q "dense six" "$tmp/one-stage.txt"; then fail "a one-stage calibration names its stage"; fi
# With a dense row fitted, the MoE blocks' rows fit the routed experts' share (at its bound here:
# the Llama row alone puts gemm at 0.557, below the blocks' GEMMs), not gemm.
"$stepsim" calibrate "$tmp/llama3-fit.csv" validation/megatron_moe_layer_h100.csv --fit-rows \
  -o "$tmp/dense-moe.yaml" >"$tmp/dense-moe.txt"
has "calibration for h100-sxm: gemm 0.557, attention 0.542" "$tmp/dense-moe.txt"
fig "validation/megatron_moe_layer_h100.csv:16 moe_perf Mixtral-like a2a BF16 8 GPUs 4.262 ms 4.295 +0.8% experts" \
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
# whole microseconds, which a scenario reads back as the same step as the value set.
"$stepsim" calibrate validation/qwen3_235b_moe_modelzoo.csv --fit-rows -o "$tmp/h100-host.yaml" >/dev/null
has "contention: 0.2000, moe_host: 1673us}" "$tmp/h100-host.yaml"
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set "job_step.hardware={file: $tmp/h100-host.yaml, gpus: 256}" \
  >"$tmp/host-file.txt"
fig "step time 14.967 s" "$tmp/host-file.txt"
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set job_step.hardware.efficiency.moe_host=1673us >"$tmp/host-set.txt"
fig "step time 14.967 s" "$tmp/host-set.txt"
# Full recompute waits three times per layer and micro-batch: forward, its rerun, backward.
fig "host waits per MoE layer 5.02 ms" "$tmp/host-set.txt"
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set job_step.hardware.efficiency.moe_host=1673us --json \
  >"$tmp/host-set.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert abs(d["layer_host_ms"] - 5.019) < 1e-9, d' \
  "$tmp/host-set.json"
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml --json >"$tmp/host-none.json"
if grep -q layer_host_ms "$tmp/host-none.json"; then fail "layer_host_ms at 0"; fi
# Beside the A100 table alone, the Qwen3 row fits the host time from the H100 preset's efficiencies.
"$stepsim" check-against validation/megatron_sc21.csv validation/qwen3_235b_moe_modelzoo.csv >"$tmp/mixed-fit.txt"
has "contention 0.200, moe_host 1.673 ms" "$tmp/mixed-fit.txt"
fig "18 Long context Qwen3-235B-A22B 128K 256 GPUs 389 TFLOP/s 402.9 +3.6% held out" "$tmp/mixed-fit.txt"
# The MoE-layer rows alone (no dense row given): they fit the GEMM efficiency itself, 0.594 (a share
# of the preset's unmeasured 0.70 would mean nothing), then the blockwise FP8 share on the FP8 row, 0.593;
# both written to the hardware file, which a scenario reads back as the same step as the values set.
"$stepsim" calibrate validation/megatron_moe_layer_h100.csv --fit-rows -o "$tmp/h100-moe.yaml" >"$tmp/h100-moe.txt"
has "calibration for h100-sxm: gemm 0.594, attention 0.550" "$tmp/h100-moe.txt"
has "contention 0.200, fp8_blockwise 0.593" "$tmp/h100-moe.txt"
has "efficiency: {gemm: 0.5938, attention: 0.5500, memory: 0.8000, fabric: 0.8000, network: 0.8000, contention: 0.2000, fp8_blockwise: 0.5927}" \
  "$tmp/h100-moe.yaml"
blockwise=(--set job_step.layout.fp8=true --set job_step.layout.fp8_recipe=blockwise)
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
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set job_step.layout.fp8=true --json \
  --set job_step.hardware.efficiency.gemm=0.5938 --set job_step.hardware.efficiency.fp8_blockwise=0.5927 >"$tmp/tw-other.json"
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set job_step.layout.fp8=true --json \
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
has "experts 1.5 is not a fraction in (0, 1]" "$tmp/eff7.err"
"$stepsim" check-against validation/megatron_moe_layer_h100.csv --efficiency 0.814,0.555,0.803,0.82,0.804,0.2,0.713 \
  >"$tmp/eff7.txt"
fig "16 moe_perf Mixtral-like a2a BF16 8 GPUs 4.262 ms 4.109 -3.6% fit" "$tmp/eff7.txt"
# An eighth number, the tensorwise FP8 GEMMs' share: NeMo's FP8 rows as the calibration has them.
"$stepsim" check-against validation/nemo_llama3_h100_fp8.csv --efficiency 0.5938,0.55,0.8,0.8,0.8,0.2,1,0.8752 \
  >"$tmp/eff8.txt"
fig "23 25.11 Llama-3.1-405B FP8-CS 1024 GPUs 292 tok/s 312.9 +7.2% held out" "$tmp/eff8.txt"
has "contention 0.200, fp8 0.875" "$tmp/eff8.txt"
# NeMo's 70B FP8 row as a scenario: the fitted 1,602 tokens/s per GPU, 1.35x what blockwise
# scaling gives and 1.45x BF16 at NeMo's BF16 layout.
"$stepsim" compare scenarios/job-llama3-70b-fp8-64xh100.yaml >"$tmp/l70-fp8.txt"
fig "base 10.227 s +0.0% 1602 36.4% 62.4 / 74.5 yes 10.3% 0.22 s (TP 0.14 PP 0.07)" "$tmp/l70-fp8.txt"
fig "blockwise 13.764 s +34.6% 1190 27.0% 62.4 / 74.5 yes 10.6% 0.07 s" "$tmp/l70-fp8.txt"
fig "bf16 14.738 s +44.1% 1112 50.5% 53.7 / 74.5 yes 5.4% 0.11 s (DP/ZeRO 0.09)" "$tmp/l70-fp8.txt"
# Forward-backward pairs (overlap.ep_a2a): Megatron-Bridge's Qwen3-235B FP8 recipe with and without
# its EP all-to-all overlap (measured 1,633 tokens/s per GPU); JSON says so; a pipeline without
# virtual stages, and no EP, are refused at the key, in a scenario and in a measured run's row.
"$stepsim" compare scenarios/job-qwen3-235b-fp8-256xh100.yaml >"$tmp/q235-pairs.txt"
fig "base 68.351 s +0.0% 1918 14.4% 62.6 / 74.5 yes 3.2% 67.62 s (TP 0.92 PP 0.87 EP 65.82)" "$tmp/q235-pairs.txt"
fig "no-overlap 110.179 s +61.2% 1190 8.9% 61.3 / 74.5 yes 1.9% 66.79 s (TP 0.92 EP 65.84)" "$tmp/q235-pairs.txt"
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
h100=0.5938,0.55,0.8,0.8,0.8,0.2,1,0.8727,0.000976,0.5927
"$stepsim" check-against "$tmp/q-plain.csv" --efficiency "$h100" >"$tmp/q-plain.txt"
"$stepsim" check-against "$tmp/q-pairs.csv" --efficiency "$h100" >"$tmp/q-pairs.txt"
fig "15 Long context Qwen3-235B-A22B 16K 256 GPUs 295 TFLOP/s 295 +0.0% held out" "$tmp/q-plain.txt"
fig "15 Long context Qwen3-235B-A22B 16K 256 GPUs 295 TFLOP/s 315.5 +7.0% held out" "$tmp/q-pairs.txt"
# A tenth, the blockwise FP8 GEMMs' share: the MoE layer's FP8 rows (Transformer Engine's blockwise
# recipe) as a calibration with these values predicts them.
"$stepsim" check-against validation/megatron_moe_layer_h100.csv \
  --efficiency 0.814,0.555,0.803,0.82,0.804,0.2,0.713,1,0,0.604 >"$tmp/eff10.txt"
fig "24 moe_perf Mixtral-like a2a FP8 8 GPUs 3.676 ms 3.731 +1.5% held out" "$tmp/eff10.txt"
has "contention 0.200, experts 0.713, fp8_blockwise 0.604" "$tmp/eff10.txt"
# A ninth, the MoE passes' host time in seconds: the Qwen3 rows as the fitted calibration has them;
# eleven numbers, a host time past a second or a blockwise share past 1 are refused.
"$stepsim" check-against validation/qwen3_235b_moe_modelzoo.csv \
  --efficiency 0.814,0.555,0.803,0.82,0.804,0.2,0.713,0.604,0.00134 >"$tmp/eff9.txt"
has "fp8 0.604, moe_host 1.340 ms" "$tmp/eff9.txt"
fig "16 Long context Qwen3-235B-A22B 32K 256 GPUs 335 TFLOP/s 334.1 -0.3% held out" "$tmp/eff9.txt"
for bad in 0.7,0.5,0.8,0.8,0.8,0.2,1,0.6,0,1,1 0.7,0.5,0.8,0.8,0.8,0.2,1,1,0,1.5 0.7,0.5,0.8,0.8,0.8,0.2,1,1,2; do
  set +e
  "$stepsim" check-against validation/qwen3_235b_moe_modelzoo.csv --efficiency "$bad" >/dev/null 2>"$tmp/eff10.err"
  rc=$?
  set -e
  [[ $rc == 2 ]] || fail "--efficiency $bad: exit $rc"
done
has "moe_host 2 is not a fraction in" "$tmp/eff10.err"
run "$stepsim" check-against validation/qwen3_235b_moe_modelzoo.csv --efficiency 0.7,0.5,0.8,0.8,0.8,0.2,1,1,0,1.5
[[ $code == 2 ]] && has "fp8_blockwise 1.5 is not a fraction in (0, 1]" <(echo "$err") || fail "fp8_blockwise 1.5: $code $err"
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

# 4. calibrate writes a hardware file a scenario can use. The shipped A100 file is the fit on the
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
"$stepsim" calibrate validation/megascale_megatron.csv --fit-rows -o "$tmp/hw.yaml" >"$tmp/cal.txt"
has "rms residual" "$tmp/cal.txt"
has "efficiency: {gemm:" "$tmp/hw.yaml"
sed "s|file: hardware/a100-calibrated.yaml|file: $tmp/hw.yaml|; s|file: models/|file: $PWD/scenarios/models/|" scenarios/job-gpt3-1024xa100.yaml >"$tmp/gpt3-own.yaml"
"$stepsim" run "$tmp/gpt3-own.yaml" >"$tmp/own.txt"
has "step time" "$tmp/own.txt"
echo "job_step: all checks passed"

# 5. Long context (docs/job.md): balanced CP chunks, the pairs per rank; resharding TP 4 -> 8.
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

# 6. DualPipe and DualPipe-V through the job path (a Llama-70B-shaped pipeline of 4 stages).
"$stepsim" run scenarios/job-llama70b-64xh100.yaml --set job_step.layout.virtual_stages=1 \
  --set job_step.layout.schedule=dualpipe-v --json >"$tmp/dpv.json"
"$stepsim" run scenarios/job-llama70b-64xh100.yaml --set job_step.layout.virtual_stages=1 \
  --set job_step.layout.schedule=1f1b --json >"$tmp/1f1b.json"
"$stepsim" run scenarios/job-llama70b-64xh100.yaml --set job_step.layout.virtual_stages=1 \
  --set job_step.layout.schedule=dualpipe --set job_step.allow_oom=true --json >"$tmp/dual.json"
python3 - "$tmp/dpv.json" "$tmp/1f1b.json" "$tmp/dual.json" <<'PY'
import json, sys
v, one, dual = (json.load(open(p)) for p in sys.argv[1:])
assert v["bubble"] < one["bubble"] and v["step_time_ns"] < one["step_time_ns"], (v["bubble"], one["bubble"])
assert dual["memory_bytes"]["weights"] == 2 * one["memory_bytes"]["weights"]
print("dualpipe: ok")
PY
echo "job_step long context and dualpipe: all checks passed"
