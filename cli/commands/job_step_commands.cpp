#include "cli/commands/job_step_commands.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/commands/commands.hpp"
#include "cli/commands/diagnostics.hpp"
#include "cli/commands/reuse_freed_memory.hpp"
#include "cli/input/budget.hpp"
#include "cli/input/input_files.hpp"
#include "cli/input/job_step_input.hpp"
#include "cli/input/job_step_yaml.hpp"
#include "cli/input/scenario.hpp"
#include "cli/input/validation_csv.hpp"
#include "cli/reports/job_step_report.hpp"
#include "cli/reports/measured_export.hpp"
#include "cli/reports/output.hpp"
#include "cli/reports/quantities.hpp"
#include "cli/reports/table.hpp"
#include "models/calibration.hpp"
#include "sim/parallel_for.hpp"

namespace stepsim::cli {

namespace {

// The efficiency parameters in --efficiency's and the fit vector's order: the six dense ones, then
// those each fitted only where its rows are (the routed experts' and the tensorwise FP8 GEMMs'
// shares of the GEMM efficiency, the MoE passes' host time per local expert in seconds, the
// blockwise, MXFP8 and NVFP4 GEMMs' shares: last, as they came last), with their names.
constexpr double Efficiency::*kEffFields[] = {
    &Efficiency::gemm,          &Efficiency::attention, &Efficiency::memory,
    &Efficiency::fabric,        &Efficiency::network,   &Efficiency::contention,
    &Efficiency::experts,       &Efficiency::fp8,       &Efficiency::moe_host_per_expert,
    &Efficiency::fp8_blockwise, &Efficiency::fp8_mx,    &Efficiency::fp4};
const char* kEffNames[] = {"gemm", "attention",           "memory",        "fabric", "network", "contention", "experts",
                           "fp8",  "moe_host_per_expert", "fp8_blockwise", "fp8_mx", "fp4"};
static_assert(std::size(kEffFields) == std::size(kEffNames));

// The six dense efficiencies and `extra` of the others, as a vector.
std::vector<double> eff_vector(const Efficiency& e, int extra) {
  std::vector<double> v;
  for (std::size_t i = 0; i < 6 + static_cast<std::size_t>(extra); ++i) v.push_back(e.*kEffFields[i]);
  return v;
}
// How many of those to show: up to the last not at its default (fitted, or given).
int extra_shown(const Efficiency& e) {
  const Efficiency defaults;
  int shown = 0;
  for (std::size_t i = 6; i < std::size(kEffFields); ++i)
    if (e.*kEffFields[i] != defaults.*kEffFields[i]) shown = static_cast<int>(i) - 5;
  return shown;
}
// A vector's values, the parameters past its end at their defaults.
Efficiency eff_of(const std::vector<double>& v) {
  Efficiency e;
  for (std::size_t i = 0; i < v.size(); ++i) e.*kEffFields[i] = v[i];
  return e;
}

// A measured or predicted figure: 4 significant digits, whole numbers from 10,000 on (not 1.445e+04).
std::string figure(double v) { return std::abs(v) >= 1e4 ? fmt::format("{:.0f}", v) : fmt::format("{:.4g}", v); }

// A row's prediction: its metric, and the peak memory per GPU its layout needs in stepsim's model
// beside what the accelerator can use (a measured run that needs more kept less than the model
// counts: the time is predicted as if it fit).
struct RowPrediction {
  double value = 0;
  Time step = 0;
  Bytes memory = 0, usable = 0;
  bool fits() const { return memory <= usable; }
};
RowPrediction predict_row(const MeasuredRun& row, const Efficiency& e) {
  JobStepSpec spec = row.spec;
  spec.cluster.accelerator.efficiency = e;
  JobStepRun run;
  try {
    run = run_job_step(spec);
  } catch (const SpecError& x) { throw row_error(row, x.key(), x.what()); }
  return {predicted_metric(row, run.result), run.result.step_time, run.result.memory.total(), run.result.capacity};
}

// The work of a check-against or calibrate run, bounded before anything is simulated
// (docs/calibration.md, "Limits of check-against and calibrate"). Each row is a simulation of its step,
// bounded on its own (its gbs within --max-ops), and a fit simulates each of its rows again for
// every parameter and damping try of up to 12 iterations: nothing bounded the sum (10,000 heavy
// rows took 45 minutes). Measured on one core: a simulation runs 8 to 19 million ops of its bound
// (job_step_ops_bound) a second (SC21's 1T row at 4x its batch, 2.6M ops: 0.34 s; a 22B row of
// Korthikanti's Table 4, 296 ops: 52 us), and the fits of the validation tables took 36 to 62
// simulations a row for the six dense efficiencies, 7 to 54 for one parameter. So --max-ops (10^9
// by default) bounds the sum too: 1,525 of SC21's 1T rows (1.0e9 ops) took 126 s on one core.
constexpr std::size_t kMaxRowsGiven = 10'000;  // over all the files: each is simulated
constexpr std::size_t kMaxFitRows = 1'000;     // the validation fits take 1 to 52 rows
// A fit row's simulations at most as counted: the start, then per iteration (12) one per parameter
// (the Jacobian) and two damping tries (a third and more are rare: above).
std::size_t fit_simulations(std::size_t parameters) { return 12 * (parameters + 2) + 1; }

std::vector<MeasuredRun> read_all(const std::vector<std::string>& files) {
  std::vector<MeasuredRun> out;
  for (const auto& f : files) {
    // A table given twice would count its rows, and weigh its fit rows, twice.
    if (const std::string before = input_named_by(f); !before.empty())
      throw InputError(f, 0, "", fmt::format("given twice (as {}): give each table once", before));
    auto rows = read_measured_runs(f);
    if (out.size() + rows.size() > kMaxRowsGiven)
      throw InputError(f, rows[kMaxRowsGiven - out.size()].line, "",
                       "more than 10,000 measured rows in the files given: each is simulated (published tables "
                       "have tens); check the rest in another run");
    static_assert(kMaxRowsGiven == 10'000);
    for (auto& r : rows) r.label = f + ":" + std::to_string(r.line) + " " + r.label;
    out.insert(out.end(), rows.begin(), rows.end());
  }
  return out;
}

CLI::Option* add_fit_option(CLI::App* cmd, std::vector<std::string>& fit) {
  return add_list_option(cmd, "--fit", fit,
                         "the dense efficiencies to fit, the others kept at the preset's (default all six: "
                         "gemm,attention,memory,fabric,network,contention); fit few on a few runs");
}

unsigned threads_for(unsigned jobs) { return jobs > 0 ? jobs : all_cores(); }

// The progress line of check-against and calibrate (on a terminal, never with --json): simulations
// done of the most the run may take (bound_rows_work), a fit that stops early counted whole when
// it ends. Only for a run whose work may pass 10^7 ops (a second or so on a core): a short one
// says nothing.
class RowsProgress {
 public:
  RowsProgress(const char* label, std::size_t simulations, double ops, bool json)
      : line_(label, "simulations", ops > 1e7 ? simulations : 0, json) {}
  void simulated() { line_.update(++done_); }
  std::size_t done() const { return done_; }
  // Between parallel stretches: the count as if `n` were done.
  void reach(std::size_t n) {
    if (n <= done_) return;
    done_ = n;
    line_.update(n);
  }

 private:
  Progress line_;
  std::atomic<std::size_t> done_{0};
};

// Fits `rows` (sorted as fit_per_accelerator sorts them) by least squares: `free` maps a parameter
// vector onto the efficiencies, starting from `start`. Every (set, row) is an independent
// simulation: every core, each prediction at its own index, taken row by row (a row's sets one
// after another) so that the sets of an expensive row go to different threads.
FitResult fit_rows(const std::vector<const MeasuredRun*>& rows, const std::vector<double>& start,
                   const std::function<Efficiency(const std::vector<double>&)>& free, RowsProgress& progress,
                   unsigned jobs, double lo = 0.05, double hi = 1.0) {
  std::vector<double> measured;
  for (const MeasuredRun* r : rows) measured.push_back(r->value);
  const std::size_t end = progress.done() + rows.size() * fit_simulations(start.size());
  auto predict = [&rows, &free, &progress, jobs](const std::vector<std::vector<double>>& sets) {
    std::vector<std::vector<double>> v(sets.size(), std::vector<double>(rows.size()));
    std::vector<Efficiency> e;
    for (const auto& p : sets) e.push_back(free(p));
    parallel_for(sets.size() * rows.size(), jobs, [&](std::size_t k) {
      const std::size_t row = k / sets.size(), set = k % sets.size();
      v[set][row] = predict_row(*rows[row], e[set]).value;
      progress.simulated();
    });
    return v;
  };
  FitResult f = fit_log_least_squares(predict, measured, start, lo, hi, 12);
  progress.reach(end);
  return f;
}

// Fits one parameter (`one`, e.g. &Efficiency::experts) alone on `rows` from `start`, within
// [lo, hi], every other held at `e`'s; returns the fit with `e` carrying the fitted value.
FitResult fit_one(const std::vector<const MeasuredRun*>& rows, Efficiency& e, double Efficiency::*one, double start,
                  double lo, double hi, RowsProgress& progress, unsigned jobs) {
  if (rows.empty()) return {};
  const Efficiency held = e;
  FitResult f = fit_rows(
      rows, {start},
      [held, one](const std::vector<double>& p) {
        Efficiency x = held;
        x.*one = p[0];
        return x;
      },
      progress, jobs, lo, hi);
  e.*one = f.params[0];
  return f;
}

// The stage a row is fitted in: an MoE model's whole step, the host time its passes expose, in
// BF16 or FP8 (its GEMMs' rate comes from the rows that time GEMMs: a step the host holds up says
// little about them); else its GEMMs in FP8 (on an accelerator with an FP8 peak), by recipe; else
// an MoE block alone (a benchmark of the block: no host time, below); else dense.
enum class FitStage { Dense, MoeBlock, Fp8, Fp8Blockwise, Fp8Mx, MoeHost, Fp4 };
constexpr int kFitStages = 7;
FitStage fit_stage(const MeasuredRun& r) {
  const bool moe = r.spec.model.experts > 0;
  const bool block = r.metric == MeasuredMetric::MoeForwardMs || r.metric == MeasuredMetric::MoeBackwardMs;
  if (moe && !block) return FitStage::MoeHost;
  if (r.spec.layout.fp8 && r.spec.cluster.accelerator.low_precision_peak(r.spec.layout.fp8_recipe) > 0) {
    switch (r.spec.layout.fp8_recipe) {
      case Fp8Recipe::Blockwise: return FitStage::Fp8Blockwise;
      case Fp8Recipe::Mx: return FitStage::Fp8Mx;
      case Fp8Recipe::Nvfp4: return FitStage::Fp4;
      case Fp8Recipe::Tensorwise: return FitStage::Fp8;
    }
  }
  return moe ? FitStage::MoeBlock : FitStage::Dense;
}
// What the MoE blocks' rows fit: the routed experts' share of the GEMM efficiency where dense rows
// fitted that efficiency, else the GEMM efficiency itself (a share of a preset's guess would mean
// nothing; the blocks' rows time GEMMs directly).
double Efficiency::*moe_block_parameter(bool dense_fitted) {
  return dense_fitted ? &Efficiency::experts : &Efficiency::gemm;
}
const char* fit_stage_name(FitStage s, bool dense_fitted) {
  switch (s) {
    case FitStage::Dense: return "dense six";
    case FitStage::MoeBlock: return dense_fitted ? "experts" : "gemm";
    case FitStage::Fp8: return "fp8";
    case FitStage::Fp8Blockwise: return "fp8_blockwise";
    case FitStage::Fp8Mx: return "fp8_mx";
    case FitStage::MoeHost: return "moe_host_per_expert";
    case FitStage::Fp4: return "fp4";
  }
  return "";
}

// Which of the six dense efficiencies a fit moves (--fit; all six unless named), as indices into
// kEffNames. A user's two or three runs cannot determine six parameters: naming the one or two the
// runs vary (gemm, network) keeps the others at the preset's values.
struct DenseFit {
  std::vector<int> fitted{0, 1, 2, 3, 4, 5};
};
DenseFit parse_dense_fit(const std::vector<std::string>& names) {
  DenseFit d;
  if (names.empty()) return d;
  d.fitted.clear();
  for (const auto& name : names) {
    const auto* at =
        std::find_if(std::begin(kEffNames), std::begin(kEffNames) + 6, [&name](const char* n) { return name == n; });
    if (at == std::begin(kEffNames) + 6)
      throw InputError("--fit", 0, "",
                       fmt::format("'{}' is not one of the six dense efficiencies (gemm, attention, memory, fabric, "
                                   "network, contention)",
                                   name));
    const int i = static_cast<int>(at - std::begin(kEffNames));
    if (std::find(d.fitted.begin(), d.fitted.end(), i) != d.fitted.end())
      throw InputError("--fit", 0, "", fmt::format("'{}' named twice", name));
    d.fitted.push_back(i);
  }
  std::sort(d.fitted.begin(), d.fitted.end());
  return d;
}

// The most a run simulates: every row once (check-against's prediction, calibrate's memory check),
// and those `fitted` says once per fit step besides (fit_simulations of their stage's parameters:
// the dense ones `dense` names, else one). Refuses, in the order given, the first row to fit past
// kMaxFitRows (`fewer` says what to do) and the first row whose work takes the sum past --max-ops.
struct RowsWork {
  std::size_t simulations = 0;
  double ops = 0;
};
RowsWork bound_rows_work(const std::vector<MeasuredRun>& rows, const std::function<bool(const MeasuredRun&)>& fitted,
                         const DenseFit& dense, const char* fewer) {
  RowsWork w;
  std::size_t fits = 0;
  const auto max_ops = static_cast<double>(budget().max_ops);
  for (const MeasuredRun& r : rows) {
    std::size_t simulations = 1;
    if (fitted(r)) {
      if (++fits > kMaxFitRows)
        throw InputError(r.file, r.line, "fit",
                         fmt::format("more than 1,000 rows to fit: each is simulated up to {} times (the validation "
                                     "tables fit 1 to 52 rows); {}",
                                     fit_simulations(dense.fitted.size()), fewer));
      static_assert(kMaxFitRows == 1'000);
      simulations += fit_simulations(fit_stage(r) == FitStage::Dense ? dense.fitted.size() : 1);
    }
    w.simulations += simulations;
    w.ops += static_cast<double>(simulations) * job_step_ops_bound(r.spec.layout, r.spec.model.shape.layers);
    if (w.ops > max_ops)
      throw TooLargeError(
          r.file, r.line, "",
          fmt::format(
              "too large: the rows up to this one need about {:.2g} simulated ops ({} simulations: each row "
              "once{}), over --max-ops {} (10^9 by default: a minute or three on a core): give fewer or smaller "
              "rows, or raise --max-ops",
              w.ops, w.simulations,
              fits > 0 ? fmt::format(", the {} to fit up to {} times more", fits, fit_simulations(dense.fitted.size()))
                       : "",
              budget().max_ops));
  }
  return w;
}

// What a dense fit could not pin down: the fitted parameters that ended at a bound of the fit (0.05
// or 1) or moved more than twice or half the preset's value, said with how many rows fitted how many
// parameters and what to do (empty when none). Fewer rows than parameters that the rows cannot fit
// exactly send the spare parameters wherever they shave the residuals: an HBM efficiency of 0.15
// on an H100, say.
std::string undetermined(const std::vector<MeasuredRun>& rows, const DenseFit& d, const Efficiency& preset,
                         const Efficiency& fitted) {
  std::size_t dense_rows = 0;
  for (const auto& r : rows) dense_rows += fit_stage(r) == FitStage::Dense;
  if (dense_rows == 0) return "";
  std::vector<std::string> odd;
  for (const int i : d.fitted) {
    const double from = preset.*kEffFields[i], to = fitted.*kEffFields[i];
    const bool at_bound = to <= 0.05 * 1.001 || to >= 0.999;
    const bool far = from > 0 && (to > 2 * from || to < from / 2);
    if (at_bound || far)
      odd.push_back(fmt::format("{} {:.3f} -> {:.3f}{}", kEffNames[i], from, to, at_bound ? " (its bound)" : ""));
  }
  if (odd.empty()) return "";
  const bool few = dense_rows < d.fitted.size();
  const std::string them = odd.size() == 1 ? "it" : "them";
  return fmt::format(
      "{} dense row{} fitted {} parameters and {} moved to {} bound or by more than 2x from the preset: {}", dense_rows,
      dense_rows == 1 ? "" : "s", d.fitted.size(), fmt::join(odd, ", "), odd.size() == 1 ? "its" : "a",
      few ? fmt::format("the rows do not determine {}; fit fewer with --fit (e.g. --fit gemm) or add "
                        "runs that exercise {}",
                        them, them)
          : fmt::format("{} may stand for what the model does not time in these runs, or for "
                        "what they barely exercise (--fit names the parameters to fit)",
                        odd.size() == 1 ? "it" : "they"));
}

// One calibration per accelerator: fitted on the given rows of that accelerator. Each fit's
// residuals are in the order of that accelerator's rows as given. Six stages: the dense
// efficiencies `dense_fit` names on the BF16 dense models' rows (from the preset); then
// moe_block_parameter alone on the BF16 rows of MoE blocks alone; then each FP8 recipe's share
// alone on its FP8 rows (tensorwise, blockwise, MXFP8); then the MoE passes' host time per local
// expert alone on the rows of MoE models' whole steps (fit_stage); each stage holds what the ones before it fitted (the
// preset's where they had no rows). Fitted together, a few MoE rows trade the dense parameters
// against each other and the dense rows' fit (one Llama 3 row and four MoE-layer rows sent attention to
// 0.18).
std::map<std::string, FitResult> fit_per_accelerator(const std::vector<MeasuredRun>& rows, const DenseFit& dense_fit,
                                                     RowsProgress& progress, unsigned jobs) {
  std::map<std::string, std::vector<const MeasuredRun*>> by_hw;
  for (const auto& r : rows) by_hw[r.hw].push_back(&r);
  std::map<std::string, FitResult> out;
  for (const auto& [hw, given] : by_hw) {
    // The same rows fit the same whatever order the files came in (the fit's path depends on the
    // order its sums are taken in): fitted by measured value, then line and table.
    std::vector<std::size_t> order(given.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&given = given](std::size_t a, std::size_t b) {
      return std::tie(given[a]->value, given[a]->line, given[a]->table) <
             std::tie(given[b]->value, given[b]->line, given[b]->table);
    });
    std::vector<const MeasuredRun*> stage_rows[kFitStages];
    for (const std::size_t i : order) stage_rows[static_cast<int>(fit_stage(*given[i]))].push_back(given[i]);
    const auto& [dense, moe, fp8, fp8_blockwise, fp8_mx, host, fp4] = stage_rows;
    Efficiency e = find_cluster_preset(hw)->accelerator.efficiency;
    FitResult fits[kFitStages];
    if (!dense.empty()) {
      // The dense parameters --fit names move; the others keep the preset's values.
      const std::vector<double> all = eff_vector(e, 0);
      std::vector<double> start;
      for (const int i : dense_fit.fitted) start.push_back(all[static_cast<std::size_t>(i)]);
      const auto free = [all, &dense_fit](const std::vector<double>& p) {
        std::vector<double> v = all;
        for (std::size_t k = 0; k < p.size(); ++k) v[static_cast<std::size_t>(dense_fit.fitted[k])] = p[k];
        return eff_of(v);
      };
      fits[0] = fit_rows(dense, start, free, progress, jobs);
      e = free(fits[0].params);
    }
    double Efficiency::*const block = moe_block_parameter(!dense.empty());
    fits[1] = fit_one(moe, e, block, e.*block, 0.05, 1.0, progress, jobs);
    fits[2] = fit_one(fp8, e, &Efficiency::fp8, e.fp8, 0.05, 1.0, progress, jobs);
    fits[3] = fit_one(fp8_blockwise, e, &Efficiency::fp8_blockwise, e.fp8_blockwise, 0.05, 1.0, progress, jobs);
    fits[4] = fit_one(fp8_mx, e, &Efficiency::fp8_mx, e.fp8_mx, 0.05, 1.0, progress, jobs);
    fits[6] = fit_one(fp4, e, &Efficiency::fp4, e.fp4, 0.05, 1.0, progress, jobs);
    // A time from 0.1 us to 100 ms per pass and local expert, started at 0.1 ms where the preset
    // has none.
    fits[5] = fit_one(host, e, &Efficiency::moe_host_per_expert,
                      e.moe_host_per_expert > 0 ? e.moe_host_per_expert : 1e-4, 1e-7, 0.1, progress, jobs);
    // One result: the efficiencies, each row's residual in the order given, the rms over all.
    FitResult all;
    all.params = eff_vector(e, static_cast<int>(std::size(kEffFields)) - 6);
    std::map<const MeasuredRun*, double> residual;
    for (int s = 0; s < kFitStages; ++s) {
      all.iterations += fits[s].iterations;
      for (std::size_t k = 0; k < stage_rows[s].size(); ++k) residual[stage_rows[s][k]] = fits[s].residuals[k];
    }
    double sum = 0;
    for (const MeasuredRun* r : given) {
      all.residuals.push_back(residual.at(r));
      sum += residual.at(r) * residual.at(r);
    }
    all.rms = std::sqrt(sum / static_cast<double>(given.size()));
    out[hw] = std::move(all);
  }
  return out;
}

// A share of the GEMM efficiency is shown where it is not 1, the MoE host time where it is not 0
// (fitted on their rows, or given).
std::string eff_text(const Efficiency& e) {
  return fmt::format(
      "gemm {:.3f}, attention {:.3f}, memory {:.3f}, fabric {:.3f}, network {:.3f}, contention {:.3f}{}{}{}{}{}{}",
      e.gemm, e.attention, e.memory, e.fabric, e.network, e.contention,
      e.experts != 1.0 ? fmt::format(", experts {:.3f}", e.experts) : "",
      e.fp8 != 1.0 ? fmt::format(", fp8 {:.3f}", e.fp8) : "",
      e.fp8_blockwise != 1.0 ? fmt::format(", fp8_blockwise {:.3f}", e.fp8_blockwise) : "",
      e.fp8_mx != 1.0 ? fmt::format(", fp8_mx {:.3f}", e.fp8_mx) : "",
      e.fp4 != 1.0 ? fmt::format(", fp4 {:.3f}", e.fp4) : "",
      e.moe_host_per_expert != 0 ? fmt::format(", moe_host_per_expert {:.1f} us", e.moe_host_per_expert * 1e6) : "");
}

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

// --efficiency's six comma-separated numbers, seven with the routed experts' share, eight with
// the tensorwise FP8 GEMMs' share, nine with the MoE passes' host time per local expert in
// seconds, ten with the blockwise FP8 GEMMs' share, eleven with the MXFP8 GEMMs'.
Efficiency parse_efficiencies(const std::string& text) {
  std::vector<double> v;
  std::string cur;
  for (char ch : text + ",") {
    if (ch == ',') {
      std::size_t used = 0;
      try {
        v.push_back(std::stod(cur, &used));
      } catch (const std::exception&) { used = 0; }
      if (used == 0 || used != cur.size())
        throw InputError("--efficiency", 0, "", fmt::format("'{}' is not a number", cur));
      cur.clear();
    } else
      cur += ch;
  }
  if (v.size() < 6 || v.size() > std::size(kEffFields))
    throw InputError("--efficiency", 0, "",
                     "expected six to twelve numbers: gemm,attention,memory,fabric,network,"
                     "contention[,experts[,fp8[,moe_host_per_expert seconds[,fp8_blockwise[,fp8_mx[,fp4]]]]]]");
  for (std::size_t i = 0; i < v.size(); ++i) {
    // contention: a share of time lost; moe_host_per_expert: seconds up to one; 0 allowed for
    // both. An efficiency under 0.01 is no accelerator, and 1e-300 made every step past the time
    // limit.
    const bool share = i == 5 || i == 8;
    const double least = share ? 0.0 : kMinEfficiency;
    if (!(v[i] >= least) || !(v[i] <= 1))
      throw InputError("--efficiency", 0, "",
                       fmt::format("{} {} is not a fraction in [{}, 1]", kEffNames[i], v[i], least));
  }
  return eff_of(v);
}

}  // namespace

namespace {

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
    for (std::size_t i = 0; i < v.size(); ++i) j[kEffNames[i]] = v[i];
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
void export_rows(const CheckAgainstArgs& a, const std::vector<MeasuredRun>& rows, const std::vector<std::size_t>& chosen,
                 const Calibrations& c, const std::vector<RowPrediction>& predicted) {
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
  const auto rows = read_all(a.files);
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
// user fitting their own runs should know which of them the model cannot place.
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
  auto rows = read_all(a.files);
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
