#!/usr/bin/env bash
# Bad job_step, search and measured-runs input from the CLI (docs/job.md): one file:line: key:
# message line with exit 2; what the refusals suggest instead.
# Usage: bash tests/job_step_errors_cli.sh /path/to/stepsim   (from the source directory)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"

# Bad input: one line naming file, line and key, exit 2.
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
# tp x pp x cp must divide the GPUs (dp derived): the first factor that stops dividing them is blamed
# where the layout gives it, with the values that would; the GPUs when the layout gives none.
bad split "$head
  hardware: {preset: a100-sxm-80gb, gpus: 8}
  layout: {tp: 2, pp: 3, global_batch: 64}" "split.yaml:4: job_step.layout.pp: 8 GPUs do not split into tp x pp x cp = 2 x 3 x 1 groups (would fit: pp 1, 2, 4)"
run "$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.tp=3
refused "error: --set: job_step.layout.tp: 8 GPUs do not split into tp x pp x cp = 3 x 1 x 1 groups (would fit: tp 1, 2, 4, 8)"
# An empty model or hardware `file:` is a path left out, not an unknown key.
run "$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.model.file=
refused "error: --set: job_step.model.file: empty: give the file's path (relative to this scenario)"
# A key with nothing after it is blamed at its own line (yaml-cpp marks the null a line on).
bad bare "job_step:
  model:
  hardware: {preset: h100-sxm, gpus: 8}
  layout: {tp: 1, global_batch: 8}" "bare.yaml:2: job_step.model: missing (a model file, fields or a built-in name)"
bad nofile2 "job_step:
  model: {file: \"\"}
  hardware: {preset: h100-sxm, gpus: 8}
  layout: {tp: 1, global_batch: 8}" "nofile2.yaml:2: job_step.model.file: empty: give the file's path (relative to this scenario)"
# The would-fit values are those the other two factors leave room for (tp with pp 4 on 60 GPUs).
run "$stepsim" run scenarios/job-llama70b-64xh100.yaml --set job_step.hardware.gpus=60 --set job_step.layout.dp=null
refused "job-llama70b-64xh100.yaml:12: job_step.layout.tp: 60 GPUs do not split into tp x pp x cp = 8 x 4 x 1 groups (would fit: tp 1, 3, 5, 15)"
run "$stepsim" run scenarios/job-llama70b-64xh100.yaml --set job_step.hardware.gpus=36 --set job_step.layout.dp=null --set job_step.layout.cp=2
refused "error: --set: job_step.hardware.gpus: 36 GPUs do not split into tp x pp x cp = 8 x 4 x 2 groups"
# compare --schedules: what a schedule cannot do is said at --schedules, naming it.
run "$stepsim" compare scenarios/job-fsdp-8.yaml --schedules dualpipe
refused "error: --schedules: dualpipe: zero 3 (FSDP) runs the layers in order on each rank"
run "$stepsim" compare scenarios/job-gpt3-1024xa100.yaml --schedules 1f1b,pipedream-flush
refused "error: --schedules: 1f1b named twice"
run "$stepsim" compare scenarios/job-gpt3-1024xa100.yaml --schedules zb-h2
refused "error: --schedules: zb-h2 v=1: with blocking pipeline sends (overlap.pp false) schedule 'zb-h2' deadlocks"
"$stepsim" compare scenarios/job-llama70b-64xh100.yaml --schedules fill-drain >"$tmp/fill.txt"
fig "fill-drain v=1 16.115 s +3.6% 1017 46.2% 362.4 / 74.5 no" "$tmp/fill.txt"
# calibrate names the file of the row of a second accelerator; a count past its column's range is too large.
run "$stepsim" calibrate validation/megatron_korthikanti2022.csv validation/nemo_llama3_h100_fp8.csv -o "$tmp/two.yaml"
refused "error: validation/nemo_llama3_h100_fp8.csv:25: hw: rows of 'a100-sxm-80gb' and 'h100-sxm': calibrate one accelerator at a time"
awk -F, -v OFS=, 'NR == 10 { print $0, "nics"; next } /^SC21/ { print $0, "99999999999999999999"; next } { print }' \
  validation/megatron_sc21.csv >"$tmp/nics.csv"
run "$stepsim" check-against "$tmp/nics.csv"
refused "nics.csv:11: nics: '99999999999999999999' is too large (at most 1024)"
bad nofile "job_step:
  model: {file: }
  hardware: {preset: h100-sxm, gpus: 8}
  layout: {tp: 1, global_batch: 8}" "nofile.yaml:2: job_step.model.file: empty: give the file's path (relative to this scenario)"
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
bad fp8params "$moe
  layout: {dp: 64, ep: 64, global_batch: 64, fp8: true,
           fp8_param_gather: sometimes}" "fp8params.yaml:5: job_step.layout.fp8_param_gather: 'sometimes' is not true or false"
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
  layout: {dp: 64, ep: 64, global_batch: 64}" "experts.yaml:3: job_step.hardware.efficiency.experts: 1.5 is not an efficiency (a fraction in \\[0.01, 1\\], e.g. 0.7 or 70%)"
bad moehost "${moe/gpus: 64/gpus: 64, efficiency: {moe_host_per_expert: 2s}}
  layout: {dp: 64, ep: 64, global_batch: 64}" "moehost.yaml:3: job_step.hardware.efficiency.moe_host_per_expert: 2 s per MoE pass and expert is more than a second"
# The host time of a whole pass, the key before December 2026: refused by name (read per expert it
# would count the experts a GPU holds times over).
bad moehostpass "${moe/gpus: 64/gpus: 64, efficiency: {moe_host: 849us}}
  layout: {dp: 64, ep: 64, global_batch: 64}" "moehostpass.yaml:3: job_step.hardware.efficiency.moe_host: is now moe_host_per_expert: the host time a pass for each expert a GPU holds"
bad fp8share "${moe/gpus: 64/gpus: 64, efficiency: {fp8: 0}}
  layout: {dp: 64, ep: 64, global_batch: 64}" "fp8share.yaml:3: job_step.hardware.efficiency.fp8: 0 is not an efficiency (a fraction in \\[0.01, 1\\], e.g. 0.7 or 70%)"
# The preset meant, in a scenario and a measured-runs CSV alike: the one sharing most of the name's
# parts, a model number counting double (the CSV offered 'h800' for 'a100', nothing for '4090').
for pair in "a100-80gb:a100-sxm-80gb" "b200-sxm:b200" "4090:rtx4090" "a100:a100-sxm-80gb" "GB200:gb200" "gb200-nvl72:gb200" "GB300:gb300" "gb300-nvl72:gb300" \
  "b200-nvl:b200"; do
  printf 'job_step:\n  model: qwen3-8b\n  hardware: {preset: %s, gpus: 8}\n  layout: {dp: 8, global_batch: 8}\n' \
    "${pair%%:*}" >"$tmp/preset.yaml"
  run "$stepsim" run "$tmp/preset.yaml"
  refused "preset.yaml:3: job_step.hardware.preset: unknown preset '${pair%%:*}'; did you mean '${pair#*:}'?"
done
sed 's/,a100-sxm-80gb,/,a100,/' validation/megascale_megatron.csv >"$tmp/hw.csv"
run "$stepsim" check-against "$tmp/hw.csv"
refused "hw.csv:9: hw: unknown preset 'a100'; did you mean 'a100-sxm-80gb'?"
# Heads of unequal width without head_dim (it was read as the rounded-down width), and more
# recomputed layers than a chunk holds (the header said "the first 100 layers of each chunk" of 4).
printf 'job_step:\n  model: {name: t, layers: 4, hidden: 65, ffn: 256, heads: 4, vocab: 1000, seq: 128}\n  hardware: {preset: h100-sxm, gpus: 8}\n  layout: {dp: 8, zero: 1, global_batch: 8}\n' >"$tmp/h65.yaml"
run "$stepsim" run "$tmp/h65.yaml"
refused "h65.yaml:2: job_step.model.heads: hidden 65 does not split into 4 heads of equal width: give head_dim (each head's width, e.g. 16)"
run "$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml --set job_step.layout.recompute_layers=2
refused "error: --set: job_step.layout.recompute_layers: 2 is more than the 1 layer of a chunk: at most 1 (all: every layer)"
# An efficiency under 1 % of peak, as --efficiency refuses it (1e-300 ended every step past the
# time limit, blamed at the section).
printf 'job_step:\n  model: qwen3-8b\n  hardware: {preset: h100-sxm, gpus: 8, efficiency: {gemm: 1e-300}}\n  layout: {dp: 8, zero: 1, global_batch: 8}\n' >"$tmp/tiny-eff.yaml"
run "$stepsim" run "$tmp/tiny-eff.yaml"
refused "tiny-eff.yaml:3: job_step.hardware.efficiency.gemm: 1e-300 is not an efficiency (a fraction in [0.01, 1], e.g. 0.7 or 70%)"
# Sliding windows: a pattern needs a window; a window is at least a token; a pattern within the layers.
win='job_step:
  model: {layers: 96, hidden: 12288, ffn: 49152, heads: 96, vocab: 51200, seq: 2048, mlp: gelu,'
bad window_pattern "$win sliding_window_pattern: 2}
  hardware: {preset: a100-sxm-80gb, gpus: 64}
  layout: {tp: 8, pp: 8, global_batch: 64}" "window_pattern.yaml:2: job_step.model.sliding_window_pattern: needs sliding_window (the window's tokens)"
bad window_negative "$win sliding_window: -4}
  hardware: {preset: a100-sxm-80gb, gpus: 64}
  layout: {tp: 8, pp: 8, global_batch: 64}" "job_step.model.sliding_window: must be at least 0 (got -4)"
bad window_past "$win sliding_window: 128, sliding_window_pattern: 97}
  hardware: {preset: a100-sxm-80gb, gpus: 64}
  layout: {tp: 8, pp: 8, global_batch: 64}" "job_step.model.sliding_window_pattern: 97 is not between 0 (every layer windowed) and the 96 layers"
# Gated DeltaNet: its keys at their line; value heads a multiple of the key heads; tp x cp
# dividing both; not beside a window.
lin='job_step:
  model: {layers: 8, hidden: 2048, ffn: 5120, heads: 16, kv_heads: 2, head_dim: 256, vocab: 151936, seq: 4096,
          linear_attention: {num_key_heads: 16, key_head_dim: 128, value_head_dim: 128,'
bad linear_ratio "$lin num_value_heads: 24}}
  hardware: {preset: h100-sxm, gpus: 8}
  layout: {tp: 2, global_batch: 8}" "linear_ratio.yaml:3: job_step.model.linear_attention.num_value_heads: 24 value heads are not a multiple of the 16 key heads"
bad linear_key "$lin num_value_heads: 32, full_attention: 4}}
  hardware: {preset: h100-sxm, gpus: 8}
  layout: {tp: 2, global_batch: 8}" "linear_key.yaml:3: job_step.model.linear_attention.full_attention: unknown key (known here: num_key_heads, num_value_heads, key_head_dim, value_head_dim, conv_kernel_dim, full_attention_interval)"
bad linear_interval "$lin num_value_heads: 32, full_attention_interval: 9}}
  hardware: {preset: h100-sxm, gpus: 8}
  layout: {tp: 2, global_batch: 8}" "job_step.model.linear_attention.full_attention_interval: 9 is not between 0 (every layer linear) and the 8 layers"
bad linear_window "$lin num_value_heads: 32}, sliding_window: 128}
  hardware: {preset: h100-sxm, gpus: 8}
  layout: {tp: 2, global_batch: 8}" "job_step.model.linear_attention.num_value_heads: linear_attention beside sliding_window is not modelled: give one of them"
bad linear_tp_cp "$lin num_value_heads: 32}}
  hardware: {preset: h100-sxm, gpus: 64}
  layout: {tp: 2, cp: 32, global_batch: 8}" "job_step.layout.cp: tp x cp = 2 x 32 = 64 does not divide the 16 linear-attention key heads and 32 value heads (would fit: tp x cp among 1, 2, 4, 8, 16)"
# Mamba-2 and a hybrid pattern: the mixer's keys at their line; the pattern's symbols, length and
# blocks; tp dividing heads and groups.
mam='job_step:
  model: {layers: 4, hidden: 2048, ffn: 8192, heads: 16, kv_heads: 8, vocab: 32000, seq: 4096, mlp: gelu,'
bad mamba_groups "$mam mamba: {num_heads: 32, head_dim: 64,
          state_size: 128, n_groups: 3}, hybrid_override_pattern: \"M-*-\"}
  hardware: {preset: h100-sxm, gpus: 8}
  layout: {tp: 2, global_batch: 8}" "mamba_groups.yaml:3: job_step.model.mamba.n_groups: 3 groups do not divide the 32 heads (Megatron-Core's MambaMixer shares each group's B and C among its heads)"
bad mamba_key "$mam mamba: {num_heads: 32, head_dim: 64,
          d_state: 128}}
  hardware: {preset: h100-sxm, gpus: 8}
  layout: {tp: 2, global_batch: 8}" "mamba_key.yaml:3: job_step.model.mamba.d_state: unknown key (known here: num_heads, head_dim, state_size, n_groups, conv_kernel)"
bad pattern_symbol "$mam mamba: {num_heads: 32, head_dim: 64,
          state_size: 128, n_groups: 8}, hybrid_override_pattern: \"M-A-\"}
  hardware: {preset: h100-sxm, gpus: 8}
  layout: {tp: 2, global_batch: 8}" "job_step.model.hybrid_override_pattern: 'A' at position 3 is none of M (Mamba-2)"
bad pattern_length "$mam mamba: {num_heads: 32, head_dim: 64,
          state_size: 128, n_groups: 8}, hybrid_override_pattern: \"M-*-M\"}
  hardware: {preset: h100-sxm, gpus: 8}
  layout: {tp: 2, global_batch: 8}" "job_step.model.hybrid_override_pattern: 5 symbols for the 4 layers (one a layer, as Megatron-Core counts them)"
bad pattern_moe "$mam mamba: {num_heads: 32, head_dim: 64,
          state_size: 128, n_groups: 8}, hybrid_override_pattern: \"MEM*\"}
  hardware: {preset: h100-sxm, gpus: 8}
  layout: {tp: 2, global_batch: 8}" "job_step.model.hybrid_override_pattern: has E layers: needs experts"
bad mamba_tp "$mam mamba: {num_heads: 32, head_dim: 64,
          state_size: 128, n_groups: 2}, hybrid_override_pattern: \"M-*-\"}
  hardware: {preset: h100-sxm, gpus: 8}
  layout: {tp: 8, global_batch: 8}" "job_step.layout.tp: tp 8 and cp 1 do not split the 32 Mamba-2 heads and 2 groups (would fit: tp among 1, 2, tp x cp among 1, 2, 4, 8, 16, 32)"
bad schedule "$head
  hardware: {preset: a100-sxm-80gb, gpus: 64}
  layout: {tp: 8, pp: 8, schedule: 1f1c, global_batch: 64}" "job_step.layout.schedule: unknown schedule '1f1c'; did you mean '1f1b'?"
# ZB-H1's last rank holds as many micro-batches as its first (its deferred weight-gradient passes
# keep their inputs) and the logits: 47.4 GiB, counted before the run (until the thirty-fifth
# session the analytic figure gave that rank 1F1B's one micro-batch, 46.3 GiB at rank 0, and only
# the run refused it). Recomputing the first of each chunk's 20 layers fits.
run "$stepsim" run scenarios/job-llama70b-64xh100.yaml --set job_step.layout.schedule=zb-h1 \
  --set job_step.layout.virtual_stages=1 --set job_step.hardware.accelerator.usable_memory=47GiB
[[ $code == 2 && $(wc -l <<<"$err") == 1 && "$err" == *"job-llama70b-64xh100.yaml:12: job_step.layout: needs 47.4 GiB per GPU (weights 4.2, gradients 8.5, optimizer 12.7, activations 21.0, buffers 1.0) but h100-sxm has 47.0 GiB usable; would fit: recompute: full, recompute_layers: 1 (46.6 GiB)"* ]] ||
  fail "ZB-H1 over memory at its last rank: exit $code: $err"
"$stepsim" run scenarios/job-llama70b-64xh100.yaml --set job_step.layout.schedule=zb-h1 --set job_step.layout.virtual_stages=1 \
  --set job_step.hardware.accelerator.usable_memory=47GiB --set job_step.layout.recompute=full \
  --set job_step.layout.recompute_layers=1 >"$tmp/zbh1-one.txt"
has "recompute full (the first layer of each chunk)" "$tmp/zbh1-one.txt"
fig "total 46.65" "$tmp/zbh1-one.txt"
printf '%s\n' "$head
  hardware: {preset: a100-sxm-80gb, gpus: 64}
  layout: {tp: 8, pp: 1, dp: 8, global_batch: 64}
  allow_oom: true" >"$tmp/allow.yaml"
"$stepsim" run "$tmp/allow.yaml" >"$tmp/allow.out"
has "(does not fit)" "$tmp/allow.out"

# A model the repository ships as a file, named as if built in, says how to give it; an unknown one
# lists the files.
run "$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.model=llama3-8b
refused "error: --set: job_step.model: 'llama3-8b' is not built in (built in: qwen3-8b, tiny), but the repository ships it as a file: {file: models/llama3-8b.yaml} from a scenario in scenarios/ (a path is relative to the scenario's folder)"
run "$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.model=llama4
refused "scenarios/models has gemma3-27b, gpt-oss-120b, gpt3-175b, llama2-7b, llama3-405b, llama3-70b, llama3-8b, nemotron-3-nano-30b-a3b, nemotron-h-56b, nemotron-h-8b, qwen3-8b, qwen3-next-80b-a3b, qwen3.5-397b-a17b, tiny; or the fields)"
# A search's words in a job step say where they belong; a preset in capitals is named.
run "$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.layout.tp=auto
refused "error: --set: job_step.layout.tp: a job step runs one layout: \`auto\` and lists are a search's (\`stepsim search FILE\` searches around this step, \`--set search.layout.tp=...\` opens this key)"
run "$stepsim" run scenarios/job-fsdp-8.yaml --set job_step.hardware.preset=H100-SXM
refused "error: --set: job_step.hardware.preset: unknown preset 'H100-SXM'; did you mean 'h100-sxm'?"
# A card's memory set alone keeps the preset's share of it usable (H100: 74.5 of 80 GiB, so 40 GB
# leaves 34.7 GiB); usable memory past the card's is refused.
run "$stepsim" run scenarios/job-llama70b-64xh100.yaml --set 'job_step.hardware.accelerator={memory: 40GB}'
refused "job_step.layout: needs 49.5 GiB per GPU (weights 4.2, gradients 8.5, optimizer 12.7, activations 24.1, buffers 0.0) but h100-sxm has 34.7 GiB usable"
run "$stepsim" run scenarios/job-llama70b-64xh100.yaml --set job_step.hardware.accelerator.usable_memory=90GiB
refused "error: --set: job_step.hardware.accelerator.usable_memory: usable memory 90.0 GiB is more than the card's 80.0 GiB"

# A header names only columns a row is read from, each once (a misspelt one would leave its
# setting at the default, unseen), and a row has no more cells than the header has columns.
csv_refused validation/megatron_sc21.csv 's/,zero3_fetch$/,zero3_fech/' "edited.csv:10: zero3_fech: unknown column 'zero3_fech'; did you mean 'zero3_fetch'?"
csv_refused validation/megatron_sc21.csv 's/^src,tbl,model,/src,tbl,tp,/' "edited.csv:10: tp: column 'tp' named twice"
csv_refused validation/megatron_sc21.csv 's/,21.3,module$/,21.3,module,1/' "edited.csv:21: 34 cells where the header names 33 columns"
# A row its schedule cannot run is the row's error at its column (not an internal error), and a
# table past 10,000 rows is refused as it is read; the ranking names at most ten flipped pairs.
csv_refused validation/megatron_sc21.csv '16s/,32,3,interleaved-1f1b,/,32,1,interleaved-1f1b,/' \
  "edited.csv:16: sched: interleaved-1f1b: interleaved-1f1b needs virtual_stages >= 2 (got 1; with one chunk per device use 1f1b)"
python3 - "$tmp" <<'PY'
import sys
tmp = sys.argv[1]
lines = open("validation/megatron_moe_layer_h100.csv").read().split("\n")
head = [i for i, l in enumerate(lines) if l and l[0] != "#"][0]
data = [l for l in lines[head + 1:] if l and l[0] != "#"]
for name, n in (("big", 10001), ("flips", 300)):
    open(f"{tmp}/{name}.csv", "w").write("\n".join(lines[:head + 1] + [data[i % len(data)] for i in range(n)]) + "\n")
PY
run "$stepsim" check-against "$tmp/big.csv" --efficiency 0.7,0.5,0.8,0.8,0.8,0.2
refused "big.csv:10016: more than 10,000 measured rows: split the table"
"$stepsim" check-against "$tmp/flips.csv" --efficiency 0.7,0.5,0.8,0.8,0.8,0.2 >"$tmp/flips.txt"
grep -q "^ranking: .* (flipped: lines 17 and 31, .*, lines 17 and 175 and [0-9]* more)$" "$tmp/flips.txt" ||
  fail "flips: $(grep ranking "$tmp/flips.txt")"
# A measurement is a decimal number in a metric's range; fit is 0 or 1; ngpu, given, is at least 1.
csv_refused validation/megatron_sc21.csv 's/,tflops_sc21,137,1,/,tflops_sc21,inf,1,/' "edited.csv:11: value: 'inf' is not a positive number"
csv_refused validation/megatron_sc21.csv 's/,tflops_sc21,137,1,/,tflops_sc21,0x10,1,/' "edited.csv:11: value: '0x10' is not a positive number"
csv_refused validation/megatron_sc21.csv 's/,tflops_sc21,137,1,/,tflops_sc21,1e-300,1,/' "edited.csv:11: value: '1e-300' is out of range for a measurement (1e-6 to 1e9)"
csv_refused validation/megatron_sc21.csv 's/,tflops_sc21,137,1,/,tflops_sc21,137,2,/' "edited.csv:11: fit: '2' is not 0 or 1"
# Every on/off column is 1 or 0 (2 or 1T used to read as off, the opposite of overlap_tp_wgrad's default).
csv_refused validation/megatron_sc21.csv '12s/,full,0,0,1,0,0,unfused,/,full,0,0,1,0,2,unfused,/' "edited.csv:12: overlap_tp_wgrad: '2' is not 0 or 1"
csv_refused validation/megatron_sc21.csv '12s/,full,0,0,1,0,0,unfused,/,full,1T,0,1,0,0,unfused,/' "edited.csv:12: sp: '1T' is not 0 or 1"
csv_refused validation/megatron_sc21.csv 's/a100-sxm-80gb,32,1,1,32/a100-sxm-80gb,0,1,1,32/' "edited.csv:11: ngpu: 0 GPUs: at least 1 (or leave it empty)"
# A spreadsheet's byte-order mark and Windows line ends read as the plain file.
{ printf '\xef\xbb\xbf'; sed 's/$/\r/' validation/megascale_megatron.csv; } >"$tmp/bom.csv"
"$stepsim" check-against validation/megascale_megatron.csv >"$tmp/plain.txt"
"$stepsim" check-against "$tmp/bom.csv" | sed "s#$tmp/bom.csv#validation/megascale_megatron.csv#" | diff - "$tmp/plain.txt" >/dev/null ||
  fail "a byte-order mark or CRLF line ends change a measured-runs table"

# RFC 4180 quoting: a quoted cell holds commas, "" (one quote) and line ends; a row keeps the line it
# starts on (the rows after it are counted past its lines), a table's line ends read as spaces in
# the row's label, and CRLF line ends inside a quoted cell read as the plain file's. A quote left
# open is refused at its row's line and column, naming the line it opened on.
python3 - "$tmp" <<'PY'
import sys
lines = open("validation/megascale_megatron.csv").read().split("\n")
lines[8] = lines[8].replace(",MFU 53.0%", ',"MFU 53.0%,\nas ""Table 2"" says"')
lines[9] = lines[9].replace(",GPT-175B,", ',"GPT-175B ""512""",')
lines[10] = lines[10].replace(",Table 2,", ',"Table\n2",')
open(f"{sys.argv[1]}/multi.csv", "w").write("\n".join(lines))
open(f"{sys.argv[1]}/multi-crlf.csv", "w", newline="").write("\r\n".join(lines))
PY
"$stepsim" check-against "$tmp/multi.csv" >"$tmp/multi.txt"
fig "^9 Table 2 GPT-175B 256 GPUs 40 s 40 [-+]0\.0% fit" "$tmp/multi.txt"
fig '^11 Table 2 GPT-175B "512" 512 GPUs 21.2 s 21.09 -0.5% held out' "$tmp/multi.txt"
fig "^12 Table 2 GPT-175B 768 GPUs 15.2 s 14.79 -2.7% held out" "$tmp/multi.txt"
fig "^14 Table 2 GPT-175B 1024 GPUs 11.9 s 11.64 -2.2% held out" "$tmp/multi.txt"
fig "^18 Table 2 GPT-175B 12288 GPUs 8.57 s 8.57 [-+]0\.0% fit" "$tmp/multi.txt"
"$stepsim" check-against "$tmp/multi-crlf.csv" | sed "s#multi-crlf.csv#multi.csv#" | diff - "$tmp/multi.txt" >/dev/null ||
  fail "CRLF line ends inside quoted cells change a measured-runs table"
csv_refused validation/megascale_megatron.csv '12s/,GPT-175B,/,"GPT\n175B",/; 12s/,MFU 44.7%$/,"MFU 44.7%/' \
  "edited.csv:12: notes: the quote opened on line 13 is not closed by the end of the file"
[[ $(wc -l <"$tmp/err") == 1 ]] || fail "an open quote: more than one line"
# A quote where RFC 4180 has none (inside a cell that does not start with one, or after a cell's
# closing quote) is refused at its cell: it used to open a quoted part that ran on over the rows
# after it, merging them into one silently.
csv_refused validation/megascale_megatron.csv '12s/,MFU 44.7%$/,MFU 44.7% on 12" disks/' \
  "edited.csv:12: notes: a quote inside a cell that does not start with one: quote the whole cell and double the quotes in it (\"12\"\" disk\")"
csv_refused validation/megascale_megatron.csv '13s/,GPT-175B,/,GPT 5",/' \
  "edited.csv:13: model: a quote inside a cell that does not start with one"
csv_refused validation/megascale_megatron.csv '12s/,GPT-175B,/,"GPT"x,/' "edited.csv:12: model: a quote inside a cell"

# Counts read one way (cli::whole_number) in a scenario, a --set value and a measured-runs cell:
# written out, as 8.192e3 or with K, M, B or T; a fraction is refused as 1000.1 is.
"$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml --set job_step.hardware.gpus=8.192K >"$tmp/gpus-K.txt"
"$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml >"$tmp/gpus.txt"
cmp -s "$tmp/gpus-K.txt" "$tmp/gpus.txt" || fail "job_step.hardware.gpus: 8.192K is not 8192"
has "on 8192 x h100-sxm" "$tmp/gpus-K.txt"
sed 's/,6144,selective,/,6.144K,selective,/' validation/megascale_megatron.csv >"$tmp/gbs-K.csv"
grep -q ",6.144K,selective," "$tmp/gbs-K.csv" || fail "the edit of gbs-K.csv"
"$stepsim" check-against "$tmp/gbs-K.csv" | sed "s#$tmp/gbs-K.csv#validation/megascale_megatron.csv#" | diff - "$tmp/plain.txt" >/dev/null ||
  fail "gbs 6.144K is not 6144"
csv_refused validation/megascale_megatron.csv '9s/,768,selective,/,0.7685K,selective,/' "edited.csv:9: gbs: '0.7685K' is not a whole number"

# Over at the simulated peak where the analytic count said every layer or none, the refusal says
# (the gradients reduce-scattered every micro-batch, zero2_accumulate: sharded, as the figures below)
# how to find the fewest: Llama 3 405B at PP 2 without recompute, 111.5 GiB by the analytic figure
# (a lower bound: each rank's smallest chunk) and 116.0 at the simulated peak, on a card of 120 GiB with 114 usable,
# where recomputing the first layer of each chunk fits (109.5 GiB); before the run it names the
# count itself: on the H100's 74.5 GiB, 6 of each interleaved chunk's 9 layers by the analytic
# figure (the run with auto takes 7, tests/job_step_cli.sh); where that count is every layer, it
# says no more.
l405p2=(--set job_step.layout.pp=2 --set job_step.layout.dp=512 --set job_step.layout.recompute=none --set job_step.layout.zero2_accumulate=sharded)
run "$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml "${l405p2[@]}" --set job_step.hardware.accelerator.memory=120GiB --set job_step.hardware.accelerator.usable_memory=114GiB
refused "needs 116.0 GiB per GPU at the simulated peak (pipeline rank 1) (weights 47.2, gradients 0.2, optimizer 0.6, activations 67.0, buffers 1.0) but h100-sxm has 114.0 GiB usable; would fit: recompute: full (53.4 GiB), or of the fewest layers that fit with recompute_layers: auto (or set allow_oom: true to report it)"
"$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml "${l405p2[@]}" --set job_step.hardware.accelerator.memory=120GiB --set job_step.hardware.accelerator.usable_memory=114GiB \
  --set job_step.layout.recompute=full --set job_step.layout.recompute_layers=auto >"$tmp/l405-114.txt"
has "recompute full (the first layer of each chunk, the fewest that fit)" "$tmp/l405-114.txt"
fig "total 109.52" "$tmp/l405-114.txt"
run "$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml --set job_step.layout.pp=2 --set job_step.layout.dp=512 --set job_step.layout.zero2_accumulate=sharded \
  --set job_step.layout.recompute=none
refused "needs 111.5 GiB per GPU (weights 47.2, gradients 0.2, optimizer 0.6, activations 62.5, buffers 1.0) but h100-sxm has 74.5 GiB usable; would fit: recompute: full, recompute_layers: 6 (73.0 GiB) (or set allow_oom"
[[ "$(printf '%s\n' "$head" "  hardware: {preset: a100-sxm-80gb, gpus: 64}" \
  "  layout: {tp: 8, pp: 8, micro_batch: 4, global_batch: 64, attention: unfused}" >"$tmp/oom.yaml"
  "$stepsim" run "$tmp/oom.yaml" 2>&1)" == *"would fit: recompute: full (67.0 GiB) (or set allow_oom"* ]] ||
  fail "the analytic refusal names recompute_layers: auto"

# Count keys that also take words (recompute_layers: all / auto, expert_tp: tp, the defaults spelled
# out for a variant to go back to them): another word is refused naming them, at its line.
printf 'job_step:\n  model: qwen3-8b\n  hardware: {preset: h100-sxm, gpus: 8}\n  layout: {dp: 8, zero: 1, global_batch: 64, recompute: full,\n    recompute_layers: evry}\n' >"$tmp/word.yaml"
run "$stepsim" run "$tmp/word.yaml"
refused "word.yaml:5: job_step.layout.recompute_layers: 'evry': expected a count of layers, all (every layer, the default) or auto (the fewest that fit)"
run "$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set job_step.layout.expert_tp=tpp
refused "job_step.layout.expert_tp: 'tpp': expected a count, or tp (the layout's tp, the default)"
run "$stepsim" run scenarios/job-llama3-405b-8192xh100.yaml --set job_step.layout.first_chunk_layers=evenly
refused "job_step.layout.first_chunk_layers: 'evenly': expected a count of layers, or even (an even share, the default)"
run "$stepsim" run scenarios/job-llama70b-64xh100.yaml --set job_step.layout.dp_bandwidth=fast
refused "job_step.layout.dp_bandwidth: 'fast': expected a rate (21.3GB/s), or none (the network's, the default)"
"$stepsim" run scenarios/job-llama70b-64xh100.yaml --set job_step.layout.dp_bandwidth=none \
  --set job_step.layout.first_chunk_layers=even --json >"$tmp/even.json"
"$stepsim" run scenarios/job-llama70b-64xh100.yaml --json >"$tmp/even-default.json"
cmp -s "$tmp/even.json" "$tmp/even-default.json" || fail "first_chunk_layers: even / dp_bandwidth: none are not the defaults"
sed -i 's/evry/all/' "$tmp/word.yaml"
"$stepsim" run "$tmp/word.yaml" --json >"$tmp/all.json"
layout_key "$tmp/all.json" recompute_layers absent
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml --set job_step.layout.expert_tp=tp --json >"$tmp/etp.json"
"$stepsim" run scenarios/job-moe-routing-256xh100.yaml --json >"$tmp/etp-default.json"
cmp -s "$tmp/etp.json" "$tmp/etp-default.json" || fail "expert_tp: tp is not the default"

# A named attention kernel where it does not run, or runs at no published speed: refused at the key,
# from a file, --set, a measured-runs CSV and a search alike, saying what would run.
bad flash3 "$head
  hardware: {preset: a100-sxm-80gb, gpus: 64}
  layout: {tp: 8, pp: 8, global_batch: 64, attention: flash3}" \
  "flash3.yaml:4: job_step.layout.attention: flash3 (FlashAttention-3) runs on Hopper only (H100, H800, H200); a100-sxm-80gb is ampere: flash (FlashAttention-2) would run"
run "$stepsim" run scenarios/job-llama31-405b-fp8-128xb200.yaml --set job_step.layout.attention=flash2
refused "error: --set: job_step.layout.attention: flash2 (FlashAttention-2) has no published speed on Blackwell to scale b200's attention efficiency by: flash (cuDNN's, the calibrated rate) would run"
run "$stepsim" run scenarios/job-long-context.yaml --set job_step.layout.attention=flash4
refused "error: --set: job_step.layout.attention: unknown attention kernel 'flash4' (flash, flash2, flash3 or unfused)"
csv_refused validation/nemo_llama3_b200_fp8.csv '26s/,flash,2,/,flash3,2,/' \
  "edited.csv:26: attention: flash3 (FlashAttention-3) runs on Hopper only (H100, H800, H200); b200 is blackwell: flash (cuDNN's) would run"
run "$stepsim" search scenarios/search-gpt3-1024xa100.yaml --set search.layout.attention=flash3
refused "error: --set: search.layout.attention: flash3 (FlashAttention-3) runs on Hopper only (H100, H800, H200); a100-sxm-80gb is ampere: flash (FlashAttention-2) would run"

echo "job_step bad input: all checks passed"
