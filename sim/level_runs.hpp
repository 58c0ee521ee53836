#pragma once
// Levels from changes that come as a few runs, each (nearly always) already in time order: a
// model that knows its holds can list them that way (a device's forwards start in order, a FIFO
// link's messages arrive in order) and spare the sort.
#include <span>
#include <vector>

#include "sim/level.hpp"

namespace stepsim {

// Changes that all move a level by the same `delta`, at `times` (a device's forwards, each taking
// one stage's activations). The times are sorted in place where they are not in order.
struct LevelRun {
  std::span<Time> times;
  std::int64_t delta;
};

// As level_curve (sim/level.hpp) of every run's changes: each run out of order is sorted on its
// own (through `scratch`, a buffer a caller reuses); up to 16 runs are then read side by side
// (no copy, no mispredicted merge branch: a fifth less time for a pipeline's measure pass), more
// are merged pairwise first. The same curve as level_curve of the same changes.
LevelCurve level_curve_of_runs(std::span<const LevelRun> runs, std::vector<Time>& scratch);

// The same curve's peak and the first time it is reached (LevelCurve::peak, ::peak_time), without
// building the curve's steps: for a figure that needs only the peak (a device's peak memory).
struct LevelPeak {
  std::int64_t peak = 0;
  Time time = 0;
};
LevelPeak level_peak_of_runs(std::span<const LevelRun> runs, std::vector<Time>& scratch);

}  // namespace stepsim
