// Monte Carlo summaries on random samples and random job specs, each against another way of
// getting the same figure:
// - estimate_mean: the mean from a long-double sum, the sample variance from the pairwise formula
//   sum_{i<j} (xi - xj)^2 / (n (n - 1)) (no mean involved), se = sd / sqrt(n);
// - nearest_rank / describe_times: a scan of the sorted values for the smallest one with at least
//   q% of the values at or below it, counted in integers (count x 100 >= q x n);
// - make_histogram: counts add up to n, each value lies in its bin's range (found by comparison,
//   not division), the bins are equal and the last one holds the maximum;
// - for_each_run: every run once whatever the threads; on failures, the first failing run's error
//   and every run before it finished;
// - simulate_job: its runs are the single runs simulate_run gives with the same seed, its summary
//   is the summary of those runs computed here, whatever the threads; a run with nothing random
//   has a zero-width distribution at the deterministic completion (closed form where there is one).
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <random>
#include <set>
#include <stdexcept>
#include <string>

#include "models/job.hpp"
#include "models/monte_carlo.hpp"

using namespace stepsim;

namespace {

std::int64_t draw(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
}

// Random times: clustered, spread, with ties, or all equal; sizes from 1 to 400.
std::vector<Time> random_times(std::mt19937_64& rng) {
  const auto n = static_cast<std::size_t>(draw(rng, 1, 400));
  const Time base = draw(rng, 0, 1'000'000) * kSecond;
  const Time spread = std::vector<Time>{0, 3, 100, kSecond, 1000 * kSecond}[rng() % 5];
  std::vector<Time> v;
  for (std::size_t i = 0; i < n; ++i) v.push_back(base + draw(rng, 0, spread));
  return v;
}

// The pairwise form of the sample variance: no mean, no second pass over deviations.
double pairwise_sd(const std::vector<double>& xs) {
  const std::size_t n = xs.size();
  if (n < 2) return 0;
  long double ss = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) ss += (static_cast<long double>(xs[i]) - xs[j]) * (xs[i] - xs[j]);
  return static_cast<double>(std::sqrt(ss / (static_cast<long double>(n) * (n - 1))));
}

double long_mean(const std::vector<double>& xs) {
  long double s = 0;
  for (double x : xs) s += x;
  return xs.empty() ? 0.0 : static_cast<double>(s / xs.size());
}

void check_estimate(const MeanEstimate& got, const std::vector<double>& xs) {
  const double sd = pairwise_sd(xs);
  CHECK(got.mean == Approx(long_mean(xs)).epsilon(1e-12).margin(1e-300));
  CHECK(got.sd == Approx(sd).epsilon(1e-7).margin(1e-9 * std::fabs(long_mean(xs))));
  const double se = xs.size() > 1 ? sd / std::sqrt(static_cast<double>(xs.size())) : 0.0;
  CHECK(got.se == Approx(se).epsilon(1e-7).margin(1e-9 * std::fabs(long_mean(xs))));
}

// Nearest rank by its definition: the smallest value with count(<= it) x 100 >= q x n.
Time by_definition(std::vector<Time> v, int q) {
  std::sort(v.begin(), v.end());
  const auto n = static_cast<std::int64_t>(v.size());
  for (std::int64_t i = 0; i < n; ++i) {
    const Time x = v[static_cast<std::size_t>(i)];
    const auto at_or_below = std::upper_bound(v.begin(), v.end(), x) - v.begin();
    if (at_or_below * 100 >= q * n) return x;
  }
  return v.back();
}

void check_histogram(const std::vector<Time>& v, int bins) {
  const Histogram h = make_histogram(v, bins);
  const Time lo = *std::min_element(v.begin(), v.end()), hi = *std::max_element(v.begin(), v.end());
  CHECK(h.low == lo);
  int total = 0;
  for (int c : h.counts) total += c;
  CHECK(total == static_cast<int>(v.size()));
  if (lo == hi) {
    CHECK(h.counts.size() == 1);
    return;
  }
  REQUIRE(!h.counts.empty());
  CHECK(h.counts.size() <= static_cast<std::size_t>(bins));
  CHECK(h.width > 0);
  // Equal bins from the minimum; the last one (closed) holds the maximum.
  const auto nb = static_cast<Time>(h.counts.size());
  CHECK(lo + (nb - 1) * h.width <= hi);
  CHECK(hi <= lo + nb * h.width);
  // Each value in its bin: [low + b w, low + (b + 1) w), the last bin closed; found by walking.
  std::vector<int> mine(h.counts.size(), 0);
  for (Time x : v) {
    std::size_t b = 0;
    while (b + 1 < mine.size() && x >= lo + static_cast<Time>(b + 1) * h.width) ++b;
    ++mine[b];
  }
  CHECK(mine == h.counts);
}

}  // namespace

TEST_CASE("mean, sd and se of random samples against a long-double mean and the pairwise variance", "[monte-carlo]") {
  std::mt19937_64 rng(2024);
  for (int trial = 0; trial < 300; ++trial) {
    INFO("trial " << trial);
    const auto n = static_cast<std::size_t>(draw(rng, 0, 300));
    const double offset = std::vector<double>{0, 1, -50, 1e6, 1e9}[rng() % 5];
    const double scale = std::vector<double>{0, 1e-3, 1, 1e4}[rng() % 4];
    std::vector<double> xs;
    std::normal_distribution<double> noise(0, 1);
    for (std::size_t i = 0; i < n; ++i) xs.push_back(offset + scale * noise(rng));
    const MeanEstimate m = estimate_mean(xs);
    if (n == 0) {
      CHECK(m.mean == 0);
      CHECK(m.sd == 0);
      CHECK(m.se == 0);
      continue;
    }
    check_estimate(m, xs);
  }
}

TEST_CASE("nearest-rank percentiles of random samples against their definition", "[monte-carlo]") {
  std::mt19937_64 rng(77);
  int checked = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const std::vector<Time> v = random_times(rng);
    std::vector<Time> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    INFO("trial " << trial << ", n " << v.size());
    for (int k = 0; k < 8; ++k) {
      const int q = static_cast<int>(draw(rng, 0, 100));
      INFO("P" << q);
      CHECK(nearest_rank(sorted, q) == by_definition(v, q));
      ++checked;
    }
    // Every integer percentile on the sizes where rounding is at stake (n a multiple of 100).
    if (v.size() % 100 == 0)
      for (int q = 0; q <= 100; ++q) CHECK(nearest_rank(sorted, q) == by_definition(v, q));
    const TimeDistribution d = describe_times(v);
    CHECK(d.min == sorted.front());
    CHECK(d.max == sorted.back());
    CHECK(d.p50 == by_definition(v, 50));
    CHECK(d.p90 == by_definition(v, 90));
    CHECK(d.p99 == by_definition(v, 99));
    std::vector<double> secs;
    for (Time t : v) secs.push_back(to_s(t));
    check_estimate(d.seconds, secs);
  }
  CHECK(checked == 3200);
  CHECK(describe_times({}).max == 0);
}

TEST_CASE("nearest rank: P7 of 1..100 is 7, whatever 7 / 100 x 100 rounds to in doubles", "[monte-carlo]") {
  // 7 / 100.0 x 100 is 7.000000000000001 in doubles: a rank taken as ceil of that was 8.
  std::vector<Time> v;
  for (Time i = 1; i <= 100; ++i) v.push_back(i);
  CHECK(nearest_rank(v, 7) == 7);
  CHECK(nearest_rank(v, 14) == 14);
  CHECK(nearest_rank(v, 57) == 57);
}

TEST_CASE("regressions: equal values have sd 0; a small span gets no bins past its maximum", "[monte-carlo]") {
  // 0.1 x 10 sums to 0.9999999999999999: the mean was off by an ulp, and the sd with it.
  const MeanEstimate m = estimate_mean(std::vector<double>(10, 0.1));
  CHECK(m.mean == 0.1);
  CHECK(m.sd == 0);
  // A span of 5 ns in 4 bins: width 2 reaches 5 in three bins, a fourth lay wholly past it.
  const Histogram h = make_histogram({0, 5}, 4);
  CHECK(h.low + static_cast<Time>(h.counts.size() - 1) * h.width <= 5);
  CHECK(h.counts.back() == 1);
}

TEST_CASE("histograms of random samples: counts add up and each value lies in its bin", "[monte-carlo]") {
  std::mt19937_64 rng(4242);
  for (int trial = 0; trial < 400; ++trial) {
    const std::vector<Time> v = random_times(rng);
    const int bins = static_cast<int>(draw(rng, 1, 40));
    INFO("trial " << trial << ", n " << v.size() << ", bins " << bins);
    check_histogram(v, bins);
  }
  CHECK(make_histogram({}, 12).counts.empty());
  CHECK(make_histogram({5}, 0).counts.empty());
}

TEST_CASE("for_each_run: every run once whatever the threads; a failure names the first failing run", "[monte-carlo]") {
  std::mt19937_64 rng(99);
  for (int trial = 0; trial < 60; ++trial) {
    const int runs = static_cast<int>(draw(rng, 0, 300));
    const int threads = static_cast<int>(draw(rng, 1, 4));
    std::set<int> failing;
    if (runs > 0 && rng() % 2 == 0)
      for (int k = 0, n = static_cast<int>(draw(rng, 1, 5)); k < n; ++k)
        failing.insert(static_cast<int>(draw(rng, 0, runs - 1)));
    INFO("trial " << trial << ": " << runs << " runs on " << threads << " threads, " << failing.size() << " failing");
    std::vector<std::atomic<int>> calls(static_cast<std::size_t>(std::max(runs, 1)));
    std::vector<std::atomic<int>> seen(static_cast<std::size_t>(runs + 1));  // progress values
    std::string error;
    try {
      for_each_run(
          runs, threads,
          [&](int i) {
            ++calls[static_cast<std::size_t>(i)];
            if (failing.count(i)) throw std::runtime_error("run " + std::to_string(i));
          },
          [&](int done) { ++seen[static_cast<std::size_t>(done)]; });
    } catch (const std::runtime_error& e) { error = e.what(); }
    const int first = failing.empty() ? runs : *failing.begin();
    CHECK(error == (failing.empty() ? "" : "run " + std::to_string(first)));
    int finished = 0;
    for (int i = 0; i < runs; ++i) {
      const int c = calls[static_cast<std::size_t>(i)].load();
      CHECK(c <= 1);
      if (i <= first) CHECK(c == 1);  // the runs before the first failure, and it, all ran
      finished += c == 1 && !failing.count(i);
    }
    // Progress counts the finished runs: 1, 2, ..., each once.
    for (int d = 0; d <= runs; ++d) CHECK(seen[static_cast<std::size_t>(d)].load() == (d >= 1 && d <= finished));
  }
}

namespace {

// A random job, small enough for dozens of runs (the shapes of test_job_properties.cpp).
JobSpec random_job(std::mt19937_64& rng) {
  JobSpec s;
  const std::int64_t steps = draw(rng, 10, 150);
  if (rng() % 3 == 0) {
    std::vector<Time> d;
    for (std::int64_t k = 0; k < steps; ++k) d.push_back(draw(rng, 1, 10) * kSecond + draw(rng, 0, 999) * kMillisecond);
    s.profile = StepProfile(d);
  } else {
    s.profile = StepProfile(steps, draw(rng, 1, 10) * kSecond);
  }
  const Time work = s.profile.total();
  s.cards = draw(rng, 1, 1024);
  if (rng() % 5 != 0) s.card_mtbf = s.cards * (work / draw(rng, 1, 6));
  s.restore = draw(rng, 0, 3) * 30 * kSecond;
  if (rng() % 3 == 0) s.rollback_interval = work / draw(rng, 1, 4);
  if (rng() % 4 == 0) s.failures_at = {draw(rng, 1, work / kSecond) * kSecond};
  CheckpointSpec& c = s.checkpoint;
  c.every_steps = rng() % 5 == 0 ? 0 : draw(rng, 1, 30);
  c.mode = rng() % 2 == 0 ? SaveMode::Sync : SaveMode::Async;
  c.size = draw(rng, 1, 100) * 1'000'000'000LL;
  c.storage_bandwidth = draw(rng, 1, 30) * 1'000'000'000LL;
  c.copy = draw(rng, 0, 2000) * kMillisecond;
  c.commit = rng() % 2 == 0 ? 0 : draw(rng, 1, 100) * kMillisecond;
  c.buffers = static_cast<int>(draw(rng, 0, 3));
  s.reserved = rng() % 2 == 0 ? 0 : draw(rng, 1, 5) * 86400 * kSecond;
  if (rng() % 2 == 0) s.deadline = s.reserved + work + draw(rng, 0, 2 * work / kSecond) * kSecond;
  s.max_events = 200'000;
  return s;
}

bool same_run(const RunResult& a, const RunResult& b) {
  return a.completion == b.completion && a.useful == b.useful && a.saving == b.saving && a.redo == b.redo &&
         a.restore == b.restore && a.failures == b.failures && a.rollbacks == b.rollbacks && a.saves == b.saves &&
         a.commits == b.commits && a.restores == b.restores && a.max_pending == b.max_pending;
}

double share(Time part, Time whole) { return static_cast<double>(part) / static_cast<double>(whole); }

// The summary of `runs` (simulated one by one here), computed here.
void check_summary(const JobSpec& s, const JobSummary& sum, const std::vector<RunResult>& runs) {
  std::vector<Time> done;
  std::vector<double> secs, overhead, redo, failures;
  int meet = 0, pending = 0;
  for (const RunResult& r : runs) {
    done.push_back(r.completion + s.reserved);
    secs.push_back(to_s(r.completion + s.reserved));
    overhead.push_back(share(r.completion - r.useful, r.useful));
    redo.push_back(share(r.redo, r.useful));
    failures.push_back(r.failures);
    meet += r.completion + s.reserved <= s.deadline;
    pending = std::max(pending, r.max_pending);
  }
  const TimeDistribution& d = sum.completion;
  CHECK(d.min == *std::min_element(done.begin(), done.end()));
  CHECK(d.max == *std::max_element(done.begin(), done.end()));
  CHECK(d.p50 == by_definition(done, 50));
  CHECK(d.p90 == by_definition(done, 90));
  CHECK(d.p99 == by_definition(done, 99));
  check_estimate(d.seconds, secs);
  check_estimate(sum.overhead, overhead);
  check_estimate(sum.redo, redo);
  check_estimate(sum.failures, failures);
  CHECK(sum.max_pending == pending);
  CHECK(sum.meet_probability.has_value() == (s.deadline > 0));
  if (s.deadline > 0) CHECK(*sum.meet_probability == Approx(static_cast<double>(meet) / runs.size()));
  CHECK(completion_times(s, sum) == done);
}

}  // namespace

TEST_CASE("a job's Monte Carlo is its single runs, one by one with the same seeds, whatever the threads",
          "[monte-carlo][job]") {
  std::mt19937_64 rng(515);
  int ran = 0, refused = 0, spread = 0;
  for (int trial = 0; trial < 80; ++trial) {
    const JobSpec s = random_job(rng);
    const int n = static_cast<int>(draw(rng, 1, 40));
    const std::uint64_t seed = rng();
    INFO("trial " << trial << ": " << n << " runs, " << s.profile.steps() << " steps, every "
                  << s.checkpoint.every_steps << ", buffers " << s.checkpoint.buffers);
    // The single runs; the first that cannot finish is the error the Monte Carlo must give.
    std::vector<RunResult> one;
    int first_bad = -1;
    for (int i = 0; i < n && first_bad < 0; ++i) {
      try {
        one.push_back(simulate_run(s, seed, i));
      } catch (const JobCannotFinish&) { first_bad = i; } catch (const JobTooMuchWork&) {
        first_bad = i;
      }
    }
    if (first_bad >= 0) {
      ++refused;
      try {
        simulate_job(s, n, seed, 2);
        FAIL("run " << first_bad << " cannot finish alone, yet the Monte Carlo finished");
      } catch (const JobCannotFinish& e) { CHECK(e.run == first_bad); } catch (const JobTooMuchWork&) {
      }
      continue;
    }
    ++ran;
    const JobSummary a = simulate_job(s, n, seed, 1), b = simulate_job(s, n, seed, 3);
    REQUIRE(a.results.size() == static_cast<std::size_t>(n));
    REQUIRE(b.results.size() == static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      INFO("run " << i);
      CHECK(same_run(a.results[static_cast<std::size_t>(i)], one[static_cast<std::size_t>(i)]));
      CHECK(same_run(b.results[static_cast<std::size_t>(i)], one[static_cast<std::size_t>(i)]));
    }
    CHECK(a.runs == n);
    CHECK(a.seed == seed);
    check_summary(s, a, one);
    check_summary(s, b, one);
    spread += a.completion.max > a.completion.min;
  }
  CHECK(ran > 60);
  CHECK(spread > 30);  // most draws give runs that differ
  CHECK(refused + ran == 80);
}

TEST_CASE("a job with nothing random has a zero-width distribution at its deterministic completion",
          "[monte-carlo][job]") {
  std::mt19937_64 rng(8080);
  int closed_form = 0;
  for (int trial = 0; trial < 100; ++trial) {
    JobSpec s = random_job(rng);
    s.card_mtbf = 0;
    s.rollback_interval = 0;
    if (rng() % 2 == 0) s.failures_at.clear();  // injected failures are not random either
    // A write of a whole number of milliseconds, so that the closed form needs no rounding.
    s.checkpoint.size = s.checkpoint.storage_bandwidth / 1000 * draw(rng, 1, 5000);
    const int n = static_cast<int>(draw(rng, 1, 30));
    INFO("trial " << trial << ": " << n << " runs, every " << s.checkpoint.every_steps);
    const JobSummary m = simulate_job(s, n, rng(), 2);
    const RunResult alone = simulate_run(s, rng(), static_cast<int>(draw(rng, 0, 1000)));
    const Time expect = alone.completion + s.reserved;
    const TimeDistribution& d = m.completion;
    CHECK(d.min == expect);
    CHECK(d.max == expect);
    CHECK(d.p50 == expect);
    CHECK(d.p99 == expect);
    CHECK(d.seconds.mean == Approx(to_s(expect)).epsilon(1e-15));
    CHECK(d.seconds.sd == 0);
    CHECK(d.seconds.se == 0);
    CHECK(m.failures.mean == static_cast<double>(s.failures_at.size()));
    const Histogram h = make_histogram(completion_times(s, m), 12);
    CHECK(h.counts == std::vector<int>{n});
    if (s.deadline > 0) CHECK(*m.meet_probability == (expect <= s.deadline ? 1.0 : 0.0));
    // Without failures: the work plus one pause per save, a save every `every` steps but not after
    // the last step; async saves with unlimited host buffers pause for the copy alone.
    const CheckpointSpec& c = s.checkpoint;
    if (!s.failures_at.empty() || (c.mode == SaveMode::Async && c.buffers > 0)) continue;
    ++closed_form;
    const std::int64_t saves = c.every_steps > 0 ? (s.profile.steps() - 1) / c.every_steps : 0;
    const Time write = c.size / (c.storage_bandwidth / 1000) * kMillisecond;
    const Time pause = c.mode == SaveMode::Sync ? write + c.commit : c.copy;
    CHECK(alone.completion == s.profile.total() + saves * pause);
    CHECK(alone.saves == saves);
  }
  CHECK(closed_form > 25);
}
