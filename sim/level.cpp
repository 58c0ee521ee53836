#include "sim/level.hpp"

#include <algorithm>

namespace stepsim {

Time time_of(const OpGraph& g, const Timeline& t, Mark m) {
  switch (m.point) {
    case OpPoint::Start: return t.start[m.op];
    case OpPoint::End: return t.end[m.op];
    case OpPoint::Done: return t.done(g, m.op);
  }
  return 0;
}

std::vector<LevelCurve> sweep_levels(const OpGraph& g, const Timeline& t, std::span<const Hold> holds,
                                     std::size_t counters) {
  struct Change {
    Time time;
    std::uint32_t counter;
    std::int64_t delta;
  };
  std::vector<Change> changes;
  changes.reserve(holds.size() * 2);
  for (const Hold& h : holds) {
    if (h.amount == 0) continue;
    changes.push_back({time_of(g, t, h.from), h.counter, h.amount});
    changes.push_back({time_of(g, t, h.until), h.counter, -h.amount});
  }
  // By counter, then time, releases (negative deltas) first.
  std::sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) {
    if (a.counter != b.counter) return a.counter < b.counter;
    if (a.time != b.time) return a.time < b.time;
    return a.delta < b.delta;
  });
  std::vector<LevelCurve> curves(counters);
  std::size_t i = 0;
  while (i < changes.size()) {
    const auto c = changes[i].counter;
    auto& curve = curves[c];
    std::int64_t level = 0;
    curve.steps.emplace_back(0, 0);
    while (i < changes.size() && changes[i].counter == c) {
      const Time now = changes[i].time;
      while (i < changes.size() && changes[i].counter == c && changes[i].time == now) level += changes[i++].delta;
      if (curve.steps.back().first == now) curve.steps.back().second = level;
      else if (curve.steps.back().second != level) curve.steps.emplace_back(now, level);
      if (level > curve.peak) { curve.peak = level; curve.peak_time = now; }
    }
  }
  return curves;
}

}  // namespace stepsim
