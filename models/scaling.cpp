#include "models/scaling.hpp"

#include <cmath>

#include "models/compute.hpp"
#include "sim/checked.hpp"

namespace stepsim {

double min_steps(double steps, double batch_tokens, double noise_tokens) {
  return steps / (1.0 + noise_tokens / batch_tokens);
}

double steps_at_batch(double s_min, double batch_tokens, double noise_tokens) {
  return s_min * (1.0 + noise_tokens / batch_tokens);
}

double max_batch_speedup(double batch_tokens, double noise_tokens) { return 1.0 + noise_tokens / batch_tokens; }

WeakScaling weak_scaling(double base_steps, double base_batch_tokens, int base_cards, Time step, int cards,
                         double noise_tokens) {
  WeakScaling w;
  w.batch_tokens = base_batch_tokens * cards / base_cards;
  w.steps = steps_at_batch(min_steps(base_steps, base_batch_tokens, noise_tokens), w.batch_tokens, noise_tokens);
  w.training = time_from_ns(w.steps * static_cast<double>(step), "the weak-scaling training time");
  return w;
}

Time strong_scaling_step(Time base_compute, Time waits, int base_cards, int cards) {
  const __int128 scaled = static_cast<__int128>(base_compute) * base_cards;
  return static_cast<Time>((scaled + cards / 2) / cards) + waits;
}

double training_flops_6nd(double params, double tokens) { return 6.0 * params * tokens; }

Time time_for_flops(double flops, std::int64_t cards, double peak, double mfu) {
  return compute_time(flops, cards, peak, mfu);
}

std::int64_t cards_for_flops(double flops, Time within, double peak, double mfu) {
  // Past int64 cards is no answer: refused like a time past the limit (TimeOverflowError).
  const auto cards = to_int64(std::ceil(flops / (peak * mfu * to_s(within))));
  if (!cards) throw TimeOverflowError("too large: the cards needed would exceed 9223372036854775807");
  return *cards;
}

double scaling_efficiency(Time t1, int n1, Time t2, int n2) { return (to_s(t1) * n1) / (to_s(t2) * n2); }

}  // namespace stepsim
