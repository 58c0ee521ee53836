#pragma once
// Where a plan's step communication comes from, for every command that evaluates a plan
// (`stepsim plan`, and `stepsim job` on a scenario whose job takes its steps from the plan).
#include "cli/input/scenario.hpp"
#include "models/step_timing.hpp"

namespace stepsim::cli {

// A given `plan.step.exposed_comm` wins; otherwise a `data_parallel` section in the same scenario
// is simulated for every case (its cards, micro-batches, efficiency and input wait set by the
// case); otherwise an empty source: evaluate_plan then takes each case's exposed_comm (given in
// the case, the sweep or `plan.step`; zero if none). Simulation errors are reported against the
// scenario.
// The returned source refers to `sc`, which must outlive it.
StepCommSource plan_step_comm(const Scenario& sc);

}  // namespace stepsim::cli
