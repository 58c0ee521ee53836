// Every schedule, for every valid (devices, micro-batches, chunks) in a range: the plan lists each
// op once, the run finishes (no deadlock), every dependency holds, no resource runs two ops at
// once, every hold is released, and each schedule's published bound on resident micro-batches
// holds. Durations are random per stage, so heterogeneous stages are covered too. (The Chrome
// trace of each schedule, parsed back, is in tests/test_trace.cpp.)
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "random_pipeline_spec.hpp"
#include "schedules/lowering/pipeline/pipeline_spec.hpp"

using namespace stepsim;

namespace {
// The largest number of micro-batches each schedule may keep resident on device d.
int resident_bound(const std::string& schedule, int p, int m, int v, int d) {
  if (schedule == "fill-drain") return m;
  if (schedule == "1f1b") return std::min(m, p - d);
  if (schedule == "zb-h1") return std::min(m, p);
  if (schedule == "zb-h2") return std::min(m, 2 * p - 1);
  if (schedule == "dualpipe") return p + 1;        // published: PP + 1
  if (schedule == "dualpipe-v") return 2 * p + 1;  // the same program on 2p chunks
  if (schedule == "interleaved-1f1b")              // warm-up forwards + the steady one
    return std::min(m * v, (p - d - 1) * 2 + (v - 1) * p + 1);
  return m * v;
}

void check_run(const PipelineRun& run, const PipelineSpec& spec) {
  const auto& prog = *run.program;
  const auto& g = prog.graph;
  const auto& t = run.timeline;
  // Each (stage, micro-batch) runs F once and either B once or I and W once (check_plan) --
  // here counted again on the lowered graph.
  std::map<std::tuple<char, int, int>, int> count;
  for (OpId op = 0; op < g.op_count(); ++op) {
    const auto& x = prog.info[op];
    if (x.kind == PipeOp::Overlap) {
      ++count[{'F', x.stage, x.micro}];
      ++count[{'B', x.stage2(), x.micro2}];
    } else if (x.kind == PipeOp::Forward || x.kind == PipeOp::Backward || x.kind == PipeOp::BackwardInput) {
      ++count[{x.kind == PipeOp::Forward ? 'F' : 'B', x.stage, x.micro}];
    }
  }
  for (int s = 0; s < run.plan.stages; ++s)
    for (int i = 0; i < run.plan.microbatches; ++i) {
      REQUIRE(count[{'F', s, i}] == 1);
      REQUIRE(count[{'B', s, i}] == 1);
    }
  // Dependencies hold; no resource serves two ops at once; program order is kept.
  for (OpId op = 0; op < g.op_count(); ++op) {
    REQUIRE(t.start[op] >= 0);
    g.for_each_successor(op, [&](OpId s) { REQUIRE(t.start[s] >= t.done(g, op)); });
  }
  for (ResourceId r = 0; r < g.resource_count(); ++r) {
    const auto iv = resource_intervals(g, t, r);
    for (std::size_t k = 1; k < iv.size(); ++k) REQUIRE(iv[k].start >= iv[k - 1].end);
    if (g.resource(r).discipline == Discipline::ProgramOrder) {
      Time last = 0;
      for (OpId op = g.first_on(r); op != kNoOp; op = g.next_on_resource(op)) {
        REQUIRE(t.start[op] >= last);
        last = t.end(g, op);
      }
    }
  }
  // Every byte held is released by the end of the step.
  for (const auto& curve : pipeline_memory(run.plan, *run.program, run.timeline)) {
    REQUIRE(!curve.steps.empty());
    REQUIRE(curve.steps.back().second == 0);
  }
  for (const auto& d : run.stats.devices)
    REQUIRE(d.peak_resident <=
            resident_bound(run.schedule, spec.stages, spec.microbatches, run.plan.stages / run.plan.devices, d.id));
}
}  // namespace

TEST_CASE("every schedule, every valid p, m, v: each op once, deadlock-free, dependencies and resources respected",
          "[schedules][property]") {
  std::mt19937_64 rng(31337);
  int runs = 0;
  for (const auto& family : schedule_families()) {
    const std::vector<int> chunk_counts = family.takes_virtual_stages ? std::vector<int>{2, 3, 4} : std::vector<int>{0};
    for (int p = 1; p <= 8; ++p)
      for (int m = 1; m <= 20; ++m)
        for (int v : chunk_counts) {
          if (family.check({p, m, v})) continue;
          const PipelineSpec spec = test::spec_with(rng, family.name, p, m, v);
          INFO(family.name << " p=" << p << " m=" << m << " v=" << v);
          const auto run = simulate_pipeline(spec);  // throws DeadlockError if it cannot finish
          check_run(run, spec);
          ++runs;
        }
  }
  CHECK(runs > 900);
}

TEST_CASE("each family's check names why it refuses, and accepts what it builds", "[schedules][property]") {
  // Refusals are exactly the documented constraints.
  const auto* inter = find_schedule("interleaved-1f1b");
  const auto* dual = find_schedule("dualpipe");
  const auto* dual_v = find_schedule("dualpipe-v");
  REQUIRE(inter);
  REQUIRE(dual);
  REQUIRE(dual_v);
  for (int p = 1; p <= 8; ++p)
    for (int m = 1; m <= 20; ++m) {
      CHECK(static_cast<bool>(inter->check({p, m, 0})) == (m % p != 0));
      CHECK(static_cast<bool>(dual->check({p, m, 0})) == (p % 2 != 0 || m % 2 != 0 || m < 2 * p));
      CHECK(static_cast<bool>(dual_v->check({p, m, 0})) == (m < 2 * p));
    }
  // Schedules with a fixed placement refuse an explicit virtual_stages > 1.
  for (const char* name : {"fill-drain", "1f1b", "zb-h1", "zb-h2", "dualpipe", "dualpipe-v"})
    CHECK(find_schedule(name)->check({4, 8, 2}));
}

TEST_CASE("check_plan: a repeated action names the device that listed it first", "[schedules]") {
  PipelinePlan plan = single_route_plan(2, {0, 1}, 2, false);
  const auto F = ActionKind::Forward, B = ActionKind::Backward;
  plan.actions[0] = {{F, 0, 0}, {F, 0, 1}, {B, 0, 0}, {B, 0, 1}, {F, 1, 0}};
  plan.actions[1] = {{F, 1, 0}, {B, 1, 0}, {F, 1, 1}, {B, 1, 1}, {F, 1, 1}};
  const std::vector<std::string> problems = check_plan(plan);
  REQUIRE(problems.size() == 3);
  CHECK(problems[0] == "device 0: 1F0 belongs on device 1");
  CHECK(problems[1] == "device 1: 1F0 is listed twice (also on device 0)");
  CHECK(problems[2] == "device 1: 1F1 is listed twice (also on device 1)");
}

TEST_CASE("check_plan: missing and mixed backwards, read 64 micro-batches at a time, as one slot at a time",
          "[schedules]") {
  // Plans of 1 to 3 stages and 1 to 200 micro-batches (words read across their boundaries), each
  // action dropped with probability 1/24 and the other backward form sometimes added: the
  // messages are those of the rule applied to each (stage, micro-batch) in order.
  const auto F = ActionKind::Forward, B = ActionKind::Backward;
  const auto I = ActionKind::BackwardInput, W = ActionKind::BackwardWeight;
  std::mt19937_64 rng(29);
  for (int trial = 0; trial < 80; ++trial) {
    const int p = 1 + static_cast<int>(rng() % 3), m = 1 + static_cast<int>(rng() % 200);
    const bool split = rng() % 2 == 0;
    std::vector<int> placement(static_cast<std::size_t>(p));
    for (int s = 0; s < p; ++s) placement[static_cast<std::size_t>(s)] = s;
    PipelinePlan plan = single_route_plan(p, placement, m, split);
    std::set<std::tuple<int, int, int>> listed;  // (kind, stage, micro-batch)
    for (int s = 0; s < p; ++s) {
      auto& list = plan.actions[static_cast<std::size_t>(s)];
      list.clear();
      for (int i = 0; i < m; ++i) {
        std::vector<ActionKind> kinds = split ? std::vector<ActionKind>{F, I, W} : std::vector<ActionKind>{F, B};
        if (rng() % 40 == 0) kinds.push_back(split ? B : I);
        for (const ActionKind k : kinds) {
          if (rng() % 24 == 0) continue;
          list.push_back({k, s, i});
          listed.insert({static_cast<int>(k), s, i});
        }
      }
    }
    const auto has = [&](ActionKind k, int s, int i) { return listed.count({static_cast<int>(k), s, i}) > 0; };
    const auto missing = [&](ActionKind k, int s, int i) {
      return format_action(Action{k, s, i}) + " is missing (device " + std::to_string(s) + ")";
    };
    std::vector<std::string> want;
    for (int s = 0; s < p; ++s)
      for (int i = 0; i < m; ++i) {
        if (!has(F, s, i)) want.push_back(missing(F, s, i));
        const bool full = has(B, s, i), input = has(I, s, i), weight = has(W, s, i);
        if (full && (input || weight)) {
          want.push_back(format_action(Action{B, s, i}) + " is both a full backward and split into " +
                         format_action(Action{I, s, i}) + " / " + format_action(Action{W, s, i}) +
                         " (use one or the other)");
        } else if (!full && !input && !weight) {
          if (split) {
            want.push_back(missing(I, s, i));
            want.push_back(missing(W, s, i));
          } else {
            want.push_back(missing(B, s, i));
          }
        } else if (input != weight) {
          want.push_back(missing(input ? W : I, s, i));
        }
      }
    INFO("trial " << trial << ": p " << p << ", m " << m << (split ? ", split" : ""));
    CHECK(check_plan(plan) == want);
  }
}

TEST_CASE("measure's kept memory curves are pipeline_memory's, with the same peaks", "[schedules][memory]") {
  std::mt19937_64 rng(11);
  for (const std::string schedule : {"1f1b", "interleaved-1f1b", "zb-h1", "dualpipe-v"}) {
    for (int trial = 0; trial < 5; ++trial) {
      const int p = 4, m = 8;
      const PipelineSpec spec = test::spec_with(rng, schedule, p, m, schedule == "interleaved-1f1b" ? 2 : 0);
      const PipelineRun peaks = simulate_pipeline(spec);
      const PipelineRun curves = simulate_pipeline(spec, MemoryDetail::Curves);
      INFO(schedule << " trial " << trial);
      CHECK(peaks.stats.memory.empty());
      const auto computed = pipeline_memory(curves.plan, *curves.program, curves.timeline);
      REQUIRE(curves.stats.memory.size() == computed.size());
      for (std::size_t d = 0; d < computed.size(); ++d) {
        CHECK(curves.stats.memory[d].steps == computed[d].steps);
        CHECK(curves.stats.devices[d].peak_memory == peaks.stats.devices[d].peak_memory);
        CHECK(curves.stats.devices[d].peak_memory_time == peaks.stats.devices[d].peak_memory_time);
        CHECK(computed[d].peak == peaks.stats.devices[d].peak_memory);
      }
      std::vector<LevelCurve> storage;
      CHECK(&memory_curves(curves, storage) == &curves.stats.memory);
      CHECK(memory_curves(peaks, storage).size() == computed.size());
    }
  }
}
