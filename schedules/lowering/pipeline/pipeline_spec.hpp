#pragma once
// PipelineSpec: a pipeline scenario as plain values (units already converted), and the one
// function that turns it into a simulated step: spec -> plan (schedule) -> program (lowering)
// -> timeline (engine) -> stats.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "schedules/lowering/pipeline/pipeline.hpp"
#include "schedules/lowering/spec_error.hpp"
#include "schedules/pipeline/registry.hpp"
#include "sim/engine.hpp"

namespace stepsim {

struct PipelineSpec {
  int stages = 0;  // physical pipeline stages = devices
  int microbatches = 0;
  int virtual_stages = 0;  // chunks per device for interleaved schedules; 0 = the schedule's default
  std::string schedule;    // a family name, or "custom" with `custom_actions`
  // Per device, for schedule "custom". Where each stage runs is read from the lists: the device
  // that holds most of a stage's actions, per micro-batch where they agree (mirrored routes).
  std::vector<std::vector<Action>> custom_actions;
  bool custom_split_backward = false;

  // Per physical stage (one value per device). A split schedule needs backward_input and
  // backward_weight; a full-backward schedule uses backward, or backward_input + backward_weight.
  std::vector<Time> forward, backward, backward_input, backward_weight, update;
  std::vector<Bytes> activation;
  // How a device's values are shared among the model chunks (virtual stages) it runs: each chunk
  // gets (its layers / the device's layers) of them. `layers` is the model's total, dealt to the
  // chunks as evenly as possible (earlier chunks get one more); `chunk_layers` gives each chunk's
  // count explicitly. Neither: a device's chunks share equally.
  std::optional<int> layers;
  std::vector<int> chunk_layers;
  std::optional<Time> overlap_fb;

  Time latency = 0;
  std::int64_t bandwidth = 0;
  Bytes message = 0;
  std::optional<Time> wrap_latency;  // hop between the last device and the first, both ways
  std::optional<Bytes> capacity;     // per-device memory for intermediates (feasibility)
};

struct PipelineRun {
  std::string schedule;  // canonical family name
  PipelinePlan plan;     // its action lists released by lower() (the program's compute streams hold the order)
  std::unique_ptr<PipelineProgram> program;
  Timeline timeline;
  PipelineStats stats;
};

// The plan a spec asks for (schedule built and checked). Throws SpecError.
PipelinePlan plan_for(const PipelineSpec& spec);
PipelineCosts costs_for(const PipelineSpec& spec, const PipelinePlan& plan);

// Simulates one step. Throws SpecError for a spec that cannot run, DeadlockError for an order
// that cannot finish, GraphError for an order that waits on itself.
PipelineRun simulate_pipeline(const PipelineSpec& spec, MemoryDetail memory = MemoryDetail::Peaks);

// The run's memory curves, per device: those measure kept (MemoryDetail::Curves), else computed
// into `storage` (pipeline_memory).
const std::vector<LevelCurve>& memory_curves(const PipelineRun& run, std::vector<LevelCurve>& storage);

}  // namespace stepsim
