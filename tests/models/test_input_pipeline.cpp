// The input pipeline against exercise 10-5 and figure 10-30 (reference section 5).
#include <catch2/catch.hpp>

#include <cmath>

#include "models/input_pipeline.hpp"

using namespace stepsim;

namespace {
// Exercise 10-5: 48 cards take 384 sequences per 52.8 s step; four workers at 2 sequences/s;
// one pauses for 60 s (here at 600 s, once the queue is full).
InputSpec exercise(std::int64_t draws, std::int64_t prefetch) {
  InputSpec s;
  s.batch = 384;
  s.draws = draws;
  s.prefetch = prefetch;
  for (int i = 0; i < 4; ++i) s.workers.push_back(InputWorker{period_for_rate(2.0), {}});
  s.workers[0].pauses.push_back(InputPause{600 * kSecond, 60 * kSecond});
  return s;
}
constexpr Time kStep = 52'800 * kMillisecond;
constexpr std::int64_t kSteps = 40;
}  // namespace

TEST_CASE("preparation rate: 46,300 tokens/s is ~5.7 sequences of 8,192 tokens per second", "[input]") {
  const Time period = period_for_rate(46'300.0 / 8'192);
  CHECK(std::round(10.0 / to_s(period)) / 10 == Approx(5.7));
  // int64 token ids: 46,300 x 8 bytes ~ 0.37 MB/s to the GPU.
  CHECK(std::round(46'300 * 8 / 1e4) / 100 == Approx(0.37));
  // Four processes make 8 sequences/s against the 48 cards' ~7.3 (384 per 52.8 s).
  const FluidPauseEstimate f = fluid_pause_estimate(exercise(8, 400), kStep, 0, 60 * kSecond);
  CHECK(f.production == Approx(8.0));
  CHECK(std::round(f.consumption * 10) / 10 == Approx(7.3));
}

TEST_CASE("exercise 10-5: minimum prefetch through a 60 s pause, and the refill time", "[input]") {
  const FluidPauseEstimate f = fluid_pause_estimate(exercise(384, 400), kStep, 0, 60 * kSecond);
  // The book's method: (384 / 52.8 - 6) x 60 ~ 76.4 sequences; refilled at 8 - 7.27 per second.
  CHECK(f.min_prefetch == Approx(60.0 * (384 / 52.8 - 6)));
  CHECK(f.refill_seconds == Approx(f.min_prefetch / (8 - 384 / 52.8)));  // ~105 s

  // Simulated, one sequence per draw (the fluid limit) and 8 draws of 48 (one per accumulation).
  for (const std::int64_t draws : {384, 8}) {
    const auto min = min_prefetch_without_stall(exercise(draws, 1), kStep, kSteps);
    REQUIRE(min);
    const std::int64_t draw = 384 / draws;
    const InputRun at_min = simulate_input(exercise(draws, *min), kStep, kSteps);
    const InputRun below = simulate_input(exercise(draws, *min - 1), kStep, kSteps);
    INFO(draws << " draws: simulated minimum prefetch " << *min << " (fluid " << f.min_prefetch << "), refill "
               << (at_min.refill[0] ? to_s(*at_min.refill[0]) : -1) << " s (fluid " << f.refill_seconds << " s)");
    CHECK(at_min.stalled_steps == 0);
    CHECK(below.stalled_steps > 0);
    // The simulation differs from the fluid figure only by discreteness: the sequences the four
    // workers hold in progress (not yet ready) and the size of one draw.
    CHECK(std::abs(static_cast<double>(*min) - (f.min_prefetch + draw)) <= 4 + 1);
    REQUIRE(at_min.refill[0]);
    // Refill: the deficit recovered at the surplus rate. The deficit at the pause's end differs from
    // the fluid one by the sequences in progress (up to one per worker) plus one: that many
    // sequences at the surplus rate bound the difference.
    const double surplus = f.production - f.consumption;
    CHECK(std::abs(to_s(*at_min.refill[0]) - f.refill_seconds) <= (4 + 1) / surplus);
  }
}

TEST_CASE("prefetch progress is not training progress: trained to batch 100, assigned up to 108", "[input]") {
  // Figure 10-30 in units of whole batches: a prefetch of 8 batches and fast workers.
  InputSpec s;
  s.batch = 1;
  s.prefetch = 8;
  s.workers = {InputWorker{period_for_rate(10.0), {}}, InputWorker{period_for_rate(10.0), {}}};
  const InputRun r = simulate_input(s, kSecond, 120);
  CHECK(r.steps[100].trained == 100);
  CHECK(r.steps[100].assigned == 108);
  CHECK(r.stalled_steps == 0);
}

TEST_CASE("a slow pipeline makes every step wait; a cold start waits for the first batch", "[input]") {
  InputSpec s = exercise(8, 400);
  s.workers[0].pauses.clear();
  s.workers.pop_back();  // 6 sequences/s < 7.27 consumed
  s.warm = false;
  const InputRun r = simulate_input(s, kStep, 20);
  CHECK(r.steps[0].wait >= 48 * kSecond / 6 - kSecond);  // the first draw of 48 at 6/s
  CHECK(r.stalled_steps > 10);
  // In the long run the steps go at the pipeline's pace: 384 sequences / 6 per second = 64 s.
  const Time last = r.steps[19].start - r.steps[18].start;
  CHECK(to_s(last) == Approx(64.0).margin(0.6));
}
