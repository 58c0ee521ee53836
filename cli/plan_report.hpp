#pragma once
// What `stepsim plan` shows: the book's design table (one column per case), the room each plan
// has, the levers for plans that do not fit or miss, the checkpoint, scaling and scale-out
// questions, and sweeps; as text for people and JSON / CSV for scripts.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/scenario_plan.hpp"
#include "models/plan.hpp"
#include "models/plan_sweep.hpp"

namespace stepsim::cli {

using Json = nlohmann::ordered_json;

// Everything evaluated for a scenario's cases; levers only for cases that fail.
struct PlanEvaluation {
  std::vector<PlanResult> results;
  std::vector<std::optional<MemoryLevers>> memory_levers;
  std::vector<std::optional<DeadlineLevers>> deadline_levers;
};

PlanEvaluation evaluate_cases(const PlanSpec& spec, const StepCommSource& comm);

std::string plan_text(const std::string& title, const PlanScenario& ps, const PlanEvaluation* eval);
Json plan_json(const std::string& name, const PlanScenario& ps, const PlanEvaluation* eval);

std::string sweep_text(const std::vector<SweepAxis>& axes, const std::vector<SweepPoint>& points, const PlanSpec& spec);
std::string sweep_csv(const std::vector<SweepAxis>& axes, const std::vector<SweepPoint>& points);
Json sweep_json(const std::vector<SweepAxis>& axes, const std::vector<SweepPoint>& points);

}  // namespace stepsim::cli
