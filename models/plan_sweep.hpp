#pragma once
// Sweeping the planner over a grid of inputs (`stepsim plan FILE --sweep cards=16:64:8 ...`):
// every combination of the axes' values is evaluated with evaluate_plan, the one evaluation path.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/plan.hpp"

namespace stepsim {

enum class SweepKind { Count, Fraction, Duration, Size };

// The inputs a sweep can vary, and their kind: cards, zero (counts); efficiency, margin,
// straggler_sigma (fractions); exposed_comm, input_wait, interval (durations); workspace (size).
struct SweepKey {
  std::string name;
  SweepKind kind;
  std::int64_t min = 0, max = 0;  // bounds for counts
};
const std::vector<SweepKey>& sweep_keys();
const SweepKey* find_sweep_key(const std::string& name);

struct SweepValue {
  std::int64_t integer = 0;  // counts, nanoseconds, bytes
  double fraction = 0;       // fractions
  std::string label;         // as shown in tables
};

struct SweepAxis {
  SweepKey key;
  std::vector<SweepValue> values;
};

struct SweepPoint {
  std::vector<std::size_t> index;  // value index on each axis
  PlanResult result;
};

// Row-major over the axes (the last axis varies fastest). Communication timings are memoised per
// step shape, so an expensive source (a simulation) runs once per distinct step shape. The points
// are evaluated on `jobs` threads (`comm` is then called from several at once, for different
// shapes); the result does not depend on `jobs`, and an error is the one of the first point
// (in row-major order) that fails. `progress(done, total)` is called, from any thread, after each
// point with the count done so far. An empty `comm` is evaluate_plan's stand-in from each point's
// own inputs (not memoised: it is cheap, and it depends on the point's exposed_comm).
std::vector<SweepPoint> sweep_plan(const PlanSpec& spec, const PlanCase& base, const std::vector<SweepAxis>& axes,
                                   const StepCommSource& comm,
                                   const std::function<void(std::size_t, std::size_t)>& progress = {},
                                   unsigned jobs = 1);

}  // namespace stepsim
