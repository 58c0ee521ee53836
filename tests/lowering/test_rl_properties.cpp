// RL loops on random specs (synchronous and asynchronous, updates between batches or in flight,
// interrupted trajectories discarded or resumed, stages given as rates, batch times or lengths,
// fixed or drawn): the counts the loop reports agree with the graph rules stated in
// schedules/lowering/rl/rl_loop_sim.hpp.
#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "schedules/lowering/rl/rl_loop_sim.hpp"

using namespace stepsim;

namespace {

DurationDist random_duration(std::mt19937_64& rng, Time scale) {
  DurationDist d;
  const int k = static_cast<int>(rng() % 3);
  d.kind = k == 0 ? DurationDist::Kind::Fixed : k == 1 ? DurationDist::Kind::Uniform : DurationDist::Kind::Exponential;
  d.a = scale / 2 + static_cast<Time>(rng() % static_cast<std::uint64_t>(scale));
  d.b = d.kind == DurationDist::Kind::Uniform ? d.a + static_cast<Time>(rng() % static_cast<std::uint64_t>(scale)) : 0;
  return d;
}

RlStageSpec random_stage(std::mt19937_64& rng, bool generation) {
  RlStageSpec s;
  s.workers = 1 + static_cast<int>(rng() % 4);
  const int how = static_cast<int>(rng() % (generation ? 3 : 2));
  if (how == 0)
    s.rate = static_cast<RatePpm>(1 + rng() % 20) * kPpm / 2;
  else if (how == 1)
    s.batch_time = random_duration(rng, 10 * kSecond);
  else
    s.length = random_duration(rng, 2 * kSecond);
  if (generation && rng() % 2 == 0) s.chunk = static_cast<Time>(1 + rng() % 4) * 250 * kMillisecond;
  return s;
}

RlLoopSpec random_spec(std::mt19937_64& rng) {
  RlLoopSpec s;
  s.mode = rng() % 2 == 0 ? RlMode::Synchronous : RlMode::Asynchronous;
  s.max_staleness = 1 + static_cast<int>(rng() % 3);
  s.updates = rng() % 2 == 0 ? WeightUpdates::BetweenBatches : WeightUpdates::InFlight;
  s.interrupted = rng() % 2 == 0 ? Interrupted::Discard : Interrupted::Resume;
  s.batches = 1 + static_cast<int>(rng() % 8);
  s.batch_size = 1 + static_cast<int>(rng() % 24);
  s.kept_ppm = rng() % 3 == 0 ? kPpm : static_cast<std::int64_t>(rng() % kPpm);
  s.seed = rng();
  s.generation = random_stage(rng, true);
  if (rng() % 3 != 0) s.verification = random_stage(rng, false);
  s.learning = random_stage(rng, false);
  s.sync = static_cast<Time>(rng() % 3) * kSecond;
  return s;
}

}  // namespace

TEST_CASE("RL loops on random specs: counts follow the graph rules", "[rl][properties]") {
  std::mt19937_64 rng(36);
  int ran = 0, refused = 0;
  for (int trial = 0; ran < 200 && trial < 2000; ++trial) {
    const RlLoopSpec s = random_spec(rng);
    INFO("trial " << trial << ": " << (s.mode == RlMode::Synchronous ? "sync" : "async") << ", "
                  << (s.updates == WeightUpdates::InFlight ? "in flight" : "between batches") << ", "
                  << s.batches << " x " << s.batch_size << ", kept " << s.kept_ppm << " ppm, verification "
                  << s.verification.workers);
    RlLoopRun run;
    try {
      run = simulate_rl_loop(s);
    } catch (const SpecError& e) {  // e.g. chunks without in-flight updates: refused at the stage's key
      const std::string key = e.key();
      CHECK((key.rfind("generation.", 0) == 0 || key.rfind("verification.", 0) == 0 ||
             key.rfind("learning.", 0) == 0));
      ++refused;
      continue;
    }
    ++ran;
    const RlLoopStats& st = run.stats;
    const std::int64_t n = static_cast<std::int64_t>(s.batches) * s.batch_size;
    CHECK(st.generated == n);
    // Kept by the even spread: exactly floor(n q) of the first n (when a verifier keeps them).
    if (s.verification.present()) {
      std::int64_t kept = 0;
      for (std::int64_t i = 0; i < n; ++i) kept += kept_evenly(i, s.kept_ppm);
      CHECK(st.verified_kept == kept);
    }
    // Interrupted trajectories exist only with updates in flight; discarded ones are not learned.
    if (s.updates == WeightUpdates::BetweenBatches) CHECK(st.interrupted == 0);
    CHECK(st.discarded_interrupted <= st.interrupted);
    if (s.interrupted == Interrupted::Resume) CHECK(st.discarded_interrupted == 0);
    CHECK(st.learned == st.verified_kept - st.discarded_interrupted);
    // Every learned trajectory has one staleness, at most the lead the mode allows.
    int staled = 0;
    for (const auto& [age, count] : st.staleness) {
      CHECK(age >= 0);
      CHECK(age <= s.lead());
      staled += count;
    }
    CHECK(staled == st.learned);
    CHECK(st.makespan > 0);
    CHECK(st.period <= st.makespan);
    for (const RlStageUse& u : st.stages) {
      CHECK(u.utilization >= 0);
      CHECK(u.utilization <= 1 + 1e-12);
    }
    // The same spec, the same loop.
    const RlLoopRun again = simulate_rl_loop(s);
    CHECK(again.stats.makespan == st.makespan);
    CHECK(again.stats.learned == st.learned);
  }
  CHECK(ran == 200);
  CHECK(refused > 0);  // the draws do reach specs that cannot run
}
