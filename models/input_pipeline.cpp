#include "models/input_pipeline.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "sim/checked.hpp"

namespace stepsim {

namespace {
constexpr Time kNever = std::numeric_limits<Time>::max();

// When a worker that starts `period` of active work at `start` finishes, its pauses frozen out.
Time finish_time(const InputWorker& w, Time start, std::size_t first_pause) {
  Time t = start;
  Time remaining = w.period;
  constexpr std::string_view kWhat = "the input pipeline's batches";
  for (std::size_t p = first_pause; p < w.pauses.size(); ++p) {
    const Time a = w.pauses[p].start, b = time_add(a, w.pauses[p].duration, kWhat);
    if (b <= t) continue;
    if (a >= time_add(t, remaining, kWhat)) break;
    if (a > t) remaining -= a - t;
    t = b;
  }
  return time_add(t, remaining, kWhat);
}

class InputSimulation {
 public:
  InputSimulation(const InputSpec& spec, Time step_time, std::int64_t steps)
      : spec_(spec), step_time_(step_time), steps_(steps), workers_(spec.workers.size()) {
    if (spec.workers.empty()) throw std::invalid_argument("input pipeline without workers");
    if (spec.batch < 1 || spec.draws < 1 || spec.draws > spec.batch)
      throw std::invalid_argument("input: bad batch or draws");
    if (spec.prefetch < draw_size(0)) throw std::invalid_argument("input: prefetch smaller than one draw");
    for (const auto& w : spec.workers)
      if (w.period <= 0) throw std::invalid_argument("input: worker without a rate");
    for (const auto& w : spec.workers)
      for (const auto& p : w.pauses) pause_ends_.push_back(p.start + p.duration);
    std::sort(pause_ends_.begin(), pause_ends_.end());
    out_.refill.assign(pause_ends_.size(), std::nullopt);
  }

  InputRun run() {
    ready_ = spec_.warm ? spec_.prefetch : 0;
    assigned_ = ready_;
    assign(0);
    Time due = 0;  // the current draw's time if nothing stalls
    bool blocked = false;
    std::int64_t step = 0, draw = 0;
    Time step_start = 0, step_wait = 0;
    InputStepSample sample;
    while (step < steps_) {
      Time next_done = kNever, next_wake = kNever;
      for (const auto& w : workers_) {
        next_done = std::min(next_done, w.busy_until);
        next_wake = std::min(next_wake, w.wake_at);
      }
      const Time next_worker = std::min(next_done, next_wake);
      if (blocked || next_worker <= due) {
        if (next_worker == kNever) throw std::logic_error("input pipeline cannot make progress");
        now_ = next_worker;
        for (std::size_t i = 0; i < workers_.size(); ++i) {
          auto& w = workers_[i];
          if (w.busy_until == now_) {
            w.busy_until = kNever;
            ++ready_;
            --inflight_;
          }
          if (w.wake_at == now_) w.wake_at = kNever;
        }
        assign(now_);
        if (!blocked || ready_ < draw_size(draw)) continue;
        step_wait += now_ - due;  // the stalled draw goes now
        due = now_;
        blocked = false;
      } else {
        now_ = due;
      }
      // The draw at time `due`.
      if (ready_ < draw_size(draw)) {
        blocked = true;
        if (draw == 0 && !sample_started_) start_sample(sample, step, step_start);
        sample.min_ready = std::min(sample.min_ready, ready_);
        continue;
      }
      if (draw == 0 && !sample_started_) start_sample(sample, step, step_start);
      sample.min_ready = std::min(sample.min_ready, ready_);
      ready_ -= draw_size(draw);
      consumed_ += draw_size(draw);
      assign(now_);
      if (++draw == spec_.draws) {
        sample.wait = step_wait;
        out_.steps.push_back(sample);
        out_.total_wait += step_wait;
        out_.max_wait = std::max(out_.max_wait, step_wait);
        if (step_wait > 0) ++out_.stalled_steps;
        step_start += step_time_ + step_wait;
        step_wait = 0;
        draw = 0;
        ++step;
        sample_started_ = false;
      }
      due = step_start + step_wait + offset(draw);
    }
    return out_;
  }

 private:
  struct WorkerState {
    Time busy_until = kNever;
    Time wake_at = kNever;
    std::size_t pause = 0;  // first pause not yet over
  };

  std::int64_t draw_size(std::int64_t j) const {
    return (j + 1) * spec_.batch / spec_.draws - j * spec_.batch / spec_.draws;
  }
  Time offset(std::int64_t j) const { return static_cast<Time>(static_cast<__int128>(step_time_) * j / spec_.draws); }

  void start_sample(InputStepSample& s, std::int64_t /*step*/, Time start) {
    s = InputStepSample{};
    s.start = start;
    s.ready = ready_;
    s.min_ready = ready_;
    s.trained = consumed_;
    s.assigned = assigned_;
    sample_started_ = true;
  }

  // Free, unpaused workers take sequences (index order) while fewer than `prefetch` are ahead.
  void assign(Time t) {
    for (std::size_t i = 0; i < workers_.size(); ++i) {
      auto& w = workers_[i];
      const auto& pauses = spec_.workers[i].pauses;
      while (w.pause < pauses.size() && pauses[w.pause].start + pauses[w.pause].duration <= t) ++w.pause;
      if (w.busy_until != kNever) continue;
      if (ready_ + inflight_ >= spec_.prefetch) break;
      if (w.pause < pauses.size() && pauses[w.pause].start <= t) {
        w.wake_at = pauses[w.pause].start + pauses[w.pause].duration;
        continue;
      }
      w.busy_until = finish_time(spec_.workers[i], t, w.pause);
      ++inflight_;
      ++assigned_;
    }
    // Refill: the first moment after each pause's end when every slot is assigned again.
    if (ready_ + inflight_ >= spec_.prefetch)
      for (std::size_t p = 0; p < pause_ends_.size(); ++p)
        if (!out_.refill[p] && pause_ends_[p] <= t) out_.refill[p] = t - pause_ends_[p];
  }

  const InputSpec& spec_;
  Time step_time_;
  std::int64_t steps_;
  std::vector<WorkerState> workers_;
  std::vector<Time> pause_ends_;
  InputRun out_;
  Time now_ = 0;
  std::int64_t ready_ = 0, inflight_ = 0, consumed_ = 0, assigned_ = 0;
  bool sample_started_ = false;
};

}  // namespace

Time period_for_rate(double sequences_per_second) {
  if (!(sequences_per_second > 0)) return 0;
  return time_from_ns(1e9 / sequences_per_second, "the input period (1 / sequences per second)");
}

std::vector<Time> InputRun::waits() const {
  std::vector<Time> w;
  w.reserve(steps.size());
  for (const auto& s : steps) w.push_back(s.wait);
  return w;
}

InputRun simulate_input(const InputSpec& spec, Time step_time, std::int64_t steps) {
  return InputSimulation(spec, step_time, steps).run();
}

std::optional<std::int64_t> min_prefetch_without_stall(InputSpec spec, Time step_time, std::int64_t steps) {
  const std::int64_t lo_valid = (spec.batch + spec.draws - 1) / spec.draws;  // the largest draw
  auto stalls = [&](std::int64_t prefetch) {
    spec.prefetch = prefetch;
    return simulate_input(spec, step_time, steps).stalled_steps > 0;
  };
  const std::int64_t cap = std::max(lo_valid, spec.batch * std::max<std::int64_t>(steps, 1));
  std::int64_t hi = std::max(lo_valid, spec.batch);
  while (stalls(hi)) {
    if (hi >= cap) return std::nullopt;
    hi = std::min(cap, hi * 2);
  }
  std::int64_t lo = lo_valid;  // invariant: hi does not stall
  if (!stalls(lo)) return lo;
  while (hi - lo > 1) {  // lo stalls, hi does not
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (stalls(mid))
      lo = mid;
    else
      hi = mid;
  }
  return hi;
}

FluidPauseEstimate fluid_pause_estimate(const InputSpec& spec, Time step_time, std::size_t paused_worker, Time pause) {
  FluidPauseEstimate f;
  f.consumption = static_cast<double>(spec.batch) / to_s(step_time);
  for (std::size_t i = 0; i < spec.workers.size(); ++i) {
    const double rate = 1.0 / to_s(spec.workers[i].period);
    f.production += rate;
    if (i != paused_worker) f.production_during_pause += rate;
  }
  f.min_prefetch = std::max(0.0, f.consumption - f.production_during_pause) * to_s(pause);
  const double surplus = f.production - f.consumption;
  f.refill_seconds = surplus > 0 ? f.min_prefetch / surplus : std::numeric_limits<double>::infinity();
  return f;
}

}  // namespace stepsim
