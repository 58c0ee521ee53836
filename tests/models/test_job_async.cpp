// Asynchronous checkpoints: only committed snapshots restore, and a storage slower than the
// snapshots arrive backs up (reference section 5, figures 10-32 to 10-34).
#include <algorithm>
#include <deque>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "models/job.hpp"

using namespace stepsim;

namespace {
constexpr Bytes kSnapshot = 112'000'000'000LL;  // 112 GB
constexpr Time kCopy = 500 * kMillisecond;      // 0.5 s copy into a buffer

// Steps of 0.5 s, a capture every `every` of work, no random failures.
JobSpec async_spec(Time every, std::int64_t bandwidth, std::int64_t steps) {
  JobSpec s;
  const Time step = 500 * kMillisecond;
  s.profile = StepProfile(steps, step);
  s.restore = 120 * kSecond;
  s.checkpoint.mode = SaveMode::Async;
  s.checkpoint.every_steps = steps_per_interval(every, step);
  s.checkpoint.size = kSnapshot;
  s.checkpoint.storage_bandwidth = bandwidth;
  s.checkpoint.copy = kCopy;
  return s;
}

const JobEvent& only_failure(const JobRecord& rec) {
  const JobEvent* found = nullptr;
  for (const auto& e : rec.events)
    if (e.kind == JobEventKind::Failure) {
      REQUIRE(found == nullptr);
      found = &e;
    }
  REQUIRE(found != nullptr);
  return *found;
}
}  // namespace

TEST_CASE("async save: a failure at 50 s restores the snapshot that had committed", "[job]") {
  // Captures after 20 s and 40 s of training (wall 20 s and 40.5 s: the first copy paused 0.5 s);
  // a failure at 50 s of wall time, when 49 s of training are done.
  const Time failure = 50 * kSecond;
  const Time position = failure - 2 * kCopy;
  for (const std::int64_t bandwidth : {7'000'000'000LL, 28'000'000'000LL}) {
    JobSpec s = async_spec(20 * kSecond, bandwidth, 200);
    s.failures_at = {failure};
    JobRecord rec;
    const RunResult r = simulate_run(s, 1, 0, &rec);
    // The second snapshot's copy ends at 41 s; its write takes 112 GB / bandwidth.
    const Time second_commit = 40 * kSecond + 2 * kCopy + transfer_time(kSnapshot, bandwidth);
    const bool second_committed = second_commit <= failure;
    const Time restored_work = second_committed ? 40 * kSecond : 20 * kSecond;
    const JobEvent& f = only_failure(rec);
    INFO("storage " << bandwidth / 1e9 << " GB/s: second snapshot commits at " << to_s(second_commit) << " s");
    CHECK(second_committed == (bandwidth == 28'000'000'000LL));  // 7 GB/s: 57 s; 28 GB/s: 45 s
    CHECK(s.profile.work_until(f.to_step) == restored_work);
    CHECK(f.lost == position - restored_work);  // 29 s at 7 GB/s, 9 s at 28 GB/s
    CHECK(r.redo == position - restored_work);
    // Training paused only for the copies: two before the failure, then the ones after the restore.
    CHECK(r.saving == r.saves * kCopy);
    CHECK(r.completion == r.useful + r.saving + r.redo + r.restore);
  }
}

TEST_CASE("async save: commit order decides, a failure before the commit loses the snapshot", "[job]") {
  // The commit record lands 41 ms after the data (the book's CPU experiment returns at ~7 ms and
  // commits at ~48 ms): a failure between the data and the commit restores the previous snapshot.
  JobSpec s = async_spec(20 * kSecond, 28'000'000'000LL, 200);
  s.checkpoint.commit = 41 * kMillisecond;
  const Time data_written = 40 * kSecond + 2 * kCopy + transfer_time(kSnapshot, 28'000'000'000LL);
  s.failures_at = {data_written + 20 * kMillisecond};
  JobRecord before;
  simulate_run(s, 1, 0, &before);
  CHECK(s.profile.work_until(only_failure(before).to_step) == 20 * kSecond);
  s.failures_at = {data_written + 41 * kMillisecond};  // exactly at the commit: it counts
  JobRecord at;
  simulate_run(s, 1, 0, &at);
  CHECK(s.profile.work_until(only_failure(at).to_step) == 40 * kSecond);
}

TEST_CASE("storage queue: 112 GB at 7 GB/s every 10 s backs up, every 20 s does not", "[job]") {
  const std::int64_t bandwidth = 7'000'000'000LL;
  const Time write = transfer_time(kSnapshot, bandwidth);  // 16 s
  CHECK(write == 16 * kSecond);
  auto queue_after = [&](Time every, std::int64_t steps) {
    JobRecord rec;
    const RunResult r = simulate_run(async_spec(every, bandwidth, steps), 1, 0, &rec);
    return std::pair{r, rec};
  };
  // Every 10 s of training (10.5 s of wall time with the copy) demands 112 GB / 10.5 s ~ 10.7 GB/s:
  // each capture adds 1 - 10.5 / 16 snapshots to the queue, without bound.
  const auto [short_run, short_rec] = queue_after(10 * kSecond, 400);  // 19 captures
  const auto [long_run, long_rec] = queue_after(10 * kSecond, 1600);   // 79 captures
  const double growth = 1.0 - 10.5 / 16.0;
  CHECK(short_run.max_pending >= static_cast<int>(19 * growth) - 1);
  CHECK(long_run.max_pending >= static_cast<int>(79 * growth) - 1);
  CHECK(long_run.max_pending > 3 * short_run.max_pending);
  // The queue length over time only grows between captures' peaks (it never drains).
  int last_peak = 0;
  for (std::size_t i = 1; i < long_rec.pending.size(); ++i)
    if (long_rec.pending[i].second > long_rec.pending[i - 1].second) {
      CHECK(long_rec.pending[i].second >= last_peak);
      last_peak = long_rec.pending[i].second;
    }
  // Every 20 s (5.6 GB/s average demand): each write ends before the next capture.
  const auto [ok_run, ok_rec] = queue_after(20 * kSecond, 1600);
  CHECK(ok_run.max_pending == 1);
}

TEST_CASE("async save with two host buffers: captures wait for a free buffer", "[job]") {
  JobSpec s = async_spec(10 * kSecond, 7'000'000'000LL, 400);
  s.checkpoint.buffers = 2;
  JobRecord rec;
  const RunResult r = simulate_run(s, 1, 0, &rec);
  CHECK(r.max_pending <= 2);
  // Throughput is now bound by the storage: the run takes at least captures x 16 s of writing
  // minus the last one's, and training waited for buffers (saving > copies alone).
  CHECK(r.saving > r.saves * kCopy);
  CHECK(r.completion >= (r.saves - 2) * 16 * kSecond);
  CHECK(r.completion == r.useful + r.saving + r.redo + r.restore);
}

TEST_CASE("async save: a snapshot that commits during the next copy is not pending with it", "[job]") {
  // Steps of 0.5 s, a capture every 10 s of training, copies of 0.5 s: the first snapshot is
  // copied over [10, 10.5] s and written at 11.2 GB/s (112 GB: 10 s), so its data is down at
  // 20.5 s and, with a commit record of 0.2 s, it commits at 20.7 s -- during the second copy,
  // [20.5, 21] s. When the second snapshot joins the queue at 21 s, the first has committed: one
  // pending at a time, as the run's pending curve says. (The count used to be taken before
  // commits that landed during the copy were resolved, and said 2.)
  JobSpec s = async_spec(10 * kSecond, 11'200'000'000LL, 60);
  s.checkpoint.commit = 200 * kMillisecond;
  JobRecord rec;
  const RunResult r = simulate_run(s, 1, 0, &rec);
  REQUIRE(r.saves == 2);
  CHECK(r.max_pending == 1);
  int most = 0;
  for (const auto& [t, level] : rec.pending) most = std::max(most, level);
  CHECK(most == 1);
}

TEST_CASE("async save: a commit at the next capture's instant is one point of the curve, not a rise", "[job]") {
  // The first snapshot is copied over [10, 10.5] s and written in 10.5 s (10.5 GB at 1 GB/s): it
  // commits at 21 s, when the second copy ends. At 21 s one leaves the queue and one joins: the
  // curve has one point there at the same level, and only the first capture raised it.
  JobSpec s = async_spec(10 * kSecond, 1'000'000'000LL, 60);
  s.checkpoint.size = 10'500'000'000LL;
  REQUIRE(s.checkpoint.write_time() == 10'500 * kMillisecond);
  JobRecord rec;
  const RunResult r = simulate_run(s, 1, 0, &rec);
  REQUIRE(r.saves == 2);
  CHECK(r.completion == 31 * kSecond);
  using Point = std::pair<Time, int>;
  // The second snapshot, written over [21, 31.5] s, commits after the last step.
  const std::vector<Point> curve = {{0, 0}, {10'500 * kMillisecond, 1}, {21 * kSecond, 1}, {31'500 * kMillisecond, 0}};
  CHECK(rec.pending == curve);
  CHECK(rec.rises.kept() == std::vector<Point>{{10'500 * kMillisecond, 1}});
  CHECK(rec.rises.total() == 1);
  CHECK(r.max_pending == 1);
}

TEST_CASE("storage queue over 200,000 captures: the count pending after the last is the closed form", "[job]") {
  // 4,000,000 steps of 0.5 s, a capture every 10 s of training (199,999 of them, none after the
  // last step), 16 s writes: capture j ends its copy at 10.5 j s, and the storage, behind from the
  // first, ends write j at 10.5 + 16 j s. After capture n, the snapshots j with 10.5 + 16 j >
  // 10.5 n are pending: n - floor(10.5 (n - 1) / 16) = 199,999 - 131,248 = 68,751, the most. (The
  // run holds this queue as one stretch of back-to-back writes, not 68,751 entries.)
  const RunResult r = simulate_run(async_spec(10 * kSecond, 7'000'000'000LL, 4'000'000), 1, 0);
  CHECK(r.saves == 199'999);
  CHECK(r.max_pending == 68'751);
  CHECK(r.commits == 131'248);  // those the run saw land, by its last capture: the writes done
}

namespace {
// The async-save rules of models/job.hpp as a plain list of snapshots, for runs without
// interruptions: before a capture the commits due land; with `buffers`, a capture that finds that
// many writes unfinished waits for the write `buffers` from the newest to end; the copy; the
// commits that landed during it; then the write, after the one before it (FIFO).
RunResult reference_async_run(const JobSpec& s) {
  struct Snapshot {
    Time write_end, commit_at;
  };
  const CheckpointSpec& ck = s.checkpoint;
  std::deque<Snapshot> pending;
  RunResult r;
  r.useful = s.profile.total();
  Time now = 0, storage_free = 0;
  const auto resolve = [&] {
    while (!pending.empty() && pending.front().commit_at <= now) {
      pending.pop_front();
      ++r.commits;
    }
  };
  for (std::int64_t k = 0; k < s.profile.steps();) {
    const std::int64_t target = std::min(s.profile.steps(), (k / ck.every_steps + 1) * ck.every_steps);
    now += s.profile.work_until(target) - s.profile.work_until(k);
    k = target;
    if (k == s.profile.steps()) break;
    resolve();
    const auto busy =
        std::count_if(pending.begin(), pending.end(), [&](const Snapshot& p) { return p.write_end > now; });
    if (ck.buffers > 0 && busy >= ck.buffers) {
      const Time free_at = pending[pending.size() - static_cast<std::size_t>(ck.buffers)].write_end;
      r.saving += free_at - now;
      now = free_at;
      resolve();
    }
    now += ck.copy;
    r.saving += ck.copy;
    resolve();
    const Time start = std::max(now, storage_free);
    storage_free = start + ck.write_time();
    pending.push_back({storage_free, storage_free + ck.commit});
    ++r.saves;
    r.max_pending = std::max(r.max_pending, static_cast<int>(pending.size()));
  }
  r.completion = now;
  return r;
}
}  // namespace

TEST_CASE("async save with host buffers and late commits: the run a plain list of snapshots gives", "[job]") {
  // Commit records that land many captures later leave a long queue of snapshots written apart
  // (one stretch each), behind the few whose writes are still running: the buffer a capture waits
  // for is found among them, and the count of unfinished writes too (models/job.cpp finds both by
  // binary search over the stretches). Random step times, writes shorter and longer than the
  // interval, 1-4 buffers, commits of 0 to 60 intervals.
  std::mt19937_64 rng(20261206);
  const auto draw = [&rng](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 200; ++trial) {
    const std::int64_t steps = draw(50, 3000);
    std::vector<Time> durations;
    for (std::int64_t i = 0; i < steps; ++i)
      durations.push_back(draw(1, 3) == 1 ? draw(200, 2000) * kMillisecond : kSecond);
    JobSpec s;
    s.profile = draw(0, 1) ? StepProfile(durations) : StepProfile(steps, kSecond);
    s.checkpoint.mode = SaveMode::Async;
    s.checkpoint.every_steps = draw(1, 4);
    s.checkpoint.size = draw(1, 8) * 1'000'000'000LL;
    s.checkpoint.storage_bandwidth = 2'000'000'000LL;  // writes of 0.5 to 4 s
    s.checkpoint.copy = draw(1, 300) * kMillisecond;
    s.checkpoint.commit = draw(0, 60) * kSecond;
    s.checkpoint.buffers = static_cast<int>(draw(1, 4));
    const RunResult got = simulate_run(s, 1, 0);
    const RunResult want = reference_async_run(s);
    INFO("trial " << trial << ": " << steps << " steps, every " << s.checkpoint.every_steps << ", write "
                  << to_s(s.checkpoint.write_time()) << " s, commit " << to_s(s.checkpoint.commit) << " s, buffers "
                  << s.checkpoint.buffers);
    CHECK(got.completion == want.completion);
    CHECK(got.saving == want.saving);
    CHECK(got.saves == want.saves);
    CHECK(got.commits == want.commits);
    CHECK(got.max_pending == want.max_pending);
  }
}
