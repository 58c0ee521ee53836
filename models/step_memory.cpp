#include "models/step_memory.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace stepsim {

MemorySequence step_memory_sequence(const StepMemoryInputs& in) {
  MemorySequence s;
  auto resident = [&](std::size_t last) {
    s.add_buffer("weights", MemoryKind::Resident, in.resident.weights, 0, last);
    s.add_buffer("gradients", MemoryKind::Resident, in.resident.gradients, 0, last);
    s.add_buffer("master and moments", MemoryKind::Resident, in.resident.optimizer, 0, last);
  };
  if (in.workspace) {
    const auto f = s.add_op("forward");
    const auto b = s.add_op("backward");
    const auto u = s.add_op("optimizer update");
    resident(u);
    s.add_buffer("activations and buffers (given)", MemoryKind::Buffers, *in.workspace, f, b);
    return s;
  }
  const int L = std::max(in.layers, 0);
  const int ahead = std::max(in.prefetch, 0);
  const auto emb_f = s.add_op("embedding forward");
  std::vector<std::size_t> fwd(L), bwd(L);
  for (int l = 0; l < L; ++l) fwd[l] = s.add_op(fmt::format("layer {} forward", l));
  const auto head = s.add_op("head forward, loss, head backward");
  for (int l = L - 1; l >= 0; --l) bwd[l] = s.add_op(fmt::format("layer {} backward", l));
  const auto emb_b = s.add_op("embedding backward");
  const auto update = s.add_op("optimizer update");
  resident(update);

  s.add_buffer("gathered embedding", MemoryKind::Buffers, in.gathered_embedding, emb_f, emb_f);
  s.add_buffer("gathered embedding", MemoryKind::Buffers, in.gathered_embedding, emb_b, emb_b);
  s.add_buffer("embedding gradient", MemoryKind::Buffers, in.embedding_gradient, emb_b, emb_b);
  s.add_buffer("gathered head", MemoryKind::Buffers, in.gathered_head, head, head);
  s.add_buffer("head gradient", MemoryKind::Buffers, in.head_gradient, head, head);
  s.add_buffer("logits and their gradient", MemoryKind::Activations, in.logits, head, head);
  for (int l = 0; l < L; ++l) {
    // Forward gather issued `ahead` layers early (at the embedding for the first layers).
    const std::size_t gf = l - ahead >= 0 ? fwd[l - ahead] : emb_f;
    s.add_buffer(fmt::format("layer {} gathered for forward", l), MemoryKind::Buffers, in.gathered_layer, gf, fwd[l]);
    const std::size_t gb = l + ahead < L ? bwd[l + ahead] : head;
    s.add_buffer(fmt::format("layer {} gathered for backward", l), MemoryKind::Buffers, in.gathered_layer, gb, bwd[l]);
    s.add_buffer(fmt::format("layer {} saved activations", l), MemoryKind::Activations, in.per_layer.saved, fwd[l],
                 bwd[l]);
    s.add_buffer(fmt::format("layer {} rebuilt activations", l), MemoryKind::Activations, in.per_layer.rebuilt, bwd[l],
                 bwd[l]);
    // Reduce-scatter of this layer's gradient overlaps the next layer's backward.
    const std::size_t rs = l > 0 ? bwd[l - 1] : emb_b;
    s.add_buffer(fmt::format("layer {} gradient before reduce-scatter", l), MemoryKind::Buffers, in.layer_gradient,
                 bwd[l], rs);
  }
  return s;
}

}  // namespace stepsim
