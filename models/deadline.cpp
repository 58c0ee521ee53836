#include "models/deadline.hpp"

#include <cmath>

#include "sim/checked.hpp"

namespace stepsim {

std::int64_t steps_for(std::int64_t tokens, std::int64_t tokens_per_step) {
  if (tokens_per_step <= 0) return 0;
  return tokens / tokens_per_step + (tokens % tokens_per_step != 0);  // rounded up, without overflow near 2^63
}

Time base_training_time(std::int64_t steps, Time step) {
  return time_mul(step, steps, "the training time (steps x step time)");
}

Time training_time(std::int64_t steps, Time step, double overhead) {
  return time_from_ns(static_cast<double>(steps) * static_cast<double>(step) * (1.0 + overhead),
                      "the training time (steps x step time x (1 + checkpoint overhead))");
}

Time completion_time(Time reserved, std::int64_t steps, Time step, double overhead) {
  return time_add(reserved, training_time(steps, step, overhead), "the completion time (reserved + training time)");
}

Time step_budget(Time deadline, Time reserved, std::int64_t steps, double overhead) {
  if (steps <= 0) return 0;
  return time_from_ns(
      std::floor(static_cast<double>(deadline - reserved) / (static_cast<double>(steps) * (1.0 + overhead))),
      "the step budget");
}

}  // namespace stepsim
