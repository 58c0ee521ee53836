#include "models/job.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <deque>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>
#include <Eigen/Dense>

#include "models/random.hpp"
#include "sim/checked.hpp"

namespace stepsim {

namespace {
constexpr Time kNever = std::numeric_limits<Time>::max();
constexpr Time kYear = 365LL * 86'400 * kSecond;

Time saturating_add(Time a, Time b) { return b > kNever - a ? kNever : a + b; }

// Random streams of a run (derive_seed's third argument).
constexpr std::uint64_t kFailureStream = 1;
constexpr std::uint64_t kRollbackStream = 2;
}  // namespace

StepProfile::StepProfile(std::int64_t steps, Time step_time) : steps_(steps), step_(step_time) {
  if (steps < 0 || step_time < 0) throw std::invalid_argument("StepProfile: negative steps or step time");
}

StepProfile::StepProfile(const std::vector<Time>& durations) : steps_(static_cast<std::int64_t>(durations.size())) {
  prefix_.resize(durations.size() + 1, 0);
  for (std::size_t i = 0; i < durations.size(); ++i) {
    if (durations[i] < 0) throw std::invalid_argument("StepProfile: negative step duration");
    prefix_[i + 1] = prefix_[i] + durations[i];
  }
}

Time StepProfile::work_until(std::int64_t k) const {
  k = std::clamp<std::int64_t>(k, 0, steps_);
  return prefix_.empty() ? k * step_ : prefix_[static_cast<std::size_t>(k)];
}

std::int64_t StepProfile::steps_within(Time work) const {
  if (work <= 0) return 0;
  if (prefix_.empty()) return step_ == 0 ? steps_ : std::min(steps_, work / step_);
  const auto it = std::upper_bound(prefix_.begin(), prefix_.end(), work);
  return static_cast<std::int64_t>(it - prefix_.begin()) - 1;
}

std::int64_t steps_per_interval(Time interval, Time step_time) {
  if (step_time <= 0) return 1;
  return std::max<std::int64_t>(1, (interval + step_time / 2) / step_time);
}

JobTooMuchWork::JobTooMuchWork(int run, std::int64_t events)
    : std::runtime_error(fmt::format("run {} passed {} events", run, events)) {}

JobCannotFinish::JobCannotFinish(int run_index, Time wall_time, std::int64_t steps)
    : std::runtime_error(fmt::format("run {} has not finished after {:.1f} days ({} steps done)", run_index,
                                     to_s(wall_time) / 86'400.0, steps)),
      run(run_index),
      wall(wall_time),
      steps_done(steps) {}

void EvenSample::add(const Item& item) {
  if (total_ % stride_ == 0) {
    kept_.push_back(item);
    if (capacity_ > 0 && kept_.size() > capacity_) {
      // Keep items 0, 2 stride, 4 stride, ...: every kept one is again a multiple of the stride.
      std::size_t j = 0;
      for (std::size_t i = 0; i < kept_.size(); i += 2) kept_[j++] = kept_[i];
      kept_.resize(j);
      stride_ *= 2;
    }
  }
  last_ = item;
  ++total_;
}

const char* job_event_name(JobEventKind k) {
  switch (k) {
    case JobEventKind::Steps: return "steps";
    case JobEventKind::Save: return "save";
    case JobEventKind::Copy: return "copy";
    case JobEventKind::BufferWait: return "buffer wait";
    case JobEventKind::Write: return "write";
    case JobEventKind::Commit: return "commit";
    case JobEventKind::Failure: return "failure";
    case JobEventKind::Rollback: return "rollback";
    case JobEventKind::Restore: return "restore";
  }
  return "?";
}

namespace {

// The three sources of interruptions, merged in time order.
class Interruptions {
 public:
  Interruptions(const JobSpec& spec, std::uint64_t seed, int run)
      : failures_(derive_seed(seed, static_cast<std::uint64_t>(run), kFailureStream)),
        rollbacks_(derive_seed(seed, static_cast<std::uint64_t>(run), kRollbackStream)),
        job_mtbf_(spec.job_mtbf()),
        rollback_mean_(spec.rollback_interval),
        injected_(spec.failures_at) {
    next_failure_ = job_mtbf_ > 0 ? failures_.exponential(job_mtbf_) : kNever;
    next_rollback_ = rollback_mean_ > 0 ? rollbacks_.exponential(rollback_mean_) : kNever;
  }

  // The next interruption's time (kNever if none) and whether it is a rollback.
  std::pair<Time, bool> peek() const {
    const Time injected = next_injected_ < injected_.size() ? injected_[next_injected_] : kNever;
    const Time failure = std::min(next_failure_, injected);
    if (next_rollback_ < failure) return {next_rollback_, true};
    return {failure, false};
  }

  // Consumes the interruption peek() returned; its process draws its next arrival from `t`.
  void consume() {
    const auto [t, rollback] = peek();
    if (rollback) {
      next_rollback_ = saturating_add(t, rollbacks_.exponential(rollback_mean_));
    } else if (next_injected_ < injected_.size() && injected_[next_injected_] == t && t <= next_failure_) {
      ++next_injected_;
    } else {
      next_failure_ = saturating_add(t, failures_.exponential(job_mtbf_));
    }
  }

 private:
  Rng failures_, rollbacks_;
  Time job_mtbf_, rollback_mean_;
  const std::vector<Time>& injected_;
  std::size_t next_injected_ = 0;
  Time next_failure_ = kNever, next_rollback_ = kNever;
};

struct PendingSnapshot {
  std::int64_t step;
  Time write_start, write_end, commit_at;
};

// The snapshots captured but not committed, oldest first. A storage that falls behind writes them
// back to back, and one that never catches up (every capture adds to the queue) held hundreds of
// MB of them in a run of millions of checkpoints: a stretch of captures `every` steps apart whose
// writes each start as the one before ends is one chain here, so such a queue is a few entries.
// A storage that keeps up but commits late (a long commit record) leaves one chain per snapshot:
// each chain knows its first snapshot's place in the queue, and at() and written_by() find their
// chain by binary search (a walk from the oldest on every capture was quadratic: 100,000 captures
// a second apart under a 1-day commit record took 30 s, now 0.08 s; docs/performance.md).
class PendingQueue {
 public:
  PendingQueue(std::int64_t every, Time write, Time commit) : every_(every), write_(write), commit_(commit) {}

  bool empty() const { return chains_.empty(); }
  std::int64_t size() const { return size_; }
  PendingSnapshot front() const { return nth(chains_.front(), 0); }

  // The snapshot of `step` whose write starts at `write_start` (its end and commit checked by the
  // caller).
  void push_back(std::int64_t step, Time write_start) {
    if (!chains_.empty()) {
      Chain& c = chains_.back();
      if (step == c.step + c.count * every_ && write_start == c.write_start + c.count * write_) {
        ++c.count;
        ++pushed_;
        ++size_;
        return;
      }
    }
    chains_.push_back(Chain{step, write_start, 1, pushed_});
    ++pushed_;
    ++size_;
  }

  void pop_front() {
    Chain& c = chains_.front();
    c.step += every_;
    c.write_start += write_;
    ++c.place;
    if (--c.count == 0) chains_.pop_front();
    --size_;
  }

  void clear() {
    chains_.clear();
    size_ = 0;
  }

  // The i-th oldest snapshot.
  PendingSnapshot at(std::int64_t i) const {
    if (i < 0 || i >= size_) throw std::logic_error("PendingQueue::at past the end");
    const std::int64_t place = chains_.front().place + i;
    // The last chain that starts at or before `place`.
    const auto c =
        std::partition_point(chains_.begin(), chains_.end(), [place](const Chain& x) { return x.place <= place; }) - 1;
    return nth(*c, place - c->place);
  }

  // How many of the oldest have their data written by `t` (the writes end in queue order).
  std::int64_t written_by(Time t) const {
    // The first chain whose last write ends after t: every chain before it is written.
    const auto c = std::partition_point(chains_.begin(), chains_.end(),
                                        [this, t](const Chain& x) { return x.write_start + x.count * write_ <= t; });
    if (c == chains_.end()) return size_;
    const Time first_end = c->write_start + write_;
    const std::int64_t done = t < first_end ? 0
                              : write_ == 0 ? c->count
                                            : std::min(c->count, (t - first_end) / write_ + 1);
    return c->place - chains_.front().place + done;
  }

  // Calls f(snapshot) oldest first while it returns true.
  template <class F>
  void each_while(F f) const {
    for (const Chain& c : chains_)
      for (std::int64_t i = 0; i < c.count; ++i)
        if (!f(nth(c, i))) return;
  }

 private:
  struct Chain {
    std::int64_t step;  // the first snapshot's
    Time write_start;   // the first snapshot's; the i-th's is i writes later
    std::int64_t count;
    std::int64_t place;  // the first snapshot's place among all pushed: the chains' places ascend
  };
  PendingSnapshot nth(const Chain& c, std::int64_t i) const {
    const Time start = c.write_start + i * write_;
    return PendingSnapshot{c.step + i * every_, start, start + write_, start + write_ + commit_};
  }

  std::int64_t every_;
  Time write_, commit_;
  std::deque<Chain> chains_;
  std::int64_t size_ = 0;
  std::int64_t pushed_ = 0;  // snapshots pushed so far; a chain's place counts them
};

class RunSimulation {
 public:
  RunSimulation(const JobSpec& spec, std::uint64_t seed, int run, JobRecord* rec)
      : spec_(spec),
        work_(spec.profile),
        ck_(spec.checkpoint),
        irq_(spec, seed, run),
        rec_(rec),
        run_(run),
        pending_(spec.checkpoint.every_steps, spec.checkpoint.write_time(), spec.checkpoint.commit) {
    const Time work = work_.total();
    constexpr Time kCap = Time{1} << 62;  // ~146 years: far from overflowing when added to
    give_up_ = work > (kCap - kYear) / 100 ? kCap : 100 * work + kYear;
  }

  RunResult run() {
    res_.useful = work_.total();
    const std::int64_t steps = work_.steps();
    while (k_ < steps) {
      if (now_ > give_up_) throw JobCannotFinish(run_, now_, k_);
      guard();
      const std::int64_t target =
          ck_.every_steps > 0 ? std::min(steps, (k_ / ck_.every_steps + 1) * ck_.every_steps) : steps;
      const Time segment = work_.work_until(target) - work_.work_until(k_);
      const auto [t, rollback] = irq_.peek();
      if (t < now_ + segment) {
        const Time position = work_.work_until(k_) + (t - now_);
        event(JobEventKind::Steps, now_, t, k_, work_.steps_within(position), false);
        interrupt(t, position, rollback);
        continue;
      }
      event(JobEventKind::Steps, now_, now_ + segment, k_, target);
      now_ += segment;
      k_ = target;
      if (k_ == steps) break;
      if (ck_.mode == SaveMode::Sync)
        save_sync();
      else
        save_async();
    }
    res_.completion = now_;
    finish_pending_record();
    return res_;
  }

 private:
  void event(JobEventKind kind, Time start, Time end, std::int64_t from, std::int64_t to, bool completed = true,
             Time lost = 0) {
    if (!rec_) return;
    const JobEvent e{kind, start, end, from, to, lost, completed};
    ++rec_->event_count;
    if (rec_->max_events == 0 || rec_->events.size() < rec_->max_events) rec_->events.push_back(e);
    if (kind != JobEventKind::Failure && kind != JobEventKind::Rollback) return;
    ++rec_->interruption_count;
    if (rec_->max_interruptions == 0 || rec_->interruptions.size() < rec_->max_interruptions)
      rec_->interruptions.push_back(e);
  }

  // The pending-snapshot curve, built as the changes come (a run's record must not grow with its
  // length): they come in time order, since a capture first resolves every commit up to its time,
  // an interruption drops the queue at its time, and the writes still in flight at the end
  // commit after every capture. Equal times merge into one point (the level after all of them).
  void pending_change(Time t, int delta) {
    if (!rec_) return;
    if (t < curve_at_) throw std::logic_error("job record: pending-snapshot changes out of time order");
    if (t != curve_at_) {
      close_point();
      curve_at_ = t;
    }
    level_ += delta;
  }
  // The level from curve_at_ on is final: one point of the curve (a rise when above the last).
  void close_point() {
    const std::pair<Time, int> p{curve_at_, level_};
    // Kept while the events are (a trace shows both over the same time), at most max_events.
    if (rec_->max_events == 0 || (!rec_->events_cut() && rec_->pending.size() < rec_->max_events))
      rec_->pending.push_back(p);
    if (rec_->pending_count++ > 0 && level_ > point_level_) rec_->rises.add(p);
    point_level_ = level_;
  }

  // If an interruption arrives before `end`, spends [now, t) as saving, handles it and returns true.
  bool interrupted_pause(Time end, JobEventKind kind) {
    const auto [t, rollback] = irq_.peek();
    if (t >= end) return false;
    res_.saving += t - now_;
    event(kind, now_, t, k_, k_, false);
    interrupt(t, work_.work_until(k_), rollback);
    return true;
  }

  void save_sync() {
    const Time end = now_ + ck_.pause();
    if (interrupted_pause(end, JobEventKind::Save)) return;
    event(JobEventKind::Save, now_, end, k_, k_);
    res_.saving += end - now_;
    now_ = end;
    committed_ = k_;
    ++res_.saves;
    ++res_.commits;
  }

  void save_async() {
    resolve_commits(now_);
    if (ck_.buffers > 0) {
      // A buffer is busy until its snapshot's data is written; writes finish in FIFO order.
      const std::int64_t busy = pending_.size() - pending_.written_by(now_);
      if (busy >= ck_.buffers) {
        const Time free_at = pending_.at(pending_.size() - ck_.buffers).write_end;
        if (interrupted_pause(free_at, JobEventKind::BufferWait)) return;
        event(JobEventKind::BufferWait, now_, free_at, k_, k_);
        res_.saving += free_at - now_;
        now_ = free_at;
        resolve_commits(now_);
      }
    }
    const Time copied = now_ + ck_.copy;
    if (interrupted_pause(copied, JobEventKind::Copy)) return;
    event(JobEventKind::Copy, now_, copied, k_, k_);
    res_.saving += ck_.copy;
    now_ = copied;
    // Snapshots whose commit landed during the copy are no longer pending when this one joins
    // them (the pending count's rule: at equal times, commits before captures).
    resolve_commits(now_);
    const Time write_start = std::max(now_, storage_free_);
    const Time write_end = time_add(write_start, ck_.write_time(), "the checkpoint writes of a run");
    storage_free_ = write_end;
    time_add(write_end, ck_.commit, "the checkpoint writes of a run");  // its commit; the queue derives it
    pending_.push_back(k_, write_start);
    pending_change(now_, +1);
    ++res_.saves;
    res_.max_pending = std::max(res_.max_pending, static_cast<int>(pending_.size()));
  }

  void resolve_commits(Time t) {
    while (!pending_.empty() && pending_.front().commit_at <= t) {
      const PendingSnapshot p = pending_.front();
      committed_ = p.step;
      ++res_.commits;
      event(JobEventKind::Write, p.write_start, p.write_end, p.step, p.step);
      event(JobEventKind::Commit, p.write_end, p.commit_at, p.step, p.step);
      pending_change(p.commit_at, -1);
      pending_.pop_front();
    }
  }

  // A failure or rollback at `t` with the run's work position `position`.
  void interrupt(Time t, Time position, bool rollback) {
    resolve_commits(t);
    // The writes under way or done (they start in queue order) are cut; every pending snapshot is dropped.
    pending_.each_while([&](const PendingSnapshot& p) {
      if (p.write_start >= t) return false;
      event(JobEventKind::Write, p.write_start, std::min(t, p.write_end), p.step, p.step, false);
      return true;
    });
    if (!pending_.empty()) pending_change(t, -static_cast<int>(pending_.size()));
    pending_.clear();
    storage_free_ = t;  // the storage drops the dead job's unfinished writes
    const Time lost = position - work_.work_until(committed_);
    res_.redo += lost;
    count(rollback);
    event(rollback ? JobEventKind::Rollback : JobEventKind::Failure, t, t, work_.steps_within(position), committed_,
          true, lost);
    irq_.consume();
    for (;;) {
      guard();
      const Time end = t + spec_.restore;
      ++res_.restores;
      const auto [t2, rollback2] = irq_.peek();
      if (t2 < end) {
        if (t2 > give_up_) throw JobCannotFinish(run_, t2, committed_);
        res_.restore += t2 - t;
        event(JobEventKind::Restore, t, t2, committed_, committed_, false);
        count(rollback2);
        event(rollback2 ? JobEventKind::Rollback : JobEventKind::Failure, t2, t2, committed_, committed_, true, 0);
        irq_.consume();
        t = t2;
        continue;
      }
      res_.restore += spec_.restore;
      event(JobEventKind::Restore, t, end, committed_, committed_);
      now_ = end;
      break;
    }
    k_ = committed_;
  }

  void guard() {
    if (spec_.max_events > 0 && ++events_ > spec_.max_events) throw JobTooMuchWork(run_, spec_.max_events);
  }

  void count(bool rollback) {
    if (rollback)
      ++res_.rollbacks;
    else
      ++res_.failures;
  }

  void finish_pending_record() {
    if (!rec_) return;
    // Writes still in flight when the last step ends finish after it; show them as they would.
    pending_.each_while([&](const PendingSnapshot& p) {
      event(JobEventKind::Write, p.write_start, p.write_end, p.step, p.step);
      event(JobEventKind::Commit, p.write_end, p.commit_at, p.step, p.step);
      pending_change(p.commit_at, -1);
      return true;
    });
    close_point();
  }

  const JobSpec& spec_;
  const StepProfile& work_;
  const CheckpointSpec& ck_;
  Interruptions irq_;
  JobRecord* rec_;
  RunResult res_;
  int run_;
  Time give_up_;
  Time now_ = 0;
  std::int64_t events_ = 0;     // loop turns, for the work guard
  std::int64_t k_ = 0;          // steps done in the current state
  std::int64_t committed_ = 0;  // step of the last committed snapshot
  PendingQueue pending_;
  Time storage_free_ = 0;
  Time curve_at_ = 0;    // the pending curve's open point (from 0: the curve starts at 0, level 0)
  int level_ = 0;        // its level so far
  int point_level_ = 0;  // the level of the point before it
};

double fraction(Time part, Time whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace

RunResult simulate_run(const JobSpec& spec, std::uint64_t seed, int run, JobRecord* record) {
  return RunSimulation(spec, seed, run, record).run();
}

JobSummary simulate_job(const JobSpec& spec, int runs, std::uint64_t seed, int threads,
                        const std::function<void(int)>& progress) {
  JobSummary s;
  s.runs = runs;
  s.seed = seed;
  s.results.resize(static_cast<std::size_t>(std::max(runs, 0)));
  for_each_run(
      runs, threads, [&](int i) { s.results[static_cast<std::size_t>(i)] = simulate_run(spec, seed, i); }, progress);
  s.completion = describe_times(completion_times(spec, s));
  std::vector<double> overhead, saving, redo, restore, failures, rollbacks;
  int meet = 0;
  for (const RunResult& r : s.results) {
    overhead.push_back(fraction(r.completion - r.useful, r.useful));
    saving.push_back(fraction(r.saving, r.useful));
    redo.push_back(fraction(r.redo, r.useful));
    restore.push_back(fraction(r.restore, r.useful));
    failures.push_back(r.failures);
    rollbacks.push_back(r.rollbacks);
    if (spec.deadline > 0 && r.completion + spec.reserved <= spec.deadline) ++meet;
    s.max_pending = std::max(s.max_pending, r.max_pending);
  }
  s.overhead = estimate_mean(overhead);
  s.saving = estimate_mean(saving);
  s.redo = estimate_mean(redo);
  s.restore = estimate_mean(restore);
  s.failures = estimate_mean(failures);
  s.rollbacks = estimate_mean(rollbacks);
  if (spec.deadline > 0 && runs > 0) s.meet_probability = static_cast<double>(meet) / runs;
  return s;
}

std::vector<Time> completion_times(const JobSpec& spec, const JobSummary& summary) {
  std::vector<Time> out;
  out.reserve(summary.results.size());
  for (const RunResult& r : summary.results) out.push_back(r.completion + spec.reserved);
  return out;
}

std::vector<IntervalResult> sweep_intervals(const JobSpec& spec, const std::vector<std::int64_t>& every_steps, int runs,
                                            std::uint64_t seed, int threads, const std::function<void(int)>& progress) {
  std::vector<IntervalResult> out;
  std::atomic<int> done{0};
  const std::int64_t steps = std::max<std::int64_t>(spec.profile.steps(), 1);
  for (std::int64_t every : every_steps) {
    JobSpec s = spec;
    s.checkpoint.every_steps = every;
    const JobSummary sum = simulate_job(s, runs, seed, threads, [&](int) {
      const int d = done.fetch_add(1) + 1;
      if (progress) progress(d);
    });
    IntervalResult r;
    r.every_steps = every;
    r.interval = spec.profile.uniform()
                     ? spec.profile.work_until(every)
                     : static_cast<Time>(static_cast<__int128>(spec.profile.total()) * every / steps);
    r.overhead = sum.overhead;
    r.saving = sum.saving;
    r.redo = sum.redo;
    r.restore = sum.restore;
    for (const RunResult& x : sum.results) r.run_overhead.push_back(fraction(x.completion - x.useful, x.useful));
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<double> fit_optimum_interval(const std::vector<double>& tau_seconds,
                                           const std::vector<double>& overhead) {
  const std::size_t n = std::min(tau_seconds.size(), overhead.size());
  if (n < 3) return std::nullopt;
  Eigen::MatrixXd a(static_cast<Eigen::Index>(n), 3);
  Eigen::VectorXd y(static_cast<Eigen::Index>(n));
  for (std::size_t i = 0; i < n; ++i) {
    const auto row = static_cast<Eigen::Index>(i);
    a(row, 0) = 1.0 / tau_seconds[i];
    a(row, 1) = tau_seconds[i];
    a(row, 2) = 1.0;
    y(row) = overhead[i];
  }
  const Eigen::Vector3d coef = a.colPivHouseholderQr().solve(y);
  if (!(coef(0) > 0) || !(coef(1) > 0)) return std::nullopt;
  return std::sqrt(coef(0) / coef(1));
}

}  // namespace stepsim
