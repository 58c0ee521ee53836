// stepsim: a discrete-event simulator of LLM training steps. See README.md.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands/commands.hpp"
#include "cli/commands/job_step_commands.hpp"
#include "cli/commands/search_commands.hpp"
#include "cli/input/input.hpp"
#include "sim/engine.hpp"

int main(int argc, char** argv) {
  using namespace stepsim;
  CLI::App app{"stepsim: simulate LLM training steps (pipeline schedules, overlap, memory)"};
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const cli::InputError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  } catch (const DeadlockError& e) {
    fmt::print(stderr, "error: the schedule cannot finish: {}\n", e.what());
    return 3;
  } catch (const GraphError& e) {
    fmt::print(stderr, "error: the schedule cannot run: {}\n", e.what());
    return 3;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
