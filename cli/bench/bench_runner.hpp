#pragma once
// Running a suite's variants: each variant is one simulate_pipeline call, spread over worker
// threads. Results come back in the order the variants were given, whatever the threads' timing.
#include <cstddef>
#include <functional>
#include <vector>

#include "cli/bench/bench_results.hpp"
#include "cli/bench/bench_suite.hpp"

namespace stepsim::cli {

struct PreparedVariant {
  BenchVariant variant;
  PipelineSpec spec;
};

// One variant. A spec the schedule cannot take (SpecError) is Skipped with the reason; an order
// that cannot finish (deadlock, cycle) is Failed with the stuck ops named.
VariantResult simulate_variant(const BenchVariant& variant, const PipelineSpec& spec);

// Called after each finished variant with the number finished so far; calls are serialized.
using BenchProgress = std::function<void(std::size_t done, const VariantResult& result)>;

// Reads the variants `indices` of the suite (each: the base scenario, the --set overrides
// `sets`, then the variant's) on `jobs` threads, each distinct list of overrides once (variants
// that differ only in their time ratio share it). Throws the error of the lowest failing index,
// the same one a sequential read would throw first.
std::vector<PreparedVariant> prepare_variants(const BenchSuite& suite, const std::vector<std::size_t>& indices,
                                              const std::vector<std::string>& sets, unsigned jobs);

// Called on the worker right after variant i ran, not serialized (calls for different variants
// overlap): per-variant work, such as formatting its result, done while the others still run.
using BenchFinish = std::function<void(std::size_t i, const VariantResult& result)>;

// Runs every variant on `jobs` threads (at least 1).
std::vector<VariantResult> run_variants(const std::vector<PreparedVariant>& variants, unsigned jobs,
                                        const BenchProgress& progress = {}, const BenchFinish& finish = {});

}  // namespace stepsim::cli
