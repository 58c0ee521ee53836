#include "schedules/lowering/rl/rl_run.hpp"

namespace stepsim {

RlRun simulate_rl(const RlSpec& spec) {
  RlRun out;
  for (const auto& loop : spec.loops) out.loops.push_back(simulate_rl_loop(loop));
  if (spec.colocate) {
    try {
      out.colocate = simulate_colocate(*spec.colocate);
    } catch (const SpecError& e) { throw SpecError("colocate." + e.key(), e.what()); }
  }
  if (spec.weight_transfer) {
    try {
      out.weight_transfer = simulate_weight_transfer(*spec.weight_transfer);
    } catch (const SpecError& e) { throw SpecError("weight_transfer." + e.key(), e.what()); }
  }
  return out;
}

}  // namespace stepsim
