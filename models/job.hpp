#pragma once
// A whole training run as events: steps run between the moments where something happens —
// a checkpoint save, a failure, a loss-spike rollback, a restore, a snapshot's commit — and a
// Monte Carlo over many runs gives the distribution of the completion time (book 10.4.3-10.4.5,
// reference section 5). Per run, only those moments are events, never one event per step.
//
// The model (assumptions stated once, here):
// - Time is "work" while steps run: the run needs W = sum of its step times of work. Failures are
//   a Poisson process in wall time with rate cards / card_mtbf (each card fails independently and
//   any card's failure stops the job); they can strike anywhere: during steps, saves, copies,
//   buffer waits and restores. Loss-spike rollbacks are a second, independent Poisson process.
//   Injected failures (`failures_at`, wall times) are a third source, for worked examples.
// - An interruption (failure or rollback) discards every snapshot not yet committed, restores the
//   last committed one (the initial state, step 0, always counts as committed) taking `restore`,
//   and the steps since that snapshot are redone. An interruption during a restore restarts it.
// - Checkpoints are taken every `every_steps` steps (never after the last step). Synchronous:
//   training pauses for the write (size / storage bandwidth) plus the commit record; the snapshot
//   counts once the pause ends. Asynchronous: training pauses only for the copy into a host buffer;
//   the storage then writes snapshots one after another (FIFO) at its bandwidth, and each counts
//   from its commit (write end + commit time). With a limited number of host buffers, a capture
//   that finds every buffer still being written waits for the oldest write to finish.
// - Wall time splits exactly into useful steps (W), redo (step time later discarded, including the
//   partial step a failure interrupts), saving (sync pauses, copies, buffer waits) and restore.
// Ties at the same nanosecond: a segment of steps, a save or a restore that ends exactly when an
// interruption arrives completes first; a commit landing at the interruption's time counts.
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "models/monte_carlo.hpp"
#include "sim/time.hpp"

namespace stepsim {

// How long each step takes: one duration for all, or one per step (e.g. step time plus that
// step's simulated input wait). Work W(k) is the time of steps [0, k).
class StepProfile {
 public:
  StepProfile() = default;
  StepProfile(std::int64_t steps, Time step_time);
  explicit StepProfile(const std::vector<Time>& durations);

  std::int64_t steps() const { return steps_; }
  Time work_until(std::int64_t k) const;       // W(k)
  std::int64_t steps_within(Time work) const;  // the largest k with W(k) <= work
  Time total() const { return work_until(steps_); }
  bool uniform() const { return prefix_.empty(); }

 private:
  std::int64_t steps_ = 0;
  Time step_ = 0;
  std::vector<Time> prefix_;  // prefix_[k] = W(k), only for per-step durations
};

// The number of steps whose total is closest to `interval` (at least 1): "save every 1,800 s"
// becomes every 34 steps of 52.8 s (1,795.2 s).
std::int64_t steps_per_interval(Time interval, Time step_time);

enum class SaveMode { Sync, Async };

struct CheckpointSpec {
  std::int64_t every_steps = 0;  // 0: never save
  SaveMode mode = SaveMode::Sync;
  Bytes size = 0;
  std::int64_t storage_bandwidth = 0;  // bytes per second
  Time copy = 0;                       // async: the training pause to copy the snapshot into a host buffer
  Time commit = 0;                     // the commit record after the data is written
  int buffers = 0;                     // async: host buffers for snapshots being written (0: unlimited)

  Time write_time() const { return transfer_time(size, storage_bandwidth); }
  // The training pause of one checkpoint without waits: the write + commit (sync) or the copy.
  Time pause() const { return mode == SaveMode::Sync ? write_time() + commit : copy; }
};

struct JobSpec {
  StepProfile profile;
  std::int64_t cards = 1;
  Time card_mtbf = 0;  // 0: no random failures
  Time restore = 0;
  Time rollback_interval = 0;     // mean wall time between loss-spike rollbacks (0: none)
  std::vector<Time> failures_at;  // injected failures, wall times, ascending
  CheckpointSpec checkpoint;
  Time reserved = 0;  // fixed time added to every completion (the book reserves 5 days)
  Time deadline = 0;  // 0: no deadline
  // Work guard: the most events (step segments, saves, interruptions) one run may simulate
  // before it throws JobTooMuchWork (0: no limit). Counts work, not simulated time.
  std::int64_t max_events = 0;

  // The job's mean time between failures: card MTBF / cards (0 without failures).
  Time job_mtbf() const { return card_mtbf > 0 ? card_mtbf / cards : 0; }
};

// One run's outcome. completion = useful + saving + redo + restore exactly.
struct RunResult {
  Time completion = 0;  // wall time from start to the last step's end (without `reserved`)
  Time useful = 0, saving = 0, redo = 0, restore = 0;
  int failures = 0, rollbacks = 0, saves = 0, commits = 0, restores = 0;
  int max_pending = 0;  // most snapshots captured but not committed at once (async)
};

// What happened in one run, for traces and worked examples.
enum class JobEventKind { Steps, Save, Copy, BufferWait, Write, Commit, Failure, Rollback, Restore };
const char* job_event_name(JobEventKind k);

struct JobEvent {
  JobEventKind kind;
  Time start = 0, end = 0;
  std::int64_t from_step = 0, to_step = 0;  // Steps: steps [from, to); Failure/Rollback: position
                                            // (steps done) and the restored snapshot's step;
                                            // Save/Copy/Write/Commit: the snapshot's step
  Time lost = 0;                            // Failure/Rollback: work discarded
  bool completed = true;                    // false when an interruption cut it short
};

// Evenly spaced samples of a sequence met one item at a time, in bounded memory: every item while
// there are at most `capacity` (0: no limit), then every stride-th, the stride doubling whenever
// the kept items would pass `capacity`; and always the last item.
class EvenSample {
 public:
  using Item = std::pair<Time, int>;
  explicit EvenSample(std::size_t capacity = 0) : capacity_(capacity) {}
  void add(const Item& item);
  std::int64_t total() const { return total_; }
  std::int64_t stride() const { return stride_; }  // kept()[i] is item i x stride()
  const std::vector<Item>& kept() const { return kept_; }
  const Item& last() const { return last_; }

 private:
  std::size_t capacity_;
  std::int64_t total_ = 0;
  std::int64_t stride_ = 1;
  std::vector<Item> kept_;
  Item last_{0, 0};
};

// What a run recorded. A long run has hundreds of millions of events (a job of tiny steps saving
// every few): a record keeps the first `max_events` events, the pending curve's points until then
// (at most as many), and the first `max_interruptions` failures and rollbacks, with the counts of
// all of them (0: keep everything, for tests that read a whole run back from its log).
struct JobRecord {
  std::size_t max_events = 0;
  std::size_t max_interruptions = 0;
  std::vector<JobEvent> events;         // in the order simulated
  std::int64_t event_count = 0;         // kept or not
  std::vector<JobEvent> interruptions;  // the failures and rollbacks among the events
  std::int64_t interruption_count = 0;
  std::vector<std::pair<Time, int>> pending;  // snapshots captured but not committed, from each time on
  std::int64_t pending_count = 0;             // points of the whole curve
  // The curve's points where it rises (after a capture), sampled evenly over the whole run; give
  // it a capacity to bound it.
  EvenSample rises;

  bool events_cut() const { return event_count > static_cast<std::int64_t>(events.size()); }
};

// A run that has not finished after 100 times its work plus a year of wall time (at most
// 2^62 ns, ~146 years): failures
// arrive faster than checkpoint segments can complete (expected time grows like e^(lambda tau)).
class JobCannotFinish : public std::runtime_error {
 public:
  JobCannotFinish(int run, Time wall, std::int64_t steps_done);
  int run;
  Time wall;
  std::int64_t steps_done;
};

// A run that passed spec.max_events events.
class JobTooMuchWork : public std::runtime_error {
 public:
  JobTooMuchWork(int run, std::int64_t events);
};

// One run with generators derived from (seed, run). `record`, if given, receives the timeline.
// Throws JobCannotFinish.
RunResult simulate_run(const JobSpec& spec, std::uint64_t seed, int run, JobRecord* record = nullptr);

struct JobSummary {
  int runs = 0;
  std::uint64_t seed = 0;
  std::vector<RunResult> results;          // by run index
  TimeDistribution completion;             // including spec.reserved
  std::optional<double> meet_probability;  // share of runs with completion <= deadline
  // Per run as a fraction of the useful work W, then averaged over runs.
  MeanEstimate overhead, saving, redo, restore;
  MeanEstimate failures, rollbacks;
  int max_pending = 0;
};

// N independent runs on `threads` threads (0: all); the same seed gives the same summary.
JobSummary simulate_job(const JobSpec& spec, int runs, std::uint64_t seed, int threads = 0,
                        const std::function<void(int)>& progress = {});

// Completion times (with `reserved`) of a summary's runs, for histograms.
std::vector<Time> completion_times(const JobSpec& spec, const JobSummary& summary);

// The same runs (same seed, hence the same failure times) under several checkpoint intervals.
struct IntervalResult {
  std::int64_t every_steps = 0;
  Time interval = 0;  // W(every_steps) for a uniform profile, else every_steps x mean step
  MeanEstimate overhead, saving, redo, restore;
  std::vector<double> run_overhead;  // per run, fraction of W
};
std::vector<IntervalResult> sweep_intervals(const JobSpec& spec, const std::vector<std::int64_t>& every_steps, int runs,
                                            std::uint64_t seed, int threads = 0,
                                            const std::function<void(int)>& progress = {});

// The interval minimising a least-squares fit of overhead(tau) = a / tau + b tau + d to measured
// points (the shape of the Young/Daly first-order model), sqrt(a / b) in seconds; nullopt when
// the fit has no interior minimum (a <= 0 or b <= 0) or fewer than three points.
std::optional<double> fit_optimum_interval(const std::vector<double>& tau_seconds, const std::vector<double>& overhead);

}  // namespace stepsim
