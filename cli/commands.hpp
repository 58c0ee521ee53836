#pragma once
// The stepsim subcommands. Each adds itself to the CLI11 app; main() owns exit codes:
//   0 success, 1 internal error, 2 bad input (file:line: key: message),
//   3 a simulation that cannot finish (deadlock or cycle, with the stuck ops named),
//   4 a check failed (e.g. a benchmark regression).
#include <CLI/CLI.hpp>

namespace stepsim::cli {

void add_run_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_validate_command(CLI::App& app);
void add_bench_command(CLI::App& app);

}  // namespace stepsim::cli
