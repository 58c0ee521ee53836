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

TEST_CASE("a sliding window: each query sees at most w keys; CP ranks fetch the halo before their chunks",
          "[models][window]") {
  // 8 tokens, window 3: 1 + 2 + 3 + 3 + 3 + 3 + 3 + 3 = 21 pairs (w(w+1)/2 + (s - w) w).
  CHECK(causal_attention_pairs(8, 3) == 21);
  CHECK(causal_pairs_of(4, 4, 3) == 12);
  CHECK(causal_attention_pairs(8, 8) == 36);  // a window as long as the sequence: causal
  CHECK(causal_attention_pairs(8, 100) == 36);
  // Balanced over 2 ranks, chunks of 2: rank 0 takes chunks 0 and 3 (1+2 + 3+3 = 9), rank 1
  // chunks 1 and 2 (3+3 + 3+3 = 12). Halo, the w - 1 = 2 keys before a chunk: chunk 1 needs
  // [0, 2), rank 0's; chunk 2 [2, 4), its own rank's; chunk 3 [4, 6), rank 1's.
  const auto bal = cp_rank_shares(8, 2, true, 3);
  CHECK(bal[0].pairs == 9);
  CHECK(bal[1].pairs == 12);
  CHECK(bal[0].halo == 2);
  CHECK(bal[1].halo == 2);
  CHECK(cp_rank_shares(8, 2, true, 1)[1].halo == 0);  // a window of one token: each query itself
  CHECK(cp_rank_shares(8, 2, true)[0].halo == 0);  // no window: the ring, no halo
  // 131,072 tokens, window 1,024, cp 4: chunks of 16,384; each chunk but the first fetches 1,023
  // keys from the chunk before, except chunk 4 from chunk 3, both rank 3's.
  const std::int64_t s = 131072, w = 1024, L = s / 8;
  const auto r = cp_rank_shares(s, 4, true, w);
  CHECK(r[0].pairs == w * (w + 1) / 2 + (L - w) * w + L * w);
  CHECK(r[1].pairs == 2 * L * w);
  CHECK(r[0].halo == w - 1);
  CHECK(r[1].halo == 2 * (w - 1));
  CHECK(r[2].halo == 2 * (w - 1));
  CHECK(r[3].halo == w - 1);
  std::int64_t all = 0;
  for (const auto& x : r) all += x.pairs;
  CHECK(all == causal_attention_pairs(s, w));
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

TEST_CASE("context-parallel chunks: balanced ranks share the causal pairs equally (figures 10-28/10-29)",
          "[models][cp]") {
  // 8 tokens, 36 pairs, over 2 ranks. Contiguous: tokens 0-3 (1+2+3+4 = 10) and 4-7 (26).
  // Balanced: 4 chunks of 2; rank 0 takes chunks 0 and 3 (1+2 + 7+8 = 18), rank 1 chunks 1 and 2
  // (3+4 + 5+6 = 18).
  CHECK(causal_attention_pairs(8) == 36);
  CHECK(causal_pairs_of(4, 4) == 26);
  const auto con = cp_rank_shares(8, 2, false);
  REQUIRE(con.size() == 2);
  CHECK(con[0].pairs == 10);
  CHECK(con[1].pairs == 26);
  const auto bal = cp_rank_shares(8, 2, true);
  CHECK(bal[0].chunks == std::vector<int>{0, 3});
  CHECK(bal[1].chunks == std::vector<int>{1, 2});
  CHECK(bal[0].pairs == 18);
  CHECK(bal[1].pairs == 18);
  // 131,072 tokens over cp 4: every balanced rank s(s+1)/(2 cp); the contiguous last rank 1.75x.
  const std::int64_t s = 131072;
  for (const auto& r : cp_rank_shares(s, 4, true)) CHECK(r.pairs == s * (s + 1) / 8);
  const auto last = cp_rank_shares(s, 4, false)[3];
  CHECK(last.pairs == causal_pairs_of(3 * s / 4, s / 4));
  CHECK(static_cast<double>(last.pairs) / (static_cast<double>(s) * (s + 1) / 8) == Approx(1.75).epsilon(1e-4));
}
