#pragma once
// The job steps the job-step tests share (tests/lowering/test_job_step*.cpp): GPT-3 175B and
// MegaScale's shape of it on A100, GPT-3 under ZeRO-3, a DeepSeek-V3-shaped MoE stack on H800,
// Qwen3-235B-A22B on H100, one pipeline of GPT-3 under a given schedule, a small FP8 model.
#include <cstdint>
#include <string>
#include <utility>

#include "models/accelerators.hpp"
#include "schedules/lowering/job/job_step.hpp"

namespace stepsim::job_step_fixtures {

// A decoder's shape: layers, hidden, FFN width, query and key/value heads of head_dim, vocabulary.
inline TransformerConfig decoder(const char* name, int layers, std::int64_t hidden, std::int64_t ffn, int heads,
                                 int kv_heads, int head_dim, std::int64_t vocab) {
  return {name, layers, hidden, ffn, heads, kv_heads, head_dim, vocab, /*tied_embeddings=*/false, /*qk_norm=*/true};
}

// `shape` at `seq` tokens on `preset`'s GPUs, data parallel over `dp` with ZeRO `zero`, a global
// batch of `global_batch` sequences (the other keys job_step's defaults).
inline JobStepSpec data_parallel_job(const TransformerConfig& shape, int seq, const char* preset, int dp, int zero,
                                     std::int64_t global_batch) {
  JobStepSpec s;
  s.model.shape = shape;
  s.model.seq = seq;
  s.cluster = *find_cluster_preset(preset);
  s.layout.dp = dp;
  s.layout.zero = zero;
  s.layout.global_batch = global_batch;
  return s;
}

inline JobModel gpt3() {
  JobModel m;
  m.shape = decoder("gpt3-175b", 96, 12288, 4 * 12288, 96, 96, 128, 51200);
  m.shape.tied_embeddings = true;
  m.shape.qk_norm = false;
  m.seq = 2048;
  m.gated_mlp = false;
  return m;
}

// NVFP4 GEMMs at TP 8 x PP 2, a global batch of 8 (the NVFP4 tests' layout).
inline JobLayout nvfp4_tp8_pp2() {
  JobLayout l;
  l.tp = 8;
  l.pp = 2;
  l.global_batch = 8;
  l.fp8 = true;
  l.fp8_recipe = Fp8Recipe::Nvfp4;
  return l;
}

inline JobStepSpec megascale(int gpus, std::int64_t gbs) {
  JobStepSpec s;
  s.model = gpt3();
  s.model.shape.heads = s.model.shape.kv_heads = 128;
  s.model.shape.head_dim = 96;
  s.model.shape.vocab = 64000;
  s.cluster = *find_cluster_preset("a100-sxm-80gb");
  JobLayout& l = s.layout;
  l.tp = 8;
  l.pp = 8;
  l.vpp = 6;
  l.dp = gpus / 64;
  l.schedule = "interleaved-1f1b";
  l.micro_batch = 1;
  l.global_batch = gbs;
  l.recompute = JobRecompute::Selective;
  l.sequence_parallel = true;
  l.attention = AttentionKernel::Unfused;
  l.overlap_grad_reduce = false;
  return s;
}

// A small dense model with FP8 GEMMs on H100: 4 layers, h 1,024, 8 query and 8 key/value heads of
// 128, SwiGLU 4,096 wide, vocabulary 32,000; tp 2, pp 2, dp 2, zero 1 (the FP8 weights' tests).
inline JobStepSpec small_fp8_job() {
  JobStepSpec s;
  s.model.shape = decoder("small", 4, 1024, 4096, 8, 8, 128, 32000);
  s.model.seq = 2048;
  s.cluster = *find_cluster_preset("h100-sxm");
  JobLayout& l = s.layout;
  l.tp = l.pp = l.dp = 2;
  l.zero = 1;
  l.global_batch = 16;
  l.fp8 = true;
  return s;
}

// GPT-3 175B under ZeRO-3 over 64 A100, one sequence each, full recompute (as SC21's DeepSpeed rows).
inline JobStepSpec gpt3_zero3_64() {
  JobStepSpec s;
  s.model = gpt3();
  s.cluster = *find_cluster_preset("a100-sxm-80gb");
  s.layout.dp = 64;
  s.layout.zero = 3;
  s.layout.global_batch = 64;
  s.layout.recompute = JobRecompute::Full;
  return s;
}

// MegaScale's GPT-3 at TP 8 without a pipeline: dp data-parallel ranks at ZeRO stage `zero`.
inline JobStepSpec megascale_one_stage(int dp, int zero, std::int64_t gbs) {
  JobStepSpec s = megascale(8 * dp, gbs);
  JobLayout& l = s.layout;
  l.pp = 1;
  l.vpp = 1;
  l.schedule = "1f1b";
  l.dp = dp;
  l.zero = zero;
  return s;
}

// A DeepSeek-V3-shaped MoE layer stack (scenarios/job-moe-dualpipe-h800.yaml's model, 8 layers):
// per layer attention h (q + 2 kv) + q h = 205,520,896, router h E = 1,835,008, two norms
// 14,336 (dense: 207,370,240), experts E x 3 x h x f = 11,274,289,152; embedding and head
// V h = 926,679,040 each.
// A mixture-of-experts model of `shape`: `experts` routed experts of width `expert_ffn`, top_k
// each, sequences of 4,096 tokens.
inline JobModel moe_model(TransformerConfig shape, int experts, int top_k, std::int64_t expert_ffn) {
  JobModel m;
  m.shape = std::move(shape);
  m.seq = 4096;
  m.experts = experts;
  m.top_k = top_k;
  m.expert_ffn = expert_ffn;
  return m;
}

inline JobStepSpec moe(int dp, int ep, int zero) {
  JobStepSpec s;
  s.model = moe_model(decoder("dsv3-shaped", 8, 7168, 18432, 128, 128, 56, 129280), 256, 8, 2048);
  s.cluster = *find_cluster_preset("h800");
  JobLayout& l = s.layout;
  l.pp = 2;
  l.dp = dp;
  l.ep = ep;
  l.zero = zero;
  l.global_batch = 8L * dp;
  l.recompute = JobRecompute::Selective;
  return s;
}
constexpr std::int64_t kMoeDense = 207'370'240, kMoeExperts = 11'274'289'152, kMoeEmbedding = 926'679'040;

// One pipeline of GPT-3 (MegaScale shape) on 64 A100: tp 8, pp 8, dp 1, m = 32 micro-batches.
inline JobStepSpec one_pipeline(const std::string& schedule) {
  JobStepSpec s = megascale(64, 32);
  s.layout.vpp = 1;
  s.layout.schedule = schedule;
  return s;
}

// scenarios/job-moe-routing-256xh100.yaml: Qwen3-235B-A22B on 256 H100, pp 4, dp 64, ep 8.
inline JobStepSpec qwen3_235b_routing() {
  JobStepSpec s;
  JobModel& m = s.model;
  m = moe_model(decoder("qwen3-235b-a22b", 94, 4096, 12288, 64, 4, 128, 151936), 128, 8, 1536);
  m.routing.kind = MoeRoutingSpec::Kind::Hot;
  m.routing.hot_fraction = 0.5;
  m.routing.hot_load = 1.5;
  s.cluster = *find_cluster_preset("h100-sxm");
  JobLayout& l = s.layout;
  l.pp = 4;
  l.first_chunk_layers = l.last_chunk_layers = 23;
  l.dp = 64;
  l.ep = 8;
  l.zero = 1;
  l.global_batch = 1024;
  l.recompute = JobRecompute::Full;
  return s;
}

// The same at TP 4 with sequence parallelism (16-way DP), routed evenly.
inline JobStepSpec qwen3_235b_tp4() {
  JobStepSpec s = qwen3_235b_routing();
  s.model.routing = {};
  s.layout.tp = 4;
  s.layout.dp = 16;
  s.layout.sequence_parallel = true;
  return s;
}

}  // namespace stepsim::job_step_fixtures
