#include "bench/workloads.hpp"

namespace stepsim::bench {

PipelineSpec pipeline_workload(const std::string& schedule, int stages, int microbatches) {
  PipelineSpec s;
  s.stages = stages;
  s.microbatches = microbatches;
  s.schedule = schedule;
  const auto per_stage = [&](Time t) { return std::vector<Time>(static_cast<std::size_t>(stages), t); };
  s.forward = per_stage(10 * kMillisecond);
  s.backward = per_stage(20 * kMillisecond);
  s.backward_input = per_stage(10 * kMillisecond);
  s.backward_weight = per_stage(10 * kMillisecond);
  s.update = per_stage(1 * kMillisecond);
  s.activation.assign(static_cast<std::size_t>(stages), 230LL * 1024 * 1024);
  s.latency = 1 * kMillisecond;
  s.message = 1024 * 1024;
  return s;
}

}  // namespace stepsim::bench
