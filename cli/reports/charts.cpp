#include "cli/reports/charts.hpp"

#include <cmath>

namespace stepsim::cli {

double nice_step(double span, int max_ticks) {
  if (!(span > 0) || max_ticks < 1) return 1.0;
  const double raw = span / max_ticks;
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * decade >= raw) return m * decade;
  return 10.0 * decade;
}

}  // namespace stepsim::cli
