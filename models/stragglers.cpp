#include "models/stragglers.hpp"

#include <cmath>

#include "sim/checked.hpp"

namespace stepsim {

double expected_max_standard_normal(int n) {
  if (n <= 1) return 0.0;
  // Composite Simpson's rule on [-10, 10]: the integrand is negligible outside for n <= 10^6.
  constexpr int kIntervals = 20000;
  constexpr double a = -10.0, b = 10.0;
  const double h = (b - a) / kIntervals;
  const double inv_sqrt_2pi = 1.0 / std::sqrt(2.0 * M_PI);
  auto f = [&](double x) {
    const double phi = inv_sqrt_2pi * std::exp(-0.5 * x * x);
    const double Phi = 0.5 * std::erfc(-x / std::sqrt(2.0));
    return x * n * phi * std::pow(Phi, n - 1);
  };
  double sum = f(a) + f(b);
  for (int i = 1; i < kIntervals; ++i) sum += f(a + i * h) * (i % 2 ? 4.0 : 2.0);
  return sum * h / 3.0;
}

Time expected_slowest(Time mean, Time sigma, int n) {
  return time_add(mean,
                  time_from_ns(expected_max_standard_normal(n) * static_cast<double>(sigma), "the straggler delay"),
                  "the slowest card's time");
}

}  // namespace stepsim
