#pragma once
// How a loss's denominator weighs the examples in a gradient.
//
// Per-token averaging divides the summed token losses by the number of valid tokens, so a
// sequence's weight is its share of the tokens; per-sequence averaging first averages within each
// sequence, so every sequence weighs the same (section 10.5: 8 answers, 4 with 2 valid tokens and
// 4 with 3, 20 in all: per token, the long answers carry 12/20 = 60% of the weight).
//
// Gradient accumulation must combine micro-batches the same way: the mean over all valid events is
// sum(n_i x mean_i) / sum(n_i), not the mean of the micro-batch means (the resource-bill chapter,
// example 27.2: 2 and 6 events with mean gradients 1 and 3 give (2 + 18) / 8 = 2.5, not 2).
#include <cstdint>
#include <vector>

namespace stepsim {

enum class LossAveraging : std::uint8_t { PerToken, PerSequence };

// The weight of each sequence in the loss (they sum to 1), from its number of valid tokens.
// Sequences with no valid token weigh 0 under both.
std::vector<double> sequence_weights(const std::vector<std::int64_t>& valid_tokens, LossAveraging averaging);

// A micro-batch's contribution: how many valid events it has and the mean gradient over them.
struct MicroBatchMean {
  std::int64_t events = 0;
  double mean = 0;
};

// sum(events x mean) / sum(events): the mean over every event of the step.
double accumulated_mean(const std::vector<MicroBatchMean>& micro_batches);
// The mean of the micro-batch means: what a loop that averages reported means gets.
double mean_of_means(const std::vector<MicroBatchMean>& micro_batches);

}  // namespace stepsim
