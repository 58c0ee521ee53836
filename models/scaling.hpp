#pragma once
// Scaling questions (sections 10.3.3 and 10.6).
#include <cstdint>

#include "sim/time.hpp"

namespace stepsim {

// Critical batch size (McCandlish et al. 2018, "An Empirical Model of Large-Batch Training",
// eq. 2.11): steps to a target loss S = S_min (1 + B_noise / B) for a batch of B tokens.
double min_steps(double steps, double batch_tokens, double noise_tokens);       // S_min from S at B
double steps_at_batch(double s_min, double batch_tokens, double noise_tokens);  // S at B
// The most a larger batch can ever cut the steps from batch B: S(B) / S_min = 1 + B_noise / B.
double max_batch_speedup(double batch_tokens, double noise_tokens);

// Weak scaling: each card keeps its micro-batches, so the step time stays and the global batch
// grows with the cards; the steps follow the critical-batch law.
struct WeakScaling {
  double batch_tokens = 0;
  double steps = 0;
  Time training = 0;  // steps x step
};
WeakScaling weak_scaling(double base_steps, double base_batch_tokens, int base_cards, Time step, int cards,
                         double noise_tokens);

// Strong scaling: the global batch stays; each card's compute shrinks as base_cards / cards and the
// waits (communication, input) stay.
Time strong_scaling_step(Time base_compute, Time waits, int base_cards, int cards);

// Scale-out (figure 10-46): training FLOPs F = 6 N D (Kaplan et al. 2020, sec. 2.1); with
// D = k N tokens, F = 6 k N^2 (k = 20, Hoffmann et al. 2022: F = 120 N^2).
double training_flops_6nd(double params, double tokens);
Time time_for_flops(double flops, std::int64_t cards, double peak, double mfu);
std::int64_t cards_for_flops(double flops, Time within, double peak, double mfu);

// Scaling efficiency from step times at two card counts: (t1 n1) / (t2 n2).
double scaling_efficiency(Time t1, int n1, Time t2, int n2);

}  // namespace stepsim
