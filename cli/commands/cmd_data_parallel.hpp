#pragma once
// `stepsim run`, `compare` and `validate` for scenarios with a `data_parallel` section; the
// commands (cmd_pipeline.cpp) hand such scenarios here.
#include <string>

#include "cli/input/scenario.hpp"

namespace stepsim::cli {

// What `run` and `compare` write besides stdout, and what they print.
struct DataParallelOutputs {
  bool json = false;        // a JSON summary instead of the table
  std::string trace;        // Chrome trace file (`run` only); empty: none
  std::string html;         // HTML report file (cli/data_parallel_pictures.hpp); empty: none
  int gantt_width = 0;      // > 0: a text Gantt chart of this width instead of the table
};

// Simulates the section's base spec: a table, JSON or a text Gantt chart; optionally a Chrome
// trace file and an HTML report.
void run_data_parallel_scenario(const Scenario& sc, const DataParallelOutputs& out);
// The base spec and every variant, one row (or JSON object) each, or their Gantt charts on one
// time scale; optionally an HTML report of them all.
void compare_data_parallel_scenario(const Scenario& sc, const DataParallelOutputs& out);
// Checks that the base spec and every variant can run.
void validate_data_parallel_scenario(const Scenario& sc);

}  // namespace stepsim::cli
