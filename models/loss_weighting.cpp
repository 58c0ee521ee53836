#include "models/loss_weighting.hpp"

namespace stepsim {

std::vector<double> sequence_weights(const std::vector<std::int64_t>& valid_tokens, LossAveraging averaging) {
  std::vector<double> w(valid_tokens.size(), 0.0);
  std::int64_t tokens = 0, sequences = 0;
  for (std::int64_t t : valid_tokens)
    if (t > 0) tokens += t, ++sequences;
  for (std::size_t i = 0; i < valid_tokens.size(); ++i) {
    if (valid_tokens[i] <= 0) continue;
    w[i] = averaging == LossAveraging::PerToken ? static_cast<double>(valid_tokens[i]) / static_cast<double>(tokens)
                                                : 1.0 / static_cast<double>(sequences);
  }
  return w;
}

double accumulated_mean(const std::vector<MicroBatchMean>& micro_batches) {
  double sum = 0;
  std::int64_t events = 0;
  for (const auto& m : micro_batches) {
    sum += static_cast<double>(m.events) * m.mean;
    events += m.events;
  }
  return events > 0 ? sum / static_cast<double>(events) : 0.0;
}

double mean_of_means(const std::vector<MicroBatchMean>& micro_batches) {
  if (micro_batches.empty()) return 0.0;
  double sum = 0;
  for (const auto& m : micro_batches) sum += m.mean;
  return sum / static_cast<double>(micro_batches.size());
}

}  // namespace stepsim
