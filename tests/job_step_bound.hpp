#pragma once
// A job step's compute bound, for tests: no pipeline device finishes before its own work.
#include <algorithm>

#include "schedules/lowering/job/job_step.hpp"

namespace stepsim::test {

// The busiest device's compute alone: m x (F + B + W) of the chunks it holds (DualPipe's two
// copies share each stage's micro-batches), plus its optimizer.
inline Time device_compute_bound(const JobStepRun& run) {
  Time best = 0;
  for (std::size_t d = 0; d < run.comm.device_chunks.size(); ++d) {
    Time t = run.comm.optimizer[d];
    for (int k : run.comm.device_chunks[d]) {
      const StageCost& c = run.comm.stages[static_cast<std::size_t>(k)];
      t +=
          run.result.microbatches * (c.forward + c.backward_input + c.backward_weight) / run.spec.layout.stage_copies();
    }
    best = std::max(best, t);
  }
  return best;
}

}  // namespace stepsim::test
