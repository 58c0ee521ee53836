// Zero-bubble schedules (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, sec. 3).
// The backward splits into B (input gradient, which the previous stage waits for) and W (weight
// gradient, which only feeds this stage's optimizer), so W can be deferred into bubbles.
//
// Both handcrafted schedules are one diagonal pattern: in step x stage s runs F(x), then
// B(x - lag_b), then W(x - lag_w), skipping indices outside 0..m-1.
//
// ZB-H1 (fig. 3 top): lag_b = p-1-s, lag_w = p-1. 1F1B's warm-up of p-s-1 forwards; in the
// steady state stage s runs F, B and -- from its (s+1)-th steady step on -- the oldest pending W.
// Deferring the first s W's fills the bubble before the cooldown while keeping at most p
// micro-batches resident per stage (1F1B's stage-0 memory); the W's still pending run at the end.
//
// ZB-H2 (fig. 3 bottom): lag_b = 2(p-1-s), lag_w = 2(p-1). Twice the memory budget (up to 2p-1
// micro-batches resident on stage 0): 2(p-1-s) extra warm-up forwards fill the bubble before
// stage s's first B, and the tail's W's are reordered so the pattern is a parallelogram rather
// than a trapezoid. Its bubble bound is (p-1)(TF + TB - 2TW), zero when TB = TW = TF.
#include <algorithm>
#include <numeric>

#include "schedules/pipeline/registry.hpp"

namespace stepsim {

namespace {

PipelinePlan diagonal_plan(const ScheduleRequest& r, int lag_factor) {
  const int p = r.devices, m = r.microbatches;
  std::vector<int> placement(p);
  std::iota(placement.begin(), placement.end(), 0);
  PipelinePlan plan = single_route_plan(p, placement, m, true);
  for (int s = 0; s < p; ++s) {
    auto& list = plan.actions[s];
    const int lag_b = lag_factor * (p - 1 - s), lag_w = lag_factor * (p - 1);
    for (int x = 0; x < m + lag_w; ++x) {
      if (x < m) list.push_back({ActionKind::Forward, s, x});
      if (x - lag_b >= 0 && x - lag_b < m) list.push_back({ActionKind::BackwardInput, s, x - lag_b});
      if (x - lag_w >= 0) list.push_back({ActionKind::BackwardWeight, s, x - lag_w});
    }
  }
  return plan;
}

ScheduleFamily zero_bubble_family(std::string name, std::vector<std::string> aliases, std::string summary,
                                  int lag_factor) {
  ScheduleFamily f;
  f.name = std::move(name);
  f.aliases = std::move(aliases);
  f.summary = std::move(summary);
  f.split_backward = true;
  f.check = [n = f.name](const ScheduleRequest& r) -> std::optional<std::string> {
    if (r.virtual_stages > 1) return n + " places one stage per device (virtual_stages must be 1)";
    return std::nullopt;
  };
  f.build = [lag_factor](const ScheduleRequest& r) { return diagonal_plan(r, lag_factor); };
  return f;
}

}  // namespace

ScheduleFamily zb_h1_family() {
  return zero_bubble_family("zb-h1", {"zbh1", "zero-bubble-h1"},
                            "1F1B with the backward split into B and W, W deferred into the bubbles (ZB-H1)", 1);
}

ScheduleFamily zb_h2_family() {
  return zero_bubble_family("zb-h2", {"zbh2", "zero-bubble-h2"},
                            "zero bubble with twice ZB-H1's memory: more warm-up forwards, W filling the tail (ZB-H2)",
                            2);
}

}  // namespace stepsim
