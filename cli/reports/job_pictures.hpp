#pragma once
// Pictures of whole-run simulations (`stepsim job FILE --html OUT.html`): the charts of
// cli/charts.hpp built from a JobAnalysis (nothing runs again) and the HTML page.
//
//  * the histogram of completion times over the Monte Carlo runs (make_histogram of
//    completion_times), the deadline and P50 / P90 / P99 marked on its axis;
//  * the mean overhead split into saving, redo and restore, for the scenario's checkpoint
//    interval and each interval it compares;
//  * for a job per plan case, the completion of each case against the deadline.
#include <string>
#include <vector>

#include "cli/reports/charts.hpp"
#include "cli/reports/job_report.hpp"

namespace stepsim::cli {

BarChart job_completion_histogram(const JobAnalysis& a, int bins);
BarChart job_overhead_chart(const JobAnalysis& a);

// Completion per plan case against the deadline: the mean, P99 in the note, a case that does not
// meet the deadline (in at least 90% of the runs) outlined.
BarChart job_cases_chart(const std::vector<const JobAnalysis*>& analyses, const std::vector<std::string>& cases);

// One page for one analysis, or for one per plan case (`cases` names them; the summary table and
// job_cases_chart come first, then each case).
std::string job_html_report(const std::string& title, const std::string& description,
                            const std::vector<const JobAnalysis*>& analyses,
                            const std::vector<std::string>& cases = {});

}  // namespace stepsim::cli
