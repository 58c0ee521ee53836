#pragma once
// Levels: quantities held over time, such as a device's memory bytes or its number of resident
// micro-batches. A model states holds ("this many bytes on counter c, from this op's start until
// that op's end"); one sweep over the Timeline turns them into curves and peaks.
#include <cstdint>
#include <span>
#include <vector>

#include "sim/timeline.hpp"

namespace stepsim {

enum class OpPoint : std::uint8_t { Start, End, Done };

struct Mark {
  OpId op;
  OpPoint point;
};

struct Hold {
  std::uint32_t counter;
  std::int64_t amount;
  Mark from, until;
};

struct LevelCurve {
  std::vector<std::pair<Time, std::int64_t>> steps;  // level from each time on (changes only)
  std::int64_t peak = 0;
  Time peak_time = 0;
};

Time time_of(const OpGraph& g, const Timeline& t, Mark m);

// One change of a level: `delta` at `time`.
struct LevelChange {
  Time time;
  std::int64_t delta;
};

// The curve of a level that is 0 at time 0 and moves by each change, by the rule below. The
// changes may come in any order; they are sorted here in place, through `scratch` (a buffer a
// caller reuses between curves). For a model that knows its holds without storing them. Without
// a change other than 0 the curve is empty.
LevelCurve level_curve(std::span<LevelChange> changes, std::vector<LevelChange>& scratch);

// Rule: at equal times, releases happen before acquisitions, so a buffer freed at the instant
// another is allocated is not counted twice.
std::vector<LevelCurve> sweep_levels(const OpGraph& g, const Timeline& t, std::span<const Hold> holds,
                                     std::size_t counters);

}  // namespace stepsim
