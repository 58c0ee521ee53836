#pragma once
// Pictures of whole-run simulations (`stepsim job FILE --html OUT.html`): the charts of
// cli/charts.hpp built from a JobAnalysis (nothing runs again) and the HTML page.
//
//  * the histogram of completion times over the Monte Carlo runs (make_histogram of
//    completion_times), the deadline and P50 / P90 / P99 marked on its axis;
//  * the mean overhead split into saving, redo and restore, for the scenario's checkpoint
//    interval and each interval it compares.
#include <string>

#include "cli/charts.hpp"
#include "cli/job_report.hpp"

namespace stepsim::cli {

BarChart job_completion_histogram(const JobAnalysis& a, int bins);
BarChart job_overhead_chart(const JobAnalysis& a);

std::string job_html_report(const JobAnalysis& a, const std::string& description);

}  // namespace stepsim::cli
