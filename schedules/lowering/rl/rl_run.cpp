#include "schedules/lowering/rl/rl_run.hpp"

namespace stepsim {

RlRun simulate_rl(const RlScenario& scenario) {
  RlRun out;
  for (const auto& loop : scenario.loops) out.loops.push_back(simulate_rl_loop(loop));
  if (scenario.colocate) {
    try {
      out.colocate = simulate_colocate(*scenario.colocate);
    } catch (const SpecError& e) {
      throw SpecError("colocate." + e.key(), e.what());
    }
  }
  if (scenario.weight_transfer) {
    try {
      out.weight_transfer = simulate_weight_transfer(*scenario.weight_transfer);
    } catch (const SpecError& e) {
      throw SpecError("weight_transfer." + e.key(), e.what());
    }
  }
  return out;
}

}  // namespace stepsim
