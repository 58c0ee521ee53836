#include "models/plan_sweep.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "sim/parallel_for.hpp"

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
                                   const std::function<void(std::size_t, std::size_t)>& progress, unsigned jobs) {
  std::size_t total = 1;
  for (const auto& a : axes) total *= a.values.size();
  // One entry per step shape, filled once by the first point that needs it while the others with
  // that shape wait for it (a failed call fills nothing: the next point with the shape tries
  // again and fails the same way).
  struct Memo {
    std::once_flag once;
    StepComm comm;
  };
  std::mutex lock;
  std::map<std::tuple<int, int, Time, double, Time>, std::shared_ptr<Memo>> seen;
  const StepCommSource memo = [&](const StepShape& s) {
    const auto key =
        std::make_tuple(s.cards, s.microbatches_per_card, s.compute_per_microbatch, s.efficiency, s.input_wait);
    std::shared_ptr<Memo> m;
    {
      std::lock_guard held(lock);
      auto& slot = seen[key];
      if (!slot) slot = std::make_shared<Memo>();
      m = slot;
    }
    std::call_once(m->once, [&] { m->comm = comm(s); });
    return m->comm;
  };
  std::vector<SweepPoint> out(total);
  std::atomic<std::size_t> done{0};
  // Threads take runs of neighbouring points: points next to each other often share a step shape
  // (an axis the shape does not depend on varies fastest), and one run computes it once while a
  // thread on another run works on other shapes instead of waiting for it.
  constexpr std::size_t kRun = 64;
  parallel_for((total + kRun - 1) / kRun, jobs, [&](std::size_t run) {
    for (std::size_t n = run * kRun; n < std::min(total, (run + 1) * kRun); ++n) {
      std::vector<std::size_t> index(axes.size());
      for (std::size_t a = axes.size(), rest = n; a-- > 0;) {  // the last axis varies fastest
        index[a] = rest % axes[a].values.size();
        rest /= axes[a].values.size();
      }
      PlanSpec s = spec;
      PlanCase c = base;
      for (std::size_t a = 0; a < axes.size(); ++a) apply(s, c, axes[a].key, axes[a].values[index[a]]);
      c.name.clear();
      out[n] = {std::move(index), evaluate_plan(s, c, comm ? memo : comm)};
      if (progress) progress(++done, total);
    }
  });
  return out;
}

}  // namespace stepsim
