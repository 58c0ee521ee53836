// `stepsim job` on the design case: one whole-run simulation per plan case, with the case's
// cards and the step time the planner evaluates (simulated from the data_parallel section).
#include <catch2/catch.hpp>

#include "cli/input/scenario.hpp"
#include "cli/reports/job_report.hpp"

using namespace stepsim;
using namespace stepsim::cli;

TEST_CASE("the design case runs as one job per plan case", "[job][plan]") {
  const Scenario sc = load_scenario(std::string(STEPSIM_SOURCE_DIR) + "/scenarios/design-case.yaml");
  REQUIRE(sc.job);
  REQUIRE(sc.job->per_plan_case);
  // From the plan: 31,790 steps, the recoverable state (14 B/parameter) to 7 GB/s every 1,800 s.
  CHECK(sc.job->steps == 31790);
  CHECK(sc.job->run.checkpoint.size == 114'670'295'040LL);
  CHECK(sc.job->run.checkpoint.storage_bandwidth == 7'000'000'000LL);
  CHECK(sc.job->every == 1800 * kSecond);
  CHECK(sc.job->run.restore == 120 * kSecond);
  CHECK(sc.job->run.deadline == 30 * 86400 * kSecond);
  CHECK(sc.job->run.reserved == 5 * 86400 * kSecond);

  std::string source;
  const auto jobs = analyse_plan_jobs(sc, 200, 1, 2, "", {}, &source);
  REQUIRE(jobs.size() == 2);
  CHECK(source == "data-parallel step simulation");
  const auto& [name32, a32] = jobs[0];
  const auto& [name48, a48] = jobs[1];
  CHECK(name32 == "32 cards");
  CHECK(a32.spec.cards == 32);
  CHECK(a48.spec.cards == 48);
  CHECK(to_s(a32.step_time) == Approx(78.9).margin(0.05));
  CHECK(to_s(a48.step_time) == Approx(52.8).margin(0.05));
  // The book: 34.3 days (misses) and 24.6 days (meets) with checkpoint overhead and 5 reserved
  // days. The Monte Carlo mean agrees within the book's rounding (its standard error over 200
  // runs is a few hundredths of a day at most).
  const double day = 86400.0;
  CHECK(a32.summary.completion.seconds.mean / day == Approx(34.3).margin(0.06));
  CHECK(a48.summary.completion.seconds.mean / day == Approx(24.6).margin(0.06));
  REQUIRE(a32.summary.meet_probability);
  CHECK(*a32.summary.meet_probability == 0.0);
  CHECK(*a48.summary.meet_probability == 1.0);

  const auto only = analyse_plan_jobs(sc, 10, 1, 1, "48 cards");
  REQUIRE(only.size() == 1);
  CHECK(only[0].second.spec.cards == 48);
  CHECK_THROWS_AS(analyse_plan_jobs(sc, 10, 1, 1, "64 cards"), InputError);
}
