#pragma once
// From a training task to a completion date (sections 10.1 and 10.6):
//   steps = ceil(tokens / tokens per step)
//   per-step budget = (deadline - reserved) / (steps x (1 + L))
//   completion T = reserved + steps x ts x (1 + L)
// where ts is the step time and L the checkpoint save / redo / restore overhead.
#include <cstdint>

#include "sim/time.hpp"

namespace stepsim {

std::int64_t steps_for(std::int64_t tokens, std::int64_t tokens_per_step);

// Training time without overheads: steps x ts (integer nanoseconds, no float accumulation).
Time base_training_time(std::int64_t steps, Time step);

// steps x ts x (1 + overhead), rounded once.
Time training_time(std::int64_t steps, Time step, double overhead);

Time completion_time(Time reserved, std::int64_t steps, Time step, double overhead);

// The longest step that still completes by `deadline`.
Time step_budget(Time deadline, Time reserved, std::int64_t steps, double overhead);

}  // namespace stepsim
