#pragma once
// The `plan:` section of a scenario: the capacity and deadline planner's inputs (see
// models/plan.hpp) and the scaling questions asked alongside them.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/input.hpp"
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

struct PlanScenario {
  std::optional<PlanSpec> spec;  // present when the section has `cases`
  // `step.exposed_comm` was given. Without it, a scenario with a `data_parallel` section gets its
  // step communication from simulating that section (see cmd_plan.cpp).
  bool exposed_comm_given = false;
  CheckpointComparison checkpoints;
  ScalingQuestions scaling;
  std::optional<ScaleOut> scale_out;
};

PlanScenario read_plan(const Reader& r, const std::shared_ptr<const Source>& src);

}  // namespace stepsim::cli
