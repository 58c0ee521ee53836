#include "sim/level.hpp"

#include "sim/level_runs.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <type_traits>

namespace stepsim {

Time time_of(const OpGraph& g, const Timeline& t, Mark m) {
  switch (m.point) {
    case OpPoint::Start: return t.start[m.op];
    case OpPoint::End: return t.end(g, m.op);
    case OpPoint::Done: return t.done(g, m.op);
  }
  return 0;
}

namespace {

using Change = LevelChange;

// Sorts changes by time: a least-significant-digit radix sort on (time - earliest), as many
// passes as the span of times needs, through `scratch`. Linear in the number of changes. The
// digit width follows the count (up to 11 bits: 2,048 histogram entries a pass), so that the
// histograms stay smaller than the data: a device's few thousand changes sort in four or five
// cheap passes instead of a comparison sort (which cost a quarter of a whole run at p = 64,
// m = 1,024). The order within one time is left unspecified: nothing downstream depends on it.
template <class T>
Time time_key(const T& x) {
  if constexpr (std::is_same_v<T, Time>)
    return x;
  else
    return x.time;
}

template <class T>
void sort_by_time(T* first, T* last, std::vector<T>& scratch) {
  const std::size_t n = static_cast<std::size_t>(last - first);
  if (n < 64) {
    std::sort(first, last, [](const T& a, const T& b) { return time_key(a) < time_key(b); });
    return;
  }
  // Most runs come in order: check that alone first.
  const T* out_of_order = first + 1;
  while (out_of_order != last && time_key(out_of_order[-1]) <= time_key(*out_of_order)) ++out_of_order;
  if (out_of_order == last) return;
  Time lo = time_key(*first), hi = lo;
  for (const T* c = first + 1; c != last; ++c) {
    lo = std::min(lo, time_key(*c));
    hi = std::max(hi, time_key(*c));
  }
  const auto span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
  const int bits = std::clamp(static_cast<int>(std::bit_width(n)) - 3, 4, 11);
  const std::size_t radix = std::size_t{1} << bits;
  const int passes = (static_cast<int>(std::bit_width(span)) + bits - 1) / bits;
  if (scratch.size() < n) scratch.resize(n);
  std::vector<std::uint32_t> count(radix * static_cast<std::size_t>(passes), 0);
  for (const T* c = first; c != last; ++c) {
    const auto key = static_cast<std::uint64_t>(time_key(*c)) - static_cast<std::uint64_t>(lo);
    for (int p = 0; p < passes; ++p) ++count[radix * p + ((key >> (bits * p)) & (radix - 1))];
  }
  T* from = first;
  T* to = scratch.data();
  for (int p = 0; p < passes; ++p) {
    std::uint32_t* h = count.data() + radix * p;
    std::uint32_t sum = 0;
    for (std::size_t d = 0; d < radix; ++d) {
      const std::uint32_t c = h[d];
      h[d] = sum;
      sum += c;
    }
    for (std::size_t i = 0; i < n; ++i) {
      const auto key = static_cast<std::uint64_t>(time_key(from[i])) - static_cast<std::uint64_t>(lo);
      to[h[(key >> (bits * p)) & (radix - 1)]++] = from[i];
    }
    std::swap(from, to);
  }
  if (from != first) std::copy(from, from + n, first);
}

}  // namespace

namespace {

// The level after all changes at each time, of changes in time order. Only the level after all
// changes at one time is recorded, so the order of changes within a time does not matter --
// which is also why releases "come first" at equal times: a buffer freed as another is allocated
// is never counted twice. `at(now, level)` is told each time's level, in time order.
// A curve with no change is empty; changes of a second level alone leave it so (and give that
// level's peak, `second`).
struct CurveSteps {
  LevelCurve curve;
  LevelPeak second;
  explicit CurveSteps(bool any) {
    if (any) curve.steps.emplace_back(0, 0);
  }
  void at(Time now, std::int64_t level, std::int64_t level2) {
    if (level2 > second.peak) second = {level2, now};
    if (!curve.steps.empty()) at(now, level);
  }
  void at(Time now, std::int64_t level) {
    if (curve.steps.back().first == now)
      curve.steps.back().second = level;
    else if (curve.steps.back().second != level)
      curve.steps.emplace_back(now, level);
    if (level > curve.peak) {
      curve.peak = level;
      curve.peak_time = now;
    }
  }
};

// The same for the peaks alone (the first time each is reached) of two levels.
struct PeakOnly {
  LevelPeaks peaks;
  void at(Time now, std::int64_t level, std::int64_t level2) {
    if (level > peaks.first.peak) peaks.first = {level, now};
    if (level2 > peaks.second.peak) peaks.second = {level2, now};
  }
};

// A change of two levels (runs merged for level_peaks_of_runs).
struct Change2 {
  Time time;
  std::int64_t delta, delta2;
};
std::int64_t delta2_of(const Change&) { return 0; }
std::int64_t delta2_of(const Change2& c) { return c.delta2; }

template <class C, class Levels>
void levels_of_sorted(const C* first, const C* last, Levels& out) {
  std::int64_t level = 0, level2 = 0;
  for (const C* i = first; i != last;) {
    const Time now = i->time;
    for (; i != last && i->time == now; ++i) {
      level += i->delta;
      level2 += delta2_of(*i);
    }
    out.at(now, level, level2);
  }
}

LevelCurve curve_of_sorted(const Change* first, const Change* last) {
  CurveSteps steps(std::any_of(first, last, [](const Change& c) { return c.delta != 0; }));
  levels_of_sorted(first, last, steps);
  return std::move(steps.curve);
}

}  // namespace

LevelCurve level_curve(std::span<LevelChange> changes, std::vector<LevelChange>& scratch) {
  sort_by_time(changes.data(), changes.data() + changes.size(), scratch);
  return curve_of_sorted(changes.data(), changes.data() + changes.size());
}

namespace {
// The runs merged pairwise, as changes (into `changes`, through `scratch`): returns where the
// merged changes are. For more runs than are read side by side.
const Change2* merge_runs(std::span<const LevelRun> runs, std::vector<Change2>& changes,
                          std::vector<Change2>& scratch) {
  changes.clear();
  std::vector<std::size_t> bounds{0};
  for (const LevelRun& run : runs) {
    for (const Time t : run.times) changes.push_back({t, run.delta, run.delta2});
    bounds.push_back(changes.size());
  }
  scratch.resize(changes.size());
  const auto by_time = [](const Change2& a, const Change2& b) { return a.time < b.time; };
  Change2* from = changes.data();
  Change2* to = scratch.data();
  while (bounds.size() > 2) {  // merge runs 2k and 2k+1 into `to`, until one is left
    std::vector<std::size_t> next{0};
    for (std::size_t k = 0; k + 1 < bounds.size(); k += 2) {
      const std::size_t end = k + 2 < bounds.size() ? bounds[k + 2] : bounds[k + 1];
      std::merge(from + bounds[k], from + bounds[k + 1], from + bounds[k + 1], from + end, to + bounds[k], by_time);
      next.push_back(end);
    }
    bounds.swap(next);
    std::swap(from, to);
  }
  return from;
}

// The levels of a few sorted runs read side by side, a change at a time: the earliest of the
// runs' heads (kept together in one small array, so that finding it is a few compares without
// branches), its deltas added, the levels told once the next change is at a later time. The runs
// are not merged into a copy (the pairwise merge wrote every change three times, and guessed
// half its branches wrong), and no run is tested for ties at every step (which took twice the
// instructions when a device has six runs). Runs with the same times are read as one, their
// deltas summed: one head fewer to compare at every change. An exhausted run gives its place to
// the last one.
constexpr std::size_t kSideBySideRuns = 16;

bool same_times(std::span<const Time> a, std::span<const Time> b) {
  return a.size() == b.size() && (a.data() == b.data() || std::equal(a.begin(), a.end(), b.begin()));
}

template <class Levels>
void levels_side_by_side(std::span<const LevelRun> runs, Levels& out) {
  Time head[kSideBySideRuns];
  const Time* at[kSideBySideRuns];
  const Time* end[kSideBySideRuns];
  std::int64_t delta[kSideBySideRuns], delta2[kSideBySideRuns];
  std::span<const Time> times[kSideBySideRuns];
  std::size_t k = 0;
  for (const LevelRun& run : runs) {
    if (run.times.empty()) continue;
    std::size_t same = 0;
    while (same < k && !same_times(times[same], run.times)) ++same;
    if (same < k) {
      delta[same] += run.delta;
      delta2[same] += run.delta2;
      continue;
    }
    times[k] = run.times;
    at[k] = run.times.data();
    end[k] = run.times.data() + run.times.size();
    head[k] = *at[k];
    delta[k] = run.delta;
    delta2[k] = run.delta2;
    ++k;
  }
  if (k == 0) return;
  std::int64_t level = 0, level2 = 0;
  Time now = *std::min_element(head, head + k);  // the first change's time
  while (k > 0) {
    std::size_t r = 0;
    for (std::size_t i = 1; i < k; ++i) r = head[i] < head[r] ? i : r;
    if (head[r] != now) {
      out.at(now, level, level2);
      now = head[r];
    }
    level += delta[r];
    level2 += delta2[r];
    if (++at[r] != end[r]) {
      head[r] = *at[r];
    } else {
      --k;
      head[r] = head[k];
      at[r] = at[k];
      end[r] = end[k];
      delta[r] = delta[k];
      delta2[r] = delta2[k];
    }
  }
  out.at(now, level, level2);
}

// Each run sorted on its own, then up to kSideBySideRuns runs side by side, more merged pairwise.
template <class Levels>
void levels_of_runs(std::span<const LevelRun> runs, std::vector<Time>& scratch, Levels& out) {
  for (const LevelRun& run : runs) sort_by_time(run.times.data(), run.times.data() + run.times.size(), scratch);
  if (runs.size() <= kSideBySideRuns) return levels_side_by_side(runs, out);
  std::vector<Change2> changes, merge_scratch;
  const Change2* merged = merge_runs(runs, changes, merge_scratch);
  levels_of_sorted(merged, merged + changes.size(), out);
}

bool any_change(std::span<const LevelRun> runs) {
  return std::any_of(runs.begin(), runs.end(), [](const LevelRun& r) { return !r.times.empty() && r.delta != 0; });
}
}  // namespace

LevelCurve level_curve_of_runs(std::span<const LevelRun> runs, std::vector<Time>& scratch, LevelPeak* second) {
  CurveSteps steps(any_change(runs));
  levels_of_runs(runs, scratch, steps);
  if (second) *second = steps.second;
  return std::move(steps.curve);
}

LevelPeaks level_peaks_of_runs(std::span<const LevelRun> runs, std::vector<Time>& scratch) {
  PeakOnly peaks;
  levels_of_runs(runs, scratch, peaks);
  return peaks.peaks;
}

std::vector<LevelCurve> sweep_levels(const OpGraph& g, const Timeline& t, std::span<const Hold> holds,
                                     std::size_t counters) {
  // The holds grouped by counter with a counting sort of their indices (4 bytes a hold), then
  // one counter at a time: its changes (time, delta) gathered into a buffer the size of the
  // largest counter's and made into its curve (level_curve).
  if (holds.size() >= 0xffffffffu) throw std::length_error("sweep_levels: more than 2^32 - 1 holds");
  std::vector<std::size_t> begin(counters + 1, 0);
  for (const Hold& h : holds)
    if (h.amount != 0) ++begin[h.counter + 1];
  std::size_t largest = 0;
  for (std::size_t c = 0; c < counters; ++c) {
    largest = std::max(largest, begin[c + 1]);
    begin[c + 1] += begin[c];
  }
  std::vector<std::uint32_t> order(begin[counters]);
  {
    std::vector<std::size_t> fill(begin.begin(), begin.end() - 1);
    for (std::size_t i = 0; i < holds.size(); ++i)
      if (holds[i].amount != 0) order[fill[holds[i].counter]++] = static_cast<std::uint32_t>(i);
  }
  std::vector<LevelCurve> curves(counters);
  std::vector<Change> changes(2 * largest), scratch;
  for (std::size_t c = 0; c < counters; ++c) {
    if (begin[c] == begin[c + 1]) continue;
    Change* const first = changes.data();
    Change* last = first;
    // The holds and the times they point at are scattered: prefetch a hold 16 ahead and the
    // timeline entries of the hold 8 ahead, so that the misses overlap.
    const std::size_t end = begin[c + 1];
    for (std::size_t k = begin[c]; k < end; ++k) {
      if (k + 16 < end) __builtin_prefetch(&holds[order[k + 16]]);
      if (k + 8 < end) {
        const Hold& ahead = holds[order[k + 8]];
        __builtin_prefetch(&t.start[ahead.from.op]);
        __builtin_prefetch(&t.start[ahead.until.op]);
        if (ahead.from.point != OpPoint::Start) __builtin_prefetch(&g.records()[ahead.from.op]);
        if (ahead.until.point != OpPoint::Start) __builtin_prefetch(&g.records()[ahead.until.op]);
      }
      const Hold& h = holds[order[k]];
      *last++ = {time_of(g, t, h.from), h.amount};
      *last++ = {time_of(g, t, h.until), -h.amount};
    }
    curves[c] = level_curve({first, last}, scratch);
  }
  return curves;
}

}  // namespace stepsim
