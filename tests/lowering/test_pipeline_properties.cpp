// Properties every schedule must have, over random stage counts, micro-batch counts and
// durations: every op runs once, no resource runs two ops at once, every dependency holds.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "schedules/lowering/pipeline/pipeline_spec.hpp"

using namespace stepsim;

namespace {
// Uniform integer in [lo, hi] from the raw engine (std distributions differ across libraries).
std::int64_t pick(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
}

PipelineSpec random_spec(std::mt19937_64& rng, const std::string& schedule, bool uniform) {
  PipelineSpec s;
  s.stages = static_cast<int>(pick(rng, 1, 8));
  s.microbatches = static_cast<int>(pick(rng, 1, 20));
  s.schedule = schedule;
  const Time f = pick(rng, 1, 50) * kMicrosecond, bi = pick(rng, 1, 50) * kMicrosecond,
             bw = pick(rng, 1, 50) * kMicrosecond;
  for (int d = 0; d < s.stages; ++d) {
    s.forward.push_back(uniform ? f : pick(rng, 1, 50) * kMicrosecond);
    s.backward_input.push_back(uniform ? bi : pick(rng, 1, 50) * kMicrosecond);
    s.backward_weight.push_back(uniform ? bw : pick(rng, 1, 50) * kMicrosecond);
    s.backward.push_back(s.backward_input.back() + s.backward_weight.back());
    s.update.push_back(pick(rng, 0, 5) * kMicrosecond);
    s.activation.push_back(pick(rng, 1, 100));
  }
  s.update.assign(s.stages, s.update.empty() ? 0 : s.update[0]);
  s.latency = pick(rng, 0, 5) * kMicrosecond;
  s.message = 1;
  return s;
}

void check_invariants(const PipelineRun& run) {
  const auto& g = run.program->graph;
  const auto& t = run.timeline;
  // Every op ran exactly once: it has a start.
  for (OpId op = 0; op < g.op_count(); ++op) REQUIRE(t.start[op] >= 0);
  // Every dependency holds.
  for (OpId op = 0; op < g.op_count(); ++op)
    g.for_each_successor(op, [&](OpId s) { REQUIRE(t.start[s] >= t.done(g, op)); });
  // No resource serves two ops at once, and program-order resources keep their order.
  for (ResourceId r = 0; r < g.resource_count(); ++r) {
    const auto iv = resource_intervals(g, t, r);
    for (std::size_t k = 1; k < iv.size(); ++k) REQUIRE(iv[k].start >= iv[k - 1].end);
    if (g.resource(r).discipline == Discipline::ProgramOrder) {
      Time last = -1;
      for (OpId op = g.first_on(r); op != kNoOp; op = g.next_on_resource(op)) {
        REQUIRE(t.start[op] >= last);
        last = t.end(g, op);
      }
    }
  }
  // Each (stage, micro-batch) has its forward and backward exactly once (check_plan ran) and
  // the makespan is the last done time.
  Time last_done = 0;
  for (OpId op = 0; op < g.op_count(); ++op) last_done = std::max(last_done, t.done(g, op));
  REQUIRE(run.stats.step_time == last_done);
}
}  // namespace

TEST_CASE("random pipelines: invariants hold for every schedule", "[pipeline][property]") {
  std::mt19937_64 rng(20261129);
  for (const auto& family : schedule_families()) {
    for (int trial = 0; trial < 60; ++trial) {
      PipelineSpec spec = random_spec(rng, family.name, trial % 2 == 0);
      if (family.check({spec.stages, spec.microbatches, spec.virtual_stages})) continue;
      INFO(family.name << " p=" << spec.stages << " m=" << spec.microbatches);
      const auto run = simulate_pipeline(spec);
      check_invariants(run);
    }
  }
}

TEST_CASE("random pipelines: fill-drain matches its closed form", "[pipeline][property]") {
  // Uniform stages: the last micro-batch's forward reaches the last stage after (m + p - 1)
  // forward slots and p - 1 hops; backwards mirror it; then the update.
  //   T = (m + p - 1)(F + B) + 2 (p - 1) L + U
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 100; ++trial) {
    PipelineSpec spec = random_spec(rng, "fill-drain", true);
    const int p = spec.stages, m = spec.microbatches;
    const Time expect =
        (m + p - 1) * (spec.forward[0] + spec.backward[0]) + 2 * (p - 1) * spec.latency + spec.update[0];
    INFO("p=" << p << " m=" << m);
    CHECK(simulate_pipeline(spec).stats.step_time == expect);
  }
}

TEST_CASE("the same input gives the same timeline", "[pipeline][determinism]") {
  std::mt19937_64 rng(99);
  const PipelineSpec spec = random_spec(rng, "zb-h1", false);
  const auto a = simulate_pipeline(spec);
  const auto b = simulate_pipeline(spec);
  CHECK(a.timeline.start == b.timeline.start);
  CHECK(a.timeline.makespan == b.timeline.makespan);
}
