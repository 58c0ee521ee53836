#include "models/checkpoint.hpp"

#include <cmath>
#include <limits>

#include "sim/checked.hpp"

namespace stepsim {

double Interruptions::rate() const {
  double r = card_mtbf > 0 ? static_cast<double>(cards) / to_s(card_mtbf) : 0.0;
  if (rollback_every && *rollback_every > 0) r += 1.0 / to_s(*rollback_every);
  return r;
}

Time Interruptions::mean_time_between() const {
  const double r = rate();
  if (r <= 0) return std::numeric_limits<Time>::max();
  return time_from_ns(static_cast<double>(kSecond) / r, "the mean time between interruptions");
}

CheckpointOverhead checkpoint_overhead(const CheckpointCost& cost, Time interval, const Interruptions& job) {
  CheckpointOverhead o;
  if (interval > 0) o.save = to_s(cost.save) / to_s(interval);
  o.redo = (to_s(interval) / 2.0 + to_s(cost.restore)) * job.rate();
  return o;
}

Time optimal_checkpoint_interval(const CheckpointCost& cost, const Interruptions& job) {
  const double r = job.rate();
  if (r <= 0) return std::numeric_limits<Time>::max();
  return time_from_ns(std::sqrt(2.0 * to_s(cost.save) / r) * static_cast<double>(kSecond),
                      "the optimal checkpoint interval sqrt(2 x save x MTBF)");
}

double checkpoint_write_rate(Bytes bytes, Time interval) {
  return interval > 0 ? static_cast<double>(bytes) / to_s(interval) : 0.0;
}

}  // namespace stepsim
