// Planner sweeps on 1 and 2 threads (issue 16: "`stepsim bench` and sweeps: scale with cores"):
// scenarios/design-case.yaml over cards 8..256 step 8 x efficiency 20..60 % x 4 checkpoint
// intervals, 5,248 combinations, each step's communication from the data-parallel simulation
// (once per step shape: 1,312 of them). The same grid as tests/plan_cli.sh. Figures in
// docs/performance.md. Run from the repository root.
#include <filesystem>

#include <benchmark/benchmark.h>

#include "cli/input/plan_source.hpp"
#include "cli/input/scenario.hpp"
#include "models/plan_sweep.hpp"

namespace stepsim::bench {
namespace {

constexpr const char* kScenario = "scenarios/design-case.yaml";

std::vector<SweepAxis> grid() {
  SweepAxis cards{*find_sweep_key("cards"), {}}, eff{*find_sweep_key("efficiency"), {}},
      interval{*find_sweep_key("interval"), {}};
  for (int c = 8; c <= 256; c += 8) cards.values.push_back({c, 0, std::to_string(c)});
  for (int e = 20; e <= 60; ++e) eff.values.push_back({0, e / 100.0, std::to_string(e) + "%"});
  for (std::int64_t minutes : {30, 60, 120, 240})
    interval.values.push_back({minutes * 60 * kSecond, 0, std::to_string(minutes) + "min"});
  return {cards, eff, interval};
}

void BM_PlanSweep(benchmark::State& state) {
  if (!std::filesystem::exists(kScenario)) {
    state.SkipWithError("scenarios/design-case.yaml not found: run stepsim_bench from the repository root");
    return;
  }
  const cli::Scenario sc = cli::load_scenario(kScenario);
  const PlanSpec& spec = *sc.plan->spec;
  const StepCommSource comm = cli::plan_step_comm(sc);
  const std::vector<SweepAxis> axes = grid();
  std::size_t points = 0;
  for (auto _ : state) {
    const auto out = sweep_plan(spec, spec.cases.front(), axes, comm, {}, static_cast<unsigned>(state.range(0)));
    points = out.size();
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["combinations"] = static_cast<double>(points);
}
BENCHMARK(BM_PlanSweep)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace stepsim::bench
