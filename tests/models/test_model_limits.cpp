// models/model_limits.hpp and models/layout.hpp: the largest model and layout stepsim takes. Each
// problem names its key; nothing derived from a sound model or layout wraps.
#include <catch2/catch.hpp>

#include <string>

#include "models/layout.hpp"
#include "models/model_limits.hpp"

using namespace stepsim;

namespace {

JobModel llama70b() {
  JobModel m;
  m.shape = {"llama3-70b", 80, 8192, 28672, 64, 8, 128, 128256, false, false};
  m.seq = 8192;
  return m;
}

JobLayout layout_64() {
  JobLayout l;
  l.tp = 8;
  l.pp = 4;
  l.dp = 2;
  l.global_batch = 128;
  return l;
}

// "key: message" of the first problem, or "sound".
std::string problem(const std::optional<InputProblem>& p) { return p ? p->key + ": " + p->message : "sound"; }

}  // namespace

TEST_CASE("a model's dimensions are at least 1 and within the limits", "[model_limits]") {
  const JobModel m = llama70b();
  CHECK(problem(check_job_model(m)) == "sound");
  JobModel x = m;
  x.shape.hidden = 0;
  CHECK(problem(check_job_model(x)) == "hidden: must be at least 1 (got 0)");
  x.shape.hidden = kMaxHidden + 1;
  CHECK(problem(check_job_model(x)) == "hidden: 1048577 is past the largest model stepsim takes (1048576)");
  x = m;
  x.shape.vocab = std::int64_t{1} << 60;  // its embedding alone would wrap the parameter count's bytes
  CHECK(problem(check_job_model(x)) == "vocab: 1152921504606846976 is past the largest model stepsim takes (16777216)");
  x = m;
  x.shape.kv_heads = 3;
  CHECK(problem(check_job_model(x)) == "kv_heads: 64 heads do not split into 3 KV groups");
  x = m;
  x.shape.head_dim = 0;
  x.shape.hidden = 32;
  CHECK(problem(check_job_model(x)) == "head_dim: hidden 32 is smaller than the 64 heads: give head_dim");
  x = m;
  x.seq = kMaxSeq + 1;
  CHECK(problem(check_job_model(x)) == "seq: 134217729 is past the largest model stepsim takes (134217728)");
}

TEST_CASE("a model past 10^15 parameters is refused, its count exact in int64", "[model_limits]") {
  JobModel m = llama70b();
  m.shape.layers = static_cast<int>(kMaxLayers);  // 65,536 layers of a 70B model's width: 5.6e13
  CHECK(problem(check_job_model(m)) == "sound");
  // and 16x the width with the widest MLP: 65,536 x 1.69e12 = 1.1e17 parameters (1.8e18 bytes of
  // state, a fifth of int64).
  m.shape.hidden = 131072;
  m.shape.intermediate = kMaxFfn;
  m.shape.head_dim = 2048;
  CHECK(problem(check_job_model(m)) ==
        "layers: the model has 1.1062e+17 parameters, too many: at most 1e+15 (1,000x the largest models trained)");
  m = llama70b();
  m.experts = 4096;
  m.top_k = 8;
  m.expert_ffn = 4096;  // 16,777,216 expert columns per layer: the limit
  CHECK(problem(check_job_model(m)) == "sound");
  m.expert_ffn = 4097;
  CHECK(problem(check_job_model(m)) ==
        "expert_ffn: experts x expert_ffn = 4096 x 4097 is past the largest model stepsim takes (16777216 per layer)");
  m.expert_ffn = 4096;
  m.top_k = 4097;
  CHECK(problem(check_job_model(m)) == "top_k: top_k 4097 is not between 1 and the 4096 experts");
}

TEST_CASE("a layout's degrees and GPU count are checked before any product is taken", "[model_limits]") {
  const JobModel m = llama70b();
  CHECK(problem(check_layout(m, layout_64(), 64)) == "sound");
  JobLayout l = layout_64();
  l.tp = 0;  // a division by zero further on (the validation CSV reached it: SIGFPE)
  CHECK(problem(check_layout(m, l, 0)) == "tp: must be at least 1 (got 0)");
  l = layout_64();
  l.dp = 2147483647;  // tp x pp x dp wrapped to -32 in int
  CHECK(problem(check_layout(m, l, 64)) == "dp: 2147483647 is past the largest layout stepsim takes (1000000)");
  l = layout_64();
  l.tp = l.pp = l.dp = l.cp = 1'000'000;  // each at the limit, their product 10^24
  CHECK(problem(check_layout(m, l, 0)) ==
        "dp: tp x pp x dp x cp = 1000000 x 1000000 x 1000000 x 1000000 GPUs is past the largest layout stepsim takes "
        "(1000000)");
  l = layout_64();
  l.pp = 1'000'000;
  l.tp = 1;
  l.dp = 1;
  l.vpp = 1'000'000;  // pp x virtual_stages = 10^12 chunks: wrapped in int
  CHECK(problem(check_layout(m, l, 0)) ==
        "virtual_stages: 80 layers do not split into pp x virtual_stages = 1000000 x 1000000 = 1000000000000 equal "
        "chunks (would fit: pp x virtual_stages in 1, 2, 4, 5, 8, 10, 16, 20, 40, 80; or set first_chunk_layers / "
        "last_chunk_layers)");
  l = layout_64();
  l.micro_batch = 1'000'000;
  JobModel long_context = m;
  long_context.seq = kMaxSeq;
  CHECK(problem(check_layout(long_context, l, 0)) ==
        "micro_batch: micro_batch x seq = 1000000 x 134217728 tokens is past the largest micro-batch stepsim takes "
        "(17179869184)");
  l = layout_64();
  l.zero = 4;
  CHECK(problem(check_layout(m, l, 0)) == "zero: zero stage 4 does not exist (0, 1, 2 or 3)");
  l = layout_64();
  l.grad_bytes = 3;
  CHECK(problem(check_layout(m, l, 0)) == "grad_bytes: gradients are reduced in BF16 (2) or FP32 (4)");
  l = layout_64();
  l.global_batch = 0;
  CHECK(problem(check_layout(m, l, 0)) == "global_batch: 0 is not between 1 and 1099511627776 sequences");
}
