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

// Runs every variant on `jobs` threads (at least 1).
std::vector<VariantResult> run_variants(const std::vector<PreparedVariant>& variants, unsigned jobs,
                                        const BenchProgress& progress = {});

}  // namespace stepsim::cli
