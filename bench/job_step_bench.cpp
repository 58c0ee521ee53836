// Job-step speed (issue: "symmetric layouts fold ranks, so that 12,288 GPUs simulate in under a
// second"; the shipped jobs "each run in under a second"): load + lower + run + critical path of
// the shipped job_step scenarios. Figures in docs/job.md. Run from the repository root.
#include <filesystem>
#include <string>

#include <benchmark/benchmark.h>

#include "cli/input/scenario.hpp"

namespace stepsim::bench {
namespace {

void BM_JobStep(benchmark::State& state, const std::string& file) {
  if (!std::filesystem::exists(file)) {
    state.SkipWithError("scenario not found: run stepsim_bench from the repository root");
    return;
  }
  std::int64_t ops = 0;
  for (auto _ : state) {
    const cli::Scenario sc = cli::load_scenario(file);
    const JobStepRun r = run_job_step(sc.job_step->spec);
    ops = r.result.ops;
    benchmark::DoNotOptimize(r.result.step_time);
  }
  state.counters["ops"] = static_cast<double>(ops);
}
BENCHMARK_CAPTURE(BM_JobStep, gpt3_1024xa100, std::string("scenarios/job-gpt3-1024xa100.yaml"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_JobStep, llama70b_64xh100, std::string("scenarios/job-llama70b-64xh100.yaml"))
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace stepsim::bench
