#pragma once
// One card's memory over one training micro-batch and the optimizer update, laid out as a
// MemorySequence: the resident state for the whole step, each layer's saved activations from its
// forward to its backward, gathered weights (ZeRO-3) prefetched one layer ahead, unsharded layer
// gradients until their reduce-scatter, the logits, and recompute transients. Gradient
// accumulation runs micro-batches one after another, so one micro-batch's peak is the step's.
#include <optional>

#include "models/activations.hpp"
#include "models/memory_timeline.hpp"
#include "models/training_state.hpp"

namespace stepsim {

struct StepMemoryInputs {
  ResidentState resident;
  // A given allowance for activations and temporary buffers (the book's design case: 10 GiB)
  // replaces everything derived below.
  std::optional<Bytes> workspace;
  int layers = 0;
  LayerActivationBytes per_layer;  // one micro-batch
  Bytes gathered_layer = 0;        // one layer's full weights (ZeRO-3), 0 otherwise
  Bytes gathered_embedding = 0;    // input embedding (ZeRO-3)
  Bytes gathered_head = 0;         // output projection (ZeRO-3)
  Bytes layer_gradient = 0;        // one layer's unsharded gradient until reduce-scatter (ZeRO-2/3)
  Bytes embedding_gradient = 0;    // likewise for the embedding and the head
  Bytes head_gradient = 0;
  Bytes logits = 0;  // logits and their gradient
  int prefetch = 1;  // layers gathered ahead of use
};

MemorySequence step_memory_sequence(const StepMemoryInputs& in);

}  // namespace stepsim
