#include "cli/input/plan_source.hpp"

#include "schedules/lowering/data_parallel/data_parallel_spec.hpp"

namespace stepsim::cli {

StepCommSource plan_step_comm(const Scenario& sc) {
  if (!sc.plan || !sc.plan->spec) return {};
  if (sc.data_parallel && !sc.plan->exposed_comm_given) {
    StepCommSource simulate = data_parallel_step_comm(sc.data_parallel->spec);
    return [simulate, &sc](const StepShape& shape) {
      try {
        return simulate(shape);
      } catch (const SpecError& e) { sc.fail(e.key(), e.what()); }
    };
  }
  return {};  // evaluate_plan's stand-in from each case's (and sweep point's) own exposed_comm
}

}  // namespace stepsim::cli
