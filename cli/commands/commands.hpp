#pragma once
// The stepsim subcommands. Each adds itself to the CLI11 app; main() owns exit codes
// (docs/cli.md lists them):
//   0 success (also help and --version), 1 internal error, 2 bad input or usage (a scenario's
//   file:line: key: message, an unknown command or option, conflicting flags),
//   3 a simulation that cannot finish (deadlock or cycle, with the stuck ops named),
//   4 a check failed (a benchmark regression, a bench merge with a shard missing).
#include <filesystem>
#include <limits>
#include <string>
#include <type_traits>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/input/input.hpp"

namespace stepsim::cli {

void add_run_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_export_schedule_command(CLI::App& app);
void add_validate_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_job_command(CLI::App& app);
void add_plan_command(CLI::App& app);
// `stepsim check-against CSV...` and `stepsim calibrate CSV... -o HW.yaml` over measured runs
// (cmd_check_against.cpp, cmd_calibrate.cpp; docs/calibration.md, docs/validation.md).
void add_check_against_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
// `stepsim presets [--json]`: the accelerator presets and their figures (cmd_presets.cpp).
void add_presets_command(CLI::App& app);
// `stepsim help [COMMAND]`: the overview, or a command's options (cmd_help.cpp).
void add_help_command(CLI::App& app);

// The short overview `stepsim`, `stepsim help` and `stepsim --help` print: the commands, the
// scenario kinds and the command that takes each, global options, exit codes.
std::string overview(const CLI::App& app);

// A usage error CLI11 found (unknown command or option, conflicting or missing flags) as our one
// line: "error: ..." with a did-you-mean where a name was mistyped, on stderr; returns the exit code.
int report_usage_error(const CLI::App& app, const CLI::ParseError& e);

// The check of an option naming a file to write: an empty name would write nothing, or a file
// named ".csv" beside it, after the work (refused before it).
inline std::string empty_file_name(const std::string& path) {
  return path.empty() ? "an empty file name: give a file name" : "";
}
inline CLI::Validator file_name() { return CLI::Validator(empty_file_name, "FILE"); }

// The check of an option that writes a file beside the command's report (--trace, --html, --csv): "-"
// would put it on standard output, into the report; an empty name would write nothing, silently.
inline CLI::Validator file_beside_report() {
  return CLI::Validator(
      [](const std::string& path) {
        if (path.empty()) return empty_file_name(path);
        return path == "-" ? std::string("'-' would write it into the report on standard output: give a file name")
                           : std::string();
      },
      "FILE");
}

// A comma-separated list option (--schedules 1f1b,zb-h1; --pick 1,2,3). CLI11's own delimiter drops
// empty items, so "1f1b,,zb-h1," passed as two names: here an empty item is refused (a stray comma is
// a typo, or a name the shell lost). The option may be given more than once; its items add up. Each
// item is checked by `each` (a CLI11 validator, e.g. a range), then converted to T.
template <class T>
CLI::Option* add_list_option(CLI::App* cmd, const std::string& name, std::vector<T>& out,
                             const std::string& description, CLI::Validator each = {}) {
  auto convert = [&out, name, each](const std::vector<std::string>& raws) mutable {
    out.clear();
    for (const auto& raw : raws) {
      std::size_t from = 0;
      for (;;) {
        const std::size_t comma = raw.find(',', from);
        std::string item = raw.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
        if (item.empty())
          throw CLI::ValidationError(name, fmt::format("an empty item in '{}': a comma too many?", raw));
        T value{};
        if constexpr (std::is_integral_v<T>) {  // a count, read as add_count_option reads one (48,1K)
          std::string error;
          const auto v = whole_number(item, std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), error);
          if (!v) throw CLI::ValidationError(name, error);
          value = static_cast<T>(*v);
          item = std::to_string(value);  // what `each` checks: the count, not its form
        } else if (!CLI::detail::lexical_cast(item, value)) {
          throw CLI::ValidationError(name, fmt::format("'{}' is not a number", item));
        }
        if (const std::string problem = each(item); !problem.empty()) throw CLI::ValidationError(name, problem);
        out.push_back(std::move(value));
        if (comma == std::string::npos) break;
        from = comma + 1;
      }
    }
  };
  return cmd->add_option_function<std::vector<std::string>>(name, convert, description)
      ->allow_extra_args(false)  // one token per use (1,2,3): a file after it stays positional
      ->type_name(std::string(CLI::detail::type_name<T>()) + " list");
}

// A count option (--runs 1M, --top 20, -j 4): read by whole_number, as a count is in a scenario, a
// --set value or a measured-runs cell (4096, 2.2e12, 15T), and refused outside [min, max] with the
// same words. (CLI11's own integer options answer "Value 1K not in range".)
template <class T>
CLI::Option* add_count_option(CLI::App* cmd, const std::string& names, T& out, std::int64_t min, std::int64_t max,
                              const std::string& description) {
  static_assert(std::is_integral_v<T>);
  const std::size_t long_name = names.find("--");  // the first long name, as CLI11 names the option
  const std::string shown = names.substr(long_name, names.find(',', long_name) - long_name);
  auto read = [&out, shown, min, max](const std::string& text) {
    std::string error;
    const auto v = whole_number(text, min, max, error);
    if (!v) throw CLI::ValidationError(shown, error);
    out = static_cast<T>(*v);
  };
  return cmd->add_option_function<std::string>(names, read, description)->type_name(min < 0 ? "INT" : "UINT");
}

// The thread count of a command that runs in parallel: 0 (the default) takes every core; up to
// 2^31 - 1 in every command, capped where the threads are made (parallel_for: twice the cores).
template <class T>
CLI::Option* add_jobs_option(CLI::App* cmd, T& jobs, const std::string& description,
                             const std::string& names = "-j,--jobs") {
  return add_count_option(cmd, names, jobs, 0, std::numeric_limits<int>::max(), description);
}

// Removes the global flags (--verbose, --quiet) wherever they stand before a lone "--", so that
// they may follow the command, and returns the verbosity they ask for (both: an InputError).
struct GlobalFlags {
  bool verbose = false, quiet = false;
};
GlobalFlags take_global_flags(std::vector<std::string>& args);

}  // namespace stepsim::cli
