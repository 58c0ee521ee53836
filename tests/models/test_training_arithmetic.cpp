// Small calculators of the reference: loss denominators and gradient accumulation (sections 6 and
// 7), compute then transfer on the engine (section 7), the KV cache and routing-replay records
// (section 6), resharding TP4 -> TP8 and the checkpoint's bytes (section 5). Each figure is
// computed from the stated inputs.
#include <catch2/catch.hpp>

#include <cmath>

#include "models/checkpoint.hpp"
#include "models/compute_transfer.hpp"
#include "models/kv_cache.hpp"
#include "models/loss_weighting.hpp"
#include "models/resharding.hpp"
#include "models/routing_replay.hpp"
#include "models/training_state.hpp"
#include "models/transformer.hpp"

using namespace stepsim;

namespace {
constexpr Bytes kMiB = 1024 * 1024;
constexpr Bytes kGiB = 1024 * kMiB;
}  // namespace

TEST_CASE("loss denominators: per token the long answers carry 12/20 = 60%", "[arithmetic]") {
  const std::vector<std::int64_t> valid = {2, 2, 2, 2, 3, 3, 3, 3};  // 20 tokens
  const auto long_share = [&](LossAveraging a) {
    const auto w = sequence_weights(valid, a);
    double s = 0;
    for (std::size_t i = 0; i < w.size(); ++i)
      if (valid[i] == 3) s += w[i];
    return s;
  };
  CHECK(long_share(LossAveraging::PerToken) == Approx(12.0 / 20.0));
  CHECK(long_share(LossAveraging::PerToken) == Approx(0.6));
  CHECK(long_share(LossAveraging::PerSequence) == Approx(0.5));
  // A sequence with no valid token weighs nothing either way.
  CHECK(sequence_weights({0, 4}, LossAveraging::PerSequence)[0] == 0.0);
}

TEST_CASE("gradient accumulation: (2 x 1 + 6 x 3) / 8 = 2.5, not (1 + 3) / 2 = 2", "[arithmetic]") {
  const std::vector<MicroBatchMean> mbs = {{2, 1.0}, {6, 3.0}};
  CHECK(accumulated_mean(mbs) == 2.5);
  CHECK(mean_of_means(mbs) == 2.0);
}

TEST_CASE("1,000,000 B at 1e8 B/s is 10 ms; with 2 ms of compute and no overlap, 12 ms", "[arithmetic]") {
  ComputeTransferSpec s{2 * kMillisecond, 1'000'000, 100'000'000, false, 1};
  ComputeTransferResult r = simulate_compute_transfer(s);
  CHECK(r.transfer == 10 * kMillisecond);
  CHECK(r.makespan == 12 * kMillisecond);
  s.iterations = 10;
  r = simulate_compute_transfer(s);
  CHECK(r.period == 12 * kMillisecond);
  CHECK(r.makespan == 120 * kMillisecond);
  // Overlapping the transfer with the next compute: the link sets the pace.
  s.overlap = true;
  r = simulate_compute_transfer(s);
  CHECK(r.period == 10 * kMillisecond);
  CHECK(r.makespan == 2 * kMillisecond + 10 * 10 * kMillisecond);
  CHECK_THROWS(simulate_compute_transfer({1, 1, 0, false, 1}));
}

TEST_CASE("Qwen3-8B KV cache for 8K tokens in BF16: 1.125 GiB", "[arithmetic]") {
  const TransformerConfig& q = *find_transformer("qwen3-8b");
  const Bytes kv = kv_cache_bytes(q, 8192, 2);
  CHECK(kv == 1'207'959'552);
  CHECK(static_cast<double>(kv) / kGiB == 1.125);
}

TEST_CASE("routing replay, Qwen3-30B-A3B: 8,192 tokens x 48 layers x top-8 = 6 MiB (uint16)", "[arithmetic]") {
  CHECK(routing_replay_bytes(8192, 48, 8, 2) == 6 * kMiB);
  CHECK(routing_replay_bytes(8192, 48, 8, 4) == 12 * kMiB);
}

TEST_CASE("resharding TP4 -> TP8: the gate projection [12288, 4096]", "[arithmetic]") {
  const std::int64_t rows = 12288, cols = 4096;
  const StateFormat bf16_adam;  // BF16 weights, FP32 master and moments
  const Bytes row_bytes = cols * bf16_adam.weights;
  CHECK(rows * row_bytes == 96 * kMiB);
  for (int r = 0; r < 4; ++r) CHECK(shard_rows(rows, 4, r).count == 3072);
  CHECK(shard_rows(rows, 4, 1).count * row_bytes == 24 * kMiB);
  for (int r = 0; r < 8; ++r) CHECK(shard_rows(rows, 8, r).count == 1536);
  CHECK(shard_rows(rows, 8, 1).count * row_bytes == 12 * kMiB);

  const auto reads = reshard_reads(rows, 4, 8);
  REQUIRE(reads.size() == 8);
  for (int r = 0; r < 8; ++r) {
    CHECK(reads[r].new_rank == r);
    CHECK(reads[r].old_rank == r / 2);                      // old shard floor(r / 2)
    CHECK(reads[r].old_offset == (r % 2 == 0 ? 0 : 1536));  // even ranks the first half
    CHECK(reads[r].rows == 1536);
  }

  // In a checkpoint the matrix also carries the FP32 master copy and both moments, split by the
  // same rows: 96 x (1 + 2 + 2 + 2) = 672 MiB.
  const Bytes ckpt = checkpoint_tensor_bytes(rows * cols, bf16_adam);
  CHECK(ckpt == 672 * kMiB);
  CHECK(ckpt == rows * row_bytes * (bf16_adam.weights + bf16_adam.master + bf16_adam.moment1 + bf16_adam.moment2) /
                    bf16_adam.weights);
}

TEST_CASE("resharding between degrees that do not divide: every row read once", "[arithmetic]") {
  const auto reads = reshard_reads(12, 3, 2);  // old [0,4) [4,8) [8,12) -> new [0,6) [6,12)
  REQUIRE(reads.size() == 4);
  CHECK((reads[0].old_rank == 0 && reads[0].rows == 4 && reads[0].new_offset == 0));
  CHECK((reads[1].old_rank == 1 && reads[1].old_offset == 0 && reads[1].rows == 2 && reads[1].new_offset == 4));
  CHECK((reads[2].new_rank == 1 && reads[2].old_rank == 1 && reads[2].old_offset == 2 && reads[2].rows == 2));
  CHECK((reads[3].old_rank == 2 && reads[3].rows == 4 && reads[3].new_offset == 2));
  std::int64_t total = 0;
  for (const auto& r : reshard_reads(1000, 7, 3)) total += r.rows;
  CHECK(total == 1000);
}

TEST_CASE("14 bytes per parameter, ~115 GB, saved every 1,800 s: ~64 MB/s", "[arithmetic]") {
  const StateFormat f;
  CHECK(f.recoverable() == 14);
  const Bytes ckpt = recoverable_state_bytes(count_parameters(*find_transformer("qwen3-8b")).total, f);
  CHECK(ckpt == 114'670'295'040LL);
  CHECK(std::round(static_cast<double>(ckpt) / 1e9) == 115);
  const double rate = checkpoint_write_rate(ckpt, 1800 * kSecond);
  CHECK(rate == Approx(63'705'719.47).epsilon(1e-9));
  CHECK(std::round(rate / 1e6) == 64);
}
