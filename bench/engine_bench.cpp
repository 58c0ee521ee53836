// The simulator's own speed on one core: engine throughput (simulated ops per second), the
// lowering and measuring around it, and peak heap bytes per op. Workload: 1F1B at p = 64 stages,
// m = 4,096 micro-batches -- 524,352 compute ops and 516,096 link transfers (1,040,448 ops).
#include <benchmark/benchmark.h>

#include "bench/heap_meter.hpp"
#include "bench/workloads.hpp"

namespace stepsim::bench {
namespace {

constexpr int kStages = 64, kMicro = 4096;

struct Lowered {
  PipelinePlan plan;
  std::unique_ptr<PipelineProgram> program;
};

Lowered lowered(const std::string& schedule, int p, int m) {
  const PipelineSpec spec = pipeline_workload(schedule, p, m);
  Lowered l;
  l.plan = plan_for(spec);
  l.program = lower(l.plan, costs_for(spec, l.plan));
  l.program->graph.finalize();
  return l;
}

void set_ops(benchmark::State& state, std::size_t ops) {
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * ops));
  state.counters["ops"] = static_cast<double>(ops);
}

// The engine alone: run(graph) on a lowered, finalized graph.
void BM_Engine(benchmark::State& state, const char* schedule) {
  Lowered l = lowered(schedule, static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  for (auto _ : state) {
    Timeline t = run(l.program->graph);
    benchmark::DoNotOptimize(t.makespan);
  }
  set_ops(state, l.program->graph.op_count());
}
BENCHMARK_CAPTURE(BM_Engine, 1f1b, "1f1b")
    ->Args({kStages, kMicro})
    ->Args({64, 256})
    ->Args({8, 256})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Engine, zb_h1, "zb-h1")->Args({kStages, kMicro})->Unit(benchmark::kMillisecond);

// Schedule + lowering: action lists to an OpGraph and the ops that bound each activation hold
// (finalize included).
void BM_Lower(benchmark::State& state) {
  std::size_t ops = 0;
  for (auto _ : state) {
    Lowered l = lowered("1f1b", kStages, kMicro);
    ops = l.program->graph.op_count();
    benchmark::DoNotOptimize(l.program.get());
  }
  set_ops(state, ops);
}
BENCHMARK(BM_Lower)->Unit(benchmark::kMillisecond);

// Stats from a timeline: busy times and each device's memory and resident levels, merged from
// time-ordered runs of changes (peaks only: the curves are made on demand).
void BM_Measure(benchmark::State& state) {
  Lowered l = lowered("1f1b", kStages, kMicro);
  const Timeline t = run(l.program->graph);
  for (auto _ : state) {
    PipelineStats st = measure(l.plan, *l.program, t);
    benchmark::DoNotOptimize(st.step_time);
  }
  set_ops(state, l.program->graph.op_count());
}
BENCHMARK(BM_Measure)->Unit(benchmark::kMillisecond);

// What `stepsim run` does after reading the scenario: plan, lower, run, measure.
void BM_Simulate(benchmark::State& state) {
  const PipelineSpec spec = pipeline_workload("1f1b", kStages, kMicro);
  std::size_t ops = 0;
  for (auto _ : state) {
    PipelineRun r = simulate_pipeline(spec);
    ops = r.program->graph.op_count();
    benchmark::DoNotOptimize(r.stats.step_time);
  }
  set_ops(state, ops);
}
BENCHMARK(BM_Simulate)->Unit(benchmark::kMillisecond);

// Peak heap bytes per op: the highest live heap during simulate_pipeline (graph, timeline,
// engine queues, the level sweep and stats all at once), over the op count. Also the share of
// each phase.
void BM_PeakMemoryPerOp(benchmark::State& state) {
  const PipelineSpec spec = pipeline_workload("1f1b", kStages, kMicro);
  double total = 0, lower_peak = 0, engine_peak = 0, measure_peak = 0, kept = 0;
  std::size_t ops = 0;
  for (auto _ : state) {
    const std::size_t base = heap_live();
    heap_reset_peak();
    PipelineRun r = simulate_pipeline(spec);
    total = static_cast<double>(heap_peak() - base);
    kept = static_cast<double>(heap_live() - base);
    ops = r.program->graph.op_count();

    state.PauseTiming();
    PipelineSpec s2 = spec;
    std::size_t b = heap_live();
    heap_reset_peak();
    Lowered l = lowered("1f1b", kStages, kMicro);
    lower_peak = static_cast<double>(heap_peak() - b);
    b = heap_live();
    heap_reset_peak();
    Timeline t = run(l.program->graph);
    engine_peak = static_cast<double>(heap_peak() - b);
    b = heap_live();
    heap_reset_peak();
    PipelineStats st = measure(l.plan, *l.program, t);
    measure_peak = static_cast<double>(heap_peak() - b);
    state.ResumeTiming();
  }
  const double n = static_cast<double>(ops);
  state.counters["peak_B_per_op"] = total / n;
  state.counters["result_B_per_op"] = kept / n;
  state.counters["lower_B_per_op"] = lower_peak / n;
  state.counters["engine_B_per_op"] = engine_peak / n;
  state.counters["measure_B_per_op"] = measure_peak / n;
  state.counters["ops"] = n;
}
BENCHMARK(BM_PeakMemoryPerOp)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace stepsim::bench
