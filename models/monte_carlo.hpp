#pragma once
// Monte Carlo plumbing shared by the run-level models: independent runs spread over threads, and
// the summaries people read (mean with its standard error, nearest-rank percentiles, histograms).
// Results never depend on thread timing: run i writes slot i and gets its own seeded generators.
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/time.hpp"

namespace stepsim {

// Calls run(i) for i in [0, runs) on `threads` threads (0 = every hardware thread; parallel_for's
// pool). `progress`, if set, is called from the worker threads with the number of finished runs
// after each one; it must be thread-safe. Once a run fails, the runs after it are not started;
// the error rethrown is the one of the first failing run in index order, whatever the threads.
void for_each_run(int runs, int threads, const std::function<void(int)>& run,
                  const std::function<void(int)>& progress = {});

struct MeanEstimate {
  double mean = 0;
  double sd = 0;  // sample standard deviation (n - 1)
  double se = 0;  // standard error of the mean: sd / sqrt(n)
};
MeanEstimate estimate_mean(const std::vector<double>& xs);

// Completion-time distribution. Percentiles use the nearest-rank rule: Pq is the smallest value
// with at least q% of the runs at or below it.
struct TimeDistribution {
  MeanEstimate seconds;  // of the values in seconds
  Time min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};
TimeDistribution describe_times(std::vector<Time> values);
Time nearest_rank(const std::vector<Time>& sorted, double percent);

// Equal-width bins from min to max (the last bin includes max): `bins` of them, fewer when the span
// is under (bins - 1)^2 ns and the rounded-up width reaches max sooner. One bin when all values are equal.
struct Histogram {
  Time low = 0;
  Time width = 0;
  std::vector<int> counts;
};
Histogram make_histogram(const std::vector<Time>& values, int bins);

}  // namespace stepsim
