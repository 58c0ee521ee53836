// `stepsim check-against`: measured runs predicted at one calibration per accelerator (fitted on
// their rows marked fit=1, given, or the preset's), measured vs predicted per row, the error over
// held-out and fit rows, the ranking; `--export` writes rows as a job_step scenario.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/commands/commands.hpp"
#include "cli/commands/diagnostics.hpp"
#include "cli/commands/measured_fit.hpp"
#include "cli/commands/reuse_freed_memory.hpp"
#include "cli/input/input_files.hpp"
#include "cli/input/job_step_input.hpp"
#include "cli/input/validation_csv.hpp"
#include "cli/reports/job_step_report.hpp"
#include "cli/reports/measured_export.hpp"
#include "cli/reports/output.hpp"
#include "cli/reports/quantities.hpp"
#include "cli/reports/table.hpp"
#include "sim/parallel_for.hpp"

namespace stepsim::cli {

namespace {

// One file's rows: measured vs predicted with the error, the mean and max over held-out and fit
// rows, and whether rows that differ by more than 5 % keep their order; a row whose layout needs
// more memory than the GPU has in stepsim's model says so, in a last column shown only then.
// `predicted[i]` is rows[i]'s prediction.
void check_file(const std::string& file, const std::vector<MeasuredRun>& rows,
                const std::vector<RowPrediction>& predicted, std::string& text, nlohmann::ordered_json& out) {
  bool over = false;
  for (std::size_t i = 0; i < rows.size(); ++i) over = over || (rows[i].file == file && !predicted[i].fits());
  std::vector<Table::Column> cols = {{"row", false}, {"measured"}, {"predicted"}, {"error"}, {"", false}};
  if (over) cols.push_back({"memory per GPU (stepsim)", false});
  Table t(cols);
  nlohmann::ordered_json jf;
  jf["file"] = file;
  jf["rows"] = nlohmann::ordered_json::array();
  double sum_h = 0, max_h = 0, sum_f = 0, max_f = 0;
  int n_h = 0, n_f = 0;
  struct P {
    std::string table;
    int metric;
    double meas, pred;
    int line;
  };
  std::vector<P> pts;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const MeasuredRun& r = rows[i];
    if (r.file != file) continue;
    const double pred = predicted[i].value;
    const double err = pred / r.value - 1;
    (r.fit ? sum_f : sum_h) += std::abs(err);
    (r.fit ? max_f : max_h) = std::max(r.fit ? max_f : max_h, std::abs(err));
    (r.fit ? n_f : n_h)++;
    pts.push_back({r.table, static_cast<int>(r.metric), r.value, pred, r.line});
    const std::string what = r.label.substr(file.size() + 1);
    std::vector<std::string> cells = {what, fmt::format("{} {}", figure(r.value), metric_unit(r.metric)), figure(pred),
                                      fmt::format("{:+.1f}%", 100 * err), r.fit ? "fit" : "held out"};
    const RowPrediction& p = predicted[i];
    if (over) cells.push_back(p.fits() ? "" : fmt::format("needs {:.1f} of {:.1f} GiB", gib(p.memory), gib(p.usable)));
    t.add_row(cells);
    jf["rows"].push_back({{"line", r.line},
                          {"row", what},
                          {"measured", r.value},
                          {"predicted", pred},
                          {"error", err},
                          {"fit", r.fit},
                          {"memory_bytes", p.memory},
                          {"usable_bytes", p.usable}});
  }
  // Ranking: within a table and metric, where two measurements differ by more than 5 %, the
  // prediction must order them the same way (for times: faster = smaller).
  int pairs = 0, kept = 0;
  std::vector<std::string> flips;
  for (std::size_t i = 0; i < pts.size(); ++i)
    for (std::size_t j = i + 1; j < pts.size(); ++j) {
      const P& a = pts[i];
      const P& b = pts[j];
      if (a.table != b.table || a.metric != b.metric) continue;
      if (std::abs(a.meas / b.meas - 1) <= 0.05) continue;
      ++pairs;
      if ((a.meas > b.meas) == (a.pred > b.pred))
        ++kept;
      else
        flips.push_back(fmt::format("lines {} and {}", a.line, b.line));
    }
  const double mean_h = n_h ? sum_h / n_h : 0, mean_f = n_f ? sum_f / n_f : 0;
  text += fmt::format("\n{}\n{}", file, t.render());
  text += fmt::format("held out: {} rows, mean |error| {:.1f}%, max {:.1f}%\n", n_h, 100 * mean_h, 100 * max_h);
  text += fmt::format("fit:      {} rows, mean |error| {:.1f}%, max {:.1f}%\n", n_f, 100 * mean_f, 100 * max_f);
  text += fmt::format(
      "ranking:  {} of {} pairs that differ by more than 5% keep their order{}\n", kept, pairs,
      flips.empty() ? "" : " (flipped: " + [&] {
        // The first ten: a large table's flips grow with the square of its rows.
        constexpr std::size_t kShown = 10;
        std::string s;
        for (std::size_t i = 0; i < flips.size() && i < kShown; ++i) s += (s.empty() ? "" : ", ") + flips[i];
        if (flips.size() > kShown) s += fmt::format(" and {} more", flips.size() - kShown);
        return s;
      }() + ")");
  jf["held_out"] = {{"rows", n_h}, {"mean_abs_error", mean_h}, {"max_abs_error", max_h}};
  jf["fit"] = {{"rows", n_f}, {"mean_abs_error", mean_f}, {"max_abs_error", max_f}};
  jf["ranking"] = {{"pairs", pairs}, {"kept", kept}};
  out["files"].push_back(jf);
}

struct CheckAgainstArgs {
  std::vector<std::string> files;
  bool json = false;
  std::string efficiency;        // --efficiency: given, not fitted
  std::vector<std::string> fit;  // --fit: the dense efficiencies fitted (all six when empty)
  unsigned jobs = 0;
  std::string exported;           // --export
  std::vector<std::string> rows;  // --rows
};

// One calibration per accelerator of `rows` (given, or fitted on their fit=1 rows, or the preset's
// own), and where each comes from ("fitted on 6 of 22 rows (fit=1)").
struct Calibrations {
  std::map<std::string, Efficiency> eff;
  std::map<std::string, FitResult> fits;
  std::map<std::string, std::string> source;
};
Calibrations calibrate_rows(const std::vector<MeasuredRun>& rows, const CheckAgainstArgs& a, RowsProgress& progress) {
  Calibrations c;
  if (!a.efficiency.empty()) {
    const Efficiency given = parse_efficiencies(a.efficiency);
    for (const auto& r : rows) c.eff[r.hw] = given;
  } else {
    std::vector<MeasuredRun> fit_rows;
    for (const auto& r : rows)
      if (r.fit) fit_rows.push_back(r);
    const DenseFit dense_fit = parse_dense_fit(a.fit);
    if (!fit_rows.empty()) c.fits = fit_per_accelerator(fit_rows, dense_fit, progress, threads_for(a.jobs));
    for (const auto& [hw, f] : c.fits) {
      c.eff[hw] = eff_of(f.params);
      // What the fit could not pin down, as calibrate says it.
      std::vector<MeasuredRun> own;
      for (const auto& r : fit_rows)
        if (r.hw == hw) own.push_back(r);
      const std::string doubt =
          undetermined(own, dense_fit, find_cluster_preset(hw)->accelerator.efficiency, c.eff[hw]);
      if (!doubt.empty()) warn("calibration for {}: {}", hw, doubt);
    }
    // An accelerator none of whose rows is marked fit=1: every row held out, at its preset's
    // own (uncalibrated) efficiencies.
    for (const auto& r : rows) c.eff.try_emplace(r.hw, r.spec.cluster.accelerator.efficiency);
  }
  for (const auto& [hw, e] : c.eff) {
    int nfit = 0, nall = 0;
    for (const auto& r : rows)
      if (r.hw == hw) {
        ++nall;
        nfit += r.fit;
      }
    c.source[hw] = c.fits.count(hw)       ? fmt::format("fitted on {} of {} rows (fit=1)", nfit, nall)
                   : a.efficiency.empty() ? std::string("the preset's own: no row of this accelerator is marked fit=1")
                                          : std::string("given with --efficiency");
  }
  return c;
}

// The calibrations as the report's first lines and its JSON's "calibration".
void report_calibrations(const Calibrations& c, const std::vector<MeasuredRun>& rows, bool given, std::string& text,
                         nlohmann::ordered_json& out) {
  out["calibration"] = nlohmann::ordered_json::object();
  for (const auto& [hw, e] : c.eff) {
    nlohmann::ordered_json j;
    const std::vector<double> v = eff_vector(e, extra_shown(e));
    for (std::size_t i = 0; i < v.size(); ++i) j[efficiency_name(i)] = v[i];
    if (c.fits.count(hw)) {
      int n = 0;
      for (const auto& r : rows) n += r.fit && r.hw == hw;
      j["fitted_on_rows"] = n;
    } else {
      j["source"] = given ? "given" : "preset";
    }
    out["calibration"][hw] = j;
    const std::string& source = c.source.at(hw);
    text += fmt::format("calibration for {}: {}\n  {}\n", hw, eff_text(e),
                        c.fits.count(hw) ? source + ", shared by every row of this accelerator" : source);
  }
}

// --export: the rows `chosen` (indices into `rows`) as a job_step scenario, each at its calibration.
void export_rows(const CheckAgainstArgs& a, const std::vector<MeasuredRun>& rows,
                 const std::vector<std::size_t>& chosen, const Calibrations& c,
                 const std::vector<RowPrediction>& predicted) {
  std::vector<PredictedRow> picked;
  std::vector<std::string> calibration;
  for (const std::size_t i : chosen) {
    const MeasuredRun& r = rows[i];
    const RowPrediction& p = predicted[i];
    picked.push_back({&r, c.eff.at(r.hw), p.value, p.step, p.memory, p.usable});
    const std::string line = fmt::format("the calibration for {} {}", r.hw, c.source.at(r.hw));
    if (std::find(calibration.begin(), calibration.end(), line) == calibration.end()) calibration.push_back(line);
  }
  std::string command = fmt::format("stepsim check-against {}", fmt::join(a.files, " "));
  if (!a.efficiency.empty()) command += " --efficiency " + a.efficiency;
  command += fmt::format(" --export {} --rows {}", a.exported, fmt::join(a.rows, ","));
  write_file(a.exported, measured_rows_scenario(picked, command, calibration));
  note("{} written to {} as a job_step scenario ({} {})", chosen.size() == 1 ? "the row" : "the rows", a.exported,
       chosen.size() == 1 ? "stepsim run" : "stepsim compare", a.exported);
}

void run_check_against(const CheckAgainstArgs& a) {
  reuse_freed_memory();  // a simulation per row and fit step, one after another
  const auto rows = read_measured_files(a.files);
  check_output_path("--export", a.exported);
  const std::vector<std::size_t> chosen =
      a.exported.empty() ? std::vector<std::size_t>{} : select_rows(rows, a.files, a.rows);
  const bool fitting = a.efficiency.empty();
  const RowsWork work = bound_rows_work(
      rows, [fitting](const MeasuredRun& r) { return fitting && r.fit; }, parse_dense_fit(a.fit),
      "mark fewer rows fit=1");
  auto progress = std::make_unique<RowsProgress>("check-against", work.simulations, work.ops, a.json);
  const Calibrations cal = calibrate_rows(rows, a, *progress);
  nlohmann::ordered_json out;
  std::string text;
  report_calibrations(cal, rows, !a.efficiency.empty(), text, out);
  // Every row is an independent simulation: every core, each at its own index.
  std::vector<RowPrediction> predicted(rows.size());
  parallel_for(rows.size(), threads_for(a.jobs), [&](std::size_t i) {
    predicted[i] = predict_row(rows[i], cal.eff.at(rows[i].hw));
    progress->simulated();
  });
  progress.reset();  // its line cleared before the report
  out["files"] = nlohmann::ordered_json::array();
  for (const auto& file : a.files) check_file(file, rows, predicted, text, out);
  if (a.json)
    fmt::print("{}\n", out.dump(2));
  else
    fmt::print("{}", text);
  if (chosen.empty()) return;
  std::fflush(stdout);  // the report, then the note on stderr saying what was written
  export_rows(a, rows, chosen, cal, predicted);
}

// Rows fitted that need more memory than the GPU has by stepsim's count ran all the same: those
// runs kept less than stepsim's memory model does (check-against shows each row's figure), and a

}  // namespace

void add_check_against_command(CLI::App& app) {
  auto a = std::make_shared<CheckAgainstArgs>();
  auto* cmd = app.add_subcommand("check-against",
                                 "predict measured runs (validation/*.csv) and print measured vs predicted per row; "
                                 "one calibration per accelerator is "
                                 "fitted on the rows marked fit=1 of all the files given, the other rows are held out");
  cmd->add_option("files", a->files, "CSV files of measured runs")->required();
  cmd->add_flag("--json", a->json, "print JSON instead of tables");
  add_jobs_option(cmd, a->jobs, "threads (default: every core); results do not depend on it");
  cmd->add_option("--efficiency", a->efficiency,
                  "use these efficiencies instead of fitting: gemm,attention,memory,fabric,network,contention and "
                  "optionally the routed experts' and the tensorwise FP8 GEMMs' shares of gemm, the MoE passes' host "
                  "seconds per local expert and the blockwise, MXFP8 and NVFP4 GEMMs' shares "
                  "(e.g. 0.7,0.5,0.8,0.8,0.8,0.2)");
  add_fit_option(cmd, a->fit)->excludes("--efficiency");
  auto* export_option =
      cmd->add_option("--export", a->exported,
                      "write the rows --rows names as a job_step scenario to this file, at the calibration they are "
                      "predicted with; `stepsim run` simulates the first, `stepsim compare` all")
          ->check(file_beside_report());
  auto* rows_option = add_list_option(cmd, "--rows", a->rows,
                                      "the rows --export writes, by line (with one file) or FILE:LINE, FILE a file's "
                                      "name with or without .csv (a list: 16,17)")
                          ->needs(export_option);
  export_option->needs(rows_option);
  cmd->callback([a] { run_check_against(*a); });
}

}  // namespace stepsim::cli
