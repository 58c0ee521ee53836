#pragma once
// Checks that a parallel layout divides the model and the cluster, and says what would fit.
#include <optional>
#include <string>

#include "models/layer_costs.hpp"

namespace stepsim {

struct LayoutProblem {
  std::string key;      // the layout key at fault, e.g. "pp", "tp", "dp"
  std::string message;  // what is wrong and what would fit
};

// `gpus`: the cluster's GPU count (0: take tp x pp x dp x cp). nullopt when the layout is sound.
std::optional<LayoutProblem> check_layout(const JobModel& m, const JobLayout& l, std::int64_t gpus);

}  // namespace stepsim
