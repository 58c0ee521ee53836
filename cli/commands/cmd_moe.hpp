#pragma once
// `stepsim run`, `compare` and `validate` for scenarios with a `moe` section; the commands
// (cmd_pipeline.cpp) hand such scenarios here.
#include <string>

#include "cli/input/scenario.hpp"

namespace stepsim::cli {

// The base layer: its routing, a row per card and the phases (or JSON); optionally a trace file.
void run_moe_scenario(const Scenario& sc, bool json, const std::string& trace_file);
// The base layer and every variant, one row (or JSON object) each.
void compare_moe_scenario(const Scenario& sc, bool json);
// Checks that the base layer and every variant can run.
void validate_moe_scenario(const Scenario& sc);

}  // namespace stepsim::cli
