#include "models/deadline.hpp"

#include <cmath>

namespace stepsim {

std::int64_t steps_for(std::int64_t tokens, std::int64_t tokens_per_step) {
  if (tokens_per_step <= 0) return 0;
  return (tokens + tokens_per_step - 1) / tokens_per_step;
}

Time base_training_time(std::int64_t steps, Time step) { return steps * step; }

Time training_time(std::int64_t steps, Time step, double overhead) {
  return static_cast<Time>(std::llround(static_cast<double>(steps) * static_cast<double>(step) * (1.0 + overhead)));
}

Time completion_time(Time reserved, std::int64_t steps, Time step, double overhead) {
  return reserved + training_time(steps, step, overhead);
}

Time step_budget(Time deadline, Time reserved, std::int64_t steps, double overhead) {
  if (steps <= 0) return 0;
  return static_cast<Time>(
      std::floor(static_cast<double>(deadline - reserved) / (static_cast<double>(steps) * (1.0 + overhead))));
}

}  // namespace stepsim
