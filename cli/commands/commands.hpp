#pragma once
// The stepsim subcommands. Each adds itself to the CLI11 app; main() owns exit codes:
//   0 success, 1 internal error, 2 bad input (file:line: key: message),
//   3 a simulation that cannot finish (deadlock or cycle, with the stuck ops named),
//   4 a check failed (e.g. a benchmark regression).
#include <CLI/CLI.hpp>

namespace stepsim::cli {

void add_run_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_export_schedule_command(CLI::App& app);
void add_validate_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_job_command(CLI::App& app);
void add_plan_command(CLI::App& app);

// `run` / `validate` for a scenario whose section is `rl` (cmd_rl.cpp).
struct Scenario;
void run_rl_scenario(const Scenario& sc, bool json, const std::string& trace_file);
void validate_rl_scenario(const Scenario& sc);

}  // namespace stepsim::cli
