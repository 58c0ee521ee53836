// The planner's compute, checkpoint and deadline model against the book's design case
// (reference sections 4 and 5; section 10.6's table).
#include <catch2/catch.hpp>

#include "models/checkpoint.hpp"
#include "models/compute.hpp"
#include "models/deadline.hpp"
#include "models/plan.hpp"
#include "models/step_timing.hpp"
#include "plan_fixtures.hpp"

using namespace stepsim;
using namespace stepsim::testing;

namespace {
PlanResult evaluate(const PlanSpec& s, int cards) { return evaluate_plan(s, cards_case(cards, ""), spec_step_comm(s)); }
}  // namespace

TEST_CASE("steps and per-step budget of the task", "[plan][deadline]") {
  CHECK(steps_for(100'000'000'000LL, 8192 * 384) == 31'790);
  CHECK(to_s(step_budget(30 * kDay, 5 * kDay, 31'790, 0.0)) == Approx(67.9).margin(0.05));
  CHECK(to_s(step_budget(30 * kDay, 0, 31'790, 0.0)) == Approx(81.5).margin(0.05));  // all 30 days
}

TEST_CASE("FLOPs per sequence and per step", "[plan][deadline]") {
  const PlanResult r = evaluate(design_case(), 48);
  REQUIRE(r.time);
  CHECK(r.time->flops_per_token / 1e9 == Approx(52.7).margin(0.05));
  CHECK(r.time->flops_per_sequence / 1e14 == Approx(4.31).margin(0.005));
  CHECK(r.time->flops_per_step / 1e17 == Approx(1.66).margin(0.005));
  CHECK(r.time->flops_per_step * 31'790 / 1e21 == Approx(5.27).margin(0.005));
}

TEST_CASE("the design case table, 32 vs 48 cards (section 10.6)", "[plan][deadline]") {
  const PlanSpec s = design_case();
  const PlanResult a = evaluate(s, 32), b = evaluate(s, 48);
  REQUIRE(a.time);
  REQUIRE(b.time);
  const TimePlan &t32 = *a.time, &t48 = *b.time;
  CHECK(a.hosts == 4);
  CHECK(b.hosts == 6);
  CHECK(a.microbatches_per_card == 12);
  CHECK(b.microbatches_per_card == 8);
  CHECK_FALSE(a.uneven);
  CHECK(gib(a.memory.planned) == Approx(13.8).margin(0.05));
  CHECK(gib(b.memory.planned) == Approx(12.5).margin(0.05));
  CHECK(gib(a.memory.usable) == 22.0);
  CHECK(to_s(t32.compute) == Approx(78.3).margin(0.05));
  CHECK(to_s(t48.compute) == Approx(52.2).margin(0.05));
  // Link time from the design desk's V = 3m(d-1)/d 2N over PCIe 4.0 x16 (32 GB/s).
  CHECK(to_s(t32.comm.link) == Approx(17.9).margin(0.05));
  CHECK(to_s(t48.comm.link) == Approx(12.0).margin(0.05));
  CHECK(to_s(t32.comm.exposed) == Approx(0.08));
  CHECK(to_s(t32.input_wait) == Approx(0.5));
  CHECK(to_s(t32.step) == Approx(78.9).margin(0.05));
  CHECK(to_s(t48.step) == Approx(52.8).margin(0.05));
  // c = 114,670,295,040 B / 7 GB/s = 16.38 s.
  CHECK(to_s(t32.checkpoint.save) == Approx(16.38).margin(0.005));
  CHECK(t32.overhead.total() * 100 == Approx(1.02).margin(0.005));
  CHECK(t48.overhead.total() * 100 == Approx(1.08).margin(0.005));
  CHECK(days(t32.base_training) == Approx(29.0).margin(0.05));
  CHECK(days(t48.base_training) == Approx(19.4).margin(0.05));
  CHECK(days(t32.completion) == Approx(34.3).margin(0.05));
  CHECK(days(t48.completion) == Approx(24.6).margin(0.05));
  CHECK_FALSE(t32.meets());
  CHECK(t48.meets());
  CHECK_FALSE(a.ok());
  CHECK(b.ok());
  // 48 cards finish with ~5.4 days to spare.
  CHECK(days(t48.deadline - t48.completion) == Approx(5.4).margin(0.05));
}

TEST_CASE("how much room the 48-card plan has (section 10.6)", "[plan][deadline]") {
  const PlanSpec s = design_case();
  const TimePlan t = *evaluate(s, 48).time;
  // ts <= 25 x 86400 / (31,790 x 1.0108) ~ 67.2 s.
  CHECK(to_s(t.budget) == Approx(67.2).margin(0.05));
  CHECK(to_s(t.budget - t.step) == Approx(14.4).margin(0.05));
  CHECK(to_s(t.comm_may_grow_to) == Approx(14.5).margin(0.05));
  // Prefetch failing entirely: all 12.0 s of link time exposed, 64.8 s per step, still in budget.
  PlanSpec exposed = s;
  exposed.exposed_comm = t.comm.link;
  const TimePlan e = *evaluate(exposed, 48).time;
  CHECK(to_s(e.step) == Approx(64.8).margin(0.05));
  CHECK(e.meets());
  // Efficiency 40% -> 30%: ~70.2 s per step, over 67.2 s.
  PlanSpec slow = s;
  slow.efficiency = 0.30;
  const TimePlan w = *evaluate(slow, 48).time;
  CHECK(to_s(w.step) == Approx(70.2).margin(0.05));
  CHECK(w.step > w.budget);
  CHECK_FALSE(w.meets());
}

TEST_CASE("the efficiency the 32-card plan would need (section 10.6)", "[plan][deadline]") {
  const PlanSpec s = design_case();
  const TimePlan t = *evaluate(s, 32).time;
  // 66.7 s left for compute after checkpoints, 0.08 s communication and 0.5 s input.
  CHECK(to_s(t.budget - t.comm.exposed - t.input_wait) == Approx(66.7).margin(0.05));
  // 40% x 78.3 / 66.7 ~ 47%, above Llama 3's best 43%.
  CHECK(t.efficiency_needed * 100 == Approx(47).margin(0.5));
  PlanSpec better = s;
  better.efficiency = t.efficiency_needed + 1e-4;
  CHECK(evaluate(better, 32).time->meets());
  // The other lever: more cards. 34 cards: ceil(384 / 34) = 12 sequences on the busiest card, no
  // gain; the fewest cards that meet are 39 (10 sequences on the busiest card).
  const DeadlineLevers lv = deadline_levers(s, cards_case(32, ""), spec_step_comm(s));
  REQUIRE(lv.cards);
  CHECK(*lv.cards == 39);
}

TEST_CASE("checkpoint overhead L(tau) = c/tau + (tau/2 + r)/M (section 10.4.4)", "[plan][deadline]") {
  const CheckpointCost cost{transfer_time(114'670'295'040LL, 7'000'000'000LL), 120 * kSecond};
  CHECK(to_s(cost.save) == Approx(16.38).margin(0.005));
  const Interruptions job{337 * kDay, 1024, {}};
  CHECK(checkpoint_overhead(cost, 300 * kSecond, job).total() * 100 == Approx(6.4).margin(0.05));
  CHECK(checkpoint_overhead(cost, 900 * kSecond, job).total() * 100 == Approx(3.8).margin(0.05));
  CHECK(checkpoint_overhead(cost, 1800 * kSecond, job).total() * 100 == Approx(4.5).margin(0.05));
  // The optimum sqrt(2cM) lies between 900 and 1,800 s and is the minimum.
  const Time best = optimal_checkpoint_interval(cost, job);
  CHECK(best > 900 * kSecond);
  CHECK(best < 1800 * kSecond);
  const double at_best = checkpoint_overhead(cost, best, job).total();
  CHECK(at_best < checkpoint_overhead(cost, best - 10 * kSecond, job).total());
  CHECK(at_best < checkpoint_overhead(cost, best + 10 * kSecond, job).total());
  // Doubling the cards or the save speed shrinks the optimum by 1/sqrt(2).
  const Interruptions twice{337 * kDay, 2048, {}};
  CHECK(to_s(optimal_checkpoint_interval(cost, twice)) == Approx(to_s(best) / std::sqrt(2.0)).epsilon(1e-6));
  const CheckpointCost faster{cost.save / 2, cost.restore};
  CHECK(to_s(optimal_checkpoint_interval(faster, job)) == Approx(to_s(best) / std::sqrt(2.0)).epsilon(1e-4));
}

TEST_CASE("a loss-spike rollback every 7 days (section 10.4.4)", "[plan][deadline]") {
  PlanSpec s = design_case();
  const TimePlan before = *evaluate(s, 48).time;
  s.rollback_every = 7 * kDay;
  const TimePlan after = *evaluate(s, 48).time;
  CHECK(after.overhead.total() * 100 == Approx(1.25).margin(0.005));
  CHECK(days(after.completion - before.completion) == Approx(0.03).margin(0.005));
}

TEST_CASE("the communication seam: a simulated step timing replaces the given one", "[plan][deadline]") {
  const PlanSpec s = design_case();
  StepShape seen;
  const StepCommSource simulated = [&](const StepShape& shape) {
    seen = shape;
    return StepComm{12 * kSecond, 150 * kMillisecond, "test double"};
  };
  const PlanResult r = evaluate_plan(s, cards_case(48, "48"), simulated);
  CHECK(seen.cards == 48);
  CHECK(seen.microbatches_per_card == 8);
  CHECK(to_s(seen.compute_per_microbatch) == Approx(6.53).margin(0.005));  // 52.2 s / 8
  // Halved PCIe bandwidth doubles the exposed part to ~0.15 s: 52.8 -> 52.9 s.
  CHECK(to_s(r.time->step) == Approx(52.9).margin(0.05));
  CHECK(r.time->comm.source == "test double");
  // Each collective moves (d-1)/d x 2N per card: ~16.0 GB at d = 48 (section 10.3.3).
  CHECK(zero3_step_volume(2 * s.model.parameters, 48, 1) / 3 / 1e9 == Approx(16.0).margin(0.05));
}

TEST_CASE("uneven batches: the busiest card sets the step", "[plan][deadline]") {
  const PlanResult r = evaluate(design_case(), 40);
  CHECK(r.microbatches_per_card == 10);  // ceil(384 / 40)
  CHECK(r.uneven);
}
