#pragma once
// What `stepsim plan` shows: the book's design table (one column per case), the room each plan
// has, the levers for plans that do not fit or miss, the checkpoint, scaling and scale-out
// questions, and sweeps; as text for people and JSON / CSV for scripts.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/input/scenario_plan.hpp"
#include "cli/reports/table.hpp"
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

// The report's pieces, in order; plan_text prints them and the HTML report (cli/plan_pictures.hpp)
// shows them.
struct PlanReportParts {
  std::vector<std::string> about;        // what is planned: model, hardware, task, communication
  std::optional<CaptionedTable> design;  // the book's design table, one column per case
  std::vector<std::string> verdicts;     // one line per case
  std::vector<std::string> levers;       // what would fix the cases that fail
  std::vector<CaptionedTable> details;   // memory at the peak, room, checkpoint comparison, scaling, stragglers
  std::optional<CaptionedTable> scale_out;
  std::vector<CaptionedTable> tensors;  // plan.reshard, plan.kv_cache (cli/plan_tensor_report.hpp)
};
PlanReportParts plan_report_parts(const PlanScenario& ps, const PlanEvaluation* eval);

std::string plan_text(const std::string& title, const PlanScenario& ps, const PlanEvaluation* eval);
Json plan_json(const std::string& name, const PlanScenario& ps, const PlanEvaluation* eval);

// "meets", "misses", "does not fit" or "fits" (memory-only plans).
std::string plan_verdict(const PlanResult& r);
// Bytes as the report writes them: GiB (MiB, B below) for cards with gigabytes, exact bytes for
// small devices (the resource-bill chapter counts bytes).
std::string plan_memory_figure(Bytes b, Bytes usable);

// A sweep's table: a matrix of sweep_mark() for two axes, else one row per combination.
CaptionedTable sweep_table(const std::vector<SweepAxis>& axes, const std::vector<SweepPoint>& points,
                           const PlanSpec& spec);
// "24.6 ok", "34.3 late", "no fit" (or "fits" for memory-only plans).
std::string sweep_mark(const PlanResult& r);
// "18 of 35 combinations fit in memory and meet the deadline".
std::string sweep_summary(const std::vector<SweepPoint>& points, const PlanSpec& spec);
std::string sweep_text(const std::vector<SweepAxis>& axes, const std::vector<SweepPoint>& points, const PlanSpec& spec);
std::string sweep_csv(const std::vector<SweepAxis>& axes, const std::vector<SweepPoint>& points);
Json sweep_json(const std::vector<SweepAxis>& axes, const std::vector<SweepPoint>& points);

}  // namespace stepsim::cli
