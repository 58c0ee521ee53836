// Whole runs on random specs (sync and async saves, host buffers, commit records, random and
// injected failures, rollbacks, interrupted restores, per-step durations), each checked against
// its own event log read back independently: the training timeline is one unbroken chain of
// steps, pauses and restores from 0 to the completion; the figures are the sums of its events;
// every interruption restores the last snapshot committed by then and loses the work since it;
// the storage writes one snapshot at a time; the pending snapshots never exceed the count the run
// reports, and their curve (built as the run goes) is the one sorted from the log's changes. A
// record with bounds keeps a prefix of the whole record, its counts, and evenly spaced rises.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "models/job.hpp"

using namespace stepsim;

namespace {

JobSpec random_spec(std::mt19937_64& rng) {
  const auto draw = [&](std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
  };
  JobSpec s;
  const std::int64_t steps = draw(20, 300);
  if (rng() % 3 == 0) {
    std::vector<Time> d;
    for (std::int64_t k = 0; k < steps; ++k) d.push_back(draw(1, 10) * kSecond + draw(0, 999) * kMillisecond);
    s.profile = StepProfile(d);
  } else {
    s.profile = StepProfile(steps, draw(1, 10) * kSecond);
  }
  const Time work = s.profile.total();
  s.cards = draw(1, 4096);
  if (rng() % 4 != 0) s.card_mtbf = s.cards * (work / draw(1, 8));  // 1 to 8 failures a run on average
  s.restore = draw(0, 3) * 30 * kSecond;
  if (rng() % 3 == 0) s.rollback_interval = work / draw(1, 4);
  if (rng() % 3 == 0)
    for (int k = 0, n = static_cast<int>(draw(1, 3)); k < n; ++k)
      s.failures_at.push_back(draw(1, work / kSecond) * kSecond);
  std::sort(s.failures_at.begin(), s.failures_at.end());
  CheckpointSpec& c = s.checkpoint;
  c.every_steps = rng() % 5 == 0 ? 0 : draw(1, 40);
  c.mode = rng() % 2 == 0 ? SaveMode::Sync : SaveMode::Async;
  c.size = draw(1, 200) * 1'000'000'000LL;
  c.storage_bandwidth = draw(1, 30) * 1'000'000'000LL;
  c.copy = draw(0, 2000) * kMillisecond;
  c.commit = rng() % 2 == 0 ? 0 : draw(1, 100) * kMillisecond;
  c.buffers = static_cast<int>(draw(0, 3));
  s.max_events = 1'000'000;
  return s;
}

void check_pending_curve(const JobRecord& rec);

bool on_training_timeline(JobEventKind k) {
  return k == JobEventKind::Steps || k == JobEventKind::Save || k == JobEventKind::Copy ||
         k == JobEventKind::BufferWait || k == JobEventKind::Restore;
}

void check_run(const JobSpec& s, const RunResult& r, const JobRecord& rec) {
  const StepProfile& w = s.profile;
  CHECK(r.completion == r.useful + r.saving + r.redo + r.restore);
  CHECK(r.useful == w.total());
  // The training timeline: every event starts where the one before it ended, from 0 to the end.
  Time at = 0, steps_time = 0, paused = 0, restoring = 0;
  int failures = 0, rollbacks = 0;
  const JobEvent* before = nullptr;  // the training event an interruption cut short
  // The last snapshot committed so far (0: the initial state): a run logs each commit no later
  // than the first interruption after it, and later snapshots are of later steps.
  std::int64_t committed = 0;
  for (const JobEvent& e : rec.events) {
    if ((e.kind == JobEventKind::Save && e.completed) || e.kind == JobEventKind::Commit)
      committed = std::max(committed, e.to_step);
    if (e.kind == JobEventKind::Failure || e.kind == JobEventKind::Rollback) {
      (e.kind == JobEventKind::Failure ? failures : rollbacks)++;
      CHECK(e.start == at);
      // It restores the last snapshot committed by its time, and loses the work done since.
      CHECK(e.to_step == committed);
      REQUIRE(before != nullptr);
      if (before->kind == JobEventKind::Restore) {
        CHECK(e.lost == 0);  // a restore cut short redoes no steps
      } else {
        const Time position = before->kind == JobEventKind::Steps
                                  ? w.work_until(before->from_step) + (before->end - before->start)
                                  : w.work_until(before->from_step);
        CHECK(e.lost == position - w.work_until(e.to_step));
        CHECK(e.from_step == w.steps_within(position));
      }
      continue;
    }
    if (!on_training_timeline(e.kind)) continue;
    CHECK(e.start == at);
    CHECK(e.end >= e.start);
    at = e.end;
    before = &e;
    if (e.kind == JobEventKind::Steps) {
      steps_time += e.end - e.start;
      if (e.completed) CHECK(e.end - e.start == w.work_until(e.to_step) - w.work_until(e.from_step));
    } else if (e.kind == JobEventKind::Restore) {
      restoring += e.end - e.start;
    } else {
      paused += e.end - e.start;
    }
  }
  CHECK(at == r.completion);
  CHECK(steps_time == r.useful + r.redo);
  CHECK(paused == r.saving);
  CHECK(restoring == r.restore);
  CHECK(failures == r.failures);
  CHECK(rollbacks == r.rollbacks);
  // The storage writes one snapshot at a time, each after its copy into a host buffer.
  std::vector<std::pair<Time, Time>> writes;
  for (const JobEvent& e : rec.events)
    if (e.kind == JobEventKind::Write) writes.emplace_back(e.start, e.end);
  std::sort(writes.begin(), writes.end());
  for (std::size_t i = 1; i < writes.size(); ++i) CHECK(writes[i].first >= writes[i - 1].second);
  // The pending snapshots: never negative, never more than the run reports at once.
  int most = 0;
  for (const auto& [t, level] : rec.pending) {
    CHECK(level >= 0);
    most = std::max(most, level);
  }
  CHECK(most == r.max_pending);
  if (s.checkpoint.mode == SaveMode::Sync) CHECK(r.commits == r.saves);
  CHECK(r.commits <= r.saves);
  check_pending_curve(rec);
}

// The pending curve as the record used to build it, after the run: every change from the log (+1
// at a copy's end, -1 at a commit's, one -1 per snapshot still pending at an interruption), sorted
// by time with commits before captures, equal times merged; the rises are where it goes up.
void check_pending_curve(const JobRecord& rec) {
  std::vector<std::pair<Time, int>> deltas;
  int open = 0;
  for (const JobEvent& e : rec.events) {
    if (e.kind == JobEventKind::Copy && e.completed) {
      deltas.emplace_back(e.end, +1);
      ++open;
    } else if (e.kind == JobEventKind::Commit) {
      deltas.emplace_back(e.end, -1);
      --open;
    } else if (e.kind == JobEventKind::Failure || e.kind == JobEventKind::Rollback) {
      for (; open > 0; --open) deltas.emplace_back(e.start, -1);
    }
  }
  std::stable_sort(deltas.begin(), deltas.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second < b.second;
  });
  std::vector<std::pair<Time, int>> curve = {{0, 0}};
  int level = 0;
  for (const auto& [t, d] : deltas) {
    level += d;
    if (curve.back().first == t)
      curve.back().second = level;
    else
      curve.emplace_back(t, level);
  }
  CHECK(rec.pending == curve);
  CHECK(rec.pending_count == static_cast<std::int64_t>(curve.size()));
  std::vector<std::pair<Time, int>> rises;
  for (std::size_t i = 1; i < curve.size(); ++i)
    if (curve[i].second > curve[i - 1].second) rises.push_back(curve[i]);
  CHECK(rec.rises.kept() == rises);
  CHECK(rec.rises.stride() == 1);
}

bool same(const JobEvent& a, const JobEvent& b) {
  return a.kind == b.kind && a.start == b.start && a.end == b.end && a.from_step == b.from_step &&
         a.to_step == b.to_step && a.lost == b.lost && a.completed == b.completed;
}

}  // namespace

TEST_CASE("whole runs on random specs agree with their own event logs", "[job][properties]") {
  std::mt19937_64 rng(1203);
  int ran = 0, interrupted = 0, gave_up = 0;
  for (int trial = 0; ran < 300 && trial < 600; ++trial) {
    const JobSpec s = random_spec(rng);
    INFO("trial " << trial << ": " << s.profile.steps() << " steps, every " << s.checkpoint.every_steps << ", "
                  << (s.checkpoint.mode == SaveMode::Sync ? "sync" : "async") << ", buffers " << s.checkpoint.buffers
                  << ", cards " << s.cards);
    JobRecord rec;
    RunResult r;
    try {
      r = simulate_run(s, 7, trial, &rec);
    } catch (const JobCannotFinish&) {  // failures faster than its segments can complete
      ++gave_up;
      continue;
    } catch (const JobTooMuchWork&) {
      ++gave_up;
      continue;
    }
    ++ran;
    interrupted += r.failures + r.rollbacks > 0;
    check_run(s, r, rec);
    // The same seed and run give the same run.
    const RunResult again = simulate_run(s, 7, trial);
    CHECK(again.completion == r.completion);
    CHECK(again.failures == r.failures);
  }
  CHECK(ran == 300);
  CHECK(interrupted > 100);  // the draws do interrupt most runs
  CHECK(gave_up < 30);
}

TEST_CASE("a bounded record of a run is the start of its whole record, with the counts of all of it",
          "[job][properties]") {
  std::mt19937_64 rng(4409);
  int ran = 0, cut = 0, sampled = 0;
  for (int trial = 0; ran < 200 && trial < 400; ++trial) {
    const JobSpec s = random_spec(rng);
    JobRecord whole, bounded;
    bounded.max_events = 1 + rng() % 40;
    bounded.max_interruptions = 1 + rng() % 4;
    bounded.rises = EvenSample(1 + rng() % 6);
    RunResult r;
    try {
      r = simulate_run(s, 11, trial, &whole);
    } catch (const std::exception&) {  // JobCannotFinish, JobTooMuchWork: not what is tested here
      continue;
    }
    ++ran;
    INFO("trial " << trial << ": keeps " << bounded.max_events << " events");
    const RunResult again = simulate_run(s, 11, trial, &bounded);
    CHECK(again.completion == r.completion);  // recording does not change the run
    // Events and curve points: the first ones, and how many there were in all.
    CHECK(bounded.event_count == static_cast<std::int64_t>(whole.events.size()));
    REQUIRE(bounded.events.size() == std::min(whole.events.size(), bounded.max_events));
    for (std::size_t i = 0; i < bounded.events.size(); ++i) CHECK(same(bounded.events[i], whole.events[i]));
    CHECK(bounded.events_cut() == (whole.events.size() > bounded.max_events));
    cut += bounded.events_cut();
    CHECK(bounded.pending_count == static_cast<std::int64_t>(whole.pending.size()));
    // The curve until the events stop (at most as many points).
    CHECK(bounded.pending.size() <= std::min(whole.pending.size(), bounded.max_events));
    if (!bounded.events_cut()) CHECK(bounded.pending.size() == std::min(whole.pending.size(), bounded.max_events));
    CHECK(std::equal(bounded.pending.begin(), bounded.pending.end(), whole.pending.begin()));
    // Interruptions: the first ones of the log's failures and rollbacks, and their count.
    std::vector<JobEvent> hits;
    for (const JobEvent& e : whole.events)
      if (e.kind == JobEventKind::Failure || e.kind == JobEventKind::Rollback) hits.push_back(e);
    CHECK(whole.interruptions.size() == hits.size());
    CHECK(bounded.interruption_count == static_cast<std::int64_t>(hits.size()));
    REQUIRE(bounded.interruptions.size() == std::min(hits.size(), bounded.max_interruptions));
    for (std::size_t i = 0; i < bounded.interruptions.size(); ++i) CHECK(same(bounded.interruptions[i], hits[i]));
    // Rises: every stride-th of the whole run's, and the last.
    const auto& all = whole.rises.kept();
    const EvenSample& few = bounded.rises;
    CHECK(few.total() == static_cast<std::int64_t>(all.size()));
    for (std::size_t i = 0; i < few.kept().size(); ++i)
      CHECK(few.kept()[i] == all[i * static_cast<std::size_t>(few.stride())]);
    CHECK(few.kept().size() ==
          (all.size() + static_cast<std::size_t>(few.stride()) - 1) / static_cast<std::size_t>(few.stride()));
    if (!all.empty()) CHECK(few.last() == all.back());
    sampled += few.stride() > 1;
  }
  CHECK(ran == 200);
  CHECK(cut > 100);     // most runs have more events than their record keeps
  CHECK(sampled > 10);  // and some more rises
}

TEST_CASE("an even sample keeps every stride-th item, at most its capacity, at least half of it", "[job]") {
  for (const std::size_t capacity : {1, 2, 5, 12, 64})
    for (const int n : {0, 1, 2, 3, 11, 12, 13, 64, 65, 100, 1000, 4097}) {
      EvenSample s(capacity);
      for (int i = 0; i < n; ++i) s.add({i, -i});
      INFO("capacity " << capacity << ", " << n << " items");
      CHECK(s.total() == n);
      CHECK(s.kept().size() <= capacity);
      if (n > static_cast<int>(capacity)) CHECK(2 * s.kept().size() >= capacity);
      for (std::size_t k = 0; k < s.kept().size(); ++k) CHECK(s.kept()[k].first == static_cast<Time>(k) * s.stride());
      // Every multiple of the stride below n is kept.
      CHECK(static_cast<std::int64_t>(s.kept().size()) == (n + s.stride() - 1) / s.stride());
      if (n > 0) CHECK(s.last().first == n - 1);
    }
}
