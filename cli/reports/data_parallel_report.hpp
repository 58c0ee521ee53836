#pragma once
// What a data-parallel run looks like to people and scripts: tables, JSON summaries, Chrome
// traces. Everything is derived from the DataParallelRun; nothing re-runs.
#include <string>
#include <utility>
#include <vector>

#include "cli/reports/pipeline_report.hpp"  // Json
#include "cli/reports/table.hpp"
#include "schedules/lowering/data_parallel/data_parallel_spec.hpp"

namespace stepsim::cli {

Json data_parallel_summary_json(const DataParallelRun& run, const DataParallelSpec& spec, const std::string& variant);

std::string data_parallel_run_text(const DataParallelRun& run, const DataParallelSpec& spec);

// The pieces of the text, for other renderings (the HTML report): the lines over the table
// (mode, ranks, where collectives run, the step's parts, link time) and the busy time per
// resource.
std::vector<std::string> data_parallel_run_lines(const DataParallelRun& run, const DataParallelSpec& spec);
Table data_parallel_resource_table(const DataParallelRun& run);

// One row per (variant name, run).
std::string data_parallel_compare_text(const std::vector<std::pair<std::string, const DataParallelRun*>>& runs);
Table data_parallel_compare_table(const std::vector<std::pair<std::string, const DataParallelRun*>>& runs);

// The run's trace: a process per simulated card with compute, link and input tracks, and a
// process per host NIC when collectives run there.
void data_parallel_trace(TraceWriter& out, const DataParallelRun& run);

}  // namespace stepsim::cli
