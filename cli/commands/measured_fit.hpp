#pragma once
// What `check-against` (cmd_check_against.cpp) and `calibrate` (cmd_calibrate.cpp) share: reading
// measured runs (validation/*.csv), predicting a row at given efficiencies, bounding a run's whole
// work before it simulates, and fitting one calibration per accelerator in stages
// (docs/calibration.md).
#include <atomic>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands/diagnostics.hpp"
#include "cli/input/validation_csv.hpp"
#include "models/accelerators.hpp"
#include "models/calibration.hpp"
#include "sim/time.hpp"

namespace stepsim::cli {

// The efficiency parameters in --efficiency's and the fit vector's order (kEfficiencyFields: the
// six dense ones, then those fitted only where their rows are), by index: the name, and the six
// dense ones and `extra` of the others as a vector; how many of those others to show (up to the
// last not at its default); a vector's values as efficiencies, those past its end at their defaults.
const char* efficiency_name(std::size_t i);
std::vector<double> eff_vector(const Efficiency& e, int extra);
int extra_shown(const Efficiency& e);
Efficiency eff_of(const std::vector<double>& v);
// One line: the six dense efficiencies, then the shares not 1 and the MoE host time not 0.
std::string eff_text(const Efficiency& e);
// --efficiency's six to twelve comma-separated numbers, in eff_vector's order.
Efficiency parse_efficiencies(const std::string& text);

// A measured or predicted figure: 4 significant digits, whole numbers from 10,000 on (not 1.445e+04).
std::string figure(double v);

// The rows of every file given, each labelled FILE:LINE; a file given twice, or more than 10,000
// rows in all, refused.
std::vector<MeasuredRun> read_measured_files(const std::vector<std::string>& files);

// A row's prediction: its metric, and the peak memory per GPU its layout needs in stepsim's model
// beside what the accelerator can use (a measured run that needs more kept less than the model
// counts: the time is predicted as if it fit).
struct RowPrediction {
  double value = 0;
  Time step = 0;
  Bytes memory = 0, usable = 0;
  bool fits() const { return memory <= usable; }
};
RowPrediction predict_row(const MeasuredRun& row, const Efficiency& e);

CLI::Option* add_fit_option(CLI::App* cmd, std::vector<std::string>& fit);
// --jobs: 0 for every core.
unsigned threads_for(unsigned jobs);

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

// The stage a row is fitted in: an MoE model's whole step, the host time its passes expose, in
// BF16 or FP8 (its GEMMs' rate comes from the rows that time GEMMs: a step the host holds up says
// little about them); else its GEMMs in FP8 (on an accelerator with an FP8 peak), by recipe; else
// an MoE block alone (a benchmark of the block: no host time, below); else dense.
enum class FitStage { Dense, MoeBlock, Fp8, Fp8Blockwise, Fp8Mx, MoeHost, Fp4 };
constexpr int kFitStages = 7;
FitStage fit_stage(const MeasuredRun& r);
// What a stage fits, as calibrate's table names it.
const char* fit_stage_name(FitStage s, bool dense_fitted);

// Which of the six dense efficiencies a fit moves (--fit; all six unless named), as indices in
// efficiency_name's order. A user's two or three runs cannot determine six parameters: naming the
// one or two the runs vary (gemm, network) keeps the others at the preset's values.
struct DenseFit {
  std::vector<int> fitted{0, 1, 2, 3, 4, 5};
};
DenseFit parse_dense_fit(const std::vector<std::string>& names);

// The most a run simulates: every row once (check-against's prediction, calibrate's memory check),
// and those `fitted` says once per fit step besides (fit_simulations of their stage's parameters:
// the dense ones `dense` names, else one). Refuses, in the order given, the first row to fit past
// kMaxFitRows (`fewer` says what to do) and the first row whose work takes the sum past --max-ops.
struct RowsWork {
  std::size_t simulations = 0;
  double ops = 0;
};
RowsWork bound_rows_work(const std::vector<MeasuredRun>& rows, const std::function<bool(const MeasuredRun&)>& fitted,
                         const DenseFit& dense, const char* fewer);

// What a dense fit could not pin down: the fitted parameters that ended at a bound of the fit (0.05
// or 1) or moved more than twice or half the preset's value, said with how many rows fitted how many
// parameters and what to do (empty when none). Fewer rows than parameters that the rows cannot fit
// exactly send the spare parameters wherever they shave the residuals: an HBM efficiency of 0.15
// on an H100, say.
std::string undetermined(const std::vector<MeasuredRun>& rows, const DenseFit& d, const Efficiency& preset,
                         const Efficiency& fitted);

// One calibration per accelerator: fitted on the given rows of that accelerator. Each fit's
// residuals are in the order of that accelerator's rows as given. Seven stages (fit_stage): the
// dense efficiencies `dense_fit` names on the BF16 dense models' rows (from the preset); then the
// routed experts' share (or the GEMM efficiency, without dense rows) alone on the BF16 rows of MoE
// blocks alone; then each low-precision recipe's share alone on its rows (tensorwise, blockwise
// and MXFP8 FP8, NVFP4); then the MoE passes' host time per local expert alone on the rows of MoE
// models' whole steps. Each stage holds what the ones before it fitted (the preset's where they
// had no rows). Fitted together, a few MoE rows trade the dense parameters against each other and
// the dense rows' fit (one Llama 3 row and four MoE-layer rows sent attention to 0.18).
std::map<std::string, FitResult> fit_per_accelerator(const std::vector<MeasuredRun>& rows, const DenseFit& dense_fit,
                                                     RowsProgress& progress, unsigned jobs);

}  // namespace stepsim::cli
