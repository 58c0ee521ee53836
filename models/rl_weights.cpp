#include "models/rl_weights.hpp"

#include <algorithm>

namespace stepsim {

const CardState* find_state(const ColocateSpec& spec, const std::string& name) {
  for (const auto& s : spec.states)
    if (s.name == name) return &s;
  return nullptr;
}

namespace {
bool has_step(const SwitchOrder& order, const std::string& state, bool load) {
  return std::any_of(order.steps.begin(), order.steps.end(),
                     [&](const SwitchStep& st) { return st.state == state && st.load == load; });
}
}  // namespace

Bytes resident_before(const ColocateSpec& spec, const SwitchOrder& order) {
  Bytes sum = 0;
  for (const auto& s : spec.states)
    if (!has_step(order, s.name, true)) sum += s.size;
  return sum;
}

Bytes switch_peak(const ColocateSpec& spec, const SwitchOrder& order) {
  Bytes level = resident_before(spec, order), peak = level;
  for (const auto& step : order.steps) {
    const CardState* s = find_state(spec, step.state);
    if (!s) continue;
    level += step.load ? s->size : -s->size;
    peak = std::max(peak, level);
  }
  return peak;
}

const char* distribution_name(WeightDistribution d) {
  return d == WeightDistribution::FullSet ? "full set to each" : "by shard";
}

Bytes share_begin(Bytes size, std::int64_t n, std::int64_t k) {
  return static_cast<Bytes>(static_cast<__int128>(size) * k / n);
}

Bytes total_traffic(const WeightTransferSpec& spec, WeightDistribution d) {
  return d == WeightDistribution::FullSet ? spec.size * spec.receivers : spec.size;
}

}  // namespace stepsim
