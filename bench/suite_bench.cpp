// Wall time of a 1,000-variant regression suite (bench/suites/scale-1000.yaml): reading the
// suite, loading every variant's scenario, and simulating them on 1 and 2 worker threads.
// Reads the suite relative to the working directory: run from the repository root.
#include <filesystem>
#include <thread>

#include <benchmark/benchmark.h>

#include "cli/bench/bench_runner.hpp"

namespace stepsim::bench {
namespace {

constexpr const char* kSuite = "bench/suites/scale-1000.yaml";

void BM_Suite1000(benchmark::State& state) {
  if (!std::filesystem::exists(kSuite)) {
    state.SkipWithError("bench/suites/scale-1000.yaml not found: run stepsim_bench from the repository root");
    return;
  }
  const auto jobs = static_cast<unsigned>(state.range(0));
  std::size_t variants = 0;
  for (auto _ : state) {
    const cli::BenchSuite suite = cli::load_suite(kSuite);
    std::vector<cli::PreparedVariant> prepared;
    for (std::size_t i = 0; i < suite.variant_count(); ++i) {
      cli::BenchVariant v = cli::variant_at(suite, i);
      PipelineSpec spec = cli::variant_spec(suite, v);
      prepared.push_back({std::move(v), std::move(spec)});
    }
    const auto results = cli::run_variants(prepared, jobs);
    variants = results.size();
    benchmark::DoNotOptimize(results.data());
  }
  state.counters["variants"] = static_cast<double>(variants);
  state.counters["threads"] = jobs;
}
BENCHMARK(BM_Suite1000)->Arg(1)->Arg(2)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

}  // namespace
}  // namespace stepsim::bench
