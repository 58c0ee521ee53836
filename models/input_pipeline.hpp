#pragma once
// The input pipeline of a run (book 10.4.1-10.4.2, figure 10-30, exercise 10-5): preparation
// workers (read, tokenize, filter, pack) fill a prefetch queue that the training steps drain.
//
// Model:
// - Each worker prepares one sequence at a time, taking `period` of active time per sequence;
//   during a pause its current sequence is frozen and it takes no new one.
// - `prefetch` bounds the sequences assigned ahead of training (ready + being prepared): a free
//   worker starts a sequence only while fewer than `prefetch` are ahead. Training progress is what
//   the steps consumed; prefetch progress runs ahead of it (trained to 100, assigned up to 108).
// - A step takes its batch in `draws` equal draws spread evenly over its compute time (draw j at
//   j x step / draws, 48 cards x 8 accumulations = 8 draws of 48). A draw that finds too few
//   ready sequences waits; the waits of a step add to its time (its input wait).
// - `warm`: the queue is full when the first step starts (the loader was started ahead).
// Ties: a sequence finishing at a draw's time is available to it; free workers take new
// sequences in index order.
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "sim/time.hpp"

namespace stepsim {

struct InputPause {
  Time start = 0, duration = 0;
};

struct InputWorker {
  Time period = 0;                 // active time per sequence (1 / rate)
  std::vector<InputPause> pauses;  // ascending, not overlapping
};

struct InputSpec {
  std::int64_t batch = 1;     // sequences per step
  std::int64_t draws = 1;     // draws per step
  std::int64_t prefetch = 1;  // sequences assigned ahead of training at most
  bool warm = true;
  std::vector<InputWorker> workers;
};

// The period of a worker preparing `rate` sequences per second, to the nearest nanosecond.
Time period_for_rate(double sequences_per_second);

struct InputStepSample {
  Time start = 0;              // the step's start (training time without failures)
  Time wait = 0;               // the step's input wait
  std::int64_t ready = 0;      // ready sequences when the step starts
  std::int64_t min_ready = 0;  // fewest ready before any of the step's draws
  std::int64_t trained = 0;    // sequences consumed before the step (training progress)
  std::int64_t assigned = 0;   // sequences handed to workers before the step (prefetch progress)
};

struct InputRun {
  std::vector<InputStepSample> steps;
  Time total_wait = 0;
  std::int64_t stalled_steps = 0;
  Time max_wait = 0;
  // Per pause: time from its end until the queue is full again (every slot assigned); nullopt
  // if it never refills within the run.
  std::vector<std::optional<Time>> refill;

  std::vector<Time> waits() const;  // per step
};

// Runs `steps` steps of `step_time` compute each against the pipeline.
InputRun simulate_input(const InputSpec& spec, Time step_time, std::int64_t steps);

// The smallest prefetch with which no step of the run waits for input (binary search over the
// simulation; waits are non-increasing in the prefetch). nullopt if even batch x steps stalls.
std::optional<std::int64_t> min_prefetch_without_stall(InputSpec spec, Time step_time, std::int64_t steps);

// The book's fluid estimate for comparison (exercise 10-5): during a pause the queue drains at
// the training's average consumption minus the other workers' production; afterwards it refills
// at the total production minus consumption. Rates in sequences per second.
struct FluidPauseEstimate {
  double consumption = 0, production = 0, production_during_pause = 0;
  double min_prefetch = 0;    // sequences
  double refill_seconds = 0;  // after the pause; infinite if production <= consumption
};
FluidPauseEstimate fluid_pause_estimate(const InputSpec& spec, Time step_time, std::size_t paused_worker, Time pause);

}  // namespace stepsim
