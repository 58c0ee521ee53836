// Interleaved 1F1B (Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
// Clusters Using Megatron-LM", SC 2021, sec. 2.2.2 and fig. 4 bottom), in Megatron-LM's
// depth-first order (forward_backward_pipelining_with_interleaving).
//
// The model is cut into v*p chunks; chunk c (virtual stage c) runs on device c mod p, so a
// micro-batch visits every device v times and its last hop on each lap wraps from device p-1
// back to device 0. Each device walks m*v "virtual micro-batches" k: micro-batches go in groups
// of p, and within a group the device runs chunk 0 for all p of them, then chunk 1, ...
// (backwards walk the chunks in reverse). Device d first runs (p-d-1)*2 + (v-1)*p forwards
// (capped at m*v), then alternates one forward and one backward, then drains the backwards.
// The bubble shrinks to (1/v)(p-1)/m of the step at the price of v times the messages.
#include <algorithm>

#include <fmt/format.h>

#include "schedules/pipeline/registry.hpp"

namespace stepsim {

namespace {
constexpr int kDefaultChunks = 2;

int chunks_of(const ScheduleRequest& r) { return r.virtual_stages > 0 ? r.virtual_stages : kDefaultChunks; }

// Virtual micro-batch k of a device: which chunk (model_chunk_id) and which micro-batch.
struct Slot {
  int chunk, micro;
};
Slot slot(int k, int p, int v, bool forward) {
  const int group = k / (p * v), in_group = k % (p * v);
  const int chunk = in_group / p;
  return {forward ? chunk : v - 1 - chunk, group * p + in_group % p};
}
}  // namespace

ScheduleFamily interleaved_1f1b_family() {
  ScheduleFamily f;
  f.name = "interleaved-1f1b";
  f.aliases = {"interleaved", "interleaved1f1b"};
  f.summary = "v model chunks per device, depth-first 1F1B over them (Megatron-LM interleaved)";
  f.takes_virtual_stages = true;
  f.check = [](const ScheduleRequest& r) -> std::optional<std::string> {
    const int v = chunks_of(r);
    if (v < 2)
      return fmt::format("interleaved-1f1b needs virtual_stages >= 2 (got {}; with one chunk per device use 1f1b)", v);
    if (r.microbatches % r.devices != 0)
      return fmt::format(
          "Megatron-LM's interleaved order runs micro-batches in groups of one per device: "
          "microbatches ({}) must be a multiple of stages ({})",
          r.microbatches, r.devices);
    return std::nullopt;
  };
  f.build = [](const ScheduleRequest& r) {
    const int p = r.devices, m = r.microbatches, v = chunks_of(r);
    std::vector<int> placement(static_cast<std::size_t>(p) * v);
    for (int c = 0; c < p * v; ++c) placement[c] = c % p;
    PipelinePlan plan = single_route_plan(p, placement, m, false);
    plan.paired_with_next.resize(static_cast<std::size_t>(p));
    const int total = m * v;
    for (int d = 0; d < p; ++d) {
      auto& list = plan.actions[d];
      const auto forward = [&](int k) {
        const Slot s = slot(k, p, v, true);
        list.push_back({ActionKind::Forward, s.chunk * p + d, s.micro});
      };
      const auto backward = [&](int k) {
        const Slot s = slot(k, p, v, false);
        list.push_back({ActionKind::Backward, s.chunk * p + d, s.micro});
      };
      const int warmup = std::min((p - d - 1) * 2 + (v - 1) * p, total);
      int fwd = 0, bwd = 0;
      while (fwd < warmup) forward(fwd++);
      while (fwd < total) {
        forward(fwd++);
        backward(bwd++);
      }
      while (bwd < total) backward(bwd++);
      // Megatron-LM's steady state runs a forward and a backward, then one batched exchange
      // (send_forward_backward_recv_forward_backward); warmup and cooldown exchange after each op.
      auto& paired = plan.paired_with_next[static_cast<std::size_t>(d)];
      paired.assign(list.size(), false);
      for (int k = 0; k < total - warmup; ++k) paired[static_cast<std::size_t>(warmup + 2 * k)] = true;
    }
    return plan;
  };
  return f;
}

}  // namespace stepsim
