#pragma once
// The `plan:` section of a scenario: the capacity and deadline planner's inputs (see
// models/plan.hpp) and the scaling questions asked alongside them.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/input/input.hpp"
#include "models/plan.hpp"

namespace stepsim::cli {

// `plan.checkpoint.compare`: overhead at these card counts and intervals (section 10.4.4).
struct CheckpointComparison {
  std::vector<int> cards;
  std::vector<Time> intervals;
};

// `plan.scaling`: critical batch, weak vs strong scaling, stragglers (sections 10.4.5, 10.6).
struct ScalingQuestions {
  std::optional<double> batch_noise;  // B_noise in tokens
  std::vector<int> cards;             // weak and strong scaling points
  std::vector<int> stragglers;        // N for E[max of N normals]
};

// `plan.scale_out`: 6ND on big clusters (figure 10-46).
struct ScaleOut {
  double parameters = 0;
  double tokens = 0;
  std::int64_t cards = 0;
  std::vector<double> mfu;
  std::vector<std::string> accelerators;
  std::optional<Time> within;
};

// `plan.reshard`: one row-split matrix of a checkpoint loaded at another tensor-parallel degree
// (figure 10-31; models/resharding.hpp).
struct ReshardQuestion {
  std::string tensor;
  std::int64_t rows = 0, cols = 0;
  int from = 1, to = 1;
  StateFormat format;  // its own state_bytes, else the plan's memory.state_bytes, else 2+2+4+4+4
};

// `plan.kv_cache`: one sequence's KV cache at these lengths (section 10.5; models/kv_cache.hpp).
struct KvCacheQuestion {
  TransformerConfig model;
  std::vector<std::int64_t> tokens;
  int bytes = 2;  // per element (BF16)
};

struct PlanScenario {
  std::optional<PlanSpec> spec;  // present when the section has `cases`
  // `step.exposed_comm` was given. Without it, a scenario with a `data_parallel` section gets its
  // step communication from simulating that section (see cmd_plan.cpp).
  bool exposed_comm_given = false;
  CheckpointComparison checkpoints;
  ScalingQuestions scaling;
  std::optional<ScaleOut> scale_out;
  std::optional<ReshardQuestion> reshard;
  std::optional<KvCacheQuestion> kv_cache;
};

PlanScenario read_plan(const Reader& r, const std::shared_ptr<const Source>& src);

}  // namespace stepsim::cli
