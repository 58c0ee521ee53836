// fit_log_least_squares (models/calibration.hpp) on random synthetic predictors whose true parameters
// are known: each measurement is a sum of terms a_ij / p_j (work / efficiency) or the max of two
// such sums over disjoint parameters (compute overlapped with communication). Checked against
//  * the truth, when the measurements are the predictor at parameters within [lo, hi]: the fit
//    recovers them to the error that its own residuals allow (|J^+| |r|, J the log-Jacobian at
//    the truth, computed here analytically), with ~0 residuals;
//  * the predictor itself: the returned residuals are log(predict(params) / measured), recomputed
//    here; rms is their root mean square; params stay within [lo, hi];
//  * an independent optimizer (a coordinate pattern search in log space, projected on the bounds),
//    when the measurements carry noise or the truth lies outside [lo, hi]: the fit's cost is no
//    worse than the best the search finds;
//  * a second run: the same result, bit for bit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "models/calibration.hpp"

using namespace stepsim;

namespace {

using Vec = std::vector<double>;

double uniform(std::mt19937_64& rng, double lo, double hi) {
  return lo + (hi - lo) * static_cast<double>(rng() >> 11) * 0x1.0p-53;
}
double log_uniform(std::mt19937_64& rng, double lo, double hi) {
  return std::exp(uniform(rng, std::log(lo), std::log(hi)));
}
// Box-Muller by hand: std::normal_distribution's draws differ between standard libraries.
double normal(std::mt19937_64& rng) {
  const double u = uniform(rng, 1e-300, 1), v = uniform(rng, 0, 1);
  return std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * v);
}

// One measurement: sum_j a_j / p_j, or max(that, sum_j b_j / p_j) with a and b on disjoint params.
struct Row {
  Vec a, b;
  bool is_max = false;
};
struct Problem {
  std::size_t n = 0;
  std::vector<Row> rows;
};

double dot_inv(const Vec& c, const Vec& p) {
  double s = 0;
  for (std::size_t j = 0; j < p.size(); ++j) s += c[j] / p[j];
  return s;
}
double predict_row(const Row& r, const Vec& p) {
  return r.is_max ? std::max(dot_inv(r.a, p), dot_inv(r.b, p)) : dot_inv(r.a, p);
}
Vec predict(const Problem& pr, const Vec& p) {
  Vec out;
  for (const Row& r : pr.rows) out.push_back(predict_row(r, p));
  return out;
}
BatchPredict batch_of(const Problem& pr) {
  return [&pr](const std::vector<Vec>& sets) {
    std::vector<Vec> out;
    for (const Vec& p : sets) out.push_back(predict(pr, p));
    return out;
  };
}

Vec random_coefficients(std::mt19937_64& rng, std::size_t n, const std::vector<bool>& allowed) {
  Vec c(n, 0.0);
  bool any = false;
  for (std::size_t j = 0; j < n; ++j)
    if (allowed[j] && rng() % 5 < 3) c[j] = log_uniform(rng, 1e-3, 10), any = true;
  if (!any) {
    std::vector<std::size_t> ok;
    for (std::size_t j = 0; j < n; ++j)
      if (allowed[j]) ok.push_back(j);
    c[ok[rng() % ok.size()]] = log_uniform(rng, 1e-3, 10);
  }
  return c;
}

// At least n plain sums (they alone pin the truth: linear in 1/p), then up to n max() rows that
// split the params into a "compute" and a "communication" side.
Problem random_problem(std::mt19937_64& rng, bool with_max) {
  Problem pr;
  pr.n = 1 + rng() % 5;
  const std::size_t sums = pr.n + rng() % (2 * pr.n + 1), maxes = with_max && pr.n > 1 ? rng() % (pr.n + 1) : 0;
  for (std::size_t i = 0; i < sums; ++i)
    pr.rows.push_back({random_coefficients(rng, pr.n, std::vector<bool>(pr.n, true)), {}});
  for (std::size_t i = 0; i < maxes; ++i) {
    std::vector<bool> side(pr.n);
    for (std::size_t j = 0; j < pr.n; ++j) side[j] = j == 0 || (j != 1 && rng() % 2 == 0);  // both sides non-empty
    std::vector<bool> other(pr.n);
    for (std::size_t j = 0; j < pr.n; ++j) other[j] = !side[j];
    pr.rows.push_back({random_coefficients(rng, pr.n, side), random_coefficients(rng, pr.n, other), true});
  }
  return pr;
}

// d log(pred_i) / d log(p_j) at p, from the active side of each row (no kink at random truths).
std::vector<Vec> log_jacobian(const Problem& pr, const Vec& p) {
  std::vector<Vec> J;
  for (const Row& r : pr.rows) {
    const Vec& c = r.is_max && dot_inv(r.b, p) > dot_inv(r.a, p) ? r.b : r.a;
    const double total = dot_inv(c, p);
    Vec row(pr.n);
    for (std::size_t j = 0; j < pr.n; ++j) row[j] = -(c[j] / p[j]) / total;
    J.push_back(row);
  }
  return J;
}

// sqrt(trace((J^T J)^-1)) >= |J^+|_2, by Gauss-Jordan; infinity when J^T J is singular.
double pinv_bound(const std::vector<Vec>& J, std::size_t n) {
  std::vector<Vec> M(n, Vec(2 * n, 0.0));
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = 0; b < n; ++b)
      for (const Vec& row : J) M[a][b] += row[a] * row[b];
    M[a][n + a] = 1;
  }
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t piv = c;
    for (std::size_t r = c; r < n; ++r)
      if (std::abs(M[r][c]) > std::abs(M[piv][c])) piv = r;
    if (std::abs(M[piv][c]) < 1e-14) return INFINITY;
    std::swap(M[c], M[piv]);
    const double d = M[c][c];
    for (double& x : M[c]) x /= d;
    for (std::size_t r = 0; r < n; ++r)
      if (r != c) {
        const double f = M[r][c];
        for (std::size_t k = 0; k < 2 * n; ++k) M[r][k] -= f * M[c][k];
      }
  }
  double tr = 0;
  for (std::size_t a = 0; a < n; ++a) tr += M[a][n + a];
  return std::sqrt(tr);
}

Vec log_residuals(const Problem& pr, const Vec& p, const Vec& measured) {
  const Vec pred = predict(pr, p);
  Vec r;
  for (std::size_t i = 0; i < pred.size(); ++i) r.push_back(std::log(pred[i] / measured[i]));
  return r;
}
double sumsq(const Vec& r) {
  double s = 0;
  for (double x : r) s += x * x;
  return s;
}

// The independent optimizer: coordinate steps of +-h in log p, projected on [lo, hi], h halved
// whenever no coordinate improves, from 1 down to 1e-9; at most 200,000 predictions (an
// ill-conditioned valley can take far more), so its cost is an upper bound on the optimum's.
double pattern_search_cost(const Problem& pr, const Vec& measured, Vec p, double lo, double hi) {
  double best = sumsq(log_residuals(pr, p, measured));
  int evaluations = 0;
  for (double h = 1; h > 1e-9 && evaluations < 200000;) {
    bool moved = false;
    for (std::size_t j = 0; j < pr.n; ++j)
      for (const double s : {h, -h}) {
        Vec q = p;
        q[j] = std::clamp(p[j] * std::exp(s), lo, hi);
        const double c = sumsq(log_residuals(pr, q, measured));
        ++evaluations;
        if (c < best) best = c, p = q, moved = true;
      }
    if (!moved) h /= 2;
  }
  return best;
}

// What holds of every fit: params within bounds, residuals and rms as the predictor gives them.
void check_consistent(const Problem& pr, const Vec& measured, const FitResult& f, double lo, double hi) {
  REQUIRE(f.params.size() == pr.n);
  for (double x : f.params) {
    CHECK(x >= lo);
    CHECK(x <= hi);
  }
  const Vec r = log_residuals(pr, f.params, measured);
  REQUIRE(f.residuals.size() == r.size());
  for (std::size_t i = 0; i < r.size(); ++i) CHECK(f.residuals[i] == Approx(r[i]).margin(1e-12));
  CHECK(f.rms == Approx(std::sqrt(sumsq(r) / static_cast<double>(r.size()))).margin(1e-15));
}

Vec random_params(std::mt19937_64& rng, std::size_t n, double lo, double hi) {
  Vec p(n);
  for (double& x : p) x = log_uniform(rng, lo, hi);
  return p;
}

}  // namespace

TEST_CASE("calibration recovers known parameters of random predictors", "[calibration][properties]") {
  std::mt19937_64 rng(20240611);
  int fits = 0, redrawn = 0;
  while (fits < 1000) {
    const Problem pr = random_problem(rng, true);
    const double lo = log_uniform(rng, 0.01, 0.2), hi = log_uniform(rng, 0.8, 3);
    const Vec truth = random_params(rng, pr.n, lo, hi);
    // Only problems whose truth the measurements pin down (|J^+| <= 50: the fit's residual bounds
    // the parameter error); the plain sums have full rank with these draws most of the time.
    const double bound = pinv_bound(log_jacobian(pr, truth), pr.n);
    if (!(bound <= 50)) {
      ++redrawn;
      continue;
    }
    ++fits;
    const Vec measured = predict(pr, truth);
    // A max() row makes the cost non-convex: from far away the fit may rightly stop in another
    // local minimum (a side that is not the truth's active), so those start within 25 % of the truth.
    const bool has_max = std::any_of(pr.rows.begin(), pr.rows.end(), [](const Row& r) { return r.is_max; });
    Vec start = random_params(rng, pr.n, lo, hi);
    if (has_max)
      for (std::size_t j = 0; j < pr.n; ++j)
        start[j] = std::clamp(truth[j] * std::exp(uniform(rng, -0.25, 0.25)), lo, hi);
    const FitResult f = fit_log_least_squares(batch_of(pr), measured, start, lo, hi);
    INFO("fit " << fits << ": " << pr.n << " params, " << pr.rows.size() << " rows, |J+| " << bound);
    check_consistent(pr, measured, f, lo, hi);
    // Exact data: the stop (a step gaining < 1e-4 of the cost + 1e-12) comes once the cost is below
    // ~1e-12, i.e. rms <= 1e-6; to first order the log-parameter error is J^+ r (x2 for the rest).
    CHECK(f.rms <= 1e-6);
    const double err_bound = 2 * bound * std::sqrt(sumsq(f.residuals)) + 1e-12;
    for (std::size_t j = 0; j < pr.n; ++j) CHECK(std::abs(std::log(f.params[j] / truth[j])) <= err_bound);
    const FitResult again = fit_log_least_squares(batch_of(pr), measured, start, lo, hi);
    CHECK(again.params == f.params);
    CHECK(again.residuals == f.residuals);
    CHECK(again.iterations == f.iterations);
  }
  CHECK(redrawn < fits);  // the gate keeps most draws: the property is not vacuous
}

TEST_CASE("calibration with noise or a truth outside the bounds reaches the best fit within them",
          "[calibration][properties]") {
  std::mt19937_64 rng(77031);
  int at_bound = 0;
  for (int k = 0; k < 1000; ++k) {
    // Plain sums only: the cost is smooth, so the pattern search converges to the optimum.
    const Problem pr = random_problem(rng, false);
    const double lo = 0.05, hi = 1.0;
    const bool outside = k % 2 == 0;
    // Outside: the truth drawn from [lo / 4, 4 hi], so that some params want to leave [lo, hi].
    const Vec truth = random_params(rng, pr.n, outside ? lo / 4 : lo, outside ? 4 * hi : hi);
    Vec measured = predict(pr, truth);
    const double sigma = outside ? 0.0 : 0.05;
    for (double& y : measured) y *= std::exp(sigma * normal(rng));
    const Vec start = random_params(rng, pr.n, lo, hi);
    const FitResult f = fit_log_least_squares(batch_of(pr), measured, start, lo, hi);
    INFO("case " << k << ": " << pr.n << " params, " << pr.rows.size() << " rows, outside " << outside);
    check_consistent(pr, measured, f, lo, hi);
    const double best = pattern_search_cost(pr, measured, start, lo, hi);
    // The fit stops when a full step gains < 1e-4 of the cost: within 1e-3 of the optimum is its
    // margin; and 1e-8 per row (an rms of 1e-4, far below any measurement's precision) where the
    // optimum is ~0 at the end of an ill-conditioned valley.
    const double m = static_cast<double>(pr.rows.size());
    CHECK(sumsq(f.residuals) <= best * (1 + 1e-3) + 1e-8 * m);
    for (double x : f.params) at_bound += x == lo || x == hi;
  }
  CHECK(at_bound > 200);  // the bounds were active in many fits
}

TEST_CASE("with fewer measurements than parameters the fit makes the smallest change that fits", "[calibration]") {
  // log(prediction) = sum_j a_j log p_j: one measurement, three parameters. Every p on the plane
  // a . log p = log(measured) fits exactly; the nearest to the start in log p moves each
  // parameter by a_j (log(measured) - a . log p0) / |a|^2: the one the row barely sees barely moves.
  const std::vector<double> a = {1.0, 0.1, 0.02};
  const BatchPredict predict = [&](const std::vector<std::vector<double>>& sets) {
    std::vector<std::vector<double>> out;
    for (const auto& p : sets) {
      double log_pred = 0;
      for (std::size_t j = 0; j < a.size(); ++j) log_pred += a[j] * std::log(p[j]);
      out.push_back({std::exp(log_pred)});
    }
    return out;
  };
  const std::vector<double> start = {0.7, 0.55, 0.8};
  const double target = 1.1;  // log-prediction at the start, plus 0.1 (about 10 % faster)
  double at_start = 0, norm2 = 0;
  for (std::size_t j = 0; j < a.size(); ++j) {
    at_start += a[j] * std::log(start[j]);
    norm2 += a[j] * a[j];
  }
  const double measured = std::exp(at_start + std::log(target));
  const FitResult f = fit_log_least_squares(predict, {measured}, start, 0.05, 1.0);
  CHECK(std::abs(f.residuals[0]) < 1e-4);
  for (std::size_t j = 0; j < a.size(); ++j) {
    const double expect = std::log(start[j]) + a[j] * std::log(target) / norm2;
    INFO("parameter " << j);
    CHECK(std::log(f.params[j]) == Approx(expect).margin(2e-3));
  }
}
