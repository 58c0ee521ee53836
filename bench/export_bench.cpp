// Trace export speed: turning a finished run into a trace, in MB (10^6 bytes) per second -- Chrome
// JSON in memory (chrome_trace_text), and streamed to a file through its 1 MiB buffer as Chrome
// JSON and as Perfetto protobuf (write_trace_file, what `stepsim run --trace FILE.json` /
// `FILE.pftrace` does; the file goes to $TMPDIR).
#include <cstdio>
#include <filesystem>

#include <benchmark/benchmark.h>

#include "bench/workloads.hpp"
#include "cli/reports/pipeline_report.hpp"

namespace stepsim::bench {
namespace {

void rate(benchmark::State& state, std::size_t bytes, std::size_t ops) {
  state.counters["MB_per_s"] = benchmark::Counter(
      static_cast<double>(bytes) * static_cast<double>(state.iterations()) / 1e6, benchmark::Counter::kIsRate);
  state.counters["MB"] = static_cast<double>(bytes) / 1e6;
  state.counters["ops"] = static_cast<double>(ops);
}

void BM_TraceExport(benchmark::State& state) {
  const PipelineRun r =
      simulate_pipeline(pipeline_workload("1f1b", static_cast<int>(state.range(0)), static_cast<int>(state.range(1))));
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string json = cli::chrome_trace_text(cli::pipeline_trace, r);
    bytes = json.size();
    benchmark::DoNotOptimize(json.data());
  }
  rate(state, bytes, r.program->graph.op_count());
}
BENCHMARK(BM_TraceExport)->Args({16, 1024})->Unit(benchmark::kMillisecond);

void trace_to_file(benchmark::State& state, const char* name) {
  const PipelineRun r =
      simulate_pipeline(pipeline_workload("1f1b", static_cast<int>(state.range(0)), static_cast<int>(state.range(1))));
  const auto path = (std::filesystem::temp_directory_path() / name).string();
  for (auto _ : state) cli::write_trace_file(path, cli::pipeline_trace, r);
  rate(state, static_cast<std::size_t>(std::filesystem::file_size(path)), r.program->graph.op_count());
  std::filesystem::remove(path);
}
void BM_TraceToFile(benchmark::State& state) { trace_to_file(state, "stepsim_bench_trace.json"); }
BENCHMARK(BM_TraceToFile)->Args({64, 1024})->Unit(benchmark::kMillisecond)->UseRealTime();
void BM_PerfettoTraceToFile(benchmark::State& state) { trace_to_file(state, "stepsim_bench_trace.pftrace"); }
BENCHMARK(BM_PerfettoTraceToFile)->Args({64, 1024})->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace stepsim::bench
