#pragma once
// Levels from changes that come as a few runs, each (nearly always) already in time order: a
// model that knows its holds can list them that way (a device's forwards start in order, a FIFO
// link's messages arrive in order) and spare the sort.
#include <span>
#include <vector>

#include "sim/level.hpp"

namespace stepsim {

// As level_curve(changes, scratch) (sim/level.hpp), for changes made of consecutive runs:
// run k ends at run_ends[k] (the last is changes.size()). A run out of order is sorted on its
// own; up to 16 runs are then read side by side (no copy, no mispredicted merge branch: a fifth
// less time for a pipeline's measure pass), more are merged pairwise first. The same curve as
// level_curve of the same changes.
LevelCurve level_curve_of_runs(std::span<LevelChange> changes, std::span<const std::size_t> run_ends,
                               std::vector<LevelChange>& scratch);

// The same curve's peak and the first time it is reached (LevelCurve::peak, ::peak_time), without
// building the curve's steps: for a figure that needs only the peak (a device's peak memory).
struct LevelPeak {
  std::int64_t peak = 0;
  Time time = 0;
};
LevelPeak level_peak_of_runs(std::span<LevelChange> changes, std::span<const std::size_t> run_ends,
                             std::vector<LevelChange>& scratch);

}  // namespace stepsim
