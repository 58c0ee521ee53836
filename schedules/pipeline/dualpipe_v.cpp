// DualPipe-V ("cut-in-half" DualPipe; deepseek-ai/DualPipe, and PyTorch's ScheduleDualPipeV):
// one copy of the parameters. The model is cut into 2p chunks placed in a V: device i holds
// chunk i and chunk 2p-1-i, so a micro-batch goes down the devices and back up, and the turn at
// device p-1 stays on one device. Each device runs DualPipe's eight-phase program
// (dualpipe_phases.hpp) with P = p, h = i and C = m: phase 0 is chunk i, phase 1 chunk 2p-1-i,
// both over all m micro-batches; the last device is the "middle" rank.
#include <fmt/format.h>

#include "schedules/pipeline/dualpipe_phases.hpp"
#include "schedules/pipeline/registry.hpp"

namespace stepsim {

ScheduleFamily dualpipe_v_family() {
  ScheduleFamily f;
  f.name = "dualpipe-v";
  f.aliases = {"dualpipev"};
  f.summary = "DualPipe cut in half: two chunks per device in a V, one parameter copy (DualPipeV)";
  f.split_backward = true;
  f.check = [](const ScheduleRequest& r) -> std::optional<std::string> {
    if (r.virtual_stages > 1) return "dualpipe-v places two chunks per device in a V (virtual_stages must be 1)";
    if (r.microbatches < 2 * r.devices)
      return fmt::format("dualpipe-v needs at least 2 x stages = {} micro-batches (got {}), as DualPipeV requires",
                         2 * r.devices, r.microbatches);
    return std::nullopt;
  };
  f.build = [](const ScheduleRequest& r) {
    const int p = r.devices, m = r.microbatches;
    std::vector<int> placement(2 * static_cast<std::size_t>(p));
    for (int c = 0; c < 2 * p; ++c) placement[c] = c < p ? c : 2 * p - 1 - c;
    PipelinePlan plan = single_route_plan(p, placement, m, true);
    for (int d = 0; d < p; ++d) {
      const auto stage = [&](int phase) { return phase == 0 ? d : 2 * p - 1 - d; };
      plan.actions[d] = dualpipe_rank_actions(p, d, m, d == p - 1, stage, [](int, int index) { return index; });
    }
    return plan;
  };
  return f;
}

}  // namespace stepsim
