#pragma once
// `stepsim run/validate` for `job_step:` scenarios, and the `check-against` and `calibrate`
// commands over measured runs (validation/*.csv).
#include <string>

#include <CLI/CLI.hpp>

namespace stepsim::cli {

struct Scenario;
void run_job_step_scenario(const Scenario& sc, bool json, const std::string& trace_file);
void validate_job_step_scenario(const Scenario& sc);
void add_check_against_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);

}  // namespace stepsim::cli
