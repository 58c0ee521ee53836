#pragma once
// Resident training state: bytes per parameter by storage format, and what one card keeps when
// a data-parallel group of d cards shards it with ZeRO stage 0-3.
//
// Mixed-precision Adam (Micikevicius et al. 2018, sec. 3.1; Rajbhandari et al. 2020 "ZeRO",
// sec. 3.1): BF16 weights 2 + BF16 gradients 2 + FP32 master 4 + Adam moments 4 + 4 = 16 bytes per
// parameter. ZeRO (sec. 5): stage 1 shards the optimizer state (master + moments), stage 2 also the
// gradients, stage 3 also the weights.
#include <cstdint>

#include "sim/time.hpp"

namespace stepsim {

// The most bytes per parameter one array may take (FP64 is 8): sums of five stay ints, and x 10^15
// parameters inside int64.
inline constexpr int kMaxBytesPerParameter = 64;

// Bytes per parameter of each resident array. Gradients may be FP32 (4), weights FP8 (1), ...
struct StateFormat {
  int weights = 2;
  int gradients = 2;
  int master = 4;
  int moment1 = 4;
  int moment2 = 4;

  int optimizer() const { return master + moment1 + moment2; }
  int total() const { return weights + gradients + optimizer(); }
  // What a recovery checkpoint must hold (section 10.4.3): weights, master and both moments;
  // gradients are produced again by the next iteration. 2 + 4 + 8 = 14 bytes per parameter.
  int recoverable() const { return weights + optimizer(); }
};

// One card's share of the training state.
struct ResidentState {
  Bytes weights = 0;
  Bytes gradients = 0;
  Bytes optimizer = 0;  // master copy + moments
  Bytes total() const { return weights + gradients + optimizer; }
};

// Sharded arrays hold ceil(params / group) parameters per card. zero_stage in 0..3, group >= 1.
ResidentState resident_state(std::int64_t params, const StateFormat& format, int zero_stage, int group);

// Whole-model training state (no sharding) and the recoverable part a checkpoint saves.
Bytes training_state_bytes(std::int64_t params, const StateFormat& format);
Bytes recoverable_state_bytes(std::int64_t params, const StateFormat& format);

}  // namespace stepsim
