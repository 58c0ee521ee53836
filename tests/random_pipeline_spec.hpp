#pragma once
// A pipeline spec for a schedule with random per-stage durations and sizes, for property tests
// over every schedule (tests/lowering/test_schedule_properties.cpp, tests/test_trace.cpp).
#include <cstdint>
#include <random>
#include <string>

#include "schedules/lowering/pipeline/pipeline_spec.hpp"

namespace stepsim::test {

inline std::int64_t pick(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
}

inline PipelineSpec spec_with(std::mt19937_64& rng, const std::string& schedule, int p, int m, int v) {
  PipelineSpec s;
  s.stages = p;
  s.microbatches = m;
  s.virtual_stages = v;
  s.schedule = schedule;
  for (int d = 0; d < p; ++d) {
    s.forward.push_back(pick(rng, 1, 40) * kMicrosecond);
    s.backward_input.push_back(pick(rng, 1, 40) * kMicrosecond);
    s.backward_weight.push_back(pick(rng, 1, 40) * kMicrosecond);
    s.backward.push_back(s.backward_input.back() + s.backward_weight.back());
    s.update.push_back(pick(rng, 0, 3) * kMicrosecond);
    s.activation.push_back(pick(rng, 1, 1000));
  }
  s.latency = pick(rng, 0, 4) * kMicrosecond;
  s.message = 7;
  if (rng() % 2) s.wrap_latency = 0;
  return s;
}

}  // namespace stepsim::test
