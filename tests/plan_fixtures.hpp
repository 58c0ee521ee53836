#pragma once
// The book's inputs for the planner tests, typed in once (tests must not read /work/shared).
#include "models/hardware.hpp"
#include "models/plan.hpp"
#include "models/transformer.hpp"

namespace stepsim::testing {

inline constexpr Bytes kGiB = 1024LL * 1024 * 1024;
inline constexpr Bytes kMiB = 1024LL * 1024;
inline constexpr Time kDay = 86400 * kSecond;

inline double gib(Bytes b) { return static_cast<double>(b) / static_cast<double>(kGiB); }
inline double days(Time t) { return to_s(t) / 86400.0; }

// Section 10.6's design case: Qwen3-8B, 100B tokens of 8,192-token sequences, 384 per step,
// ZeRO-3 over all RTX 4090 cards, 40% efficiency, 30 days with 5 reserved, 10 GiB of
// activations and buffers, 0.08 s exposed communication, 0.5 s input wait, checkpoints of the
// recoverable state to 7 GB/s storage every 1,800 s, restore 120 s, per-card MTBF 337 days.
inline PlanSpec design_case() {
  PlanSpec s;
  s.model.name = "qwen3-8b";
  s.model.shape = *find_transformer("qwen3-8b");
  s.model.parameters = count_parameters(*s.model.shape).total;
  s.accelerator = *find_accelerator("rtx4090");
  s.usable = s.accelerator.usable_memory;
  s.link_bandwidth = s.accelerator.host_link;
  s.tokens = 100'000'000'000LL;
  s.sequence = 8192;
  s.sequences_per_step = 384;
  s.deadline = 30 * kDay;
  s.reserved = 5 * kDay;
  s.zero_stage = 3;
  s.workspace = 10 * kGiB;
  s.efficiency = 0.40;
  s.exposed_comm = 80 * kMillisecond;
  s.input_wait = 500 * kMillisecond;
  s.storage_bandwidth = 7'000'000'000LL;
  s.restore = 120 * kSecond;
  s.interval = 1800 * kSecond;
  s.card_mtbf = 337 * kDay;
  s.cases = {cards_case(32, "32 cards"), cards_case(48, "48 cards")};
  return s;
}

// Example 27.1 of the resource-bill chapter: 1,000,000 parameters, 2 sequences of 128 positions,
// width 64, 4 layers, 10 saved arrays of 2 bytes per layer.
inline PlanSpec small_model() {
  PlanSpec s;
  s.model.name = "1M";
  s.model.parameters = 1'000'000;
  s.model.layers = 4;
  s.model.width = 64;
  s.model.saved_arrays = 10;
  s.sequence = 128;
  s.microbatch_sequences = 2;
  s.zero_stage = 0;
  s.usable = 10'000'000;
  s.cases = {cards_case(1, "1 worker")};
  return s;
}

}  // namespace stepsim::testing
