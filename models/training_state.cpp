#include "models/training_state.hpp"

namespace stepsim {

namespace {
Bytes share(std::int64_t params, int bytes_per_param, bool sharded, int group) {
  const std::int64_t held = sharded ? (params + group - 1) / group : params;
  return held * bytes_per_param;
}
}  // namespace

ResidentState resident_state(std::int64_t params, const StateFormat& format, int zero_stage, int group) {
  ResidentState s;
  s.optimizer = share(params, format.optimizer(), zero_stage >= 1, group);
  s.gradients = share(params, format.gradients, zero_stage >= 2, group);
  s.weights = share(params, format.weights, zero_stage >= 3, group);
  return s;
}

Bytes training_state_bytes(std::int64_t params, const StateFormat& format) { return params * format.total(); }

Bytes recoverable_state_bytes(std::int64_t params, const StateFormat& format) { return params * format.recoverable(); }

}  // namespace stepsim
