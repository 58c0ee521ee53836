// The seam between the planner and the data-parallel simulation: data_parallel_step_comm drops
// into evaluate_plan in place of a given exposed wait; `stepsim plan` uses it whenever the
// scenario has a data_parallel section and no plan.step.exposed_comm.
#include <catch2/catch.hpp>

#include "models/plan.hpp"
#include "plan_fixtures.hpp"
#include "schedules/lowering/data_parallel/data_parallel_spec.hpp"

using namespace stepsim;
using namespace stepsim::testing;

namespace {
// The design case's step as data_parallel_step_comm simulates it (the same spec the shipped
// scenarios/design-case.yaml carries in its data_parallel section).
StepCommSource simulated(const PlanSpec& plan) {
  DataParallelSpec base;
  base.model = *plan.model.shape;
  base.accelerator = plan.accelerator;
  base.sequence_length = plan.sequence;
  base.microbatch_size = plan.microbatch_sequences;
  base.weight_bytes = plan.format.weights;
  base.gradient_bytes = plan.format.gradients;
  base.zero_stage = plan.zero_stage;
  base.alpha = 20 * kMicrosecond;  // 0.02 ms per collective (section 2)
  return data_parallel_step_comm(base);
}
}  // namespace

TEST_CASE("the ZeRO-3 simulation plugs into the planner", "[plan][seam]") {
  const PlanSpec s = design_case();
  const StepCommSource sim = simulated(s);
  const PlanResult a = evaluate_plan(s, cards_case(32), sim), b = evaluate_plan(s, cards_case(48), sim);
  CHECK(a.time->comm.source == "data-parallel step simulation");
  // The simulated link time matches the design desk's formula row (17.9 / 12.0 s) ...
  CHECK(to_s(a.time->comm.link) == Approx(17.9).margin(0.05));
  CHECK(to_s(b.time->comm.link) == Approx(12.0).margin(0.05));
  // ... and the exposed part is the book's ~0.08 s within a few hundredths (the simulation
  // also exposes the first micro-batch's prefetch ramp), so every row of the table stands.
  CHECK(to_s(b.time->comm.exposed) == Approx(0.08).margin(0.05));
  CHECK(to_s(a.time->step) == Approx(78.9).margin(0.05));
  CHECK(to_s(b.time->step) == Approx(52.8).margin(0.05));
  CHECK(days(a.time->completion) == Approx(34.3).margin(0.05));
  CHECK(days(b.time->completion) == Approx(24.6).margin(0.05));
  CHECK_FALSE(a.time->meets());
  CHECK(b.time->meets());
}
