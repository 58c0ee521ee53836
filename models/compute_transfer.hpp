#pragma once
// Iterations that compute and then send their result over one link (the resource-bill chapter:
// 1,000,000 B at 1e8 B/s is 10 ms; with 2 ms of compute that cannot overlap it, an iteration
// takes at least 12 ms). Run on the engine: a "compute" and a "link" resource, compute(i) before
// transfer(i); without overlap transfer(i) also comes before compute(i + 1), with overlap the next
// compute runs while the link sends, and the slower of the two sets the pace.
#include <cstdint>

#include "sim/time.hpp"

namespace stepsim {

struct ComputeTransferSpec {
  Time compute = 0;            // per iteration
  Bytes bytes = 0;             // sent after each iteration's compute
  std::int64_t bandwidth = 0;  // bytes per second; > 0
  bool overlap = false;        // may the next compute run during the transfer?
  int iterations = 1;
};

struct ComputeTransferResult {
  Time transfer = 0;  // bytes / bandwidth, rounded up to the ns
  Time makespan = 0;  // all iterations
  Time period = 0;    // between the last two iterations' ends (the makespan when there is one)
};

// Throws std::invalid_argument for a non-positive bandwidth or iteration count.
ComputeTransferResult simulate_compute_transfer(const ComputeTransferSpec& spec);

}  // namespace stepsim
