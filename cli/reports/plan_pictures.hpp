#pragma once
// Pictures of the planner (`stepsim plan FILE --html OUT.html`): the charts of cli/charts.hpp
// built from evaluated plan cases or a sweep (nothing is evaluated again), and the HTML pages.
//
//  * memory per card per case, stacked as the peak is made of it (weights, gradients, master and
//    moments, activations, buffers, then the planning margin), against the usable memory; a case
//    over it is outlined;
//  * completion per case (reserved days, training, checkpoint overhead) against the deadline;
//  * for sweeps, a heat map of the verdicts (ok / late / no fit) over the swept values.
#include <string>
#include <vector>

#include "cli/reports/charts.hpp"
#include "cli/reports/plan_report.hpp"

namespace stepsim::cli {

BarChart plan_memory_chart(const PlanSpec& spec, const PlanEvaluation& eval);
// Timed plans only (spec.timed()).
BarChart plan_deadline_chart(const PlanSpec& spec, const PlanEvaluation& eval);

std::string plan_html_report(const std::string& title, const std::string& description, const PlanScenario& ps,
                             const PlanEvaluation* eval);

// One grid per combination of the values of the axes after the first two (one grid for one or
// two axes): the first axis down, the second across.
struct SweepGrid {
  std::string heading;  // the values of the further axes, e.g. "margin = 0.25"; empty for one grid
  GridChart chart;
};
std::vector<SweepGrid> sweep_grids(const std::vector<SweepAxis>& axes, const std::vector<SweepPoint>& points,
                                   const PlanSpec& spec);

std::string sweep_html_report(const std::string& title, const std::string& description, const std::string& base_case,
                              const std::vector<SweepAxis>& axes, const std::vector<SweepPoint>& points,
                              const PlanSpec& spec);

}  // namespace stepsim::cli
