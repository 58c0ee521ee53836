#include "models/monte_carlo.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>

#include "sim/parallel_for.hpp"

namespace stepsim {

void for_each_run(int runs, int threads, const std::function<void(int)>& run,
                  const std::function<void(int)>& progress) {
  if (runs <= 0) return;
  // A failed run stops the runs after it from starting (more of them would likely fail the same
  // way, each after its share of the work guard); the runs before it still finish, so the first
  // failing run is always found and its error, the smallest index's, is parallel_for's to rethrow.
  std::atomic<int> first_failed{runs};
  std::atomic<int> done{0};
  parallel_for(static_cast<std::size_t>(runs), threads <= 0 ? all_cores() : static_cast<unsigned>(threads),
               [&](std::size_t k) {
                 const int i = static_cast<int>(k);
                 if (i > first_failed.load()) return;
                 try {
                   run(i);
                 } catch (...) {
                   int f = first_failed.load();  // first_failed = min(first_failed, i)
                   while (i < f && !first_failed.compare_exchange_weak(f, i)) {}
                   throw;
                 }
                 const int d = done.fetch_add(1) + 1;
                 if (progress) progress(d);
               });
}

MeanEstimate estimate_mean(const std::vector<double>& xs) {
  MeanEstimate m;
  if (xs.empty()) return m;
  double sum = 0;
  for (double x : xs) sum += x;
  m.mean = sum / static_cast<double>(xs.size());
  // One correction pass (the corrected two-pass algorithm): sum / n is off by the sum's rounding,
  // which gave equal values a small non-zero sd; after it, x - mean is exactly 0 for them.
  double off = 0;
  for (double x : xs) off += x - m.mean;
  m.mean += off / static_cast<double>(xs.size());
  if (xs.size() > 1) {
    double ss = 0;
    for (double x : xs) ss += (x - m.mean) * (x - m.mean);
    m.sd = std::sqrt(ss / static_cast<double>(xs.size() - 1));
    m.se = m.sd / std::sqrt(static_cast<double>(xs.size()));
  }
  return m;
}

Time nearest_rank(const std::vector<Time>& sorted, double percent) {
  if (sorted.empty()) return 0;
  const double n = static_cast<double>(sorted.size());
  // percent x n first: exact for whole percents, where percent / 100 x n is not (7 / 100.0 x 100
  // is 7.000000000000001, and its ceiling took the 8th value for P7 of 100).
  auto rank = static_cast<std::size_t>(std::ceil(percent * n / 100.0));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

TimeDistribution describe_times(std::vector<Time> values) {
  TimeDistribution d;
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  std::vector<double> secs;
  secs.reserve(values.size());
  for (Time v : values) secs.push_back(to_s(v));
  d.seconds = estimate_mean(secs);
  d.min = values.front();
  d.max = values.back();
  d.p50 = nearest_rank(values, 50);
  d.p90 = nearest_rank(values, 90);
  d.p99 = nearest_rank(values, 99);
  return d;
}

Histogram make_histogram(const std::vector<Time>& values, int bins) {
  Histogram h;
  if (values.empty() || bins <= 0) return h;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  h.low = *lo;
  if (*hi == *lo) {
    h.width = 0;
    h.counts = {static_cast<int>(values.size())};
    return h;
  }
  const Time span = *hi - *lo;
  h.width = (span + bins - 1) / bins;  // rounded up so that max falls in the last bin
  // With the width rounded up, a small span (below (bins - 1)^2 ns) needs fewer bins to reach max:
  // the ones past it would lie wholly beyond the values.
  h.counts.assign(static_cast<std::size_t>(std::min<Time>(bins, span / h.width + 1)), 0);
  for (Time v : values) {
    auto b = static_cast<std::size_t>((v - h.low) / h.width);
    if (b >= h.counts.size()) b = h.counts.size() - 1;
    ++h.counts[b];
  }
  return h;
}

}  // namespace stepsim
