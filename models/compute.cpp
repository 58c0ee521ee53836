#include "models/compute.hpp"

#include <cmath>
#include <limits>

#include "sim/checked.hpp"

namespace stepsim {

double flops_of(double flops_each, std::int64_t count) { return flops_each * static_cast<double>(count); }

Time compute_time(double flops, std::int64_t cards, double peak, double efficiency) {
  const double rate = static_cast<double>(cards) * peak * efficiency;
  if (rate <= 0) return std::numeric_limits<Time>::max();
  return time_from_ns(flops / rate * static_cast<double>(kSecond),
                      "the compute time (FLOPs / (cards x peak x efficiency))");
}

double efficiency_needed(double flops, std::int64_t cards, double peak, Time allowed) {
  if (allowed <= 0) return std::numeric_limits<double>::infinity();
  return flops / (static_cast<double>(cards) * peak * to_s(allowed));
}

}  // namespace stepsim
