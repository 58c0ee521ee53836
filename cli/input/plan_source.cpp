#include "cli/input/plan_source.hpp"

#include <fmt/format.h>

#include "schedules/lowering/data_parallel/data_parallel_spec.hpp"

namespace stepsim::cli {

StepCommSource plan_step_comm(const Scenario& sc) {
  if (!sc.plan || !sc.plan->spec) return {};
  if (sc.data_parallel && !sc.plan->exposed_comm_given) {
    StepCommSource simulate = data_parallel_step_comm(sc.data_parallel->spec);
    return [simulate, &sc](const StepShape& shape) {
      try {
        return simulate(shape);
      } catch (const SpecError& e) {
        // The plan's shape sets the micro-batches (its batch over the case's cards), not the
        // section's own count: too many is the plan task's batch.
        if (e.key().ends_with("microbatches") && shape.microbatches_per_card != sc.data_parallel->spec.microbatches)
          sc.fail("plan.task.sequences_per_step",
                  fmt::format("{} (the plan's {} micro-batches per card on {} cards)", e.what(),
                              shape.microbatches_per_card, shape.cards));
        sc.fail(e.key(), e.what());
      }
    };
  }
  return {};  // evaluate_plan's stand-in from each case's (and sweep point's) own exposed_comm
}

}  // namespace stepsim::cli
