#pragma once
// scenarios/book-pipeline.yaml as a PipelineSpec built in C++, for the tests of the simulation
// (they test the engine and the schedules, not reading YAML). tests/test_scenario_files.cpp
// checks that the file reads to exactly this spec.
#include <string>

#include "schedules/lowering/pipeline/pipeline_spec.hpp"

namespace stepsim::test {

// Qwen3-8B's 36 layers on `stages` pipeline stages (4 in the book): F 10 ms, B 20 ms (I and W
// 10 ms each), update 1 ms, every hop 1 ms, one boundary message of 1 MiB (128 tokens x 4096
// hidden x 2 bytes). Resident activations per micro-batch: the book's 230 MiB per stage with the
// LM head's on the last (306 MiB) for 4 stages; on another stage count 1 MiB per stage.
inline PipelineSpec book_pipeline(const std::string& schedule, int microbatches = 8, int stages = 4) {
  constexpr Bytes MiB = 1024 * 1024;
  PipelineSpec s;
  s.stages = stages;
  s.microbatches = microbatches;
  s.schedule = schedule;
  s.layers = 36;
  s.forward.assign(stages, 10 * kMillisecond);
  s.backward.assign(stages, 20 * kMillisecond);
  s.backward_input.assign(stages, 10 * kMillisecond);
  s.backward_weight.assign(stages, 10 * kMillisecond);
  s.update.assign(stages, 1 * kMillisecond);
  s.latency = 1 * kMillisecond;
  s.activation =
      stages == 4 ? std::vector<Bytes>{230 * MiB, 230 * MiB, 230 * MiB, 306 * MiB} : std::vector<Bytes>(stages, MiB);
  s.message = MiB;
  return s;
}

}  // namespace stepsim::test
