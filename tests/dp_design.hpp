#pragma once
// The book's ZeRO-3 design case as a DataParallelSpec (scenarios/zero3-design-*.yaml say the same
// in YAML; tests/test_scenario_files.cpp checks they simulate alike): Qwen3-8B, ZeRO-3 over
// RTX 4090s in 8-card hosts with eight 200 Gbit/s NICs, one 8,192-token sequence per
// micro-batch, 40% of peak, 20 us per collective start-up, prefetch 4, 0.5 s input wait per step.
#include "schedules/lowering/data_parallel/data_parallel_spec.hpp"

namespace stepsim::test {

inline DataParallelSpec zero3_design(int cards, int microbatches) {
  DataParallelSpec s;
  s.model = *find_transformer("qwen3-8b");
  s.accelerator = *find_accelerator("rtx4090");
  s.efficiency = 0.4;
  s.sequence_length = 8192;
  s.cards = cards;
  s.host = {8, 8, 25'000'000'000, false};
  s.alpha = 20 * kMicrosecond;
  s.zero_stage = 3;
  s.microbatches = microbatches;
  s.prefetch = 4;
  s.input_wait = 500 * kMillisecond;
  return s;
}

}  // namespace stepsim::test
