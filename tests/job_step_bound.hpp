#pragma once
// A job step's compute bound, for tests: no pipeline device finishes before its own work.
#include <algorithm>

#include "schedules/lowering/job/job_step.hpp"

namespace stepsim::test {

// The busiest device's compute alone: m x (F + B) of the chunks it holds, B split into I + W where
// the schedule splits it (I without the contention of the TP collectives W would hide: less than
// a full B's share; DualPipe's two copies share each stage's micro-batches), plus its optimizer.
inline Time device_compute_bound(const JobStepRun& run) {
  Time best = 0;
  for (std::size_t d = 0; d < run.comm.device_chunks.size(); ++d) {
    Time t = run.comm.optimizer[d];
    for (int k : run.comm.device_chunks[d]) {
      const StageCost& c = run.comm.stages[static_cast<std::size_t>(k)];
      const Time backward = run.plan.split_backward ? c.backward_input + c.backward_weight : c.backward;
      t += run.result.microbatches * (c.forward + backward) / run.spec.layout.stage_copies();
    }
    best = std::max(best, t);
  }
  return best;
}

// The pipeline's mean device, from the chunk costs alone (not from how the lowering deals chunks
// to devices or builds its units): every micro-batch through every chunk once, the work shared
// by the pp devices. In seconds; no step is shorter.
inline double mean_compute_seconds(const JobStepSpec& s, std::int64_t microbatches) {
  double total = 0;
  for (const auto& c : chunk_costs(s.model, s.layout, s.cluster))
    total += c.forward.compute() + c.backward_input.compute() + c.backward_weight.compute();
  return total * static_cast<double>(microbatches) / s.layout.pp;
}

}  // namespace stepsim::test
