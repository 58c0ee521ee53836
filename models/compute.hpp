#pragma once
// Compute time of a training step: FLOPs over (cards x peak x efficiency) (section 10.1;
// efficiency as model FLOPs utilisation, Chowdhery et al. 2022 "PaLM", appendix B).
#include <cstdint>

#include "sim/time.hpp"

namespace stepsim {

// FLOPs of `count` items that each cost `flops_each`.
double flops_of(double flops_each, std::int64_t count);

// Seconds of compute for `flops` on `cards` at `peak` FLOP/s and `efficiency` (0..1], rounded to
// the nanosecond once.
Time compute_time(double flops, std::int64_t cards, double peak, double efficiency);

// The efficiency at which `flops` on `cards` take exactly `allowed`.
double efficiency_needed(double flops, std::int64_t cards, double peak, Time allowed);

}  // namespace stepsim
