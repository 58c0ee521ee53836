#pragma once
// Stragglers (book 10.4.5, reference section 5): every step waits for the slowest card. Each
// card's compute time per step is its mean (times a slowdown on persistently slow machines) plus
// independent normal jitter; the step ends when the last card finishes, plus a fixed part
// (communication and input wait). Each card's wait at the gradient collective is the step's
// compute end minus its own, which is how the book finds the slow card.
// Not modelled (as in the book): correlated jitter, periodic hiccups.
#include <cstdint>
#include <vector>

#include "models/monte_carlo.hpp"
#include "models/stragglers.hpp"
#include "sim/time.hpp"

namespace stepsim {

struct StragglerSpec {
  std::int64_t cards = 1;
  std::int64_t cards_per_machine = 8;
  Time compute = 0;  // mean per-card compute per step (mu)
  Time sigma = 0;    // standard deviation of the independent jitter
  Time other = 0;    // added to every step (communication and input wait)
  // Persistently slow machines: an exact count (chosen at random with the seed), or each machine
  // slow with probability `slow_fraction`. Their cards' mean compute is multiplied by slowdown.
  std::int64_t slow_machines = 0;
  double slow_fraction = 0;
  double slowdown = 1.0;
  std::int64_t steps = 1000;  // steps to sample
};

struct StragglerResult {
  MeanEstimate step_seconds;              // simulated E[step] (max compute + other)
  MeanEstimate max_excess_sigmas;         // (max compute - mu) / sigma per step
  std::vector<double> card_wait_seconds;  // mean wait at the gradient collective, per card
  std::vector<bool> slow_card;
  std::int64_t slow_machine_count = 0;
};

// Samples spec.steps steps; blocks of steps have their own generators (from seed and the block's
// index), so the result is the same with any number of threads.
StragglerResult simulate_stragglers(const StragglerSpec& spec, std::uint64_t seed, int threads = 0);

}  // namespace stepsim
