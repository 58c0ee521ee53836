// `stepsim calibrate`: one accelerator's efficiencies fitted to measured runs (every row, or
// those marked fit=1), the fit's table, and a hardware file scenarios can use.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands/commands.hpp"
#include "cli/commands/diagnostics.hpp"
#include "cli/commands/measured_fit.hpp"
#include "cli/commands/reuse_freed_memory.hpp"
#include "cli/input/input_files.hpp"
#include "cli/input/job_step_yaml.hpp"
#include "cli/input/validation_csv.hpp"
#include "cli/reports/job_step_report.hpp"
#include "cli/reports/output.hpp"
#include "cli/reports/quantities.hpp"
#include "cli/reports/table.hpp"
#include "sim/parallel_for.hpp"

namespace stepsim::cli {

namespace {

void warn_rows_over_memory(const std::vector<MeasuredRun>& rows, const Efficiency& e, RowsProgress& progress,
                           unsigned jobs) {
  std::vector<RowPrediction> p(rows.size());
  parallel_for(rows.size(), jobs, [&](std::size_t i) {
    p[i] = predict_row(rows[i], e);
    progress.simulated();
  });
  std::vector<std::string> over;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (!p[i].fits())
      over.push_back(
          fmt::format("{}:{} ({:.1f} of {:.1f} GiB)", rows[i].file, rows[i].line, gib(p[i].memory), gib(p[i].usable)));
  if (over.empty()) return;
  const std::size_t shown = std::min<std::size_t>(over.size(), 5);
  warn(
      "{} of the {} rows fitted need more memory than the GPU has by stepsim's count: {}{}; they ran, so stepsim "
      "keeps more than those runs did (their times are fitted as measured; check-against shows each row's)",
      over.size(), rows.size(), fmt::join(over.begin(), over.begin() + static_cast<std::ptrdiff_t>(shown), ", "),
      over.size() > shown ? fmt::format(" and {} more", over.size() - shown) : "");
}

struct CalibrateArgs {
  std::vector<std::string> files;
  std::string output;
  bool fit_only = false;         // --fit-rows
  std::vector<std::string> fit;  // --fit
  unsigned jobs = 0;
};

// calibrate's table: each row measured, fitted and its residual, with what its stage fitted
// (fit_per_accelerator) where the rows fit more than one.
std::string fit_table(const std::vector<MeasuredRun>& rows, const FitResult& f) {
  bool stages = false, dense = false;
  for (const auto& r : rows) {
    stages = stages || fit_stage(r) != fit_stage(rows.front());
    dense = dense || fit_stage(r) == FitStage::Dense;
  }
  std::vector<Table::Column> cols = {{"row", false}, {"measured"}, {"fitted"}, {"residual"}};
  if (stages) cols.push_back({"fits", false});
  Table t(cols);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::vector<std::string> cells = {rows[i].label,
                                      fmt::format("{} {}", figure(rows[i].value), metric_unit(rows[i].metric)),
                                      figure(rows[i].value * std::exp(f.residuals[i])),
                                      fmt::format("{:+.1f}%", 100 * (std::exp(f.residuals[i]) - 1))};
    if (stages) cells.emplace_back(fit_stage_name(fit_stage(rows[i]), dense));
    t.add_row(cells);
  }
  return t.render();
}

void run_calibrate(const CalibrateArgs& a) {
  reuse_freed_memory();  // a simulation per row and fit step, one after another
  auto rows = read_measured_files(a.files);
  check_output_path("--output", a.output);
  if (a.fit_only)
    rows.erase(std::remove_if(rows.begin(), rows.end(), [](const MeasuredRun& r) { return !r.fit; }), rows.end());
  if (rows.empty())
    throw InputError(
        a.files[0], 0, "fit",
        a.fit_only ? "no rows to fit: --fit-rows fits only rows marked fit=1, and none is" : "no rows to fit");
  std::string hw = rows.front().hw;
  for (const auto& r : rows)
    if (r.hw != hw)
      throw InputError(r.file, r.line, "hw",
                       fmt::format("rows of '{}' and '{}': calibrate one accelerator at a time", hw, r.hw));
  const DenseFit dense_fit = parse_dense_fit(a.fit);
  const RowsWork work = bound_rows_work(
      rows, [](const MeasuredRun&) { return true; }, dense_fit,
      "fit a sample: mark its rows fit=1 and give --fit-rows");
  auto progress = std::make_unique<RowsProgress>("calibrate", work.simulations, work.ops, false);
  const auto fits = fit_per_accelerator(rows, dense_fit, *progress, threads_for(a.jobs));
  const FitResult& f = fits.at(hw);
  ClusterSpec c = *find_cluster_preset(hw);
  c.accelerator.efficiency = eff_of(f.params);
  const std::string doubt =
      undetermined(rows, dense_fit, find_cluster_preset(hw)->accelerator.efficiency, c.accelerator.efficiency);
  if (!doubt.empty()) warn("{}", doubt);
  warn_rows_over_memory(rows, c.accelerator.efficiency, *progress, threads_for(a.jobs));
  progress.reset();  // its line cleared before the table
  // The files the fitted rows came from (a file whose rows are all held out gave none).
  std::string files_list;
  for (const auto& x : a.files) {
    const bool gave = std::any_of(rows.begin(), rows.end(), [&x](const MeasuredRun& r) { return r.file == x; });
    if (gave) files_list += (files_list.empty() ? "" : ", ") + x;
  }
  const std::string yaml = format_hardware_yaml(
      c, fmt::format(
             "# Written by `stepsim calibrate`: {}'s efficiencies fitted to {} measured rows of {}\n"
             "# (rms log residual {:.4f}, {} iterations). Use as job_step.hardware: {{file: THIS}} (add gpus: N).\n{}",
             hw, rows.size(), files_list, f.rms, f.iterations, doubt.empty() ? "" : "# " + doubt + "\n"));
  write_file(a.output, yaml);
  // With the file on stdout (-o -), the fit's table goes to stderr: stdout stays the YAML alone.
  fmt::print(a.output == "-" ? stderr : stdout, "calibration for {}: {}\n{}rms residual {:.2f}%\n", hw,
             eff_text(c.accelerator.efficiency), fit_table(rows, f), 100 * f.rms);
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto a = std::make_shared<CalibrateArgs>();
  auto* cmd = app.add_subcommand(
      "calibrate",
      "fit an accelerator's efficiency parameters (least squares) to measured runs and write a hardware "
      "file scenarios can use (job_step.hardware: {file: ...})");
  cmd->add_option("files", a->files, "CSV files of measured runs (columns as validation/*.csv)")->required();
  cmd->add_option("-o,--output", a->output, "hardware YAML to write ('-' = stdout)")->required()->check(file_name());
  cmd->add_flag("--fit-rows", a->fit_only, "fit only the rows marked fit=1 (as check-against does)");
  add_fit_option(cmd, a->fit);
  add_jobs_option(cmd, a->jobs, "threads (default: every core); results do not depend on it");
  cmd->callback([a] { run_calibrate(*a); });
}

}  // namespace stepsim::cli
