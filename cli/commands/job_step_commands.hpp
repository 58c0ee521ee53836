#pragma once
// `stepsim run/validate` for `job_step:` scenarios, and the `check-against` and `calibrate`
// commands over measured runs (validation/*.csv).
#include <string>

#include <CLI/CLI.hpp>

namespace stepsim::cli {

void add_check_against_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);

}  // namespace stepsim::cli
