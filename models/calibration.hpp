#pragma once
// Fitting efficiency parameters to measurements: damped Gauss-Newton (Levenberg-Marquardt) on
// log residuals, log(predicted / measured), over log-parameters (so they stay positive), with
// Eigen's least-squares solve of (J^T J + lambda diag) dx = -J^T r (with fewer measurements than
// parameters, lambda I: the fit then moves the start as little as it can). The Jacobian is taken
// by forward differences, since a prediction is a simulation, not a formula.
#include <functional>
#include <vector>

namespace stepsim {

struct FitResult {
  std::vector<double> params;
  std::vector<double> residuals;  // log(predicted / measured) at the solution
  double rms = 0;                 // root mean square of the residuals
  int iterations = 0;
};

// `predict(sets)` returns, for each parameter set, one prediction per measurement (same order as
// `measured`). The fit asks for the Jacobian's columns in one call (a set per parameter), so that
// a predictor can spread sets x measurements over threads. Each parameter is kept within [lo, hi].
using BatchPredict = std::function<std::vector<std::vector<double>>(const std::vector<std::vector<double>>&)>;
FitResult fit_log_least_squares(const BatchPredict& predict, const std::vector<double>& measured,
                                std::vector<double> start, double lo, double hi, int max_iterations = 30);

}  // namespace stepsim
