// Zero-bubble schedules (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, sec. 3).
// The backward splits into B (input gradient, which the previous stage waits for) and W (weight
// gradient, which only feeds this stage's optimizer), so W can be deferred into bubbles.
//
// ZB-H1 (fig. 3 top): 1F1B's warm-up; in the steady state stage s runs F, B and -- from its
// (s+1)-th steady step on -- the oldest pending W. Deferring the first s W's fills the bubble
// before the cooldown while keeping at most p micro-batches resident per stage (1F1B's stage-0
// memory); the W's still pending run at the end.
#include <algorithm>
#include <numeric>

#include "schedules/registry.hpp"

namespace stepsim {

ScheduleFamily zb_h1_family() {
  ScheduleFamily f;
  f.name = "zb-h1";
  f.aliases = {"zbh1", "zero-bubble-h1"};
  f.summary = "1F1B with the backward split into B and W, W deferred into the bubbles (ZB-H1)";
  f.split_backward = true;
  f.check = [](const ScheduleRequest& r) -> std::optional<std::string> {
    if (r.virtual_stages != 1) return "zb-h1 places one stage per device (virtual_stages must be 1)";
    return std::nullopt;
  };
  f.build = [](const ScheduleRequest& r) {
    const int p = r.devices, m = r.microbatches;
    std::vector<int> placement(p);
    std::iota(placement.begin(), placement.end(), 0);
    PipelinePlan plan = single_route_plan(p, placement, m, true);
    for (int s = 0; s < p; ++s) {
      auto& list = plan.actions[s];
      const int warmup = std::min(p - s - 1, m);
      int fwd = 0, bwd = 0, wgt = 0, steady = 0;
      auto backward_then_deferred_w = [&] {
        list.push_back({ActionKind::BackwardInput, s, bwd++});
        if (steady++ >= s) list.push_back({ActionKind::BackwardWeight, s, wgt++});
      };
      while (fwd < warmup) list.push_back({ActionKind::Forward, s, fwd++});
      while (fwd < m) {
        list.push_back({ActionKind::Forward, s, fwd++});
        backward_then_deferred_w();
      }
      while (bwd < m) backward_then_deferred_w();
      while (wgt < m) list.push_back({ActionKind::BackwardWeight, s, wgt++});
    }
    return plan;
  };
  return f;
}

}  // namespace stepsim
