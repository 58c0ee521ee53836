#include "cli/commands/measured_fit.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <map>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands/commands.hpp"
#include "cli/input/budget.hpp"
#include "cli/input/input_files.hpp"
#include "cli/input/job_step_input.hpp"
#include "cli/reports/job_step_report.hpp"
#include "sim/parallel_for.hpp"

namespace stepsim::cli {

namespace {

// The efficiency parameters in --efficiency's and the fit vector's order.
constexpr std::size_t kEffCount = std::size(kEfficiencyFields);
double Efficiency::*eff_field(std::size_t i) { return kEfficiencyFields[i].field; }

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

// What the MoE blocks' rows fit: the routed experts' share of the GEMM efficiency where dense rows
// fitted that efficiency, else the GEMM efficiency itself (a share of a preset's guess would mean
// nothing; the blocks' rows time GEMMs directly).
double Efficiency::*moe_block_parameter(bool dense_fitted) {
  return dense_fitted ? &Efficiency::experts : &Efficiency::gemm;
}

}  // namespace

const char* efficiency_name(std::size_t i) { return kEfficiencyFields[i].name; }

std::vector<double> eff_vector(const Efficiency& e, int extra) {
  std::vector<double> v;
  for (std::size_t i = 0; i < kDenseEfficiencies + static_cast<std::size_t>(extra); ++i) v.push_back(e.*eff_field(i));
  return v;
}
int extra_shown(const Efficiency& e) {
  const Efficiency defaults;
  int shown = 0;
  for (std::size_t i = kDenseEfficiencies; i < kEffCount; ++i)
    if (e.*eff_field(i) != defaults.*eff_field(i)) shown = static_cast<int>(i - kDenseEfficiencies) + 1;
  return shown;
}
Efficiency eff_of(const std::vector<double>& v) {
  Efficiency e;
  for (std::size_t i = 0; i < v.size(); ++i) e.*eff_field(i) = v[i];
  return e;
}

std::string figure(double v) { return std::abs(v) >= 1e4 ? fmt::format("{:.0f}", v) : fmt::format("{:.4g}", v); }

RowPrediction predict_row(const MeasuredRun& row, const Efficiency& e) {
  JobStepSpec spec = row.spec;
  spec.cluster.accelerator.efficiency = e;
  JobStepRun run;
  try {
    run = run_job_step(spec);
  } catch (const SpecError& x) { throw row_error(row, x.key(), x.what()); }
  return {predicted_metric(row, run.result), run.result.step_time, run.result.memory.total(), run.result.capacity};
}

std::vector<MeasuredRun> read_measured_files(const std::vector<std::string>& files) {
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

DenseFit parse_dense_fit(const std::vector<std::string>& names) {
  DenseFit d;
  if (names.empty()) return d;
  d.fitted.clear();
  for (const auto& name : names) {
    const auto* at = std::find_if(std::begin(kEfficiencyFields), std::begin(kEfficiencyFields) + kDenseEfficiencies,
                                  [&name](const EfficiencyField& f) { return name == f.name; });
    if (at == std::begin(kEfficiencyFields) + kDenseEfficiencies)
      throw InputError("--fit", 0, "",
                       fmt::format("'{}' is not one of the six dense efficiencies (gemm, attention, memory, fabric, "
                                   "network, contention)",
                                   name));
    const int i = static_cast<int>(at - std::begin(kEfficiencyFields));
    if (std::find(d.fitted.begin(), d.fitted.end(), i) != d.fitted.end())
      throw InputError("--fit", 0, "", fmt::format("'{}' named twice", name));
    d.fitted.push_back(i);
  }
  std::sort(d.fitted.begin(), d.fitted.end());
  return d;
}

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

std::string undetermined(const std::vector<MeasuredRun>& rows, const DenseFit& d, const Efficiency& preset,
                         const Efficiency& fitted) {
  std::size_t dense_rows = 0;
  for (const auto& r : rows) dense_rows += fit_stage(r) == FitStage::Dense;
  if (dense_rows == 0) return "";
  std::vector<std::string> odd;
  for (const int i : d.fitted) {
    const double from = preset.*eff_field(i), to = fitted.*eff_field(i);
    const bool at_bound = to <= 0.05 * 1.001 || to >= 0.999;
    const bool far = from > 0 && (to > 2 * from || to < from / 2);
    if (at_bound || far)
      odd.push_back(fmt::format("{} {:.3f} -> {:.3f}{}", efficiency_name(i), from, to, at_bound ? " (its bound)" : ""));
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
    all.params = eff_vector(e, static_cast<int>(kEffCount - kDenseEfficiencies));
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

std::string eff_text(const Efficiency& e) {
  std::string text;
  for (const EfficiencyField& f : shown_efficiencies(e)) {
    const double v = e.*f.field;
    text += fmt::format("{}{} ", text.empty() ? "" : ", ", f.name) +
            (f.kind == EfficiencyKind::Seconds ? fmt::format("{:.1f} us", v * 1e6) : fmt::format("{:.3f}", v));
  }
  return text;
}

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
  if (v.size() < kDenseEfficiencies || v.size() > kEffCount)
    throw InputError("--efficiency", 0, "",
                     "expected six to twelve numbers: gemm,attention,memory,fabric,network,"
                     "contention[,experts[,fp8[,moe_host_per_expert seconds[,fp8_blockwise[,fp8_mx[,fp4]]]]]]");
  for (std::size_t i = 0; i < v.size(); ++i) {
    // contention: a share of time lost; moe_host_per_expert: seconds up to one; 0 allowed for
    // both. An efficiency under 0.01 is no accelerator, and 1e-300 made every step past the time
    // limit.
    const bool share = kEfficiencyFields[i].kind != EfficiencyKind::Fraction;
    const double least = share ? 0.0 : kMinEfficiency;
    if (!(v[i] >= least) || !(v[i] <= 1))
      throw InputError("--efficiency", 0, "",
                       fmt::format("{} {} is not a fraction in [{}, 1]", efficiency_name(i), v[i], least));
  }
  return eff_of(v);
}

}  // namespace stepsim::cli
