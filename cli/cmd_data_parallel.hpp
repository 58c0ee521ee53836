#pragma once
// `stepsim run`, `compare` and `validate` for scenarios with a `data_parallel` section; the
// commands (cmd_pipeline.cpp) hand such scenarios here.
#include <string>

#include "cli/scenario.hpp"

namespace stepsim::cli {

// Simulates the section's base spec: a table, or JSON; optionally a Chrome trace file.
void run_data_parallel_scenario(const Scenario& sc, bool json, const std::string& trace_file);
// The base spec and every variant, one row (or JSON object) each.
void compare_data_parallel_scenario(const Scenario& sc, bool json);
// Checks that the base spec and every variant can run.
void validate_data_parallel_scenario(const Scenario& sc);

}  // namespace stepsim::cli
