// Model shapes against the book (reference sections 2-4).
#include <catch2/catch.hpp>

#include "models/hardware.hpp"
#include "models/transformer.hpp"

using namespace stepsim;

TEST_CASE("Qwen3-8B parameter count is the book's N", "[models]") {
  const auto* q = find_transformer("qwen3-8b");
  REQUIRE(q);
  const auto p = count_parameters(*q);
  CHECK(p.total == 8'190'735'360LL);
  // The embedding the first AllGather moves: 151,936 x 4,096 BF16 ~ 1.24 GB (section 2).
  CHECK(p.embedding * 2 == 1'244'659'712LL);
  // One layer ~ 0.39 GB of BF16 weights (section 2: "gathering one layer, about 0.39 GB").
  CHECK(p.per_layer * 2 == Approx(0.39e9).epsilon(0.02));
  // 16 bytes per parameter: ~131.1 GB (section 3).
  CHECK(static_cast<double>(p.total) * 16 / 1e9 == Approx(131.1).margin(0.05));
}

TEST_CASE("Qwen3-8B training FLOPs per token at 8,192 tokens", "[models]") {
  const auto* q = find_transformer("qwen3-8b");
  const double per_token = training_flops_per_token(*q, 8192);
  CHECK(per_token / 1e9 == Approx(52.7).margin(0.05));  // 52.7 GFLOPs per token
  const double per_seq = per_token * 8192;
  CHECK(per_seq / 1e14 == Approx(4.31).margin(0.005));        // 4.31e14 per sequence
  CHECK(per_seq * 384 / 1e17 == Approx(1.66).margin(0.005));  // 1.66e17 per step of 384
  CHECK(causal_attention_pairs(4) == 10);
}

TEST_CASE("accelerator peaks", "[models]") {
  CHECK(find_accelerator("rtx4090")->peak_bf16_flops == 165.2e12);
  CHECK(find_accelerator("a100")->peak_bf16_flops == 312e12);
  CHECK(find_accelerator("h100")->peak_bf16_flops == 989e12);
  CHECK(find_accelerator("b200")->peak_bf16_flops == 2250e12);
  CHECK(find_accelerator("rtx4090")->usable_memory == 22LL * 1024 * 1024 * 1024);
  CHECK_FALSE(find_accelerator("rtx4090")->p2p);
  CHECK(find_accelerator("tpu") == nullptr);
}
