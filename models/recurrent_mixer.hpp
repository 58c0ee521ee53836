#pragma once
// A layer's recurrent sequence mixer, Gated DeltaNet (Qwen3-Next) or Mamba-2 (Nemotron-H): what
// the layer costs (layer_costs.hpp) need of it, each figure counted from the mixer's own kernels
// (sources where each is built, recurrent_mixer.cpp). Both take the same shape around their cores:
// an input projection from h to `projected` columns, a chunked scan over `heads` heads, an output
// projection from `inner` back to h; tensor parallelism splits the heads, context parallelism
// exchanges the projected input and the scan's output by head (Megatron-Core's GatedDeltaNet and
// MambaContextParallel), so one description serves both.

#include <cstdint>
#include <optional>

#include "models/job_spec.hpp"

namespace stepsim {

struct RecurrentMixer {
  double projected = 0;  // the input projection's output width, all heads
  double inner = 0;      // the output projection's input width, all heads
  double heads = 0;      // the scan's heads (Gated DeltaNet: value heads)
  // The scan's kernels per token and head, forward: FLOPs and HBM bytes; backward_bytes 0 where
  // the backward is taken as FlashAttention's (2.5x the forward), else its own count.
  double core_flops = 0, core_bytes = 0, core_backward_bytes = 0;
  double memory_bytes = 0;      // the memory-bound kernels around the scan, bytes per token, all heads
  double batch_copy_bytes = 0;  // more of them at a micro-batch of several sequences, bytes per token
  double activation_bytes = 0;  // kept for the backward, bytes per token, all heads
  std::int64_t parameters = 0;  // the mixer's weights (its layer's norm not counted)
};

// The mixer of `m`'s layers where every layer has the one kind (layer_kind_model's model of a
// Gated DeltaNet or Mamba-2 kind); none for attention or for a pattern's MLP layer.
std::optional<RecurrentMixer> recurrent_mixer(const JobModel& m);
bool has_recurrent_mixer(const JobModel& m);

}  // namespace stepsim
