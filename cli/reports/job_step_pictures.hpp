#pragma once
// Pictures of a job step (schedules/lowering/job/job_step.hpp): the charts of cli/charts.hpp
// built from a JobStepRun (nothing runs again), the HTML page of `run --html` and the text
// Gantt chart of `run --gantt`.
//
//  * the timeline: per simulated device its compute stream (forward, backward, weight gradient,
//    overlapped F&B pairs, optimizer; idle time hatched: the bubble), then its minor tracks: the
//    in-pass collectives (each op drawn as its TP, CP and EP parts, in proportion to the chunk's
//    costs), the DP/ZeRO stream and its outgoing pipeline links. The ZeRO-3 path shows its card's
//    compute and the link its gathers and reduce-scatters run on. Every op of non-zero length is
//    one bar (an in-pass collective one bar per kind it holds);
//  * the memory of the most loaded GPU, stacked weights / gradients / optimizer / activations /
//    buffers, against the usable memory;
//  * the exposed communication by kind and the critical-path shares ("what limits the step").
#include <string>
#include <utility>
#include <vector>

#include "cli/reports/charts.hpp"
#include "schedules/lowering/job/job_step.hpp"

namespace stepsim::cli {

TimelineChart job_step_timeline(const JobStepRun& run);
BarChart job_step_memory_chart(const JobStepRun& run);

// `variants` (compare): the base and its variants as one table after the summary.
std::string job_step_html_report(const std::string& title, const std::string& description, const JobStepRun& run,
                                 const std::vector<std::pair<std::string, const JobStepRun*>>& variants = {});
std::string job_step_gantt_text(const std::string& name, const JobStepRun& run, int width);

}  // namespace stepsim::cli
