#pragma once
// The workloads the speed benchmarks share: the pipeline of bench/suites/pipeline-base.yaml
// (the book's stage times, 1 ms links, 230 MiB activations, 1 MiB messages) at a given size.
#include <string>

#include "schedules/lowering/pipeline/pipeline_spec.hpp"

namespace stepsim::bench {

PipelineSpec pipeline_workload(const std::string& schedule, int stages, int microbatches);

}  // namespace stepsim::bench
