#include "models/stragglers_sim.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "models/random.hpp"
#include "sim/checked.hpp"

namespace stepsim {

namespace {
constexpr std::uint64_t kSlowMachineStream = 3;
constexpr std::uint64_t kJitterStream = 4;
constexpr std::int64_t kStepsPerBlock = 64;

struct BlockSums {
  std::vector<Time> wait;  // per card, summed over the block's steps
  std::vector<double> step_seconds, excess_sigmas;
};
}  // namespace

StragglerResult simulate_stragglers(const StragglerSpec& spec, std::uint64_t seed, int threads) {
  if (spec.cards < 1 || spec.cards_per_machine < 1 || spec.steps < 1)
    throw std::invalid_argument("stragglers: cards, cards per machine and steps must be positive");
  const std::int64_t machines = ceil_div(spec.cards, spec.cards_per_machine);
  StragglerResult out;
  out.slow_card.assign(static_cast<std::size_t>(spec.cards), false);

  // Which machines are slow: a fixed count drawn without replacement, or each with a probability.
  std::vector<bool> slow_machine(static_cast<std::size_t>(machines), false);
  Rng pick(derive_seed(seed, 0, kSlowMachineStream));
  if (spec.slow_machines > 0) {
    std::vector<std::int64_t> order(static_cast<std::size_t>(machines));
    for (std::int64_t m = 0; m < machines; ++m) order[static_cast<std::size_t>(m)] = m;
    const std::int64_t count = std::min(spec.slow_machines, machines);
    for (std::int64_t i = 0; i < count; ++i) {  // partial Fisher-Yates shuffle
      const auto j = i + static_cast<std::int64_t>(pick.uniform() * static_cast<double>(machines - i));
      std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(j)]);
      slow_machine[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])] = true;
    }
  } else if (spec.slow_fraction > 0) {
    for (std::int64_t m = 0; m < machines; ++m)
      slow_machine[static_cast<std::size_t>(m)] = pick.uniform() < spec.slow_fraction;
  }
  std::vector<double> mean_ns(static_cast<std::size_t>(spec.cards));
  for (std::int64_t c = 0; c < spec.cards; ++c) {
    const bool slow = slow_machine[static_cast<std::size_t>(c / spec.cards_per_machine)];
    out.slow_card[static_cast<std::size_t>(c)] = slow;
    mean_ns[static_cast<std::size_t>(c)] = static_cast<double>(spec.compute) * (slow ? spec.slowdown : 1.0);
  }
  for (bool s : slow_machine) out.slow_machine_count += s ? 1 : 0;

  const std::int64_t blocks = (spec.steps + kStepsPerBlock - 1) / kStepsPerBlock;
  std::vector<BlockSums> sums(static_cast<std::size_t>(blocks));
  const double sigma = static_cast<double>(spec.sigma);
  for_each_run(static_cast<int>(blocks), threads, [&](int b) {
    BlockSums& s = sums[static_cast<std::size_t>(b)];
    s.wait.assign(static_cast<std::size_t>(spec.cards), 0);
    Rng rng(derive_seed(seed, static_cast<std::uint64_t>(b), kJitterStream));
    std::vector<Time> compute(static_cast<std::size_t>(spec.cards));
    const std::int64_t first = b * kStepsPerBlock;
    const std::int64_t last = std::min(spec.steps, first + kStepsPerBlock);
    for (std::int64_t step = first; step < last; ++step) {
      Time slowest = 0;
      for (std::size_t c = 0; c < compute.size(); ++c) {
        compute[c] = std::max<Time>(0, static_cast<Time>(std::llround(mean_ns[c] + sigma * rng.normal())));
        slowest = std::max(slowest, compute[c]);
      }
      for (std::size_t c = 0; c < compute.size(); ++c) s.wait[c] += slowest - compute[c];
      s.step_seconds.push_back(to_s(slowest + spec.other));
      if (spec.sigma > 0) s.excess_sigmas.push_back(static_cast<double>(slowest - spec.compute) / sigma);
    }
  });

  std::vector<double> steps, excess;
  std::vector<Time> wait(static_cast<std::size_t>(spec.cards), 0);
  for (const BlockSums& s : sums) {
    steps.insert(steps.end(), s.step_seconds.begin(), s.step_seconds.end());
    excess.insert(excess.end(), s.excess_sigmas.begin(), s.excess_sigmas.end());
    for (std::size_t c = 0; c < wait.size(); ++c) wait[c] += s.wait[c];
  }
  out.step_seconds = estimate_mean(steps);
  out.max_excess_sigmas = estimate_mean(excess);
  for (Time w : wait) out.card_wait_seconds.push_back(to_s(w) / static_cast<double>(spec.steps));
  return out;
}

}  // namespace stepsim
