// Engine throughput on the book's ZeRO-3 design case (scenarios/zero3-design-48.yaml: Qwen3-8B
// on 48 RTX 4090 cards, 8 micro-batches per card): the data-parallel lowering's graph (compute,
// AllGather / ReduceScatter collectives on link lanes, input waits), run by the engine alone.
// Reads the scenario relative to the working directory: run from the repository root.
#include <filesystem>

#include <benchmark/benchmark.h>

#include "cli/input/scenario.hpp"
#include "schedules/lowering/data_parallel/data_parallel.hpp"

namespace stepsim::bench {
namespace {

constexpr const char* kScenario = "scenarios/zero3-design-48.yaml";

void BM_EngineZero3DesignCase(benchmark::State& state) {
  if (!std::filesystem::exists(kScenario)) {
    state.SkipWithError("scenarios/zero3-design-48.yaml not found: run stepsim_bench from the repository root");
    return;
  }
  const cli::Scenario sc = cli::load_scenario(kScenario);
  const auto program = lower_data_parallel(plan_data_parallel(sc.data_parallel->spec));
  program->graph.finalize();
  for (auto _ : state) {
    Timeline t = run(program->graph);
    benchmark::DoNotOptimize(t.makespan);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * program->graph.op_count()));
  state.counters["ops"] = static_cast<double>(program->graph.op_count());
}
BENCHMARK(BM_EngineZero3DesignCase)->Unit(benchmark::kMicrosecond);

// The whole simulation of the design case, as `stepsim run` does it after loading.
void BM_SimulateZero3DesignCase(benchmark::State& state) {
  if (!std::filesystem::exists(kScenario)) {
    state.SkipWithError("scenarios/zero3-design-48.yaml not found: run stepsim_bench from the repository root");
    return;
  }
  const cli::Scenario sc = cli::load_scenario(kScenario);
  std::size_t ops = 0;
  for (auto _ : state) {
    DataParallelRun r = run_data_parallel(sc.data_parallel->spec);
    ops = r.program->graph.op_count();
    benchmark::DoNotOptimize(r.result.step_time);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * ops));
  state.counters["ops"] = static_cast<double>(ops);
}
BENCHMARK(BM_SimulateZero3DesignCase)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace stepsim::bench
