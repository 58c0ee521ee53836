// 1F1B (PipeDream-Flush; Narayanan et al. 2021, fig. 4 top): stage s runs p-s-1 warm-up
// forwards, then alternates one forward and one backward, then drains the backwards. At most
// p-s micro-batches are resident on stage s.
#include <algorithm>
#include <numeric>

#include "schedules/pipeline/registry.hpp"

namespace stepsim {

ScheduleFamily one_f_one_b_family() {
  ScheduleFamily f;
  f.name = "1f1b";
  f.aliases = {"pipedream-flush"};
  f.summary = "warm-up forwards, then one forward / one backward (PipeDream-Flush)";
  f.check = [](const ScheduleRequest& r) -> std::optional<std::string> {
    if (r.virtual_stages > 1) return "1f1b places one stage per device (use interleaved-1f1b for virtual_stages > 1)";
    return std::nullopt;
  };
  f.build = [](const ScheduleRequest& r) {
    const int p = r.devices, m = r.microbatches;
    std::vector<int> placement(p);
    std::iota(placement.begin(), placement.end(), 0);
    PipelinePlan plan = single_route_plan(p, placement, m, false);
    for (int s = 0; s < p; ++s) {
      auto& list = plan.actions[s];
      const int warmup = std::min(p - s - 1, m);
      int fwd = 0, bwd = 0;
      while (fwd < warmup) list.push_back({ActionKind::Forward, s, fwd++});
      while (fwd < m) {
        list.push_back({ActionKind::Forward, s, fwd++});
        list.push_back({ActionKind::Backward, s, bwd++});
      }
      while (bwd < m) list.push_back({ActionKind::Backward, s, bwd++});
    }
    return plan;
  };
  return f;
}

}  // namespace stepsim
