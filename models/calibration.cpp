#include "models/calibration.hpp"

#include <algorithm>
#include <cmath>

#include <Eigen/Dense>

namespace stepsim {

namespace {
std::vector<double> residuals_of(const std::vector<double>& pred, const std::vector<double>& measured) {
  std::vector<double> r(measured.size());
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = std::log(pred[i] / measured[i]);
  return r;
}
double sumsq(const std::vector<double>& r) {
  double s = 0;
  for (double x : r) s += x * x;
  return s;
}
// A parameter at a bound that the cost's gradient pushes further out is held there: its column
// leaves the solve (dx = 0). Left in, the step of the others assumes it moves; clamped, it does
// not, and the step fails or crawls, stopping the fit short of the best fit within the bounds.
void hold_at_bounds(Eigen::MatrixXd& J, const Eigen::VectorXd& r, const std::vector<double>& p, double lo, double hi) {
  const Eigen::VectorXd g = J.transpose() * r;  // half the gradient of the cost in log p
  for (Eigen::Index j = 0; j < J.cols(); ++j) {
    const double x = p[static_cast<std::size_t>(j)];
    if ((x <= lo && g(j) > 0) || (x >= hi && g(j) < 0)) J.col(j).setZero();
  }
}
}  // namespace

FitResult fit_log_least_squares(const BatchPredict& predict_sets, const std::vector<double>& measured,
                                std::vector<double> start, double lo, double hi, int max_iterations) {
  const std::size_t n = start.size(), m = measured.size();
  const auto predict = [&](const std::vector<double>& p) { return predict_sets({p}).front(); };
  auto clamp = [&](std::vector<double> p) {
    for (double& x : p) x = std::clamp(x, lo, hi);
    return p;
  };
  std::vector<double> p = clamp(std::move(start));
  std::vector<double> r = residuals_of(predict(p), measured);
  double cost = sumsq(r);
  double lambda = 1e-3;
  FitResult out;
  for (int it = 0; it < max_iterations; ++it) {
    out.iterations = it + 1;
    Eigen::MatrixXd J(m, n);
    const double step = 1e-3;
    std::vector<std::vector<double>> columns(n, p);
    for (std::size_t j = 0; j < n; ++j) columns[j][j] = p[j] * std::exp(step);  // d/d(log p)
    const auto predicted = predict_sets(columns);
    for (std::size_t j = 0; j < n; ++j) {
      const auto rq = residuals_of(predicted[j], measured);
      for (std::size_t i = 0; i < m; ++i)
        J(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = (rq[i] - r[i]) / step;
    }
    Eigen::VectorXd rv(m);
    for (std::size_t i = 0; i < m; ++i) rv(static_cast<Eigen::Index>(i)) = r[i];
    hold_at_bounds(J, rv, p, lo, hi);
    bool improved = false;
    // Fewer rows than parameters leave a family of exact fits. Marquardt's damping (scaled by
    // each parameter's own sensitivity) then moves the parameters a row barely exercises as far
    // as the ones it does (one Llama 3 row sent attention, memory, fabric and network to their
    // bounds); Levenberg's (the same for all) tends, as it falls, to the smallest change in log p
    // that fits (Nocedal & Wright, Numerical Optimization, sec. 10.3): the preset moves only as
    // far as the rows ask, each parameter by its share in them.
    // Damped more and more until a step gains: after a run of good steps lambda is small, and a
    // fixed number of tries (8, x4 each) gave up on the first hard step. Done when the step no
    // longer moves any parameter (1e-7 in log p), or the damping is beyond any use (4^30).
    for (int tries = 0; tries < 30 && !improved; ++tries) {
      Eigen::MatrixXd A = J.transpose() * J;
      if (m >= n)
        A.diagonal() += lambda * (A.diagonal().array() + 1e-9).matrix();  // Marquardt: scale-free
      else
        A.diagonal().array() += lambda;  // Levenberg: see above
      const Eigen::VectorXd dx = A.ldlt().solve(-J.transpose() * rv);
      if (dx.size() == 0 || !(dx.cwiseAbs().maxCoeff() >= 1e-7)) break;
      std::vector<double> q(n);
      for (std::size_t j = 0; j < n; ++j)
        q[j] = p[j] * std::exp(std::clamp(dx(static_cast<Eigen::Index>(j)), -0.5, 0.5));
      q = clamp(q);
      const auto rq = residuals_of(predict(q), measured);
      const double c = sumsq(rq);
      if (c < cost) {
        improved = true;
        const double gain = cost - c;
        p = q;
        r = rq;
        cost = c;
        lambda = std::max(1e-7, lambda / 3);
        // Converged when a step gains less than 0.01 % of the cost (the rms moves by less than
        // 0.005 %, below the printed digits): each further step costs a simulation per row and
        // parameter. Where two parameters trade off along a flat valley (attention and fabric on
        // the validation rows) the stop leaves them where the path reached: the caller gives the
        // rows in a fixed order so that the same rows always take the same path. Not after a step
        // cut to 0.5: its small gain says the path is long, not that the fit is near its end.
        const bool cut = dx.cwiseAbs().maxCoeff() > 0.5;
        if (gain < 1e-4 * c + 1e-12 && !cut) it = max_iterations;
      } else {
        lambda *= 4;
      }
    }
    if (!improved) break;
  }
  out.params = p;
  out.residuals = r;
  out.rms = m > 0 ? std::sqrt(cost / static_cast<double>(m)) : 0;
  return out;
}

}  // namespace stepsim
