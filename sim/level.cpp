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
  // The changes (time, delta) grouped by counter with a counting sort, then each counter's
  // changes sorted by time. Only the level after all changes at one time is recorded, so the
  // order of changes within a time does not matter -- which is also why releases "come first"
  // at equal times: a buffer freed as another is allocated is never counted twice.
  struct Change {
    Time time;
    std::int64_t delta;
  };
  std::vector<std::size_t> begin(counters + 1, 0);
  for (const Hold& h : holds)
    if (h.amount != 0) begin[h.counter + 1] += 2;
  for (std::size_t c = 0; c < counters; ++c) begin[c + 1] += begin[c];
  std::vector<Change> changes(begin[counters]);
  std::vector<std::size_t> fill(begin.begin(), begin.end() - 1);
  for (const Hold& h : holds) {
    if (h.amount == 0) continue;
    changes[fill[h.counter]++] = {time_of(g, t, h.from), h.amount};
    changes[fill[h.counter]++] = {time_of(g, t, h.until), -h.amount};
  }
  std::vector<LevelCurve> curves(counters);
  for (std::size_t c = 0; c < counters; ++c) {
    if (begin[c] == begin[c + 1]) continue;
    const auto first = changes.begin() + static_cast<std::ptrdiff_t>(begin[c]);
    const auto last = changes.begin() + static_cast<std::ptrdiff_t>(begin[c + 1]);
    std::sort(first, last, [](const Change& a, const Change& b) { return a.time < b.time; });
    auto& curve = curves[c];
    std::int64_t level = 0;
    curve.steps.emplace_back(0, 0);
    for (auto i = first; i != last;) {
      const Time now = i->time;
      for (; i != last && i->time == now; ++i) level += i->delta;
      if (curve.steps.back().first == now) curve.steps.back().second = level;
      else if (curve.steps.back().second != level) curve.steps.emplace_back(now, level);
      if (level > curve.peak) { curve.peak = level; curve.peak_time = now; }
    }
  }
  return curves;
}

}  // namespace stepsim
