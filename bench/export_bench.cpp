// Trace export speed: pipeline_trace (cli/reports/pipeline_report.hpp) turning a finished run into
// Chrome Trace Event JSON, in MB (10^6 bytes) of JSON per second.
#include <benchmark/benchmark.h>

#include "bench/workloads.hpp"
#include "cli/reports/pipeline_report.hpp"

namespace stepsim::bench {
namespace {

void BM_TraceExport(benchmark::State& state) {
  const PipelineRun r = simulate_pipeline(
      pipeline_workload("1f1b", static_cast<int>(state.range(0)), static_cast<int>(state.range(1))));
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string json = cli::pipeline_trace(r);
    bytes = json.size();
    benchmark::DoNotOptimize(json.data());
  }
  state.counters["MB_per_s"] =
      benchmark::Counter(static_cast<double>(bytes) * static_cast<double>(state.iterations()) / 1e6,
                         benchmark::Counter::kIsRate);
  state.counters["MB"] = static_cast<double>(bytes) / 1e6;
  state.counters["ops"] = static_cast<double>(r.program->graph.op_count());
}
BENCHMARK(BM_TraceExport)->Args({16, 1024})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace stepsim::bench
