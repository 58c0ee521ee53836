#include "models/plan_sweep.hpp"

#include <map>
#include <tuple>

namespace stepsim {

const std::vector<SweepKey>& sweep_keys() {
  static const std::vector<SweepKey> keys = {
      {"cards", SweepKind::Count, 1, 1 << 30},        {"zero", SweepKind::Count, 0, 3},
      {"efficiency", SweepKind::Fraction, 0, 0},      {"margin", SweepKind::Fraction, 0, 0},
      {"straggler_sigma", SweepKind::Fraction, 0, 0}, {"exposed_comm", SweepKind::Duration, 0, 0},
      {"input_wait", SweepKind::Duration, 0, 0},      {"interval", SweepKind::Duration, 0, 0},
      {"workspace", SweepKind::Size, 0, 0},
  };
  return keys;
}

const SweepKey* find_sweep_key(const std::string& name) {
  for (const auto& k : sweep_keys())
    if (k.name == name) return &k;
  return nullptr;
}

namespace {
void apply(PlanSpec& spec, PlanCase& c, const SweepKey& key, const SweepValue& v) {
  const std::string& n = key.name;
  if (n == "cards")
    c.cards = static_cast<int>(v.integer);
  else if (n == "zero") {
    spec.zero_stage = static_cast<int>(v.integer);
    c.zero_stage.reset();
  } else if (n == "efficiency") {
    spec.efficiency = v.fraction;
    c.efficiency.reset();
  } else if (n == "margin")
    spec.margin = v.fraction;
  else if (n == "straggler_sigma")
    spec.straggler_sigma = v.fraction;
  else if (n == "exposed_comm") {
    spec.exposed_comm = v.integer;
    c.exposed_comm.reset();
  } else if (n == "input_wait") {
    spec.input_wait = v.integer;
    c.input_wait.reset();
  } else if (n == "interval")
    spec.interval = v.integer;
  else if (n == "workspace")
    spec.workspace = v.integer;
}
}  // namespace

std::vector<SweepPoint> sweep_plan(const PlanSpec& spec, const PlanCase& base, const std::vector<SweepAxis>& axes,
                                   const StepCommSource& comm,
                                   const std::function<void(std::size_t, std::size_t)>& progress) {
  std::size_t total = 1;
  for (const auto& a : axes) total *= a.values.size();
  std::map<std::tuple<int, int, Time, double, Time>, StepComm> seen;
  const StepCommSource memo = [&](const StepShape& s) {
    const auto key =
        std::make_tuple(s.cards, s.microbatches_per_card, s.compute_per_microbatch, s.efficiency, s.input_wait);
    auto it = seen.find(key);
    if (it == seen.end()) it = seen.emplace(key, comm(s)).first;
    return it->second;
  };
  std::vector<SweepPoint> out;
  out.reserve(total);
  std::vector<std::size_t> index(axes.size(), 0);
  for (std::size_t n = 0; n < total; ++n) {
    PlanSpec s = spec;
    PlanCase c = base;
    for (std::size_t a = 0; a < axes.size(); ++a) apply(s, c, axes[a].key, axes[a].values[index[a]]);
    c.name.clear();
    out.push_back({index, evaluate_plan(s, c, memo)});
    if (progress) progress(n + 1, total);
    for (std::size_t a = axes.size(); a-- > 0;) {
      if (++index[a] < axes[a].values.size()) break;
      index[a] = 0;
    }
  }
  return out;
}

}  // namespace stepsim
