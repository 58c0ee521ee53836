// stepsim: a discrete-event simulator of LLM training steps. See README.md and docs/cli.md.
#include <algorithm>
#include <new>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/commands/commands.hpp"
#include "cli/commands/diagnostics.hpp"
#include "cli/commands/search_commands.hpp"
#include "cli/input/budget.hpp"
#include "cli/input/input.hpp"
#include "cli/input/printable.hpp"
#include "cli/reports/output.hpp"
#include "sim/engine.hpp"
#include "sim/op_graph.hpp"

#ifndef STEPSIM_VERSION
#define STEPSIM_VERSION "unknown"
#endif

namespace {

// Every exception that ends a command, mapped to its message on stderr and its exit code (the
// table in docs/cli.md). Called from a catch block; add a catch clause here for a new error type.
int exit_code_of_current_exception(const CLI::App& app) {
  using namespace stepsim;
  try {
    throw;
  } catch (const CLI::CallForVersion& e) {
    fmt::print("{}\n", e.what());
    return 0;
  } catch (const CLI::Success& e) {  // --help
    if (dynamic_cast<const CLI::CallForHelp*>(&e) && app.get_subcommands().empty()) {
      fmt::print("{}", cli::overview(app));
      return 0;
    }
    return app.exit(e);
  } catch (const CLI::RuntimeError& e) {  // a command's own exit code (bench: 3, 4)
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    return cli::report_usage_error(app, e);
  } catch (const OpLimitError& e) {  // over --max-ops / --max-memory, found while building the graph
    fmt::print(stderr, "error: too large: {}: make the scenario smaller or raise --max-ops / --max-memory\n",
               cli::printable(e.what()));
    return 2;
  } catch (const cli::InputError& e) {  // TooLargeError too: over the budget, before the work
    fmt::print(stderr, "error: {}\n", cli::printable(e.what()));
    return 2;
  } catch (const OverflowError& e) {
    // A time or a byte count computed from the input passes int64 (or 1 EiB): the input is at fault.
    fmt::print(stderr, "error: {}\n", cli::printable(e.what()));
    return 2;
  } catch (const DeadlockError& e) {
    fmt::print(stderr, "error: the schedule cannot finish: {}\n", cli::printable(e.what()));
    return 3;
  } catch (const cli::OutputError& e) {
    fmt::print(stderr, "error: {}\n", cli::printable(e.what()));
    return 1;
  } catch (const GraphError& e) {
    fmt::print(stderr, "error: the schedule cannot run: {}\n", cli::printable(e.what()));
    return 3;
  } catch (const std::bad_alloc&) {  // past what the host allows (cli::out_of_memory says whose fault)
    const cli::OutOfMemory oom = cli::out_of_memory();
    fmt::print(stderr, "error: {}\n", oom.message);
    return oom.exit_code;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", cli::printable(e.what()));
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace stepsim;
  CLI::App app{"stepsim " STEPSIM_VERSION ": simulate LLM training steps (pipeline schedules, overlap, memory)",
               "stepsim"};
  app.set_version_flag("--version", "stepsim " STEPSIM_VERSION);
  app.require_subcommand(1);
  cli::add_run_command(app);
  cli::add_compare_command(app);
  cli::add_export_schedule_command(app);
  cli::add_validate_command(app);
  cli::add_bench_command(app);
  cli::add_job_command(app);
  cli::add_plan_command(app);
  cli::add_check_against_command(app);
  cli::add_calibrate_command(app);
  cli::add_search_command(app);
  cli::add_presets_command(app);
  cli::add_help_command(app);
  try {
    std::vector<std::string> args(argv + 1, argv + argc);
    const cli::GlobalFlags flags = cli::take_global_flags(args);
    cli::take_budget_flags(args);
    set_op_limit(
        static_cast<std::size_t>(std::min(cli::budget().max_ops, cli::budget().max_memory / cli::kBytesPerOp)));
    cli::set_verbosity(flags.quiet     ? cli::Verbosity::Quiet
                       : flags.verbose ? cli::Verbosity::Verbose
                                       : cli::Verbosity::Normal);
    std::reverse(args.begin(), args.end());  // CLI11 takes them last first
    app.parse(args);
    cli::check_stdout();  // a full disk or /dev/full behind stdout is an error, not exit 0
  } catch (...) { return exit_code_of_current_exception(app); }
  return 0;
}
