// Fill-drain (GPipe; Huang et al. 2019, fig. 2c): every forward, then every backward.
#include <numeric>

#include "schedules/pipeline/registry.hpp"

namespace stepsim {

ScheduleFamily fill_drain_family() {
  ScheduleFamily f;
  f.name = "fill-drain";
  f.aliases = {"gpipe"};
  f.summary = "all forwards, then all backwards (GPipe)";
  f.check = [](const ScheduleRequest& r) -> std::optional<std::string> {
    if (r.virtual_stages > 1) return "fill-drain places one stage per device (virtual_stages must be 1)";
    return std::nullopt;
  };
  f.build = [](const ScheduleRequest& r) {
    std::vector<int> placement(r.devices);
    std::iota(placement.begin(), placement.end(), 0);
    PipelinePlan plan = single_route_plan(r.devices, placement, r.microbatches, false);
    for (int d = 0; d < r.devices; ++d) {
      for (int i = 0; i < r.microbatches; ++i) plan.actions[d].push_back({ActionKind::Forward, d, i});
      for (int i = 0; i < r.microbatches; ++i) plan.actions[d].push_back({ActionKind::Backward, d, i});
    }
    return plan;
  };
  return f;
}

}  // namespace stepsim
