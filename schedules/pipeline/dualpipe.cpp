// DualPipe (DeepSeek-V3 technical report, sec. 3.2.1, fig. 5; deepseek-ai/DualPipe): the
// micro-batches are split in two halves that enter from both ends of the pipeline. Device i holds
// stage i of the first half's route and stage p-1-i of the mirrored route, so every device keeps
// two stages' parameters. Forward and backward chunks of the two directions are paired into
// overlapped ops (one compute op of F + B unless the scenario sets time.overlap). Published
// bubble: (PP/2 - 1)(F&B + B - 3W); activations of PP + 1 micro-batches.
//
// Each rank runs the eight-phase program of dualpipe_phases.hpp with P = p/2 ranks per half,
// h = min(i, p-1-i) and C = m/2 micro-batches per direction. A rank in the first half sees the
// first route as its phase 0; a rank in the second half sees the mirrored one as phase 0.
// Messages leave when the op that produces them ends. dualpipe.py batches each send with the
// next receive (and its middle ranks hold a few sends back); the event model sends no later.
#include <algorithm>

#include <fmt/format.h>

#include "schedules/pipeline/dualpipe_phases.hpp"
#include "schedules/pipeline/registry.hpp"

namespace stepsim {

ScheduleFamily dualpipe_family() {
  ScheduleFamily f;
  f.name = "dualpipe";
  f.summary = "micro-batches enter from both ends, overlapped forward/backward pairs (DeepSeek DualPipe)";
  f.split_backward = true;
  f.check = [](const ScheduleRequest& r) -> std::optional<std::string> {
    if (r.virtual_stages > 1) return "dualpipe places stage i and stage p-1-i on device i (virtual_stages must be 1)";
    if (r.devices % 2 != 0) return fmt::format("dualpipe needs an even number of stages (got {})", r.devices);
    if (r.microbatches % 2 != 0)
      return fmt::format("dualpipe splits the micro-batches into two halves: microbatches must be even (got {})",
                         r.microbatches);
    if (r.microbatches < 2 * r.devices)
      return fmt::format("dualpipe needs at least 2 x stages = {} micro-batches (got {}), as DualPipe asserts",
                         2 * r.devices, r.microbatches);
    return std::nullopt;
  };
  f.build = [](const ScheduleRequest& r) {
    const int p = r.devices, m = r.microbatches, P = p / 2, C = m / 2;
    PipelinePlan plan;
    plan.devices = p;
    plan.stages = p;
    plan.microbatches = m;
    plan.split_backward = true;
    plan.routes.assign(2, std::vector<int>(p));
    for (int s = 0; s < p; ++s) {
      plan.routes[0][s] = s;          // first half: enters at device 0
      plan.routes[1][s] = p - 1 - s;  // second half: enters at device p-1
    }
    for (int i = 0; i < m; ++i) plan.route_of_micro.push_back(i < C ? 0 : 1);
    plan.actions.assign(p, {});
    for (int d = 0; d < p; ++d) {
      const bool second_half = d >= P;
      const int h = std::min(d, p - 1 - d);
      const auto route_of_phase = [&](int phase) { return phase ^ static_cast<int>(second_half); };
      const auto stage = [&](int phase) { return route_of_phase(phase) == 0 ? d : p - 1 - d; };
      const auto micro = [&](int phase, int index) { return route_of_phase(phase) * C + index; };
      plan.actions[d] = dualpipe_rank_actions(P, h, C, h == P - 1, stage, micro);
    }
    return plan;
  };
  return f;
}

}  // namespace stepsim
