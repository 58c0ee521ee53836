// Layout search speed (issue: "SC21 175B on 1,024 A100 over every TP x PP x DP x v x micro-batch
// x recompute x schedule combination that divides it, the whole search in under 10 s on 2
// cores"): scenarios/search-gpt3-1024xa100.yaml, enumeration + pruning + simulation + ranking,
// with 1 and 2 threads. Figures in docs/search.md. Run from the repository root.
#include <filesystem>

#include <benchmark/benchmark.h>

#include "cli/input/search_input.hpp"

namespace stepsim::bench {
namespace {

constexpr const char* kSearch = "scenarios/search-gpt3-1024xa100.yaml";

void BM_SearchGpt3On1024A100(benchmark::State& state) {
  if (!std::filesystem::exists(kSearch)) {
    state.SkipWithError("scenarios/search-gpt3-1024xa100.yaml not found: run stepsim_bench from the repository root");
    return;
  }
  const cli::SearchScenario sc = cli::load_search(kSearch);
  SearchOptions opt;
  opt.jobs = static_cast<int>(state.range(0));
  SearchCounts counts;
  for (auto _ : state) {
    const SearchResult r = run_search(sc.spec, opt);
    counts = r.counts;
    benchmark::DoNotOptimize(r.top.data());
  }
  state.counters["considered"] = static_cast<double>(counts.considered);
  state.counters["simulated"] = static_cast<double>(counts.simulated);
  state.counters["pruned_bound"] = static_cast<double>(counts.bound);
}
BENCHMARK(BM_SearchGpt3On1024A100)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

}  // namespace
}  // namespace stepsim::bench
